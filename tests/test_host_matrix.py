"""gbla.outofcore.HostMatrix: the algebra's BFS and SSSP (gbla/algorithms, unchanged) on a
matrix kept in host memory, its products streaming within a memory budget, against SciPy and
the in-memory searches; the budget shared by the matrices made from it; the partitioned
operations (vxm, select, scale) against the same operations on a Matrix. A HostMatrix runs
its products on the GPU where there is one (NumPy plays the device elsewhere): these tests run
both ways, by where they run."""

import gc

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csgraph

import gbla
from gbla.outofcore import HostMatrix, MemoryBudgetError
from gbla.outofcore.host_matrix import VERTEX_BYTES

from . import graphs as G
from .conftest import SKIP_NO_GPU


def host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def expected_levels(S, source):
    d = csgraph.shortest_path(S, unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int32)


def budget(S, fraction):
    """The vectors' reserve and ``fraction`` of the graph's bytes."""
    return (
        VERTEX_BYTES * S.shape[0]
        + 512 * 64
        + int(fraction * (S.indptr.nbytes + S.indices.nbytes * 3))
    )


def _rmat():
    return gbla.generators.rmat(11, 8, seed=2, device="cpu", weights=(1, 40)).to_scipy()


def _directed():
    # 0 -> 1 -> 2 -> 3, 0 -> 4 (weight 10), 3 -> 4 (weight 1), 5 isolated, 6 -> 0
    return sp.csr_array(
        (
            np.array([1.0, 1, 1, 10, 1, 2]),
            (np.array([0, 1, 2, 0, 3, 6]), np.array([1, 2, 3, 4, 4, 0])),
        ),
        shape=(7, 7),
    )


@pytest.mark.parametrize("fraction", [0.05, 0.5, 2.0])
def test_the_algebra_on_a_host_matrix_gives_scipys_levels_and_distances(fraction):
    S = _rmat()
    A = gbla.Matrix.from_scipy(S, device="cpu")
    source = int(np.argmax(np.diff(S.indptr)))
    b = budget(S, fraction)
    stats = {}
    levels, parents = gbla.bfs(
        A, source, method="algebraic", memory_budget=b, return_predecessors=True, stats=stats
    )
    np.testing.assert_array_equal(host(levels), expected_levels(S, source))
    gbla.verify.bfs(A, source, host(levels), host(parents))
    assert stats["products"] >= stats["levels"] - 1 and stats["graph_bytes"] > 0
    assert stats["peak_bytes"] <= b
    # sent: at most every subgraph once per product, at least what a resident set needs
    assert 0 < stats["h2d_bytes"] + stats["zerocopy_bytes"]
    want = csgraph.dijkstra(S, indices=source)
    for method in ("bellman_ford", "delta_stepping"):
        stats = {}
        dist, pred = gbla.sssp(
            A, source, method=method, memory_budget=b, return_predecessors=True, stats=stats
        )
        np.testing.assert_array_equal(host(dist), want)
        gbla.verify.sssp(A, source, host(dist), host(pred))
        assert stats["method"] == method and stats["peak_bytes"] <= b


def test_a_directed_graph_with_an_isolated_vertex_and_a_depth_limit():
    S = _directed()
    A = gbla.Matrix.from_scipy(S, device="cpu")
    b = budget(S, 0.5) + 4096
    levels = host(gbla.bfs(A, 0, method="algebraic", memory_budget=b))
    np.testing.assert_array_equal(levels, [0, 1, 2, 3, 1, -1, -1])
    limited = host(gbla.bfs(A, 0, method="algebraic", memory_budget=b, depth_limit=2))
    np.testing.assert_array_equal(limited, [0, 1, 2, -1, 1, -1, -1])
    dist = host(gbla.sssp(A, 0, method="delta_stepping", memory_budget=b, delta=3.0))
    np.testing.assert_array_equal(dist, [0, 1, 2, 3, 4, np.inf, np.inf])
    dist = host(gbla.sssp(A, 6, method="bellman_ford", memory_budget=b))
    np.testing.assert_array_equal(dist, [2, 3, 4, 5, 6, np.inf, 0])


