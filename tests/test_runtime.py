"""gbla.iterate, the loop of ops that runs on the device: device mode against eager mode and
SciPy (BFS and Bellman-Ford written as loop bodies, and the library's own), its limits (what a
recorded body may not do raises CaptureError and leaves the GPU usable), its cache, and the
memory a loop takes (given back: a thousand traversals do not grow CuPy's pool)."""

import ctypes
import gc
import importlib
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from scipy.sparse import csgraph

import gbla
from gbla import semirings
from gbla.runtime import _graphs

from . import graphs as G
from .conftest import SKIP_NO_GPU, host

gpu = [SKIP_NO_GPU, pytest.mark.gpu]
MODES = ["eager", pytest.param("device", marks=gpu)]

#   0 -> 1 -> 2 -> 3     4 (isolated)
PATH = sp.csr_array((np.ones(3), ([0, 1, 2], [1, 2, 3])), shape=(5, 5))


def bfs_by_iterate(A, source, mode, *, max_iterations=None, direction="auto", stats=None):
    """The levels of a BFS written as a loop body by a user: the public API only."""
    n = A.nrows
    q = gbla.Vector.from_coo([source], True, n, device=A.device)
    levels = gbla.assign(gbla.Vector.new(n, np.int32, device=A.device), 0, mask=q.S)
    tracker = gbla.DirectionPolicy().tracker() if direction == "auto" else direction

    def level(s, depth):
        s.q = gbla.vxm(s.q, A, "any_pair", mask=~s.levels.S, direction=tracker)
        gbla.assign(s.levels, depth, mask=s.q.S)

    out = gbla.iterate(
        level,
        {"q": q, "levels": levels},
        while_nonempty="q",
        max_iterations=max_iterations,
        mode=mode,
        stats=stats,
    )
    return host(out["levels"].to_dense(-1))


def expected_levels(S, source, limit=None):
    d = csgraph.shortest_path(S, unweighted=True, indices=source)
    levels = np.where(np.isinf(d), -1, d).astype(np.int64)
    if limit is not None:
        levels[levels > limit] = -1
    return levels


def device_of(mode):
    return "gpu" if mode == "device" else "cpu"


# ============================================================================== results
@pytest.mark.parametrize("mode", MODES)
def test_a_bfs_body_gives_scipy_levels_and_counts_its_iterations(mode):
    A = gbla.Matrix.from_scipy(PATH, device=device_of(mode))
    stats = {}
    levels = bfs_by_iterate(A, 0, mode, stats=stats)
    np.testing.assert_array_equal(levels, [0, 1, 2, 3, -1])
    # levels 1, 2, 3 found something; the 4th iteration found the frontier empty
    assert stats["iterations"] == 4 and stats["mode"] == mode
    if mode == "device":  # the H100's driver makes conditional nodes
        assert stats["graph"] == "while"
        # one iteration's graph: the product's kernels, the assign, the loop's test at least
        assert stats["body_nodes"]["kernels"] >= 5, stats["body_nodes"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("limit", [0, 1, 2, 5])
def test_max_iterations_is_exact(mode, limit):
    A = gbla.Matrix.from_scipy(PATH, device=device_of(mode))
    stats = {}
    levels = bfs_by_iterate(A, 0, mode, max_iterations=limit, stats=stats)
    np.testing.assert_array_equal(levels, expected_levels(PATH, 0, limit))
    assert stats["iterations"] == min(limit, 4)


@pytest.mark.parametrize("mode", MODES)
def test_a_loop_whose_condition_starts_empty_runs_nothing(mode):
    device = device_of(mode)
    empty = gbla.Vector.new(5, bool, device=device)
    x = gbla.Vector.from_coo([1], 7.0, 5, device=device)
    calls = []
    stats = {}
    out = gbla.iterate(
        lambda s, i: calls.append(i),
        {"q": empty, "x": x},
        while_nonempty="q",
        mode=mode,
        stats=stats,
    )
    assert calls == [] and stats["iterations"] == 0
    assert out["x"].isequal(x) and out["q"].nvals == 0


@pytest.mark.parametrize("mode", MODES)
def test_the_callers_state_is_not_modified(mode):
    A = gbla.Matrix.from_scipy(PATH, device=device_of(mode))
    q = gbla.Vector.from_coo([0], True, 5, device=A.device)
    levels = gbla.assign(gbla.Vector.new(5, np.int32, device=A.device), 0, mask=q.S)
    before = (q.dup(), levels.dup())

    def level(s, depth):
        s.q = gbla.vxm(s.q, A, "any_pair", mask=~s.levels.S)
        gbla.assign(s.levels, depth, mask=s.q.S)

    out = gbla.iterate(level, {"q": q, "levels": levels}, while_nonempty="q", mode=mode)
    assert q.isequal(before[0]) and levels.isequal(before[1])
    assert out["levels"].nvals == 4 and out["q"].nvals == 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "dtype, fill",
    [(np.int32, -1), (np.int32, np.inf), (bool, -1), (np.float64, np.nan), (np.int64, 7)],
)
def test_dense_results_are_what_to_dense_gives(mode, dtype, fill):
    # the same loop twice: its results as Vectors, then "levels" as a dense array (made in one
    # pass on the device), which must equal the Vector's to_dense(fill), dtype and all
    A = gbla.Matrix.from_scipy(PATH, device=device_of(mode))
    q = gbla.Vector.from_coo([1], True, 5, device=A.device)
    levels = gbla.assign(gbla.Vector.new(5, dtype, device=A.device), 1, mask=q.S)

    def level(s, depth):
        s.q = gbla.vxm(s.q, A, "any_pair", mask=~s.levels.S)
        gbla.assign(s.levels, True if dtype is bool else depth, mask=s.q.S)

    state = {"q": q, "levels": levels}
    whole = gbla.iterate(level, state, while_nonempty="q", mode=mode)
    out = gbla.iterate(level, state, while_nonempty="q", mode=mode, dense={"levels": fill})
    expected = host(whole["levels"].to_dense(fill))
    got = host(out["levels"])
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    assert isinstance(out["q"], gbla.Vector) and out["q"].nvals == 0
    # only the names kept come back, dense or not
    only = gbla.iterate(
        level, state, while_nonempty="q", mode=mode, keep=["levels"], dense={"levels": fill}
    )
    assert list(only) == ["levels"]
    np.testing.assert_array_equal(host(only["levels"]), expected)
    assert list(
        gbla.iterate(
            level, state, while_nonempty="q", mode=mode, keep=("q",), dense={"levels": fill}
        )
    ) == ["q"]
    reached = ~np.isnan(got) if np.isnan(fill) else got != fill
    np.testing.assert_array_equal(reached, [False, True, True, True, False])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sources", [[3], [0, 4, 2], []], ids=["one", "three", "none"])
