"""gbla.outofcore: the partition of a host graph, the scheduler's plans and accounts for every
strategy, and BFS / SSSP over the partitioned graph against SciPy, with NumPy as the device
(the GPU runs the same schedule with CuPy)."""

import gc
import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csgraph

import gbla
from gbla import outofcore as oc

from . import graphs as G
from .conftest import SKIP_NO_GPU
from .test_sssp import potential_graphs


def host_graph(S):
    return oc.HostGraph(S.indptr, S.indices.astype(np.int64), S.data)


def expected_levels(S, source):
    d = csgraph.shortest_path(S, unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int32)


def budget_for(g, fraction, per_vertex):
    """Room for the vertex arrays, a staging buffer and ``fraction`` of the graph."""
    largest = int(g.degrees.max()) if g.n else 0
    return g.n * per_vertex + 4 * (largest * 16 + 16) + int(fraction * g.nbytes)


# ============================================================================== the partition
@given(st.lists(st.integers(0, 30), min_size=0, max_size=60), st.integers(1, 12))
def test_a_partition_covers_every_vertex_once_in_ranges_that_hold_edges(degrees, parts):
    indptr = np.concatenate([[0], np.cumsum(degrees)]).astype(np.int64)
    p = oc.partition(indptr, edge_bytes=4, index_bytes=8, parts=parts)
    b = p.vertex_bounds
    assert b[0] == 0 and b[-1] == len(degrees) and (np.diff(b) >= 0).all()
    np.testing.assert_array_equal(p.edge_bounds, indptr[b])
    assert p.count <= parts
    if indptr[-1] > 0:
        assert (p.edges() > 0).all()  # no edgeless subgraph: it would only cost a plan entry
    # every vertex in exactly the subgraph whose range holds it
    v = np.arange(len(degrees))
    s = p.of(v)
    assert ((b[s] <= v) & (v < b[s + 1])).all()


def test_part_bytes_sets_the_subgraph_size_and_a_hub_is_never_split():
    degrees = [5] * 100 + [400] + [5] * 100
    indptr = np.concatenate([[0], np.cumsum(degrees)])
    p = oc.partition(indptr, edge_bytes=4, index_bytes=8, part_bytes=400)  # ~100 edges each
    assert p.count >= 8
    hub = int(p.of(np.array([100]))[0])
    assert p.edges()[hub] >= 400  # the hub's 400 edges stay together
    np.testing.assert_array_equal(p.nbytes(), p.edges() * 4 + (p.vertices() + 1) * 8)


@pytest.mark.parametrize(
    "kwargs, arg",
    [
        ({"parts": 0}, "parts"),
        ({"part_bytes": 0}, "part_bytes"),
        ({"parts": 2, "part_bytes": 9}, "parts"),
    ],
)
def test_bad_partition_arguments_raise_naming_them(kwargs, arg):
    with pytest.raises(gbla.InvalidValue, match=f"^{arg} must"):
        oc.partition(np.array([0, 1, 2]), edge_bytes=4, index_bytes=8, **kwargs)


# ============================================================================== the accounts
# A directed path 0 -> 1 -> ... -> 7 cut in four: {0}, {1, 2}, {3, 4}, {5, 6, 7}, with 1, 2, 2
# and 2 edges; 8 bytes an edge (int64 ids, no weights) and 8 a row pointer, so whole sizes 24,
# 40, 40 and 48. A BFS from 0 has one active vertex a level, with one edge (vertex 7: none):
# compacted, a level costs 8 + 2 * 8 = 24 bytes (16 for vertex 7).
PATH = sp.csr_array((np.ones(7), (np.arange(7), np.arange(1, 8))), shape=(8, 8))
FIXED = 8 * 12  # a BFS's vertex arrays: levels (int32) and the frontier (int64)


def test_the_path_is_cut_as_the_accounts_below_assume():
    p = oc.partition(PATH.indptr, edge_bytes=8, index_bytes=8, parts=4)
    np.testing.assert_array_equal(p.vertex_bounds, [0, 1, 3, 5, 8])
    np.testing.assert_array_equal(p.nbytes(), [24, 40, 40, 48])


def path_bfs(strategy, budget, **kwargs):
    g = oc.HostGraph(PATH.indptr, PATH.indices.astype(np.int64))
    stats = {}
    levels = oc.bfs(g, 0, memory_budget=budget, strategy=strategy, parts=4, stats=stats, **kwargs)
    np.testing.assert_array_equal(levels, np.arange(8))
    assert stats["subgraphs"] == 4 and stats["levels"] == 8 and stats["iterations"] == 8
    assert stats["peak_bytes"] <= budget
    return stats


def test_compact_sends_each_levels_edges_and_offsets():
    stats = path_bfs("compact", 10_000)
    # 7 levels of one edge and two offsets (24 bytes), the last of two offsets alone
    assert (stats["h2d_bytes"], stats["compact_transfers"], stats["whole_transfers"]) == (
        7 * 24 + 16,
        8,
        0,
    )


def test_differential_with_room_sends_each_subgraph_once():
    stats = path_bfs("differential", 10_000)
    assert (stats["h2d_bytes"], stats["whole_transfers"], stats["resident_hits"]) == (
        24 + 40 + 40 + 48,
        4,
        4,
    )


def test_differential_evicts_an_idle_subgraph_for_a_valuable_one():
    # room for one subgraph of 40 bytes: {0} is sent and kept; {1, 2}, half active, is worth
    # sending whole (whole_ratio 0.5), so {0}, idle, goes; then {3, 4} replaces it; {5, 6, 7}
    # (48 bytes) never fits and is compacted at each of its three levels
    stats = path_bfs("differential", FIXED + 24 + 40, staging_bytes=24)
    assert (stats["whole_transfers"], stats["resident_hits"], stats["compact_transfers"]) == (
        3,
        2,
        3,
    )
    assert stats["h2d_bytes"] == 24 + 40 + 40 + 24 + 24 + 16


def test_differential_compacts_below_the_whole_ratio_once_memory_is_taken():
    stats = path_bfs("differential", FIXED + 24 + 40, whole_ratio=1.0, staging_bytes=24)
    assert (stats["whole_transfers"], stats["resident_hits"]) == (1, 0)  # {0}, while room
    assert stats["h2d_bytes"] == 24 + 6 * 24 + 16


def test_all_sends_what_does_not_fit_every_time_it_is_active():
    # room for 80 bytes: {0} and {1, 2} stay (sent at their first use); {3, 4} and {5, 6, 7}
    # go over the bus at each of their levels
    stats = path_bfs("all", FIXED + 24 + 80)
    assert stats["h2d_bytes"] == 24 + 40 + 2 * 40 + 3 * 48
    assert stats["whole_transfers"] == 7 and stats["resident_hits"] == 1


def test_zerocopy_moves_nothing_and_counts_what_it_reads():
    stats = path_bfs("zerocopy", FIXED)
    assert (stats["h2d_bytes"], stats["transfers"], stats["zerocopy_bytes"]) == (0, 0, 7 * 8)


def test_managed_with_room_prefetches_each_subgraph_once_and_sends_it_back_at_the_end():
    stats = path_bfs("managed", 10_000)
    assert (stats["h2d_bytes"], stats["whole_transfers"], stats["resident_hits"]) == (
        24 + 40 + 40 + 48,
        4,
        4,
    )
    # nothing read in place; every resident prefetched back to the host when the search ends
    assert (stats["zerocopy_bytes"], stats["compact_transfers"]) == (0, 0)
    assert stats["d2h_bytes"] == 24 + 40 + 40 + 48


