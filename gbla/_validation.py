"""The one place public inputs are checked. Every message reads
``"<arg> must <condition>; got <value>"``."""

import functools
import numbers
import os
import re
from pathlib import Path

import numpy as np

from ._dtypes import DTYPES
from ._dtypes import storage_dtype as _widen
from .exceptions import (
    DeviceMismatch,
    DimensionMismatch,
    DomainMismatch,
    InvalidIndex,
    InvalidValue,
    NegativeCycleError,
)


def _show(value):
    text = repr(value)
    # Keep both ends of a long value: a path's file name is at its end.
    return text if len(text) <= 80 else text[:38] + "..." + text[-39:]


def message(arg, condition, value):
    return f"{arg} must {condition}; got {_show(value)}"


def invalid_value(arg, condition, value):
    return InvalidValue(message(arg, condition, value))


def negative_cycle(rounds):
    """The error of a shortest-path search whose distances still fell after ``rounds`` rounds
    (n: a negative cycle is reachable from the source)."""
    return NegativeCycleError(
        message(
            "A",
            "have no negative cycle reachable from the source",
            f"distances still falling after {rounds} rounds",
        )
    )


def domain(arg, condition, value):
    return DomainMismatch(message(arg, condition, value))


def identifier(value, arg):
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        raise invalid_value(arg, "be an identifier (letters, digits, '_')", value)


def nonempty_str(value, arg):
    if not isinstance(value, str) or not value.strip():
        raise invalid_value(arg, "be a non-empty string", value)


def is_callable(value, arg):
    if not callable(value):
        raise invalid_value(arg, "be callable", value)


def gbla_dtype(value, arg):
    try:
        dtype = np.dtype(value)
    except TypeError:
        raise domain(arg, "be a dtype", value) from None
    if dtype not in DTYPES:
        raise domain(arg, "be one of bool, int32, int64, float32, float64", dtype.name)
    return dtype


def storage_dtype(dtype, arg):
    """The gbla dtype that holds ``dtype`` losslessly (int16 -> int32, ...), else raise."""
    out = _widen(dtype)
    if out is None:
        raise domain(
            arg,
            "have a dtype gbla can hold losslessly (bool, int8-int64, uint8-uint32, "
            "float16-float64)",
            np.dtype(dtype).name,
        )
    return out


def fill_dtype(fill_value, dtype):
    """The dtype of an array of ``dtype`` values with ``fill_value`` where they are missing:
    ``dtype`` when the fill fits there exactly, else ``numpy.result_type`` of both (-1 with bool
    gives int64, inf with int32 float64)."""
    try:
        representable(fill_value, dtype, "fill_value")
        return dtype
    except InvalidValue:
        return np.result_type(dtype, np.asarray(fill_value).dtype)


def representable(value, dtype, arg):
    """``value`` converts to ``dtype`` without loss (a non-finite float into an integer does
    not)."""
    try:
        fvalue = float(value)
    except (TypeError, ValueError):
        raise invalid_value(arg, f"be a number representable in {dtype.name}", value) from None
    if dtype.kind in "ib":
        if not np.isfinite(fvalue):
            raise invalid_value(arg, f"be finite to go into {dtype.name}", value)
        if dtype.kind == "b":
            if fvalue not in (0.0, 1.0):
                raise invalid_value(arg, "be True, False, 0 or 1 to go into bool", value)
            return
        low, high = _integer_range(dtype)
        integral = isinstance(value, (numbers.Integral, np.integer)) or fvalue.is_integer()
        if isinstance(value, (bool, np.bool_)) or not integral or not low <= int(value) <= high:
            raise invalid_value(arg, f"be an integer in [{low}, {high}]", value)


@functools.lru_cache(maxsize=None)
def _integer_range(dtype):
    info = np.iinfo(dtype)  # a few microseconds each time: a traversal asks once a level
    return int(info.min), int(info.max)


