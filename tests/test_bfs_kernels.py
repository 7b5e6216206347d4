"""The hand-written BFS kernels (gbla.kernels) against SciPy and the algebraic method: levels
equal, parents valid by Graph500's rules (gbla.verify.bfs). The kernels run only on the GPU:
those tests skip on a machine without one, and the registry's refusals are checked everywhere.

Shapes chosen to reach every path of bfs.cu: long paths (many levels inside one single_block
launch), stars whose hub overflows the block queues (2048 vertices) and the single block's
queue (8192 vertices) or its edge budget (24576 edges), the single block with and without its
shared-memory bitmap, hubs of every degree bin (thread / warp / block), and graphs dense enough
for the direction switch to pull.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import gbla

from . import graphs as G
from .conftest import SKIP_NO_GPU, host
from .test_bfs import FLIPPING, expected_levels

# the GPU-only kernels (distributed_bitmap, a kernel too, also runs its steps in NumPy on CPU
# ranks: tests/test_distributed.py checks it)
KERNELS = [
    m
    for m in gbla.methods.names("bfs")
    if not gbla.methods.get(m).algebraic and gbla.methods.get(m).devices == ("gpu",)
]
SWITCHING = [k for k in KERNELS if gbla.methods.get(k).directions]


def check_kernel(method, A, S, source, *, depth_limit=None, direction="auto"):
    """Levels equal SciPy's (cut at depth_limit), with and without parents; parents validate."""
    expected = expected_levels(S, source)
    if depth_limit is not None:
        expected = np.where(expected <= depth_limit, expected, -1)
    levels = gbla.bfs(A, source, method=method, depth_limit=depth_limit, direction=direction)
    assert host(levels).dtype == np.int32
    np.testing.assert_array_equal(host(levels), expected, err_msg=method)
    levels, parents = gbla.bfs(
        A,
        source,
        method=method,
        return_predecessors=True,
        depth_limit=depth_limit,
        direction=direction,
    )
    np.testing.assert_array_equal(host(levels), expected, err_msg=method)
    assert host(parents).dtype == np.int32
    if depth_limit is None:
        gbla.verify.bfs(A, source, levels, parents)
    else:  # the tree of a cut search: each reached vertex one level below an in-neighbour
        p, lv = host(parents), host(levels)
        assert p[source] == source
        for v in np.flatnonzero(lv > 0):
            row = S.indices[S.indptr[p[v]] : S.indptr[p[v] + 1]]
            assert lv[p[v]] == lv[v] - 1 and v in row, f"{method}: parent of {v}"


def matrix(S):
    return gbla.Matrix.from_scipy(S, device="gpu")


def edges(src, dst, n):
    return G.csr(np.asarray(src), np.asarray(dst), np.ones(len(src)), n)


def undirected(S):
    return (S + S.T).tocsr()


# ============================================================================== the registry
def test_algebraic_comes_first_and_every_kernel_is_registered_once():
    names = gbla.methods.names("bfs")
    assert names[0] == "algebraic"
    assert set(KERNELS) == {
        "vertex_push",
        "vertex_pull",
        "edge_centric",
        "frontier_queue",
        "block_queue",
        "warp_queue",
        "single_block",
        "persistent",
        "load_balanced",
        "direction_optimized",
    }
    assert set(names) == {
        "algebraic",
        "algebraic_relax",
        "out_of_core_bfs",
        "distributed_bitmap",
    } | set(KERNELS)
    assert len(set(names)) == len(names)
    assert set(gbla.methods.names()) == set(names) | set(gbla.methods.names("sssp"))


@pytest.mark.parametrize("name", KERNELS)
def test_a_kernel_entry_describes_itself(name):
    entry = gbla.methods.get(name)
    assert (entry.name, entry.algorithm, entry.devices, entry.algebraic) == (
        name,
        "bfs",
        ("gpu",),
        False,
    )
    assert entry.description and "\n" not in entry.description


@pytest.mark.parametrize("name", KERNELS)
def test_a_kernel_refuses_a_cpu_matrix_instead_of_falling_back(name):
    A = gbla.Matrix.from_edges([0], [1], n=2, device="cpu")
    entry = gbla.methods.get(name)
    assert not entry.supports(A)
    assert "gpu" in entry.unsupported_reason(A)
    with pytest.raises(gbla.UnsupportedMethod, match=f"'{name}' runs on the gpu only"):
        gbla.bfs(A, 0, method=name)


