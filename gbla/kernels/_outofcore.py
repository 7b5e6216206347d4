"""Launchers of outofcore.cu, the device steps of gbla.outofcore's GPU traversals: selecting the
frontier grouped by subgraph (counts and out-degree sums first, then the ids), the smallest
pending distance, and the BFS expansion / SSSP relaxation over one block of edges or a level's
table of blocks, a hub's edges past its first chunk walked by a second launch.

Every launch goes to the current stream; nothing here allocates device memory (the caller's
budget holds every array), and nothing synchronises."""

import numpy as np

from . import _launch
from ._launch import THREADS, grid, ptr, sm_count

__all__ = [
    "Groups",
    "LOOP_WORDS",
    "loop_batch",
    "loop_list",
    "loop_level",
    "loop_kernels",
    "loop_list_pending",
    "loop_round",
    "loop_round_kernels",
    "select",
    "pending_min",
    "expand",
    "expand_level",
    "Chunks",
    "NAME_EXPRESSIONS",
    "DIST_CTYPES",
    "INDEX_CTYPES",
]

DIST_CTYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
INDEX_CTYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
WARP = 32
_CHUNKS = ("false", "true")  # the list's walk, the heavy vertices' queued chunks
_WALKS = ("", "_level")  # one block of edges (a step), a level's table of blocks
TABLE_COLUMNS = 6  # a block: offsets, targets, weights (addresses), base, lo, by_position
CHUNK_WARPS_PER_SM = 32  # the chunks' launch: at most this many warps an SM
# edges: a warp's reads of a vertex's edges start on a multiple of this (a power of two; 32
# 4-byte ids are a 128-byte line, one request over the bus for edges read in place)
ALIGN_EDGES = 32
# A span of levels on the device (loop_level): its control words (outofcore.cu's GBLA_OOC_*),
# then each level's bytes from word LOOP_WORDS on
STOP, WANT, RUN, H2D, COMPACT, HITS, LIMIT, FREE, CAPACITY, BUCKET, TOP, LEAST, ROUNDS = range(13)
FROM, TO, NEXT = range(13, 16)  # BFS's list: the level's (FROM to TO), the next's (to NEXT)
LOOP_WORDS = 16
WALK_WARPS_PER_SM = 64  # a level's walk on the device: a fixed grid, its warps striding


def _name_expressions():
    names = [f"gbla_ooc_select_level<{f}>" for f in ("false", "true")]
    for t in DIST_CTYPES.values():
        names += [f"gbla_ooc_select_pending<{f}, {t}>" for f in ("false", "true")]
        names.append(f"gbla_ooc_pending_min<{t}>")
        names += [
            f"gbla_ooc_relax{w}<{c}, {t}, {i}>"
            for w in _WALKS
            for c in _CHUNKS
            for i in INDEX_CTYPES.values()
        ]
    names += [
        f"gbla_ooc_bfs_expand{w}<{c}, {i}>"
        for w in _WALKS + ("_list",)
        for c in _CHUNKS
        for i in INDEX_CTYPES.values()
    ]
    for t in DIST_CTYPES.values():
        names += [f"gbla_ooc_loop_list_pending<{f}, {t}>" for f in ("false", "true")]
        names += [f"gbla_ooc_loop_pending_min<{t}>", f"gbla_ooc_loop_top<{t}>"]
        names += [
            f"gbla_ooc_relax_list<{c}, {t}, {i}>" for c in _CHUNKS for i in INDEX_CTYPES.values()
        ]
    return tuple(names)


NAME_EXPRESSIONS = _name_expressions()


def _kernel(expression):
    return _launch.function("outofcore.cu", expression, name_expressions=NAME_EXPRESSIONS)