def test_managed_evicts_to_the_host_and_reads_in_place_what_does_not_fit():
    # no staging: room for 40 bytes of residents. {0} is prefetched; {1, 2}, half active, is
    # worth having whole, so {0}, idle, goes back to the host (24 bytes); then {3, 4} replaces
    # {1, 2} (40 back); {5, 6, 7} (48 bytes) never fits: its levels read their edges in place
    # (8 bytes, 8, none for vertex 7); {3, 4} goes back when the search ends
    stats = path_bfs("managed", FIXED + 40)
    assert (stats["whole_transfers"], stats["resident_hits"], stats["compact_transfers"]) == (
        3,
        2,
        0,
    )
    assert (stats["h2d_bytes"], stats["zerocopy_bytes"]) == (24 + 40 + 40, 8 + 8)
    assert stats["d2h_bytes"] == 24 + 40 + 40


def test_a_managed_resident_takes_the_whole_pages_its_ranges_span():
    # the path's subgraphs in pages of 16 bytes, every array starting on a page: row pointers
    # (rows lo..hi) at bytes [0, 16), [8, 32), [24, 48), [40, 72): 1, 2, 2 and 3 pages; ids
    # (8 bytes) at [0, 8), [8, 24), [24, 40), [40, 56): 1, 2, 2 and 2 pages
    p = oc.partition(PATH.indptr, edge_bytes=8, index_bytes=8, parts=4)
    spans = oc.schedule.page_spans(p, 16, [8])
    np.testing.assert_array_equal(spans[:, 0], [[0, 1], [0, 2], [1, 3], [2, 5]])
    np.testing.assert_array_equal(spans[:, 1], [[0, 1], [0, 2], [1, 3], [2, 4]])
    spans = oc.schedule.page_spans(p, 1, [8])  # pages of a byte: the subgraphs' own bytes
    np.testing.assert_array_equal((spans[..., 1] - spans[..., 0]).sum(axis=1), p.nbytes())
    stats = path_bfs("managed", 10_000, page_bytes=16)
    assert stats["h2d_bytes"] == stats["d2h_bytes"] == 16 * (2 + 4 + 4 + 5)


def test_the_scheduler_evicts_the_least_valuable_idle_resident():
    p = oc.partition(np.array([0, 4, 8, 12]), edge_bytes=8, index_bytes=8, parts=3)
    size = int(p.nbytes()[0])  # 4 edges and 2 row pointers: 48 bytes
    # staging: at least two row pointers (16 bytes), even for vertices without edges
    s = oc.Scheduler(p, 2 * size + 116, fixed_bytes=100, staging_bytes=0, whole_ratio=0.5)
    assert (s.capacity, s.staging) == (2 * size, 16)
    s.plan([4, 4, 0], [1, 1, 0])  # 0 and 1 sent whole, both resident
    assert set(s.resident) == {0, 1}
    steps = s.plan([0, 1, 4], [0, 1, 1])  # 2 is valuable: 0 (idle) makes room, 1 is in use
    assert set(s.resident) == {1, 2}
    assert [(x.subgraph, x.kind) for x in steps] == [(1, "resident"), (2, "whole")]
    assert s.accounts.peak_bytes == 2 * size + 116


def test_the_managed_scheduler_prefetches_evicts_back_and_reads_in_place():
    # three subgraphs of four edges (48 bytes each), room for two and no staging
    p = oc.partition(np.array([0, 4, 8, 12]), edge_bytes=8, index_bytes=8, parts=3)
    s = oc.Scheduler(p, 96 + 100, fixed_bytes=100, strategy="managed", whole_ratio=0.5)
    assert (s.capacity, s.staging) == (96, 0)
    steps = s.plan([4, 4, 0], [1, 1, 0])  # 0 and 1 prefetched, both resident
    assert [(x.subgraph, x.kind, x.bytes) for x in steps] == [
        (0, "prefetch", 48),
        (1, "prefetch", 48),
    ]
    assert (s.accounts.h2d_bytes, s.accounts.d2h_bytes) == (96, 0)
    steps = s.plan([0, 1, 4], [0, 1, 1])  # 2 is valuable: 0 (idle) goes back to the host
    assert [(x.subgraph, x.kind, x.bytes) for x in steps] == [
        (1, "resident", 0),
        (2, "prefetch", 48),
    ]
    assert set(s.resident) == {1, 2} and s.accounts.d2h_bytes == 48
    steps = s.plan([1, 0, 0], [1, 0, 0])  # 0, a quarter active, no room: read in place
    assert [(x.subgraph, x.kind, x.bytes) for x in steps] == [(0, "zerocopy", 8)]
    assert (s.accounts.h2d_bytes, s.accounts.zerocopy_bytes, s.accounts.d2h_bytes) == (144, 8, 48)
    assert s.release() == [1, 2] and not s.resident  # the search ends: both go back
    assert s.accounts.d2h_bytes == 144 and s.accounts.peak_bytes == 196


def test_a_budget_below_one_iterations_working_set_names_the_bytes():
    g = host_graph(PATH)
    with pytest.raises(
        oc.MemoryBudgetError,
        match=r"^memory_budget must hold one "
        r"iteration's working set, 120 bytes \(96 for the vertex arrays, 24 to "
        r"stage the largest vertex's edges\); got 119$",
    ):
        oc.bfs(g, 0, memory_budget=FIXED + 23, parts=4)
    assert issubclass(oc.MemoryBudgetError, gbla.InvalidValue)
    with pytest.raises(gbla.InvalidValue, match="^strategy must be one of"):
        oc.bfs(g, 0, memory_budget=10_000, strategy="fast")


# ============================================================================== the results
@pytest.mark.parametrize("strategy", oc.STRATEGIES)
@settings(max_examples=30, deadline=None)
@given(g=G.medium_graphs(), data=st.data())
def test_bfs_matches_scipy_for_every_strategy_and_budget(strategy, g, data):
    S = g.scipy()
    hg = host_graph(S)
    source = data.draw(st.integers(0, g.n - 1), label="source")
    fraction = data.draw(st.sampled_from([0.1, 0.5, 2.0]), label="budget fraction")
    parts = data.draw(st.integers(1, 16), label="parts")
    budget = budget_for(hg, fraction, 12)
    stats = {}
    levels = oc.bfs(hg, source, memory_budget=budget, strategy=strategy, parts=parts, stats=stats)
    np.testing.assert_array_equal(levels, expected_levels(S, source))
    assert stats["peak_bytes"] <= budget
    # only managed memory moves bytes back: each prefetched subgraph, once, evicted or at the end
    assert stats["d2h_bytes"] == (stats["h2d_bytes"] if strategy == "managed" else 0)


@pytest.mark.parametrize("strategy", oc.STRATEGIES)
@settings(max_examples=30, deadline=None)
@given(g=G.medium_graphs(), data=st.data())
def test_sssp_matches_dijkstra_for_every_strategy_and_budget(strategy, g, data):
    S = g.scipy()
    hg = host_graph(S)
    source = data.draw(st.integers(0, g.n - 1), label="source")
    fraction = data.draw(st.sampled_from([0.1, 0.5, 2.0]), label="budget fraction")
    budget = budget_for(hg, fraction, 16)
    stats = {}
    dist = oc.sssp(hg, source, memory_budget=budget, strategy=strategy, parts=8, stats=stats)
    np.testing.assert_array_equal(dist, csgraph.dijkstra(S, indices=source))
    assert stats["peak_bytes"] <= budget
    assert stats["d2h_bytes"] == (stats["h2d_bytes"] if strategy == "managed" else 0)


