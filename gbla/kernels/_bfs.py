"""Drivers of the hand-written BFS kernels of bfs.cu, registered as drop-in methods of gbla.bfs.

Each driver takes the arguments the algebraic method takes (A, source, return_parents,
depth_limit, direction) and returns the same arrays: int32 levels (-1 = unreached) and, when
asked, int32 parents (parents[source] == source, -1 = unreached). The kernels are compiled once
by NVRTC and cached (in memory, and by CuPy on disk).
"""

import functools

import numpy as np

from .._backend import _cupy
from .. import _validation as V
from ..direction import DEFAULT_POLICY, DirectionPolicy
from . import _codegen
from ._spmv import THREADS, _device_limits, _grid, _ptr

WARP = 32
SLOT = 8  # u64 counters per slot, laid out in bfs.cu
# The single block: 1024 threads (GBLA_SB_THREADS), a frontier of up to SB_CAP vertices in
# shared memory (two queues, edge offsets and row starts: 16 bytes a vertex, 128 KiB; 8
# entries a thread at most, GBLA_SB_PER is 16) and SB_EDGES edges a level (24 per thread): beyond
# that a level is faster on the whole grid, even with a launch and a host round trip.
SB_THREADS, SB_CAP, SB_EDGES = 1024, 8192, 24576
SB_SHARED = (4 * SB_CAP + 1) * 4
PERSISTENT_THREADS = 512
DONE, DEPTH = 6, 5


@functools.lru_cache(maxsize=None)
def _module(cooperative):
    cp = _cupy()
    return cp.RawModule(code=_codegen.source("bfs.cu"), options=("-std=c++17",),
                        enable_cooperative_groups=cooperative)


def _kernel(name):
    return _module(name == "gbla_bfs_persistent").get_function(name)


