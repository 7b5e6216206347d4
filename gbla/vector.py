"""Vector: a size, a dtype, and a structure (which entries exist), stored dense (values plus
presence, ``None`` presence meaning every entry is present) or sparse (sorted indices plus
values), whichever the last operation produced; the other form is derived on demand.

Internal arrays are never modified in place: an operation that writes a Vector gives it new
arrays, so sharing arrays between vectors is safe. The one exception is a Vector that owns its
arrays (``_owned``: the state of a loop recorded on the device, gbla.runtime): ops write those in
place, so their addresses stay fixed, and :meth:`dup` copies them. Inside such a loop a dense
vector may also carry an entry list on the device (``_entries``, gbla/kernels/_entries.py: the
positions of its entries, as a device product or an element-wise op finds them), which later
ops read instead of scanning every position; any other write drops it.

A GPU vector made by :meth:`Vector.from_coo` from a few host entries (a search's source), or
by an algorithm as "every entry ``fill`` but these few" (a search's distances), keeps them on
the host (``_host``) until an op first asks for its arrays: a loop recorded on the device
(gbla.runtime) then loads them inside its own graph launch, and no array is made for them at
all.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _backend as B
from . import _storage
from . import _validation as V
from .mask import Mask

__all__ = ["Vector"]

# At most this many entries from the host stay there until first used (see the module's text).
STAGED_MAX = 64


class Vector:
    """A sparse vector on the CPU (NumPy) or the GPU (CuPy).

    Build one with :meth:`from_dense`, :meth:`from_coo` or :meth:`new`; operations return or
    fill them. Masks: ``u.S`` (structural), ``u.V`` (value) and their complements ``~u.S``,
    ``~u.V``.
    """

    __slots__ = (
        "_size",
        "_dtype",
        "_device",
        "_values",
        "_present",
        "_indices",
        "_dense_cache",
        "_sparse_cache",
        "_nvals",
        "_owned",
        "_entries",
        "_host",
    )

    def __init__(self, *args, **kwargs):
        raise TypeError("build a Vector with Vector.from_dense, Vector.from_coo or Vector.new")

    # ------------------------------------------------------------------ construction
    @classmethod
    def _empty_object(cls, size, dtype, device):
        self = object.__new__(cls)
        self._size, self._dtype, self._device = size, np.dtype(dtype), device
        self._values = self._present = self._indices = None
        self._dense_cache = self._sparse_cache = self._nvals = None
        self._owned = False
        self._entries = None
        self._host = None
        return self

    @classmethod
    def _from_dense_arrays(cls, values, present, device):
        self = cls._empty_object(len(values), values.dtype, device)
        self._set_dense(values, present)
        return self

    @classmethod
    def _from_sparse_arrays(cls, indices, values, size, device):
        self = cls._empty_object(size, values.dtype, device)
        self._set_sparse(indices, values)
        return self

    @classmethod
    def new(cls, size: int, dtype: Any = np.float64, *, device: str | None = None) -> Vector:
        """An empty vector (no entries) of ``size`` and ``dtype``.

        Parameters
        ----------
        size : int
            Non-negative.
        dtype : dtype-like, default numpy.float64
            bool, int32, int64, float32 or float64.
        device : {'cpu', 'gpu', None}, default None
            None: the GPU when CuPy sees one, else the CPU.

        Returns
        -------
        Vector

        Raises
        ------
        InvalidValue
            ``size`` is not a non-negative integer (a bool or a float is refused).
        DomainMismatch
            ``dtype`` is not a dtype, or not one of those five.
        DeviceMismatch
            ``device`` is not 'cpu', 'gpu' or None, or is 'gpu' where no GPU can be used.

        Examples
        --------
        >>> import numpy as np, gbla
        >>> gbla.Vector.new(3, np.int32, device="cpu")
        <gbla.Vector size=3 nvals=0 dtype=int32 device=cpu>
        """
        size = V.size(size, "size")
        dtype = V.gbla_dtype(dtype, "dtype")
        device = B.resolve_device(device)
        xp = B.xp_of(device)
        return cls._from_sparse_arrays(xp.zeros(0, np.int64), xp.zeros(0, dtype), size, device)

    @classmethod
    def from_dense(cls, array: Any, *, device: str | None = None) -> Vector:
        """A vector with every entry present, copied from a 1-D NumPy or CuPy array.

        ``device=None`` keeps a CuPy array on the GPU and puts anything else on the default
        device (the GPU when CuPy sees one).

        Parameters
        ----------
        array : 1-D NumPy or CuPy array, or a sequence
            Its dtype is kept, or widened losslessly to one gbla computes in (int8, int16,
            uint8, uint16 -> int32; uint32 -> int64; float16 -> float32).
        device : {'cpu', 'gpu', None}, default None

        Returns
        -------
        Vector
            A new Vector of size len(array), sharing no memory with ``array``.

        Raises
        ------
        InvalidValue
            ``array`` is not one-dimensional.
        DomainMismatch
            Its dtype has no lossless gbla dtype (uint64, complex, str, object).
        DeviceMismatch
            ``device`` is not 'cpu', 'gpu' or None, or is 'gpu' where no GPU can be used.

        Examples
        --------
        >>> import numpy as np, gbla
        >>> gbla.Vector.from_dense(np.array([1, 2, 3], np.int8), device="cpu")
        <gbla.Vector size=3 nvals=3 dtype=int32 device=cpu>
        """
        if device is None and B.array_device(array) == "gpu":
            device = "gpu"
        device = B.resolve_device(device)
        a = B.to_device(array, device)
        if a.ndim != 1:
            raise V.invalid_value("array", "be one-dimensional", f"shape {a.shape}")
        dtype = V.storage_dtype(a.dtype, "array")
        values = a.astype(dtype, copy=True)
        return cls._from_dense_arrays(values, None, device)

    @classmethod
    def from_coo(
        cls,
        indices: Any,
        values: Any,
        size: int,
        *,
        dtype: Any = None,
        dup_op: Any = None,
        device: str | None = None,
    ) -> Vector:
        """A vector of ``size`` with ``values[t]`` at ``indices[t]``.

        ``values`` may be a scalar (every entry gets it). Repeated indices raise
        :class:`~gbla.DuplicateIndex` unless ``dup_op`` (a BinaryOp) combines them.

        On the GPU, up to 64 entries given on the host are checked at once but kept on the host
        until an op first reads the vector: a loop recorded on the device (:func:`gbla.iterate`)
        reads them inside its own graph launch, so a search's source costs no GPU array.

        Parameters
        ----------
        indices : 1-D integer array (NumPy, CuPy or a sequence)
            Positions in [0, size), in any order; floats holding whole numbers are accepted.
        values : 1-D array of len(indices), or a scalar
        size : int
            Non-negative.
        dtype : dtype-like or None, default None
            bool, int32, int64, float32 or float64. None: the values' dtype, widened losslessly
            as in :meth:`from_dense` (a Python int gives int64, a float float64). A given
            dtype casts an array unchecked (NumPy's ``astype``) but refuses a scalar it cannot
            hold exactly.
        dup_op : BinaryOp or None, default None
            Combines the values of a repeated index, in input order (a Monoid or a name is
            refused); None raises on a repeat, a scalar ``values`` included.
        device : {'cpu', 'gpu', None}, default None
            None: the GPU when ``indices`` is a CuPy array, else the GPU when CuPy sees one,
            else the CPU.

        Returns
        -------
        Vector
            A new Vector (new arrays; the caller's are not kept).

        Raises
        ------
        InvalidValue
            ``size`` is not a non-negative integer; ``indices`` or ``values`` is not
            one-dimensional; an index is not a whole number; a scalar ``values`` is not a
            number or not representable in ``dtype``.
        InvalidIndex
            An index is negative or >= size.
        DimensionMismatch
            ``values`` is an array not as long as ``indices``.
        DomainMismatch
            ``dtype`` is not one of those five, ``values`` has no lossless gbla dtype, or
            ``dup_op`` is not a BinaryOp (raised when an index repeats).
        DuplicateIndex
            An index repeats and ``dup_op`` is None.
        DeviceMismatch
            ``device`` is not 'cpu', 'gpu' or None, or is 'gpu' where no GPU can be used.

        Examples
        --------
        >>> import gbla
        >>> from gbla import semirings
        >>> u = gbla.Vector.from_coo([2, 0, 2], [1., 5., 3.], 4, dup_op=semirings.binary.plus,
        ...                          device="cpu")
        >>> u.to_coo()
        (array([0, 2]), array([5., 4.]))
        >>> gbla.Vector.from_coo([1, 3], True, 4, device="cpu").to_coo()
        (array([1, 3]), array([ True,  True]))
        """
        size = V.size(size, "size")
        if device is None and B.array_device(indices) == "gpu":
            device = "gpu"
        device = B.resolve_device(device)
        # Host inputs are checked, sorted and combined on the host and moved once: on the GPU
        # the checks read two scalars back and the sort is a launch, for what is often one
        # source vertex.
        host_indices = B.array_device(indices) == "cpu"
        work = (
            "cpu"
            if host_indices and (np.ndim(values) == 0 or B.array_device(values) == "cpu")
            else device
        )
        xp = B.xp_of(work)
        idx = B.to_device(np.asarray(indices) if host_indices else indices, work)
        idx = V.index_array(idx, xp, size, "indices")
        if np.ndim(values) == 0 and B.array_device(values) == "cpu":
            dt = (
                V.gbla_dtype(dtype, "dtype")
                if dtype is not None
                else V.storage_dtype(np.asarray(values).dtype, "values")
            )
            vals = xp.full(len(idx), V.scalar_value(values, dt, "values"), dtype=dt)
        else:
            vals = B.to_device(values, work)
            if vals.ndim != 1:
                raise V.invalid_value("values", "be one-dimensional", f"shape {vals.shape}")
            V.same_length(idx, vals, "indices", "values")
            dt = (
                V.gbla_dtype(dtype, "dtype")
                if dtype is not None
                else V.storage_dtype(vals.dtype, "values")
            )
            vals = vals.astype(dt, copy=True)
        idx, vals = _storage.combine_duplicates(
            idx, vals, dup_op, work, arg="indices", what="index", show=str
        )
        if work != device:
            if len(idx) <= STAGED_MAX:  # kept on the host until first used (copies: the
                # caller's arrays may be checked and kept as they are until here)
                return cls._from_host_entries(idx.copy(), vals.copy(), size, None)
            idx, vals = B.to_device_together((idx, vals), device)
        return cls._from_sparse_arrays(idx, vals, size, device)

    @classmethod
    def _from_host_entries(cls, indices, values, size, fill, device="gpu"):
        """Checked host entries (``indices`` int64 ascending and distinct, ``values`` of the
        vector's dtype, at most STAGED_MAX) of a vector of ``size``: missing elsewhere, or
        present with ``fill`` (a scalar of that dtype) when it is not None. On the GPU they stay
        on the host until an op asks for the vector's arrays."""
        indices = np.asarray(indices, np.int64)
        values = np.asarray(values)
        if device == "gpu":
            self = cls._empty_object(size, values.dtype, device)
            self._host = (indices, values, fill)
            self._nvals = len(indices) if fill is None else size
            return self
        if fill is None:
            return cls._from_sparse_arrays(indices, values.copy(), size, device)
        dense = np.full(size, fill, values.dtype)
        dense[indices] = values
        return cls._from_dense_arrays(dense, None, device)

    @property
    def _staged(self):
        """Its entries are still on the host (see the module's text)."""
        return self._host is not None

    def _unstage(self):
        """A staged vector's arrays made on its device: the entries moved in one piece, or the
        fill written and the entries set (a kernel each)."""
        indices, values, fill = self._host
        self._host = None
        if fill is None:
            self._indices, self._values = B.to_device_together((indices, values), self._device)
            return
        dense = B.xp_of(self._device).full(self._size, fill, self._dtype)
        if len(indices):
            at, entries = B.to_device_together((indices, values), self._device)
            dense[at] = entries
        self._values, self._present = dense, None

    # ------------------------------------------------------------------ internal state
    def _set_dense(self, values, present):
        self._owned = False
        self._entries = None
        self._host = None
        self._values, self._present, self._indices = values, present, None
        self._dtype = values.dtype
        self._dense_cache = self._sparse_cache = self._nvals = None
        if present is None:
            self._nvals = self._size

    def _written_in_place(self):
        """An op wrote this owned vector's dense arrays in place: forget what was derived (an
        entry list too, on the device, since its buffers keep it for later iterations)."""
        self._dense_cache = self._sparse_cache = self._nvals = None
        if self._entries is not None:
            from .kernels import _entries

            _entries.forget(self._entries)
            self._entries = None

    def _set_sparse(self, indices, values):
        self._owned = False
        self._entries = None
        self._host = None
        self._indices, self._values, self._present = indices, values, None
        self._dtype = values.dtype
        self._dense_cache = self._sparse_cache = None
        self._nvals = len(indices)

    @property
    def _is_sparse(self):
        if self._host is not None:
            return self._host[2] is None
        return self._indices is not None

    def _dense(self):
        """(values, present) with present None when every entry is present."""
        if self._host is not None:
            self._unstage()
        if not self._is_sparse:
            return self._values, self._present
        if self._dense_cache is None:
            indices, entries = self._sparse()
            xp = B.xp_of(self._device)
            values = xp.zeros(self._size, self._dtype)
            values[indices] = entries
            if len(indices) == self._size:
                present = None
            else:
                present = xp.zeros(self._size, bool)
                present[indices] = True
            self._dense_cache = (values, present)
        return self._dense_cache

    def _sparse(self):
        """(indices int64 sorted, values)."""
        if self._host is not None:
            self._unstage()
        if self._is_sparse:
            return self._indices, self._values
        if self._sparse_cache is None:
            xp = B.xp_of(self._device)
            if self._present is None:
                idx = xp.arange(self._size, dtype=np.int64)
                self._sparse_cache = (idx, self._values)
            else:
                B.refuse_host_read("the entry list of a Vector (nvals, to_coo, a push)")
                idx = xp.nonzero(self._present)[0].astype(np.int64, copy=False)  # sync: count
                self._sparse_cache = (idx, self._values[idx])
            self._nvals = len(self._sparse_cache[0])
        return self._sparse_cache

    # ------------------------------------------------------------------ public properties
    @property
    def size(self) -> int:
        return self._size

    @property
    def shape(self) -> tuple[int]:
        return (self._size,)

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def device(self) -> str:
        return self._device

    @property
    def nvals(self) -> int:
        """Number of present entries (an int; explicit zeros included).

        Counting the entries of a dense vector on the GPU synchronises with the host once;
        the count is kept.

        Examples
        --------
        >>> import gbla
        >>> gbla.Vector.from_coo([0, 2], [0., 1.], 5, device="cpu").nvals
        2
        """
        if self._nvals is None:
            B.refuse_host_read("Vector.nvals")
            self._sparse()  # counts them; the index list is kept for a push that may follow
        return self._nvals

    @property
    def S(self) -> Mask:
        """Structural mask: allows position i where u(i) is present.

        A :class:`~gbla.Mask`, whatever the values; ``~u.S`` allows the other positions.

        Examples
        --------
        >>> import gbla
        >>> u = gbla.Vector.from_coo([0, 1], [True, False], 3, device="cpu")
        >>> gbla.assign(gbla.Vector.new(3, device="cpu"), 1., mask=u.S).to_coo()
        (array([0, 1]), array([1., 1.]))
        >>> gbla.assign(gbla.Vector.new(3, device="cpu"), 1., mask=~u.S).to_coo()
        (array([2]), array([1.]))
        """
        return Mask(self, structural=True)

    @property
    def V(self) -> Mask:
        """Value mask: allows position i where u(i) is present and nonzero.

        A :class:`~gbla.Mask`; nonzero means True for bool (NaN counts as nonzero). ``~u.V``
        allows the other positions, the missing ones included.

        Examples
        --------
        >>> import gbla
        >>> u = gbla.Vector.from_coo([0, 1], [True, False], 3, device="cpu")
        >>> gbla.assign(gbla.Vector.new(3, device="cpu"), 1., mask=u.V).to_coo()
        (array([0]), array([1.]))
        >>> gbla.assign(gbla.Vector.new(3, device="cpu"), 1., mask=~u.V).to_coo()
        (array([1, 2]), array([1., 1.]))
        """
        return Mask(self, structural=False)

    def to_dense(self, fill_value: Any = None) -> Any:
        """A new 1-D array (NumPy or CuPy, on the vector's device) with ``fill_value`` at the
        missing entries; ``fill_value`` may be omitted only when every entry is present.

        Parameters
        ----------
        fill_value : scalar or None, default None
            The value of the missing entries; unused when every entry is present. The array
            keeps the vector's dtype when fill_value fits there exactly, else it takes
            ``numpy.result_type`` of that dtype and fill_value's (-1 with a bool vector gives
            int64, inf with an int32 one float64).

        Returns
        -------
        numpy.ndarray or cupy.ndarray
            Of length size.

        Raises
        ------
        InvalidValue
            ``fill_value`` is None and an entry is missing.

        Examples
        --------
        >>> import gbla
        >>> gbla.Vector.from_coo([0, 2], [1., 2.], 4, device="cpu").to_dense(0)
        array([1., 0., 2., 0.])
        >>> gbla.Vector.from_coo([0], True, 2, device="cpu").to_dense(-1)
        array([ 1, -1])
        """
        values, present = self._dense()
        if present is None:
            return values.copy()
        if fill_value is None:
            if self.nvals == self._size:
                return values.copy()
            raise V.invalid_value("fill_value", "be given: the vector has missing entries", None)
        xp = B.xp_of(self._device)
        dtype = V.fill_dtype(fill_value, self._dtype)  # -1 into bool or inf into int widens
        # where makes the new array (values are cast only where the dtype widens); the fill is
        # a NumPy scalar of that dtype: a kernel argument, not a copy to the GPU
        return xp.where(present, values.astype(dtype, copy=False), dtype.type(fill_value))

    def to_coo(self) -> tuple[Any, Any]:
        """(indices, values): new arrays on the vector's device, indices sorted int64.

        Returns
        -------
        indices : numpy.ndarray or cupy.ndarray
            The present positions, ascending, int64.
        values : numpy.ndarray or cupy.ndarray
            Their values, of the vector's dtype.

        Examples
        --------
        >>> import gbla
        >>> gbla.Vector.from_coo([3, 1], [30., 10.], 5, device="cpu").to_coo()
        (array([1, 3]), array([10., 30.]))
        """
        idx, vals = self._sparse()
        return idx.copy(), vals.copy()

    def dup(self) -> Vector:
        """A copy (arrays are shared until either is written, which never happens in place).

        Returns
        -------
        Vector
            A new Vector of the same size, dtype, device, structure and values; writing
            either one (``out=``, :func:`~gbla.assign`) leaves the other as it was.

        Examples
        --------
        >>> import gbla
        >>> u = gbla.Vector.from_coo([1], 5., 3, device="cpu")
        >>> w = gbla.assign(u.dup(), 0.)
        >>> u.to_coo(), w.nvals
        ((array([1]), array([5.])), 3)
        """
        if self._owned:  # written in place by the ops of a recorded loop: share nothing
            return Vector._from_dense_arrays(
                self._values.copy(), self._present.copy(), self._device
            )
        other = Vector._empty_object(self._size, self._dtype, self._device)
        other._values, other._present, other._indices = self._values, self._present, self._indices
        other._dense_cache, other._sparse_cache = self._dense_cache, self._sparse_cache
        other._nvals, other._host = self._nvals, self._host
        return other

    def to_device(self, device: str) -> Vector:
        """This vector on ``device`` ('cpu' or 'gpu').

        Parameters
        ----------
        device : {'cpu', 'gpu', None}
            None: the GPU when CuPy sees one, else the CPU.

        Returns
        -------
        Vector
            ``self`` when it lives there already, else a new Vector with copied arrays.

        Raises
        ------
        DeviceMismatch
            ``device`` is not 'cpu', 'gpu' or None, or is 'gpu' where no GPU can be used.

        Examples
        --------
        >>> import gbla
        >>> u = gbla.Vector.from_coo([1], 5., 3, device="cpu")
        >>> u.to_device("cpu") is u
        True
        """
        device = B.resolve_device(device)
        if device == self._device:
            return self
        if self._host is not None:
            return Vector._from_host_entries(*self._host[:2], self._size, self._host[2], device)
        if self._is_sparse:
            return Vector._from_sparse_arrays(
                B.to_device(self._indices, device),
                B.to_device(self._values, device),
                self._size,
                device,
            )
        present = None if self._present is None else B.to_device(self._present, device)
        return Vector._from_dense_arrays(B.to_device(self._values, device), present, device)

    def isequal(self, other: Any) -> bool:
        """Same size, dtype, structure and values (NaN equals NaN).

        Parameters
        ----------
        other : object
            Anything; only a Vector can be equal. It may live on the other device: both are
            compared on the host.

        Returns
        -------
        bool
            False also for a non-Vector and for another dtype (no cast: an int32 vector never
            equals an int64 one).

        Examples
        --------
        >>> import numpy as np, gbla
        >>> u = gbla.Vector.from_coo([0, 2], [1., np.nan], 3, device="cpu")
        >>> u.isequal(u.dup()), u.isequal(gbla.Vector.from_coo([0, 2], 1., 3, device="cpu"))
        (True, False)
        """
        if not isinstance(other, Vector) or other.size != self.size or other.dtype != self.dtype:
            return False
        B.refuse_host_read("Vector.isequal")
        return _storage.same_entries(self._sparse(), other._sparse())  # sync: on the host

    def __repr__(self):
        return (
            f"<gbla.Vector size={self._size} nvals={self.nvals} dtype={self._dtype.name} "
            f"device={self._device}>"
        )