@settings(max_examples=30, deadline=None)
@given(g=G.medium_graphs(), data=st.data())
def test_every_bucket_width_gives_dijkstras_distances(g, data):
    S = g.scipy()
    hg = host_graph(S)
    source = data.draw(st.integers(0, g.n - 1), label="source")
    delta = data.draw(st.sampled_from([None, "auto", 0.5, 1, 7, 30.5, 1e9]), label="delta")
    stats = {}
    dist = oc.sssp(
        hg, source, memory_budget=budget_for(hg, 0.5, 16), parts=6, delta=delta, stats=stats
    )
    np.testing.assert_array_equal(dist, csgraph.dijkstra(S, indices=source))
    assert stats["delta"] is None if delta is None else stats["delta"] > 0


def test_smaller_buckets_move_fewer_bytes_on_a_road_network():
    # the reason for buckets out of core: a vertex relaxed nearer its final distance sends
    # its edges fewer times (Bellman-Ford resends them each time its distance falls)
    S = G.read_mtx("road/luxembourg_osm.mtx.gz")
    S.data = np.random.default_rng(0).integers(1, 255, S.nnz).astype(np.float64)
    S = S.maximum(S.T).tocsr()  # one weight both ways
    hg = host_graph(S)
    moved = {}
    for delta in (None, 255.0):
        stats = {}
        dist = oc.sssp(
            hg, 0, memory_budget=budget_for(hg, 0.5, 16), parts=64, delta=delta, stats=stats
        )
        np.testing.assert_array_equal(dist, csgraph.dijkstra(S, indices=0))
        moved[delta] = stats["h2d_bytes"]
    assert moved[255.0] < moved[None] / 2


@pytest.mark.parametrize("delta", [0, -1.0, np.inf, "fast", True])
def test_a_bad_delta_raises_naming_it(delta):
    with pytest.raises(gbla.InvalidValue, match="^delta must be None, 'auto' or a positive"):
        oc.sssp(host_graph(PATH), 0, memory_budget=10_000, delta=delta)


@given(gp=potential_graphs(), data=st.data())
def test_sssp_takes_negative_weights(gp, data):
    g, p = gp
    source = data.draw(st.integers(0, g.n - 1), label="source")
    w = g.w + p[g.src] - p[g.dst]
    S = G.csr(g.src, g.dst, w, g.n)
    hg = oc.HostGraph(S.indptr, S.indices, S.data)
    dist = oc.sssp(hg, source, memory_budget=budget_for(hg, 0.5, 16), parts=3)  # 'auto'
    expected = csgraph.dijkstra(g.scipy(), indices=source) + p[source] - p
    np.testing.assert_array_equal(dist, expected)
    if (w < 0).any():  # buckets need non-negative weights: 'auto' took Bellman-Ford
        with pytest.raises(
            gbla.InvalidValue, match="^delta must be None or 'auto' with a negative weight"
        ):
            oc.sssp(hg, source, memory_budget=10**6, delta=2.0)


def test_the_weights_facts_are_read_once_per_graph(monkeypatch):
    # 'auto''s width reads every weight (0.48 s at 67 M edges, paid by every search before):
    # kept with the graph, per dtype; a -inf weight still counts as negative
    from gbla import _weights

    calls = []
    real = _weights.numbers
    monkeypatch.setattr(_weights, "numbers", lambda w: calls.append(len(w)) or real(w))
    S = G.csr([0, 0, 1, 2], [1, 2, 2, 3], [4.0, 1.0, 2.0, 5.0], 4)
    hg = host_graph(S)
    for _ in range(3):
        dist = oc.sssp(hg, 0, memory_budget=10_000)
        np.testing.assert_array_equal(dist, csgraph.dijkstra(S, indices=0))
    oc.sssp(hg, 0, memory_budget=10_000, dtype=np.float32)  # weights in another dtype
    assert calls == [4, 4]
    T = G.csr([0, 1], [1, 2], [1.0, -np.inf], 3)
    with pytest.raises(gbla.InvalidValue, match="^delta must be None or 'auto' with a negative"):
        oc.sssp(host_graph(T), 0, memory_budget=10_000, delta=2.0)


@settings(max_examples=40, deadline=None)
@given(g=G.medium_graphs(), data=st.data())
def test_auto_narrows_the_width_as_the_degree_grows(g, data):
    # out of core, 'auto' is in-memory delta-stepping's width times min(1, 4 / mean degree),
    # never below the lightest positive weight; the search's stats report the width it took
    from gbla import _weights

    S = g.scipy()
    hg = host_graph(S)
    facts = _weights.facts(_weights.numbers(hg.values), None)
    stored, degree = S.nnz, S.nnz / g.n
    wide = facts.bucket_width(stored, g.n)
    expected = wide if degree <= 4 else max(wide * 4 / degree, facts.positive_min)
    assert oc.traverse.auto_width(facts, stored, g.n) == pytest.approx(expected)
    stats = {}
    source = data.draw(st.integers(0, g.n - 1), label="source")
    dist = oc.sssp(hg, source, memory_budget=budget_for(hg, 0.5, 16), parts=4, stats=stats)
    np.testing.assert_array_equal(dist, csgraph.dijkstra(S, indices=source))
    if facts.lowest >= 0:
        assert stats["delta"] == pytest.approx(expected)


def test_auto_keeps_the_width_on_sparse_graphs_and_narrows_it_on_dense_ones():
    from gbla import _weights

    facts = _weights.facts(_weights.numbers(np.array([1.0, 3.0, 5.0])), None)  # mean 3, min 1
    assert oc.traverse.auto_width(facts, 400, 100) == facts.bucket_width(400, 100) == 24.0
    assert oc.traverse.auto_width(facts, 3200, 100) == 1.0  # 3 x 4 / 32 below the lightest
    assert oc.traverse.auto_width(facts, 1600, 100) == pytest.approx(6.0 * 4 / 16)


def test_a_negative_cycle_raises():
    S = G.csr([0, 1, 2], [1, 2, 1], [1.0, 2.0, -3.0], 3)
    with pytest.raises(gbla.NegativeCycleError, match="^A must have no negative cycle"):
        oc.sssp(host_graph(S), 0, memory_budget=10_000)


def test_a_host_graph_of_a_gbla_matrix():
    A = gbla.Matrix.from_edges([0, 1, 2], [1, 2, 0], [1.0, 2.0, 3.0], device="cpu")
    hg = oc.HostGraph.of(A)
    np.testing.assert_array_equal(oc.sssp(hg, 0, memory_budget=10_000), [0.0, 1.0, 3.0])
    assert hg.nbytes == A._indptr.astype(np.int64).nbytes + A._indices.nbytes + A._values.nbytes


@pytest.mark.parametrize("relative", ["road/luxembourg_osm.mtx.gz"])
def test_a_road_network_at_half_its_bytes(relative):
    S = G.read_mtx(relative)
    hg = host_graph(S)
    for strategy in ("differential", "compact"):
        stats = {}
        budget = budget_for(hg, 0.5, 12)
        levels = oc.bfs(hg, 0, memory_budget=budget, strategy=strategy, stats=stats)
        np.testing.assert_array_equal(levels, expected_levels(S, 0))
        assert stats["peak_bytes"] <= budget