class Groups:
    """The device arrays of a frontier grouped by subgraph: ``bounds`` (parts + 1 row bounds),
    per-subgraph ``count`` and ``value`` (u64, the two rows of ``tally``, which one copy
    brings back), ``offset`` (int64, where each group starts in ``ids``), ``cursor`` (u64),
    ``ids`` (int32, n) and ``table`` (a level's blocks of edges, one row a subgraph, from the
    host's ``rows``)."""

    def __init__(self, cp, bounds, n):
        parts = len(bounds) - 1
        self.parts = parts
        self.bounds = cp.asarray(np.asarray(bounds, np.int64))
        self.tally = cp.zeros((2, parts), np.uint64)
        self.count, self.value = self.tally[0], self.tally[1]  # contiguous rows
        self.offset = cp.zeros(parts + 1, np.int64)
        self.cursor = cp.zeros(parts, np.uint64)
        self.ids = cp.empty(max(n, 1), np.int32)
        self.table = cp.zeros((parts, TABLE_COLUMNS), np.int64)
        import cupyx  # the GPU path only

        # the host's, filled per level, sent on the compute stream: pinned, so the copy is
        # asynchronous; refilled only once that copy is done (sent, :meth:`clear`)
        self.rows = cupyx.zeros_pinned((parts, TABLE_COLUMNS), np.int64)
        self.sent = cp.cuda.Event(disable_timing=True)
        self.sending = False  # whether a copy of the rows may still be reading them

    @staticmethod
    def nbytes(n, parts):
        return 8 * (parts + 1) * 2 + 8 * parts * (3 + TABLE_COLUMNS) + 4 * max(n, 1)

    def put(self, p, offsets, base, targets, weights, lo):
        """Subgraph p's vertices walk ``offsets`` (indexed by u - lo) less ``base`` into
        ``targets`` and ``weights`` (None: weight 1) in the level's launch (:func:`expand_level`),
        after a :meth:`clear` (which waits for the last copy of the rows: they are pinned, and
        the copy reads them after :meth:`send` returns)."""
        self.rows[p] = (_address(offsets), _address(targets), _address(weights), base, lo, 0)

    def send(self):
        """The rows to ``table``, queued on the current stream (it reads them later)."""
        self.table.set(self.rows)
        self.sent.record()
        self.sending = True

    def clear(self):
        """Rows for the next level, none yet: once the last :meth:`send` has read them (a
        level's plan or the device's levels may follow a walk still queued)."""
        if self.sending:
            self.sent.synchronize()  # sync: the pinned rows' last copy
            self.sending = False
        self.rows[:] = 0


def select(groups, degrees, n, *, fill, levels=None, want=None, pending=None, dist=None, top=None):
    """Counts (``fill`` False: ``groups.count`` / ``value`` gain, zero ``tally`` first) or lists
    (``fill`` True: into ``groups.ids`` at ``groups.offset``, ``cursor`` zeroed first) the
    frontier: the vertices whose level is ``want``, or (SSSP) the pending ones whose distance is
    below ``top``, whose pending mark the listing clears."""
    f = "true" if fill else "false"
    tail = _select_tail(groups, degrees, n)
    if levels is not None:
        head, name = (levels, np.int32(want)), f"gbla_ooc_select_level<{f}>"
    else:
        t = DIST_CTYPES[dist.dtype]
        head = (pending, dist, dist.dtype.type(top))
        name = f"gbla_ooc_select_pending<{f}, {t}>"
    _kernel(name)(grid(n), (THREADS,), head + tail)


def _select_tail(groups, degrees, n):
    """The arguments every selection kernel ends with: the n vertices, the subgraphs' bounds,
    the out-degrees and the groups' tally, offsets, cursors and ids."""
    return (
        np.int64(n),
        groups.bounds,
        np.int32(groups.parts),
        degrees,
        groups.count,
        groups.value,
        groups.offset,
        groups.cursor,
        groups.ids,
    )


def _queue(chunks):
    """(chunk, queue, queued) of a walk: the heavy vertices' chunk size and queue, or none."""
    if chunks is not None and chunks.capacity:
        return chunks.chunk, chunks.queue, chunks.queued
    return 0, np.uint64(0), np.uint64(0)


