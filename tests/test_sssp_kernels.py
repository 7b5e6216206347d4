"""The hand-written SSSP kernels (gbla.kernels, sssp.cu) against SciPy and the algebraic
methods: distances equal (exact with integer weights), predecessor trees valid by
gbla.verify.sssp, negative weights taken, negative cycles raised. The kernels run only on the
GPU: those tests skip on a machine without one; the registry's entries and refusals, and the
edge order of the cache-blocked variant, are checked everywhere."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.sparse import csgraph

import gbla
from gbla.algorithms.sssp import _weights, default_delta
from gbla.kernels import _sssp

from . import graphs as G
from .conftest import SKIP_NO_GPU, host
from .test_sssp import NEGATIVE_CYCLE, assert_distances, dijkstra, potential_graphs

KERNELS = [
    name
    for name in gbla.methods.names("sssp")
    if not gbla.methods.get(name).algebraic and "gpu" in gbla.methods.get(name).devices
]
ABLATION = [
    "edge_bellman_ford",
    "edge_bellman_ford_no_reorder",
    "edge_bellman_ford_no_ldg",
    "edge_bellman_ford_plain",
    "edge_bellman_ford_fallen",
]
NEGATIVE = [name for name in KERNELS if gbla.methods.get(name).negative_weights]
ASYNC = ["async_delta_stepping", "async_delta_stepping_fixed", "async_fifo"]
BUCKETED = [
    "near_far",
    "persistent_delta_stepping",
    "async_delta_stepping",
    "async_delta_stepping_fixed",
]


def on_gpu(names):
    return [pytest.param(name, marks=[SKIP_NO_GPU, pytest.mark.gpu]) for name in names]


ON_GPU = on_gpu(KERNELS)


def check(method, A, source, expected, *, rtol=None, dtype=np.float64):
    """Distances equal ``expected`` with and without predecessors; the tree validates."""
    dist, pred = gbla.sssp(A, source, method=method, return_predecessors=True)
    assert host(pred).dtype == np.int32, method
    assert_distances(dist, expected, rtol, dtype, method)
    gbla.verify.sssp(A, source, dist, pred, rtol=rtol or 1e-9)
    assert_distances(gbla.sssp(A, source, method=method), expected, rtol, dtype, method)


@pytest.fixture
def tiny_segments(monkeypatch):
    """Segments of 1024 vertices (the smallest): the cache-blocked order then differs from CSR
    order on the test graphs past 1024 vertices."""
    monkeypatch.setattr(_sssp, "_segment", lambda dtype: 1024)


# ============================================================================== the registry
def test_every_kernel_is_registered_after_the_algebraic_methods():
    names = gbla.methods.names("sssp")
    assert names[:2] == ["delta_stepping", "bellman_ford"]
    assert set(names) == {"delta_stepping", "bellman_ford", "out_of_core_sssp"} | set(KERNELS)
    assert set(KERNELS) == set(ABLATION) | {
        "frontier_bellman_ford",
        "persistent_bellman_ford",
        "single_block_bellman_ford",
    } | set(BUCKETED) | set(ASYNC)
    # buckets need non-negative weights, and so does the asynchronous kernel
    assert set(KERNELS) - set(NEGATIVE) == set(BUCKETED) | set(ASYNC)


@pytest.mark.parametrize("name", KERNELS)
def test_a_kernel_entry_describes_itself(name):
    entry = gbla.methods.get(name)
    assert (entry.algorithm, entry.devices, entry.algebraic, entry.directions) == (
        "sssp",
        ("gpu",),
        False,
        False,
    )
    assert entry.options == (("delta",) if name in BUCKETED else ())
    assert entry.description and "\n" not in entry.description


@pytest.mark.parametrize("name", KERNELS)
def test_a_kernel_refuses_a_cpu_matrix_instead_of_falling_back(name):
    A = gbla.Matrix.from_edges([0, 1], [1, 2], [1.0, 2.0], device="cpu")
    with pytest.raises(gbla.UnsupportedMethod, match=f"method '{name}' runs on the gpu only"):
        gbla.sssp(A, 0, method=name)


def test_a_kernel_refuses_a_direction_and_a_delta():
    A = gbla.Matrix.from_edges([0, 1], [1, 2], [1.0, 2.0], device="cpu")
    with pytest.raises(gbla.InvalidValue, match=r"^direction must be 'auto'"):
        gbla.sssp(A, 0, method="frontier_bellman_ford", direction="push")
    if gbla.methods.get("edge_bellman_ford").supports(A):  # a GPU matrix gets this far
        with pytest.raises(gbla.InvalidValue, match=r"^delta must be None"):
            gbla.sssp(A, 0, method="edge_bellman_ford", delta=2.0)


@given(
    st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 5000)), max_size=60),
    st.sampled_from([1024, 2048, 4096]),
)
def test_the_segment_order_groups_edges_by_segment_pair_and_keeps_csr_order_inside(pairs, segment):
    src = np.array([p[0] for p in pairs], np.int32)
    dst = np.array([p[1] for p in pairs], np.int32)
    order = _sssp.segment_order(src, dst, segment)
    assert sorted(order.tolist()) == list(range(len(pairs)))  # a permutation
    keys = [(dst[e] // segment, src[e] // segment, src[e], e) for e in order]
    assert keys == sorted(keys)  # segment pairs, then source, then the original order
    bound = max([*src.tolist(), *dst.tolist(), 0]) + 1 + segment  # a looser bound: same order
    np.testing.assert_array_equal(_sssp.segment_order(src, dst, segment, bound), order)
    # edges in CSR order (src ascending) of a graph of one segment keep their order
    in_one = np.argsort(src % segment, kind="stable")
    np.testing.assert_array_equal(
        _sssp.segment_order(src[in_one] % segment, dst[in_one] % segment, segment, segment),
        np.arange(len(pairs)),
    )


# ============================================================================== results
@pytest.mark.parametrize("method", ON_GPU)
@G.FIXTURE_OK
@given(g=st.one_of(G.graphs(), G.medium_graphs()), data=st.data())
def test_integer_weights_match_dijkstra_on_small_and_medium_graphs(method, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    A = gbla.Matrix.from_edges(g.src, g.dst, g.w, g.n, device="gpu")
    check(method, A, source, dijkstra(g.scipy(), source))


@pytest.mark.parametrize("method", ON_GPU)
@G.FIXTURE_OK
@given(g=G.graphs(weights=st.floats(0, 10, allow_subnormal=False)), data=st.data())
def test_float_weights_match_dijkstra_within_rounding(method, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    A = gbla.Matrix.from_edges(g.src, g.dst, g.w, g.n, device="gpu")
    check(method, A, source, dijkstra(g.scipy(), source), rtol=1e-9)


@pytest.mark.parametrize("method", ON_GPU)
@G.FIXTURE_OK
@given(g=G.graphs(weights=st.integers(0, 20)), data=st.data())
def test_float32_weights_give_float32_distances(method, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    A = gbla.Matrix.from_edges(g.src, g.dst, g.w.astype(np.float32), g.n, device="gpu")
    check(method, A, source, dijkstra(g.scipy(), source).astype(np.float32), dtype=np.float32)


@pytest.mark.parametrize("method", ON_GPU)
@pytest.mark.parametrize("dtype", [np.int32, np.uint16, bool])
def test_integer_and_unweighted_graphs(method, dtype):
    S = sp.random_array((300, 300), density=0.02, random_state=3, format="csr")
    S.data = np.floor(S.data * 9) + 1
    S = S.astype(dtype)
    A = gbla.Matrix.from_scipy(S, device="gpu")
    expected = dijkstra(
        S.astype(np.float64) if dtype is not bool else S.astype(np.float64).sign(), 0
    )
    check(method, A, 0, expected)


@pytest.mark.parametrize("method", on_gpu(NEGATIVE))
@G.FIXTURE_OK
@given(gp=potential_graphs(), data=st.data())
def test_negative_weights_without_negative_cycles(method, gp, data):
    g, p = gp
    source = data.draw(st.integers(0, g.n - 1), label="source")
    w = g.w + p[g.src] - p[g.dst]
    A = gbla.Matrix.from_edges(g.src, g.dst, w, g.n, device="gpu")
    check(method, A, source, dijkstra(g.scipy(), source) + p[source] - p)


@pytest.mark.parametrize("method", on_gpu(sorted(set(KERNELS) - set(NEGATIVE))))
def test_a_bucketed_kernel_refuses_a_negative_weight(method):
    A = gbla.Matrix.from_edges([0, 1], [1, 2], [1.0, -2.0], device="gpu")
    with pytest.raises(gbla.InvalidValue, match=r"^A must hold no negative weight"):
        gbla.sssp(A, 0, method=method)


@pytest.mark.parametrize("delta", [1e-300, 1e-3, 0.5, 1.0, 3.0, 7.5, 100.0, 1e9])
@pytest.mark.parametrize("method", on_gpu(BUCKETED))
@G.FIXTURE_OK
@given(g=G.medium_graphs(max_weight=20), data=st.data())
def test_every_delta_gives_the_same_distances(method, delta, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    A = gbla.Matrix.from_edges(g.src, g.dst, g.w, g.n, device="gpu")
    stats = {}
    dist = gbla.sssp(A, source, method=method, delta=delta, stats=stats)
    assert_distances(dist, dijkstra(g.scipy(), source), None, np.float64, f"delta={delta}")
    assert stats.get("iterations", stats.get("buckets")) >= 1


@pytest.mark.parametrize("method", on_gpu(BUCKETED))
@pytest.mark.parametrize(
    "src, dst, w, delta, expected",
    [
        # floor(d / delta) * delta = 174.9 > d: the bucket computed for d must still hold it
        ([0], [1], [174.89999999999998], 0.3, [0.0, 174.89999999999998]),
        # widths below the float spacing of the distances (d / delta overflowing to inf)
        ([0, 1], [1, 2], [1e10, 3.0], 1e-300, [0.0, 1e10, 1e10 + 3]),
        ([0, 1], [1, 2], [1e10, 3.0], 5e-324, [0.0, 1e10, 1e10 + 3]),
        # a float32 width that underflows to 0
        (
            [0, 1],
            [1, 2],
            np.array([1e6, 0.5], np.float32),
            1e-30,
            np.array([0, 1e6, 1e6 + 0.5], np.float32),
        ),
    ],
)
def test_a_bucket_boundary_or_a_width_below_the_float_spacing(method, src, dst, w, delta, expected):
    A = gbla.Matrix.from_edges(src, dst, w, device="gpu")
    dist = host(gbla.sssp(A, 0, method=method, delta=delta))
    assert dist.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(dist, expected)


@pytest.mark.parametrize("method", on_gpu(NEGATIVE))
@pytest.mark.parametrize(
    "edges",
    [
        ([0, 1, 2], [1, 2, 1], [1.0, 2.0, -3.0]),  # a directed cycle of weight -1
        ([0, 1], [1, 1], [4.0, -0.5]),  # a negative self-loop
        ([0, 1, 1], [1, 0, 2], [-1.0, -1.0, 5.0]),  # an undirected negative edge
    ],
)
def test_a_reachable_negative_cycle_raises(method, edges):
    A = gbla.Matrix.from_edges(*edges, 3, device="gpu")
    with pytest.raises(gbla.NegativeCycleError, match=NEGATIVE_CYCLE):
        gbla.sssp(A, 0, method=method, return_predecessors=True)


@pytest.mark.parametrize("method", on_gpu(NEGATIVE))
def test_an_unreachable_negative_cycle_is_harmless(method):
    A = gbla.Matrix.from_edges([0, 2, 3, 3], [1, 3, 2, 0], [2.0, -4.0, 3.0, -7.0], 4, device="gpu")
    check(method, A, 0, [0.0, 2.0, np.inf, np.inf])


@pytest.mark.parametrize("method", ON_GPU)
def test_a_zero_weight_cycle_keeps_the_tree_acyclic(method):
    A = gbla.Matrix.from_edges(
        [0, 1, 2, 3, 1], [1, 2, 3, 1, 4], [1.0, 0.0, 0.0, 0.0, 2.0], 5, device="gpu"
    )
    check(method, A, 0, [0.0, 1, 1, 1, 3])


@pytest.mark.parametrize("method", ON_GPU)
def test_an_edge_too_light_for_a_long_path_keeps_the_tree_acyclic(method):
    # 1e20 + 1 rounds to 1e20: 1 -> 2 and 2 -> 1 are both tight, a cycle off the tree
    A = gbla.Matrix.from_edges([0, 1, 2, 2], [1, 2, 1, 3], [1e20, 1.0, 1.0, 1.0], 4, device="gpu")
    check(method, A, 0, [0.0, 1e20, 1e20, 1e20])


@pytest.mark.parametrize("method", ON_GPU)
def test_degenerate_graphs(method):
    one = gbla.Matrix.from_edges([], [], [], 1, device="gpu")
    check(method, one, 0, [0.0])
    loop = gbla.Matrix.from_edges([0], [0], [3.0], 1, device="gpu")
    check(method, loop, 0, [0.0])
    isolated = gbla.Matrix.from_edges([1], [2], [1.0], 4, device="gpu")
    check(method, isolated, 0, [0.0, np.inf, np.inf, np.inf])
    check(method, isolated, 1, [np.inf, 0.0, 1.0, np.inf])


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("method", ABLATION)
@pytest.mark.parametrize("directed", [True, False])
def test_the_cache_blocked_order_on_a_graph_of_several_segments(tiny_segments, method, directed):
    n = 5000
    rng = np.random.default_rng(7)
    src, dst = rng.integers(0, n, 4 * n), rng.integers(0, n, 4 * n)
    w = rng.integers(1, 50, 4 * n).astype(np.float64)
    if not directed:
        src, dst, w = np.r_[src, dst], np.r_[dst, src], np.r_[w, w]
    S = G.csr(src, dst, w, n)
    A = gbla.Matrix.from_scipy(S, device="gpu")
    assert A.is_symmetric == (not directed)
    for source in (0, 4321):
        check(method, A, source, dijkstra(S, source))


@pytest.mark.gpu
@SKIP_NO_GPU
def _hub_and_path(rng, n):
    """A long path, random chords and a hub of 300 out-edges (a warp striding along its row)."""
    src = np.r_[np.arange(n - 1), rng.integers(0, n, 400), np.full(300, 7)]
    dst = np.r_[np.arange(1, n), rng.integers(0, n, 400), rng.choice(n, 300, replace=False)]
    return src, dst


def _low_degree(rng, n):
    """Out-degrees 1 to 8 at random: frontiers of thousands of vertices, several passes of the
    block a round."""
    degree = rng.integers(1, 9, n)
    return np.repeat(np.arange(n), degree), rng.integers(0, n, int(degree.sum()))


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize(
    "plan", ["all in shared memory", "queues in global memory", "past the block"]
)
@pytest.mark.parametrize("shape", [_hub_and_path, _low_degree], ids=["hub", "low degree"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_single_block_bellman_ford_in_each_of_its_plans(monkeypatch, plan, shape, dtype):
    # the plan these graphs get (the queues in shared memory beside the distances), the one of a
    # graph whose queues do not fit there, and the one of a graph past the block
    n = 3000
    rng = np.random.default_rng(11)
    src, dst = shape(rng, n)
    w = rng.integers(1, 30, len(src)).astype(dtype)
    S = G.csr(src, dst, w, n)
    A = gbla.Matrix.from_scipy(S, device="gpu")
    real = _sssp.single_block_plan
    size = np.dtype(dtype).itemsize
    assert real(n, S.nnz, dtype) == (1, n * (size + 4) + 8 * n)
    forced = {
        "all in shared memory": real,
        "queues in global memory": lambda n, edges, dtype: (0, n * (size + 4)),
        "past the block": lambda n, edges, dtype: None,
    }[plan]
    monkeypatch.setattr(_sssp, "single_block_plan", forced)
    for source in (0, 7, 1500):
        check(
            "single_block_bellman_ford", A, source, dijkstra(S, source).astype(dtype), dtype=dtype
        )


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("method", KERNELS)
def test_agrees_with_the_algebraic_methods_on_rmat(method):
    A = gbla.generators.rmat(12, seed=5, device="gpu")
    W = gbla.generators.with_weights(A, 1, 255, seed=1)
    for source in (0, 17):
        expected = host(gbla.sssp(W, source, method="bellman_ford"))
        check(method, W, source, expected)


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("method", KERNELS)
def test_the_callers_matrix_is_not_modified_and_memory_is_given_back(method):
    import cupy as cp

    S = sp.random_array((500, 500), density=0.01, random_state=4, format="csr")
    A = gbla.Matrix.from_scipy(S, device="gpu")
    before = [host(a).copy() for a in (A._indptr, A._indices, A._values)]
    gbla.sssp(A, 0, method=method, return_predecessors=True)  # caches the edge arrays
    pool = cp.get_default_memory_pool()
    cp.cuda.Device().synchronize()
    start = pool.used_bytes()
    for s in range(1000):  # 1,000 calls in a row hold no more than the first
        gbla.sssp(A, s % 500, method=method, return_predecessors=s % 2 == 0)
    cp.cuda.Device().synchronize()
    assert pool.used_bytes() <= start
    for a, b in zip(before, (A._indptr, A._indices, A._values)):
        np.testing.assert_array_equal(host(b), a)


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("relative", ["weighted/OL.mtx.gz", "weighted/TG.mtx.gz"])
def test_road_networks_with_float_lengths(relative):
    S = G.read_mtx(relative)
    A = gbla.Matrix.from_scipy(S, device="gpu")
    for method in KERNELS:
        for source in (0, S.shape[0] // 2):
            check(method, A, source, csgraph.dijkstra(S, indices=source), rtol=1e-9)


# ============================================================================== work accounting
def _reached_out_edges(S, dist):
    """The out-edges of the vertices a search reached: every correct search relaxes each of
    them at least once."""
    degrees = np.diff(S.indptr)
    return int(degrees[np.isfinite(dist)].sum())


@pytest.mark.parametrize("method", ON_GPU)
def test_every_kernel_counts_the_edges_it_relaxed(method):
    S = sp.random_array((400, 400), density=0.015, random_state=9, format="csr")
    S.data = np.floor(S.data * 20) + 1
    A = gbla.Matrix.from_scipy(S, device="gpu")
    stats = {}
    dist = host(gbla.sssp(A, 3, method=method, stats=stats))
    assert stats["edges_relaxed"] >= _reached_out_edges(S, dist)
    if "expanded" in stats:  # asynchronous: the out-edges of each vertex it expanded
        assert stats["edges_relaxed"] <= stats["expanded"] * int(np.diff(S.indptr).max())
    else:  # a round relaxes at most every edge (twice where an undirected edge is kept once)
        assert stats["edges_relaxed"] <= 2 * S.nnz * stats["iterations"]


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("method", ASYNC)
def test_the_asynchronous_kernel_expands_a_path_once_a_vertex(method):
    # 0 -> 1 -> ... -> 99 and nothing else: each vertex is lowered once, queued once, expanded
    # once, and no id is ever stale
    n = 100
    A = gbla.Matrix.from_edges(
        np.arange(n - 1), np.arange(1, n), np.full(n - 1, 2.0), n, device="gpu"
    )
    stats = {}
    dist = host(gbla.sssp(A, 0, method=method, stats=stats))
    np.testing.assert_array_equal(dist, 2.0 * np.arange(n))
    assert (stats["edges_relaxed"], stats["pushes"], stats["expanded"], stats["stale"]) == (
        n - 1,
        n - 1,
        n,
        0,
    )
    assert stats["restarts"] == 0


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("method", ASYNC)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_ring_that_overflows_reruns_with_larger_rings(monkeypatch, method, dtype):
    # rings of one id each: the first run overflows, and so may the next; every rerun starts
    # from clean rings, and the distances are Dijkstra's
    monkeypatch.setattr(_sssp, "_async_rings", lambda n, buckets: 0)
    rng = np.random.default_rng(5)
    n = 3000
    src, dst = rng.integers(0, n, 6 * n), rng.integers(0, n, 6 * n)
    S = G.csr(src, dst, rng.integers(1, 40, 6 * n).astype(dtype), n)
    A = gbla.Matrix.from_scipy(S, device="gpu")
    for source in (0, 1234):
        stats = {}
        dist = gbla.sssp(A, source, method=method, stats=stats)
        assert_distances(dist, dijkstra(S, source).astype(dtype), None, dtype, method)
        assert stats["restarts"] >= (1 if source == 0 else 0)
    # the grown rings stay with the matrix: the next call starts from them, each of its
    # reruns (if any: how many ids wait in a ring depends on the blocks' timing) four times
    # larger again; rings made anew would start from one id (2**0) instead
    (key,) = [k for k in A._cache if isinstance(k, tuple) and k[0] == "sssp_async"]
    grown = A._cache[key].cap_log2
    assert grown >= 2
    stats = {}
    gbla.sssp(A, 0, method=method, stats=stats)
    assert A._cache[key].cap_log2 == grown + 2 * stats["restarts"]


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("local", [0, 1, 7, 256])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_blocks_own_buffer_at_every_capacity(local, dtype):
    # the vertices a block lowers into the window's base bucket are kept (up to `local`) and
    # expanded by that block: the same distances whatever the room, zero weights and a
    # disconnected part included; nothing is kept without room
    rng = np.random.default_rng(11)
    n = 2500
    src, dst = rng.integers(0, 2000, 5 * n), rng.integers(0, 2000, 5 * n)
    w = rng.integers(0, 30, 5 * n).astype(dtype)
    S = G.csr(src, dst, w, n)  # vertices 2000.. are unreachable
    A = gbla.Matrix.from_scipy(S, device="gpu")
    W, dist_dtype, _ = _weights(A)
    delta = default_delta(W)
    plan = _sssp.AsyncPlan(local=local)
    for source in (0, 1999):
        stats = {}
        dist = _sssp.async_delta_stepping(W, source, dist_dtype, delta, plan, stats)
        assert_distances(dist, dijkstra(S, source).astype(dtype), None, dtype, "async")
        assert (stats["kept"] > 0) == (local > 0)
        assert stats["kept"] <= stats["pushes"]


def test_a_plan_keeping_more_ids_than_a_block_has_threads_is_refused():
    A = gbla.Matrix.from_edges([0], [1], [1.0], 2, device="cpu")
    with pytest.raises(gbla.InvalidValue, match="plan"):
        _sssp.async_delta_stepping(
            A, 0, np.dtype(np.float64), 1.0, _sssp.AsyncPlan(local=_sssp.ASYNC_THREADS + 1), {}
        )


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("method", ABLATION)
def test_the_edge_kernel_counts_the_rounds_that_ran_not_those_launched_ahead(method):
    # 0 -> 1 of four vertices: round 1 lowers d(1), round 2 lowers nothing; the rounds the
    # host launched ahead of its test (the host never stalls the GPU) return at once on the
    # device, and neither they nor their edges count (only round 1 relaxes 0 -> 1 where an
    # edge is relaxed from a vertex that fell last round); never more than n rounds (two
    # vertices: two)
    A = gbla.Matrix.from_edges([0], [1], [3.0], 4, device="gpu")
    stats = {}
    dist = host(gbla.sssp(A, 0, method=method, stats=stats))
    np.testing.assert_array_equal(dist, [0, 3, np.inf, np.inf])
    fallen = method == "edge_bellman_ford_fallen"
    assert (stats["iterations"], stats["edges_relaxed"]) == (2, 1 if fallen else 2)
    stats = {}
    two = gbla.Matrix.from_edges([0], [1], [3.0], 2, device="gpu")
    np.testing.assert_array_equal(host(gbla.sssp(two, 0, method=method, stats=stats)), [0, 3])
    assert stats["iterations"] == 2
    stats = {}
    one = gbla.Matrix.from_edges([], [], [], 1, device="gpu")  # no edge: no round
    np.testing.assert_array_equal(host(gbla.sssp(one, 0, method=method, stats=stats)), [0])
    assert stats["iterations"] == 0


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("light", [2, 16, 10**9])
@pytest.mark.parametrize("directed", [True, False])
def test_the_hybrid_of_light_and_streamed_rounds(monkeypatch, light, directed):
    # edge_bellman_ford's hybrid on a small graph (the size test lowered to 0): light rounds
    # push from the vertices lowered since they relaxed, heavy ones stream every edge, the
    # device choosing; any mix gives Dijkstra's distances (1/light of the edges makes a round
    # light; 10**9: every round with an edge to relax streams), and negative weights
    # Bellman-Ford's. Vertex 5 is a hub of 1000 out-edges, which a light round splits into
    # items of HYBRID_CHUNK edges.
    monkeypatch.setattr(_sssp, "HYBRID_EDGES", 0)
    monkeypatch.setattr(_sssp, "HYBRID_LIGHT", light)
    rng = np.random.default_rng(light)
    n = 3000
    src, dst = rng.integers(0, 2500, 8 * n), rng.integers(0, 2500, 8 * n)
    src[:1000] = 5
    w = rng.integers(0, 60, 8 * n).astype(np.float64)  # zero weights too; 2500.. unreachable
    if not directed:
        src, dst, w = np.r_[src, dst], np.r_[dst, src], np.r_[w, w]
    S = G.csr(src, dst, w, n)
    A = gbla.Matrix.from_scipy(S, device="gpu")
    for source in (0, 5, 2499, 2700):
        stats = {}
        dist = gbla.sssp(A, source, method="edge_bellman_ford", stats=stats)
        assert_distances(dist, dijkstra(S, source), None, np.float64, "hybrid")
        assert stats["edges_relaxed"] >= _reached_out_edges(S, host(dist))
    check("edge_bellman_ford", A, 7, dijkstra(S, 7))  # and a valid predecessor tree
    # negative weights, no negative cycle: a potential's shift keeps shortest paths
    phi = rng.integers(0, 40, n).astype(np.float64)
    P = S.tocoo()
    shifted = G.csr(P.row, P.col, P.data + phi[P.row] - phi[P.col], n)
    B = gbla.Matrix.from_scipy(shifted, device="gpu")
    expected = dijkstra(S, 0) + phi[0] - phi  # a path's weight shifts by phi(0) - phi(end)
    assert_distances(gbla.sssp(B, 0, method="edge_bellman_ford"), expected, 1e-9, np.float64, "h")
    # a reachable negative cycle still raises
    cycle = gbla.Matrix.from_edges([0, 1, 2], [1, 2, 1], [1.0, -3.0, 1.0], 3, device="gpu")
    with pytest.raises(gbla.NegativeCycleError):
        gbla.sssp(cycle, 0, method="edge_bellman_ford")