# ============================================================================== on the GPU
def _road():
    """Luxembourg's roads, symmetric, with integer weights 1..254."""
    S = G.read_mtx("road/luxembourg_osm.mtx.gz")
    S.data = np.random.default_rng(0).integers(1, 255, S.nnz).astype(np.float64)
    return S.maximum(S.T).tocsr()


def _tight(hg, per_vertex):
    """A budget that keeps about three of 64 subgraphs resident."""
    return budget_for(hg, 3 / 64, per_vertex) + 64 * 1024


class _PeakBytes:
    """The most device bytes CuPy's pool handed out at once while in use (a memory hook: every
    allocation and free of the pool, rounded as the pool rounds them)."""

    def __init__(self):
        from cupy.cuda import memory_hook

        class Hook(memory_hook.MemoryHook):
            name = "gbla_peak_bytes"

            def __init__(hook):
                hook.live, hook.now, hook.peak = {}, 0, 0

            def malloc_postprocess(hook, **kw):
                hook.live[kw["mem_ptr"]] = kw["mem_size"]
                hook.now += kw["mem_size"]
                hook.peak = max(hook.peak, hook.now)

            def free_postprocess(hook, **kw):
                hook.now -= hook.live.pop(kw["mem_ptr"], 0)

        self.hook = Hook()

    def __enter__(self):
        self.hook.__enter__()
        return self.hook

    def __exit__(self, *exc):
        return self.hook.__exit__(*exc)


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("strategy", oc.STRATEGIES)
@pytest.mark.parametrize("room", ["half", "tight"])
def test_the_gpu_search_matches_scipy_for_every_strategy_and_budget(strategy, room):
    import cupy as cp

    S = _road()
    hg = host_graph(S).pin()
    A = gbla.Matrix.from_scipy(S, device="cpu")
    for source, parts in ((0, 16), (4321, 64)):
        budget = budget_for(hg, 0.5, 24) if room == "half" else _tight(hg, 24)
        stats = {}
        levels, parents = oc.bfs(
            hg,
            source,
            memory_budget=budget,
            strategy=strategy,
            parts=parts,
            xp=cp,
            stats=stats,
            return_parents=True,
        )
        levels, parents = cp.asnumpy(levels), cp.asnumpy(parents)
        np.testing.assert_array_equal(levels, expected_levels(S, source))
        gbla.verify.bfs(A, source, levels, parents)
        assert stats["peak_bytes"] <= budget and stats["subgraphs"] == parts
        assert (stats["h2d_bytes"] == 0) == (strategy == "zerocopy")
        if strategy in ("all", "compact"):  # differential may read everything in place
            assert stats["transfer_ms"] > 0
        expected = csgraph.dijkstra(S, indices=source)
        for delta in (None, "auto") if parts == 16 else (40.0,):
            dist = oc.sssp(
                hg, source, memory_budget=budget, strategy=strategy, parts=parts, xp=cp, delta=delta
            )
            np.testing.assert_array_equal(cp.asnumpy(dist), expected)