@settings(max_examples=20, deadline=None)
@given(g=G.medium_graphs(), data=st.data())
def test_random_graphs_and_int64_ids_and_both_strategies(g, data):
    S = g.scipy()
    ids = data.draw(st.sampled_from([np.int32, np.int64]), label="index dtype")
    A = gbla.Matrix.from_scipy(S, device="cpu", index_dtype=ids)
    source = data.draw(st.integers(0, S.shape[0] - 1), label="source")
    strategy = data.draw(st.sampled_from(["differential", "zerocopy"]), label="strategy")
    parts = data.draw(st.integers(1, 6), label="parts")
    H = HostMatrix(
        A,
        budget(S, data.draw(st.sampled_from([0.1, 0.5, 2.0]))) + 4096,
        strategy=strategy,
        parts=parts,
    )
    levels = host(gbla.bfs(H, source))
    np.testing.assert_array_equal(levels, expected_levels(S, source))
    dist = host(gbla.sssp(H, source, method="bellman_ford"))
    np.testing.assert_array_equal(dist, csgraph.dijkstra(S, indices=source))


def test_vxm_select_and_scale_on_a_host_matrix_equal_them_on_a_matrix():
    S = _rmat()
    A = gbla.Matrix.from_scipy(S, device="cpu")
    H = HostMatrix(A, budget(S, 0.3), parts=7)
    n = S.shape[0]
    rng = np.random.default_rng(1)
    ids = np.unique(rng.integers(0, n, 60))

    def vec(values, on):
        return gbla.Vector.from_coo(ids, values, n, device=on)

    on = H.device  # where its products' vectors are
    mask = gbla.Vector.from_dense(np.arange(n) % 3 == 0, device=on)
    cpu_mask = gbla.Vector.from_dense(np.arange(n) % 3 == 0, device="cpu")
    for semiring, values in (
        ("min_plus", rng.random(len(ids))),
        ("any_secondi", 1),
        ("plus_times", rng.random(len(ids))),
        ("any_pair", True),
    ):
        got = gbla.vxm(vec(values, on), H, semiring, mask=~mask.S).to_coo()
        want = gbla.vxm(vec(values, "cpu"), A, semiring, mask=~cpu_mask.S).to_coo()
        np.testing.assert_array_equal(host(got[0]), want[0])
        if semiring == "any_secondi":  # any in-neighbour of the frontier will do
            rows = host(got[1]).astype(np.int64)
            assert all(S[r, c] for r, c in zip(rows, host(got[0])))
            assert set(rows) <= set(ids)
        else:
            np.testing.assert_allclose(host(got[1]), want[1])
    light = gbla.select(H, "<=", 20)
    assert isinstance(light, HostMatrix) and light.nvals == int((S.data <= 20).sum())
    u = vec(1.0, on)
    np.testing.assert_array_equal(
        host(gbla.vxm(u, light, "min_plus").to_coo()[0]),
        gbla.vxm(vec(1.0, "cpu"), gbla.select(A, "<=", 20), "min_plus").to_coo()[0],
    )
    d = gbla.Vector.from_dense(rng.random(n), device=on)
    scaled = gbla.scale(H, d, "plus", side="left")
    ref = gbla.scale(
        A, gbla.Vector.from_dense(host(d._dense()[0]), device="cpu"), "plus", side="left"
    )
    np.testing.assert_allclose(
        host(gbla.vxm(u, scaled, "min_plus").to_coo()[1]),
        gbla.vxm(vec(1.0, "cpu"), ref, "min_plus").to_coo()[1],
    )


