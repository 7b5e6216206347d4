"""Drivers of the hand-written SSSP kernels of sssp.cu, registered as drop-in methods of
gbla.sssp.

Each driver takes what the algebraic methods take (A already checked by gbla.sssp: no NaN or
-inf weight, +inf edges dropped, an unweighted graph as its pattern; ``dtype`` the distances'
floating dtype) and returns the same arrays: distances of ``dtype`` (inf = unreached) and, when
asked, int32 predecessors (pred[source] == source, -1 = unreached), a breadth-first tree over
the tight edges (d[u] + w(u, v) == d[v], summed in ``dtype`` as the kernels sum), so a
zero-weight cycle never makes a cycle of predecessors. The Bellman-Ford kernels take negative
weights (a distance still falling in round n raises NegativeCycleError); near_far and
persistent_delta_stepping, bucketed, do not (gbla.sssp refuses a negative weight for them).

The article's ablation of edge_bellman_ford is four registered methods: ``edge_bellman_ford``
(read-only path and cache-blocked edge order), ``edge_bellman_ford_no_reorder``,
``edge_bellman_ford_no_ldg`` and ``edge_bellman_ford_plain`` (neither), each relaxing every
edge every round as the article does (but ``edge_bellman_ford`` on a large graph, whose light
rounds push from their few vertices: the hybrid); ``edge_bellman_ford_fallen`` relaxes an edge
only from an endpoint whose distance fell in the last round (a frontier Bellman-Ford's work,
slower).
"""

import collections
from typing import NamedTuple

import numpy as np

from .. import _backend as B
from .. import _validation as V
from .. import methods
from .._backend import _cupy, compress
from . import _launch
from ._bfs import (
    PERSISTENT_BLOCKS_PER_SM,
    PERSISTENT_THREADS,
    bfs_tree,
    opt_in_shared,
    shared_budget,
)
from ._frontier import EDGES, BinnedFrontier, _define, int32_csr, int32_rows
from ._launch import THREADS, grid, ptr

__all__ = ["segment_order", "name_expressions", "COOPERATIVE", "CTYPES"]

CTYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
WARP = 32
# single_block_bellman_ford: one block of SB_THREADS; a graph of more than SB_EDGES edges (a
# round of so many is faster on the whole grid), or whose distances and stamps (12 bytes a
# vertex in float64) do not fit the block's shared memory, runs persistent_bellman_ford instead
SB_THREADS, SB_EDGES = 1024, 1 << 17


COOPERATIVE = ("gbla_sssp_persistent", "gbla_sssp_delta")  # each a module of its own


def name_expressions(ctype):
    """The kernels of sssp.cu instantiated for distances of C type ``ctype``, but the
    cooperative ones: one module."""
    return (
        f"gbla_sssp_edge<{ctype}, true>",
        f"gbla_sssp_edge<{ctype}, false>",
        f"gbla_sssp_hybrid_light<{ctype}>",
        "gbla_sssp_hybrid_gather",
        f"gbla_sssp_frontier_expand<{ctype}>",
        f"gbla_sssp_init<{ctype}>",
        f"gbla_sssp_near_expand<{ctype}>",
        f"gbla_sssp_far_min<{ctype}>",
        f"gbla_sssp_far_split<{ctype}>",
        f"gbla_sssp_single_block<{ctype}>",
        f"gbla_sssp_async<{ctype}>",
        f"gbla_sssp_async_init<{ctype}>",
        "gbla_sssp_async_rings",
    )


def _kernel(name, dtype, *template):
    """``name<dtype, template...>`` of sssp.cu on the current device."""
    t = CTYPES[np.dtype(dtype)]
    args = ", ".join([t] + [str(x).lower() for x in template])
    return _launch.function("sssp.cu", f"{name}<{args}>", name_expressions=name_expressions(t))


def _cooperative_kernel(name, dtype):
    """``name<dtype>``, a cooperative kernel: a module of its own (compiled for cooperative
    launch)."""
    t = CTYPES[np.dtype(dtype)]
    return _launch.function(
        "sssp.cu", f"{name}<{t}>", name_expressions=(f"{name}<{t}>",), cooperative=True
    )


def _weights(A, dtype):
    """A's weights as ``dtype`` in CSR order (None for an iso pattern: every edge weighs 1),
    converted once and cached."""
    if A.is_iso:
        return None
    if A._values.dtype == dtype:
        return A._values
    key = ("sssp_weights", np.dtype(dtype).name)
    if key not in A._cache:
        A._cache[key] = A._values.astype(dtype)
    return A._cache[key]


# ------------------------------------------------------------------ predecessors
def _climbing(A, dist):
    """Whether A's weights climb over the distances ``dist`` (``WeightFacts.climbs``)."""
    if A.weights.lowest <= 0:  # no reduction then
        return False
    cp = _cupy()
    farthest = float(cp.where(cp.isfinite(dist), dist, 0).max())  # sync: the farthest
    return A.weights.climbs(farthest, dist.dtype)