def _the_gpus_schedule(hg, budget, parts, cpu_vertex_bytes, dist_dtype=None):
    """The CPU schedule's arguments that plan as the GPU's differential scheme at ``budget``:
    the same room for residents (the GPU's vertex arrays taken off, the CPU's own put on),
    compacted steps read in place, two staging halves."""
    gpu = oc.gpu.vertex_bytes(hg.n, parts, dist_dtype=dist_dtype, chunks=oc.gpu.heavy_chunks(hg))
    return dict(
        memory_budget=budget - gpu + cpu_vertex_bytes, compact_in_place=True, double_buffer=True
    )


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("room", ["half", "tight"])
@pytest.mark.parametrize("limit", [None, 40])
def test_levels_on_the_device_keep_the_host_plans_accounts(room, limit):
    # The GPU's differential BFS runs its settled levels on the device; the plan it follows
    # there must be the host's: the same bytes, transfers, hits and iterations as the same
    # schedule run on the CPU (its compacted steps read in place, as the GPU's are).
    import cupy as cp

    S = _road()
    hg = host_graph(S).pin()
    for source, parts in ((0, 16), (4321, 64)):
        budget = budget_for(hg, 0.5, 24) if room == "half" else _tight(hg, 24)
        on_gpu, on_cpu = {}, {}
        levels = oc.bfs(
            hg, source, memory_budget=budget, parts=parts, xp=cp, stats=on_gpu, depth_limit=limit
        )
        want = oc.bfs(
            hg,
            source,
            parts=parts,
            stats=on_cpu,
            depth_limit=limit,
            **_the_gpus_schedule(hg, budget, parts, cpu_vertex_bytes=12 * hg.n),
        )
        np.testing.assert_array_equal(cp.asnumpy(levels), want)
        assert on_gpu["device_levels"] > 0
        for key in ("h2d_bytes", "transfers", "resident_hits", "iterations", "levels"):
            assert on_gpu[key] == on_cpu[key], (key, on_gpu[key], on_cpu[key])


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("room", ["half", "tight"])
@pytest.mark.parametrize("delta", [None, "auto", 40.0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rounds_on_the_device_keep_the_host_plans_accounts(room, delta, dtype):
    # SSSP's rounds on the device, as BFS's levels: Dijkstra's distances on the roads, where a
    # vertex may be lowered again within a round (the accounts then depend on the order the
    # threads relax in), and the host plan's accounts exactly on the roads' BFS tree, where
    # each vertex is lowered once, so every round's frontier is the same in any order
    import cupy as cp

    S = _road()
    for graph, exact in ((S, False), (_tree(S, 7), True)):
        hg = host_graph(graph).pin()
        expected = csgraph.dijkstra(graph, indices=7).astype(dtype)
        for parts in (16, 64):
            budget = budget_for(hg, 0.5, 24) if room == "half" else _tight(hg, 24)
            on_gpu, on_cpu = {}, {}
            dist = oc.sssp(
                hg,
                7,
                memory_budget=budget,
                parts=parts,
                xp=cp,
                stats=on_gpu,
                delta=delta,
                dtype=dtype,
            )
            np.testing.assert_array_equal(cp.asnumpy(dist), expected)
            assert on_gpu["device_levels"] > 0
            if not exact:
                continue
            cpu_vertex_bytes = (np.dtype(dtype).itemsize + 8) * hg.n
            oc.sssp(
                hg,
                7,
                parts=parts,
                stats=on_cpu,
                delta=delta,
                dtype=dtype,
                **_the_gpus_schedule(hg, budget, parts, cpu_vertex_bytes, dist_dtype=dtype),
            )
            for key in ("h2d_bytes", "transfers", "resident_hits", "iterations"):
                assert on_gpu[key] == on_cpu[key], (key, on_gpu[key], on_cpu[key])


@pytest.mark.gpu
@SKIP_NO_GPU
def test_the_tables_rows_are_refilled_only_once_their_copy_is_done(monkeypatch):
    # a level's table goes to the device from pinned rows, read by a copy queued behind the
    # last walk: refilled before that copy ran (the device's levels right after a level the
    # host planned), the walk reads another level's table and skips a subgraph's frontier.
    # Each copy is held back here behind a kernel that spins, so the host is always early
    import cupy as cp

    from gbla.kernels import _outofcore as K

    spin = cp.RawKernel(
        'extern "C" __global__ void spin(long long n) {'
        " long long t = clock64(); while (clock64() - t < n) {} }",
        "spin",
    )
    send, put, early = K.Groups.send, K.Groups.put, []

    def late(self):
        spin((1,), (1,), (np.int64(400_000),))
        send(self)

    def checked(self, *args):
        if self.sending and not self.sent.done:
            early.append(args[0])
        put(self, *args)

    monkeypatch.setattr(K.Groups, "send", late)
    monkeypatch.setattr(K.Groups, "put", checked)
    S = _road()
    hg = host_graph(S).pin()
    budget = _tight(hg, 24)
    levels = oc.bfs(hg, 7, memory_budget=budget, parts=64, xp=cp, stats=(on_bfs := {}))
    dist = oc.sssp(hg, 7, memory_budget=budget, parts=64, xp=cp, stats=(on_sssp := {}), delta=40.0)
    assert on_bfs["device_levels"] > 0 and on_sssp["device_levels"] > 0
    assert early == []
    np.testing.assert_array_equal(cp.asnumpy(levels), expected_levels(S, 7))
    np.testing.assert_array_equal(cp.asnumpy(dist), csgraph.dijkstra(S, indices=7))


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("delta", [None, 40.0])
def test_the_device_levels_walk_heavy_vertices_in_chunks(monkeypatch, delta):
    # every vertex of more than 2 edges walked in chunks, and levels and rounds on the device
    # from the first settled one: a chunk lost or repeated, or a vertex lowered while its
    # chunks are walked and never walked again, leaves a level or a distance wrong
    import cupy as cp

    monkeypatch.setattr(oc.gpu, "HEAVY_CHUNK", 2)
    monkeypatch.setattr(oc.gpu, "DEVICE_AFTER", 0)
    S = _road()
    hg = host_graph(S).pin()
    budget = budget_for(hg, 0.5, 24) + 8 * oc.gpu.heavy_chunks(hg) + 64 * 1024
    for parts in (16, 64):
        on_bfs, on_sssp = {}, {}
        levels = oc.bfs(hg, 7, memory_budget=budget, parts=parts, xp=cp, stats=on_bfs)
        np.testing.assert_array_equal(cp.asnumpy(levels), expected_levels(S, 7))
        dist = oc.sssp(hg, 7, memory_budget=budget, parts=parts, xp=cp, stats=on_sssp, delta=delta)
        np.testing.assert_array_equal(cp.asnumpy(dist), csgraph.dijkstra(S, indices=7))
        assert on_bfs["device_levels"] > 0 and on_sssp["device_levels"] > 0


def _tree(S, source):
    """``S``'s BFS tree from ``source``, its edges directed away from it and weighted as in
    ``S``; the vertices it does not reach keep no edges."""
    order, pred = csgraph.breadth_first_order(S, source, directed=True, return_predecessors=True)
    v = order[1:]
    u = pred[v]
    w = np.asarray(S[u, v]).ravel()
    return sp.csr_matrix((w, (u, v)), shape=S.shape)


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("strategy", oc.STRATEGIES)
def test_the_budget_bounds_the_device_memory_the_gpu_search_holds(strategy):
    import cupy as cp

    S = _road()
    hg = host_graph(S).pin()
    for per_vertex, fraction in ((24, 0.5), (24, 3 / 64)):
        budget = budget_for(hg, fraction, per_vertex) + 64 * 1024
        oc.bfs(hg, 7, memory_budget=budget, strategy=strategy, parts=64, xp=cp)  # compiled
        cp.cuda.Device().synchronize()
        for search in (
            lambda: oc.bfs(
                hg, 7, memory_budget=budget, strategy=strategy, parts=64, xp=cp, return_parents=True
            ),
            lambda: oc.sssp(hg, 7, memory_budget=budget, strategy=strategy, parts=64, xp=cp),
        ):
            with _PeakBytes() as held:
                out = search()
                del out
            assert 0 < held.peak <= budget, (held.peak, budget)


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("ids", [np.int32, np.int64])
def test_a_compacted_frontier_without_out_edges_reads_no_stale_staging(ids):
    # A batch of frontier vertices without out-edges sends no edges. It once sent nothing at
    # all (its copy's length was taken from the addresses of empty arrays) and the kernel read
    # the staging half's stale row offsets: levels and distances for unreachable vertices,
    # or a fault, once the pool held old data. The pool is dirtied first so that stale
    # offsets would be read: [0, 1], whose one "edge" leads to vertex 0 or 1.
    import cupy as cp

    # 0 -> 1 -> 2, 4 -> 5; 3 isolated: a search from 3 reaches nothing
    S = G.csr([0, 1, 4], [1, 2, 5], [1.0, 1.0, 1.0], 6)
    hg = oc.HostGraph(S.indptr, S.indices.astype(ids), S.data).pin()
    budget = budget_for(hg, 0.1, 24) + 64 * 1024
    for _ in range(3):
        junk = [cp.zeros(1 << k, np.int64) for k in range(4, 18)]
        for a in junk:
            a[1::2] = 1
        del junk, a
        levels = cp.asnumpy(oc.bfs(hg, 3, memory_budget=budget, strategy="compact", parts=2, xp=cp))
        np.testing.assert_array_equal(levels, [-1, -1, -1, 0, -1, -1])
        dist = cp.asnumpy(oc.sssp(hg, 3, memory_budget=budget, strategy="compact", parts=2, xp=cp))
        np.testing.assert_array_equal(dist, [np.inf, np.inf, np.inf, 0, np.inf, np.inf])
        # and from 1: the second level's frontier, {2}, has no out-edges
        levels = cp.asnumpy(oc.bfs(hg, 1, memory_budget=budget, strategy="compact", parts=2, xp=cp))
        np.testing.assert_array_equal(levels, [-1, 0, 1, -1, -1, -1])


@given(st.lists(st.integers(0, 5000), max_size=40), st.sampled_from([0, 1, 32, 256, 1024]))
def test_the_chunks_queue_holds_every_heavy_vertex_s_edges_past_its_first_chunk(degrees, chunk):
    # a vertex of d > chunk edges queues ceil(d / chunk) - 1 chunks; the budget counts them
    want = sum(-(-d // chunk) - 1 for d in degrees if d > chunk) if chunk else 0
    indptr = np.concatenate([[0], np.cumsum(degrees, dtype=np.int64)])
    hg = oc.HostGraph(indptr, np.zeros(int(indptr[-1]), np.int32))
    old = oc.gpu.HEAVY_CHUNK
    try:
        oc.gpu.HEAVY_CHUNK = chunk
        assert oc.gpu.heavy_chunks(hg) == want
    finally:
        oc.gpu.HEAVY_CHUNK = old
    more = oc.gpu.vertex_bytes(len(degrees), 4, chunks=want) - oc.gpu.vertex_bytes(len(degrees), 4)
    assert more == 8 * max(want, 1) - 8


def _hubs(n=6000, hubs=(0, 17, 2999), seed=3):
    """A sparse random digraph with a few hubs, each an arc to 2,000-4,000 vertices (some of
    them back to a hub), integer weights 1..99."""
    rng = np.random.default_rng(seed)
    src = [rng.integers(0, n, 3 * n)]
    dst = [rng.integers(0, n, 3 * n)]
    for h in hubs:
        k = int(rng.integers(2000, 4000))
        src.append(np.full(k, h))
        dst.append(rng.choice(n, k, replace=False))
    src, dst = np.concatenate(src), np.concatenate(dst)
    w = rng.integers(1, 100, len(src)).astype(np.float64)
    S = sp.csr_matrix((w, (src, dst)), shape=(n, n))
    S.sum_duplicates()
    return S


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("chunk", [0, 64, oc.gpu.HEAVY_CHUNK])
@pytest.mark.parametrize("strategy", oc.STRATEGIES)
def test_a_hub_s_edges_spread_over_the_grid_reach_every_target(monkeypatch, chunk, strategy):
    # A frontier vertex of more than HEAVY_CHUNK edges walks its first chunk and queues the
    # rest for a second launch: a lost or repeated chunk leaves a hub's far targets unreached
    # or a chunk's bounds wrong. 0 walks every edge in the vertex's own warp.
    import cupy as cp

    monkeypatch.setattr(oc.gpu, "HEAVY_CHUNK", chunk)
    S = _hubs()
    for ids in (np.int32, np.int64):
        hg = oc.HostGraph(S.indptr, S.indices.astype(ids), S.data).pin()
        capacity = oc.gpu.heavy_chunks(hg)
        assert (capacity > 0) == (chunk > 0)
        budget = budget_for(hg, 0.5, 24) + 8 * capacity + 64 * 1024  # + the chunks' queue
        run = dict(memory_budget=budget, strategy=strategy, parts=4, xp=cp)
        for source in (0, 5):  # from a hub, and to the hubs through the random arcs
            levels, parents = oc.bfs(hg, source, return_parents=True, **run)
            levels, parents = cp.asnumpy(levels), cp.asnumpy(parents)
            np.testing.assert_array_equal(levels, expected_levels(S, source))
            gbla.verify.bfs(gbla.Matrix.from_scipy(S, device="cpu"), source, levels, parents)
            for dtype in (np.float32, np.float64):
                delta = None if dtype == np.float64 else 30.0
                dist = oc.sssp(hg, source, dtype=dtype, delta=delta, **run)
                np.testing.assert_array_equal(cp.asnumpy(dist), csgraph.dijkstra(S, indices=source))


@pytest.mark.gpu
@SKIP_NO_GPU
@settings(max_examples=25, deadline=None)
@given(g=G.medium_graphs(), data=st.data())
def test_the_gpu_search_on_random_graphs_and_int64_ids(g, data):
    import cupy as cp

    S = g.scipy()
    ids = data.draw(st.sampled_from([np.int32, np.int64]), label="id dtype")
    hg = oc.HostGraph(S.indptr, S.indices.astype(ids), S.data.astype(np.float64)).pin()
    source = data.draw(st.integers(0, hg.n - 1), label="source")
    strategy = data.draw(st.sampled_from(oc.STRATEGIES), label="strategy")
    parts = data.draw(st.integers(1, 6), label="parts")
    fraction = data.draw(st.sampled_from([0.1, 0.5, 2.0]))
    if strategy == "all":  # its staging holds the largest subgraph (one part: the whole graph)
        fraction = 2.0
    budget = budget_for(hg, fraction, 24) + 64 * 1024
    limit = data.draw(st.sampled_from([None, 1, 2]), label="depth_limit")
    levels = cp.asnumpy(
        oc.bfs(
            hg,
            source,
            memory_budget=budget,
            strategy=strategy,
            parts=parts,
            xp=cp,
            depth_limit=limit,
        )
    )
    want = expected_levels(S, source)
    if limit is not None:
        want[want > limit] = -1
    np.testing.assert_array_equal(levels, want)
    dist = oc.sssp(
        hg, source, memory_budget=budget, strategy=strategy, parts=parts, xp=cp, dtype=np.float32
    )
    np.testing.assert_allclose(cp.asnumpy(dist), csgraph.dijkstra(S, indices=source))


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("room", ["tight", "half", "twice"])
def test_the_managed_gpu_search_matches_scipy_at_several_budgets(room):
    import cupy as cp

    S = _road()
    hg = host_graph(S).pin()
    A = gbla.Matrix.from_scipy(S, device="cpu")
    budget = {
        "tight": _tight(hg, 24),
        "half": budget_for(hg, 0.5, 24),
        "twice": budget_for(hg, 2.0, 24),
    }[room]
    for source, parts in ((0, 16), (4321, 64)):
        stats = {}
        levels, parents = oc.bfs(
            hg,
            source,
            memory_budget=budget,
            strategy="managed",
            parts=parts,
            xp=cp,
            stats=stats,
            return_parents=True,
        )
        levels, parents = cp.asnumpy(levels), cp.asnumpy(parents)
        np.testing.assert_array_equal(levels, expected_levels(S, source))
        gbla.verify.bfs(A, source, levels, parents)
        # prefetched, and each prefetched subgraph back on the host (evicted, or at the end)
        assert stats["h2d_bytes"] > 0 and stats["d2h_bytes"] == stats["h2d_bytes"]
        assert stats["transfer_ms"] > 0 and stats["peak_bytes"] <= budget
        room_for_residents = budget - oc.gpu.vertex_bytes(hg.n, parts, parents=True)
        assert 0 < stats["prefetched_peak_bytes"] <= room_for_residents
        expected = csgraph.dijkstra(S, indices=source)
        for delta in (None, "auto"):
            dist = oc.sssp(
                hg,
                source,
                memory_budget=budget,
                strategy="managed",
                parts=parts,
                xp=cp,
                delta=delta,
            )
            np.testing.assert_array_equal(cp.asnumpy(dist), expected)


@pytest.mark.gpu
@SKIP_NO_GPU
def test_managed_memory_is_never_asked_for_beyond_the_free_memory(monkeypatch):
    import cupy as cp

    S = _road()
    hg = host_graph(S)
    asked = []
    malloc_managed = cp.cuda.malloc_managed
    monkeypatch.setattr(
        cp.cuda, "malloc_managed", lambda size: asked.append(size) or malloc_managed(size)
    )
    monkeypatch.setattr(oc.gpu, "_free_bytes", lambda cp: 1_000_000)
    budget = budget_for(hg, 0.5, 24)
    with pytest.raises(
        oc.MemoryBudgetError,
        match=r"^the GPU's free memory must hold the "
        r"graph's \d+ bytes of managed memory .*; got 1000000$",
    ) as e:
        oc.bfs(hg, 0, memory_budget=budget, strategy="managed", xp=cp)
    assert asked == []  # refused before any allocation
    needed = int(re.search(r"the graph's (\d+) bytes", str(e.value)).group(1))
    assert needed >= hg.indptr.nbytes + hg.indices.nbytes
    # with exactly that much free the search runs, asking for what the refusal named
    monkeypatch.setattr(oc.gpu, "_free_bytes", lambda cp: needed)
    levels = oc.bfs(hg, 0, memory_budget=budget, strategy="managed", xp=cp)
    np.testing.assert_array_equal(cp.asnumpy(levels), expected_levels(S, 0))
    assert sum(asked) == needed
    oc.bfs(hg, 5, memory_budget=budget, strategy="managed", xp=cp)  # the copy is kept
    assert sum(asked) == needed


@pytest.mark.gpu
@SKIP_NO_GPU
def test_managed_is_refused_without_cuda_bindings_or_concurrent_managed_access(monkeypatch):
    import sys

    import cupy as cp

    hg = host_graph(PATH)
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "cuda.bindings", None)  # as if not installed
        with pytest.raises(
            gbla.InvalidValue,
            match="^strategy must not be 'managed' without the cuda-bindings package",
        ):
            oc.bfs(hg, 0, memory_budget=10**6, strategy="managed", xp=cp)
    monkeypatch.setattr(oc.gpu, "_has_concurrent_managed_access", lambda cp, device: False)
    with pytest.raises(
        gbla.InvalidValue,
        match="^strategy must not be 'managed' on device "
        r"\d+, which has no concurrent managed access",
    ):
        oc.sssp(hg, 0, memory_budget=10**6, strategy="managed", xp=cp)


@pytest.mark.gpu
@SKIP_NO_GPU
def test_the_managed_gpu_search_keeps_its_pool_and_prefetched_bytes_within_the_budget():
    import cupy as cp

    S = _road()
    hg = host_graph(S).pin()
    for fraction in (0.5, 3 / 64):
        budget = budget_for(hg, fraction, 24) + 64 * 1024
        oc.bfs(hg, 7, memory_budget=budget, strategy="managed", parts=64, xp=cp)  # compiled
        cp.cuda.Device().synchronize()
        for search in (
            lambda stats: oc.bfs(
                hg,
                7,
                memory_budget=budget,
                strategy="managed",
                parts=64,
                xp=cp,
                return_parents=True,
                stats=stats,
            ),
            lambda stats: oc.sssp(
                hg, 7, memory_budget=budget, strategy="managed", parts=64, xp=cp, stats=stats
            ),
        ):
            stats = {}
            with _PeakBytes() as held:
                out = search(stats)
                del out
            # the pool's arrays and the pages prefetched to the device (whole pages, each
            # counted once however many residents share it), each at its own peak
            assert stats["prefetched_peak_bytes"] > 0
            assert held.peak + stats["prefetched_peak_bytes"] <= budget, (
                held.peak,
                stats["prefetched_peak_bytes"],
                budget,
            )


@pytest.mark.gpu
@SKIP_NO_GPU
def test_a_thousand_gpu_searches_give_their_memory_back():
    import cupy as cp

    S = sp.random_array((2000, 2000), density=0.003, random_state=3, format="csr")
    A = gbla.Matrix.from_scipy(S, device="cpu")
    pool = cp.get_default_memory_pool()
    gbla.bfs(A, 0, memory_budget=200_000)
    gbla.sssp(A, 0, memory_budget=200_000)
    gc.collect()  # what earlier tests of this worker left in reference cycles goes first
    cp.cuda.Device().synchronize()
    before = pool.used_bytes()
    for k in range(500):
        gbla.bfs(A, k, memory_budget=200_000)
        gbla.sssp(A, k, memory_budget=200_000)
    gc.collect()
    cp.cuda.Device().synchronize()
    assert pool.used_bytes() <= before


# ============================================================================ gbla.bfs / gbla.sssp
def test_gbla_bfs_and_sssp_keep_within_a_memory_budget():
    S = sp.random_array((400, 400), density=0.02, random_state=5, format="csr")
    S.data = np.floor(S.data * 9) + 1
    A = gbla.Matrix.from_scipy(S, device="cpu")
    stats = {}
    levels, parents = gbla.bfs(A, 3, memory_budget=40_000, return_predecessors=True, stats=stats)
    np.testing.assert_array_equal(levels, gbla.bfs(A, 3))
    gbla.verify.bfs(A, 3, levels, parents)
    assert levels.dtype == parents.dtype == np.int32
    assert stats["h2d_bytes"] > 0 and stats["peak_bytes"] <= 40_000
    np.testing.assert_array_equal(
        gbla.bfs(A, 3, memory_budget=40_000, depth_limit=2), gbla.bfs(A, 3, depth_limit=2)
    )
    dist, pred = gbla.sssp(A, 3, memory_budget=40_000, return_predecessors=True, stats=stats)
    np.testing.assert_array_equal(dist, csgraph.dijkstra(S, indices=3))
    gbla.verify.sssp(A, 3, dist, pred)
    assert stats["method"] == "out_of_core_sssp" and stats["peak_bytes"] <= 40_000


def test_gbla_sssp_out_of_core_takes_negative_weights_and_zero_weight_cycles():
    A = gbla.Matrix.from_edges(
        [0, 1, 2, 3, 1, 2], [1, 2, 3, 1, 4, 0], [1.0, 0.0, 0.0, 0.0, -2.0, 5.0], 5, device="cpu"
    )
    dist, pred = gbla.sssp(A, 0, memory_budget=10_000, return_predecessors=True)
    np.testing.assert_array_equal(dist, [0.0, 1, 1, 1, -1])
    gbla.verify.sssp(A, 0, dist, pred)


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda A: gbla.bfs(
                gbla.outofcore.HostMatrix(A, 10**6), 0, method="algebraic", memory_budget=10_000
            ),
            "^memory_budget must be None with method='algebraic'",
        ),  # it has one already
        (
            lambda A: gbla.bfs(A, 0, method="out_of_core_bfs"),
            "^memory_budget must be given with method='out_of_core_bfs'",
        ),
        (
            lambda A: gbla.sssp(
                gbla.outofcore.HostMatrix(A, 10**6), 0, method="bellman_ford", memory_budget=10_000
            ),
            "^memory_budget must be None with method='bellman_ford'",
        ),
        (
            lambda A: gbla.bfs(A, [0, 1], memory_budget=10_000),
            "^memory_budget must be None with several sources",
        ),
        (
            lambda A: gbla.sssp(A, [0, 1], memory_budget=10_000),
            "^memory_budget must be None with several sources",
        ),
        (lambda A: gbla.bfs(A, 0, memory_budget=0), "^memory_budget must be a positive number"),
        (lambda A: gbla.bfs(A, 0, memory_budget=1.5), "^memory_budget must be bytes"),
    ],
)
def test_a_memory_budget_where_it_does_not_belong_raises(call, match):
    A = gbla.Matrix.from_edges([0, 1], [1, 2], [1.0, 1.0], device="cpu")
    with pytest.raises(gbla.InvalidValue, match=match):
        call(A)


