"""The method registry (gbla.methods): adding a method is one registration (and, for a kernel,
one .cu file); gbla.bfs and gbla.sssp dispatch every method through it, check its arguments
once, and never fall back to another method."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import gbla
from gbla import methods
from gbla.algorithms.sssp import default_delta
from gbla.methods import Method

from .conftest import SKIP_NO_GPU, host

# 0 -> 1 -> 2 -> 3, 0 -> 2 (weight 5), 4 isolated
SRC, DST, W = [0, 1, 2, 0], [1, 2, 3, 2], [1.0, 1.0, 1.0, 5.0]


@pytest.fixture
def registered():
    """Registers methods for one test and removes them afterwards."""
    names = []

    def add(method):
        methods.register(method)
        names.append(method.name)
        return method

    yield add
    for name in names:
        methods.unregister(name)


def _scipy_levels(A, source, *, return_parents, depth_limit, direction, stats):
    """A trivial BFS method: SciPy's breadth-first order, as levels and parents."""
    S = A.to_scipy()
    order, pred = csgraph.breadth_first_order(S, source, directed=True, return_predecessors=True)
    levels = np.full(A.nrows, -1, np.int32)
    levels[source] = 0
    for v in order[1:]:
        levels[v] = levels[pred[v]] + 1
    parents = np.where(levels >= 0, pred, -1).astype(np.int32)
    parents[source] = source
    stats["seen"] = (direction, depth_limit)
    return (levels, parents) if return_parents else levels


def _scipy_dijkstra(A, source, *, dtype, return_predecessors, direction, stats, **options):
    """A trivial SSSP method: SciPy's Dijkstra; records what it was given."""
    stats.update(options=options, dtype=dtype, weights=A.dtype, direction=direction)
    S = A.astype(np.float64).to_scipy() if not A.is_iso else A.to_scipy().astype(np.float64)
    dist, pred = csgraph.dijkstra(S, indices=source, return_predecessors=True)
    pred = np.where(np.isfinite(dist), pred, -1).astype(np.int32)
    pred[source] = source
    dist = dist.astype(dtype)
    return (dist, pred) if return_predecessors else dist


def test_a_registered_bfs_method_runs_through_gbla_bfs(registered):
    registered(Method("scipy_bfs", "bfs", "test: SciPy's BFS", _scipy_levels, devices=("cpu",)))
    assert "scipy_bfs" in methods.names("bfs")
    assert methods.names("bfs")[0] == "algebraic"  # algebraic methods stay first
    A = gbla.Matrix.from_edges(SRC, DST, n=5, device="cpu")
    stats = {}
    levels, parents = gbla.bfs(A, 0, method="scipy_bfs", return_predecessors=True, stats=stats)
    assert levels.tolist() == [0, 1, 1, 2, -1]
    gbla.verify.bfs(A, 0, levels, parents)
    assert stats == {"seen": (gbla.DEFAULT_POLICY, None), "levels": 3}


def test_a_registered_sssp_method_runs_through_gbla_sssp_with_checked_weights(registered):
    registered(
        Method(
            "scipy_dijkstra",
            "sssp",
            "test: SciPy's Dijkstra",
            _scipy_dijkstra,
            devices=("cpu",),
            options=("delta",),
        )
    )
    A = gbla.Matrix.from_edges(SRC, DST, W, n=5, device="cpu")
    stats = {}
    dist, pred = gbla.sssp(A, 0, method="scipy_dijkstra", return_predecessors=True, stats=stats)
    assert host(dist).tolist() == [0, 1, 2, 3, np.inf]
    gbla.verify.sssp(A, 0, dist, pred)
    # a listed delta always arrives: the default width when none is given
    default = default_delta(A)
    assert stats["method"] == "scipy_dijkstra" and stats["options"] == {"delta": default}
    assert stats["dtype"] == np.float64 and stats["direction"] is gbla.DEFAULT_POLICY
    gbla.sssp(A, 0, method="scipy_dijkstra", delta=2.5, stats=stats)
    assert stats["options"] == {"delta": 2.5}  # a listed option reaches the method
    # an unweighted graph arrives as its pattern (weight 1); +inf edges are dropped first
    gbla.sssp(A.pattern(), 0, method="scipy_dijkstra", stats=stats)
    assert stats["weights"] == np.bool_
    inf = gbla.Matrix.from_edges(SRC, DST, [1.0, 1.0, np.inf, 5.0], n=5, device="cpu")
    assert host(gbla.sssp(inf, 0, method="scipy_dijkstra")).tolist() == [0, 1, 2, np.inf, np.inf]