def _predecessors(A, source, dist, w):
    """A breadth-first tree over the tight edges of A from ``source``: pred[v] is an in-neighbour
    u with dist[u] + w(u, v) == dist[v] in the distances' dtype."""
    cp = _cupy()
    indptr, indices = int32_csr(A)
    rows = int32_rows(A)
    du = dist[rows]
    weight = cp.ones(1, dist.dtype) if w is None else w
    tight = cp.isfinite(du) & (du + weight == dist[indices])
    if _climbing(A, dist):
        # Every tight edge climbs, so they form no cycle, and every reached vertex but the
        # source has one in: any of them is a shortest-path tree's edge (no search level by
        # level, each with a read back).
        pred = cp.full(A.nrows, -1, np.int32)
        pred[indices[tight]] = rows[tight]
        pred[source] = source
        return pred
    counts = cp.bincount(rows[tight], minlength=A.nrows)
    tight_indptr = cp.zeros(A.nrows + 1, np.int32)
    tight_indptr[1:] = cp.cumsum(counts)
    return bfs_tree(tight_indptr, indices[tight], source)


def _out_degree(indptr, v):
    """v's out-degree (the first frontier's edges, which the kernels' slots do not count)."""
    ends = indptr[v : v + 2].get()  # sync: two offsets
    return int(ends[1] - ends[0])


def _result(A, source, dist, w, return_predecessors):
    if return_predecessors:
        return dist, _predecessors(A, source, dist, w)
    return dist