def test_a_start_state_listing_several_entries_is_loaded_whole(mode, sources):
    # the start of a run from lists: a multi-source BFS, written as a body, from 0, 2 and 4
    # (or one source, or none) of PATH, whose levels SciPy gives as the least over the sources
    A = gbla.Matrix.from_scipy(PATH, device=device_of(mode))
    q = gbla.Vector.from_coo(sources, True, 5, device=A.device)
    levels = gbla.Vector.from_coo(sources, 0, 5, dtype=np.int32, device=A.device)

    def level(s, depth):
        s.q = gbla.vxm(s.q, A, "any_pair", mask=~s.levels.S)
        gbla.assign(s.levels, depth, mask=s.q.S)

    out = gbla.iterate(level, {"q": q, "levels": levels}, while_nonempty="q", mode=mode)
    expected = np.full(5, -1)
    for source in sources:
        got = expected_levels(PATH, source)
        expected = np.where((got >= 0) & ((expected < 0) | (got < expected)), got, expected)
    np.testing.assert_array_equal(host(out["levels"].to_dense(-1)), expected)


@pytest.mark.gpu
@SKIP_NO_GPU
@G.FIXTURE_OK
@given(g=G.medium_graphs())
def test_device_mode_equals_eager_mode_and_scipy_on_random_graphs(g):
    S = g.scipy()
    A = gbla.Matrix.from_scipy(S, device="gpu")
    source = int(np.argmax(np.diff(S.indptr))) if g.n else 0
    expected = expected_levels(S, source)
    for direction in ("auto", "push", "pull"):
        eager = bfs_by_iterate(
            gbla.Matrix.from_scipy(S, device="cpu"), source, "eager", direction=direction
        )
        device = bfs_by_iterate(A, source, "device", direction=direction)
        np.testing.assert_array_equal(eager, expected)
        np.testing.assert_array_equal(device, expected)


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize(
    "case", ["one vertex", "no edges", "isolated source", "directed", "self loops"]
)
def test_the_library_bfs_and_bellman_ford_run_on_the_device_on_degenerate_graphs(case):
    S = {
        "one vertex": sp.csr_array((1, 1)),
        "no edges": sp.csr_array((6, 6)),
        "isolated source": PATH,
        "directed": PATH,
        "self loops": sp.csr_array((np.ones(4), ([0, 0, 1, 2], [0, 1, 1, 0])), shape=(3, 3)),
    }[case]
    source = 4 if case == "isolated source" else 0
    for mode_device in ("cpu", "gpu"):
        A = gbla.Matrix.from_scipy(S, device=mode_device)
        stats = {}
        levels, parents = gbla.bfs(A, source, return_predecessors=True, stats=stats)
        np.testing.assert_array_equal(host(levels), expected_levels(S, source))
        gbla.verify.bfs(A, source, levels, parents)
        assert stats["mode"] == ("device" if mode_device == "gpu" else "eager")
        for method in ("bellman_ford", "delta_stepping"):
            dist, pred = gbla.sssp(A, source, method=method, return_predecessors=True)
            np.testing.assert_allclose(host(dist), csgraph.shortest_path(S, indices=source))
            gbla.verify.sssp(A, source, dist, pred)


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("direction", ["auto", "push", "pull"])
def test_device_products_over_rows_past_huge_row_give_scipys_results(direction):
    # a sparse random graph of 3000 vertices whose vertices 0, 1 and 2 are joined both ways to
    # every other: their rows take a block each in the device product's pull (past HUGE_ROW),
    # others a warp (past LONG_ROW) or a thread; weights 1..20, the same both ways
    from gbla.kernels._spmv import HUGE_ROW, LONG_ROW

    rng = np.random.default_rng(5)
    n, m = 3000, 45000
    src = np.concatenate([rng.integers(3, n, m), np.repeat([0, 1, 2], n - 3)])
    dst = np.concatenate([rng.integers(3, n, m), np.tile(np.arange(3, n), 3)])
    W = sp.coo_array((rng.integers(1, 21, len(src)).astype(float), (src, dst)), shape=(n, n))
    W = sp.csr_array(W.maximum(W.T))
    W.sum_duplicates()
    degrees = np.diff(W.indptr)
    assert (degrees > HUGE_ROW).sum() == 3 and (degrees > LONG_ROW).sum() > 3
    A = gbla.Matrix.from_scipy(W, device="gpu")
    stats = {}
    levels, parents = gbla.bfs(A, 17, return_predecessors=True, direction=direction, stats=stats)
    assert stats["mode"] == "device"
    np.testing.assert_array_equal(host(levels), expected_levels(W, 17))
    gbla.verify.bfs(A, 17, levels, parents)
    expected = csgraph.dijkstra(W, indices=17)
    for method in ("bellman_ford", "delta_stepping"):
        dist, pred = gbla.sssp(A, 17, method=method, direction=direction, return_predecessors=True)
        np.testing.assert_array_equal(host(dist), expected)
        gbla.verify.sssp(A, 17, dist, pred)


@pytest.mark.gpu
@SKIP_NO_GPU
@G.FIXTURE_OK
@given(
    g=G.graphs(max_n=40, weights=G.st.integers(1, 20)),
    delta=G.st.sampled_from([None, 0.5, 3.0, 1e9]),
)
def test_bellman_ford_and_delta_stepping_on_the_device_equal_scipy_and_eager_mode(g, delta):
    # delta 0.5: every positive weight heavy; 1e9: every weight light (one bucket)
    sssp = importlib.import_module("gbla.algorithms.sssp")
    S = g.scipy()
    A = gbla.Matrix.from_scipy(S, device="gpu")
    expected = csgraph.shortest_path(S, indices=0)
    runs = [("bellman_ford", {}, sssp.BELLMAN_FORD_HOPS), ("bellman_ford", {}, 1)]
    runs += [
        ("delta_stepping", {"delta": delta}, sssp.HOPS),
        ("delta_stepping", {"delta": delta}, 1),
    ]
    for method, options, hops in runs:
        stats = {}
        name = "HOPS" if method == "delta_stepping" else "BELLMAN_FORD_HOPS"
        kept = getattr(sssp, name)
        setattr(sssp, name, hops)
        try:
            dist, pred = gbla.sssp(
                A, 0, method=method, return_predecessors=True, stats=stats, **options
            )
        finally:
            setattr(sssp, name, kept)
        np.testing.assert_allclose(host(dist), expected)
        gbla.verify.sssp(A, 0, dist, pred)
        eager = {}  # the CPU runs the same body eagerly: the same distances, and at one hop
        # a round the same rounds (deeper hops are the GPU's direct push's)
        np.testing.assert_array_equal(
            gbla.sssp(
                gbla.Matrix.from_scipy(S, device="cpu"), 0, method=method, stats=eager, **options
            ),
            host(dist),
        )
        if hops == 1:
            assert eager["iterations"] == stats["iterations"], method
        assert stats["mode"] == "device" and eager["mode"] == "eager", method


