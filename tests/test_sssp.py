"""gbla.sssp against SciPy's csgraph (Dijkstra, Bellman-Ford) on random and degenerate graphs,
negative weights and cycles, zero-weight cycles, the real weighted graphs in ../shared/data and
the expected outputs shipped by LDBC Graphalytics, cuGraph and GAP.

Integer weights keep every path sum exact, so distances are compared exactly; float weights are
compared within a relative tolerance. Predecessor trees are not unique: each one is checked with
gbla.verify.sssp. Every method and every direction must give the same distances.
"""

import contextlib
import importlib
import signal
import threading

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csgraph

import gbla
from gbla import methods
from gbla.semirings import binary

from . import graphs as G
from .conftest import host

METHODS = ("bellman_ford", "delta_stepping", "auto")
# Flips push/pull at nearly every product (see test_bfs.py).
DIRECTIONS = ("push", "pull", "auto", gbla.DirectionPolicy(alpha=1e9, beta=1.0))
NEGATIVE_CYCLE = r"^A must have no negative cycle reachable from the source"


def check_sssp(
    A,
    source,
    expected,
    *,
    methods=METHODS,
    directions=DIRECTIONS,
    rtol=None,
    dtype=np.float64,
    **kwargs,
):
    """Distances equal ``expected`` (within rtol when given) for every method and direction,
    with and without predecessors; every predecessor tree validates."""
    for method in methods:
        for direction in directions:
            where = f"method={method}, direction={direction}"
            dist, pred = gbla.sssp(
                A, source, return_predecessors=True, method=method, direction=direction, **kwargs
            )
            assert host(pred).dtype == np.int32, where
            assert_distances(dist, expected, rtol, dtype, where)
            gbla.verify.sssp(A, source, dist, pred, rtol=rtol or 1e-9)
        dist = gbla.sssp(A, source, method=method, **kwargs)
        assert_distances(dist, expected, rtol, dtype, f"method={method}, no predecessors")


def assert_distances(dist, expected, rtol, dtype, where):
    assert host(dist).dtype == dtype, where
    if rtol is None:
        np.testing.assert_array_equal(host(dist), expected, err_msg=where)
    else:
        np.testing.assert_allclose(host(dist), expected, rtol=rtol, err_msg=where)


def dijkstra(S, source):
    return csgraph.dijkstra(S, directed=True, indices=source)


