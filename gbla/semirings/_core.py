"""UnaryOp, BinaryOp, Monoid and Semiring: frozen data, each op a CUDA C expression plus a NumPy
reference, so that one definition drives the GPU kernels and the CPU path alike."""

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .. import _validation as V
from .._dtypes import DTYPES

__all__ = ["UnaryOp", "BinaryOp", "Monoid", "Semiring", "ANY_VALUE"]


class _AnyValue:
    """Terminal marker of the ``any`` monoid: every value is terminal (stop at the first)."""

    def __repr__(self):
        return "ANY_VALUE"


ANY_VALUE = _AnyValue()


def _dtype_tuple(dtypes, argname):
    out = tuple(V.gbla_dtype(d, argname) for d in dtypes)
    if not out:
        raise V.invalid_value(argname, "name at least one dtype", dtypes)
    return out


@dataclass(frozen=True)
class UnaryOp:
    """f(x), or f(i) when positional (i = the entry's index).

    ``cuda`` is a C expression in ``x`` (or ``i``); ``numpy`` computes the same on arrays;
    ``result`` is the output dtype (None: the input's).
    """

    name: str
    cuda: str
    numpy: Callable
    dtypes: tuple = DTYPES
    result: np.dtype | None = None
    positional: bool = False

    def __post_init__(self):
        V.identifier(self.name, "name")
        V.nonempty_str(self.cuda, "cuda")
        V.is_callable(self.numpy, "numpy")
        object.__setattr__(self, "dtypes", _dtype_tuple(self.dtypes, "dtypes"))
        if self.result is not None:
            object.__setattr__(self, "result", V.gbla_dtype(self.result, "result"))

    def result_dtype(self, dtype):
        return self.result if self.result is not None else np.dtype(dtype)


@dataclass(frozen=True)
class BinaryOp:
    """f(x, y), or f(k) when positional (k = the index of the vector entry in a mat-vec product,
    the entry's own index in element-wise operations).

    ``cuda`` is a C expression in ``x`` and ``y`` (or ``k``); ``numpy`` computes the same on
    arrays; ``result`` is the output dtype (None: the operands' dtype). ``uses_x``/``uses_y``
    say whether the value of each operand matters (``pair`` and positional ops read neither),
    so that kernels skip loading what is never read.
    """

    name: str
    cuda: str
    numpy: Callable
    dtypes: tuple = DTYPES
    result: np.dtype | None = None
    positional: bool = False
    commutative: bool = False
    uses_x: bool = True
    uses_y: bool = True

    def __post_init__(self):
        V.identifier(self.name, "name")
        V.nonempty_str(self.cuda, "cuda")
        V.is_callable(self.numpy, "numpy")
        object.__setattr__(self, "dtypes", _dtype_tuple(self.dtypes, "dtypes"))
        if self.result is not None:
            object.__setattr__(self, "result", V.gbla_dtype(self.result, "result"))
        if self.positional:
            object.__setattr__(self, "uses_x", False)
            object.__setattr__(self, "uses_y", False)
            if self.result is None:
                object.__setattr__(self, "result", np.dtype(np.int64))

    def result_dtype(self, dtype):
        return self.result if self.result is not None else np.dtype(dtype)

    def apply_numpy(self, x, y, k=None):
        """The reference on NumPy arrays (``k``: the positional index array)."""
        if self.positional:
            return np.asarray(self.numpy(k), dtype=self.result)
        z = self.numpy(x, y)
        return np.asarray(z, dtype=self.result_dtype(np.result_type(x, y)))


def _table(spec, argname):
    """A per-dtype table from a dict {dtype: value} or a callable dtype -> value."""
    if spec is None or spec is ANY_VALUE or callable(spec):
        return spec
    if isinstance(spec, dict):
        return {V.gbla_dtype(k, argname): v for k, v in spec.items()}
    raise V.invalid_value(
        argname, "be a dict {dtype: value}, a callable dtype -> value or None", spec
    )