def test_auto_is_the_methods_own_policy_when_it_names_one(registered):
    own = gbla.DirectionPolicy(alpha=7.0, memory=False)
    registered(
        Method(
            "own_auto",
            "sssp",
            "test: an auto policy of its own",
            _scipy_dijkstra,
            devices=("cpu",),
            directions=True,
            auto_policy=own,
        )
    )
    A = gbla.Matrix.from_edges(SRC, DST, W, n=5, device="cpu")
    stats = {}
    gbla.sssp(A, 0, method="own_auto", stats=stats)
    assert stats["direction"] is own
    # a policy asked for is the one given, the default one included
    gbla.sssp(A, 0, method="own_auto", direction=gbla.DEFAULT_POLICY, stats=stats)
    assert stats["direction"] is gbla.DEFAULT_POLICY
    gbla.sssp(A, 0, method="own_auto", direction="pull", stats=stats)
    assert stats["direction"] == "pull"
    with pytest.raises(gbla.InvalidValue, match="auto_policy must be None or, with directions"):
        Method("x", "sssp", "no directions", _scipy_dijkstra, auto_policy=own)
    with pytest.raises(gbla.InvalidValue, match="auto_policy must be"):
        Method("x", "sssp", "not a policy", _scipy_dijkstra, directions=True, auto_policy="push")


def test_the_dispatcher_refuses_what_a_method_does_not_declare(registered):
    registered(Method("plain_sssp", "sssp", "test: no options", _scipy_dijkstra, devices=("cpu",)))
    A = gbla.Matrix.from_edges(SRC, DST, W, n=5, device="cpu")
    with pytest.raises(gbla.InvalidValue, match="delta must be None with method='plain_sssp'"):
        gbla.sssp(A, 0, method="plain_sssp", delta=1.0)
    with pytest.raises(gbla.InvalidValue, match="direction must be 'auto' with method="):
        gbla.sssp(A, 0, method="plain_sssp", direction="push")
    negative = gbla.Matrix.from_edges(SRC, DST, [1.0, -1.0, 1.0, 5.0], n=5, device="cpu")
    with pytest.raises(gbla.InvalidValue, match="no negative weight with method='plain_sssp'"):
        gbla.sssp(negative, 0, method="plain_sssp")
    nan = gbla.Matrix.from_edges(SRC, DST, [1.0, np.nan, 1.0, 5.0], n=5, device="cpu")
    with pytest.raises(gbla.InvalidValue, match="NaN"):
        gbla.sssp(nan, 0, method="plain_sssp")


def test_a_method_for_another_device_is_refused_not_replaced(registered):
    def never(*args, **kwargs):
        raise AssertionError("a GPU-only method ran on the CPU")

    registered(Method("gpu_only", "bfs", "test: GPU only", never, devices=("gpu",)))
    A = gbla.Matrix.from_edges(SRC, DST, n=5, device="cpu")
    with pytest.raises(gbla.UnsupportedMethod, match="'gpu_only' runs on the gpu only"):
        gbla.bfs(A, 0, method="gpu_only")


