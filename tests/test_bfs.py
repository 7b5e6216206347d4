"""gbla.bfs against SciPy's csgraph (hop distances) on random and degenerate graphs, on the real
graphs in ../shared/data, and against the expected outputs shipped by LDBC Graphalytics and
cuGraph. Levels are unique and compared exactly in every direction; parent trees are not unique
and are checked with gbla.verify.bfs (Graph500's rules) instead.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csgraph

import gbla

from . import graphs as G
from .conftest import host

# A policy that flips at nearly every level (pull as soon as anything is unexplored, push again
# as soon as the frontier is smaller than n), so that both products and the switch between
# them run on small graphs.
FLIPPING = gbla.DirectionPolicy(alpha=1e9, beta=1.0)
DIRECTIONS = ("push", "pull", "auto", FLIPPING)


def direction_id(direction):
    return "flipping" if direction is FLIPPING else direction


def expected_levels(S, source):
    """Hop distances from SciPy: -1 where unreached."""
    d = csgraph.shortest_path(S, unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def check_bfs(A, S, source, directions=DIRECTIONS):
    """Levels equal SciPy's in every direction, with and without parents; parents validate."""
    expected = expected_levels(S, source)
    for direction in directions:
        levels = gbla.bfs(A, source, direction=direction)
        assert host(levels).dtype == np.int32
        np.testing.assert_array_equal(host(levels), expected, err_msg=f"direction={direction}")
        levels, parents = gbla.bfs(A, source, return_predecessors=True, direction=direction)
        np.testing.assert_array_equal(host(levels), expected, err_msg=f"direction={direction}")
        assert host(parents).dtype == np.int32
        gbla.verify.bfs(A, source, levels, parents)