def test_sssp_passes_its_loops_stats_on():
    S = G.csr([0, 1, 2, 0], [1, 2, 3, 3], [1.0, 2.0, 3.0, 9.0], 5)
    A = gbla.Matrix.from_scipy(S, device="cpu")
    for method in ("bellman_ford", "delta_stepping"):
        stats = {}
        dist = gbla.sssp(A, 0, method=method, stats=stats)
        np.testing.assert_array_equal(dist, csgraph.dijkstra(S, indices=0))
        # the loop's mode beside the method's own count of its products
        assert stats["mode"] == "eager" and stats["method"] == method
        assert stats["iterations"] >= 3, stats


def test_the_driver_node_parameters_have_cuda_h_s_layout():
    # CUgraphNodeParams: type, 3 reserved ints, a 232-byte union, one reserved long long;
    # CUDA_CONDITIONAL_NODE_PARAMS: handle, type, size, the body graphs' array, the context
    P = _graphs._NodeParams
    assert ctypes.sizeof(P) == 256 and P.u.offset == 16
    C = _graphs._Conditional
    offsets = [getattr(C, f).offset for f in ("handle", "type", "size", "graphs_out", "ctx")]
    assert offsets == [0, 8, 12, 16, 24] and ctypes.sizeof(_graphs._Union) == 232


class _Buffer:
    """What site_table reads of a device array: its address, dtype and size."""

    def __init__(self, address, dtype=np.uint8, size=1):
        self.data = type("Pointer", (), {"ptr": address})()
        self.dtype = np.dtype(dtype)
        self.size = size


def test_the_site_table_lays_a_products_reset_out_after_its_list():
    # lists.cuh's gbla_site: ids, wide, count, present, n, then what a device product's output
    # takes back in the loop's test (its values' identity, its info slot and direction); an
    # element-wise op's site leaves those zero, so the test touches nothing else of it
    from gbla.kernels import _entries

    ids, count, present = _Buffer(0x100, np.int64), _Buffer(0x200), _Buffer(0x300)
    identity = np.float32(np.inf)
    reset = _entries.Reset(
        _Buffer(0x400),
        int.from_bytes(identity.tobytes(), "little"),
        4,
        _Buffer(0x500, np.uint64, 8),
        1,
    )
    table = _entries.site_table([(7, ids, count, present, None), (9, ids, count, present, reset)])
    assert table.shape == (2, _entries.SITE_WORDS) and table.dtype == np.uint64
    assert table[0].tolist() == [0x100, 1, 0x200, 0x300, 7, 0, 0, 0, 0, 0, 0]
    bits = int(np.array([identity]).view(np.uint32)[0])
    assert table[1].tolist() == [0x100, 1, 0x200, 0x300, 9, 0x400, 4, bits, 0x500, 8, 1]


