"""gbla.csgraph against scipy.sparse.csgraph on the same inputs: distances, sentinels, shapes
and exceptions equal; predecessors valid (equal where they are unique: breadth-first order
and trees); weak component labels equal, strong ones the same partition."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.sparse import csgraph as scipy_cg

import gbla
from gbla import csgraph

from . import graphs as G
from .conftest import SKIP_NO_GPU


def valid_predecessors(S, dist, pred, sources, directed=True):
    """Every reached non-source vertex has a predecessor edge that is tight; -9999 exactly at
    the sources and the unreached."""
    W = S.toarray()
    present = S.toarray() != 0
    coo = S.tocoo()
    present[:] = False
    present[coo.row, coo.col] = True
    W[~present] = np.inf
    for k, s in enumerate(np.atleast_1d(sources)):
        d, p = np.atleast_2d(dist)[k], np.atleast_2d(pred)[k]
        for v in range(len(d)):
            if v == s or np.isinf(d[v]):
                assert p[v] == csgraph.NULL
                continue
            u = p[v]
            w = W[u, v] if directed else min(W[u, v], W[v, u])
            assert np.isclose(d[u] + w, d[v]), (s, u, v)


def same_partition(a, b):
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


@G.FIXTURE_OK
@given(
    g=G.graphs(max_n=20, weights=st.integers(0, 9)),
    directed=st.booleans(),
    unweighted=st.booleans(),
    method=st.sampled_from(csgraph.METHODS),
)
def test_shortest_path_equals_scipy_with_valid_predecessors(g, directed, unweighted, method):
    S = g.scipy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = scipy_cg.shortest_path(
            S, method=method, directed=directed, unweighted=unweighted
        )
        dist, pred = csgraph.shortest_path(
            S, method=method, directed=directed, unweighted=unweighted, return_predecessors=True
        )
    assert isinstance(dist, np.ndarray) and dist.shape == (g.n, g.n)
    assert pred.dtype == np.int32
    np.testing.assert_allclose(dist, expected)
    if not unweighted:
        valid_predecessors(S, dist, pred, np.arange(g.n), directed)


@pytest.mark.parametrize(
    "indices, shape", [(2, (6,)), ([0, 2], (2, 6)), (np.array([5]), (1, 6)), (None, (6, 6))]
)
def test_the_result_shape_follows_indices_as_in_scipy(indices, shape):
    S = sp.random_array((6, 6), density=0.4, random_state=3, format="csr")
    for f in (csgraph.dijkstra, csgraph.bellman_ford, csgraph.johnson, csgraph.shortest_path):
        dist, pred = f(S, indices=indices, return_predecessors=True)
        expected = getattr(scipy_cg, f.__name__)(S, indices=indices)
        assert dist.shape == pred.shape == shape == expected.shape
        np.testing.assert_allclose(dist, expected)


@G.FIXTURE_OK
@given(g=G.graphs(max_n=20, weights=st.integers(-5, 9), directed=True))
def test_bellman_ford_takes_negative_weights_or_finds_the_cycle(g):
    S = g.scipy()
    try:
        expected = scipy_cg.bellman_ford(S, indices=0)
    except scipy_cg.NegativeCycleError:
        with pytest.raises(scipy_cg.NegativeCycleError):
            csgraph.bellman_ford(S, indices=0)
        return
    dist, pred = csgraph.bellman_ford(S, indices=0, return_predecessors=True)
    np.testing.assert_allclose(dist, expected)
    valid_predecessors(S, dist, pred, 0)


@G.FIXTURE_OK
@given(g=G.graphs(max_n=16, weights=st.integers(-5, 9)), directed=st.booleans())
def test_johnson_and_floyd_warshall_equal_scipy_or_both_find_a_cycle(g, directed):
    # negative weights allowed; a negative cycle anywhere raises, reachable from the index or
    # not (SciPy's Johnson and Floyd-Warshall see the whole graph)
    S = g.scipy()
    calls = {
        "johnson": dict(indices=0),
        "floyd_warshall": {},
    }
    for name, kwargs in calls.items():
        try:
            expected = getattr(scipy_cg, name)(S, directed=directed, **kwargs)
        except scipy_cg.NegativeCycleError:
            with pytest.raises(scipy_cg.NegativeCycleError):
                getattr(csgraph, name)(S, directed=directed, **kwargs)
            continue
        dist, pred = getattr(csgraph, name)(
            S, directed=directed, return_predecessors=True, **kwargs
        )
        np.testing.assert_allclose(dist, expected)
        sources = 0 if kwargs else np.arange(g.n)
        valid_predecessors(S, dist, pred, sources, directed)


def test_a_cycle_no_index_reaches_is_an_error_where_scipy_sees_the_whole_graph():
    #   0 -> 1 (1); 2 -> 3 (-3), 3 -> 2 (1): a negative cycle vertex 0 does not reach
    S = sp.csr_array((np.array([1.0, -3.0, 1.0]), ([0, 2, 3], [1, 3, 2])), shape=(4, 4))
    np.testing.assert_array_equal(csgraph.bellman_ford(S, indices=0), [0, 1, np.inf, np.inf])
    np.testing.assert_array_equal(
        csgraph.shortest_path(S, method="BF", indices=0), [0, 1, np.inf, np.inf]
    )
    for call in (
        lambda: csgraph.johnson(S, indices=0),
        lambda: csgraph.floyd_warshall(S),
        lambda: csgraph.shortest_path(S, method="J", indices=0),
        lambda: csgraph.shortest_path(S, indices=0),  # 'auto': Johnson, for negative weights
    ):
        with pytest.raises(scipy_cg.NegativeCycleError, match="Negative cycle"):
            call()
    with pytest.raises(ValueError, match="Cannot specify indices with method == 'FW'"):
        csgraph.shortest_path(S, method="FW", indices=0)


def test_a_scipy_function_gbla_does_not_compute_says_where_to_find_it():
    with pytest.raises(AttributeError, match=r"use scipy\.sparse\.csgraph\.minimum_spanning_tree"):
        csgraph.minimum_spanning_tree  # noqa: B018
    assert not hasattr(csgraph, "depth_first_order")
    with pytest.raises(AttributeError, match="has no attribute 'no_such_function'"):
        csgraph.no_such_function  # noqa: B018


def test_a_negative_cycle_is_both_scipys_and_gblas_error():
    #   0 -> 1 (1), 1 -> 2 (-3), 2 -> 1 (1)
    S = sp.csr_array((np.array([1.0, -3.0, 1.0]), ([0, 1, 2], [1, 2, 1])), shape=(3, 3))
    with pytest.raises(scipy_cg.NegativeCycleError):
        csgraph.bellman_ford(S, indices=0)
    with pytest.raises(gbla.NegativeCycleError):
        csgraph.shortest_path(S, indices=0)
    # an undirected negative edge is a cycle of two edges
    one = sp.csr_array((np.array([-1.0]), ([0], [1])), shape=(2, 2))
    with pytest.raises(scipy_cg.NegativeCycleError):
        csgraph.bellman_ford(one, directed=False, indices=0)


def test_dijkstra_warns_on_negative_weights_as_scipy_does():
    S = sp.csr_array((np.array([1.0, -2.0]), ([0, 1], [1, 2])), shape=(3, 3))
    with pytest.warns(UserWarning, match="negative weights"):
        dist = csgraph.dijkstra(S, indices=0)
    np.testing.assert_allclose(dist, [0.0, 1.0, -1.0])


@G.FIXTURE_OK
@given(
    g=G.graphs(max_n=20, weights=st.integers(0, 9)),
    directed=st.booleans(),
    limit=st.sampled_from([0.0, 3.0, 7.5, np.inf]),
    data=st.data(),
)
def test_dijkstra_limit_and_min_only_equal_scipy(g, directed, limit, data):
    S = g.scipy()
    indices = data.draw(st.lists(st.integers(0, g.n - 1), min_size=1, max_size=4))
    dist, pred = csgraph.dijkstra(
        S, directed=directed, indices=indices[0], limit=limit, return_predecessors=True
    )
    e_dist, e_pred = scipy_cg.dijkstra(
        S, directed=directed, indices=indices[0], limit=limit, return_predecessors=True
    )
    np.testing.assert_allclose(dist, e_dist)
    np.testing.assert_array_equal(pred == csgraph.NULL, e_pred == csgraph.NULL)
    dist, pred, sources = csgraph.dijkstra(
        S, directed=directed, indices=indices, limit=limit, min_only=True, return_predecessors=True
    )
    e_dist, _, e_sources = scipy_cg.dijkstra(
        S, directed=directed, indices=indices, limit=limit, min_only=True, return_predecessors=True
    )
    np.testing.assert_allclose(dist, e_dist)
    np.testing.assert_array_equal(sources == csgraph.NULL, e_sources == csgraph.NULL)
    # each vertex's source is one of the indices at exactly its distance
    every = scipy_cg.dijkstra(S, directed=directed, indices=sorted(set(indices)))
    rows = {s: k for k, s in enumerate(sorted(set(indices)))}
    for v in np.flatnonzero(sources != csgraph.NULL):
        assert sources[v] in rows
        assert np.isclose(every[rows[sources[v]], v], dist[v])


@G.FIXTURE_OK
@given(g=G.graphs(max_n=25), directed=st.booleans(), data=st.data())
def test_breadth_first_order_and_tree_are_scipys_exactly(g, directed, data):
    S = g.scipy()
    start = data.draw(st.integers(0, g.n - 1))
    order, pred = csgraph.breadth_first_order(S, start, directed=directed)
    e_order, e_pred = scipy_cg.breadth_first_order(S, start, directed=directed)
    np.testing.assert_array_equal(order, e_order)
    np.testing.assert_array_equal(pred, e_pred)
    assert order.dtype == e_order.dtype and pred.dtype == e_pred.dtype
    tree = csgraph.breadth_first_tree(S, start, directed=directed)
    expected = scipy_cg.breadth_first_tree(S, start, directed=directed)
    assert (tree != expected).nnz == 0


@G.FIXTURE_OK
@given(g=G.graphs(max_n=30), directed=st.booleans())
def test_connected_components_equal_scipy(g, directed):
    S = g.scipy()
    count, labels = csgraph.connected_components(S, directed=directed)
    e_count, e_labels = scipy_cg.connected_components(S, directed=directed)
    assert count == e_count
    np.testing.assert_array_equal(labels, e_labels)
    count, labels = csgraph.connected_components(S, directed=directed, connection="strong")
    e_count, e_labels = scipy_cg.connected_components(S, directed=directed, connection="strong")
    assert count == e_count and same_partition(labels, e_labels)
    assert csgraph.connected_components(S, return_labels=False) == scipy_cg.connected_components(
        S, return_labels=False
    )


def test_inputs_are_read_as_scipy_reads_them():
    # a dense array's zeros (and inf, nan) are no edge; a sparse explicit zero is an edge of
    # weight zero; sparse duplicates are summed
    dense = np.array([[0, 0, np.inf], [0, 0, 2.0], [0, 0, 0]])
    np.testing.assert_array_equal(csgraph.shortest_path(dense, indices=0), [0, np.inf, np.inf])
    zero = sp.csr_array((np.array([0.0, 2.0]), ([0, 1], [1, 2])), shape=(3, 3))
    np.testing.assert_array_equal(csgraph.shortest_path(zero, indices=0), [0.0, 0.0, 2.0])
    dup = sp.coo_array((np.array([1.0, 2.0]), ([0, 0], [1, 1])), shape=(2, 2))
    np.testing.assert_array_equal(
        csgraph.dijkstra(dup, indices=0), scipy_cg.dijkstra(dup, indices=0)
    )
    A = gbla.Matrix.from_scipy(zero, device="cpu")
    np.testing.assert_array_equal(csgraph.dijkstra(A, indices=0), [0.0, 0.0, 2.0])


def test_the_callers_matrix_is_not_modified():
    S = sp.random_array((8, 8), density=0.3, random_state=4, format="csr")
    before = S.copy()
    csgraph.shortest_path(S, directed=False, overwrite=True)
    csgraph.breadth_first_tree(S, 0, directed=False)
    assert (S != before).nnz == 0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda S: csgraph.shortest_path(S, method="XX"), "method"),
        (lambda S: csgraph.dijkstra(S, indices=7), "indices"),
        (lambda S: csgraph.dijkstra(S, indices=[0, -1]), "indices"),
        (lambda S: csgraph.dijkstra(S, limit=np.nan), "limit"),
        (lambda S: csgraph.breadth_first_order(S, 5), "i_start"),
        (lambda S: csgraph.connected_components(S, connection="both"), "connection"),
        (lambda S: csgraph.dijkstra(np.ones((2, 3))), "square"),
        (lambda S: csgraph.dijkstra(np.ones(3)), "2-D"),
    ],
)
def test_bad_arguments_raise_value_errors_by_name(call, match):
    S = sp.csr_array(np.eye(5))
    with pytest.raises(ValueError, match=match):
        call(S)


@pytest.mark.gpu
@SKIP_NO_GPU
def test_cupy_in_gives_cupy_out():
    import cupy as cp
    import cupyx.scipy.sparse as csp

    S = sp.random_array((30, 30), density=0.1, random_state=5, format="csr")
    C = csp.csr_matrix(S)
    dist, pred = csgraph.dijkstra(C, indices=[0, 3], return_predecessors=True)
    assert isinstance(dist, cp.ndarray) and isinstance(pred, cp.ndarray)
    np.testing.assert_allclose(dist.get(), scipy_cg.dijkstra(S, indices=[0, 3]))
    order = csgraph.breadth_first_order(cp.asarray(S.toarray()), 0, return_predecessors=False)
    np.testing.assert_array_equal(
        order.get(), scipy_cg.breadth_first_order(S.toarray(), 0, return_predecessors=False)
    )
    count, labels = csgraph.connected_components(C)
    assert isinstance(labels, cp.ndarray)
    assert count == scipy_cg.connected_components(S)[0]


@pytest.mark.parametrize("relative", ["social/p2p-Gnutella08.txt", "social/Wiki-Vote.txt.gz"])
def test_components_and_paths_of_a_real_directed_graph_equal_scipy(relative):
    S = G.read_snap(relative)
    for connection in ("weak", "strong"):
        count, labels = csgraph.connected_components(S, connection=connection)
        e_count, e_labels = scipy_cg.connected_components(S, connection=connection)
        assert count == e_count
        assert same_partition(labels, e_labels)
    source = int(np.argmax(np.diff(S.indptr)))
    np.testing.assert_array_equal(
        csgraph.breadth_first_order(S, source)[0], scipy_cg.breadth_first_order(S, source)[0]
    )
    np.testing.assert_allclose(
        csgraph.dijkstra(S, indices=[source, 0], unweighted=True),
        scipy_cg.dijkstra(S, indices=[source, 0], unweighted=True),
    )
