"""The buffers one recorded loop owns, at addresses fixed for the recording's life: each state
vector's dense values and presence (its "entry buffers", where every iteration starts and
ends, all in one allocation) and, once a value with an entry list is stored there, that list's
buffers; the loop's control words; and the scratch arrays ops keep across iterations (a
direction tracker's state, a device product's or an element-wise op's output and entry list),
reset before every run.

A run starts in two steps. :meth:`Workspace.stage` writes what the host knows into pinned
memory (the control words, and the entries of start vectors still held on the host: a
search's source) and copies any other start vector into its buffers. :meth:`Workspace.prologue`
enqueues the rest: the pinned block's copy to the device, each staged vector's buffers cleared
and its entries written, the scratch reset. A recorded loop captures the prologue into its
graph, so that a run from a source costs one launch and no array at all."""

import functools

import numpy as np

from .. import _dtypes
from .. import _validation as V
from .._backend import _cupy
from ..kernels import _entries, _loop
from ..semirings import binary
from ..vector import STAGED_MAX, Vector

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
            raise AttributeError(
                f"the loop state has no vector {name!r}; it has {sorted(self._vectors)}"
            ) from None

    def __setattr__(self, name, value):
        if name not in self._vectors:
            raise AttributeError(
                f"the loop state has no vector {name!r} (its names are fixed "
                f"when the loop starts: {sorted(self._vectors)})"
            )
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
        raise ValueError(
            f"state.{name} must stay a Vector of size {size} through the body; got {got}"
        )
    if v.dtype == dtype:
        return v
    values, present = v._dense()
    return Vector._from_dense_arrays(values.astype(dtype), present, v.device)


@functools.lru_cache(maxsize=None)
def _copy_pair():
    """A vector's values and presence copied in one kernel."""
    return _cupy().ElementwiseKernel(
        "T v, bool p", "T ov, bool op", "ov = v; op = p;", name="gbla_store_state"
    )


@functools.lru_cache(maxsize=256)
def _fill_dtype(kind, fill, dtype):
    """V.fill_dtype, kept for each (fill's type, fill, dtype): a run's end asks again and
    again."""
    return V.fill_dtype(fill, dtype)


def _memcpy(dst, src, nbytes, kind):
    """Enqueue a copy of ``nbytes`` on the current stream ('HtoD' from pinned memory, 'DtoD',
    or 'DtoH' into pinned memory): the runtime's own call, a few microseconds less than
    CuPy's on a run's path, and one CuPy refuses from the host while a stream captures."""
    rt = _cupy().cuda.runtime
    direction = {
        "HtoD": rt.memcpyHostToDevice,
        "DtoD": rt.memcpyDeviceToDevice,
        "DtoH": rt.memcpyDeviceToHost,
    }[kind]
    rt.memcpyAsync(dst, src, nbytes, direction, _cupy().cuda.get_current_stream().ptr)


# A scratch array reset by a memset: its fill is all zero bytes (0, False, +0.0).
_ZERO = object()


@functools.lru_cache(maxsize=None)
def _scatter_pair():
    """A list's entries written into cleared buffers, values and presence in one kernel."""
    return _cupy().ElementwiseKernel(
        "I at, T v", "raw T ov, raw bool op", "ov[at] = v; op[at] = true;", name="gbla_load_entries"
    )


# A staged vector's part of the start block, in int64 words: [staged?, count, filled?, the
# fill], then STAGED_MAX ids, then STAGED_MAX values packed at their own width (loop.cu).
_HEAD = _loop.STAGE_HEAD
_STAGE_WORDS = _HEAD + 2 * STAGED_MAX