@pytest.mark.gpu
@SKIP_NO_GPU
def test_a_matrix_on_the_gpu_is_refused_and_a_fraction_of_free_memory_is_taken():
    A = gbla.Matrix.from_edges([0, 1], [1, 2], [1.0, 1.0], device="gpu")
    with pytest.raises(gbla.UnsupportedMethod, match="runs on the cpu only"):
        gbla.bfs(A, 0, memory_budget=10_000)
    levels = gbla.bfs(A.to_device("cpu"), 0, memory_budget=0.01)
    np.testing.assert_array_equal(levels, [0, 1, 2])


def _bench_module():
    """benchmarks/bench_outofcore.py, imported."""
    import importlib.util
    import sys
    from pathlib import Path

    folder = Path(__file__).parents[1] / "benchmarks"
    sys.path.insert(0, str(folder))  # its `from bench_multisource import timed`
    try:
        spec = importlib.util.spec_from_file_location(
            "bench_outofcore", folder / "bench_outofcore.py"
        )
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)
    finally:
        sys.path.remove(str(folder))
    return bench


def _bench_outofcore(argv, out):
    """benchmarks/bench_outofcore.py's main(argv) writing ``out``; its JSON document."""
    import json

    _bench_module().main([*argv, "--json", str(out)])
    return json.loads(out.read_text())