@pytest.mark.gpu
@SKIP_NO_GPU
def test_a_recorded_loop_runs_as_one_while_graph_without_importing_cuda_bindings():
    # cuda-bindings costs a first call 45-80 ms to import; the graph calls go to the driver
    code = (
        "import sys, numpy as np, scipy.sparse as sp, gbla\n"
        "S = sp.random(300, 300, density=0.02, format='csr', random_state=1)\n"
        "A = gbla.Matrix.from_scipy(S, device='gpu')\n"
        "stats = {}\n"
        "gbla.bfs(A, 0, method='algebraic', stats=stats)\n"
        "print(stats.get('graph'), 'cuda.bindings' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["while", "False"], done.stdout


@pytest.mark.gpu
@SKIP_NO_GPU
def test_the_driver_s_refusal_is_named():
    # the context a recording has (a Vector made on the GPU may wait on the host until used)
    pytest.importorskip("cupy").zeros(1).sum()
    d = _graphs.driver()
    assert d is not None  # the H100's driver makes WHILE nodes
    with pytest.raises(RuntimeError, match=r"^CUDA: cuGraphDestroy failed: CUDA_ERROR_\w+"):
        d.destroy(0)


@pytest.mark.gpu
@SKIP_NO_GPU
def test_a_negative_cycle_is_found_on_the_device():
    S = sp.csr_array((np.array([1.0, -3.0, 1.0]), ([0, 1, 2], [1, 2, 1])), shape=(3, 3))
    with pytest.raises(gbla.NegativeCycleError):
        gbla.sssp(gbla.Matrix.from_scipy(S, device="gpu"), 0, method="bellman_ford")


@pytest.mark.gpu
@SKIP_NO_GPU
def test_depth_limit_stays_exact_on_the_device():
    S = sp.csr_array((np.ones(9), (np.arange(9), np.arange(1, 10))), shape=(10, 10))
    A = gbla.Matrix.from_scipy(S, device="gpu")
    for limit in (0, 1, 3, 9, 20):
        levels = gbla.bfs(A, 0, depth_limit=limit)
        np.testing.assert_array_equal(host(levels), expected_levels(S, 0, limit))


# ============================================================================== the cache
@pytest.mark.gpu
@SKIP_NO_GPU
def test_a_cached_recording_is_reused_with_new_start_states_and_dropped_with_its_matrix():
    S = sp.random_array((300, 300), density=0.02, random_state=1, format="csr")
    A = gbla.Matrix.from_scipy(S, device="gpu")
    gbla.bfs(A, 0)
    P = A.pattern()
    recordings = [k for k in P._cache if isinstance(k, tuple) and k[0] == "gbla.iterate"]
    assert len(recordings) == 1
    first = P._cache[recordings[0]]
    for source in (5, 17, 0, 299):
        np.testing.assert_array_equal(host(gbla.bfs(A, source)), expected_levels(S, source))
    assert P._cache[recordings[0]] is first  # replayed, not recorded again
    # parents ask for another semiring: another recording beside the first
    gbla.bfs(A, 3, return_predecessors=True)
    assert len([k for k in P._cache if isinstance(k, tuple) and k[0] == "gbla.iterate"]) == 2


@pytest.mark.gpu
@SKIP_NO_GPU
def test_one_recording_replays_staged_listed_and_dense_start_states_alike():
    # a start vector of few host entries is loaded inside the graph launch; a longer list, one
    # made on the device, or a dense one is copied in before it. The same recording, replayed
    # from each kind in turn (the loaded kind changing between runs), gives SciPy's levels.
    import cupy as cp

    S = sp.random_array((400, 400), density=0.01, random_state=5, format="csr")
    A = gbla.Matrix.from_scipy(S, device="gpu")
    n = A.nrows

    def level(s, depth):
        s.q = gbla.vxm(s.q, A, "any_pair", mask=~s.levels.S)
        gbla.assign(s.levels, depth, mask=s.q.S)

    def start(sources, kind):
        if kind == "staged":
            q = gbla.Vector.from_coo(sources, True, n, device="gpu")
            levels = gbla.Vector.from_coo(sources, 0, n, dtype=np.int32, device="gpu")
            assert q._staged and levels._staged
        elif kind == "device":
            ids = cp.asarray(sources, np.int64)
            q = gbla.Vector.from_coo(ids, True, n, device="gpu")
            levels = gbla.Vector.from_coo(ids, 0, n, dtype=np.int32, device="gpu")
        else:  # dense: levels present everywhere but -1 where unreached is not a BFS start;
            # a dense frontier with its levels listed
            mark = np.zeros(n, bool)
            mark[sources] = True
            q = gbla.select(gbla.Vector.from_dense(cp.asarray(mark)), "nonzero")
            levels = gbla.Vector.from_coo(
                cp.asarray(sources, np.int64), 0, n, dtype=np.int32, device="gpu"
            )
        return {"q": q, "levels": levels}

    cache = gbla.Matrix.from_scipy(PATH, device="gpu")  # a holder for the one recording
    rng = np.random.default_rng(0)
    runs = [(kind, count) for count in (1, 3, 64, 70) for kind in ("staged", "device", "dense")]
    for kind, count in runs + runs[::-1]:
        if kind == "staged" and count > 64:
            kind = "device"
        sources = sorted(rng.choice(n, count, replace=False).tolist())
        out = gbla.iterate(
            level, start(sources, kind), while_nonempty="q", cache=cache, key="mixed"
        )
        expected = csgraph.shortest_path(S, unweighted=True, indices=sources).min(axis=0)
        expected = np.where(np.isinf(expected), -1, expected)
        np.testing.assert_array_equal(
            host(out["levels"].to_dense(-1)), expected, err_msg=f"{kind} start, {count} sources"
        )
        assert out["q"].nvals == 0
    assert len([k for k in cache._cache if k[0] == "gbla.iterate"]) == 1


@pytest.mark.gpu
@SKIP_NO_GPU
def test_a_thousand_traversals_give_back_their_memory():
    import cupy as cp

    S = sp.random_array((2000, 2000), density=0.002, random_state=2, format="csr")
    A = gbla.Matrix.from_scipy(S, device="gpu")
    pool = cp.get_default_memory_pool()
    gbla.bfs(A, 0)
    gbla.sssp(A, 0, method="bellman_ford")
    gbla.sssp(A, 0, method="delta_stepping")
    gc.collect()  # what earlier tests left in reference cycles
    cp.cuda.Device().synchronize()
    start = pool.used_bytes()
    for i in range(1000):
        gbla.bfs(A, i % 2000)
    for i in range(20):
        gbla.sssp(A, i, method="bellman_ford")
        gbla.sssp(A, i, method="delta_stepping")
    gc.collect()
    cp.cuda.Device().synchronize()
    assert pool.used_bytes() <= start  # the recordings, cached on A, are all that stays
    del A
    gc.collect()
    assert pool.used_bytes() < start


# ============================================================================== limits
def _loop_state(device):
    A = gbla.Matrix.from_scipy(PATH, device=device)
    q = gbla.Vector.from_coo([0], True, 5, device=device)
    levels = gbla.assign(gbla.Vector.new(5, np.int32, device=device), 0, mask=q.S)
    return A, {"q": q, "levels": levels}


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("read", ["nvals", "reduce", "to_coo", "isequal"])
def test_a_host_read_inside_a_recorded_body_raises_and_the_gpu_stays_usable(read):
    A, state = _loop_state("gpu")

    def body(s, depth):
        s.q = gbla.vxm(s.q, A, "any_pair", mask=~s.levels.S)
        {
            "nvals": lambda: s.q.nvals,
            "reduce": lambda: gbla.reduce(s.levels, "max"),
            "to_coo": lambda: s.q.to_coo(),
            "isequal": lambda: s.q.isequal(s.q),
        }[read]()
        gbla.assign(s.levels, depth, mask=s.q.S)

    with pytest.raises(gbla.CaptureError, match="reads a value back to the host"):
        gbla.iterate(body, state, while_nonempty="q", mode="device")
    # the same body runs eagerly, and the GPU is usable afterwards
    out = gbla.iterate(body, state, while_nonempty="q", mode="eager")
    np.testing.assert_array_equal(host(out["levels"].to_dense(-1)), [0, 1, 2, 3, -1])
    np.testing.assert_array_equal(bfs_by_iterate(A, 0, "device"), [0, 1, 2, 3, -1])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("change", ["size", "type"])
def test_a_state_vector_that_changes_size_raises_in_either_mode(change, mode):
    A, state = _loop_state(device_of(mode))

    def body(s, depth):
        s.q = {"size": lambda: gbla.Vector.new(6, bool, device=A.device), "type": lambda: 3}[
            change
        ]()

    with pytest.raises(gbla.CaptureError, match="state.q must stay a Vector of size 5"):
        gbla.iterate(body, state, while_nonempty="q", mode=mode)
    np.testing.assert_array_equal(bfs_by_iterate(A, 0, mode), [0, 1, 2, 3, -1])


@pytest.mark.parametrize("mode", MODES)
def test_a_state_vector_of_another_dtype_is_cast_to_the_names_dtype(mode):
    """x + 0.75 then + 0.75 again: cast back to int32 after each iteration (1 -> 1 -> 1) in
    both modes, where float64 throughout would give 2.5."""
    device = device_of(mode)
    x = gbla.Vector.from_coo([0, 3], [1, 5], 5, dtype=np.int32, device=device)
    count = gbla.Vector.from_coo([0], True, 1, device=device)

    def body(s, i):
        s.x = gbla.apply(s.x, "plus", right=0.75)

    out = gbla.iterate(
        body, {"x": x, "count": count}, while_nonempty="count", max_iterations=2, mode=mode
    )
    assert out["x"].dtype == np.int32
    np.testing.assert_array_equal(host(out["x"].to_dense(-1)), [1, -1, -1, 5, -1])


@pytest.mark.gpu
@SKIP_NO_GPU
def test_a_semiring_that_fails_to_compile_raises_a_capture_error():
    bad = semirings.Semiring(
        semirings.monoid.min, semirings.BinaryOp("broken", "x +* y", lambda x, y: x + y)
    )
    A, state = _loop_state("gpu")
    state["d"] = gbla.Vector.from_coo([0], 0.0, 5)

    def body(s, depth):
        s.d = gbla.vxm(s.d, A, bad)
        s.q = gbla.vxm(s.q, A, "any_pair", mask=~s.levels.S)

    with pytest.raises(gbla.CaptureError):
        gbla.iterate(body, state, while_nonempty="q", mode="device")
    np.testing.assert_array_equal(bfs_by_iterate(A, 0, "device"), [0, 1, 2, 3, -1])


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        ({"body": 3}, gbla.DomainMismatch, "body"),
        ({"state": {}}, gbla.InvalidValue, "state"),
        ({"state": {"q": 1}}, gbla.DomainMismatch, "state"),
        ({"while_nonempty": "x"}, gbla.InvalidValue, "while_nonempty"),
        ({"max_iterations": -1}, gbla.InvalidValue, "max_iterations"),
        ({"mode": "fast"}, gbla.InvalidValue, "mode"),
        ({"mode": "device"}, gbla.InvalidValue, "mode"),
        ({"cache": 3}, gbla.DomainMismatch, "cache"),
        ({"key": [1]}, gbla.InvalidValue, "key"),
        ({"stats": []}, gbla.DomainMismatch, "stats"),
        ({"dense": [1]}, gbla.DomainMismatch, "dense"),
        ({"dense": {"x": -1}}, gbla.InvalidValue, "dense"),
        ({"dense": {"q": "-1"}}, gbla.InvalidValue, r"dense\['q'\]"),
        ({"dense": {"q": 1j}}, gbla.InvalidValue, r"dense\['q'\]"),
        ({"dense": {"q": None}}, gbla.InvalidValue, r"dense\['q'\]"),
        ({"keep": "q"}, gbla.DomainMismatch, "keep"),
        ({"keep": ["q", "x"]}, gbla.InvalidValue, "keep"),
        ({"fuse": "yes"}, gbla.InvalidValue, "fuse"),
        ({"fuse": 1}, gbla.InvalidValue, "fuse"),
    ],
)
def test_bad_arguments_are_rejected_by_name(kwargs, error, name):
    A, state = _loop_state("cpu")
    args = {"body": lambda s, i: None, "state": state, "while_nonempty": "q"}
    if "key" in kwargs:
        args["cache"] = A
    args.update(kwargs)
    with pytest.raises(error, match=name):
        gbla.iterate(**args)