def test_the_algebraic_method_runs_on_both_devices():
    A = gbla.Matrix.from_edges([0], [1], n=2, device="cpu")
    assert gbla.methods.get("algebraic").supports(A)


def test_an_unknown_method_lists_the_valid_names():
    A = gbla.Matrix.from_edges([0], [1], n=2, device="cpu")
    with pytest.raises(gbla.UnknownName, match="vertex_push") as info:
        gbla.bfs(A, 0, method="bogus")
    assert "got 'bogus'" in str(info.value)
    with pytest.raises(gbla.UnknownName, match="algebraic"):
        gbla.methods.get("bogus")


def test_an_sssp_method_is_not_a_bfs_method():
    A = gbla.Matrix.from_edges([0], [1], n=2, device="cpu")
    with pytest.raises(gbla.UnknownName, match="got 'bellman_ford'"):
        gbla.bfs(A, 0, method="bellman_ford")
    with pytest.raises(gbla.UnknownName, match="got 'vertex_push'"):
        gbla.sssp(A, 0, method="vertex_push")


@pytest.mark.parametrize("name", [k for k in KERNELS if k not in SWITCHING])
def test_a_direction_is_refused_by_a_kernel_that_does_not_switch(name):
    A = gbla.Matrix.from_edges([0], [1], n=2, device="cpu")
    with pytest.raises(gbla.InvalidValue, match="direction must be 'auto'"):
        gbla.bfs(A, 0, method=name, direction="pull")


def test_a_matrix_too_large_for_int32_ids_is_refused():
    entry = gbla.methods.get("vertex_push")

    class Huge:  # only what unsupported_reason reads
        device, nrows, nvals = "gpu", 2**31, 0

    assert "int32" in entry.unsupported_reason(Huge())


