"""Scalar: one typed value where the vectors are (GraphBLAS's GrB_Scalar), so that a value
computed on the GPU, such as a reduction, can feed the next op without a trip to the host.

``gbla.reduce(u, monoid, out=s)`` writes into one; ``select``'s thunk, ``apply``'s bound
operand and ``assign``'s value take one. Reading it (``s.value``, ``float(s)``) is a host read,
refused inside a loop body recorded on the device, where a Scalar is how a body carries a
reduction from one op to the next (delta-stepping's smallest bucket, for instance)."""

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

    __slots__ = ("_array", "_device")

    def __init__(self, *args, **kwargs):
        raise TypeError("build a Scalar with Scalar.from_value or Scalar.new")

    @classmethod
    def _wrap(cls, array, device):
        self = object.__new__(cls)
        self._array, self._device = array, device
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

    @property
    def dtype(self) -> np.dtype:
        return self._array.dtype

    @property
    def device(self) -> str:
        return self._device

    @property
    def value(self) -> Any:
        """The value as a NumPy scalar (read from the GPU: a host read)."""
        B.refuse_host_read("Scalar.value")
        return np.asarray(B.to_host(self._array), self.dtype)[()]  # sync: the value

    def _set(self, array):
        """Hold ``array`` (0-d, on this Scalar's device), cast to this Scalar's dtype."""
        self._array = array.astype(self.dtype, copy=False).reshape(())

    def __float__(self) -> float:
        return float(self.value)

    def __int__(self) -> int:
        return int(self.value)

    def __repr__(self):
        return f"Scalar({self.value!r}, dtype={self.dtype.name}, device={self.device!r})"
