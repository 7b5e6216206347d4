"""Scalar: one typed value where the vectors are (GraphBLAS's GrB_Scalar), so that a value
computed on the GPU, such as a reduction, can feed the next op without a trip to the host.

``gbla.reduce(u, monoid, out=s)`` writes into one; ``select``'s thunk, ``apply``'s bound
operand and ``assign``'s value take one, or ``s + c`` (``s - c``): s's value plus a number,
added in s's dtype where an op reads it (a select's kernel adds it to its thunk). Reading it
(``s.value``, ``float(s)``) is a host read, refused inside a loop body recorded on the device,
where a Scalar is how a body carries a reduction from one op to the next (delta-stepping's
window, for instance)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _backend as B
from . import _validation as V

__all__ = ["Scalar"]


class Scalar:
    """One value of a dtype on the CPU (a 0-d NumPy array) or the GPU (a 0-d CuPy array).

    Build one with :meth:`from_value` or :meth:`new`; :func:`gbla.reduce` with ``out=`` fills
    one. It always holds a value (a new one holds 0).

    Examples
    --------
    >>> import gbla
    >>> u = gbla.Vector.from_coo([1, 3], [4.0, 2.5], 5, device="cpu")
    >>> s = gbla.reduce(u, "min", out=gbla.Scalar.new(float, device="cpu"))
    >>> s.value
    np.float64(2.5)
    >>> gbla.select(u, ">", s).to_coo()
    (array([1]), array([4.]))
    """

    __slots__ = ("_array", "_device", "_base", "_shift")
    __array_ufunc__ = None  # a NumPy number + s is s.__radd__'s, not an object array

    def __init__(self, *args, **kwargs):
        raise TypeError("build a Scalar with Scalar.from_value or Scalar.new")

    @classmethod
    def _wrap(cls, array, device):
        self = object.__new__(cls)
        self._array, self._device = array, device
        self._base = self._shift = None  # s + c: s and c (c of s's dtype), no array
        return self

    @classmethod
    def from_value(cls, value: Any, dtype: Any = None, *, device: str | None = None) -> Scalar:
        """A Scalar holding ``value`` (a number; ``dtype`` None: NumPy's for it, a Python float
        float64, an int int64, a bool bool)."""
        device = B.resolve_device(device)
        if dtype is None:
            dtype = V.storage_dtype(np.asarray(value).dtype, "value")
        dtype = V.gbla_dtype(dtype, "dtype")
        value = V.scalar_value(value, dtype, "value")
        return cls._wrap(B.xp_of(device).asarray(value, dtype=dtype).reshape(()), device)

    @classmethod
    def new(cls, dtype: Any = np.float64, *, device: str | None = None) -> Scalar:
        """A Scalar of ``dtype`` holding 0, to be written by ``gbla.reduce(..., out=)``."""
        device = B.resolve_device(device)
        dtype = V.gbla_dtype(dtype, "dtype")
        return cls._wrap(B.xp_of(device).zeros((), dtype), device)

    def __add__(self, other: Any) -> Scalar:
        """s + c, c a number: a Scalar whose value is s's plus c in s's dtype, computed where
        an op reads it (so it follows s: a reduction written into s later is seen)."""
        return self._shifted(other, 1)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Scalar:
        """s - c, c a number: s + (-c)."""
        return self._shifted(other, -1)

    def _shifted(self, other, sign):
        if isinstance(other, (bool, np.bool_)) or not isinstance(
            other, (int, float, np.integer, np.floating)
        ):
            return NotImplemented
        c = V.scalar_value(other, self.dtype, "c")  # exact in s's dtype, or the error
        if sign < 0:
            if self.dtype.kind == "u":
                raise V.invalid_value("c", f"be subtracted from a signed {self.dtype.name}", c)
            c = -c
        out = Scalar._wrap(None, self._device)
        out._base, out._shift = self, np.asarray(c, self.dtype)[()]
        return out

    def _split_shift(self):
        """(s, c) of this Scalar as s + c, s a Scalar that holds its value (c None where this
        is one): what a kernel reads and adds, without a launch of its own (a select's thunk,
        gbla.relax's window); None for a shift of a shift, read through _value_array."""
        if self._base is None:
            return self, None
        if self._base._base is None:
            return self._base, self._shift
        return None

    def _value_array(self):
        """The value as a 0-d array on the device: s + c's computed there (one launch on the
        GPU)."""
        if self._base is None:
            return self._array
        xp = B.xp_of(self._device)
        return xp.asarray(self._base._value_array() + self._shift, self.dtype).reshape(())

    @property
    def dtype(self) -> np.dtype:
        return self._base.dtype if self._base is not None else self._array.dtype

    @property
    def device(self) -> str:
        return self._device

    @property
    def value(self) -> Any:
        """The value as a NumPy scalar (read from the GPU: a host read)."""
        B.refuse_host_read("Scalar.value")
        return np.asarray(B.to_host(self._value_array()), self.dtype)[()]  # sync: the value

    def _set(self, array):
        """Hold ``array`` (0-d, on this Scalar's device), cast to this Scalar's dtype."""
        if self._base is not None:
            raise V.domain("out", "be a Scalar that holds its own value", "s + c")
        self._array = array.astype(self.dtype, copy=False).reshape(())

    def __float__(self) -> float:
        return float(self.value)

    def __int__(self) -> int:
        return int(self.value)

    def __repr__(self):
        if self._base is not None:
            return f"{self._base!r} + {self._shift!r}"
        return f"Scalar({self.value!r}, dtype={self.dtype.name}, device={self.device!r})"
