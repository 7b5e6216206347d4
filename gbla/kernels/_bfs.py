"""Drivers of the hand-written BFS kernels of bfs.cu, registered as drop-in methods of gbla.bfs.

Each driver takes the arguments the algebraic method takes (A, source, return_parents,
depth_limit, direction) and returns the same arrays: int32 levels (-1 = unreached) and, when
asked, int32 parents (parents[source] == source, -1 = unreached). The kernels are compiled once
by NVRTC and cached (in memory, and by CuPy on disk).
"""

import functools

import numpy as np

from .. import direction as _direction
from .. import methods
from .._backend import _cupy
from . import _launch
from ._frontier import SLOT, BinnedFrontier, int32_csr, int32_rows
from ._launch import THREADS, grid, ptr

WARP = 32
# The single block: 1024 threads (GBLA_SB_THREADS), a frontier of up to SB_CAP vertices in
# shared memory (two queues of vertices, row starts and degrees: 24 bytes a vertex, 192 KiB;
# 8 entries a thread at most, GBLA_SB_PER is 16) and SB_EDGES edges a level (24 per thread):
# beyond that a level is faster on the whole grid, even with a launch and a host round trip.
# Where the shared memory left holds a bit per vertex, the visited set is kept there too, the
# queues shrinking to fit it down to SB_CAP_MIN vertices (:func:`block_plan`).
SB_THREADS, SB_CAP, SB_CAP_MIN, SB_EDGES = 1024, 8192, 2048, 24576
SB_STATIC = 1024  # bytes the kernel's own shared arrays take, rounded up
# A graph whose vertices all fit the queues and with at most SB_WHOLE_EDGES edges is searched
# in one launch that never hands over: a level of at most that many edges costs one block less
# than a launch of the grid and a host round trip.
SB_WHOLE_EDGES = 8 * SB_EDGES
PERSISTENT_THREADS = 512
# At most two blocks an SM: every grid.sync() costs an atomic per block, and the levels of a
# road network are short.
PERSISTENT_BLOCKS_PER_SM = 2
DONE, DEPTH = 6, 5  # slot fields the single block writes


def _kernel(name, policy=None):
    """A kernel of bfs.cu on the current device. The file uses the direction rule
    (gbla_direction) that a policy generates, so it is compiled per policy, the default one
    for every kernel but the persistent one, which also needs cooperative launch."""
    prelude = (policy or _direction.DEFAULT_POLICY).cuda_source()
    return _launch.function(
        "bfs.cu", name, prelude=prelude, cooperative=name == "gbla_bfs_persistent"
    )


class _Search:
    """The arrays of one search: CSR, CSC (made when first asked for), levels and parents, with
    the source labelled by :meth:`start`."""

    def __init__(self, A, source, return_parents):
        self._setup(A.nrows, *int32_csr(A), source, return_parents)
        self._A = A

    @classmethod
    def over(cls, indptr, indices, source, return_parents=True):
        """A search over int32 CSR arrays of a graph that is no Matrix (push kernels only)."""
        s = cls.__new__(cls)
        s._setup(len(indptr) - 1, indptr, indices, source, return_parents)
        s._A = None
        return s

    def _setup(self, n, indptr, indices, source, return_parents):
        cp = _cupy()
        self.n, self.nnz = n, len(indices)
        self.indptr, self.indices = indptr, indices
        self.levels = cp.full(n, -1, np.int32)
        self.parents = cp.full(n, -1, np.int32) if return_parents else None
        self.source = source

    @property
    def t_indptr(self):
        return int32_csr(self._A.T)[0]

    @property
    def t_indices(self):
        return int32_csr(self._A.T)[1]

    def start(self, bins, slot):
        """The source in the small bin of ``bins`` (or at q[0]) and described in ``slot``."""
        _kernel("gbla_bfs_init")(
            (1,),
            (1,),
            (np.int32(self.source), self.levels, ptr(self.parents), bins, self.indptr, slot),
        )

    def binned(self, n_slots=3):
        """A BinnedFrontier holding the source, described in slot 0."""
        f = BinnedFrontier(self.n, n_slots)
        self.start(f.bins[0], f.slots[0])
        return f

    def result(self):
        return self.levels if self.parents is None else (self.levels, self.parents)