def test_the_benchmark_searches_a_graph_built_on_the_host_with_both_searches(tmp_path, capsys):
    # --beyond with NumPy as the device: rmat built a part at a time, SSSP's weights filled
    # in place, both searches checked exactly on the host, and BENCHMARKS.md's sections
    from .test_cli import load_module

    argv = ["--beyond", "10", "--beyond-algo", "bfs,sssp", "--parts", "3", "--device", "cpu"]
    doc = _bench_outofcore(argv, tmp_path / "beyond.json")
    bfs, sssp = doc["beyond"]
    assert (bfs["algo"], sssp["algo"]) == ("bfs", "sssp")
    assert bfs["check"] == sssp["check"] == "ok" and bfs["problem"] is None
    assert bfs["reached"] == sssp["reached"] > 100  # rmat(10)'s component from its source
    assert sssp["host_bytes"] > bfs["host_bytes"]  # the weights: 4 bytes an edge more
    assert sssp["stats"]["h2d_bytes"] > 0 and sssp["weights_s"] is not None
    capsys.readouterr()
    assert load_module("tools/benchmarks_md.py").main([str(tmp_path / "beyond.json")]) == 0
    md = capsys.readouterr().out
    assert "rounds" in md and "distances checked exactly on the host: ok" in md


def test_the_benchmark_refuses_an_unknown_search_beyond_the_gpu(capsys):
    with pytest.raises(SystemExit):
        _bench_module().main(["--beyond", "5", "--beyond-algo", "bfs,pagerank", "--device", "cpu"])
    assert "--beyond-algo must be bfs, sssp or bfs,sssp; got 'bfs,pagerank'" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize("rows", [1, 5, 1 << 22])