def test_the_loop_state_names_are_fixed():
    _, state = _loop_state("cpu")

    def body(s, i):
        s.other = s.q

    with pytest.raises(AttributeError, match="no vector 'other'"):
        gbla.iterate(body, state, while_nonempty="q", mode="eager")


@pytest.mark.gpu
@SKIP_NO_GPU
def test_a_loop_inside_a_recorded_body_raises():
    A, state = _loop_state("gpu")

    def body(s, depth):
        gbla.bfs(A, 0)  # itself a loop on the device
        s.q = gbla.vxm(s.q, A, "any_pair", mask=~s.levels.S)

    with pytest.raises(gbla.CaptureError, match="inside a loop body"):
        gbla.iterate(body, state, while_nonempty="q", mode="device")
    np.testing.assert_array_equal(bfs_by_iterate(A, 0, "device"), [0, 1, 2, 3, -1])


# ============================================================================== entry lists
# A product inside a recorded loop lists the entries it finds, and the state's buffers, the
# masked writes and the loop's test read that list instead of every position. These bodies
# write the state in the ways that must make a list be dropped or forgotten.
def _listed_body(A, rewrite):
    def body(s, depth):
        if rewrite == "in place first":  # the state's own buffers, written before the product
            gbla.assign(s.q, True, mask=s.extra.S)
            gbla.assign(s.q, False, mask=s.levels.S)  # and its visited entries cleared again
            s.q = gbla.select(s.q, "nonzero")
        s.q = gbla.vxm(s.q, A, "any_pair", mask=~s.levels.S)
        if rewrite == "rebound":  # the product's result written out of place: no list
            s.q = gbla.ewise_add(s.q, s.q, "first")
        gbla.assign(s.levels, depth, mask=s.q.S)
        gbla.assign(s.parents, s.q, mask=s.q.S, accum="max")  # accum: no listed write
        gbla.assign(s.extra, False, mask=s.q.S)

    return body


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("rewrite", ["none", "in place first", "rebound"])
def test_entry_lists_keep_device_mode_equal_to_eager_mode_whatever_the_body_writes(rewrite):
    rng = np.random.default_rng(11)
    n = 300
    src, dst = rng.integers(0, n, 900), rng.integers(0, n, 900)
    S = sp.csr_array((np.ones(900), (src, dst)), shape=(n, n))
    results = {}
    for device in ("cpu", "gpu"):
        A = gbla.Matrix.from_scipy(S, device=device)
        q = gbla.Vector.from_coo([3], True, n, device=device)
        state = {
            "q": q,
            "levels": gbla.assign(gbla.Vector.new(n, np.int32, device=device), 0, mask=q.S),
            "parents": gbla.Vector.new(n, np.int32, device=device),
            "extra": gbla.Vector.from_coo(np.arange(0, n, 37), True, n, device=device),
        }
        runs = []
        for _ in range(2):  # the second run replays the recording with lists from the first
            stats = {}
            out = gbla.iterate(_listed_body(A, rewrite), state, while_nonempty="q", stats=stats)
            runs.append({k: host(v.to_dense(-1)) for k, v in out.items()})
            assert stats["mode"] == ("device" if device == "gpu" else "eager")
        for k in runs[0]:
            np.testing.assert_array_equal(runs[0][k], runs[1][k])
        results[device] = runs[0]
    for k in results["cpu"]:
        np.testing.assert_array_equal(results["gpu"][k], results["cpu"][k], err_msg=k)
    if rewrite == "none":  # the plain BFS levels, as SciPy's
        d = csgraph.shortest_path(S, unweighted=True, indices=3)
        np.testing.assert_array_equal(results["gpu"]["levels"], np.where(np.isinf(d), -1, d))