# ============================================================================== random graphs
@pytest.mark.parametrize("method", KERNELS)
@pytest.mark.gpu
@SKIP_NO_GPU
@settings(G.FIXTURE_OK, max_examples=25)
@given(g=G.graphs(), data=st.data())
def test_random_graphs_match_scipy(method, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    check_kernel(method, g.matrix("gpu"), g.scipy(), source)


@pytest.mark.parametrize("method", KERNELS)
@pytest.mark.gpu
@SKIP_NO_GPU
@settings(G.FIXTURE_OK, max_examples=15)
@given(g=G.medium_graphs(), data=st.data())
def test_medium_graphs_match_scipy(method, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    check_kernel(method, g.matrix("gpu"), g.scipy(), source)


@pytest.mark.parametrize("method", KERNELS)
@pytest.mark.gpu
@SKIP_NO_GPU
@settings(G.FIXTURE_OK, max_examples=15)
@given(g=G.graphs(), data=st.data())
def test_depth_limit_cuts_the_levels(method, g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    limit = data.draw(st.integers(0, g.n), label="depth_limit")
    check_kernel(method, g.matrix("gpu"), g.scipy(), source, depth_limit=limit)


@pytest.mark.parametrize("method", KERNELS)
@pytest.mark.gpu
@SKIP_NO_GPU
def test_one_matrix_searched_from_many_sources_in_a_row(method):
    # what a kernel keeps with the matrix between two searches (the single block's launch) is
    # right for every source, depth limit and parents flag that follows
    S = undirected(edges(np.arange(99), np.arange(1, 100), 100))  # a path 0 - 1 - ... - 99
    A = matrix(S)
    for source, limit in ((0, None), (50, 3), (99, None), (7, 0), (0, 98)):
        check_kernel(method, A, S, source, depth_limit=limit)


# ============================================================================== shapes
def _path(n):
    return undirected(edges(np.arange(n - 1), np.arange(1, n), n))


def _star(leaves, *, out_only=False):
    S = edges(np.zeros(leaves, int), np.arange(1, leaves + 1), leaves + 1)
    return S if out_only else undirected(S)


def _broom(handle, bristles):
    """A path of ``handle`` vertices, then a hub with ``bristles`` leaves each continuing into
    a path of 3: small frontier, a burst past the block's capacity, small again."""
    n = handle + bristles * 3
    src = list(range(handle - 1))
    dst = list(range(1, handle))
    hub = handle - 1
    for b in range(bristles):
        a = handle + 3 * b
        src += [hub, a, a + 1]
        dst += [a, a + 1, a + 2]
    return undirected(edges(src, dst, n))


def _degree_bins():
    """One hub per degree bin (a thread's, a warp's and a block's worth of edges), chained."""
    src, dst, n = [], [], 1
    for hub_degree in (5, 200, 3000):
        hub = n - 1
        src += [hub] * hub_degree
        dst += list(range(n, n + hub_degree))
        n += hub_degree
        src.append(n - 1)  # the last leaf leads on to the next hub
        dst.append(n)
        n += 1
    return undirected(edges(src, dst, n))


def _layers(widths):
    """Layers of the given widths, each vertex joined to every vertex of the next layer: the
    lanes that reach a layer find its vertices several times over (a thin level's claims
    deduplicated), and a level's edges fit a warp or not by the widths."""
    src, dst, first = [], [], 0
    for a, b in zip(widths, widths[1:]):
        for i in range(a):
            src += [first + i] * b
            dst += list(range(first + a, first + a + b))
        first += a
    return undirected(edges(src, dst, sum(widths)))


SHAPES = {
    "path_10000": (_path(10000), 0),
    "path_from_the_middle": (_path(5001), 2500),
    "star_10000": (_star(10000), 0),
    "star_from_a_leaf": (_star(10000), 7),
    "out_star_40000": (_star(40000, out_only=True), 0),
    "broom": (_broom(300, 9000), 0),
    "degree_bins": (_degree_bins(), 0),
    "grid_60x60": (gbla.generators.grid2d(60, 60, device="cpu").to_scipy(), 1234),
    "rmat_12": (gbla.generators.rmat(12, device="cpu").to_scipy(), None),
    "complete_64": (sp.csr_array(np.ones((64, 64)) - np.eye(64)), 3),
    # a warp's lanes cover 4 vertices of 8 edges: warp 0 alone, then the block, then warp 0
    "layers": (_layers([1] + [4] * 300 + [6] * 20 + [2, 1] * 200 + [4] * 100), 0),
    # a level of 260 hubs of about GBLA_HUGE edges: a push spreads their edges over the grid,
    # in two batches (persistent's spread bin)
    "hubs": (undirected(G.hubs(260)), 0),
}


@pytest.mark.parametrize("method", KERNELS)
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.gpu
@SKIP_NO_GPU
def test_shapes_match_scipy(method, shape):
    S, source = SHAPES[shape]
    if source is None:
        source = int(np.argmax(np.diff(S.indptr)))  # the largest hub
    check_kernel(method, matrix(S), S, source)


@pytest.mark.parametrize("plan", ["global levels", "small queues"])
@pytest.mark.parametrize(
    "shape", ["path_10000", "broom", "star_from_a_leaf", "degree_bins", "rmat_12", "layers"]
)
@pytest.mark.gpu
@SKIP_NO_GPU
def test_the_single_block_without_its_bitmap_or_with_small_queues(monkeypatch, plan, shape):
    # every graph of these tests fits the shared-memory bitmap; the plan a graph of millions
    # of vertices gets (claims in global memory) and queues small enough to overflow often
    # are forced here, both over the same shapes
    from gbla.kernels import _bfs

    real = _bfs.block_plan

    def forced(n):
        cap, words, shared = real(n)
        if plan == "global levels":
            return cap, 0, shared - 4 * words
        return 64, words, (6 * 65 + words) * 4

    monkeypatch.setattr(_bfs, "block_plan", forced)
    S, source = SHAPES[shape]
    if source is None:
        source = int(np.argmax(np.diff(S.indptr)))
    check_kernel("single_block", matrix(S), S, source)


def _out_degree(n, degree, seed):
    """A directed graph whose every vertex has ``degree`` distinct out-neighbours."""
    rng = np.random.default_rng(seed)
    dst = np.concatenate([rng.choice(n - 1, degree, replace=False) for _ in range(n)])
    src = np.repeat(np.arange(n), degree)
    dst = dst + (dst >= src)  # no self-loops
    return edges(src, dst, n)


@pytest.mark.parametrize("degree", [1, 2, 5, 32, 33])
@pytest.mark.parametrize("n", [3000, 20000], ids=["one launch", "handing over"])
@pytest.mark.gpu
@SKIP_NO_GPU
def test_the_single_block_either_side_of_its_thin_levels(degree, n):
    # a level whose frontier's degrees are all at most 32 gives each vertex a power of two of
    # lanes (1, 2, 8, 32 here), any other spreads the edges over the block: on a graph the
    # block searches in one launch (the graph in shared memory where it fits) and on one past
    # its queues (handovers to the grid)
    S = _out_degree(n, degree, seed=degree)
    check_kernel("single_block", matrix(S), S, 0)
    check_kernel("single_block", matrix(S), S, 5, depth_limit=2)


@pytest.mark.parametrize("method", SWITCHING)
@pytest.mark.parametrize("direction", ["push", "pull", FLIPPING], ids=["push", "pull", "flipping"])
@pytest.mark.parametrize("shape", ["rmat_12", "broom", "path_10000", "hubs"])
@pytest.mark.gpu
@SKIP_NO_GPU
def test_every_direction_of_a_switching_kernel(method, direction, shape):
    S, source = SHAPES[shape]
    check_kernel(method, matrix(S), S, source or 0, direction=direction)


@pytest.mark.parametrize("method", KERNELS)
@pytest.mark.gpu
@SKIP_NO_GPU
def test_degenerate_graphs(method):
    # no edges; a single vertex with a self-loop; an isolated source; int64 indices
    empty = sp.csr_array((5, 5))
    check_kernel(method, matrix(empty), empty, 3)
    loop = edges([0], [0], 1)
    check_kernel(method, matrix(loop), loop, 0)
    S = edges([0, 1, 1, 2, 4], [1, 0, 2, 1, 3], 5)
    check_kernel(method, matrix(S), S, 3)
    A64 = gbla.Matrix.from_scipy(S, device="gpu", index_dtype=np.int64)
    check_kernel(method, A64, S, 0)


@pytest.mark.parametrize("method", KERNELS)
@pytest.mark.gpu
@SKIP_NO_GPU
def test_agrees_with_the_algebraic_method_on_rmat(method):
    A = gbla.generators.rmat(14, device="gpu")
    for source in (0, 77, 4095):
        np.testing.assert_array_equal(
            host(gbla.bfs(A, source, method=method)), host(gbla.bfs(A, source))
        )


@pytest.mark.parametrize("method", KERNELS)
@pytest.mark.gpu
@SKIP_NO_GPU
def test_the_callers_arrays_are_not_modified(method):
    S = _broom(50, 10)
    A = matrix(S)
    before = [host(a).copy() for a in (A._indptr, A._indices)]
    gbla.bfs(A, 0, method=method, return_predecessors=True)
    for a, b in zip(before, (A._indptr, A._indices)):
        np.testing.assert_array_equal(host(b), a)


# ============================================================================== real graphs
REAL = [
    ("road/luxembourg_osm.mtx.gz", G.read_mtx, True),
    ("social/email-Eu-core.txt.gz", G.read_snap, False),
    ("social/p2p-Gnutella08.txt", G.read_snap, False),
    ("social/Wiki-Vote.txt.gz", G.read_snap, False),
    ("mesh/delaunay_n15.graph.gz", G.read_metis, False),
    ("small/power.graph", G.read_metis, False),
    ("social/as-caida20071105.mtx.gz", G.read_mtx, True),
]


@pytest.mark.parametrize("method", KERNELS)
@pytest.mark.parametrize("relative,read,symmetrize", REAL, ids=[r[0] for r in REAL])
@pytest.mark.gpu
@SKIP_NO_GPU
def test_real_graphs(method, relative, read, symmetrize):
    S = read(relative)
    if symmetrize:
        S = G.symmetrized(S)
    A = matrix(S)
    rng = np.random.default_rng(0)
    for source in rng.choice(np.flatnonzero(np.diff(S.indptr)), 2, replace=False):
        check_kernel(method, A, S, int(source))


@pytest.mark.parametrize(
    "method", ["single_block", "persistent", "direction_optimized", "load_balanced"]
)
@pytest.mark.gpu
@SKIP_NO_GPU
def test_a_large_road_network(method):
    S = G.symmetrized(G.read_mtx("road/USA-road-NY.mtx.gz"))
    check_kernel(method, matrix(S), S, 0)