def _limit(depth_limit):
    return -1 if depth_limit is None else int(depth_limit)


def _deeper(depth, depth_limit):
    return depth_limit is None or depth < depth_limit


# ------------------------------------------------------------------ one launch per level, flag
def _levelwise(kernel_name):
    """vertex_push / vertex_pull / edge_centric: a launch over all vertices (or edges) per
    level, and a 4-byte flag read back to learn whether the level labelled anything."""

    def run(A, source, *, return_parents, depth_limit, direction, stats):
        cp = _cupy()
        s = _Search(A, source, return_parents)
        s.levels[source] = 0
        if s.parents is not None:
            s.parents[source] = source
        flag = cp.zeros(1, np.int32)
        kernel = _kernel(kernel_name)
        if kernel_name == "gbla_bfs_edge_centric":
            rows = int32_rows(A)
        depth = 0
        while _deeper(depth, depth_limit):
            depth += 1
            d = np.int32(depth)
            if kernel_name == "gbla_bfs_vertex_push":
                kernel(
                    grid(s.n),
                    (THREADS,),
                    (np.int32(s.n), d, s.levels, ptr(s.parents), s.indptr, s.indices, flag),
                )
            elif kernel_name == "gbla_bfs_vertex_pull":
                kernel(
                    grid(s.n),
                    (THREADS,),
                    (
                        np.int32(s.n),
                        d,
                        s.levels,
                        ptr(s.parents),
                        s.t_indptr,
                        s.t_indices,
                        flag,
                        ptr(None),
                        ptr(None),
                    ),
                )
            else:
                kernel(
                    grid(s.nnz),
                    (THREADS,),
                    (np.int32(s.nnz), d, s.levels, ptr(s.parents), rows, s.indices, flag),
                )
            if int(flag.get()[0]) != depth:  # sync: did this level label anything
                break
        return s.result()

    return run


# ------------------------------------------------------------------ explicit frontier queues
def _queue(kernel_name, grid_stride):
    """frontier_queue / block_queue / warp_queue: the frontier is an explicit vertex list; its
    size comes back to the host each level (one 64-byte read) to size the next launch."""

    def run(A, source, *, return_parents, depth_limit, direction, stats):
        s = _Search(A, source, return_parents)
        _queue_levels(s, kernel_name, grid_stride, depth_limit)
        return s.result()

    return run