# ============================================================================== listed ops
# Inside a recorded loop, apply, select, ewise_mult, ewise_add, a masked assign and reduce run
# over entry lists (their inputs', or the mask's) and give lists of their own; a vector with no
# list, or one whose count is unknown (a run's first iteration), takes one pass over n.
def _listed_ops_body(A, r):
    """Each op on listed vectors (the product's frontier, the ops' own results, the state's
    buffers), every kind of mask, bound scalars from the host and from the device, lists that
    come out empty, an ewise_add of overlapping lists, a reduce into a Scalar."""
    u = semirings.unary

    def body(s, it):
        f = gbla.vxm(gbla.select(s.q, "nonzero"), A, "any_pair", mask=~s.seen.S)
        gbla.assign(s.seen, True, mask=f.S)  # in place at f's list, a host scalar
        a = gbla.apply(s.x, "plus", right=3, mask=f.S)  # walks the mask's list
        b = gbla.apply(gbla.apply(f, "times", right=5), "minus", left=it)  # it - 5 at f
        c = gbla.apply(b, u.ainv, mask=~s.seen.V)  # seen holds f: always empty
        e = gbla.apply(b, u.abs, mask=s.x.V)  # a value mask
        g = gbla.apply(s.d, u.identity, mask=~f.S)  # d keeps no list: a pass over n
        k = gbla.select(b, "<", 0)  # every entry, then none once it reaches 5
        k2 = gbla.select(s.d, "<=", it)  # a thunk on the device in device mode
        nz = gbla.select(gbla.apply(s.x, "minus", right=1, mask=f.S), "nonzero")
        m1 = gbla.ewise_mult(b, s.x, "times")  # a list and the state's
        m2 = gbla.ewise_mult(k2, g, "first", mask=~k.S)
        u1 = gbla.ewise_add(b, e, "max")  # overlapping lists
        u2 = gbla.ewise_add(u1, c, "plus")  # and an empty one
        u3 = gbla.ewise_add(a, s.d, "min", mask=f.V)  # one list, one vector without
        # lists with entries of their own on both sides (z's once stored: the state's list),
        # summed over the iterations into the state, rebound to the result's list
        s.z = gbla.ewise_add(s.z, gbla.ewise_add(gbla.ewise_add(k2, g, "minus"), b, "plus"), "plus")
        w = gbla.ewise_mult(u1, s.x, "lt")
        gbla.assign(s.x, u3, mask=w.V)  # the state in place, a value mask
        t = gbla.apply(u2, u.identity)
        gbla.assign(t, m1, mask=w.V)  # a result that is not the state: a new value, merged
        gbla.assign(s.y, t, mask=t.S)
        gbla.assign(s.y, m2, mask=m2.S)
        gbla.assign(s.sel, k, mask=k.S)
        gbla.assign(s.sel, nz, mask=nz.S)
        gbla.reduce(u1, "max", out=r)
        gbla.assign(s.r, r, mask=f.S)
        s.q = f

    return body


def _listed_ops_state(S, device, index_dtype):
    n = S.shape[0]
    rng = np.random.default_rng(5)
    at = rng.choice(n, n // 3, replace=False)
    q = gbla.Vector.from_coo([0], True, n, device=device)
    return gbla.Matrix.from_scipy(S, device=device, index_dtype=index_dtype), {
        "q": q,
        "seen": q.dup(),
        "x": gbla.Vector.from_coo(
            at, rng.integers(-3, 4, len(at)).astype(np.int32), n, device=device
        ),
        "d": gbla.Vector.from_coo(at[::2], rng.uniform(-2, 9, len(at[::2])), n, device=device),
        "y": gbla.Vector.new(n, device=device),
        "z": gbla.Vector.new(n, device=device),
        "sel": gbla.Vector.new(n, np.int64, device=device),
        "r": gbla.Vector.new(n, device=device),
    }


def _run_listed_ops(S, device, mode, index_dtype=None, runs=1):
    A, state = _listed_ops_state(S, device, index_dtype)
    r = gbla.Scalar.new(np.float64, device=device)
    results = []
    for _ in range(runs):  # a cached recording's later runs start from lists of unknown count
        stats = {}
        out = gbla.iterate(
            _listed_ops_body(A, r),
            state,
            while_nonempty="q",
            mode=mode,
            cache=A,
            key=("listed ops", mode),
            stats=stats,
        )
        assert stats["mode"] == ("eager" if mode == "eager" else "device")
        results.append({name: tuple(host(a) for a in v.to_coo()) for name, v in out.items()})
    return results, stats["iterations"]


def _assert_same_states(got, expected):
    for name in expected:
        for a, b in zip(got[name], expected[name]):
            np.testing.assert_array_equal(a, b, err_msg=name)


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])  # int64: a product's list of
def test_the_listed_ops_give_device_mode_the_states_of_eager_mode(index_dtype):  # long ids
    rng = np.random.default_rng(3)
    n, m = 300, 700
    S = sp.csr_array((np.ones(m), (rng.integers(0, n, m), rng.integers(0, n, m))), shape=(n, n))
    (expected,), iterations = _run_listed_ops(S, "cpu", "eager")
    assert iterations >= 4  # enough levels for the selects to empty and the scalars to move
    (gpu_eager,), _ = _run_listed_ops(S, "gpu", "eager")
    _assert_same_states(gpu_eager, expected)
    device, done = _run_listed_ops(S, "gpu", "device", index_dtype, runs=3)
    assert done == iterations
    for run in device:
        _assert_same_states(run, expected)


