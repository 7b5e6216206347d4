"""Launchers of distributed.cu: one rank's local steps of a level of the distributed bitmap BFS
(:mod:`gbla.distributed.bitmap` drives them, and runs the same steps with NumPy on CPU ranks),
and of a round of the distributed Bellman-Ford (:class:`DeviceRelax`, which
:mod:`gbla.distributed.relax` drives).

Every launch goes to the current stream, and none reads anything back: a claim or a pull
returns its tally on the device, which the sum over the ranks reads (the level's one
synchronisation), and the next push reads the frontier's size there. A CUDA graph may capture
any of them (:class:`LoopKernels`: the level loop's own, which read the depth on the device
too; :class:`RelaxLoopKernels`: push_sssp's round loop's, its steps reading the search's
arrays through ``slots``)."""

import itertools

import numpy as np

from .. import _validation as V
from .. import direction as _direction
from .._backend import _cupy
from . import _launch
from ._launch import THREADS, grid, ptr, sm_count

__all__ = [
    "DeviceSteps",
    "DeviceRelax",
    "LoopKernels",
    "RelaxLoopKernels",
    "BINS",
    "CTYPES",
    "NAME_EXPRESSIONS",
]

CTYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
FLOATS = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
WARP = 32
# A push row longer than this goes to the whole grid rather than one warp (512 of its steps):
# an R-MAT hub of millions of edges took one warp 20 ms, the whole level, on 1 rank or 2.
HUB_EDGES = 1 << 14
# push_sssp's relax: a block's rows at a time (GBLA_DSSSP_BLOCK in distributed.cu)
RELAX_BLOCK = 256
# A relax of too few rows to give every SM 8 blocks of RELAX_BLOCK sends the grid every row past
# this: rmat(26)'s round from 1,335 hub rows a rank (four H200) ran their 3 M edges below
# HUB_EDGES on 6 blocks in 9.3 ms, 1.8 ms at this bound; with a full grid HUB_EDGES is better
# (a round of 9.6 M rows on one rank: 84.7 ms against 95.6)
HUB_EDGES_FEW_ROWS = 1 << 11
# push_sssp's round loop logs a round in this many int64 (GBLA_DSSSP_LOG in distributed.cu)
LOG_WORDS = 3
# push_sssp's window: the bins a pack counts the vertices past it in (GBLA_DSSSP_BINS)
BINS = 8


def _name_expressions():
    names = []
    for o, i in itertools.product(CTYPES.values(), repeat=2):
        names += [f"gbla_dbfs_{k}<{o}, {i}>" for k in ("push", "push_hubs", "pull", "parents")]
    names += [f"gbla_dbfs_{k}<{o}>" for k in ("claim", "start") for o in CTYPES.values()]
    names += [f"gbla_hub_scan<{o}>" for o in CTYPES.values()]
    for o, i, t in itertools.product(CTYPES.values(), CTYPES.values(), FLOATS.values()):
        names += [f"gbla_dsssp_{k}<{o}, {i}, {t}>" for k in ("relax", "relax_hubs")]
    names += [f"gbla_dsssp_{k}<{t}>" for k in ("pack", "apply") for t in FLOATS.values()]
    return tuple(names) + LOOP_KERNELS


# the level loop's kernels (extern "C": their names are their own)
LOOP_KERNELS = (
    "gbla_dsssp_begin",
    "gbla_dsssp_choose",
    "gbla_dsssp_to_table",
    "gbla_dsssp_decide",
    "gbla_dbfs_begin",
    "gbla_dbfs_decide",
    "gbla_dbfs_to_sum",
    "gbla_dbfs_logged",
    "gbla_dbfs_again",
)


NAME_EXPRESSIONS = _name_expressions()


def _kernel(expression, policy=None):
    """A kernel of distributed.cu, compiled behind ``policy``'s rule (the default's where
    none: one module for every kernel but a loop's choice of another policy)."""
    prelude = (policy or _direction.DEFAULT_POLICY).cuda_source()
    return _launch.function(
        "distributed.cu", expression, prelude=prelude, name_expressions=NAME_EXPRESSIONS
    )


