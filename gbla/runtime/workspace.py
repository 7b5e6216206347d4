"""The buffers one recorded loop owns, at addresses fixed for the recording's life: each state
vector's dense values and presence (its "entry buffers", where every iteration starts and
ends) and, once a value with an entry list is stored there, that list's buffers; the loop's
control words; and the scratch arrays ops keep across iterations (a direction tracker's state,
a device product's or an element-wise op's output and entry list), reset before every run."""

import functools

import numpy as np

from .._backend import _cupy
from ..kernels import _entries, _loop
from ..vector import Vector

__all__ = ["Workspace", "LoopState"]


class LoopState:
    """The state a loop body reads and writes: Vectors by name, as attributes (``s.q``) or
    items (``s["q"]``). The body may rebind a name to a new Vector of the same size (cast to
    the name's dtype at the end of the iteration), or write one in place with ``out=`` /
    :func:`gbla.assign`."""

    __slots__ = ("_vectors",)

    def __init__(self, vectors):
        object.__setattr__(self, "_vectors", dict(vectors))

    def __getattr__(self, name):
        try:
            return self._vectors[name]
        except KeyError:
            raise AttributeError(f"the loop state has no vector {name!r}; it has "
                                 f"{sorted(self._vectors)}") from None

    def __setattr__(self, name, value):
        if name not in self._vectors:
            raise AttributeError(f"the loop state has no vector {name!r} (its names are fixed "
                                 f"when the loop starts: {sorted(self._vectors)})")
        self._vectors[name] = value

    def __getitem__(self, name):
        return self._vectors[name]

    def __setitem__(self, name, value):
        self.__setattr__(name, value)

    def keys(self):
        return self._vectors.keys()

    def _replace(self, vectors):
        self._vectors.update(vectors)

    def __repr__(self):
        return f"LoopState({', '.join(sorted(self._vectors))})"


def conform(name, v, size, dtype):
    """State vector ``name`` at the end of an iteration, in the dtype the loop started with (a
    new Vector of another dtype is cast, as GraphBLAS casts into a typed output: a product of
    a bool frontier and a float matrix stays a bool frontier). Raises ValueError when it is no
    Vector or has another size: the loop's buffers cannot follow."""
    if not isinstance(v, Vector) or v.size != size:
        got = type(v).__name__ if not isinstance(v, Vector) else f"size {v.size}"
        raise ValueError(f"state.{name} must stay a Vector of size {size} through the body; "
                         f"got {got}")
    if v.dtype == dtype:
        return v
    values, present = v._dense()
    return Vector._from_dense_arrays(values.astype(dtype), present, v.device)


@functools.lru_cache(maxsize=None)
def _copy_pair():
    """A vector's values and presence copied in one kernel."""
    return _cupy().ElementwiseKernel("T v, bool p", "T ov, bool op", "ov = v; op = p;",
                                     name="gbla_store_state")


# A scratch array reset by a memset: its fill is all zero bytes (0, False, +0.0).
_ZERO = object()


@functools.lru_cache(maxsize=None)
def _scatter_pair():
    """A list's entries written into cleared buffers, values and presence in one kernel."""
    return _cupy().ElementwiseKernel("I at, T v", "raw T ov, raw bool op",
                                     "ov[at] = v; op[at] = true;", name="gbla_load_entries")


def _copied(a):
    """A copy of a contiguous CuPy array by one device-to-device memcpy on the current stream:
    ndarray.copy() runs an elementwise kernel (82 us for 16.7 M bytes on an H100) and copyto
    spends tens of microseconds of Python choosing the memcpy."""
    out = _cupy().empty_like(a)
    if a.nbytes:
        out.data.copy_from_device_async(a.data, a.nbytes)
    return out