@pytest.mark.gpu
@SKIP_NO_GPU
def test_the_listed_ops_ask_only_for_structs_the_compile_test_instantiates(monkeypatch):
    from gbla.kernels import _codegen, _entries

    asked = []
    make = _codegen.map_struct

    def spy(types):
        asked.append(types)
        return make(types)

    monkeypatch.setattr(_codegen, "map_struct", spy)
    rng = np.random.default_rng(4)
    S = sp.csr_array(
        (np.ones(200), (rng.integers(0, 80, 200), rng.integers(0, 80, 200))), shape=(80, 80)
    )
    _run_listed_ops(S, "gpu", "device")
    for method, options in (("bellman_ford", {}), ("delta_stepping", {"delta": 0.5})):
        gbla.sssp(gbla.Matrix.from_scipy(S, device="gpu"), 0, method=method, **options)
    gbla.bfs(gbla.Matrix.from_scipy(S, device="gpu"), [0, 1, 2])  # bit-parallel: bitwise ops
    found = _entries.registry_types(
        vars(semirings.unary).values(),
        vars(semirings.binary).values(),
        vars(semirings.monoid).values(),
        semirings.unary.identity,
    )
    known = {t for types in found.values() for t in types}
    assert asked and not [t for t in asked if t not in known]


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_bellman_ford_rounds_over_lists_give_scipys_distances(monkeypatch, seed, index_dtype):
    # improve(): ewise_mult, a complemented apply, a value-masked assign into a result, a
    # structural one into the state, each over lists. Weights w(u, v) + p(u) - p(v) for
    # potentials p: negative ones, and no negative cycle (a cycle's weight is w's). At one hop
    # a round the rounds are eager mode's (deeper ones are the direct push's alone)
    sssp = importlib.import_module("gbla.algorithms.sssp")
    rng = np.random.default_rng(seed)
    n, m = 60 + 40 * seed, 4 * (60 + 40 * seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    p = rng.integers(0, 8, n)
    w = (rng.integers(1, 20, m) + p[src] - p[dst]).astype(float)
    w[w == 0] = 0.5  # no explicit zeros; heavier cycles stay non-negative
    S = G.csr(src, dst, w, n)
    expected = csgraph.shortest_path(S, indices=0)
    A = gbla.Matrix.from_scipy(S, device="gpu", index_dtype=index_dtype)
    for hops in (sssp.BELLMAN_FORD_HOPS, 1):
        monkeypatch.setattr(sssp, "BELLMAN_FORD_HOPS", hops)
        for _ in range(2):  # the second replays the cached recording
            stats = {}
            dist = gbla.sssp(A, 0, method="bellman_ford", stats=stats)
            np.testing.assert_allclose(host(dist), expected)
    eager = {}
    gbla.sssp(gbla.Matrix.from_scipy(S, device="cpu"), 0, method="bellman_ford", stats=eager)
    assert eager["iterations"] == stats["iterations"]


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("listed", ["known", "unknown", "empty"])
def test_a_listed_reduction_gives_the_monoids_reduction_of_the_listed_entries(listed):
    import cupy as cp

    from gbla.kernels import _entries

    rng = np.random.default_rng(9)
    n = 5000
    present = rng.random(n) < 0.3
    ids = np.flatnonzero(present)
    rng.shuffle(ids)  # a list is in no order
    if listed == "empty":
        present[:] = False
        ids = ids[:0]
    count = _entries.UNKNOWN if listed == "unknown" else np.uint64(len(ids))
    entries = (cp.asarray(np.resize(ids, n).astype(np.int32)), cp.asarray([count]))
    for name in ("plus", "times", "min", "max", "lor", "land", "lxor", "eq"):
        monoid = vars(semirings.monoid)[name]
        for dtype in monoid.dtypes:
            values = (
                rng.integers(-4, 5, n).astype(dtype) if dtype != np.bool_ else rng.random(n) < 0.5
            )
            if name == "times" and dtype.kind == "i":
                values = np.where(rng.random(n) < 0.05, -1, 1).astype(dtype)  # no overflow
            got = _entries.reduce(entries, cp.asarray(values), cp.asarray(present), monoid)
            assert got.shape == () and got.dtype == dtype
            want = (
                monoid.reduceat(values[present], np.zeros(1, np.int64))[0]
                if present.any()
                else monoid.identity_for(dtype)
            )
            np.testing.assert_array_equal(host(got), want, err_msg=f"{name} {dtype}")


def test_a_runs_copies_go_the_way_their_kind_says(monkeypatch):
    """workspace._memcpy (a run's start, results and control words): the runtime's call with
    the direction its kind names, on the current stream."""
    from types import SimpleNamespace

    from gbla.runtime import workspace

    calls = []
    runtime = SimpleNamespace(
        memcpyHostToDevice=1,
        memcpyDeviceToDevice=3,
        memcpyDeviceToHost=2,
        memcpyAsync=lambda *args: calls.append(args),
    )
    fake = SimpleNamespace(
        cuda=SimpleNamespace(runtime=runtime, get_current_stream=lambda: SimpleNamespace(ptr=77))
    )
    monkeypatch.setattr(workspace, "_cupy", lambda: fake)
    for kind in ("HtoD", "DtoD", "DtoH"):
        workspace._memcpy(10, 20, 8, kind)
    assert calls == [(10, 20, 8, 1, 77), (10, 20, 8, 3, 77), (10, 20, 8, 2, 77)]
    with pytest.raises(KeyError):
        workspace._memcpy(10, 20, 8, "HtoH")


# ============================================================================== test_reduce
def _peeling(values, name, mode, *, max_iterations=None, fuse=None):
    """A loop that drops its least entries each round (the body's own reduction), with
    test_reduce's value of ``name`` over the entries left written where they drop: (trace,
    rounds, iterations, the Scalar after the loop)."""
    device = device_of(mode)
    dtype = values.dtype
    n = len(values)
    left = gbla.Vector.from_coo(np.arange(n), values, n, device=device)
    t = gbla.Scalar.new(dtype, device=device)
    least = gbla.Scalar.new(dtype, device=device)

    def body(s, i):
        gbla.reduce(s.left, "min", out=least)
        front, s.left = gbla.split(s.left, "<=", least)
        gbla.assign(s.trace, t, mask=front.S)
        gbla.assign(s.round, i, mask=front.S)

    state = {
        "left": left,
        "trace": gbla.Vector.new(n, dtype, device=device),
        "round": gbla.Vector.new(n, np.int64, device=device),
    }
    stats = {}
    out = gbla.iterate(
        body,
        state,
        while_nonempty="left",
        mode=mode,
        stats=stats,
        max_iterations=max_iterations,
        fuse=fuse,
        test_reduce=(name, t),
    )
    return host(out["trace"].to_dense(0)), host(out["round"].to_dense(0)), stats, t.value


def _peeling_reference(values, name, max_iterations=None):
    """_peeling's trace, rounds and final Scalar, entry by entry in Python."""
    monoid = vars(semirings.monoid)[name]
    trace, rounds = np.zeros_like(values), np.zeros(len(values), np.int64)
    left = np.ones(len(values), bool)

    def reduced():
        if not left.any():
            return np.asarray(monoid.identity_for(values.dtype), values.dtype)[()]
        return monoid.reduceat(values[left], np.zeros(1, np.int64))[0]

    i = 0
    while left.any() and (max_iterations is None or i < max_iterations):
        i += 1
        t = reduced()
        front = left & (values <= values[left].min())
        trace[front], rounds[front] = t, i
        left &= ~front
    return trace, rounds, reduced()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
@pytest.mark.parametrize("name", ["min", "max", "plus"])
def test_test_reduce_gives_each_iteration_the_conditions_reduction(mode, dtype, name):
    rng = np.random.default_rng(5)
    values = rng.integers(-20, 40, 200).astype(dtype)  # ties: several entries drop a round
    trace, rounds, stats, last = _peeling(values, name, mode)
    want_trace, want_rounds, want_last = _peeling_reference(values, name)
    np.testing.assert_array_equal(rounds, want_rounds)
    np.testing.assert_array_equal(trace, want_trace)
    # after the loop: the empty state's reduction, the monoid's identity
    assert last == want_last == semirings.monoid.__dict__[name].identity_for(dtype)
    assert stats["iterations"] == rounds.max() > 20


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("limit", [0, 1, 3])
def test_test_reduce_after_max_iterations_holds_the_last_states(mode, limit):
    values = np.array([5.0, 1.0, 3.0, 1.0, 9.0, 2.0])
    trace, rounds, stats, last = _peeling(values, "min", mode, max_iterations=limit)
    want_trace, want_rounds, want_last = _peeling_reference(values, "min", limit)
    np.testing.assert_array_equal(trace, want_trace)
    np.testing.assert_array_equal(rounds, want_rounds)
    assert last == want_last and stats["iterations"] == limit


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("fuse", [True, False])
def test_test_reduce_on_the_device_equals_it_eagerly_with_a_product_in_the_loop(fuse):
    # delta-stepping written with test_reduce: a product in the loop (so that the fused block
    # may run it), the pending set stored with its list, the reduction folded into its store
    g = gbla.generators.with_weights(gbla.generators.rmat(8, device="cpu"), 1, 9)
    results = {}
    for mode in ("eager", "device"):
        A = g.to_device(device_of(mode))
        n = A.nrows
        low = gbla.Scalar.new(np.float64, device=A.device)

        def body(s, i, A=A, low=low):
            s.pending = gbla.relax(s.dist, s.pending, A, "min_plus", window=low + 20.0)

        dist = gbla.Vector.from_coo(np.arange(n), np.full(n, np.inf), n, device=A.device)
        gbla.assign(dist, 0.0, mask=gbla.Vector.from_coo([0], True, n, device=A.device).S)
        stats = {}
        out = gbla.iterate(
            body,
            {"dist": dist, "pending": gbla.Vector.from_coo([0], 0.0, n, device=A.device)},
            while_nonempty="pending",
            mode=mode,
            stats=stats,
            fuse=fuse,
            test_reduce=("min", low),
        )
        results[mode] = (host(out["dist"].to_dense(np.inf)), stats["iterations"], low.value)
    np.testing.assert_array_equal(results["device"][0], results["eager"][0])
    np.testing.assert_array_equal(results["eager"][0], csgraph.dijkstra(g.to_scipy(), indices=0))
    assert results["device"][1:] == results["eager"][1:]
    assert results["device"][2] == np.inf and results["device"][1] > 3


@pytest.mark.gpu
@SKIP_NO_GPU
def test_a_cached_recording_with_test_reduce_writes_each_calls_scalar():
    A = gbla.Matrix.from_scipy(PATH, device="gpu")
    seen = []
    for start in ([0], [2]):
        t = gbla.Scalar.new(np.float64, device="gpu")
        q = gbla.Vector.from_coo(start, [float(start[0])], 5, device="gpu")

        def body(s, i):
            s.q = gbla.vxm(s.q, A, "min_first")

        stats = {}
        gbla.iterate(
            body,
            {"q": q},
            while_nonempty="q",
            cache=A,
            key="peel",
            stats=stats,
            max_iterations=1,
            test_reduce=("min", t),
        )
        seen.append(t.value)
    # after one step from 0 the frontier is {1: 0.0}; from 2 it is {3: 2.0}
    assert seen == [0.0, 2.0]


def test_test_reduce_is_checked():
    v = gbla.Vector.from_coo([0], [1.0], 3, device="cpu")
    s = gbla.Scalar.new(np.float64, device="cpu")

    def run(test_reduce):
        return gbla.iterate(
            lambda s_, i: None,
            {"q": v},
            while_nonempty="q",
            max_iterations=1,
            test_reduce=test_reduce,
        )

    with pytest.raises(gbla.InvalidValue, match="test_reduce must be a .monoid, Scalar. pair"):
        run("min")
    with pytest.raises(gbla.InvalidValue, match="test_reduce\\[0\\] must not be 'any'"):
        run(("any", s))
    with pytest.raises(gbla.UnknownName, match="test_reduce\\[0\\]"):
        run(("smallest", s))
    with pytest.raises(gbla.DomainMismatch, match="test_reduce\\[0\\] must take"):
        run(("lor", s))
    with pytest.raises(gbla.DomainMismatch, match="test_reduce\\[1\\] must be a gbla.Scalar"):
        run(("min", 0.0))
    with pytest.raises(gbla.DomainMismatch, match="holds its own value"):
        run(("min", s + 1.0))
    with pytest.raises(gbla.InvalidValue, match="test_reduce\\[1\\].dtype must be"):
        run(("min", gbla.Scalar.new(np.float32, device="cpu")))
    run(("min", s))
    assert s.value == 1.0  # the state after the one iteration, q unchanged: its least