def _slab(cp, parts):
    """One allocation cut into arrays of the (size, dtype) ``parts``, each at a 256-byte
    boundary: (the allocation, the arrays)."""
    starts, end = [], 0
    for size, dtype in parts:
        starts.append(end)
        end += -(-size * np.dtype(dtype).itemsize // 256) * 256
    slab = cp.empty(max(end, 1), np.uint8)
    return slab, [
        slab[at : at + size * np.dtype(dtype).itemsize].view(dtype)
        for (size, dtype), at in zip(parts, starts)
    ]


def store_fold(monoid, dtype):
    """The code of gbla_store's fold for ``monoid`` over ``dtype`` (1 min, 2 max: gbla's min
    and max operators, whatever the monoid's identity), or 0 where a store cannot fold it."""
    if np.dtype(dtype) == _dtypes.BOOL:
        return 0
    return 1 if monoid.op is binary.min else 2 if monoid.op is binary.max else 0


class Workspace:
    """``reduced``: gbla.iterate's test_reduce, (state name, monoid), or None: that state's
    reduction is written into :attr:`reduced_out` before the first iteration
    (:meth:`reduce_state`, from the run's start) and after each (by the store, or a launch
    after it)."""

    def __init__(self, signature, reduced=None):
        cp = _cupy()
        self.signature = signature
        parts = [p for _, size, dtype in signature for p in ((size, dtype), (size, bool))]
        self._slab, arrays = _slab(cp, parts)
        self.buffers = {
            name: (arrays[2 * k], arrays[2 * k + 1]) for k, (name, _, _) in enumerate(signature)
        }
        self.lists = {}  # name -> (ids, count): the entry list kept with a state's buffers
        # the start block: the control words, then each state name's staged entries; written
        # on the host in pinned memory, copied to the device in one piece
        words = _loop.CONTROL + _STAGE_WORDS * len(signature)
        self._pinned = cp.cuda.alloc_pinned_memory(words * 8 + _loop.CONTROL * 8)
        self._start_host = np.frombuffer(self._pinned, np.int64, words)
        self._read = np.frombuffer(self._pinned, np.int64, _loop.CONTROL, offset=words * 8)
        self._start_device = cp.zeros(words, np.int64)
        self.control = self._start_device[: _loop.CONTROL]
        self._at = {
            name: _loop.CONTROL + _STAGE_WORDS * k for k, (name, _, _) in enumerate(signature)
        }
        # each name's part of the pinned block: its head, its fill and its values as views of
        # its own dtype, made once (a run writes them in a few microseconds)
        self._staged = {
            name: (
                self._start_host[at : at + _HEAD],
                self._start_host[at + 3 : at + 4].view(self.buffers[name][0].dtype),
                self._start_host[at + _HEAD : at + _HEAD + STAGED_MAX],
                self._start_host[at + _HEAD + STAGED_MAX : at + _STAGE_WORDS].view(
                    self.buffers[name][0].dtype
                ),
            )
            for name, at in self._at.items()
        }
        self.iteration = self.control[_loop.ITERATION]  # a 0-d view the body's ops read
        # the word the loop's products add the edges they examine to: a control word, so that
        # the run's start zeroes it and its end reads it with the others, at no cost of its own
        self.examined = self.control[_loop.EDGES : _loop.EDGES + 1]
        self._scratch = {}
        self._sites = 0
        self._clears = {}  # the op sites' outputs written this iteration, by their ids' address
        self._site_table = None  # (their addresses, the gbla_site table on the device, n)
        self._arrived = None  # arrived(): a launch's count of finished blocks
        self.reduced = reduced
        self.reduced_out = self._fold = None
        if reduced is not None:
            name, monoid = reduced
            dtype = self.buffers[name][0].dtype
            self.reduced_out = cp.empty((), dtype)
            code = store_fold(monoid, dtype)
            if code:  # the store's arguments: its code, the identity, the output, partials
                partials = cp.empty(_entries.store_partials(), dtype)
                identity = np.asarray(monoid.identity_for(dtype), dtype)[()]
                self._fold = (code, identity, self.reduced_out, partials)

    def stage(self, vectors, max_iterations):
        """A run's start, the host's part: the control words and the entries of staged start
        vectors written into pinned memory, any other start vector copied into its buffers
        (enqueued). :meth:`prologue` does the rest. The pinned block is free to write: the
        last run was waited for (its control words were read)."""
        cp = _cupy()
        host = self._start_host
        host[: _loop.CONTROL] = 0
        host[_loop.MAX] = -1 if max_iterations is None else max_iterations
        host[_loop.ITERATION] = 1
        for name, v in vectors.items():
            head, fill_at, ids_at, values_at = self._staged[name]
            bv, bp = self.buffers[name]
            if v._host is not None and len(v._host[0]) <= STAGED_MAX:  # the prologue loads it
                indices, values, fill = v._host
                k = len(indices)
                head[0], head[1], head[2] = 1, k, fill is not None
                fill_at[0] = 0 if fill is None else fill
                ids_at[:k] = indices
                values_at[:k] = values
                continue
            head[0] = 0
            if v._is_sparse:  # a list: cleared buffers, then its entries
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

    def prologue(self):
        """A run's start, the device's part (enqueued; a recorded loop captures it): the start
        block copied from pinned memory (through pinned memory, the copy does not wait for the
        stream), the staged vectors loaded with their entry lists, the scratch reset."""
        cp = _cupy()
        start = self._start_host
        _memcpy(self._start_device.data.ptr, start.ctypes.data, start.nbytes, "HtoD")
        for name, (bv, bp) in self.buffers.items():
            # a list its buffers keep is made from the staged entries (a search's source), or
            # forgotten: the start state comes without lists
            _loop.load_staged(
                self._start_device, self._at[name], bv, bp, STAGED_MAX, self.lists.get(name)
            )
        for array, initial in self._scratch.values():
            if initial is None:
                continue
            if initial is _ZERO:
                array.data.memset_async(0, array.nbytes)
            elif isinstance(initial, np.ndarray) or hasattr(initial, "__cuda_array_interface__"):
                cp.copyto(array, initial)
            else:
                array.fill(initial)

    def read_control(self):
        """Enqueue the control words' copy into pinned memory; :meth:`done` reads it once the
        stream is waited for."""
        _memcpy(self._read.ctypes.data, self.control.data.ptr, self._read.nbytes, "DtoH")

    def done(self):
        """The iterations the last run made (after :meth:`read_control` and a wait)."""
        return int(self._read[_loop.DONE])

    def fused_done(self):
        """Of those, the iterations the fused block ran (gbla.kernels._fused)."""
        return int(self._read[_loop.FUSED])

    def edges(self):
        """The edges the last run's products examined (:attr:`examined`, read as :meth:`done`)."""
        return int(self._read[_loop.EDGES])

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
        to ``fill`` (a scalar, or a NumPy array of that size, kept on the device) before every
        run, or left as it is with None. Made the first time a key is asked for, which is never
        while recording."""
        if key not in self._scratch:
            cp = _cupy()
            array = cp.empty(size, dtype)
            if isinstance(fill, np.ndarray):
                initial = cp.asarray(fill, dtype)
                cp.copyto(array, initial)
                self._scratch[key] = (array, initial)
                return array
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
        self._clears = {}

    def clear_later(self, n, ids, count, present, reset=None):
        """An op site's output (``n`` positions; its list's ``ids`` and ``count``; its
        ``present``; ``reset``: what else goes back, an _entries.Reset, for a device product)
        written this iteration: emptied after the state is stored, by the loop's test
        (:meth:`sites`), when no op reads it any more."""
        self._clears[ids.data.ptr] = (n, ids, count, present, reset)

    def sites(self):
        """The iteration's op sites as the loop's test empties them: (table on the device, their
        number, the largest of their sizes, the word of finished blocks), None where there are
        none. The table is made in the first iteration, unrecorded (a recorded one would capture
        its copy to the device), and kept: every iteration has the same sites."""
        if not self._clears:
            return None
        cp = _cupy()
        key = tuple(self._clears)
        if self._site_table is None or self._site_table[0] != key:
            sites = list(self._clears.values())
            self._site_table = (
                key,
                cp.asarray(_entries.site_table(sites)),
                max(n for n, *_ in sites),
            )
        _, table, n = self._site_table
        return table, len(key), n, self.arrived()

    def arrived(self):
        """The word (uint64, zero) in which a launch of the loop counts its finished blocks, its
        last block setting it back to 0: made in the first iteration (unrecorded), and shared by
        every such launch of an iteration, one after another."""
        if self._arrived is None:
            self._arrived = _cupy().zeros(1, np.uint64)
        return self._arrived

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
        folded = False
        for name, size, dtype in self.signature:
            v = conform(name, state[name], size, dtype)
            values, present = v._dense()
            bv, bp = self.buffers[name]
            listed = (
                v._entries
                if values is not bv and present is not None and present is not bp
                else None
            )
            if listed is not None:  # its entries only, and its list kept with the buffers
                if name not in self.lists or self.lists[name][0].dtype != listed[0].dtype:
                    self.lists[name] = _entries.new_list(size, listed[0].dtype)
                fold = None
                if self._fold is not None and name == self.reduced[0]:  # test_reduce's
                    fold, folded = self._fold, True
                _entries.store(
                    values, present, listed, bv, bp, self.lists[name], self.arrived(), fold
                )
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
        if self.reduced is not None and not folded:
            self.reduce_state()
        state._replace(self.vectors())

    def reduce_state(self):
        """Enqueue the reduction of test_reduce's state, as its buffers hold it, into
        :attr:`reduced_out` (a launch of its own)."""
        name, monoid = self.reduced
        bv, bp = self.buffers[name]
        _entries.reduce(self.lists.get(name), bv, bp, monoid, self.arrived(), out=self.reduced_out)

    def results(self, dense=None, keep=None):
        """New arrays holding copies of the entry buffers (the workspace is reused): Vectors
        (one allocation and one copy for all of them), but for the names in ``dense`` (name to
        fill value), each a dense array made in one pass, as ``Vector.to_dense(fill)`` would
        make it from the Vector; only the names in ``keep`` (all: None)."""
        cp = _cupy()
        dense = dense or {}
        out = {}
        for name, fill in dense.items():
            if keep is not None and name not in keep:
                continue
            values, present = self.buffers[name]
            dtype = _fill_dtype(type(fill), fill, values.dtype)
            if dtype not in _dtypes.CUDA_TYPES:  # a fill no kernel here takes: the long way
                out[name] = Vector._from_dense_arrays(
                    values.copy(), present.copy(), "gpu"
                ).to_dense(fill)
                continue
            out[name] = cp.empty(values.size, dtype)
            _loop.dense(values, present, fill, out[name])
        rest = [
            (name, arrays)
            for name, arrays in self.buffers.items()
            if name not in dense and (keep is None or name in keep)
        ]
        if not rest:
            return out
        # the rest's part of the slab, from the first of their arrays to the end of the last
        base = self._slab.data.ptr
        first = min(a.data.ptr for _, arrays in rest for a in arrays) - base
        end = max(a.data.ptr + a.nbytes for _, arrays in rest for a in arrays) - base
        copy = cp.empty(end - first, np.uint8)
        _memcpy(copy.data.ptr, base + first, end - first, "DtoD")
        for name, (values, present) in rest:
            v0 = values.data.ptr - base - first
            p0 = present.data.ptr - base - first
            out[name] = Vector._from_dense_arrays(
                copy[v0 : v0 + values.nbytes].view(values.dtype),
                copy[p0 : p0 + present.nbytes].view(bool),
                "gpu",
            )
        return out

    def nbytes(self):
        return (
            self._slab.nbytes
            + self._start_device.nbytes
            + sum(a.nbytes * (2 if hasattr(i, "nbytes") else 1) for a, i in self._scratch.values())
            + sum(ids.nbytes + count.nbytes for ids, count in self.lists.values())
        )