# ============================================================================== random graphs
@G.FIXTURE_OK
@given(g=G.graphs(), data=st.data())
def test_levels_match_scipy_in_every_direction(device, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    index_dtype = data.draw(st.sampled_from([None, np.int64]), label="index_dtype")
    via = data.draw(st.sampled_from(["edges", "scipy"]), label="via")
    A = g.matrix(device, index_dtype=index_dtype, via=via)
    check_bfs(A, g.scipy(), source)


@G.FIXTURE_OK
@given(g=G.medium_graphs(), data=st.data())
def test_medium_graphs_match_scipy_in_every_direction(device, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    check_bfs(g.matrix(device), g.scipy(), source)


@settings(G.FIXTURE_OK, max_examples=20)
@given(g=G.graphs(), data=st.data())
def test_depth_limit_stops_after_that_many_levels(device, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    limit = data.draw(st.integers(0, g.n), label="depth_limit")
    A, S = g.matrix(device), g.scipy()
    full = expected_levels(S, source)
    expected = np.where(full <= limit, full, -1)
    # Without the out-edges of the last level (and of unreached vertices) the truncated search
    # is a complete one, which the validator can check.
    rows = np.repeat(np.arange(g.n), np.diff(S.indptr))
    inner = (expected[rows] >= 0) & (expected[rows] < limit)
    cut = G.csr(rows[inner], S.indices[inner], S.data[inner], g.n)
    for direction in ("push", "pull", "auto"):
        levels, parents = gbla.bfs(
            A, source, return_predecessors=True, depth_limit=limit, direction=direction
        )
        np.testing.assert_array_equal(host(levels), expected, err_msg=f"direction={direction}")
        gbla.verify.bfs(cut, source, levels, parents)


def test_a_scipy_matrix_is_searched_on_the_default_device():
    # 0 -> 1 -> 2    3
    S = sp.csr_array((np.ones(2), ([0, 1], [1, 2])), shape=(4, 4))
    levels = gbla.bfs(S, 0)
    np.testing.assert_array_equal(host(levels), [0, 1, 2, -1])
    assert isinstance(levels, np.ndarray) == (gbla.default_device() == "cpu")


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil", "csr_matrix"])
def test_every_scipy_format_gives_the_same_levels(device, fmt):
    # 0 -> 1 -> 3 -> 4,  0 -> 2 -> 3
    S = sp.csr_array((np.ones(5), ([0, 0, 1, 2, 3], [1, 2, 3, 3, 4])), shape=(5, 5))
    S = sp.csr_matrix(S) if fmt == "csr_matrix" else S.asformat(fmt)
    levels = gbla.bfs(gbla.Matrix.from_scipy(S, device=device), 0)
    np.testing.assert_array_equal(host(levels), [0, 1, 1, 2, 3])


# ============================================================================== degenerate graphs
def test_an_edge_runs_from_row_to_column(device):
    # Entry (1, 0): the edge 1 -> 0, so 0 reaches nothing and 1 reaches 0.
    A = gbla.Matrix.from_edges([1], [0], n=2, device=device)
    np.testing.assert_array_equal(host(gbla.bfs(A, 0)), [0, -1])
    np.testing.assert_array_equal(host(gbla.bfs(A, 1)), [1, 0])


@pytest.mark.parametrize("direction", DIRECTIONS, ids=direction_id)
@pytest.mark.parametrize("loop", [False, True])
def test_a_single_vertex_is_its_own_tree(device, direction, loop):
    A = gbla.Matrix.from_edges([0] * loop, [0] * loop, n=1, device=device)
    levels, parents = gbla.bfs(A, 0, return_predecessors=True, direction=direction)
    np.testing.assert_array_equal(host(levels), [0])
    np.testing.assert_array_equal(host(parents), [0])


@pytest.mark.parametrize("direction", DIRECTIONS, ids=direction_id)
def test_a_graph_without_edges_reaches_only_the_source(device, direction):
    A = gbla.Matrix.from_edges([], [], n=5, device=device)
    levels, parents = gbla.bfs(A, 3, return_predecessors=True, direction=direction)
    np.testing.assert_array_equal(host(levels), [-1, -1, -1, 0, -1])
    np.testing.assert_array_equal(host(parents), [-1, -1, -1, 3, -1])


@pytest.mark.parametrize("direction", DIRECTIONS, ids=direction_id)
def test_an_isolated_source_reaches_nothing(device, direction):
    # 0 <-> 1 <-> 2,  4 -> 3: the source 3 has no out-edge (its one in-edge does not count)
    A = gbla.Matrix.from_edges([0, 1, 1, 2, 4], [1, 0, 2, 1, 3], n=5, device=device)
    levels, parents = gbla.bfs(A, 3, return_predecessors=True, direction=direction)
    np.testing.assert_array_equal(host(levels), [-1, -1, -1, 0, -1])
    np.testing.assert_array_equal(host(parents), [-1, -1, -1, 3, -1])


@pytest.mark.parametrize("direction", DIRECTIONS, ids=direction_id)
def test_self_loops_change_nothing(device, direction):
    # 0 -> 1 -> 2 with a self-loop on every vertex; 3 has only its self-loop.
    A = gbla.Matrix.from_edges([0, 0, 1, 1, 2, 3], [0, 1, 1, 2, 2, 3], n=4, device=device)
    levels, parents = gbla.bfs(A, 0, return_predecessors=True, direction=direction)
    np.testing.assert_array_equal(host(levels), [0, 1, 2, -1])
    np.testing.assert_array_equal(host(parents), [0, 0, 1, -1])
    gbla.verify.bfs(A, 0, levels, parents)


@pytest.mark.parametrize("index_dtype", [None, np.int64])
def test_duplicate_scipy_entries_are_one_edge(device, index_dtype):
    # 0 -> 1 given three times (1 + 1 - 2: summed to an explicit zero, still an edge),
    # 1 -> 2 twice, unsorted.
    S = sp.coo_array(
        (
            np.array([1.0, 2.0, 1.0, 1.0, -2.0]),
            (np.array([1, 0, 1, 0, 0]), np.array([2, 1, 2, 1, 1])),
        ),
        shape=(4, 4),
    )
    A = gbla.Matrix.from_scipy(S, device=device, index_dtype=index_dtype)
    levels, parents = gbla.bfs(A, 0, return_predecessors=True)
    np.testing.assert_array_equal(host(levels), [0, 1, 2, -1])
    np.testing.assert_array_equal(host(parents), [0, 0, 1, -1])


def test_duplicate_unweighted_edges_are_merged(device):
    # 2 -> 0 three times, 0 -> 1 twice
    A = gbla.Matrix.from_edges([2, 0, 2, 0, 2], [0, 1, 0, 1, 0], n=3, device=device)
    levels, parents = gbla.bfs(A, 2, return_predecessors=True)
    np.testing.assert_array_equal(host(levels), [1, 2, 0])
    np.testing.assert_array_equal(host(parents), [2, 0, 2])


def test_unsorted_scipy_indices_give_the_same_levels(device):
    # 0 -> {3, 1, 2} stored in that order, 3 -> 4
    S = sp.csr_array(
        (np.ones(4), np.array([3, 1, 2, 4]), np.array([0, 3, 3, 3, 4, 4])), shape=(5, 5)
    )
    assert not S.has_sorted_indices
    levels = gbla.bfs(gbla.Matrix.from_scipy(S, device=device), 0)
    np.testing.assert_array_equal(host(levels), [0, 1, 1, 1, 2])


def test_values_are_ignored_even_false_or_zero(device):
    # 0 -False-> 1 -0.0-> 2: both stored entries are edges
    S = sp.csr_array((np.array([True, False]), ([0, 1], [1, 2])), shape=(3, 3))
    np.testing.assert_array_equal(
        host(gbla.bfs(gbla.Matrix.from_scipy(S, device=device), 0)), [0, 1, 2]
    )
    Z = sp.csr_array((np.array([0.0, 0.0]), ([0, 1], [1, 2])), shape=(3, 3))
    np.testing.assert_array_equal(
        host(gbla.bfs(gbla.Matrix.from_scipy(Z, device=device), 0)), [0, 1, 2]
    )


@pytest.mark.parametrize("index_dtype", [None, np.int64])
@pytest.mark.parametrize("direction", DIRECTIONS, ids=direction_id)
def test_unreachable_components_stay_unreached(device, index_dtype, direction):
    # component {0, 1, 2}: 0 -> 1 -> 2 -> 0;  component {3, 4}: 3 <-> 4;  5 -> 0 (5 unreached
    # from 0 though it has an edge into the component)
    A = gbla.Matrix.from_edges(
        [0, 1, 2, 3, 4, 5], [1, 2, 0, 4, 3, 0], n=6, device=device, index_dtype=index_dtype
    )
    assert A.index_dtype == (np.int64 if index_dtype else np.int32)
    levels, parents = gbla.bfs(A, 0, return_predecessors=True, direction=direction)
    np.testing.assert_array_equal(host(levels), [0, 1, 2, -1, -1, -1])
    np.testing.assert_array_equal(host(parents), [0, 0, 1, -1, -1, -1])


@pytest.mark.parametrize("source", [np.int32(2), np.int64(2), np.uint8(2), np.array(2)])
def test_numpy_integer_sources_are_accepted(device, source):
    A = gbla.Matrix.from_edges([2, 0], [0, 1], n=3, device=device)
    np.testing.assert_array_equal(host(gbla.bfs(A, source)), [1, 2, 0])


def test_the_callers_matrix_is_not_modified():
    S = sp.csr_array((np.array([3.0, 0.0, 5.0]), ([0, 1, 0], [1, 2, 2])), shape=(3, 3))
    before = (S.data.copy(), S.indices.copy(), S.indptr.copy())
    gbla.bfs(S, 0, return_predecessors=True)
    for a, b in zip(before, (S.data, S.indices, S.indptr)):
        np.testing.assert_array_equal(a, b)


# ============================================================================== bad input
@pytest.mark.parametrize("source, error", G.BAD_SOURCES, ids=repr)
def test_a_bad_source_is_rejected(device, source, error):
    A = gbla.Matrix.from_edges([0, 1], [1, 2], n=4, device=device)
    with pytest.raises(error, match=r"^source must .*; got "):
        gbla.bfs(A, source)


def test_no_source_exists_in_an_empty_graph(device):
    A = gbla.Matrix.from_edges([], [], n=0, device=device)
    with pytest.raises(gbla.InvalidIndex, match=r"source must satisfy 0 <= source < 0; got 0"):
        gbla.bfs(A, 0)


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        ({"method": "dfs"}, gbla.UnknownName, "method"),
        ({"method": 3}, gbla.UnknownName, "method"),
        ({"direction": "sideways"}, gbla.InvalidValue, "direction"),
        ({"direction": None}, gbla.InvalidValue, "direction"),
        ({"depth_limit": -1}, gbla.InvalidValue, "depth_limit"),
        ({"depth_limit": 1.5}, gbla.InvalidValue, "depth_limit"),
        ({"depth_limit": True}, gbla.InvalidValue, "depth_limit"),
        ({"return_predecessors": 1}, gbla.InvalidValue, "return_predecessors"),
        ({"return_predecessors": "yes"}, gbla.InvalidValue, "return_predecessors"),
    ],
    ids=repr,
)
def test_a_bad_keyword_is_rejected_by_name(device, kwargs, error, name):
    A = gbla.Matrix.from_edges([0, 1], [1, 2], n=3, device=device)
    with pytest.raises(error, match=rf"^{name} must .*; got "):
        gbla.bfs(A, 0, **kwargs)


def test_a_non_square_matrix_is_rejected():
    with pytest.raises(gbla.DimensionMismatch, match=r"^A must be square.*shape \(2, 3\)"):
        gbla.bfs(sp.csr_array(np.ones((2, 3))), 0)


@pytest.mark.parametrize("A", [np.eye(3), [[0, 1], [0, 0]], None], ids=repr)
def test_a_graph_that_is_not_a_sparse_matrix_is_rejected(A):
    with pytest.raises(gbla.DomainMismatch, match=r"^A must be a gbla.Matrix"):
        gbla.bfs(A, 0)


# ============================================================================== real graphs
def sources_of(S):
    """Vertex 0, the vertex of largest out-degree and the last vertex."""
    return sorted({0, int(np.argmax(np.diff(S.indptr))), S.shape[0] - 1})


def test_road_luxembourg(device):
    S = G.read_mtx("road/luxembourg_osm.mtx.gz")
    assert S.shape == (114599, 114599)
    A = gbla.Matrix.from_scipy(S, device=device)
    # A diameter of about a thousand levels: on the CPU only the default direction runs
    # (pull alone takes seconds there); every direction runs on the GPU.
    directions = DIRECTIONS if device == "gpu" else ("auto",)
    check_bfs(A, S, 0, directions)


@pytest.mark.parametrize(
    "name",
    ["USA-road-NY", "USA-road-BAY", "USA-road-COL", "USA-road-FLA", "USA-road-NW", "USA-road-NE"],
)
def test_large_road_networks_on_the_gpu(device, name):
    if device != "gpu":
        pytest.skip("hundreds of thousands of vertices and a diameter in the thousands: GPU only")
    S = G.read_mtx(f"road/{name}.mtx.gz")
    A = gbla.Matrix.from_scipy(S, device=device)
    check_bfs(A, S, 0, ("auto",))


@pytest.mark.parametrize(
    "relative, read",
    [
        ("social/email-Eu-core.txt.gz", G.read_snap),
        ("social/p2p-Gnutella08.txt", G.read_snap),
        ("mesh/delaunay_n15.graph.gz", G.read_metis),
        ("small/power.graph", G.read_metis),
        ("small/PGPgiantcompo.graph", G.read_metis),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_real_graphs_in_every_direction(device, relative, read):
    S = read(relative)
    A = gbla.Matrix.from_scipy(S, device=device)
    for source in sources_of(S):
        check_bfs(A, S, source)


@pytest.mark.parametrize(
    "relative, read",
    [
        ("social/p2p-Gnutella31.txt.gz", G.read_snap),
        ("social/Wiki-Vote.txt.gz", G.read_snap),
        ("social/soc-Slashdot0902.directed.mtx.gz", G.read_mtx),
        ("social/web-Stanford.relabeled.mtx.gz", G.read_mtx),
        ("social/ego-Twitter.undirected.mtx.gz", G.read_mtx),
        ("mesh/rgg_n_2_15_s0.graph.gz", G.read_metis),
        ("mesh/delaunay_n16.mtx.gz", G.read_mtx),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_larger_real_graphs_on_the_gpu(device, relative, read):
    if device != "gpu":
        pytest.skip("too large for the CPU run")
    S = read(relative)
    A = gbla.Matrix.from_scipy(S, device=device)
    for source in sources_of(S):
        check_bfs(A, S, source)


def test_the_metis_reader_gives_the_documented_sizes():
    # A reader that dropped or doubled edges would make the comparisons above vacuous.
    S = G.read_metis("small/power.graph")
    assert S.shape == (4941, 4941) and S.nnz == 2 * 6594
    assert (S != S.T).nnz == 0


# ============================================================================== expected outputs
LDBC_CASES = {
    # name: (graph files, expected output, directed)
    "bfs-dir": (("bfs__dir-input",), "bfs__dir-output", True),
    "bfs-undir": (("bfs__undir-input",), "bfs__undir-output", False),
    "example-directed": (
        ("example__example-directed.v", "example__example-directed.e"),
        "example__example-directed-BFS",
        True,
    ),
    "example-undirected": (
        ("example__example-undirected.v", "example__example-undirected.e"),
        "example__example-undirected-BFS",
        False,
    ),
}


@pytest.mark.parametrize("case", sorted(LDBC_CASES))
def test_ldbc_graphalytics_expected_levels(device, case):
    files, output, directed = LDBC_CASES[case]
    ids, expected = G.ldbc_output(f"tiny/ldbc/{output}")
    if len(files) == 1:  # adjacency lists over the output's vertex ids
        S = G.ldbc_adjacency(f"tiny/ldbc/{files[0]}", ids, directed=directed)
    else:
        vertices = G.ldbc_vertices(f"tiny/ldbc/{files[0]}")
        np.testing.assert_array_equal(vertices, ids)
        S = G.ldbc_edges(f"tiny/ldbc/{files[1]}", ids, directed=directed)
    (source,) = np.flatnonzero(expected == 0)
    A = gbla.Matrix.from_scipy(S, device=device)
    for direction in DIRECTIONS:
        levels, parents = gbla.bfs(A, source, return_predecessors=True, direction=direction)
        np.testing.assert_array_equal(host(levels), expected, err_msg=f"direction={direction}")
        gbla.verify.bfs(A, source, levels, parents)


def test_cugraph_networkx_levels_with_cutoffs(device):
    """NetworkX's single_source_shortest_path_length(G, s, cutoff) is bfs with depth_limit:
    vertices it lists are exactly those reached, at the same level."""
    cases = G.cugraph_results("single_source_shortest_path_length")
    assert len(cases) == 32
    for args, values in cases:
        src, dst, w, n = G.read_weighted_edges(f"tiny/cugraph/{args['graph_dataset']}.csv")
        S = G.csr(src, dst, w, n)
        if args["graph_directed"] == "False":
            S = G.symmetrized(S)
        A = gbla.Matrix.from_scipy(S, device=device)
        limit = None if args["cutoff"] == "None" else int(args["cutoff"])
        expected = np.full(n, -1)
        expected[list(values)] = list(values.values())
        levels = gbla.bfs(A, int(args["start_vertex"]), depth_limit=limit)
        np.testing.assert_array_equal(host(levels), expected, err_msg=repr(args))


def test_bfs_and_sssp_take_one_name_for_the_tree_and_the_old_one_warns(device):
    A = gbla.Matrix.from_edges([0, 1], [1, 2], n=3, device=device)
    levels, parents = gbla.bfs(A, 0, return_predecessors=True)
    dist, pred = gbla.sssp(A, 0, return_predecessors=True)
    np.testing.assert_array_equal(host(parents), host(pred))
    with pytest.warns(DeprecationWarning, match="return_predecessors"):
        old = gbla.bfs(A, 0, return_parents=True)
    np.testing.assert_array_equal(host(old[1]), host(parents))
    with pytest.warns(DeprecationWarning), pytest.raises(gbla.InvalidValue, match="return_parents"):
        gbla.bfs(A, 0, return_predecessors=True, return_parents=False)


# ============================================================================== algebraic_relax
RELAX = "algebraic_relax"


@settings(G.FIXTURE_OK, max_examples=30)
@given(g=G.graphs(), data=st.data())
def test_levels_by_relaxation_match_scipy_with_a_valid_tree_and_a_cut(device, g, data):
    # the levels as min.+ distances over unit weights, relaxed hops deep a round on the GPU:
    # SciPy's hop distances in every direction, a valid BFS tree read off them, and a
    # depth_limit cutting them after the search
    source = data.draw(st.integers(0, g.n - 1), label="source")
    A = g.matrix(device, index_dtype=data.draw(st.sampled_from([None, np.int64])))
    expected = expected_levels(g.scipy(), source)
    for direction in DIRECTIONS:
        levels, parents = gbla.bfs(
            A, source, method=RELAX, return_predecessors=True, direction=direction
        )
        assert host(levels).dtype == host(parents).dtype == np.int32
        np.testing.assert_array_equal(host(levels), expected, err_msg=direction_id(direction))
        gbla.verify.bfs(A, source, levels, parents)
    limit = data.draw(st.integers(0, 4), label="depth_limit")
    cut, tree = gbla.bfs(A, source, method=RELAX, depth_limit=limit, return_predecessors=True)
    np.testing.assert_array_equal(host(cut), np.where(expected <= limit, expected, -1))
    p, lv = host(tree), host(cut)
    assert p[source] == source and (p[lv < 0] == -1).all()
    S = g.scipy()
    for v in np.flatnonzero(lv > 0):  # one level below an in-neighbour
        assert lv[p[v]] == lv[v] - 1 and v in S.indices[S.indptr[p[v]] : S.indptr[p[v] + 1]]


def test_levels_by_relaxation_on_a_road_network(device):
    S = G.read_mtx("road/luxembourg_osm.mtx.gz")
    A = gbla.Matrix.from_scipy(S, device=device)
    for source in (0, S.shape[0] // 2):
        levels, parents = gbla.bfs(A, source, method=RELAX, return_predecessors=True)
        np.testing.assert_array_equal(host(levels), expected_levels(S, source))
        gbla.verify.bfs(A, source, levels, parents)


@pytest.mark.gpu
def test_levels_by_relaxation_take_a_round_per_hops_levels_and_give_memory_back():
    # a path 0 - 1 - ... - n-1: a level-synchronous search takes n rounds, the relaxation one
    # per RELAX_HOPS levels or so (the direct push's queue); 1,000 calls keep the pool as it was
    if not gbla.gpu_available():
        pytest.skip("needs a CUDA device")
    import importlib

    import cupy as cp

    hops = importlib.import_module("gbla.algorithms.bfs").RELAX_HOPS
    n = 301
    S = sp.diags([np.ones(n - 1), np.ones(n - 1)], [-1, 1], format="csr")
    A = gbla.Matrix.from_scipy(S, device="gpu")
    stats = {}
    levels = gbla.bfs(A, 0, method=RELAX, stats=stats)
    np.testing.assert_array_equal(host(levels), np.arange(n))
    assert stats["levels"] == n and stats["iterations"] <= -(-(n - 1) // hops) + 2
    assert stats["mode"] == "device"
    pool = cp.get_default_memory_pool()
    gbla.bfs(A, 5, method=RELAX, return_predecessors=True)
    cp.cuda.Device().synchronize()
    start = pool.used_bytes()
    for source in range(1000):
        gbla.bfs(A, source % n, method=RELAX, return_predecessors=source % 2 == 0)
    cp.cuda.Device().synchronize()
    assert pool.used_bytes() <= start