@dataclass(frozen=True)
class Monoid:
    """An associative, commutative BinaryOp with an identity per dtype and, optionally, a
    terminal value z with op(z, x) == z for every x (``ANY_VALUE``: every value is terminal),
    which lets a reduction stop early.

    ``any``'s identity (0) is only a placeholder, as in the GraphBLAS C API: no kernel ever
    combines it with a value, since a reduction starts from its first present entry.
    """

    op: BinaryOp
    identity: object
    terminal: object = None
    idempotent: bool = False
    name: str = ""
    dtypes: tuple = field(default=())

    def __post_init__(self):
        if not isinstance(self.op, BinaryOp):
            raise V.domain("op", "be a gbla BinaryOp", self.op)
        if self.op.positional:
            raise V.invalid_value("op", "not be positional in a monoid", self.op.name)
        object.__setattr__(self, "name", self.name or self.op.name)
        object.__setattr__(self, "identity", _table(self.identity, "identity"))
        object.__setattr__(self, "terminal", _table(self.terminal, "terminal"))
        dtypes = self.dtypes or tuple(
            d for d in self.op.dtypes if self._lookup(self.identity, d) is not None
        )
        object.__setattr__(self, "dtypes", _dtype_tuple(dtypes, "dtypes"))
        for d in self.dtypes:
            V.representable(self._lookup(self.identity, d), d, "identity")
            t = self._lookup(self.terminal, d)
            if t is not None and t is not ANY_VALUE:
                V.representable(t, d, "terminal")

    @staticmethod
    def _lookup(table, dtype):
        if table is None or table is ANY_VALUE:
            return table
        if callable(table):
            return table(np.dtype(dtype))
        return table.get(np.dtype(dtype))

    @property
    def is_any(self):
        return self.terminal is ANY_VALUE

    def identity_for(self, dtype):
        return np.asarray(self._lookup(self.identity, dtype), dtype=dtype)[()]

    def terminal_for(self, dtype):
        """The terminal value in ``dtype``, ``ANY_VALUE``, or None when there is none."""
        t = self._lookup(self.terminal, dtype)
        if t is None or t is ANY_VALUE:
            return t
        return np.asarray(t, dtype=dtype)[()]

    def reduceat(self, values, starts):
        """Reduce each segment values[starts[s]:starts[s+1]] (all non-empty) with this monoid."""
        if len(starts) == 0:
            return values[:0]
        if self.is_any:
            return values[starts]  # the first entry: the CPU's choice of "any"
        if isinstance(self.op.numpy, np.ufunc):
            return self.op.numpy.reduceat(values, starts).astype(values.dtype, copy=False)
        return _tree_reduceat(self.op, values, starts)


def _tree_reduceat(op, values, starts):
    """Segmented reduction with any vectorized binary callable: log2(longest) pairwise passes."""
    v = values.copy()
    n = len(v)
    seg = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, n)))
    pos = np.arange(n) - starts[seg]
    length = np.diff(np.append(starts, n))[seg]
    step = 1
    while step < length.max(initial=0):
        take = np.nonzero((pos % (2 * step) == 0) & (pos + step < length))[0]
        v[take] = op.apply_numpy(v[take], v[take + step])
        step *= 2
    return v[starts]


@dataclass(frozen=True)
class Semiring:
    """A Monoid (add) and a BinaryOp (multiply), named ``<add>_<multiply>``.

    ``dtypes`` are the dtypes the operands may be computed in. ``distributive`` is a claim the
    law tests check: multiply distributes over add on both sides.
    """

    add: Monoid
    multiply: BinaryOp
    name: str = ""
    dtypes: tuple = field(default=())
    distributive: bool = False

    def __post_init__(self):
        if not isinstance(self.add, Monoid):
            raise V.domain("add", "be a gbla Monoid", self.add)
        if not isinstance(self.multiply, BinaryOp):
            raise V.domain("multiply", "be a gbla BinaryOp", self.multiply)
        object.__setattr__(self, "name", self.name or f"{self.add.name}_{self.multiply.name}")
        V.identifier(self.name, "name")
        dtypes = self.dtypes or tuple(
            d for d in self.multiply.dtypes if self.multiply.result_dtype(d) in self.add.dtypes
        )
        object.__setattr__(self, "dtypes", _dtype_tuple(dtypes, "dtypes"))
        for d in self.dtypes:
            if (
                d not in self.multiply.dtypes
                or self.multiply.result_dtype(d) not in self.add.dtypes
            ):
                raise V.domain(
                    "dtypes",
                    f"be dtypes that {self.multiply.name} takes and whose "
                    f"product {self.add.name} takes",
                    d.name,
                )

    def output_dtype(self, dtype):
        return self.multiply.result_dtype(dtype)

    def __repr__(self):
        return f"Semiring({self.name!r})"