def _queue_levels(s, kernel_name, grid_stride, depth_limit=None):
    cp = _cupy()
    q_in, q_out = cp.empty(max(s.n, 1), np.int32), cp.empty(max(s.n, 1), np.int32)
    slots = cp.zeros((3, SLOT), np.uint64)
    s.start(q_in, slots[0])
    kernel = _kernel(kernel_name)
    count, depth = 1, 0
    while count and _deeper(depth, depth_limit):
        depth += 1
        slot, clear = slots[depth % 3], slots[(depth + 1) % 3]
        blocks = grid(count) if grid_stride else (-(-count // THREADS),)
        kernel(
            blocks,
            (THREADS,),
            (
                q_in,
                np.int32(count),
                np.int32(depth),
                s.levels,
                ptr(s.parents),
                s.indptr,
                s.indices,
                q_out,
                slot,
                clear,
            ),
        )
        count = int(slot[0].get())  # sync: the next frontier's size
        q_in, q_out = q_out, q_in


def bfs_tree(indptr, indices, source):
    """Parents of a breadth-first tree over int32 CSR arrays from ``source`` (parents[source]
    == source, -1 unreached), by the frontier_queue kernel: what the SSSP kernels turn their
    graph of tight edges into predecessors with."""
    s = _Search.over(indptr, indices, source)
    _queue_levels(s, "gbla_bfs_frontier_queue", True)
    return s.parents


# ------------------------------------------------------------------ binned frontiers
class _Binned:
    """A search over binned frontiers (small / medium / large out-degree). After a pull level
    the frontier exists only in the levels (``binned`` False) until gathered."""

    def __init__(self, A, source, return_parents):
        self.s = _Search(A, source, return_parents)
        self.f = self.s.binned()
        self.depth = 0
        self.binned = True

    def gather(self):
        """Bins the frontier a pull level left in the levels."""
        s, f = self.s, self.f
        slot, clear = f.next_slot()
        _kernel("gbla_bfs_gather")(
            grid(s.n),
            (THREADS,),
            (np.int32(s.n), np.int32(self.depth), s.levels, s.indptr, f.current[1], slot, clear),
        )
        f.read()
        self.binned = True

    def push(self):
        """One level by load-balanced expansion: a thread, warp or block per frontier vertex."""
        if not self.binned:
            self.gather()
        s, f = self.s, self.f
        q, out = f.current
        slot, clear = f.next_slot()
        self.depth += 1
        kernel = _kernel("gbla_bfs_binned_expand")
        for view, count, group in zip(f.bin_views(q), f.counts, (1, WARP, THREADS)):
            if count:
                kernel(
                    grid(count * group),
                    (THREADS,),
                    (
                        view,
                        np.int32(count),
                        np.int32(group),
                        np.int32(self.depth),
                        np.int32(s.n),
                        s.levels,
                        ptr(s.parents),
                        s.indptr,
                        s.indices,
                        out,
                        slot,
                        clear,
                    ),
                )
        f.read()

    def pull(self):
        """One level by vertex_pull; the claims are only counted (the frontier stays unbinned)."""
        s, f = self.s, self.f
        slot, clear = f.next_slot()
        self.depth += 1
        _kernel("gbla_bfs_vertex_pull")(
            grid(s.n),
            (THREADS,),
            (
                np.int32(s.n),
                np.int32(self.depth),
                s.levels,
                ptr(s.parents),
                s.t_indptr,
                s.t_indices,
                ptr(None),
                slot,
                clear,
            ),
        )
        f.read(swap=False)  # nothing was written to the bins: keep them where they were
        self.binned = False

    def single_block(self, depth_limit, plan):
        """Levels inside one block (``plan``: :func:`block_plan`'s) until done or handed over;
        True when the search is done."""
        s, f = self.s, self.f
        q, out = f.current
        slot, clear = f.next_slot()
        c0, c1, c2 = f.counts
        cap, words, shared = plan
        _single_block_kernel()(
            (1,),
            (SB_THREADS,),
            (
                q,
                np.int32(c0),
                np.int32(c1),
                np.int32(c2),
                np.int32(self.depth),
                np.int32(_limit(depth_limit)),
                np.int32(cap),
                np.int32(SB_EDGES),
                np.int32(s.n),
                s.levels,
                ptr(s.parents),
                s.indptr,
                s.indices,
                out,
                slot,
                clear,
                np.int32(words),
                np.int32(-1),
                np.int32(0),
                np.int32(0),
            ),
            shared_mem=shared,
        )
        info = f.read()
        self.depth = int(info[DEPTH])
        return bool(info[DONE])

    @property
    def frontier(self):
        return self.f.size


def block_plan(n):
    """(cap, words, shared bytes) of the single block on a graph of n vertices: the visited
    set as a bitmap of ``words`` 32-bit words (0: none, the levels claimed in global memory)
    where it fits beside queues of at least SB_CAP_MIN vertices, and queues of ``cap``."""
    budget = shared_budget(_launch.device_id())
    words = -(-n // 32)
    cap = min(SB_CAP, (budget - 4 * words) // 24 - 1)
    if cap < SB_CAP_MIN:
        words, cap = 0, min(SB_CAP, budget // 24 - 1)
    return cap, words, (6 * (cap + 1) + words) * 4


def one_launch_plan(n, edges, plan):
    """(cap, words, shared bytes, resident) of a search in one launch, from the block's
    ``plan`` for n vertices (whose queues hold them all): queues of n vertices, and the graph
    itself in shared memory beside them (``resident`` 1) where it fits."""
    cap, words, shared = plan
    cap = min(cap, n)
    shared = (6 * (cap + 1) + words) * 4
    graph = (n + 1 + edges) * 4
    if shared + graph <= shared_budget(_launch.device_id()):
        return cap, words, shared + graph, 1
    return cap, words, shared, 0


@functools.lru_cache(maxsize=None)
def shared_budget(device):
    """Dynamic shared memory one block may take on ``device`` (the opt-in limit less the
    kernel's own arrays)."""
    limit = _cupy().cuda.Device(device).attributes["MaxSharedMemoryPerBlockOptin"]
    return int(limit) - SB_STATIC


def _single_block_kernel():
    return opt_in_shared(_kernel("gbla_bfs_single_block"))


@functools.lru_cache(maxsize=None)
def opt_in_shared(kernel):
    """A kernel of one block (one function object per device: the BFS and SSSP single blocks)
    allowed all the dynamic shared memory a block may take, past the default 48 KiB."""
    kernel.max_dynamic_shared_size_bytes = shared_budget(_launch.device_id())
    return kernel


def _load_balanced(A, source, *, return_parents, depth_limit, direction, stats):
    b = _Binned(A, source, return_parents)
    while b.frontier and _deeper(b.depth, depth_limit):
        b.push()
    return b.s.result()


def _direction_optimized(A, source, *, return_parents, depth_limit, direction, stats):
    b = _Binned(A, source, return_parents)
    steps = _direction.start(direction)
    if not isinstance(steps, str):
        b.f.edges = int(b.f.slots[0, 3].get())  # sync: the source's out-edges
    while b.frontier and _deeper(b.depth, depth_limit):
        if isinstance(steps, str):
            choice = steps
        else:
            choice = steps.choose(
                frontier_vertices=b.frontier,
                frontier_edges=b.f.edges,
                edges=b.s.nnz,
                n=b.s.n,
                early_exit=True,
            )
        b.pull() if choice == "pull" else b.push()
    return b.s.result()


def _single_block(A, source, *, return_parents, depth_limit, direction, stats):
    launch = _whole_graph_launch(A)
    if launch is not None:
        return launch(source, return_parents, depth_limit)
    plan = block_plan(A.nrows)
    b = _Binned(A, source, return_parents)
    while b.frontier and _deeper(b.depth, depth_limit):
        edges = b.f.edges
        if b.frontier <= plan[0] and (edges is None or edges <= SB_EDGES):
            if b.single_block(depth_limit, plan):
                break
        else:  # the grid kernel takes the levels the block cannot hold
            b.push()
    return b.s.result()


def _whole_graph_launch(A):
    """The search of A in one launch (:class:`_OneLaunch`), made once per matrix and device, or
    None where A is too large for it."""
    key = ("single_block_launch", _launch.device_id())
    if key not in A._cache:
        n = A.nrows
        plan = block_plan(n)
        indptr, indices = int32_csr(A)
        fits = plan[0] >= n and len(indices) <= SB_WHOLE_EDGES
        A._cache[key] = (
            _OneLaunch(n, indptr, indices, one_launch_plan(n, len(indices), plan)) if fits else None
        )
    return A._cache[key]


class _OneLaunch:
    """The whole search in one launch of the single block, which sets the levels (and parents)
    itself: its queues hold every vertex and the graph's edges are few enough for one block a
    level, so it never hands over and nothing is read back. What does not change between two
    searches (the kernel, its shared memory, most arguments) is made once: a small graph's call
    is mostly host time (about 50 us on an H100, the kernel a few)."""

    def __init__(self, n, indptr, indices, plan):
        cap, words, self.shared, resident = plan
        self.n, self.kernel = n, _single_block_kernel()
        i32 = np.int32
        self.head = (ptr(None), i32(0), i32(0), i32(0), i32(0))
        self.middle = (i32(cap), i32(methods.INT32_MAX), i32(n))
        self.tail = (indptr, indices, ptr(None), ptr(None), ptr(None), i32(words))
        self.end = (i32(1), i32(resident))

    def __call__(self, source, return_parents, depth_limit):
        cp = _cupy()
        levels = cp.empty(self.n, np.int32)
        parents = cp.empty(self.n, np.int32) if return_parents else None
        self.kernel(
            (1,),
            (SB_THREADS,),
            self.head
            + (np.int32(_limit(depth_limit)),)
            + self.middle
            + (levels, ptr(parents))
            + self.tail
            + (np.int32(source),)
            + self.end,
            shared_mem=self.shared,
        )
        return levels if parents is None else (levels, parents)


def _persistent(A, source, *, return_parents, depth_limit, direction, stats):
    s = _Search(A, source, return_parents)
    f = s.binned(6)  # three rotating level slots and three for the gathers
    policy = _direction.resolve(direction)
    fixed = {"push": 1, "pull": 2}.get(policy, 0) if isinstance(policy, str) else 0
    kernel = _kernel("gbla_bfs_persistent", None if fixed else policy)
    blocks = _launch.cooperative_blocks(kernel, PERSISTENT_THREADS, PERSISTENT_BLOCKS_PER_SM)
    words = (s.n + 31) // 32
    bitmaps = _cupy().empty(3 * words, np.uint32)  # the pull levels' frontiers (bfs.cu)
    kernel(
        (blocks,),
        (PERSISTENT_THREADS,),
        (
            np.int32(s.n),
            np.int32(_limit(depth_limit)),
            s.levels,
            ptr(s.parents),
            s.indptr,
            s.indices,
            s.t_indptr,
            s.t_indices,
            f.bins[0],
            f.bins[1],
            f.slots,
            np.int64(s.nnz),
            np.int32(fixed),
            bitmaps,
            np.int64(words),
        ),
    )
    return s.result()


# ------------------------------------------------------------------ the registry entries
_KERNELS = (
    (
        "vertex_push",
        _levelwise("gbla_bfs_vertex_push"),
        False,
        "a thread per vertex every level; level d-1 labels its unvisited out-neighbours (CSR)",
    ),
    (
        "vertex_pull",
        _levelwise("gbla_bfs_vertex_pull"),
        False,
        "a thread per unvisited vertex scans its in-neighbours (CSC), stopping at the first hit",
    ),
    (
        "edge_centric",
        _levelwise("gbla_bfs_edge_centric"),
        False,
        "a thread per edge (COO): source in level d-1, destination unvisited",
    ),
    (
        "frontier_queue",
        _queue("gbla_bfs_frontier_queue", True),
        False,
        "explicit frontier; atomicCAS claims a vertex, atomicAdd on one global tail appends it",
    ),
    (
        "block_queue",
        _queue("gbla_bfs_block_queue", False),
        False,
        "frontier_queue with a shared-memory queue per block, overflow to the global queue, one "
        "coalesced copy-out per block",
    ),
    (
        "warp_queue",
        _queue("gbla_bfs_warp_queue", False),
        False,
        "hierarchical queues: lane-indexed warp sub-queues, merged into the block queue, then the "
        "global queue, each with its own overflow",
    ),
    (
        "single_block",
        _single_block,
        False,
        "one block runs level after level in one launch while the frontier fits (up to 8192 "
        "vertices, 24576 edges; the visited set a bitmap in shared memory where it fits; levels "
        "of at most 32 edges in one warp), handing over to the load-balanced grid kernel when it "
        "outgrows it",
    ),
    (
        "persistent",
        _persistent,
        True,
        "one cooperative launch runs every level, grid-wide barrier between levels, push/pull "
        "chosen on the device by the DirectionPolicy rule; a push spreads a hub's edges over "
        "the whole grid, a pull reads its frontier as a bitmap",
    ),
    (
        "load_balanced",
        _load_balanced,
        False,
        "frontier binned by out-degree: a thread per small vertex, a warp per medium one, a block "
        "per hub",
    ),
    (
        "direction_optimized",
        _direction_optimized,
        True,
        "load_balanced push and vertex_pull, switched per level by the DirectionPolicy the "
        "algebra uses",
    ),
)


for _name, _run, _directions, _description in _KERNELS:
    methods.register(
        methods.Method(
            _name,
            "bfs",
            _description,
            _run,
            devices=("gpu",),
            directions=_directions,
            max_index=methods.INT32_MAX - 1,
        )
    )