def test_registration_is_checked():
    with pytest.raises(gbla.InvalidValue, match="not be registered already"):
        methods.register(Method("algebraic", "bfs", "again", _scipy_levels))
    with pytest.raises(gbla.UnknownName, match="got 'nowhere'"):
        methods.unregister("nowhere")
    with pytest.raises(gbla.InvalidValue, match="algorithm must be one of"):
        Method("x", "pagerank", "no such algorithm", _scipy_levels)
    with pytest.raises(gbla.InvalidValue, match="run must be callable"):
        Method("x", "bfs", "no run", None)
    with pytest.raises(gbla.DomainMismatch, match="gbla.methods.Method"):
        methods.register("algebraic")


def test_max_index_makes_supports_honest():
    m = Method("small", "bfs", "int32 ids", _scipy_levels, max_index=3)
    assert m.supports(gbla.Matrix.from_edges([0], [1], n=3, device="cpu"))
    reason = m.unsupported_reason(gbla.Matrix.from_edges([0], [1], n=5, device="cpu"))
    assert "at most 3 vertices" in reason


# A kernel of one's own: one .cu beside one registration, using the shared frontier header and
# the one loader. Level d claims the unvisited out-neighbours of level d - 1.
TRIVIAL_CU = r"""
#include "frontier.cuh"
extern "C" __global__ void gbla_test_bfs_level(int n, int depth, int* levels,
                                               const int* indptr, const int* indices,
                                               int* changed) {
    for (int u = blockIdx.x * blockDim.x + threadIdx.x; u < n; u += gridDim.x * blockDim.x) {
        if (levels[u] != depth - 1) continue;
        for (int e = indptr[u]; e < indptr[u + 1]; ++e)
            if (gbla_claim(levels, indices[e], depth)) *changed = 1;
    }
}
"""


@SKIP_NO_GPU
@pytest.mark.gpu
def test_a_kernel_of_ones_own_is_one_cu_file_and_one_registration(registered, tmp_path):
    import cupy as cp

    from gbla.kernels import _frontier, _launch

    path = tmp_path / "trivial_bfs.cu"
    path.write_text(TRIVIAL_CU)

    def run(A, source, *, return_parents, depth_limit, direction, stats):
        kernel = _launch.function(path, "gbla_test_bfs_level")
        indptr, indices = _frontier.int32_csr(A)
        levels = cp.full(A.nrows, -1, np.int32)
        levels[source] = 0
        changed = cp.zeros(1, np.int32)
        depth = 0
        while depth_limit is None or depth < depth_limit:
            depth += 1
            changed[0] = 0
            kernel(
                _launch.grid(A.nrows),
                (_launch.THREADS,),
                (np.int32(A.nrows), np.int32(depth), levels, indptr, indices, changed),
            )
            if not int(changed[0]):  # sync: a test kernel
                break
        return levels

    registered(
        Method(
            "trivial_bfs",
            "bfs",
            "test: a vertex-push kernel",
            run,
            devices=("gpu",),
            max_index=methods.INT32_MAX - 1,
        )
    )
    S = sp.random(300, 300, density=0.01, random_state=3, format="csr")
    A = gbla.Matrix.from_scipy(S, device="gpu")
    d = csgraph.shortest_path(S, unweighted=True, indices=0)
    expected = np.where(np.isinf(d), -1, d)
    assert host(gbla.bfs(A, 0, method="trivial_bfs")).tolist() == expected.tolist()


def test_a_cooperative_grid_that_cannot_hold_one_block_an_sm_raises():
    # a block of 1024 threads at 255 registers each needs 4x an SM's register file: the
    # launch would be refused with CUDA_ERROR_INVALID_VALUE, so the grid size says why first
    from gbla.kernels import _launch

    class Heavy:  # no occupancy query (no .kernel.ptr): the register count decides
        num_regs = 255
        kernel = None

    with pytest.raises(RuntimeError, match="a block of 1024 threads .* does not fit on one SM"):
        _launch._cooperative_blocks(0, Heavy(), 1024, 2)
