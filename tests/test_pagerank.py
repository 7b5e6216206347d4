"""PageRank in the algebra: networkx's ranks on random and real graphs, with personalization,
dangling weights and a start; its convergence error; its argument checks; and on the GPU its
loop running on the device without growing the memory pool."""

import gc

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import gbla
from gbla.exceptions import ConvergenceError, InvalidValue

from . import graphs as G
from .conftest import SKIP_NO_GPU, data_file, host

nx = pytest.importorskip("networkx")


def _reference(H, **kwargs):
    ranks = nx.pagerank(H, **kwargs)
    return np.array([ranks[v] for v in range(len(H))])


@given(
    G.graphs(max_n=25, weights=st.integers(1, 9)),
    st.booleans(),
    st.booleans(),
    st.floats(0.05, 0.95),
)
@example(
    G.Graph(3, np.array([1, 0, 2, 0]), np.array([0, 1, 0, 2]), np.ones(4)), False, False, 0.9375
)  # a star: networkx does not converge either
def test_the_ranks_are_networkxs(g, directed, weighted, alpha):
    H = G.to_networkx(g, directed, weighted)
    A = gbla.Matrix.from_networkx(
        H, weight="weight" if weighted else None, nodelist=range(g.n), device="cpu"
    )
    try:
        expected = _reference(H, alpha=alpha, weight="weight" if weighted else None)
    except nx.PowerIterationFailedConvergence:  # a bipartite graph oscillates at a high alpha
        with pytest.raises(ConvergenceError):
            gbla.pagerank(A, alpha=alpha, weighted=weighted)
        return
    got = gbla.pagerank(A, alpha=alpha, weighted=weighted)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


def test_personalization_dangling_weights_and_a_start(device):
    H = nx.gnp_random_graph(60, 0.04, directed=True, seed=5)  # several dangling vertices
    assert any(H.out_degree(v) == 0 for v in H)
    A = gbla.Matrix.from_networkx(H, nodelist=range(60), device=device)
    rng = np.random.default_rng(2)
    p, d, x0 = (rng.integers(0, 4, 60).astype(float) for _ in range(3))
    p[0] = d[1] = x0[2] = 1.0  # none sums to 0
    as_dict = lambda a: dict(enumerate(a.tolist()))  # noqa: E731
    got = host(gbla.pagerank(A, personalization=p, dangling=d, nstart=x0, alpha=0.9))
    expected = _reference(
        H, personalization=as_dict(p), dangling=as_dict(d), nstart=as_dict(x0), alpha=0.9
    )
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    assert got.sum() == pytest.approx(1.0, abs=1e-5)
    # a weighted matrix whose weights are ignored gives the pattern's ranks
    W = gbla.Matrix.from_networkx(
        nx.DiGraph([(0, 1, {"weight": 5.0}), (0, 2, {"weight": 1.0}), (2, 0, {"weight": 1.0})]),
        device=device,
    )
    np.testing.assert_allclose(
        host(gbla.pagerank(W, weighted=False)), host(gbla.pagerank(W.pattern())), rtol=1e-12
    )
    assert not np.allclose(host(gbla.pagerank(W)), host(gbla.pagerank(W.pattern())))


def test_not_converging_raises_and_converging_reports_its_iterations(device):
    H = nx.gnp_random_graph(40, 0.1, directed=True, seed=1)
    A = gbla.Matrix.from_networkx(H, nodelist=range(40), device=device)
    stats = {}
    gbla.pagerank(A, stats=stats)
    assert 1 <= stats["iterations"] < 100
    assert stats["mode"] == ("device" if device == "gpu" else "eager")
    with pytest.raises(ConvergenceError, match="max_iter=3"):
        gbla.pagerank(A, max_iter=3)
    with pytest.raises(ConvergenceError):
        gbla.pagerank(A, max_iter=0)
    # one iteration short of what it needed fails; exactly that many succeeds
    gbla.pagerank(A, max_iter=stats["iterations"])
    with pytest.raises(ConvergenceError):
        gbla.pagerank(A, max_iter=stats["iterations"] - 1)