class _HubRows:
    """The rows of a push over a rank's rows lo..hi of ``edges`` edges that are too long for a
    warp or block: a row of more than :meth:`bound` edges is listed in ``rows`` (room for every
    such row) and counted in ``count`` (on the device) by the push, and the grid's kernel
    takes their edges as one range, each row's first in ``first`` (:meth:`spread`). The rank's
    queues hold int32 offsets."""

    def __init__(self, lo, hi, edges):
        if hi - lo >= 2**31:
            raise V.invalid_value(
                "A", "give each rank fewer than 2**31 vertices on the GPU (int32 queues)", hi - lo
            )
        cp = _cupy()
        least = min(HUB_EDGES, HUB_EDGES_FEW_ROWS)
        self.rows = cp.empty(max(1, min(hi - lo, edges // least + 1)), np.int32)
        self.least = (edges - 1) // len(self.rows) + 1  # more such rows would overflow the list
        self.count = cp.zeros(1, np.uint64)
        self.first = cp.empty(len(self.rows) + 1, np.int64)

    def bound(self, few=False):
        """A row of more edges than this is a hub: HUB_EDGES, or HUB_EDGES_FEW_ROWS for a push
        of ``few`` rows (too few to fill the grid)."""
        return max(HUB_EDGES_FEW_ROWS if few else HUB_EDGES, self.least)

    def spread(self, expression, indptr, *args):
        """The listed rows' edges over the whole grid: each row's first edge in the range
        (their degrees' running sum, ``indptr``'s), then ``expression``'s kernel on (rows,
        count, first, *args)."""
        _kernel(f"gbla_hub_scan<{CTYPES[indptr.dtype]}>")(
            (1,), (1024,), (self.rows, self.count, indptr, self.first)
        )
        _kernel(expression)(
            grid(sm_count() * 8 * THREADS), (THREADS,), (self.rows, self.count, self.first, *args)
        )


class DeviceSteps:
    """The local steps on the GPU, with the interface of
    :class:`gbla.distributed.bitmap.HostSteps`: this rank's rows ``lo..hi`` (CSR ``indptr``,
    ``indices`` with global ids; A.T's rows ``t_indptr``, ``t_indices``, or None for push only;
    the two offset arrays of one dtype, the two id arrays of one), ``w0`` the first word of
    its range, and the rank's ``levels`` (int32) and ``parents`` (int64 or None), which the
    steps fill."""

    def __init__(self, lo, hi, w0, indptr, indices, t_indptr, t_indices, levels, parents):
        self.hubs = _HubRows(lo, hi, len(indices))
        self.lo, self.hi, self.w0 = lo, hi, w0
        self.indptr, self.indices = indptr, indices
        self.t_indptr, self.t_indices = t_indptr, t_indices
        self.levels, self.parents = levels, parents
        self.types = f"{CTYPES[indptr.dtype]}, {CTYPES[indices.dtype]}"
        self.offset_type = CTYPES[indptr.dtype]
        self.tally = _cupy().zeros(2, np.uint64)
        # where the claim, pull and parents find levels and parents (int64 addresses), read
        # instead of the arrays above; None: those arrays (LoopKernels.start says more)
        self.slots = None

    def push(self, queue, count, known, nxt, bound=None):
        """Sets the bits of ``nxt`` (all n vertices) of the out-neighbours of ``queue[:count]``
        that ``known`` does not mark visited. ``count``: an int, or where it lies on the device
        (the first item of what the claim or pull that built the queue returned), read by the
        kernel, not by the host; then ``bound`` (at least the count: the frontier over every
        rank) sizes the grid."""
        at = None if isinstance(count, (int, np.integer)) else count
        size = int(count) if at is None else bound
        if size:
            self.hubs.count.fill(0)
            _kernel(f"gbla_dbfs_push<{self.types}>")(
                grid(size * WARP),
                (THREADS,),
                (
                    queue,
                    np.int64(count if at is None else 0),
                    ptr(at),
                    self.indptr,
                    self.indices,
                    known,
                    nxt,
                    np.int64(self.hubs.bound()),
                    self.hubs.rows,
                    self.hubs.count,
                ),
            )
            # (the indptr the scan reads, then the kernel's arguments after the hub list)
            self.hubs.spread(
                f"gbla_dbfs_push_hubs<{self.types}>",
                self.indptr,
                self.indptr,
                self.indices,
                known,
                nxt,
            )

    def claim(self, received, depth, known, front, queue, frontier, depth_at=None):
        """Labels the vertices of this rank's range set in any of ``received`` (a word array
        over the range from each rank, or those arrays end to end in one) and not in ``known``:
        ``front`` becomes their bitmap, ``queue`` their list; with ``frontier`` (the level
        before's, gathered) and parents, each also gets its parent. ``depth_at``: where the
        depth lies on the device (int64), read instead of ``depth``. Returns the device tally
        (count, out-edges) of them, unread: the sum over the ranks reads it."""
        words = len(front)
        self.tally.fill(0)
        if words:
            # one array of every rank's words (a copy of the received ones, so that the ranks
            # may reuse what they sent)
            if isinstance(received, _cupy().ndarray):
                block, ranks = received, len(received) // words
            else:
                block, ranks = _cupy().concatenate(received), len(received)
            _kernel(f"gbla_dbfs_claim<{self.offset_type}>")(
                grid(words),
                (THREADS,),
                (
                    block,
                    np.int32(ranks),
                    np.int64(words),
                    np.int64(self.w0),
                    np.int64(self.lo),
                    np.int64(self.hi),
                    np.int32(depth),
                    ptr(depth_at),
                    self.indptr,
                    known,
                    front,
                    self.levels,
                    queue,
                    self.tally,
                    ptr(self.slots),
                ),
            )
        if frontier is not None and self.parents is not None and words:
            _kernel(f"gbla_dbfs_parents<{self.types}>")(
                grid(words * 32),  # at least the claimed: the range's vertices
                (THREADS,),
                (
                    queue,
                    self.tally,
                    self.t_indptr,
                    self.t_indices,
                    frontier,
                    self.parents,
                    ptr(self.slots),
                ),
            )
        return self.tally

    def pull(self, frontier, depth, known, front, queue, depth_at=None):
        """Labels each unvisited vertex of the range with an in-neighbour in ``frontier`` (all
        n vertices), the first one its parent; ``front`` (zeroed by the caller) and ``queue``
        get them; ``depth_at`` as for :meth:`claim`. Returns the device tally (count,
        out-edges) of them, unread."""
        m = self.hi - self.lo
        self.tally.fill(0)
        if m:
            _kernel(f"gbla_dbfs_pull<{self.types}>")(
                grid(m),
                (THREADS,),
                (
                    np.int64(m),
                    np.int64(self.lo),
                    np.int64(self.w0),
                    np.int32(depth),
                    ptr(depth_at),
                    self.t_indptr,
                    self.t_indices,
                    frontier,
                    self.indptr,
                    known,
                    front,
                    self.levels,
                    ptr(self.parents),
                    queue,
                    self.tally,
                    ptr(self.slots),
                ),
            )
        return self.tally


class DeviceRelax:
    """A rank's steps of a round of :func:`gbla.distributed.push_sssp` on the GPU, the
    interface of :class:`gbla.distributed.relax.HostRelax`: this rank's rows ``lo..hi``
    (CSR ``indptr``, ``indices`` with global ids), ``weights`` of the distances' dtype (None:
    each edge weighs 1). ``dist`` is an array over every vertex and ``changed`` a bitmap over
    them (uint32 words), as relax.py says.

    Each step also takes ``slots``: None, or a device array of the search's arrays' addresses
    (distributed.cu's GBLA_DSSSP_DIST ...), which the kernels then read in place of the arrays
    they are given (the round loop's CUDA graph, made once, serves every search that way)."""

    def __init__(self, lo, hi, indptr, indices, weights, dtype):
        self.hubs = _HubRows(lo, hi, len(indices))
        self.lo = lo
        self.indptr, self.indices, self.weights = indptr, indices, weights
        self.real = FLOATS[np.dtype(dtype)]
        self.types = f"{CTYPES[indptr.dtype]}, {CTYPES[indices.dtype]}, {self.real}"

    def relax(self, queue, count, bound, dist, changed, relaxed, slots=None):
        """Offers along the out-edges of ``queue[:count]`` (local offsets): ``count`` an int, or
        where it lies on the device (a tally :meth:`pack` filled), then ``bound`` (at least the
        count, or the grid's size: the kernels stride over the rest) sizes the grid. The edges
        are counted into ``relaxed`` (one uint64 on the device; with ``slots``, the search's)."""
        at = None if isinstance(count, (int, np.integer)) else count
        size = int(count) if at is None else bound
        if not size:
            return
        # the rows and the distances, as both kernels take them
        rows = (
            np.int64(self.lo),
            self.indptr,
            self.indices,
            ptr(self.weights),
            ptr(dist),
            ptr(changed),
        )
        hubs = self.hubs
        hubs.count.fill(0)
        _kernel(f"gbla_dsssp_relax<{self.types}>")(
            grid(size, RELAX_BLOCK),
            (RELAX_BLOCK,),
            (
                ptr(queue),
                np.int64(count if at is None else 0),
                ptr(at),
                *rows,
                np.int64(hubs.bound(few=size < sm_count() * 8 * RELAX_BLOCK)),
                hubs.rows,
                hubs.count,
                ptr(slots),
                ptr(relaxed),
            ),
        )
        hubs.spread(f"gbla_dsssp_relax_hubs<{self.types}>", self.indptr, *rows, ptr(slots))

    def pack(
        self,
        changed,
        lo,
        hi,
        dist,
        offsets,
        values,
        tally,
        clear,
        *,
        sent=None,
        slots=None,
        listed=0,
        at=0,
        window=None,
        bins=None,
    ):
        """The set bits of ``changed`` in [lo, hi), counted into ``tally`` (a one-item uint64
        device array, zeroed by the caller); with ``offsets``, listed there (offsets from lo,
        int32) with their distances in ``values`` (or None); with ``clear``, cleared. ``sent``:
        None, or (offsets, values) arrays that also get the first of them (as many as they
        hold). With ``slots`` (the arrays given are then not read), ``listed`` says where they
        go: 0 nowhere, 1 the search's queue, 2 the search's offsets and values from ``at``.
        ``window``: None, or (its end, its width), or a two-item int64 device array holding
        the two doubles' bits (the round loop's control words): only the bits of a distance
        below the end are taken, and with ``bins`` (:data:`BINS` uint64 on the device) each
        other one is counted in bin min(floor((distance - end) / width), BINS - 1)."""
        if hi <= lo:
            return
        w0, stop = lo >> 5, (hi + 31) >> 5
        sent_offsets, sent_values = (None, None) if sent is None else sent
        end_at = window if window is not None and not isinstance(window, tuple) else None
        end, width = window if isinstance(window, tuple) else (np.inf, 1.0)
        _kernel(f"gbla_dsssp_pack<{self.real}>")(
            grid(stop - w0),
            (THREADS,),
            (
                ptr(changed),
                np.int64(w0),
                np.int64(stop - w0),
                np.int64(lo),
                np.int64(hi),
                ptr(dist),
                ptr(offsets),
                ptr(values),
                tally,
                np.int32(bool(clear)),
                ptr(sent_offsets),
                ptr(sent_values),
                np.int64(0 if sent is None else len(sent_offsets)),
                ptr(slots),
                np.int32(listed),
                np.int64(at),
                np.int32(window is not None),
                np.float64(end),
                ptr(end_at),
                ptr(bins),
                np.float64(width),
            ),
        )

    def apply(self, offsets, values, dist, changed, count_at=None, slots=None):
        """Offers another rank sent this one's vertices (int32 offsets from lo, distances):
        all of them, or with ``count_at`` (an int64 on the device) as many as it says (at most
        their length, which then sizes the grid)."""
        if len(offsets):
            _kernel(f"gbla_dsssp_apply<{self.real}>")(
                grid(len(offsets)),
                (THREADS,),
                (
                    offsets,
                    values,
                    np.int64(len(offsets)),
                    ptr(count_at),
                    np.int64(self.lo),
                    ptr(dist),
                    ptr(changed),
                    ptr(slots),
                ),
            )


class LoopKernels:
    """The level loop's own kernels (distributed.cu's last section: one thread each, every
    state in ``control``), for a search of an ``n``-vertex matrix of ``edges`` edges whose
    direction is ``fixed`` ('push', 'pull') or a DirectionPolicy's."""

    def __init__(self, control, n, edges, direction):
        self.control, self.n, self.edges = control, n, edges
        self.fixed = {"push": 1, "pull": 2}.get(direction, 0) if isinstance(direction, str) else 0
        self.policy = None if isinstance(direction, str) else direction

    def _one(self, name, args):
        _kernel(name, self.policy)((1,), (1,), args)

    def decide(self, log_directions, log, push_handle, pull_handle):
        self._one(
            "gbla_dbfs_decide",
            (
                self.control,
                np.int64(self.n),
                np.int64(self.edges),
                np.int32(self.fixed),
                log_directions,
                log,
                np.uint64(push_handle),
                np.uint64(pull_handle),
            ),
        )

    def begin(self, start_handle):
        self._one("gbla_dbfs_begin", (self.control, np.uint64(start_handle)))

    def start(self, steps, queue, front, known):
        """The source (control's) labelled on the rank that holds it, through the addresses
        of the search's levels and parents in control, which ``steps`` (a DeviceSteps) reads
        as its slots; the rank's tally set."""
        _kernel(f"gbla_dbfs_start<{steps.offset_type}>", self.policy)(
            (1,),
            (1,),
            (
                self.control,
                np.int64(steps.lo),
                np.int64(steps.hi),
                np.int64(steps.w0),
                steps.indptr,
                queue,
                front,
                known,
                steps.tally,
            ),
        )

    def to_sum(self, tally):
        self._one("gbla_dbfs_to_sum", (tally, self.control))

    def logged(self, log):
        self._one("gbla_dbfs_logged", (self.control, log))

    def again(self, capacity, loop_handle):
        self._one("gbla_dbfs_again", (self.control, np.int64(capacity), np.uint64(loop_handle)))


class RelaxLoopKernels:
    """The round loop's own kernels for :func:`gbla.distributed.push_sssp` (distributed.cu's
    last section: one thread each, the loop's state in ``control``; a log of LOG_WORDS int64
    a round)."""

    def __init__(self, control):
        self.control = control

    @staticmethod
    def _one(name, args):
        _kernel(name)((1,), (1,), args)

    def begin(self):
        self._one("gbla_dsssp_begin", (self.control,))

    def choose(self, table, size, small, middle, log, handles):
        self._one(
            "gbla_dsssp_choose",
            (
                self.control,
                table,
                np.int32(size),
                np.int64(small),
                np.int64(middle),
                log,
                *(np.uint64(h) for h in handles),
            ),
        )

    def to_table(self, tally, table, size, rank):
        self._one("gbla_dsssp_to_table", (tally, table, np.int32(size), np.int32(rank)))

    def decide(self, table, size, capacity, n, log, loop_handle):
        self._one(
            "gbla_dsssp_decide",
            (
                self.control,
                table,
                np.int32(size),
                np.int64(capacity),
                np.int64(n),
                log,
                np.int64(len(log) // LOG_WORDS),
                np.uint64(loop_handle),
            ),
        )