def test_the_matrices_made_from_a_host_matrix_share_its_budget():
    S = _rmat()
    b = budget(S, 0.4)
    H = HostMatrix(gbla.Matrix.from_scipy(S, device="cpu"), b, parts=16)
    light, heavy = gbla.select(H, "<=", 20), gbla.select(H, ">", 20)
    n = S.shape[0]
    u = gbla.Vector.from_dense(np.ones(n), device=H.device)
    for M in (light, heavy, H, light):  # every subgraph of each is active: all want room
        gbla.vxm(u, M, "min_plus")
        engines = H._family.members
        held = sum(e.held_bytes() for e in engines)
        assert H._family.fixed + held <= b
    assert H.traffic()["products"] == 4 and H.traffic()["peak_bytes"] <= b


def test_a_budget_too_small_for_the_vectors_names_the_bytes():
    S = _rmat()
    A = gbla.Matrix.from_scipy(S, device="cpu")
    with pytest.raises(
        MemoryBudgetError,
        match=r"^memory_budget must hold one iteration's "
        r"working set, \d+ bytes \(\d+ for the vertex arrays",
    ):
        gbla.bfs(A, 0, method="algebraic", memory_budget=10_000)


def test_what_a_host_matrix_refuses():
    A = gbla.Matrix.from_edges([0, 1], [1, 2], [1.0, 1.0], device="cpu")
    H = HostMatrix(A, 10**6)
    with pytest.raises(gbla.InvalidValue, match="^strategy must be one of"):
        HostMatrix(A, 10**6, strategy="compact")
    with pytest.raises(gbla.DomainMismatch, match="^B must be a gbla.Matrix"):
        gbla.mxm(gbla.Matrix.from_edges([0], [1], n=3, device=H.device), H, "min_plus")
    with pytest.raises(
        gbla.DomainMismatch, match="^A must be a gbla.Matrix: of the operations only vxm"
    ):
        gbla.mxv(H, gbla.Vector.from_coo([0], 1.0, 3, device=H.device), "min_plus")
    with pytest.raises(gbla.InvalidValue, match="^op must be a comparison on a HostMatrix"):
        gbla.select(H, "tril")
    with pytest.raises(gbla.UnsupportedMethod, match="does not run on a HostMatrix"):
        gbla.bfs(H, 0, method="out_of_core_bfs", memory_budget=10**6)


@pytest.mark.gpu
@SKIP_NO_GPU
def test_a_gpu_matrix_is_refused_and_the_pool_holds_the_budget_and_gives_it_back():
    import cupy as cp

    from .test_outofcore import _PeakBytes

    with pytest.raises(gbla.InvalidValue, match="^A must be a CPU matrix"):
        HostMatrix(gbla.Matrix.from_edges([0], [1], n=2, device="gpu"), 10**6)
    S = _rmat()
    A = gbla.Matrix.from_scipy(S, device="cpu")
    source = int(np.argmax(np.diff(S.indptr)))
    for fraction in (0.05, 0.5):
        b = budget(S, fraction)
        gbla.bfs(A, source, method="algebraic", memory_budget=b)  # compiled
        gbla.sssp(A, source, method="delta_stepping", memory_budget=b)
        cp.cuda.Device().synchronize()
        for search in (
            lambda: gbla.bfs(
                A, source, method="algebraic", memory_budget=b, return_predecessors=True
            ),
            lambda: gbla.sssp(
                A, source, method="delta_stepping", memory_budget=b, return_predecessors=True
            ),
            lambda: gbla.sssp(A, source, method="bellman_ford", memory_budget=b),
        ):
            with _PeakBytes() as held:
                out = search()
                del out
            assert 0 < held.peak <= b, (held.peak, b)
    pool = cp.get_default_memory_pool()
    gc.collect()  # what earlier tests left in cycles
    cp.cuda.Device().synchronize()
    before = pool.used_bytes()
    for k in range(500):
        gbla.bfs(A, k, method="algebraic", memory_budget=b)
        gbla.sssp(A, k, method="bellman_ford", memory_budget=b)
    cp.cuda.Device().synchronize()
    grown = pool.used_bytes() - before
    gc.collect()
    assert pool.used_bytes() <= before, (grown, pool.used_bytes() - before)