@contextlib.contextmanager
def no_endless_loop(seconds=240):
    """Fail instead of hanging (delta-stepping used to loop forever on some widths); not a
    timing check: the cases under it take milliseconds once compiled, but the first call on a
    GPU with a cold kernel cache compiles every kernel of the loop (tens of seconds when many
    test workers compile at once). A no-op off the main thread."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def stop(signum, frame):
        raise AssertionError(f"still running after {seconds} s: an endless loop")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ============================================================================== random graphs
@G.FIXTURE_OK
@given(g=G.graphs(), data=st.data())
def test_integer_weights_match_dijkstra_for_every_method_and_direction(device, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    index_dtype = data.draw(st.sampled_from([None, np.int64]), label="index_dtype")
    via = data.draw(st.sampled_from(["edges", "scipy"]), label="via")
    A = g.matrix(device, index_dtype=index_dtype, via=via)
    check_sssp(A, source, dijkstra(g.scipy(), source))


@G.FIXTURE_OK
@given(g=G.medium_graphs(), data=st.data())
def test_medium_graphs_match_dijkstra_for_every_method_and_direction(device, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    check_sssp(g.matrix(device), source, dijkstra(g.scipy(), source))


@G.FIXTURE_OK
@given(g=G.graphs(weights=st.floats(0, 1e3, allow_subnormal=False)), data=st.data())
def test_float_weights_match_dijkstra_within_rounding(device, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    check_sssp(
        g.matrix(device), source, dijkstra(g.scipy(), source), rtol=1e-9, directions=("auto",)
    )


@G.FIXTURE_OK
@given(g=G.graphs(weights=st.sampled_from([0, 0, 0, 1, 3])), data=st.data())
def test_zero_weight_edges_and_cycles(device, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    check_sssp(g.matrix(device), source, dijkstra(g.scipy(), source), directions=("push", "pull"))


@pytest.mark.parametrize("method", ["bellman_ford", "delta_stepping"])
def test_an_edge_too_light_for_a_long_path_leaves_a_valid_tree(device, method):
    # 0 -1e20-> 1 <-1-> 2, 2 -1-> 3: 1e20 + 1 rounds to 1e20, so 1 -> 2 and 2 -> 1 are both
    # tight (a cycle of tight edges off the tree); predecessors must still lead to 0
    A = gbla.Matrix.from_edges([0, 1, 2, 2], [1, 2, 1, 3], [1e20, 1.0, 1.0, 1.0], device=device)
    dist, pred = gbla.sssp(A, 0, method=method, return_predecessors=True)
    np.testing.assert_array_equal(host(dist), [0.0, 1e20, 1e20, 1e20])
    gbla.verify.sssp(A, 0, dist, pred)
    assert host(pred).tolist() == [0, 0, 1, 2]


def test_predecessors_of_positive_weights_form_a_tree_of_tight_edges(device):
    # 0 -2-> 1 -3-> 3, 0 -4-> 2 -1-> 3, 3 -0.5-> 4: both ways into 3 are shortest (5)
    A = gbla.Matrix.from_edges(
        [0, 1, 0, 2, 3], [1, 3, 2, 3, 4], [2.0, 3.0, 4.0, 1.0, 0.5], n=6, device=device
    )
    for sources in (0, [0, 2]):
        dist, pred = gbla.sssp(A, sources, return_predecessors=True)
        dist, pred = np.atleast_2d(host(dist)), np.atleast_2d(host(pred))
        np.testing.assert_array_equal(dist[0], [0.0, 2.0, 4.0, 5.0, 5.5, np.inf])
        assert pred[0][[0, 1, 2, 4, 5]].tolist() == [0, 0, 0, 3, -1] and pred[0][3] in (1, 2)
        for row, s in enumerate(np.atleast_1d(sources)):
            gbla.verify.sssp(A, int(s), dist[row], pred[row])


DELTAS = (None, 1e-300, 1e-3, 0.3, 1.0, 7.0, 1e300)


@settings(G.FIXTURE_OK, max_examples=25)
@given(
    g=G.graphs(weights=st.one_of(st.integers(0, 20), st.sampled_from([0.1, 0.3, 174.9]))),
    data=st.data(),
)
def test_every_delta_gives_the_same_distances(device, g, data):
    # Widths far below the weights (1e-300 is below the float spacing of any distance here),
    # between them, and far above (one bucket: Bellman-Ford); 0.1, 0.3 and 174.9 make sums
    # that lie just below a multiple of the width.
    source = data.draw(st.integers(0, g.n - 1), label="source")
    drawn = data.draw(st.floats(1e-6, 1e6), label="delta")
    A = g.matrix(device)
    expected = host(gbla.sssp(A, source, method="bellman_ford"))
    np.testing.assert_allclose(expected, dijkstra(g.scipy(), source), rtol=1e-12)
    for delta in DELTAS + (drawn,):
        with no_endless_loop():
            dist, pred = gbla.sssp(
                A, source, method="delta_stepping", delta=delta, return_predecessors=True
            )
        np.testing.assert_allclose(host(dist), expected, rtol=1e-12, err_msg=f"delta={delta}")
        gbla.verify.sssp(A, source, dist, pred)


def test_a_distance_just_below_a_bucket_boundary_is_settled(device):
    # 0 -174.89999999999998-> 1 with delta 0.3: floor(d / delta) * delta = 174.9 > d, so the
    # bucket computed for d would not hold it (this looped forever).
    A = gbla.Matrix.from_edges([0], [1], [174.89999999999998], device=device)
    with no_endless_loop():
        dist = gbla.sssp(A, 0, delta=0.3)
    np.testing.assert_array_equal(host(dist), [0.0, 174.89999999999998])
    # A width below the float spacing of the distances (and d / delta overflowing to inf).
    A = gbla.Matrix.from_edges([0, 1], [1, 2], [1e10, 3.0], device=device)
    for delta in (1e-300, 5e-324):
        with no_endless_loop():
            dist = gbla.sssp(A, 0, delta=delta)
        np.testing.assert_array_equal(host(dist), [0.0, 1e10, 1e10 + 3])
    A = gbla.Matrix.from_edges([0, 1], [1, 2], np.array([1e6, 0.5], np.float32), device=device)
    with no_endless_loop():
        dist = gbla.sssp(A, 0, delta=1e-30)
    np.testing.assert_array_equal(host(dist), np.array([0, 1e6, 1e6 + 0.5], np.float32))


@settings(G.FIXTURE_OK, max_examples=20)
@given(g=G.graphs(weights=st.integers(0, 160)), data=st.data())
def test_float32_weights_give_float32_distances(device, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    # Multiples of 1/8: every path sum here is exact in float32, so the distances are too.
    w = (g.w / 8).astype(np.float32)
    A = gbla.Matrix.from_edges(g.src, g.dst, w, g.n, device=device)
    expected = dijkstra(G.csr(g.src, g.dst, w, g.n), source)
    check_sssp(A, source, expected, dtype=np.float32, directions=("auto",))
    # Arbitrary float32 weights: sums rounded to float32, so within float32's precision.
    w = (g.w / 7.3).astype(np.float32)
    A = gbla.Matrix.from_edges(g.src, g.dst, w, g.n, device=device)
    expected = dijkstra(G.csr(g.src, g.dst, w, g.n), source)
    check_sssp(A, source, expected, dtype=np.float32, directions=("auto",), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, np.float64])
def test_integer_weights_give_float64_distances(device, dtype):
    # 0 -3-> 1 -4-> 2,  0 -9-> 2
    A = gbla.Matrix.from_edges([0, 1, 0], [1, 2, 2], np.array([3, 4, 9], dtype), device=device)
    check_sssp(A, 0, [0.0, 3.0, 7.0], directions=("auto",))


@settings(G.FIXTURE_OK, max_examples=20)
@given(g=G.graphs(), data=st.data())
def test_an_unweighted_graph_has_hop_distances(device, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    A = gbla.Matrix.from_edges(g.src, g.dst, None, g.n, device=device)
    hops = csgraph.shortest_path(g.scipy(), unweighted=True, indices=source)
    check_sssp(A, source, hops, directions=("auto",))


def test_false_entries_of_a_bool_matrix_weigh_one(device):
    # 0 -True-> 1 -False-> 2: an unweighted graph, so both edges weigh 1.
    S = sp.csr_array((np.array([True, False]), ([0, 1], [1, 2])), shape=(3, 3))
    check_sssp(gbla.Matrix.from_scipy(S, device=device), 0, [0.0, 1.0, 2.0], directions=("auto",))


# ============================================================================== negative weights
@st.composite
def potential_graphs(draw):
    """A directed graph with weights w(u, v) + p(u) - p(v) for non-negative w and a potential p:
    negative edges but no negative cycle (a cycle's weight is that of w), and distances
    d_w(s, v) + p(s) - p(v) known from Dijkstra on w."""
    g = draw(G.graphs(directed=True, weights=st.integers(0, 5)))
    p = np.array(draw(st.lists(st.integers(0, 30), min_size=g.n, max_size=g.n)), np.float64)
    return g, p


@G.FIXTURE_OK
@given(gp=potential_graphs(), data=st.data())
def test_negative_weights_without_negative_cycles(device, gp, data):
    g, p = gp
    source = data.draw(st.integers(0, g.n - 1), label="source")
    w = g.w + p[g.src] - p[g.dst]
    A = gbla.Matrix.from_edges(g.src, g.dst, w, g.n, device=device)
    expected = dijkstra(g.scipy(), source) + p[source] - p
    np.testing.assert_array_equal(
        expected, csgraph.bellman_ford(G.csr(g.src, g.dst, w, g.n), indices=source)
    )
    check_sssp(A, source, expected, methods=("bellman_ford", "auto"))
    if (w < 0).any():
        with pytest.raises(gbla.InvalidValue, match=r"^A must hold no negative weight"):
            gbla.sssp(A, source, method="delta_stepping")


@G.FIXTURE_OK
@given(g=G.graphs(directed=True), data=st.data())
def test_a_reachable_negative_cycle_raises(device, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    reached = np.flatnonzero(np.isfinite(dijkstra(g.scipy(), source)))
    a = data.draw(st.sampled_from(list(reached)), label="first cycle vertex")
    others = [v for v in range(g.n) if v != a]
    rest = data.draw(
        st.lists(st.sampled_from(others), max_size=2, unique=True) if others else st.just([]),
        label="other cycle vertices",
    )
    cycle = [a] + rest  # a self-loop on a, or a cycle through 2 or 3 distinct vertices
    w = data.draw(st.lists(st.integers(-10, 10), min_size=len(cycle), max_size=len(cycle)))
    w[-1] = -sum(w[:-1]) - data.draw(st.integers(1, 5), label="cycle weight")
    edges = {(u, v): x for u, v, x in zip(g.src, g.dst, g.w)}
    edges.update({(u, cycle[(k + 1) % len(cycle)]): x for k, (u, x) in enumerate(zip(cycle, w))})
    src, dst = np.array(list(edges)).reshape(-1, 2).T
    A = gbla.Matrix.from_edges(
        src, dst, np.array(list(edges.values()), np.float64), g.n, device=device
    )
    for method in ("bellman_ford", "auto"):
        for direction in ("push", "pull"):
            with pytest.raises(gbla.NegativeCycleError, match=NEGATIVE_CYCLE):
                gbla.sssp(A, source, method=method, direction=direction, return_predecessors=True)


@G.FIXTURE_OK
@given(g=G.graphs(directed=True), data=st.data())
def test_an_unreachable_negative_cycle_is_harmless(device, g, data):
    # Vertices n and n + 1 carry a negative cycle (n -> n+1 -> n, weight -1) and edges into g,
    # but nothing of g leads to them.
    n = g.n
    into = data.draw(st.lists(st.integers(0, n - 1), max_size=3, unique=True), label="into")
    src = np.r_[g.src, n, n + 1, [n] * len(into)]
    dst = np.r_[g.dst, n + 1, n, into]
    w = np.r_[g.w, -4.0, 3.0, [-7.0] * len(into)]
    source = data.draw(st.integers(0, n - 1), label="source")
    A = gbla.Matrix.from_edges(src, dst, w, n + 2, device=device)
    expected = np.r_[dijkstra(g.scipy(), source), np.inf, np.inf]
    check_sssp(A, source, expected, methods=("bellman_ford", "auto"))
    with pytest.raises(gbla.NegativeCycleError, match=NEGATIVE_CYCLE):
        gbla.sssp(A, n)


def test_a_zero_weight_cycle_keeps_the_tree_acyclic(device):
    # 0 -1-> 1 -0-> 2 -0-> 3 -0-> 1 (a zero-weight cycle: 3 -> 1 is tight too), 3 -2-> 4
    A = gbla.Matrix.from_edges([0, 1, 2, 3, 3], [1, 2, 3, 1, 4], [1.0, 0, 0, 0, 2], device=device)
    check_sssp(A, 0, [0.0, 1, 1, 1, 3])
    _, pred = gbla.sssp(A, 0, return_predecessors=True)
    np.testing.assert_array_equal(host(pred), [0, 0, 1, 2, 3])


def test_a_zero_weight_cycle_through_negative_edges(device):
    # 0 -1-> 1 -(-3)-> 2 -3-> 1 (weight 0 around), 2 -(-1)-> 3
    A = gbla.Matrix.from_edges([0, 1, 2, 2], [1, 2, 1, 3], [1.0, -3, 3, -1], device=device)
    check_sssp(A, 0, [0.0, 1, -2, -3], methods=("bellman_ford", "auto"))
    _, pred = gbla.sssp(A, 0, return_predecessors=True)
    np.testing.assert_array_equal(host(pred), [0, 0, 1, 2])


def test_a_negative_edge_of_an_undirected_graph_is_a_negative_cycle(device):
    # 0 -2- 1 -(-1)- 2: 1 -> 2 -> 1 weighs -2
    A = gbla.Matrix.from_edges([0, 1, 1, 2], [1, 0, 2, 1], [2.0, 2, -1, -1], device=device)
    with pytest.raises(gbla.NegativeCycleError, match=NEGATIVE_CYCLE):
        gbla.sssp(A, 0)


# ============================================================================== degenerate graphs
@pytest.mark.parametrize("loop", [None, 0.0, 5.0])
def test_a_single_vertex(device, loop):
    A = gbla.Matrix.from_edges(
        [0] * (loop is not None),
        [0] * (loop is not None),
        [] if loop is None else [loop],
        n=1,
        device=device,
    )
    check_sssp(A, 0, [0.0])
    _, pred = gbla.sssp(A, 0, return_predecessors=True)
    np.testing.assert_array_equal(host(pred), [0])


def test_a_negative_self_loop_is_a_negative_cycle(device):
    # 0 -1-> 1 -> 1 (weight -1)
    A = gbla.Matrix.from_edges([0, 1], [1, 1], [1.0, -1.0], device=device)
    for method in ("bellman_ford", "auto"):
        with pytest.raises(gbla.NegativeCycleError, match=NEGATIVE_CYCLE):
            gbla.sssp(A, 0, method=method)
    # Reversed (1 -1-> 0, the loop on 1), vertex 0 reaches neither.
    check_sssp(A.T, 0, [0.0, np.inf], methods=("bellman_ford", "auto"))


def test_a_graph_without_edges_reaches_only_the_source(device):
    A = gbla.Matrix.from_edges([], [], [], n=5, device=device)
    check_sssp(A, 3, [np.inf, np.inf, np.inf, 0.0, np.inf])
    _, pred = gbla.sssp(A, 3, return_predecessors=True)
    np.testing.assert_array_equal(host(pred), [-1, -1, -1, 3, -1])


def test_an_isolated_source_reaches_nothing(device):
    # 0 <-> 1,  2 -> 3 (isolated source 3: edges into it only)
    A = gbla.Matrix.from_edges([0, 1, 2], [1, 0, 3], [1.0, 1.0, 4.0], device=device)
    check_sssp(A, 3, [np.inf, np.inf, np.inf, 0.0])


def test_self_loops_change_nothing(device):
    # 0 -2-> 1 -3-> 2, a self-loop (weights 0, 1, 7) on 0, 1, 2
    A = gbla.Matrix.from_edges([0, 0, 1, 1, 2], [0, 1, 1, 2, 2], [0.0, 2, 1, 3, 7], device=device)
    check_sssp(A, 0, [0.0, 2, 5])
    _, pred = gbla.sssp(A, 0, return_predecessors=True)
    np.testing.assert_array_equal(host(pred), [0, 0, 1])


@pytest.mark.parametrize("index_dtype", [None, np.int64])
def test_duplicate_scipy_entries_combine_by_dup_op(device, index_dtype):
    # 0 -> 1 given as 2 and 3, 1 -> 2 given as 1 and 1, 0 -> 2 weight 9, unsorted: the lightest
    # by default (2 and 1), SciPy's sum with plus (5 and 2)
    S = sp.coo_array(
        (np.array([1.0, 2, 9, 3, 1]), ([1, 0, 0, 0, 1], [2, 1, 2, 1, 2])), shape=(3, 3)
    )
    check_sssp(gbla.Matrix.from_scipy(S, device=device, index_dtype=index_dtype), 0, [0.0, 2, 3])
    check_sssp(
        gbla.Matrix.from_scipy(
            S, dup_op=gbla.semirings.binary.plus, device=device, index_dtype=index_dtype
        ),
        0,
        [0.0, 5, 7],
    )


def test_duplicate_edges_without_values_are_merged(device):
    # 2 -> 0 three times, 0 -> 1 twice: weight 1 each
    A = gbla.Matrix.from_edges([2, 0, 2, 0, 2], [0, 1, 0, 1, 0], n=3, device=device)
    check_sssp(A, 2, [1.0, 2, 0])


@pytest.mark.parametrize(
    "dup_op, expected", [(binary.min, [0.0, 2, 5]), (binary.plus, [0.0, 6, 9])]
)
def test_duplicate_weighted_edges_combine_with_dup_op(device, dup_op, expected):
    # 0 -> 1 with weights 4 and 2, 1 -> 2 weight 3
    A = gbla.Matrix.from_edges([0, 1, 0], [1, 2, 1], [4.0, 3, 2], dup_op=dup_op, device=device)
    check_sssp(A, 0, expected)


@pytest.mark.parametrize("via", ["edges", "scipy"])
def test_an_explicit_zero_is_a_zero_weight_edge(device, via):
    # 0 -0-> 1 -2-> 2
    if via == "edges":
        A = gbla.Matrix.from_edges([0, 1], [1, 2], [0.0, 2.0], device=device)
    else:
        S = sp.csr_array((np.array([0.0, 2.0]), ([0, 1], [1, 2])), shape=(3, 3))
        assert S.nnz == 2
        A = gbla.Matrix.from_scipy(S, device=device)
    check_sssp(A, 0, [0.0, 0.0, 2.0])


@pytest.mark.parametrize("index_dtype", [None, np.int64])
def test_unreachable_components_stay_unreached(device, index_dtype):
    # {0, 1, 2}: 0 -1-> 1 -1-> 2 -1-> 0;  {3, 4}: 3 <-2-> 4;  5 -1-> 0 (5 unreached from 0)
    A = gbla.Matrix.from_edges(
        [0, 1, 2, 3, 4, 5],
        [1, 2, 0, 4, 3, 0],
        [1.0, 1, 1, 2, 2, 1],
        device=device,
        index_dtype=index_dtype,
    )
    check_sssp(A, 0, [0.0, 1, 2, np.inf, np.inf, np.inf])
    _, pred = gbla.sssp(A, 0, return_predecessors=True)
    np.testing.assert_array_equal(host(pred), [0, 0, 1, -1, -1, -1])


def test_unsorted_scipy_indices_give_the_same_distances(device):
    # 0 -> {3: 1, 1: 5, 2: 2} stored in that order, 3 -> 4 weight 1, 2 -> 1 weight 1
    S = sp.csr_array(
        (np.array([1.0, 5, 2, 1, 1]), np.array([3, 1, 2, 1, 4]), np.array([0, 3, 3, 4, 5, 5])),
        shape=(5, 5),
    )
    assert not S.has_sorted_indices
    check_sssp(gbla.Matrix.from_scipy(S, device=device), 0, [0.0, 3, 2, 1, 2])


def test_a_scipy_matrix_is_searched_on_the_default_device():
    S = sp.csr_array((np.array([2.0, 3.0]), ([0, 1], [1, 2])), shape=(3, 3))
    dist = gbla.sssp(S, 0)
    np.testing.assert_array_equal(host(dist), [0.0, 2.0, 5.0])
    assert isinstance(dist, np.ndarray) == (gbla.default_device() == "cpu")


def test_the_callers_matrix_is_not_modified():
    S = sp.csr_array((np.array([3.0, -1.0, 5.0]), ([0, 1, 0], [1, 2, 2])), shape=(3, 3))
    before = (S.data.copy(), S.indices.copy(), S.indptr.copy())
    gbla.sssp(S, 0, return_predecessors=True)
    for a, b in zip(before, (S.data, S.indices, S.indptr)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", ["bellman_ford", "delta_stepping"])
def test_an_infinite_weight_reaches_nothing(device, method):
    # 0 -inf-> 1 -1-> 2
    A = gbla.Matrix.from_edges([0, 1], [1, 2], [np.inf, 1.0], device=device)
    for _ in range(2):  # the second search reads what the first found of the weights
        dist, pred = gbla.sssp(A, 0, method=method, return_predecessors=True)
        np.testing.assert_array_equal(host(dist), [0.0, np.inf, np.inf])
        np.testing.assert_array_equal(host(pred), [0, -1, -1])
    np.testing.assert_array_equal(host(gbla.sssp(A, 1, method=method)), [np.inf, 0.0, 1.0])


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("method", ["bellman_ford", "delta_stepping"])
def test_a_path_sum_overflowing_to_inf_reaches_nothing(device, method):
    # 0 -1e308-> 1 -1e308-> 2: 2e308 is not a float64
    A = gbla.Matrix.from_edges([0, 1], [1, 2], [1e308, 1e308], device=device)
    with no_endless_loop():
        dist, pred = gbla.sssp(A, 0, method=method, return_predecessors=True)
    np.testing.assert_array_equal(host(dist), [0.0, 1e308, np.inf])
    np.testing.assert_array_equal(host(pred), [0, 0, -1])


# ============================================================================== bad input
@pytest.mark.parametrize("source, error", G.BAD_SOURCES, ids=repr)
def test_a_bad_source_is_rejected(device, source, error):
    A = gbla.Matrix.from_edges([0, 1], [1, 2], [1.0, 2.0], n=4, device=device)
    with pytest.raises(error, match=r"^source must .*; got "):
        gbla.sssp(A, source)


@pytest.mark.parametrize("bad", [np.nan, -np.inf])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("via", ["edges", "scipy"])
def test_a_nan_or_minus_inf_weight_is_rejected_with_its_position(device, bad, dtype, via):
    w = np.array([1.0, bad, 2.0], dtype)
    if via == "edges":
        A = gbla.Matrix.from_edges([0, 1, 2], [1, 2, 0], w, device=device)
    else:
        A = gbla.Matrix.from_scipy(
            sp.csr_array((w, ([0, 1, 2], [1, 2, 0])), shape=(3, 3)), device=device
        )
    for method in METHODS:
        with pytest.raises(
            gbla.InvalidValue,
            match=rf"^A must hold no NaN or -inf weight; "
            rf"got '{bad} at \(1, 2\)'",
        ):
            gbla.sssp(A, 0, method=method)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"method": "dijkstra"}, gbla.UnknownName, "^method must"),
        ({"method": None}, gbla.UnknownName, "^method must"),
        ({"direction": "sideways"}, gbla.InvalidValue, "^direction must"),
        ({"return_predecessors": 1}, gbla.InvalidValue, "^return_predecessors must"),
        ({"delta": 0}, gbla.InvalidValue, "^delta must be a positive finite number"),
        ({"delta": -1.0}, gbla.InvalidValue, "^delta must be a positive finite number"),
        ({"delta": np.inf}, gbla.InvalidValue, "^delta must be a positive finite number"),
        ({"delta": np.nan}, gbla.InvalidValue, "^delta must be a positive finite number"),
        ({"delta": True}, gbla.InvalidValue, "^delta must be a positive finite number"),
        ({"delta": "1"}, gbla.InvalidValue, "^delta must be a positive finite number"),
        (
            {"delta": 1.0, "method": "bellman_ford"},
            gbla.InvalidValue,
            "^delta must be None with method='bellman_ford'",
        ),
    ],
    ids=repr,
)
def test_a_bad_keyword_is_rejected_by_name(device, kwargs, error, match):
    A = gbla.Matrix.from_edges([0, 1], [1, 2], [1.0, 2.0], n=3, device=device)
    with pytest.raises(error, match=match):
        gbla.sssp(A, 0, **kwargs)


def test_a_negative_weight_is_rejected_by_delta_stepping(device):
    A = gbla.Matrix.from_edges([0, 1], [1, 2], [1.0, -2.0], device=device)
    with pytest.raises(
        gbla.InvalidValue,
        match=r"^A must hold no negative weight with "
        r"method='delta_stepping'; got -2.0",
    ):
        gbla.sssp(A, 0, method="delta_stepping")


def test_auto_runs_the_rule_or_delta_stepping_when_a_delta_is_given(device):
    # 0 -1-> 1 -2-> 2: a small graph whose weights differ, of a road network's degrees: the
    # algebra's Bellman-Ford on either device (on the GPU by the rule)
    A = gbla.Matrix.from_edges([0, 1], [1, 2], [1.0, 2.0], device=device)
    for delta, method in ((None, "bellman_ford"), (0.5, "delta_stepping")):
        stats = {}
        dist = gbla.sssp(A, 0, delta=delta, stats=stats)
        np.testing.assert_array_equal(host(dist), [0.0, 1.0, 3.0])
        assert stats["method"] == method
    negative = gbla.Matrix.from_edges([0, 1], [1, 2], [1.0, -2.0], device=device)
    with pytest.raises(
        gbla.InvalidValue,
        match=r"^delta must be None where a weight is "
        r"negative \(method='auto' then runs Bellman-Ford.*; got 0.5$",
    ):
        gbla.sssp(negative, 0, delta=0.5)


def test_a_non_square_or_non_sparse_graph_is_rejected():
    with pytest.raises(gbla.DimensionMismatch, match=r"^A must be square"):
        gbla.sssp(sp.csr_array(np.ones((2, 3))), 0)
    with pytest.raises(gbla.DomainMismatch, match=r"^A must be a gbla.Matrix"):
        gbla.sssp(np.ones((2, 2)), 0)


# ============================================================================== real graphs
def test_rome99_dimacs(device):
    src, dst, w, n = G.read_dimacs("weighted/rome99.gr")
    assert (n, len(src)) == (3353, 8870)
    S = G.csr(src, dst, w, n)  # 11 parallel arcs: the shortest counts
    A = gbla.Matrix.from_edges(src, dst, w, n, dup_op=binary.min, device=device)
    for source in (0, 1234, n - 1):
        check_sssp(A, source, dijkstra(S, source))


@pytest.mark.parametrize("relative", ["weighted/OL.mtx.gz", "weighted/TG.mtx.gz"])
def test_road_networks_with_float_lengths(device, relative):
    S = G.read_mtx(relative)
    A = gbla.Matrix.from_scipy(S, device=device)
    directions = DIRECTIONS if device == "gpu" else ("auto",)
    for source in (0, S.shape[0] // 2):
        check_sssp(A, source, dijkstra(S, source), rtol=1e-9, directions=directions)


@pytest.mark.parametrize("name", ["NY", "BAY"])
def test_dimacs_files_declaring_too_few_vertices(device, name):
    # The p line of these excerpts declares fewer vertices than the arcs use: a Matrix of the
    # declared size is refused by name, one sized by the arcs is searched.
    src, dst, w, n = G.read_dimacs(f"weighted/USA-road-d.{name}.first50k.gr")
    with pytest.raises(gbla.InvalidIndex, match=r"^(src|dst) must hold indices < "):
        gbla.Matrix.from_edges(src, dst, w, n, dup_op=binary.min, device=device)
    if device != "gpu":
        return  # a quarter of a million vertices, mostly unreached: GPU only
    A = gbla.Matrix.from_edges(src, dst, w, dup_op=binary.min, device=device)
    S = G.csr(src, dst, w, A.nrows)
    check_sssp(A, int(src[0]), dijkstra(S, int(src[0])))


LDBC_CASES = {
    # name: (vertex file, edge file, expected output, directed)
    "sssp-dir": ("sssp__dir-input.v", "sssp__dir-input.e", "sssp__dir-output", True),
    "sssp-undir": ("sssp__undir-input.v", "sssp__undir-input.e", "sssp__undir-output", False),
    "example-directed": (
        "example__example-directed.v",
        "example__example-directed.e",
        "example__example-directed-SSSP",
        True,
    ),
    "example-undirected": (
        "example__example-undirected.v",
        "example__example-undirected.e",
        "example__example-undirected-SSSP",
        False,
    ),
}


@pytest.mark.parametrize("case", sorted(LDBC_CASES))
def test_ldbc_graphalytics_expected_distances(device, case):
    vertices, edges, output, directed = LDBC_CASES[case]
    ids = G.ldbc_vertices(f"tiny/ldbc/{vertices}")
    out_ids, expected = G.ldbc_output(f"tiny/ldbc/{output}")
    np.testing.assert_array_equal(out_ids, ids)
    S = G.ldbc_edges(f"tiny/ldbc/{edges}", ids, directed=directed)
    (source,) = np.flatnonzero(expected == 0)
    # The outputs are printed decimals of double sums: equal to 1e-12.
    check_sssp(gbla.Matrix.from_scipy(S, device=device), source, expected, rtol=1e-12)


@pytest.mark.parametrize(
    "name", ["karate", "dolphins", "netscience", "karate-disjoint", "polbooks"]
)
def test_cugraph_weighted_csv(device, name):
    src, dst, w, n = G.read_weighted_edges(f"tiny/cugraph/{name}.csv")
    A = gbla.Matrix.from_edges(src, dst, w, n, device=device)
    S = G.csr(src, dst, w, n)
    for source in (0, n - 1):
        check_sssp(A, source, dijkstra(S, source), rtol=1e-12)


def test_cugraph_networkx_dijkstra_distances(device):
    cases = [
        (args, values)
        for args, values in G.cugraph_results("single_source_dijkstra_path_length")
        if "test" not in args
    ]
    assert len(cases) == 3
    for args, values in cases:
        src, dst, w, n = G.read_weighted_edges(f"tiny/cugraph/{args['graph_dataset']}.csv")
        A = gbla.Matrix.from_edges(src, dst, w, n, device=device)
        expected = np.full(n, np.inf)
        expected[list(values)] = list(values.values())
        dist = gbla.sssp(A, int(args["source"]))
        np.testing.assert_allclose(host(dist), expected, rtol=1e-12, err_msg=repr(args))


def test_gapbs_weighted_multigraph(device):
    # 256 arcs on 14 vertices with repeated arcs and self-loops; the .gr file is the same graph,
    # 1-based.
    src, dst, w, n = G.read_weighted_edges("tiny/gapbs/4.wel")
    A = gbla.Matrix.from_edges(src, dst, w, n, dup_op=binary.min, device=device)
    gsrc, gdst, gw, gn = G.read_dimacs("tiny/gapbs/4.gr")
    assert gn == n
    np.testing.assert_array_equal(np.c_[gsrc, gdst, gw], np.c_[src, dst, w])
    S = G.csr(src, dst, w, n)
    for source in range(n):
        check_sssp(A, source, dijkstra(S, source), directions=("push", "pull"))


def test_auto_knows_the_degree_up_to_which_the_algebras_rounds_go_deeper():
    from gbla.kernels import _spmv

    rule = importlib.import_module("gbla.algorithms.sssp")
    assert rule.AUTO_CHASE_DEGREE == _spmv.DIRECT_DEGREE > 0


def test_auto_reads_equal_weights_and_the_largest_degree_once():
    rule = importlib.import_module("gbla.algorithms.sssp")
    src, dst = [0, 0, 0, 1, 2], [1, 2, 3, 2, 3]
    unweighted = gbla.Matrix.from_edges(src, dst, n=4, device="cpu").pattern()
    ones = gbla.Matrix.from_edges(src, dst, [2.5] * 5, n=4, device="cpu")
    mixed = gbla.Matrix.from_edges(src, dst, [2.5, 2.5, 1.0, 2.5, 2.5], n=4, device="cpu")
    zero = gbla.Matrix.from_edges(src, dst, [0.0] * 5, n=4, device="cpu")
    assert rule._equal_weights(unweighted) and rule._equal_weights(ones)
    assert not rule._equal_weights(mixed)
    assert not rule._equal_weights(zero)  # equal, but not positive: a search of ties
    assert ones._largest_degree() == 3
    assert "degrees" not in ones._cache  # the number is kept, not the n degrees
    ones._cache["largest_degree"] = 7  # kept with the matrix: read once
    assert ones._largest_degree() == 7
    assert gbla.Matrix.from_edges([], [], [], n=0, device="cpu")._largest_degree() == 0


@pytest.mark.parametrize(
    "shape, expected",
    [
        ("small", "single_block_bellman_ford"),  # unweighted, at most AUTO_TINY vertices
        ("small_weighted", "bellman_ford"),  # weights that differ, a road network's degrees
        ("sparse", "bellman_ford"),  # past AUTO_TINY, at most 3 out-edges a vertex
        ("mesh", "async_delta_stepping_fixed"),  # 6 out-edges a vertex: past AUTO_SPARSE
        ("spread", "async_delta_stepping_fixed"),  # one of 43: past AUTO_CHASE_DEGREE, no hub
        ("dense", "edge_bellman_ford"),  # average out-degree at least AUTO_DENSE
        ("hubs", "edge_bellman_ford"),  # a vertex of AUTO_SPREAD times the average out-degree
    ],
)
def test_auto_picks_a_method_by_size_weights_and_degrees_on_the_gpu(shape, expected):
    rule = importlib.import_module("gbla.algorithms.sssp")  # the module, not the function
    n = {"small": 100, "small_weighted": 100, "dense": 20_000, "hubs": 20_000}.get(shape, 60_000)
    degree = {"dense": 24, "mesh": 6}.get(shape, 3)
    rng = np.random.default_rng(2)
    src = np.repeat(np.arange(n), degree)
    if shape in ("hubs", "spread"):  # vertex 0: 1,000 more out-edges (over 300 times the
        # average 3.05), or 40
        src = np.r_[src, np.zeros(1000 if shape == "hubs" else 40, np.int64)]
    w = rng.integers(1, 10, len(src)) if shape == "small_weighted" else np.ones(len(src))
    A = gbla.Matrix.from_edges(
        src, rng.integers(0, n, len(src)), w.astype(np.float64), n, device="cpu"
    )
    assert rule.auto_method(A, 1.0) == "bellman_ford"  # the CPU: the algebra
    if not gbla.gpu_available():
        return
    G = A.to_device("gpu")
    assert rule.auto_method(G, 1.0) == expected
    assert rule.auto_method(G, -1.0) == "bellman_ford"  # a negative weight: the algebra
    assert rule.auto_method(G, 1.0, "push") == "bellman_ford"  # a direction: the algebra
    stats = {}
    dist = gbla.sssp(G, 0, stats=stats)
    assert stats["method"] == expected
    np.testing.assert_array_equal(host(dist), host(gbla.sssp(A, 0)))


@pytest.mark.parametrize("method", ["bellman_ford", "delta_stepping"])
def test_auto_relaxes_under_the_rule_without_memory(method):
    """direction='auto' is RELAXATION_POLICY for the algebra's methods: the same choices (the
    same edges examined) as that policy given, others than GAP's rule on a grid, and the
    same distances as SciPy's."""
    sssp_module = importlib.import_module("gbla.algorithms.sssp")  # the module, not the function
    A = gbla.generators.with_weights(gbla.generators.grid2d(40, 40, device="cpu"), 1, 255)
    edges = {}
    for name, direction in [
        ("auto", "auto"),
        ("relaxation", sssp_module.RELAXATION_POLICY),
        ("gap", gbla.DEFAULT_POLICY),
    ]:
        stats = {}
        dist = gbla.sssp(A, 0, method=method, direction=direction, stats=stats)
        np.testing.assert_array_equal(host(dist), dijkstra(A.to_scipy(), 0))
        edges[name] = stats["edges_relaxed"]
    assert edges["auto"] == edges["relaxation"] != edges["gap"]
    assert methods.get(method).auto_policy is sssp_module.RELAXATION_POLICY
    assert not sssp_module.RELAXATION_POLICY.memory