@functools.lru_cache(maxsize=None)
def _cooperative_blocks(threads):
    """Blocks of the persistent kernel that are all resident at once (cooperative launch)."""
    kernel = _kernel("gbla_bfs_persistent")
    try:
        from cupy_backends.cuda.api import driver
        per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, 0)
    except (ImportError, AttributeError):
        per_sm = min(2048 // threads, 65536 // max(kernel.num_regs * threads, 1))
    # At most two blocks an SM: every grid.sync() costs an atomic per block, and the levels of
    # a road network are short.
    return _device_limits() * max(1, min(int(per_sm), 2))


class _Search:
    """The arrays of one search: CSR, CSC, levels and parents, with the source labelled."""

    def __init__(self, A, source, return_parents):
        cp = _cupy()
        self.n, self.nnz = A.nrows, A.nvals
        self.indptr, self.indices = _int32(A)
        self.t_indptr, self.t_indices = _int32(A.T)
        self.levels = cp.full(self.n, -1, np.int32)
        self.parents = cp.full(self.n, -1, np.int32) if return_parents else None
        self.source = source

    def init(self, bins, slot):
        """The source in the small bin of ``bins`` (or at q[0]) and described in ``slot``."""
        _kernel("gbla_bfs_init")((1,), (1,), (np.int32(self.source), self.levels,
                                              _ptr(self.parents), bins, self.indptr, slot))

    def binned(self, n_slots):
        """Two frontier buffers of three bins each and ``n_slots`` zeroed counter slots, the
        source in the first buffer and described in slot 0."""
        cp = _cupy()
        bins = [cp.empty(3 * max(self.n, 1), np.int32) for _ in range(2)]
        slots = cp.zeros((n_slots, SLOT), np.uint64)
        self.init(bins[0], slots[0])
        return bins, slots

    def result(self):
        return self.levels if self.parents is None else (self.levels, self.parents)


def _int32(A):
    """A's CSR arrays as int32 (the registry admits only matrices whose ids fit), converted
    once and cached when the matrix stores int64."""
    if A._indptr.dtype == np.int32:
        return A._indptr, A._indices
    if "bfs_int32" not in A._cache:
        A._cache["bfs_int32"] = (A._indptr.astype(np.int32), A._indices.astype(np.int32))
    return A._cache["bfs_int32"]


def _limit(depth_limit):
    return -1 if depth_limit is None else int(depth_limit)


def _deeper(depth, depth_limit):
    return depth_limit is None or depth < depth_limit


# ------------------------------------------------------------------ one launch per level, flag
def _levelwise(kernel_name):
    """vertex_push / vertex_pull / edge_centric: a launch over all vertices (or edges) per
    level, and a 4-byte flag read back to learn whether the level labelled anything."""

    def run(A, source, *, return_parents, depth_limit, direction):
        cp = _cupy()
        s = _Search(A, source, return_parents)
        s.levels[source] = 0
        if s.parents is not None:
            s.parents[source] = source
        flag = cp.zeros(1, np.int32)
        kernel = _kernel(kernel_name)
        if kernel_name == "gbla_bfs_edge_centric":
            rows = _edge_rows(A)
        depth = 0
        while _deeper(depth, depth_limit):
            depth += 1
            d = np.int32(depth)
            if kernel_name == "gbla_bfs_vertex_push":
                kernel(_grid(s.n), (THREADS,), (np.int32(s.n), d, s.levels, _ptr(s.parents),
                                                 s.indptr, s.indices, flag))
            elif kernel_name == "gbla_bfs_vertex_pull":
                kernel(_grid(s.n), (THREADS,), (np.int32(s.n), d, s.levels, _ptr(s.parents),
                                                 s.t_indptr, s.t_indices, flag, _ptr(None),
                                                 _ptr(None)))
            else:
                kernel(_grid(s.nnz), (THREADS,), (np.int32(s.nnz), d, s.levels,
                                                   _ptr(s.parents), rows, s.indices, flag))
            if int(flag.get()[0]) != depth:  # sync: did this level label anything
                break
        return s.result()

    return run


def _edge_rows(A):
    """The source vertex of every stored edge (COO rows), int32, cached on the matrix."""
    if "bfs_rows" not in A._cache:
        from ..ops import _entry_rows
        A._cache["bfs_rows"] = _entry_rows(A).astype(np.int32)
    return A._cache["bfs_rows"]


# ------------------------------------------------------------------ explicit frontier queues
def _queue(kernel_name, grid_stride):
    """frontier_queue / block_queue / warp_queue: the frontier is an explicit vertex list; its
    size comes back to the host each level (one 64-byte read) to size the next launch."""

    def run(A, source, *, return_parents, depth_limit, direction):
        cp = _cupy()
        s = _Search(A, source, return_parents)
        q_in, q_out = cp.empty(max(s.n, 1), np.int32), cp.empty(max(s.n, 1), np.int32)
        slots = cp.zeros((3, SLOT), np.uint64)
        s.init(q_in, slots[0])
        kernel = _kernel(kernel_name)
        count, depth = 1, 0
        while count and _deeper(depth, depth_limit):
            depth += 1
            slot, clear = slots[depth % 3], slots[(depth + 1) % 3]
            grid = _grid(count) if grid_stride else (-(-count // THREADS),)
            kernel(grid, (THREADS,), (q_in, np.int32(count), np.int32(depth), s.levels,
                                      _ptr(s.parents), s.indptr, s.indices, q_out, slot, clear))
            count = int(slot[0].get())  # sync: the next frontier's size
            q_in, q_out = q_out, q_in
        return s.result()

    return run


# ------------------------------------------------------------------ binned frontiers
class _Binned:
    """A search over binned frontiers (small / medium / large out-degree), double-buffered, with
    three rotating counter slots: step k writes slot k % 3 and clears slot (k + 1) % 3. After a
    pull level the frontier exists only in the levels (``binned`` False) until gathered."""

    def __init__(self, A, source, return_parents):
        self.s = s = _Search(A, source, return_parents)
        self.bins, self.slots = s.binned(3)
        # the three bins of each buffer, as views made once (a view costs a few microseconds)
        self.views = {id(b): [b[i * s.n:] for i in range(3)] for b in self.bins}
        self.slot_views = [self.slots[i] for i in range(3)]
        self.step = 0
        self.depth = 0
        self.counts = (1, 0, 0)
        self.binned = True
        self.edges = None  # out-edges of the frontier, known after the first read
        # Edges not yet looked at, counted as GAP counts them: all edges less the out-edges of
        # every frontier pushed so far (the direction policy's m_u).
        self.unexplored = s.nnz

    def _next_slot(self):
        self.step += 1
        return self.slot_views[self.step % 3], self.slot_views[(self.step + 1) % 3]

    def _read(self):
        info = self.slot_views[self.step % 3].get()  # sync: the next frontier's size and edges
        self.bins.reverse()
        self.counts = tuple(int(c) for c in info[:3])
        self.edges = int(info[3])
        return info

    def gather(self):
        """Bins the frontier a pull level left in the levels."""
        s = self.s
        slot, clear = self._next_slot()
        _kernel("gbla_bfs_gather")(_grid(s.n), (THREADS,),
                                   (np.int32(s.n), np.int32(self.depth), s.levels, s.indptr,
                                    self.bins[1], slot, clear))
        self._read()
        self.binned = True

    def push(self):
        """One level by load-balanced expansion: a thread, warp or block per frontier vertex."""
        if not self.binned:
            self.gather()
        s, (q, out) = self.s, self.bins
        slot, clear = self._next_slot()
        self.depth += 1
        self.unexplored -= self.edges or 0
        kernel = _kernel("gbla_bfs_binned_expand")
        for view, count, group in zip(self.views[id(q)], self.counts, (1, WARP, THREADS)):
            if count:
                kernel(_grid(count * group), (THREADS,),
                       (view, np.int32(count), np.int32(group), np.int32(self.depth),
                        np.int32(s.n), s.levels, _ptr(s.parents), s.indptr, s.indices, out,
                        slot, clear))
        self._read()

    def pull(self):
        """One level by vertex_pull; the claims are only counted (the frontier stays unbinned)."""
        s = self.s
        slot, clear = self._next_slot()
        self.depth += 1
        _kernel("gbla_bfs_vertex_pull")(
            _grid(s.n), (THREADS,), (np.int32(s.n), np.int32(self.depth), s.levels,
                                     _ptr(s.parents), s.t_indptr, s.t_indices, _ptr(None), slot,
                                     clear))
        self._read()
        self.bins.reverse()  # nothing was written to the bins: keep them where they were
        self.binned = False

    def single_block(self, depth_limit):
        """Levels inside one block until done or handed over; True when the search is done."""
        s, (q, out) = self.s, self.bins
        slot, clear = self._next_slot()
        c0, c1, c2 = self.counts
        _single_block_kernel()(
            (1,), (SB_THREADS,), (q, np.int32(c0), np.int32(c1), np.int32(c2),
                                  np.int32(self.depth), np.int32(_limit(depth_limit)),
                                  np.int32(SB_CAP), np.int32(SB_EDGES), np.int32(s.n),
                                  s.levels, _ptr(s.parents), s.indptr, s.indices, out, slot,
                                  clear), shared_mem=SB_SHARED)
        info = self._read()
        self.depth = int(info[DEPTH])
        return bool(info[DONE])

    @property
    def frontier(self):
        return sum(self.counts)


@functools.lru_cache(maxsize=None)
def _single_block_kernel():
    kernel = _kernel("gbla_bfs_single_block")
    kernel.max_dynamic_shared_size_bytes = SB_SHARED  # past the default 48 KiB: opt in
    return kernel


def _load_balanced(A, source, *, return_parents, depth_limit, direction):
    b = _Binned(A, source, return_parents)
    while b.frontier and _deeper(b.depth, depth_limit):
        b.push()
    return b.s.result()


def _direction_optimized(A, source, *, return_parents, depth_limit, direction):
    b = _Binned(A, source, return_parents)
    policy = _policy(direction)
    last = None
    if isinstance(policy, DirectionPolicy):
        b.edges = int(b.slots[0, 3].get())  # sync: the source's out-edges
    while b.frontier and _deeper(b.depth, depth_limit):
        if isinstance(policy, DirectionPolicy):
            last = policy.choose(last, frontier_nvals=b.frontier, frontier_edges=b.edges,
                                 unexplored_edges=b.unexplored, n=b.s.n, early_exit=True)
        else:
            last = policy
        b.pull() if last == "pull" else b.push()
    return b.s.result()


def _single_block(A, source, *, return_parents, depth_limit, direction):
    b = _Binned(A, source, return_parents)
    while b.frontier and _deeper(b.depth, depth_limit):
        fits = b.frontier <= SB_CAP and (b.edges is None or b.edges <= SB_EDGES)
        if fits:
            if b.single_block(depth_limit):
                break
        else:  # the grid kernel takes the levels the block cannot hold
            b.push()
    return b.s.result()


def _persistent(A, source, *, return_parents, depth_limit, direction):
    s = _Search(A, source, return_parents)
    bins, slots = s.binned(6)  # three rotating level slots and three for the gathers
    policy = _policy(direction)
    fixed = {"push": 1, "pull": 2}.get(policy, 0) if isinstance(policy, str) else 0
    alpha, beta = (policy.alpha, policy.beta) if fixed == 0 else (0.0, 0.0)
    _kernel("gbla_bfs_persistent")(
        (_cooperative_blocks(PERSISTENT_THREADS),), (PERSISTENT_THREADS,),
        (np.int32(s.n), np.int32(_limit(depth_limit)), s.levels, _ptr(s.parents), s.indptr,
         s.indices, s.t_indptr, s.t_indices, bins[0], bins[1], slots, np.float64(alpha),
         np.float64(beta), np.int64(s.nnz), np.int32(fixed)))
    return s.result()


def _policy(direction):
    if isinstance(direction, str) and direction == "auto":
        return DEFAULT_POLICY
    if isinstance(direction, DirectionPolicy):
        return direction
    return V.one_of(direction, ("push", "pull"), "direction")


# ------------------------------------------------------------------ the registry entries
KERNELS = (
    ("vertex_push", _levelwise("gbla_bfs_vertex_push"), False,
     "a thread per vertex every level; level d-1 labels its unvisited out-neighbours (CSR)"),
    ("vertex_pull", _levelwise("gbla_bfs_vertex_pull"), False,
     "a thread per unvisited vertex scans its in-neighbours (CSC), stopping at the first hit"),
    ("edge_centric", _levelwise("gbla_bfs_edge_centric"), False,
     "a thread per edge (COO): source in level d-1, destination unvisited"),
    ("frontier_queue", _queue("gbla_bfs_frontier_queue", True), False,
     "explicit frontier; atomicCAS claims a vertex, atomicAdd on one global tail appends it"),
    ("block_queue", _queue("gbla_bfs_block_queue", False), False,
     "frontier_queue with a shared-memory queue per block, overflow to the global queue, one "
     "coalesced copy-out per block"),
    ("warp_queue", _queue("gbla_bfs_warp_queue", False), False,
     "hierarchical queues: lane-indexed warp sub-queues, merged into the block queue, then the "
     "global queue, each with its own overflow"),
    ("single_block", _single_block, False,
     "one block runs level after level in one launch while the frontier fits (8192 vertices, "
     "24576 edges), handing over to the load-balanced grid kernel when it outgrows it"),
    ("persistent", _persistent, True,
     "one cooperative launch runs every level, grid-wide barrier between levels, push/pull "
     "chosen on the device by the DirectionPolicy rule"),
    ("load_balanced", _load_balanced, False,
     "frontier binned by out-degree: a thread per small vertex, a warp per medium one, a block "
     "per hub"),
    ("direction_optimized", _direction_optimized, True,
     "load_balanced push and vertex_pull, switched per level by the DirectionPolicy the "
     "algebra uses"),
)