def test_the_benchmarks_distance_check_finds_every_wrong_distance(rows):
    # --beyond's SSSP check (a graph too large for SciPy): Dijkstra's float32 distances pass;
    # a distance raised, lowered, lost or found where there is no path, or the source's, fails
    from gbla import generators

    bench = _bench_module()
    indptr, indices = generators.rmat_host_csr(9, 8, seed=4, parts=2, device="cpu")
    w = generators.host_csr_weights(
        indptr, indices, 1, 255, seed=0, out=np.empty(len(indices), np.float32)
    )
    S = sp.csr_matrix((w, indices, indptr))
    source = int(np.flatnonzero(np.diff(indptr))[0])
    dist = csgraph.dijkstra(S, indices=source).astype(np.float32)
    check = lambda d: bench._distance_problem(indptr, indices, w, d, source, rows=rows)  # noqa: E731
    assert check(dist) is None
    reached = np.flatnonzero(np.isfinite(dist) & (np.arange(len(dist)) != source))
    alone = np.flatnonzero(np.diff(indptr) == 0)
    assert len(reached) > 10 and len(alone) > 0
    rng = np.random.default_rng(1)
    for v in rng.choice(reached, 10, replace=False):
        for wrong in (dist[v] + 1, dist[v] - 1, np.float32(np.inf), np.nextafter(dist[v], 0)):
            bad = dist.copy()
            bad[v] = wrong
            assert check(bad) is not None, (v, wrong)
    bad = dist.copy()
    bad[alone[0]] = 3.0  # a vertex with no edge, reached
    assert check(bad) == f"vertex {alone[0]}: distance 3.0, its tightest in-edge gives inf"
    bad = dist.copy()
    bad[source] = 1.0
    assert check(bad) == "dist[source] = 1.0"


def test_the_benchmark_reports_setup_first_calls_and_the_budget_held(tmp_path, capsys):
    # benchmarks/bench_outofcore.py (issue 40): the graph made ready once and each strategy's
    # first search reported apart from the medians, and every search within its budget
    out = tmp_path / "ooc.json"
    doc = _bench_outofcore(["--graph", "rmat:9", "--sources", "2", "--device", "cpu"], out)
    assert [(r["graph"], r["algo"]) for r in doc["results"]] == [
        ("rmat:9", "bfs"),
        ("rmat:9", "sssp"),
    ]
    for r in doc["results"]:
        assert r["setup_ms"] >= 0
        assert {row["strategy"] for row in r["rows"]} >= {"differential", "compact", "algebraic"}
        for row in r["rows"]:
            assert "error" not in row and row["check"] == "ok", row
            assert row["first_ms"] > 0 and len(row["times_ms"]) == 2
            assert 0 < row["peak_bytes"] <= row["budget"], row
    assert "the graph made ready once in" in capsys.readouterr().out
    from .test_cli import load_module

    assert load_module("tools/benchmarks_md.py").main([str(out)]) == 0
    md = capsys.readouterr().out
    assert "| strategy | ms | first ms |" in md and "| peak / budget | check |" in md
    assert "The graph made ready once, kept for every search" in md


def test_the_chart_shows_each_strategys_bytes_bus_and_in_memory_ratios(tmp_path):
    # tools/plot_outofcore.py: a panel each for the bytes moved over the graph's, the time over
    # the bus bound for them and the time over the in-memory search, a bar per strategy, and
    # issue 40's aims where they apply (a road network's BFS: 3x the in-memory search)
    pytest.importorskip("matplotlib")  # gbla[plot]
    from .test_cli import load_module

    doc = _bench_outofcore(
        ["--graph", "rmat:8", "--strategies", "differential,zerocopy", "--sources", "1"]
        + ["--device", "cpu"],
        tmp_path / "ooc.json",
    )
    fig = load_module("tools/plot_outofcore.py").plot(doc, tmp_path / "ooc.png")
    assert (tmp_path / "ooc.png").stat().st_size > 0
    rows = [(r, row) for r in doc["results"] for row in r["rows"]]
    moved = [(row["h2d_bytes"] + row["zerocopy_bytes"]) / r["graph_bytes"] for r, row in rows]
    ratios = {
        "bytes": moved,
        "bus": [row["ratio_to_bound"] for _, row in rows],
        "memory": [row["ms"] / r["in_memory_ms"] for r, row in rows],
    }
    for ax, key in zip(fig.axes, ratios):
        heights = [bar.get_height() for bar in ax.patches]
        assert sorted(heights) == pytest.approx(sorted(ratios[key]))
    # the aims' lines: SSSP's bytes; BFS's and SSSP's bus; none in memory (not a road network)
    assert [len(ax.collections) for ax in fig.axes] == [1, 2, 0]


def test_the_benchmark_sweeps_sssp_s_bucket_width(tmp_path, capsys):
    # --widths: each strategy at multiples of the default width (issue 40: bytes against
    # iterations), each row checked against the in-memory search
    out = tmp_path / "ooc.json"
    argv = ["--graph", "rmat:9", "--algo", "sssp", "--strategies", "differential,algebraic"]
    argv += ["--widths", "1,0.25,auto", "--sources", "1", "--device", "cpu"]
    (r,) = _bench_outofcore(argv, out)["results"]
    rows = [(row["strategy"], row["width"]) for row in r["rows"]]
    assert rows == [
        ("differential", 1.0),
        ("differential", 0.25),
        ("differential", None),
        ("algebraic", None),
    ]
    one, quarter, auto = r["rows"][:3]
    assert all(row["check"] == "ok" for row in r["rows"]), r["rows"]
    assert one["delta"] > 0 and quarter["delta"] == pytest.approx(one["delta"] / 4)
    # 'auto' out of core: the in-memory width narrowed by 4 / the mean degree (rmat(9): ~30)
    degree = r["graph_info"]["nvals"] / r["graph_info"]["n"]
    assert degree > 4 and auto["delta"] == pytest.approx(one["delta"] * 4 / degree)
    printed = capsys.readouterr().out
    assert "differential x0.25" in printed and "differential auto" in printed
    from .test_cli import load_module

    assert load_module("tools/benchmarks_md.py").main([str(out)]) == 0
    table = capsys.readouterr().out
    assert "| differential (width x0.25) |" in table and "| differential (auto width) |" in table