def _chunk_blocks(chunks):
    """The grid of the queued chunks' walk: a warp a chunk, at most CHUNK_WARPS_PER_SM an SM."""
    most = sm_count() * CHUNK_WARPS_PER_SM * WARP // THREADS
    return max(1, min(-(-chunks.capacity * WARP // THREADS), most))


def pending_min(pending, dist, out):
    """out[0] = min(out[0], the smallest distance of a pending vertex); ``out`` a 1-element
    array of dist's dtype."""
    name = f"gbla_ooc_pending_min<{DIST_CTYPES[dist.dtype]}>"
    _kernel(name)(grid(len(dist)), (THREADS,), (pending, dist, np.int64(len(dist)), out))


class Chunks:
    """Where a walk queues its heavy vertices' edges past their first ``chunk`` (int2 pairs,
    ``capacity`` of them, counted by ``queued``): a vertex of d > chunk edges queues
    ceil(d / chunk) - 1."""

    def __init__(self, cp, chunk, capacity):
        self.chunk, self.capacity = int(chunk), int(capacity)
        self.queue = cp.empty((max(self.capacity, 1), 2), np.int32)
        self.queued = cp.zeros(1, np.uint32)

    @staticmethod
    def capacity_of(degrees, chunk):
        """The most chunks one walk can queue: every vertex listed once."""
        if not chunk:
            return 0
        d = np.asarray(degrees, np.int64)
        return int(np.maximum(0, (d - 1) // chunk).sum())

    @staticmethod
    def nbytes(capacity):
        return 8 * max(int(capacity), 1) + 4


def _address(a):
    return 0 if a is None else int(a.data.ptr)


def _walk(name, nverts, rows, chunks, levels, depth, parents, dist, pending):
    """The walk ``name`` (gbla_ooc_bfs_expand or gbla_ooc_relax, + a suffix) over ``nverts``
    list positions, ``rows`` the arguments that say where their edges are, then (``chunks``)
    the heavy vertices' queued chunks."""
    chunk, queue, queued = _queue(chunks)
    if chunk:
        queued.data.memset_async(0, 4)
    if levels is not None:
        tail = (levels, np.int32(depth), ptr(parents))
    else:
        tail = (dist, pending)
    args = rows + (np.int32(chunk), np.int32(ALIGN_EDGES), queue, queued) + tail
    _kernel(name.format("false"))(grid(nverts * WARP), (THREADS,), args)
    if chunk:
        _kernel(name.format("true"))((_chunk_blocks(chunks),), (THREADS,), args)


def _name(suffix, ids, dist):
    idx = INDEX_CTYPES[np.dtype(ids)]
    if dist is None:
        return f"gbla_ooc_bfs_expand{suffix}<{{}}, {idx}>"
    return f"gbla_ooc_relax{suffix}<{{}}, {DIST_CTYPES[dist.dtype]}, {idx}>"


def expand(
    verts,
    offsets,
    base,
    targets,
    lo,
    by_position,
    *,
    chunks=None,
    levels=None,
    depth=None,
    parents=None,
    dist=None,
    weights=None,
    pending=None,
):
    """BFS (``levels``) or SSSP (``dist``) over the out-edges of ``verts`` (int32 device ids):
    vertex i's edges are ``offsets[r] - base`` to ``offsets[r + 1] - base`` of ``targets``
    (and ``weights``), r = i when ``by_position`` else verts[i] - lo. A warp a vertex; with
    ``chunks`` (a :class:`Chunks` whose capacity covers the graph), a vertex's edges past
    the first ``chunks.chunk`` go to a second launch, a warp a chunk."""
    nverts = len(verts)
    if nverts == 0:
        return
    rows = (
        (verts, np.int64(nverts))
        + tuple(
            np.int64(x) for x in (_address(offsets), base, _address(targets), _address(weights), lo)
        )
        + (np.int32(by_position),)
    )
    _walk(
        _name("", targets.dtype, dist), nverts, rows, chunks, levels, depth, parents, dist, pending
    )


def expand_level(
    groups,
    total,
    targets_dtype,
    *,
    chunks=None,
    levels=None,
    depth=None,
    parents=None,
    dist=None,
    pending=None,
):
    """:func:`expand` over every subgraph :meth:`Groups.put` gave a block this level, in one
    launch: the first ``total`` ids of ``groups``, each subgraph's in its row of
    ``groups.rows`` (sent first; a subgraph without a row is skipped)."""
    if total == 0:
        return
    groups.send()
    rows = (groups.ids, np.int64(total), groups.table, groups.offset, np.int32(groups.parts))
    _walk(
        _name("_level", targets_dtype, dist),
        total,
        rows,
        chunks,
        levels,
        depth,
        parents,
        dist,
        pending,
    )


def loop_batch(loop):
    """Enqueue the start of a batch of device levels: no level run in it yet (loop[RUN])."""
    _kernel("gbla_ooc_loop_batch")((1,), (1,), (loop,))


def loop_list(groups, n, loop, levels):
    """Enqueue a span's first list of BFS levels on the device: the vertices at level
    loop[WANT], into ``groups.ids`` from loop[NEXT] (zero)."""
    _kernel("gbla_ooc_loop_list_level")(
        grid(n), (THREADS,), (levels, loop, np.int64(n), groups.ids)
    )


def loop_level(groups, degrees, n, loop, facts, plan, targets_dtype, *, levels, parents, chunks):
    """Enqueue one BFS level on the device (outofcore.cu's levels on the device): the tally
    zeroed and the level's list (in ``groups.ids``, :func:`loop_list` its first) counted by
    subgraph, the decision (``facts``: the subgraphs' sizes, edges and resident flags;
    ``plan``: (whole_ratio, edge bytes, index bytes), the scheduler's), and the list's walk
    over ``groups.table`` with depth loop[WANT] and a fixed grid, which appends the next
    level's list. Nothing runs once loop[STOP] is set. ``n`` as :func:`loop_round`'s (a
    level passes over no vertex but its list's)."""
    idx = INDEX_CTYPES[np.dtype(targets_dtype)]
    _count_and_walk(
        groups,
        degrees,
        loop,
        facts,
        plan,
        chunks,
        lists=1,
        own=groups.ids,
        rounds=(0, 0),
        walk=[f"gbla_ooc_bfs_expand_list<{c}, {idx}>" for c in _CHUNKS],
        list_args=(groups.ids,),
        tail=(levels, ptr(parents)),
    )


def loop_kernels(targets_dtype, chunks):
    """Load every kernel :func:`loop_batch` and :func:`loop_level` launch (before a capture)."""
    idx = INDEX_CTYPES[np.dtype(targets_dtype)]
    _load_loop([f"gbla_ooc_bfs_expand_list<{c}, {idx}>" for c in _CHUNKS], chunks)


def _load_loop(walk, chunks, more=()):
    """Load a level's (a round's) kernels: :func:`loop_batch`'s and :func:`_count_and_walk`'s,
    ``walk``'s chunk kernel where heavy vertices are chunked, and ``more``."""
    names = ["gbla_ooc_loop_batch", "gbla_ooc_loop_begin", "gbla_ooc_loop_count_list"]
    names += ["gbla_ooc_loop_decide", walk[0], *more]
    if _queue(chunks)[0]:
        names.append(walk[1])
    for name in names:
        _kernel(name)


def loop_list_pending(n, loop, dist, pending, out):
    """Enqueue a span's first list of SSSP rounds on the device: the pending vertices below
    loop[TOP] into ``out`` from loop[NEXT] (zero), marked 2 (outofcore.cu's lists)."""
    t = DIST_CTYPES[dist.dtype]
    _kernel(f"gbla_ooc_loop_list_pending<true, {t}>")(
        grid(n), (THREADS,), (loop, pending, dist, np.int64(n), out)
    )


def loop_round(
    groups, degrees, n, loop, facts, plan, targets_dtype, *, lists, dist, pending, delta, chunks
):
    """Enqueue one SSSP round on the device, as :func:`loop_level` a BFS level: the round's
    list (``lists``: (its own, the next round's); :func:`loop_list_pending` the first)
    counted, the decision (an empty list moves a delta-stepping bucket on, ends Bellman-Ford;
    a Bellman-Ford round past the n-th stops with 3), the list relaxed, each vertex lowered
    below loop[TOP] listed for the next round, then, where the bucket moves on, the smallest
    pending distance, the next bucket's end (``delta``: the width, None for Bellman-Ford) and
    the next round's list. ``pending``'s length a multiple of 4 (its marks change by a
    compare-and-swap on a 4-byte word)."""
    t, idx = DIST_CTYPES[dist.dtype], INDEX_CTYPES[np.dtype(targets_dtype)]
    own, other = lists
    _count_and_walk(
        groups,
        degrees,
        loop,
        facts,
        plan,
        chunks,
        lists=2,
        own=own,
        rounds=(2 if delta is None else 1, n),
        walk=[f"gbla_ooc_relax_list<{c}, {t}, {idx}>" for c in _CHUNKS],
        list_args=(own, other),
        tail=(dist, pending),
    )
    if delta is not None:
        _kernel(f"gbla_ooc_loop_pending_min<{t}>")(
            grid(n), (THREADS,), (loop, pending, dist, np.int64(n))
        )
        _kernel(f"gbla_ooc_loop_top<{t}>")((1,), (1,), (loop, np.float64(delta)))
        _kernel(f"gbla_ooc_loop_list_pending<false, {t}>")(
            grid(n), (THREADS,), (loop, pending, dist, np.int64(n), other)
        )


def _count_and_walk(
    groups, degrees, loop, facts, plan, chunks, *, lists, own, rounds, walk, list_args, tail
):
    """A level (a round) on the device up to its walk's end: the tally zeroed and the list
    moved on (``lists``: 1 BFS's one list, 2 SSSP's two), the list ``own`` counted by
    subgraph, the decision (outofcore.cu's gbla_ooc_loop_decide, one warp; ``plan``: the
    scheduler's (whole_ratio, edge bytes, index bytes); ``rounds``: (0 BFS, 1 delta-stepping,
    2 Bellman-Ford; n)), and the walk with a fixed grid, then the heavy vertices' chunks
    (``walk``: the two kernels, their arguments the loop, ``list_args``, the rows and the
    queue, then ``tail``)."""
    parts = np.int32(groups.parts)
    chunk, queue, queued = _queue(chunks)
    _kernel("gbla_ooc_loop_begin")(
        (1,), (THREADS,), (loop, groups.tally, groups.cursor, parts, queued, np.int32(lists))
    )
    blocks = sm_count() * WALK_WARPS_PER_SM * WARP // THREADS
    count = (loop, own, groups.bounds, parts, degrees, groups.count, groups.value)
    _kernel("gbla_ooc_loop_count_list")((blocks,), (THREADS,), count)
    whole_ratio, edge_bytes, index_bytes = plan
    decide = (loop, groups.tally, groups.offset, parts, facts, np.float64(whole_ratio))
    decide += (np.int64(edge_bytes), np.int64(index_bytes), np.int32(rounds[0]))
    _kernel("gbla_ooc_loop_decide")((1,), (32,), decide + (np.int64(rounds[1]),))
    args = (loop,) + list_args + (groups.bounds, groups.table, parts, np.int32(chunk))
    args += (np.int32(ALIGN_EDGES), queue, queued) + tail
    _kernel(walk[0])((blocks,), (THREADS,), args)
    if chunk:
        _kernel(walk[1])((_chunk_blocks(chunks),), (THREADS,), args)


def loop_round_kernels(targets_dtype, dist_dtype, chunks):
    """Load every kernel :func:`loop_round` launches (before a capture)."""
    idx, t = INDEX_CTYPES[np.dtype(targets_dtype)], DIST_CTYPES[np.dtype(dist_dtype)]
    more = (f"gbla_ooc_loop_pending_min<{t}>", f"gbla_ooc_loop_top<{t}>")
    more += (f"gbla_ooc_loop_list_pending<false, {t}>",)
    _load_loop([f"gbla_ooc_relax_list<{c}, {t}, {idx}>" for c in _CHUNKS], chunks, more)
