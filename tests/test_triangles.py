"""Triangles in the algebra: each vertex's count, clustering coefficient and the graph's
transitivity equal networkx's on random graphs (directed inputs read as undirected, self-loops
ignored) and on a real graph, whichever way the masked product runs."""

import numpy as np
import pytest
from hypothesis import given

import gbla
from gbla.exceptions import DimensionMismatch, InvalidValue

from . import graphs as G
from .conftest import data_file, host

nx = pytest.importorskip("networkx")


def _undirected(S):
    """The networkx Graph of S's pattern, directions dropped."""
    return nx.from_scipy_sparse_array(S.astype(bool), create_using=nx.Graph)


def _networkx_counts(S):
    """networkx's triangles of the undirected graph of S's pattern."""
    counts = nx.triangles(_undirected(S))
    return np.array([counts[v] for v in range(S.shape[0])])


@given(G.graphs(max_n=30))
def test_the_counts_are_networkxs(g):
    A = gbla.Matrix.from_edges(g.src, g.dst, n=g.n, device="cpu")  # directed, self-loops too
    np.testing.assert_array_equal(gbla.triangles(A), _networkx_counts(A.to_scipy()))
    H = _undirected(A.to_scipy())
    c = nx.clustering(H)
    np.testing.assert_allclose(gbla.clustering(A), [c[v] for v in range(g.n)], rtol=1e-15)
    assert gbla.transitivity(A) == pytest.approx(nx.transitivity(H), rel=1e-15)


@pytest.mark.parametrize("direction", ["auto", "push", "pull"])
def test_every_direction_counts_alike_on_every_device(device, direction):
    H = nx.gnp_random_graph(80, 0.15, seed=4)
    H.add_edge(3, 3)  # a self-loop closes no triangle
    A = gbla.Matrix.from_networkx(H, nodelist=range(80), weight=None, device=device)
    got = host(gbla.triangles(A, direction=direction))
    counts = nx.triangles(H)
    np.testing.assert_array_equal(got, [counts[v] for v in range(80)])
    assert got.dtype == np.int64 and got.sum() % 3 == 0


def test_no_edges_and_no_vertices(device):
    empty = gbla.Matrix.from_edges([], [], n=4, device=device)
    assert host(gbla.triangles(empty)).tolist() == [0, 0, 0, 0]
    assert host(gbla.clustering(empty)).tolist() == [0.0] * 4 and gbla.transitivity(empty) == 0
    assert len(gbla.triangles(gbla.Matrix.from_edges([], [], n=0, device=device))) == 0


def test_a_real_graph_counts_as_networkx(device):
    A = gbla.io.read(data_file("social/ego-Facebook-combined.mtx.gz"), device=device)
    got = host(gbla.triangles(A))
    np.testing.assert_array_equal(got, _networkx_counts(A.to_scipy()))
    assert got.sum() // 3 == 1612010  # SNAP's count for ego-Facebook
    assert float(host(gbla.clustering(A)).mean()) == pytest.approx(0.6055, abs=1e-4)  # SNAP's
    assert gbla.transitivity(A) == pytest.approx(
        nx.transitivity(_undirected(A.to_scipy())), rel=1e-15
    )


def test_bad_input_is_named():
    with pytest.raises(DimensionMismatch):
        gbla.triangles(gbla.Matrix.from_edges([0], [1], n=2, ncols=3, device="cpu"))
    with pytest.raises(InvalidValue, match="direction must be one of"):
        gbla.triangles(gbla.Matrix.from_edges([0], [1], device="cpu"), direction="sideways")