# ------------------------------------------------------------------ 1. edge_bellman_ford
def segment_order(src, dst, segment, n=None):
    """The permutation that orders edges by (segment of dst, segment of src, src): a stretch of
    edges then reads distances from one segment and writes them in one, each ``segment``
    vertices long (sized so that two segments' distances fit in L2). ``n``: a bound on the
    vertex ids (found from the ids where None)."""
    xp = B.xp_of(B.array_device(src))  # NumPy too, which the CPU tests use
    if len(src) == 0:
        return xp.zeros(0, np.int64)
    if n is None:
        n = max(int(src.max()), int(dst.max())) + 1  # sync: two maxima
    n_seg = (int(n) - 1) // segment + 1
    src, dst = src.astype(np.int64), dst.astype(np.int64)
    key = (dst // segment * n_seg + src // segment) << 32
    return xp.argsort(key | src, kind="stable")


def _segment(dtype):
    """Vertices a segment holds: two segments' distances in half the L2 cache."""
    l2 = _cupy().cuda.Device().attributes["L2CacheSize"]
    return max(1024, l2 // 4 // np.dtype(dtype).itemsize)


def _edges(A, dtype, reorder):
    """(src, dst, weights, both) of A's edges as the edge kernel reads them, cached on A: a
    symmetric matrix keeps each undirected edge once (src <= dst) and relaxes it both ways;
    ``reorder`` orders them by :func:`segment_order`."""
    key = ("sssp_edges", np.dtype(dtype).name, reorder)
    if key in A._cache:
        return A._cache[key]
    w = _weights(A, dtype)
    src, dst = int32_rows(A), int32_csr(A)[1]
    both = A.is_symmetric
    if both:
        keep = src <= dst
        src, dst, w = compress(keep, src, dst, w)
    segment = _segment(dtype) if reorder else 0
    # in one segment the order is CSR's (src ascending): nothing to sort (NE and smaller, in
    # float64 on an H100; the sort cost a first call 80 ms, most of it CuPy loading it)
    if reorder and len(src) and A.nrows > segment:
        order = segment_order(src, dst, segment, A.nrows)
        src, dst = src[order], dst[order]
        w = None if w is None else w[order]
    A._cache[key] = (src, dst, w, both)
    return A._cache[key]


# edge_bellman_ford's hybrid: on a graph of at least HYBRID_EDGES stored edges, a round whose
# vertices to relax from have at most 1/HYBRID_LIGHT of the stored edges pushes from them alone
# (gbla_sssp_hybrid_light) instead of streaming every edge. R-MAT's rounds are light at both
# ends: on rmat(20) from a random vertex the frontier holds 0.0%, 0.0%, 24%, 98%, 93%, 77%,
# 47%, 17%, 3.2%, 0.4% ... of the edges. The device decides each round (sssp.cu); the host only
# launches, three kernels a round, which costs more than a streamed round below HYBRID_EDGES
# (ego-Twitter, 2.7 M stored edges: 1.83 ms against 0.80 streamed, on an H200). One H100,
# weights 1..255, 8 sources (benchmarks/results/ab/sssp_edge_bellman_ford_hybrid.log): rmat(22)
# 12.4 ms streamed, 9.46 with the hybrid's light rounds decided on the host, 7.31 on the
# device; rmat(20) 3.42, 4.28, 2.51. A quarter of the edges for a light round relaxes the
# fewest edges (3.3 an edge on rmat(22), 4.05 at 1/8 and 1/16) and is as fast or faster; an
# item's size and its threads (256 and 32, 128 and 16, 64 and 8, 32 and 4) differ by under 2%.
HYBRID_EDGES = 1 << 24
HYBRID_LIGHT = 4
# a light round's item: at most HYBRID_CHUNK edges of one vertex, relaxed by HYBRID_GROUP threads
HYBRID_CHUNK, HYBRID_GROUP = 128, 16


def _edge_bellman_ford(ldg, reorder, active=False, hybrid=False):
    def run(A, source, *, dtype, return_predecessors, direction, stats):
        cp = _cupy()
        n = A.nrows
        edges = _edges(A, dtype, reorder)
        m, both = len(edges[0]), edges[3]
        dist = cp.full(n, np.inf, dtype)
        dist[source] = 0
        kernel = _kernel("gbla_sssp_edge", dtype, ldg)
        stored = m * (2 if both else 1)
        if hybrid and stored >= HYBRID_EDGES:
            rounds, relaxed = _hybrid_rounds(A, source, dtype, kernel, edges, dist)
            stats.update(iterations=rounds, edges_relaxed=relaxed)
            return _result(A, source, dist, _weights(A, dtype), return_predecessors)
        modified = cp.zeros(1, np.int32)
        # with `active`, round r relaxes from the vertices that fell in round r - 1 (marks[(r -
        # 1) & 1], the source's mark for round 1) and marks those it lowers in marks[r & 1];
        # the marks it read are cleared behind it, for round r + 1 to write
        marks = cp.zeros((2, max(n, 1)), np.uint8) if active else None
        counts = cp.zeros(2, np.uint64) if active else None
        if active:
            marks[0, source] = 1

        def launch(round_):
            fell, falls = (marks[(round_ - 1) & 1], marks[round_ & 1]) if active else (None, None)
            _edge_round(kernel, edges, dist, round_, modified, fell, falls, counts)
            if active:
                fell.fill(0)

        rounds = _pipelined_rounds(launch, modified, n) if m else 0
        if active:  # what the rounds relaxed, counted by the kernel
            stats.update(iterations=rounds, edges_relaxed=int(counts.get()[0]))
        else:  # a round relaxes every stored edge (an undirected one kept once, both ways)
            stats.update(iterations=rounds, edges_relaxed=rounds * stored)
        return _result(A, source, dist, _weights(A, dtype), return_predecessors)

    return run


def _edge_round(kernel, edges, dist, round_, modified, fell, falls, counts, gate=None, light=0):
    """Launches round ``round_`` of gbla_sssp_edge over ``edges`` (src, dst, weights, both, as
    :func:`_edges` gives them); ``fell``, ``falls``, ``counts`` and ``gate`` as the kernel takes
    them (None: not used)."""
    src, dst, w, both = edges
    kernel(
        grid(len(src)),
        (THREADS,),
        (
            np.int64(len(src)),
            src,
            dst,
            ptr(w),
            np.int32(both),
            dist,
            dist,
            np.int32(round_),
            modified,
            ptr(fell),
            ptr(falls),
            ptr(counts),
            ptr(gate),
            np.int64(light),
        ),
    )


def _hybrid_rounds(A, source, dtype, kernel, edges, dist):
    """Rounds of Bellman-Ford from ``source`` into ``dist``, each light (a push along the
    out-edges of the vertices lowered since they last relaxed, gbla_sssp_hybrid_light over A's
    CSR) or streamed (every edge, the edge kernel), chosen on the device: light while those
    out-edges are at most 1/HYBRID_LIGHT of the stored edges. A round is three launches
    (sssp.cu, "edge_bellman_ford's hybrid"), pipelined as :func:`_pipelined_rounds` runs
    them: the host reads nothing but the word that says a round found work. Returns (rounds,
    relaxations). Any order of relaxations is Bellman-Ford's; a vertex lowered in a streamed
    round after its out-edges went by is marked, so the round after relaxes from it."""
    cp = _cupy()
    n = A.nrows
    indptr, indices = int32_csr(A)
    weights = _weights(A, dtype)
    stored = A.nvals
    light = stored // HYBRID_LIGHT
    marks = cp.zeros(n, np.uint8)
    marks[source] = 1
    # each marked vertex lists ceil(degree / CHUNK) items
    items = cp.empty(n + stored // HYBRID_CHUNK + 1, np.uint64)
    slots = cp.zeros((2, 2), np.uint64)
    counts = cp.zeros(2, np.uint64)
    modified = cp.zeros(1, np.int32)
    gather = _launch.function(
        "sssp.cu", "gbla_sssp_hybrid_gather", name_expressions=name_expressions(CTYPES[dtype])
    )
    push = _kernel("gbla_sssp_hybrid_light", dtype)
    wide = grid(1 << 62)  # as many blocks as the kernels keep resident
    chunk, group = np.int64(HYBRID_CHUNK), np.int32(HYBRID_GROUP)
    pair = (slots[0], slots[1])

    def launch(round_):
        slot, after = pair[round_ & 1], pair[(round_ + 1) & 1]
        gather(
            grid(n),
            (THREADS,),
            (np.int32(n), marks, indptr, chunk, items, slot, np.int32(round_), modified),
        )
        push(
            wide,
            (THREADS,),
            (
                items,
                slot,
                after,
                np.int64(light),
                chunk,
                group,
                indptr,
                indices,
                ptr(weights),
                dist,
                marks,
                counts,
            ),
        )
        _edge_round(kernel, edges, dist, round_, modified, None, marks, counts, slot, light)

    # round r finds work when it lists an item; the round after the last finds none
    return _pipelined_rounds(launch, modified, n + 1) - 1, int(counts.get()[0])


# _pipelined_rounds: the host reads the rounds' word once every ROUNDS_A_TEST rounds and keeps
# TESTS_AHEAD tests in flight; rounds launched past the last that lowers return at once on the
# device. One H100, 8 sources, median ms (benchmarks/results/ab/sssp_edge_rounds_ahead.log).
ROUNDS_A_TEST, TESTS_AHEAD = 4, 2


def _pipelined_rounds(launch, modified, budget):
    """Runs ``launch(r)`` for rounds r = 1, 2, ... until one finds nothing to do (the kernels
    write r into ``modified`` when round r lowered a distance or found work; a round launched
    after one that found nothing returns at once on the device); returns the rounds that ran,
    the last of them the one that found nothing. The host never waits for a round: it
    launches ROUNDS_A_TEST rounds, then an asynchronous copy of the word to pinned memory, and
    keeps TESTS_AHEAD such groups in flight, reading the oldest group's word while the others
    run (a read after each round cost ego-Twitter's 21 rounds about 10 us each; a test after
    each round, issued from Python, kept the road networks' rounds of about 25 us waiting on
    the host). At most ``budget`` rounds: a change in the last proves a negative cycle."""
    cp = _cupy()
    stream = cp.cuda.get_current_stream()
    slots = TESTS_AHEAD + 1
    pinned = cp.cuda.alloc_pinned_memory(4 * slots)
    seen = np.frombuffer(pinned, np.int32, slots)
    events = [cp.cuda.Event(block=False, disable_timing=True) for _ in range(slots)]
    copy, d2h = cp.cuda.runtime.memcpyAsync, cp.cuda.runtime.memcpyDeviceToHost
    tests = collections.deque()  # (slot, the group's last round), oldest first
    issued = 0

    def group():
        nonlocal issued
        last = min(issued + ROUNDS_A_TEST, budget)
        while issued < last:
            issued += 1
            launch(issued)
        slot = (tests[-1][0] + 1) % slots if tests else 0
        copy(pinned.ptr + 4 * slot, modified.data.ptr, 4, d2h, stream.ptr)
        events[slot].record(stream)
        tests.append((slot, last))

    while True:
        while issued < budget and len(tests) < TESTS_AHEAD:
            group()
        slot, last = tests.popleft()
        events[slot].synchronize()  # sync: the word after round `last` (later rounds run)
        lowered = int(seen[slot])  # the last round that lowered a distance or found work
        if lowered != last:
            return lowered + 1
        if last == budget:
            raise V.negative_cycle(budget)


# ------------------------------------------------------------------ 2. frontier_bellman_ford
class _Frontier:
    """The arrays of a frontier search: distances, stamps, the binned frontier holding the
    source (slot 0 describes it)."""

    def __init__(self, A, source, dtype, n_slots=3):
        cp = _cupy()
        self.n = A.nrows
        self.indptr, self.indices = int32_csr(A)
        self.w = _weights(A, dtype)
        self.dist = cp.full(self.n, np.inf, dtype)
        self.stamp = cp.zeros(self.n, np.int32)  # rounds count from 1: 0 is "never queued"
        self.f = BinnedFrontier(self.n, n_slots)
        _kernel("gbla_sssp_init", dtype)(
            (1,), (1,), (np.int32(source), self.dist, self.f.bins[0], self.indptr, self.f.slots[0])
        )


def _frontier_bellman_ford(A, source, *, dtype, return_predecessors, direction, stats):
    s = _Frontier(A, source, dtype)
    f, n = s.f, s.n
    expand = _kernel("gbla_sssp_frontier_expand", dtype)
    rounds, relaxed = 0, _out_degree(s.indptr, source)
    while f.size:
        rounds += 1
        if rounds > n:
            raise V.negative_cycle(n)
        q, out = f.current
        slot, clear = f.next_slot()
        for view, count, group in zip(f.bin_views(q), f.counts, (1, WARP, THREADS)):
            if count:
                expand(
                    grid(count * group),
                    (THREADS,),
                    (
                        view,
                        np.int32(count),
                        np.int32(group),
                        np.int32(rounds),
                        np.int32(n),
                        s.dist,
                        s.stamp,
                        s.indptr,
                        s.indices,
                        ptr(s.w),
                        out,
                        slot,
                        clear,
                    ),
                )
        relaxed += int(f.read()[EDGES])  # sync: the next frontier's size and edges
    stats.update(iterations=rounds, edges_relaxed=relaxed)
    return _result(A, source, s.dist, s.w, return_predecessors)


# ------------------------------------------------------------------ 3. persistent_bellman_ford
def _persistent_bellman_ford(A, source, *, dtype, return_predecessors, direction, stats):
    cp = _cupy()
    s = _Frontier(A, source, dtype)
    kernel = _cooperative_kernel("gbla_sssp_persistent", dtype)
    blocks = _launch.cooperative_blocks(kernel, PERSISTENT_THREADS, PERSISTENT_BLOCKS_PER_SM)
    result = cp.zeros(3, np.int64)
    kernel(
        (blocks,),
        (PERSISTENT_THREADS,),
        (
            np.int32(s.n),
            s.dist,
            s.stamp,
            s.indptr,
            s.indices,
            ptr(s.w),
            s.f.bins[0],
            s.f.bins[1],
            s.f.slots,
            result,
        ),
    )
    rounds, bounded, relaxed = (int(x) for x in result.get())  # sync: the rounds run
    if bounded:
        raise V.negative_cycle(s.n)
    stats.update(iterations=rounds, edges_relaxed=relaxed)
    return _result(A, source, s.dist, s.w, return_predecessors)


# ------------------------------------------------------------------ 4. single_block_bellman_ford
def single_block_plan(n, edges, dtype):
    """(queues_shared, shared bytes) of the single-block Bellman-Ford on n vertices and
    ``edges`` edges: the distances and stamps in shared memory, the frontier queues there too
    where they fit; None where the distances and stamps do not fit, or past SB_EDGES edges."""
    budget = shared_budget(_launch.device_id())
    used = n * (np.dtype(dtype).itemsize + 4)
    if edges > SB_EDGES or used > budget:
        return None
    if used + 8 * n <= budget:
        return 1, used + 8 * n
    return 0, used


def _lanes(A, indptr):
    """log2 of the lanes the single block gives a frontier vertex: the power of two at or above
    A's largest out-degree, at most a warp (found once and cached)."""
    if "sssp_lanes" not in A._cache:
        top = int((indptr[1:] - indptr[:-1]).max()) if A.nrows else 0  # sync, once
        A._cache["sssp_lanes"] = min(5, max(0, top - 1).bit_length())
    return A._cache["sssp_lanes"]


def _single_block_bellman_ford(A, source, *, dtype, return_predecessors, direction, stats):
    n = A.nrows
    indptr, indices = int32_csr(A)
    plan = single_block_plan(n, len(indices), dtype)
    if plan is None:
        return _persistent_bellman_ford(
            A,
            source,
            dtype=dtype,
            direction=direction,
            return_predecessors=return_predecessors,
            stats=stats,
        )
    cp = _cupy()
    w = _weights(A, dtype)
    dist = cp.empty(n, dtype)
    result = cp.empty(3, np.int64)
    queues_shared, shared = plan
    queues = None if queues_shared else cp.empty(2 * n, np.int32)
    opt_in_shared(_kernel("gbla_sssp_single_block", dtype))(
        (1,),
        (SB_THREADS,),
        (
            np.int32(n),
            np.int32(source),
            np.int32(_lanes(A, indptr)),
            np.int32(queues_shared),
            dist,
            ptr(queues),
            indptr,
            indices,
            ptr(w),
            result,
        ),
        shared_mem=shared,
    )
    rounds, bounded, relaxed = (int(x) for x in result.get())  # sync: the rounds run
    if bounded:
        raise V.negative_cycle(n)
    stats.update(iterations=rounds, edges_relaxed=relaxed)
    return _result(A, source, dist, w, return_predecessors)


# ------------------------------------------------------------------ 5. near_far
def _near_far(A, source, *, dtype, return_predecessors, direction, stats, delta):
    cp = _cupy()
    s = _Frontier(A, source, dtype)
    f, n, T = s.f, s.n, np.dtype(dtype).type
    far_flag = cp.zeros(n, np.int32)
    piles = [cp.empty(max(n, 1), np.int32) for _ in range(2)]
    counts = cp.zeros(2, np.uint64)  # the two piles' sizes
    smallest = cp.empty(1, dtype)
    near_expand = _kernel("gbla_sssp_near_expand", dtype)
    far_min, far_split = _kernel("gbla_sssp_far_min", dtype), _kernel("gbla_sssp_far_split", dtype)
    split = T(delta)
    rounds = phases = 0
    relaxed = _out_degree(s.indptr, source)
    pile = 0  # the pile the near rounds append to
    while True:
        while f.size:
            rounds += 1
            q, out = f.current
            slot, clear = f.next_slot()
            for view, count, group in zip(f.bin_views(q), f.counts, (1, WARP, THREADS)):
                if count:
                    near_expand(
                        grid(count * group),
                        (THREADS,),
                        (
                            view,
                            np.int32(count),
                            np.int32(group),
                            np.int32(rounds),
                            np.int32(n),
                            s.dist,
                            s.stamp,
                            far_flag,
                            s.indptr,
                            s.indices,
                            ptr(s.w),
                            split,
                            out,
                            slot,
                            clear,
                            piles[pile],
                            counts[pile : pile + 1],
                        ),
                    )
            relaxed += int(f.read()[EDGES])  # sync: the next near frontier's size and edges
        size = int(counts[pile].get())  # sync: the far pile's size
        if size == 0:
            break
        phases += 1
        smallest.fill(np.inf)
        far_min(grid(size), (THREADS,), (piles[pile], np.int64(size), s.dist, split, smallest))
        m = T(smallest.get()[0])  # sync: where the next phase starts
        if not m < T(np.inf):  # only stale entries (or sums that overflowed): nothing left
            break
        # the new split holds m, whatever the rounding of m / delta
        hi = T(max(T(np.floor(m / T(delta)) + 1) * T(delta), split + T(delta)))
        hi = max(hi, np.nextafter(m, T(np.inf)))
        other = 1 - pile
        counts[other] = 0
        slot, clear = f.next_slot()
        clear.fill(0)
        slot.fill(0)
        far_split(
            grid(size),
            (THREADS,),
            (
                piles[pile],
                np.int64(size),
                s.dist,
                split,
                hi,
                far_flag,
                np.int32(n),
                s.indptr,
                f.bins[0],
                slot,
                piles[other],
                counts[other : other + 1],
            ),
        )
        # the near frontier is in bins[0], where the rounds read it
        relaxed += int(f.read(swap=False)[EDGES])
        pile, split = other, hi
    stats.update(iterations=rounds, phases=phases, edges_relaxed=relaxed)
    return _result(A, source, s.dist, s.w, return_predecessors)


# ------------------------------------------------------------------ 6. persistent_delta_stepping
def _split(A, dtype, delta):
    """A's edges split once into a light (w <= delta) and a heavy CSR, each (indptr, indices,
    weights or None), int32 ids; the last split is cached on A (one delta at a time)."""
    key = (np.dtype(dtype).name, float(delta))
    cached = A._cache.get("sssp_split")
    if cached is not None and cached[0] == key:
        return cached[1]
    cp = _cupy()
    n = A.nrows
    indptr, indices = int32_csr(A)
    w = _weights(A, dtype)
    if w is None:  # every edge weighs 1: all light or all heavy
        light = cp.full(len(indices), 1 <= delta, bool)
    else:
        light = w <= delta
    rows = int32_rows(A)

    def part(keep):
        sub_indptr = cp.zeros(n + 1, np.int32)
        sub_indptr[1:] = cp.cumsum(cp.bincount(rows[keep], minlength=n))
        return (sub_indptr,) + compress(keep, indices, w)

    split = part(light), part(~light)
    A._cache["sssp_split"] = (key, split)
    return split


def _persistent_delta_stepping(A, source, *, dtype, return_predecessors, direction, stats, delta):
    cp = _cupy()
    n, T = A.nrows, np.dtype(dtype).type
    (l_indptr, l_indices, l_w), (h_indptr, h_indices, h_w) = _split(A, dtype, T(delta))
    width = T(delta) if T(delta) > 0 else np.nextafter(T(0), T(np.inf))  # a float32 underflow
    dist = cp.full(n, np.inf, dtype)
    stamp, r_stamp, far_flag = cp.zeros((3, n), np.int32)
    f = BinnedFrontier(n, 3)  # the frontier of light rounds
    r = BinnedFrontier(n, 2)  # R, the vertices a bucket settled, binned by heavy out-degree
    piles = cp.empty((2, max(n, 1)), np.int32)
    pile_counts = cp.zeros(2, np.uint64)
    smallest = cp.full(2, np.inf, dtype)
    result = cp.zeros(4, np.int64)
    _kernel("gbla_sssp_init", dtype)(
        (1,), (1,), (np.int32(source), dist, f.bins[0], l_indptr, f.slots[0])
    )
    kernel = _cooperative_kernel("gbla_sssp_delta", dtype)
    blocks = _launch.cooperative_blocks(kernel, PERSISTENT_THREADS, PERSISTENT_BLOCKS_PER_SM)
    kernel(
        (blocks,),
        (PERSISTENT_THREADS,),
        (
            np.int32(n),
            width,
            dist,
            stamp,
            r_stamp,
            far_flag,
            l_indptr,
            l_indices,
            ptr(l_w),
            h_indptr,
            h_indices,
            ptr(h_w),
            np.int32(len(h_indices) > 0),
            f.bins[0],
            f.bins[1],
            f.slots,
            r.bins[0],
            r.bins[1],
            r.slots,
            piles[0],
            piles[1],
            pile_counts,
            smallest,
            result,
        ),
    )
    light_rounds, passes, buckets, relaxed = (int(x) for x in result.get())  # sync: the counts
    stats.update(iterations=light_rounds + passes, phases=buckets, edges_relaxed=relaxed)
    return _result(A, source, dist, _weights(A, dtype), return_predecessors)


# ------------------------------------------------------------------ 7. async_delta_stepping
ASYNC_BUCKETS = 32  # at most: a lane of the fetching warp looks at each
NONE = 0x7FFFFFFF  # queued[v] of a vertex in no bucket
# sssp.cu's block size and the u64 words between two buckets' heads (a 128-byte line)
ASYNC_THREADS = _define("GBLA_ASYNC_THREADS", "sssp.cu")
ASYNC_LINE = _define("GBLA_ASYNC_QSTRIDE", "sssp.cu")


class AsyncPlan(NamedTuple):
    """How gbla_sssp_async runs: ``buckets`` (1: one FIFO worklist, asynchrony alone),
    ``dynamic`` (the width adapts as the window advances), ``key`` (False: a vertex is queued
    at most once at a time, whatever its distance; True: again when it falls a bucket),
    ``blocks_per_sm`` (resident blocks of ASYNC_THREADS), ``take`` (ids a block takes at a
    time, at most ASYNC_THREADS), ``scale`` (the width as a multiple of delta), ``local`` (at
    most this many of the vertices a block lowers into the window's base bucket it expands
    itself next, without the rings; 0: every id goes through the rings, at most
    ASYNC_THREADS), ``keep_below`` (the buckets from the window's base whose vertices a
    block may keep so), ``hold`` (the window waits while blocks keep base-bucket ids: fewer
    relaxations, less parallelism), ``precheck`` (read a distance before the atomicMin that
    lowers it: fewer atomics, one more wait a relaxation)."""

    buckets: int = 8
    dynamic: bool = True
    key: bool = True
    blocks_per_sm: int = 2
    take: int = 256
    scale: float = 1.0
    local: int = 256
    keep_below: int = 1
    hold: bool = False
    precheck: bool = False


class _AsyncWork:
    """The worklist of gbla_sssp_async on n vertices, kept with the matrix between calls: a
    clean run leaves its rings, their heads and tails and queued (every vertex in no bucket)
    ready for the next, so a call's gbla_sssp_async_init resets only the control block
    ``ctl``: pending, the window (base; base_dist and width), the overflow flag and the six
    counters, the ids blocks hold."""

    def __init__(self, n, dtype, buckets, cap_log2):
        cp = _cupy()
        self.buckets, self.cap_log2 = buckets, cap_log2
        self.queued = cp.full(max(n, 1), NONE, np.int32)
        self.rings = cp.empty(buckets << cap_log2, np.uint64)
        fill = _launch.function(
            "sssp.cu",
            "gbla_sssp_async_rings",
            name_expressions=name_expressions(CTYPES[np.dtype(dtype)]),
        )
        fill(
            grid(len(self.rings)),
            (THREADS,),
            (self.rings, np.int64(len(self.rings)), np.int32(cap_log2)),
        )
        # a bucket's head and tail on a line of their own; so are pending, the window and the
        # flag (then the counters)
        self.queues = cp.zeros(ASYNC_LINE * buckets, np.uint64)
        self.ctl = cp.zeros(4 * ASYNC_LINE, np.uint64)
        self.pending = self.ctl[0:1].view(np.int64)
        self.window = self.ctl[ASYNC_LINE : ASYNC_LINE + 1].view(np.int32)
        self.window_f = self.ctl[ASYNC_LINE + 1 : ASYNC_LINE + 3].view(dtype)
        self.flags = self.ctl[2 * ASYNC_LINE : 2 * ASYNC_LINE + 1].view(np.int32)
        self.counters = self.ctl[2 * ASYNC_LINE + 1 : 2 * ASYNC_LINE + 7]
        self.held = self.ctl[3 * ASYNC_LINE : 3 * ASYNC_LINE + 1].view(np.int64)


def _async_rings(n, buckets):
    """log2 of a ring's first capacity: a quarter of the vertices a bucket (one bucket: twice
    them), at least 4096 (8 bytes a slot); doubled twice on an overflow."""
    want = 2 * n if buckets == 1 else n // 4
    return max(12, int(want - 1).bit_length())


def async_delta_stepping(A, source, dtype, delta, plan, stats):
    """Distances from ``source`` by gbla_sssp_async under ``plan`` (an AsyncPlan); the
    kernel's counters go to ``stats``. Reruns with rings four times larger when one
    overflows (stats["restarts"])."""
    if (
        not 1 <= plan.buckets <= ASYNC_BUCKETS
        or not 1 <= plan.take <= ASYNC_THREADS
        or not 0 <= plan.local <= ASYNC_THREADS
        or plan.keep_below < 1
    ):
        raise V.invalid_value(
            "plan",
            f"have 1..{ASYNC_BUCKETS} buckets, take 1..{ASYNC_THREADS} ids, keep "
            f"0..{ASYNC_THREADS} and keep_below at least 1",
            plan,
        )
    cp = _cupy()
    n, T = A.nrows, np.dtype(dtype).type
    indptr, indices = int32_csr(A)
    w = _weights(A, dtype)
    tiny = np.nextafter(T(0), T(np.inf))
    width = max(T(T(delta) * T(plan.scale)), tiny)  # a float32 width that underflows
    key_width = width if plan.key else T(np.inf)
    low, high = max(T(width / 64), tiny), T(min(float(width) * 64, np.finfo(dtype).max))
    kernel = _kernel("gbla_sssp_async", dtype)
    blocks = _launch.cooperative_blocks(kernel, ASYNC_THREADS, plan.blocks_per_sm)
    key = ("sssp_async", np.dtype(dtype).name, plan.buckets)
    cap_log2, restarts = _async_rings(n, plan.buckets), 0
    while True:
        work = A._cache.get(key)
        if work is None:
            work = A._cache[key] = _AsyncWork(n, dtype, plan.buckets, cap_log2)
        dist = cp.full(n, np.inf, dtype)
        _kernel("gbla_sssp_async_init", dtype)(
            (1,),
            (1,),
            (
                np.int32(source),
                width,
                np.int32(work.cap_log2),
                dist,
                work.queued,
                work.rings,
                work.queues,
                work.pending,
                work.held,
                work.window,
                work.window_f,
                work.flags,
                work.counters,
            ),
        )
        kernel(
            (blocks,),
            (ASYNC_THREADS,),
            (
                np.int32(n),
                np.int32(plan.buckets),
                np.int32(work.cap_log2),
                np.int32(plan.take),
                np.int32(plan.local),
                np.int32(plan.keep_below),
                np.int32(plan.hold),
                np.int32(plan.precheck),
                key_width,
                np.int32(plan.dynamic),
                low,
                high,
                dist,
                work.queued,
                indptr,
                indices,
                ptr(w),
                work.rings,
                work.queues,
                work.pending,
                work.held,
                work.window,
                work.window_f,
                work.flags,
                work.counters,
            ),
        )
        info = work.ctl[2 * ASYNC_LINE : 2 * ASYNC_LINE + 7].get()  # sync: the flag, the counters
        if not info[0]:
            break
        # a ring overflowed and the rings are left dirty: the worklist goes (before its
        # successor, four times larger, is allocated)
        cap_log2, restarts = work.cap_log2 + 2, restarts + 1
        del A._cache[key], work
    relaxed, pushed, expanded, stale, moves, kept = (int(x) for x in info[1:7])
    stats.update(
        edges_relaxed=relaxed,
        pushes=pushed,
        kept=kept,
        expanded=expanded,
        stale=stale,
        buckets=moves + 1,
        restarts=restarts,
    )
    return dist


def _async_method(plan):
    def run(A, source, *, dtype, return_predecessors, direction, stats, delta=1.0):
        # one FIFO worklist (plan.buckets 1, plan.key False) has no width to take
        dist = async_delta_stepping(A, source, dtype, delta, plan, stats)
        return _result(A, source, dist, _weights(A, dtype), return_predecessors)

    return run


_ASYNC = (
    "asynchronous delta-stepping (after ADDS, PPoPP'21) in one launch of resident "
    "blocks, no grid barrier: a block takes up to 256 vertices from the lowest non-empty "
    "bucket of a window of 8 rings, relaxes their edges a lane an edge (atomicMin) and queues "
    "each vertex it lowers into its distance's bucket, unless queued in a bucket as low "
    "(those for the lowest bucket, up to 256, it keeps and expands next itself, past the "
    "rings); ends when nothing is queued or in hand; its worklist (about 20 bytes a vertex) "
    "stays with the matrix"
)
methods.register(
    methods.Method(
        "async_delta_stepping",
        "sssp",
        _ASYNC + "; the width adapts as the window advances (the work-efficient one: about "
        "1.1 relaxations an edge on road networks)",
        _async_method(AsyncPlan()),
        devices=("gpu",),
        max_index=methods.INT32_MAX - 1,
        options=("delta",),
    )
)
methods.register(
    methods.Method(
        "async_delta_stepping_fixed",
        "sssp",
        _ASYNC + "; the width stays delta (the ablation without dynamic width; on road "
        "networks the fastest, at about 20 relaxations an edge)",
        _async_method(AsyncPlan(dynamic=False)),
        devices=("gpu",),
        max_index=methods.INT32_MAX - 1,
        options=("delta",),
    )
)
methods.register(
    methods.Method(
        "async_fifo",
        "sssp",
        "asynchronous Bellman-Ford: async_delta_stepping's launch with one "
        "FIFO worklist, a vertex queued at most once at a time (the ablation's asynchrony alone)",
        _async_method(AsyncPlan(buckets=1, dynamic=False, key=False)),
        devices=("gpu",),
        max_index=methods.INT32_MAX - 1,
    )
)


# ------------------------------------------------------------------ the registry entries
_EDGE = (
    "a thread per stored edge (COO, an undirected edge once, relaxed both ways), "
    "atomicMin on the distances, a 4-byte flag copied back every four rounds while later "
    "rounds run; the edge list, kept with the "
    "matrix (12 bytes an undirected edge), is made once by sorting 64-bit keys of the edges, "
    "which holds about 6.5x the graph's bytes at its peak (rmat(22) and ego-Twitter on an H100)"
)
_KERNELS = (
    (
        "edge_bellman_ford",
        _edge_bellman_ford(True, True, hybrid=True),
        _EDGE + "; distances read through the read-only path, edges in L2-sized segment order; "
        "on a graph of 2**24 stored edges or more, a round whose vertices to relax from hold at "
        "most a quarter of the edges pushes from them alone (CSR, 16 threads an item of at most "
        "128 edges) instead, the choice made on the device each round",
    ),
    (
        "edge_bellman_ford_fallen",
        _edge_bellman_ford(True, True, active=True),
        _EDGE + "; an edge relaxed only from an endpoint whose distance fell last round (a byte "
        "a vertex): a frontier Bellman-Ford's relaxations, but more rounds, and slower on the "
        "graphs measured; read-only path, segment order",
    ),
    (
        "edge_bellman_ford_no_reorder",
        _edge_bellman_ford(True, False),
        _EDGE + "; read-only path, edges in CSR order (the ablation without reordering)",
    ),
    (
        "edge_bellman_ford_no_ldg",
        _edge_bellman_ford(False, True),
        _EDGE + "; ordinary loads, segment order (the ablation without the read-only path)",
    ),
    (
        "edge_bellman_ford_plain",
        _edge_bellman_ford(False, False),
        _EDGE + "; ordinary loads, CSR order (the ablation without either)",
    ),
    (
        "frontier_bellman_ford",
        _frontier_bellman_ford,
        "only the vertices whose distance fell push (CSR), a thread / warp / block each by "
        "out-degree, atomicMin, each lowered vertex queued once a round",
    ),
    (
        "persistent_bellman_ford",
        _persistent_bellman_ford,
        "frontier_bellman_ford's rounds in one cooperative launch, grid.sync() between rounds: "
        "no launch and no host round trip a round",
    ),
    (
        "single_block_bellman_ford",
        _single_block_bellman_ford,
        "frontier_bellman_ford's rounds inside one block of one launch, the distances in shared "
        "memory, the frontier queues too where they fit (lanes a vertex up to a warp, a lane an "
        "edge); graphs of more than 131072 edges or about 19 k vertices (28 k in float32) run "
        "persistent_bellman_ford",
    ),
)
methods.register(
    methods.Method(
        "near_far",
        "sssp",
        "Davidson et al.'s near-far pile: the binned push of vertices below a "
        "split distance, the rest set aside once in a far pile; the split moves by delta at least",
        _near_far,
        devices=("gpu",),
        max_index=methods.INT32_MAX - 1,
        options=("delta",),
    )
)
methods.register(
    methods.Method(
        "persistent_delta_stepping",
        "sssp",
        "delta-stepping in one cooperative launch: light "
        "(w <= delta) and heavy edges split once, buckets, the pending pile and its minimum on the "
        "device, grid.sync() between rounds",
        _persistent_delta_stepping,
        devices=("gpu",),
        max_index=methods.INT32_MAX - 1,
        options=("delta",),
    )
)

for _name, _run, _description in _KERNELS:
    methods.register(
        methods.Method(
            _name,
            "sssp",
            _description,
            _run,
            devices=("gpu",),
            negative_weights=True,
            max_index=methods.INT32_MAX - 1,
        )
    )