class Workspace:
    def __init__(self, signature):
        cp = _cupy()
        self.signature = signature
        self.buffers = {name: (cp.empty(size, dtype), cp.empty(size, bool))
                        for name, size, dtype in signature}
        self.lists = {}  # name -> (ids, count): the entry list kept with a state's buffers
        self.control = cp.zeros(_loop.CONTROL, np.int64)
        pinned = cp.cuda.alloc_pinned_memory(_loop.CONTROL * 8)
        self._control_host = np.frombuffer(pinned, np.int64, _loop.CONTROL)  # keeps it alive
        self.iteration = self.control[_loop.ITERATION]  # a 0-d view the body's ops read
        self._scratch = {}
        self._sites = 0

    def load(self, vectors, max_iterations):
        """Copy a run's start state in and reset the control words and the scratch."""
        cp = _cupy()
        for name, v in vectors.items():
            bv, bp = self.buffers[name]
            if v._is_sparse:  # a list (a search's source): cleared buffers, then its entries
                indices, values = v._sparse()
                bv.data.memset_async(0, bv.nbytes)  # zero bytes: 0 of every dtype
                bp.data.memset_async(0, bp.nbytes)
                if len(indices):
                    _scatter_pair()(indices, values, bv, bp)
                continue
            values, present = v._dense()
            cp.copyto(bv, values)
            if present is None:
                bp.fill(True)
            else:
                cp.copyto(bp, present)
        # through pinned memory: a copy from pageable memory would first wait for the stream
        # (the last run's copy is done: its results were read after it)
        start = self._control_host
        start[:] = 0
        start[_loop.MAX] = -1 if max_iterations is None else max_iterations
        start[_loop.ITERATION] = 1
        self.control.data.copy_from_host_async(start.ctypes.data, start.nbytes)
        for array, initial in self._scratch.values():
            if initial is None:
                continue
            if initial is _ZERO:
                array.data.memset_async(0, array.nbytes)
            elif isinstance(initial, np.ndarray) or hasattr(initial, "__cuda_array_interface__"):
                cp.copyto(array, initial)
            else:
                array.fill(initial)
        for entries in self.lists.values():  # the start state comes without lists
            _entries.forget(entries)

    def scratch(self, key, start):
        """The array kept under ``key`` across iterations, ``start`` (a NumPy array) at the start
        of every run. Made the first time a key is asked for, which is never while recording
        (the first iteration runs unrecorded and asks first)."""
        if key not in self._scratch:
            initial = _cupy().asarray(start)
            self._scratch[key] = (initial.copy(), initial)
        return self._scratch[key][0]

    def persistent(self, key, size, dtype, fill):
        """The array of ``size`` and ``dtype`` kept under ``key`` for the recording's life, set
        to ``fill`` (a scalar) before every run, or left as it is with None. Made the first
        time a key is asked for, which is never while recording."""
        if key not in self._scratch:
            cp = _cupy()
            array = cp.empty(size, dtype)
            if fill is not None:
                array.fill(fill)
            zero = fill is not None and not any(np.asarray(fill, dtype).tobytes())
            self._scratch[key] = (array, _ZERO if zero else fill)
        return self._scratch[key][0]

    def next_site(self):
        """The number of the op asking among the ops of one iteration (0, 1, ...): the same op
        gets the same number in every iteration, recorded or not."""
        self._sites += 1
        return self._sites - 1

    def begin_iteration(self):
        self._sites = 0

    def vectors(self):
        """Vectors over the entry buffers, which ops may write in place (with the buffers'
        entry lists, where kept)."""
        out = {}
        for name, (values, present) in self.buffers.items():
            out[name] = Vector._from_dense_arrays(values, present, "gpu")
            out[name]._owned = True
            out[name]._entries = self.lists.get(name)
        return out

    def store(self, state):
        """End of an iteration: copy each state vector into its entry buffers (unless an op
        wrote them in place, cast to its dtype where an op made another) and point the state
        back at them. Raises ValueError when a state vector changed size or is no Vector."""
        cp = _cupy()
        for name, size, dtype in self.signature:
            v = conform(name, state[name], size, dtype)
            values, present = v._dense()
            bv, bp = self.buffers[name]
            listed = v._entries if values is not bv and present is not None and \
                present is not bp else None
            if listed is not None:  # its entries only, and its list kept with the buffers
                if name not in self.lists or self.lists[name][0].dtype != listed[0].dtype:
                    self.lists[name] = _entries.new_list(size, listed[0].dtype)
                _entries.store(values, present, listed, bv, bp, self.lists[name])
                continue
            if name in self.lists and (values is not bv or present is not bp):
                _entries.forget(self.lists[name])  # written whole: its list no longer holds
            if values is not bv and present is not None and present is not bp:
                _copy_pair()(values, present, bv, bp)  # one launch for both
                continue
            if values is not bv:
                cp.copyto(bv, values)
            if present is None:
                bp.fill(True)
            elif present is not bp:
                cp.copyto(bp, present)
        state._replace(self.vectors())

    def results(self):
        """New Vectors holding copies of the entry buffers (the workspace is reused)."""
        return {name: Vector._from_dense_arrays(_copied(values), _copied(present), "gpu")
                for name, (values, present) in self.buffers.items()}

    def nbytes(self):
        return sum(v.nbytes + p.nbytes for v, p in self.buffers.values()) + \
            sum(a.nbytes * (2 if hasattr(i, "nbytes") else 1)
                for a, i in self._scratch.values()) + \
            sum(ids.nbytes + count.nbytes for ids, count in self.lists.values())