def test_an_empty_graph_and_one_vertex(device):
    assert len(gbla.pagerank(gbla.Matrix.from_edges([], [], n=0, device=device))) == 0
    np.testing.assert_allclose(
        host(gbla.pagerank(gbla.Matrix.from_edges([], [], n=1, device=device))), [1.0]
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"alpha": 1.5}, "alpha must be in"),
        ({"alpha": "0.8"}, "alpha must be a real number"),
        ({"tol": -1.0}, "tol must be a finite number"),
        ({"max_iter": -1}, "max_iter must be a non-negative integer"),
        ({"personalization": np.ones(3)}, "personalization must be a 1-D array of n = 4"),
        ({"personalization": np.zeros(4)}, "personalization must have a positive sum"),
        ({"dangling": np.array([1.0, -1.0, 0.0, 0.0])}, "dangling must hold finite non-negative"),
        ({"nstart": np.array([1.0, np.nan, 0.0, 0.0])}, "nstart must hold finite non-negative"),
        ({"weighted": 1}, "weighted must be True or False"),
    ],
)
def test_bad_arguments_are_named(kwargs, match):
    A = gbla.Matrix.from_edges([0, 1, 2], [1, 2, 3], n=4, device="cpu")
    with pytest.raises(InvalidValue, match=match):
        gbla.pagerank(A, **kwargs)


@pytest.mark.parametrize(
    "path", ["social/email-Eu-core.txt.gz", "social/ego-Facebook-combined.mtx.gz"]
)
def test_real_graphs_rank_as_networkx(device, path):
    A = gbla.io.read(data_file(path), device=device)
    S = A.to_scipy()
    H = nx.from_scipy_sparse_array(S, create_using=nx.DiGraph)
    got = host(gbla.pagerank(A, weighted=False))
    expected = _reference(H, weight=None)
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-12)


@SKIP_NO_GPU
@pytest.mark.gpu
def test_many_calls_on_the_gpu_do_not_grow_the_pool():
    import cupy as cp

    H = nx.gnp_random_graph(200, 0.03, directed=True, seed=4)
    A = gbla.Matrix.from_networkx(H, nodelist=range(200), device="gpu")
    pool = cp.get_default_memory_pool()
    p = np.arange(200.0)
    for k in range(6):
        gbla.pagerank(A, personalization=p if k % 2 else None)
    gc.collect()  # what earlier tests left in reference cycles
    cp.cuda.Device().synchronize()
    before = pool.used_bytes()
    for k in range(1000):  # the recording, kept with the matrix, serves every call
        ranks = gbla.pagerank(A, personalization=p if k % 2 else None)
    del ranks
    gc.collect()
    cp.cuda.Device().synchronize()
    assert pool.used_bytes() <= before


def test_one_matrix_serves_calls_with_different_arguments(device):
    # the recording is kept with the matrix: each call's own start, personalization, dangling
    # weights, damping and tolerance must still be the ones used
    H = nx.gnp_random_graph(50, 0.05, directed=True, seed=8)
    A = gbla.Matrix.from_networkx(H, nodelist=range(50), device=device)
    rng = np.random.default_rng(0)
    as_dict = lambda a: dict(enumerate(a.tolist()))  # noqa: E731
    for k in range(6):
        p, d, x0 = (rng.random(50) for _ in range(3))
        alpha, tol = (0.85, 0.5)[k % 2], (1e-6, 1e-9)[k // 3]
        kwargs = {"alpha": alpha, "tol": tol}
        mine = dict(
            kwargs,
            personalization=p if k % 3 else None,
            dangling=d if k % 2 else None,
            nstart=x0 if k > 2 else None,
        )
        theirs = {key: as_dict(v) if isinstance(v, np.ndarray) else v for key, v in mine.items()}
        np.testing.assert_allclose(
            host(gbla.pagerank(A, **mine)),
            _reference(H, **theirs),
            rtol=1e-9,
            atol=1e-12,
            err_msg=str(k),
        )