def scalar_value(value, dtype, arg):
    """A Python or NumPy scalar converted exactly to ``dtype``."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if not isinstance(value, (numbers.Number, np.bool_)):
        raise invalid_value(arg, "be a scalar number", value)
    representable(value, dtype, arg)
    return np.asarray(value, dtype=dtype)[()]


def integer(value, arg):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise invalid_value(arg, "be an integer", value)
    return int(value)


def size(value, arg):
    value = integer(value, arg)
    if value < 0:
        raise invalid_value(arg, "be a non-negative integer", value)
    return value


def in_range(value, upper, arg):
    value = integer(value, arg)
    if not 0 <= value < upper:
        raise InvalidIndex(message(arg, f"satisfy 0 <= {arg} < {upper}", value))
    return value


def positive_finite(value, arg, condition="be a positive finite number"):
    """A real number > 0 and finite, as a float (a bool is not one)."""
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, (numbers.Real, np.integer, np.floating))
        or not np.isfinite(value)
        or value <= 0
    ):
        raise invalid_value(arg, condition, value)
    return float(value)


def one_of(value, choices, arg):
    if value not in choices:
        raise invalid_value(arg, f"be one of {tuple(choices)}", value)
    return value


def flag(value, arg):
    if not isinstance(value, (bool, np.bool_)):
        raise invalid_value(arg, "be True or False", value)
    return bool(value)


def optional_flag(value, arg):
    """None, True or False (`value in (None, True, False)` would let 0 and 1 through)."""
    if value is not None and not isinstance(value, (bool, np.bool_)):
        raise invalid_value(arg, "be None, True or False", value)


def path_like(value, arg="path"):
    """A str or os.PathLike, as a pathlib.Path."""
    if not isinstance(value, (str, os.PathLike)):
        raise invalid_value(arg, "be a str or os.PathLike", value)
    return Path(value)


def index_array(a, xp, upper, arg):
    """A 1-D integer array with every entry in [0, upper), as int64 on the array's device."""
    return indices_in_range(a, xp, upper, arg).astype(np.int64, copy=False)


def indices_in_range(a, xp, upper, arg):
    """``a`` itself once it is a 1-D array of integers (or of whole floats) in [0, upper):
    :func:`index_array` without the int64 copy."""
    if a.ndim != 1:
        raise invalid_value(arg, "be one-dimensional", f"shape {a.shape}")
    if a.dtype.kind not in "iu" and a.size:
        if a.dtype.kind == "f":  # integral floats (e.g. read from a text file) are accepted
            bad = xp.nonzero(~(xp.isfinite(a) & (a == xp.floor(a))))[0]  # sync: their count
            if bad.size:
                raise invalid_value(arg, "hold integers", float(a[int(bad[0])]))
        else:
            raise invalid_value(arg, "hold integers", f"dtype {a.dtype.name}")
    if a.size:
        lo, hi = (float(v) for v in (a.min(), a.max()))  # sync: two scalars for the check
        if lo < 0:
            raise InvalidIndex(message(arg, "hold no negative index", int(lo)))
        if hi >= upper:
            raise InvalidIndex(message(arg, f"hold indices < {upper}", int(hi)))
    return a


def same_length(a, b, arg_a, arg_b):
    if len(a) != len(b):
        raise DimensionMismatch(message(f"len({arg_b})", f"equal len({arg_a}) = {len(a)}", len(b)))


def dimension(actual, expected, arg, what):
    """``arg`` (e.g. 'u.size') must equal ``what`` (e.g. 'A.ncols'), whose value is ``expected``."""
    if actual != expected:
        raise DimensionMismatch(message(arg, f"equal {what} = {expected}", actual))


def bit_rows(out_size, bits_size, word_bits):
    """The width w of a (w, bits_size) array of ``out_size`` positions, one row per bit of a
    word of ``word_bits``: out.size must be bits.size times a w in [1, word_bits] (0 with no
    bits at all)."""
    if bits_size == 0:
        dimension(out_size, 0, "out.size", "bits.size")
        return 0
    width, rest = divmod(out_size, bits_size)
    if rest or not 1 <= width <= word_bits:
        raise DimensionMismatch(
            message(
                "out.size",
                f"be bits.size = {bits_size} times a width in [1, {word_bits}] "
                f"(a row per bit of {word_bits})",
                out_size,
            )
        )
    return width


def same_device(devices):
    """All operands on one device; ``devices`` maps argument names to devices."""
    found = {d for d in devices.values()}
    if len(found) > 1:
        detail = ", ".join(f"{k} on {v}" for k, v in devices.items())
        raise DeviceMismatch(message("the operands", "live on one device", detail))


def source(value, n):
    """A vertex id: an integer (not a bool) with 0 <= source < n."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise invalid_value("source", "be an integer vertex id", value)
    return in_range(value, n, "source")


def square(shape, arg):
    if shape[0] != shape[1]:
        raise DimensionMismatch(
            message(arg, "be square (a graph's adjacency matrix)", f"shape {shape}")
        )
