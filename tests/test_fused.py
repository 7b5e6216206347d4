"""The fused block of a loop recorded on the device (gbla/kernels/_fused.py, fused.cu): one
block runs the small iterations in one kernel, the graph's iteration the large ones. On the
CPU: which iterations fuse (and why the others do not), the arguments as they are packed, and
the translation unit compiling with nvcc. On the GPU: the algorithms and a user's loop give
the results they give without it and SciPy's, with the block handing over and taking back
(thresholds forced both ways), under a depth limit, and without growing the pool."""

import gc
import importlib.util
import pathlib
import re
import shutil
import subprocess

import numpy as np
import pytest
from scipy.sparse import csgraph

import gbla
from gbla import DEFAULT_POLICY, DirectionPolicy, semirings, verify
from gbla.kernels import _codegen, _fused, _launch
from gbla.kernels._launch import Launch
from gbla.semirings import binary

from . import graphs as G
from .conftest import SKIP_NO_GPU, host

NVCC = shutil.which("nvcc")
Z = np.uint64(0)


# ============================================================================== the program
def _spmv_struct(name="any_pair", dtype=bool):
    types = _codegen.SpmvTypes(semirings.get(name), None, np.dtype(dtype), np.dtype(dtype), False)
    return _codegen.struct(types)


def bfs_like(
    policy=DEFAULT_POLICY, *, test_last=True, gather=True, ids=np.uint64(64), one_product=True
):
    """The launches of a BFS level as a device product and its writes make them (arguments
    only as many as each kernel takes: nothing here runs). With ``one_product`` the push reads
    the gather's bins, info slot and row pointers, as a recording's does."""
    name, src = _spmv_struct()
    rule = policy.cuda_source()
    default = DEFAULT_POLICY.cuda_source()
    f = _codegen.map_struct(
        _codegen.MapTypes(binary.lt, *(np.dtype(np.float64),) * 3, np.dtype(bool))
    )
    # an op before the product (delta-stepping's window, say): a select over some list
    launches = [Launch("entries.cu", f"gbla_entries_select<{f[0]}>", "", "\n" + f[1], (Z,) * 20)]
    if gather:
        launches.append(
            Launch(
                "loop.cu",
                "gbla_gather_decide<int>",
                rule,
                "",
                (
                    np.int64(5),
                    Z,
                    ids,
                    np.uint64(72),
                    np.uint64(80),
                    Z,
                    Z,
                    np.int32(1),
                    Z,
                    np.int64(5),
                    np.int64(9),
                    np.int32(1),
                    Z,  # no window (gbla.relax's): its values, t, shift and kind
                    Z,
                    Z,
                    np.int32(0),
                    np.int64(0),  # no direct push
                ),
            )
        )
    push = [Z] * 38  # the window's t, shift and kind (0: none), then the direct push's list
    if one_product:
        push[0], push[2], push[5] = np.uint64(88), np.uint64(96), np.uint64(80)
        if gather:
            launches[-1] = launches[-1]._replace(
                args=launches[-1].args[:5] + (np.uint64(88), np.uint64(96)) + launches[-1].args[7:]
            )
    launches += [
        Launch("spmv.cu", f"gbla_spmv_device<{name}, int>", "", "\n" + src, tuple(push)),
        Launch("entries.cu", "gbla_assign_entries<long long, int>", "", "", (Z,) * 12),
        Launch("entries.cu", f"gbla_entries_map<{f[0]}>", "", "\n" + f[1], (Z,) * 24),
    ]
    # a state's store: the new value's list 216, count 224, values 232, presence 240, the
    # buffer's values 248, presence 256, list 200 and its count 208, the word of blocks 264;
    # no fold (test_reduce's): its code, identity, output and partials
    u = np.uint64
    launches.append(
        Launch(
            "entries.cu",
            "gbla_store<bool, int>",
            "",
            "",
            (np.int64(5), u(216), u(224), u(232), u(240), u(248), u(256), u(200), u(208), u(264))
            + (np.int32(0), np.bool_(False), Z, Z),
        )
    )
    # the test, emptying two op sites (table 272, the word of blocks 264)
    test = Launch(
        "loop.cu",
        "gbla_loop_test",
        default,
        "",
        (Z, np.int64(5), Z, Z, np.int32(1), np.int32(1), np.uint64(3), u(272), np.int32(2), u(264)),
    )
    return launches + [test] if test_last else [test] + launches


def test_a_bfs_level_fuses_and_reads_its_frontier_off_the_first_gather():
    program = _fused.Program(bfs_like())
    assert program.index == "int"
    indptr, ids, count = program.frontier
    assert (int(indptr), int(ids), int(count)) == (80, 64, 72)
    # every kernel once in launch order, a barrier between two steps; the product's gather
    # and push are one step
    body = program.source[program.source.index("struct gbla_fused_steps") :]
    assert body.count("__syncthreads();") == len(bfs_like()) - 2
    assert "gbla_gather_decide<" not in body and "gbla_spmv_device<" not in body
    assert "gbla_store<bool, int>(" in body
    assert (
        body.index("gbla_entries_select<")
        < body.index("gbla_fused_push<gbla_sr_any_pair")
        < body.index("gbla_assign_entries<")
        < body.index("gbla_loop_test(")
    )
    assert "#define GBLA_FUSED 1" in program.source


def test_a_gather_and_a_push_of_two_products_stay_two_steps():
    program = _fused.Program(bfs_like(one_product=False))
    body = program.source[program.source.index("struct gbla_fused_steps") :]
    assert body.count("__syncthreads();") == len(bfs_like()) - 1
    assert "gbla_fused_push" not in body
    assert body.index("gbla_gather_decide<int>(") < body.index("gbla_spmv_device<")


def test_the_first_push_reads_the_size_tests_layout_unless_its_list_may_have_changed():
    def flag(launches):
        source = _fused.Program(launches).source
        call = source[source.index("gbla_fused_push<", source.index("struct gbla_fused_steps")) :]
        call = call[call.index("(") + 1 :]
        return call[: call.index(",")]

    assert flag(bfs_like()) == "1"
    # a launch before the gather handed the frontier's list could have written it
    launches = bfs_like()
    launches[0] = launches[0]._replace(args=(Z, np.uint64(64)) + (Z,) * 17)
    assert flag(launches) == "0"


def test_a_merged_step_takes_both_kernels_arguments_in_order():
    launches = bfs_like()
    program = _fused.Program(launches)
    gather, push = launches[1], launches[2]
    call = program.source[program.source.index("gbla_fused_push<") :]
    call = call[: call.index(";")]
    first = len(launches[0].args)
    assert call.count("gbla_arg{") == len(gather.args) + len(push.args)
    assert call.startswith("gbla_fused_push<gbla_sr_any_pair") and "(1, gbla_arg{" in call
    assert f"gbla_arg{{a[{first}]}}" in call
    assert f"gbla_arg{{a[{first + len(gather.args) + len(push.args) - 1}]}}" in call
    packed = program.pack()
    assert packed[first + 5] == packed[first + len(gather.args)] == 88  # the bins, twice


def test_a_store_is_one_step_with_the_arguments_of_its_launch():
    launches = bfs_like()
    store = launches[-2]
    program = _fused.Program(launches)
    body = program.source[program.source.index("struct gbla_fused_steps") :]
    call = body[body.index("gbla_store<bool, int>(") :]
    call = call[: call.index(";")]
    at = sum(len(launch.args) for launch in launches[:-2])
    assert call.count("gbla_arg{") == len(store.args) == 14
    assert f"gbla_arg{{a[{at}]}}" in call and f"gbla_arg{{a[{at + 13}]}}" in call
    packed = program.pack()
    assert [int(x) for x in packed[at : at + 14]] == [int(a) for a in store.args]


def test_a_short_program_takes_larger_iterations_into_the_block():
    longer = _fused.Program(bfs_like())  # six steps: the element-wise map among them
    assert len(longer._steps()) == 6 > _fused.SHORT
    assert longer.bounds() == (_fused.MAX_VERTICES // 2, _fused.MAX_EDGES // 2)
    launches = [launch for launch in bfs_like() if "entries_map" not in launch.kernel]
    short = _fused.Program(launches)
    assert len(short._steps()) == 5 <= _fused.SHORT
    assert short.bounds() == (_fused.MAX_VERTICES, _fused.MAX_EDGES)


@pytest.mark.parametrize(
    "launches, why",
    [
        (bfs_like(test_last=False), "does not end with the loop's test"),
        (bfs_like(gather=False), "no push product"),
        (bfs_like(ids=Z), "keeps no entry list"),
        (bfs_like(DirectionPolicy(alpha=3.0)), "two preludes of loop.cu"),
        (
            bfs_like()[:1]
            + [Launch("bfs.cu", "gbla_bfs_single_block", "", "", ())]
            + bfs_like()[1:],
            "gbla_bfs_single_block of bfs.cu is not known",
        ),
        ([], "launches nothing"),
    ],
)
def test_what_does_not_fuse_says_why(launches, why):
    with pytest.raises(_fused.NotFusible, match=why):
        _fused.Program(launches)


class _DeviceArray:
    def __init__(self, address):
        self.__cuda_array_interface__ = {
            "data": (address, False),
            "shape": (1,),
            "typestr": "<f8",
            "version": 3,
        }


def test_arguments_pack_as_eight_bytes_each():
    launches = bfs_like()
    launches[0] = launches[0]._replace(
        args=(
            _DeviceArray(0xABC0),
            np.int32(-1),
            np.int64(-2),
            np.float32(1.5),
            np.float64(-0.25),
            True,
        )
    )
    packed = _fused.Program(launches).pack()
    assert packed.dtype == np.uint64
    assert packed[:6].tolist() == [
        0xABC0,
        2**64 - 1,
        2**64 - 2,
        int(np.float32(1.5).view(np.uint32)),
        int(np.float64(-0.25).view(np.uint64)),
        1,
    ]
    assert len(packed) == sum(len(launch.args) for launch in launches)
    with pytest.raises(_fused.NotFusible, match="argument of type str"):
        bad = [launches[0]._replace(args=("x",))] + launches[1:]
        _fused.Program(bad).pack()


def test_a_reduce_is_one_step_its_partials_folded_by_the_last_block():
    name, src = _codegen.map_struct(
        _codegen.MapTypes(binary.min, *(np.dtype(np.float64),) * 4, identity=np.inf)
    )
    launches = bfs_like()
    reduce = Launch(
        "entries.cu",
        f"gbla_entries_reduce<{name}>",
        "",
        "\n" + src,
        (np.int64(5), Z, np.int32(0), np.uint64(72), Z, Z, np.uint64(280), np.uint64(288), Z),
    )
    launches.insert(-1, reduce)
    program = _fused.Program(launches)
    body = program.source[program.source.index("struct gbla_fused_steps") :]
    assert body.count(f"gbla_entries_reduce<{name}>(") == 1
    at = sum(len(launch.args) for launch in launches[:-2])
    # packed as launched: in the block, the last block's fold reads gridDim's one partial
    assert [int(x) for x in program.pack()[at : at + 9]] == [int(a) for a in reduce.args]


def test_the_collector_sees_launches_in_order_and_only_inside():
    calls = []

    class Fake:
        def __call__(self, grid, block, args):
            calls.append(args)

    kernel = _launch.Kernel(Fake(), ("x.cu", "k<int>", "", ""))
    kernel((1,), (1,), (1,))
    with _launch.collecting() as seen:
        kernel((1,), (1,), (2, 3))
        with _launch.collecting() as inner:
            kernel((1,), (1,), (4,))
        kernel((1,), (1,), (5,))
    kernel((1,), (1,), (6,))
    assert [launch.args for launch in seen] == [(2, 3), (5,)]
    assert [launch.args for launch in inner] == [(4,)]
    assert seen[0].file == "x.cu" and seen[0].kernel == "k<int>"
    assert len(calls) == 5  # every launch ran


def test_headers_are_inlined_once_across_files():
    text = _launch.sources(["loop.cu", "spmv.cu", "entries.cu"])
    assert text.count("// ---- lists.cuh") == 1 and text.count("// ---- frontier.cuh") == 1


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="nvcc not found")
@pytest.mark.parametrize(
    "policy",
    [DEFAULT_POLICY, pytest.param(DirectionPolicy(alpha=3.0), marks=pytest.mark.exhaustive)],
    ids=["default", "another policy"],
)
def test_the_fused_unit_compiles_with_nvcc(tmp_path, policy):
    launches = bfs_like(policy)
    launches[-1] = launches[-1]._replace(prelude=policy.cuda_source())
    unit = tmp_path / "fused_unit.cu"
    unit.write_text(
        _fused.Program(launches).source + "\nvoid* const gbla_fused_kernel = (void*)&gbla_fused;\n"
    )
    result = subprocess.run(
        [NVCC, "-std=c++17", "-arch=sm_90", "-c", str(unit), "-o", str(tmp_path / "unit.o")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-4000:]


def _profiler():
    spec = importlib.util.spec_from_file_location(
        "profile_fused", pathlib.Path(__file__).parents[1] / "tools" / "profile_fused.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_profilers_unit_counts_every_step_and_the_loops_top():
    profiler = _profiler()
    program = _fused.Program(bfs_like())
    text = profiler.instrument(program.source)
    steps = len(program._steps())
    assert all(f"gbla_prof[{k}] +=" in text for k in range(steps))
    assert f"gbla_prof[{steps}] +=" not in text
    assert f"gbla_prof[{profiler.TOP}] += 1" in text


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="nvcc not found")
def test_the_profilers_unit_compiles_with_nvcc(tmp_path):
    unit = tmp_path / "profiled_unit.cu"
    unit.write_text(
        _profiler().instrument(_fused.Program(bfs_like()).source)
        + "\nvoid* const gbla_fused_kernel = (void*)&gbla_fused;\n"
    )
    result = subprocess.run(
        [NVCC, "-std=c++17", "-arch=sm_90", "-c", str(unit), "-o", str(tmp_path / "unit.o")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-4000:]


# ============================================================================== on the GPU
def on_gpu(test):
    return pytest.mark.gpu(SKIP_NO_GPU(test))


def _path(n):
    return G.csr(np.arange(n - 1), np.arange(1, n), np.ones(n - 1), n)


def _grid(side):
    k = np.arange(side * side).reshape(side, side)
    src = np.r_[k[:, :-1].ravel(), k[:-1, :].ravel()]
    dst = np.r_[k[:, 1:].ravel(), k[1:, :].ravel()]
    return G.csr(np.r_[src, dst], np.r_[dst, src], np.ones(2 * len(src)), side * side)


def _hub(n):
    """A path whose middle vertex links to every vertex: one large level among thin ones."""
    src = np.r_[np.arange(n - 1), np.full(n, n // 2)]
    dst = np.r_[np.arange(1, n), np.arange(n)]
    return G.csr(src, dst, np.ones(len(src)), n)


def _random(n, m, seed):
    rng = np.random.default_rng(seed)
    return G.csr(rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 50, m), n)


GRAPHS = {
    "path": lambda: _path(3000),
    "grid": lambda: _grid(60),
    "hub": lambda: _hub(20000),
    "random": lambda: _random(5000, 20000, 1),
}


def _levels(S, source):
    d = csgraph.shortest_path(S, unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


@pytest.fixture
def unfused(monkeypatch):
    """Recordings made inside record without the block."""
    from gbla.runtime import capture

    def off():
        monkeypatch.setattr(capture, "FUSE", False)

    return off


@on_gpu
@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("parents", [False, True], ids=["levels", "parents"])
def test_bfs_fused_gives_scipy_levels_and_valid_parents(graph, parents):
    S = GRAPHS[graph]()
    A = gbla.Matrix.from_scipy(S, device="gpu")
    for source in (0, S.shape[0] // 3):
        stats = {}
        out = gbla.bfs(A, source, return_predecessors=parents, stats=stats)
        levels = host(out[0] if parents else out)
        np.testing.assert_array_equal(levels, _levels(S, source))
        if parents:
            verify.bfs(S, source, levels, host(out[1]))
    assert stats.get("fused"), stats.get("not_fused")


@on_gpu
@pytest.mark.parametrize("graph", ["path", "grid"])
def test_a_thin_search_runs_in_the_block_from_its_first_level(graph):
    S = GRAPHS[graph]()
    A = gbla.Matrix.from_scipy(S, device="gpu")
    gbla.bfs(A, 0)
    stats = {}
    levels = gbla.bfs(A, 0, stats=stats)
    np.testing.assert_array_equal(host(levels), _levels(S, 0))
    # iterations: the levels found after the source's, and the last that found none; the
    # block runs them all, the first too (the source's list made at the start)
    assert stats["fused"] and stats["fused_iterations"] == stats["iterations"] == stats["levels"]


@on_gpu
def test_the_hub_level_is_handed_over_and_taken_back():
    S = _hub(20000)
    A = gbla.Matrix.from_scipy(S, device="gpu")
    stats = {}
    levels = gbla.bfs(A, 0, stats=stats)
    np.testing.assert_array_equal(host(levels), _levels(S, 0))
    # the hub's out-edges (20000) are more than one block takes: the graph runs that level
    assert 0 < stats["fused_iterations"] < stats["levels"] - 1


@on_gpu
@pytest.mark.parametrize("vertices, edges", [(0, 0), (10**9, 10**9), (3, 10**9), (10**9, 5)])
def test_any_threshold_gives_the_same_levels(monkeypatch, vertices, edges):
    monkeypatch.setattr(_fused, "MAX_VERTICES", vertices)
    monkeypatch.setattr(_fused, "MAX_EDGES", edges)
    for graph in ("grid", "hub", "random"):
        S = GRAPHS[graph]()
        A = gbla.Matrix.from_scipy(S, device="gpu")
        stats = {}
        levels = gbla.bfs(A, 1, stats=stats)
        np.testing.assert_array_equal(host(levels), _levels(S, 1), err_msg=graph)
        if vertices == 0:
            assert stats["fused_iterations"] == 0


@on_gpu
@pytest.mark.parametrize("limit", [0, 1, 2, 7, 100])
def test_a_depth_limit_holds_in_the_block(limit):
    S = _path(500)
    A = gbla.Matrix.from_scipy(S, device="gpu")
    stats = {}
    levels = host(gbla.bfs(A, 0, depth_limit=limit, stats=stats))
    expected = _levels(S, 0)
    expected[expected > limit] = -1
    np.testing.assert_array_equal(levels, expected)


@on_gpu
@pytest.mark.parametrize("method", ["bellman_ford", "delta_stepping"])
@pytest.mark.parametrize("graph", ["grid", "random", "path"])
def test_sssp_fused_gives_scipy_distances(method, graph):
    S = GRAPHS[graph]().astype(np.float64)
    A = gbla.Matrix.from_scipy(S, device="gpu")
    for source in (0, 7):
        stats = {}
        dist, pred = gbla.sssp(A, source, method=method, return_predecessors=True, stats=stats)
        expected = csgraph.dijkstra(S, indices=source)
        np.testing.assert_allclose(host(dist), expected, rtol=1e-12)
        verify.sssp(S, source, host(dist), host(pred))


@on_gpu
def test_several_sources_fused_give_scipy_levels():
    S = _grid(40)
    A = gbla.Matrix.from_scipy(S, device="gpu")
    sources = [0, 5, 799, 1599, 5]
    levels = host(gbla.bfs(A, sources))
    for row, s in enumerate(sources):
        np.testing.assert_array_equal(levels[row], _levels(S, s))


@on_gpu
def test_fused_and_unfused_recordings_agree(unfused):
    S = _random(3000, 9000, 4)
    A = gbla.Matrix.from_scipy(S, device="gpu")
    fused = {}
    with_block = host(gbla.bfs(A, 2, stats=fused))
    unfused()
    B = gbla.Matrix.from_scipy(S, device="gpu")
    plain = {}
    without = host(gbla.bfs(B, 2, stats=plain))
    np.testing.assert_array_equal(with_block, without)
    assert fused["fused"] and not plain["fused"]
    assert fused["iterations"] == plain["iterations"]


@on_gpu
def test_a_loop_asked_not_to_fuse_runs_without_the_block_and_says_why():
    S = _path(200)
    A = gbla.Matrix.from_scipy(S, device="gpu").pattern()
    levels, stats = _users_bfs(A, fuse=False)
    np.testing.assert_array_equal(levels, _levels(S, 0))
    assert not stats["fused"] and "fuse=False" in stats["not_fused"]
    # the algebra's relaxation rounds are recorded without it (sssp.FUSE_ROUNDS), and say so
    W = gbla.Matrix.from_scipy(S, device="gpu")
    for method in ("bellman_ford", "delta_stepping"):
        run = {}
        dist = gbla.sssp(W, 0, method=method, stats=run)
        np.testing.assert_array_equal(host(dist), _levels(S, 0).astype(float))
        assert not run["fused"] and "fuse=False" in run["not_fused"], method


def _users_bfs(A, fuse=None):
    """A BFS a user writes: a bool frontier, rebound each level."""
    n = A.nrows
    q = gbla.Vector.from_coo([0], True, n, device="gpu")
    levels = gbla.assign(gbla.Vector.new(n, np.int32, device="gpu"), 0, mask=q.S)
    tracker = gbla.DirectionPolicy().tracker()

    def level(s, depth):
        s.q = gbla.vxm(s.q, A, "any_pair", mask=~s.levels.S, direction=tracker)
        gbla.assign(s.levels, depth, mask=s.q.S)

    stats = {}
    out = gbla.iterate(
        level, {"q": q, "levels": levels}, while_nonempty="q", stats=stats, fuse=fuse
    )
    return host(out["levels"].to_dense(-1)), stats


def _bfs_beside(A, carried):
    """A BFS whose iteration also walks a state of ``carried`` entries (`carried + 1`
    each level): its frontier stays thin whatever that state's size."""
    n = A.nrows
    q = gbla.Vector.from_coo([0], True, n, device="gpu")
    levels = gbla.assign(gbla.Vector.new(n, np.int32, device="gpu"), 0, mask=q.S)
    extra = gbla.Vector.from_coo(np.arange(carried), np.zeros(carried), n, device="gpu")

    def level(s, depth):
        s.q = gbla.vxm(s.q, A, "any_pair", mask=~s.levels.S, direction="push")
        gbla.assign(s.levels, depth, mask=s.q.S)
        s.extra = gbla.apply(s.extra, "plus", right=1.0)

    stats = {}
    out = gbla.iterate(
        level, {"q": q, "levels": levels, "extra": extra}, while_nonempty="q", stats=stats
    )
    return host(out["levels"].to_dense(-1)), host(out["extra"].to_dense(-1.0)), stats


@on_gpu
@pytest.mark.parametrize("carried", [100, 5000])
def test_the_block_leaves_to_the_graph_an_iteration_that_walks_a_long_list(carried):
    S = _path(6000)
    levels, extra, stats = _bfs_beside(gbla.Matrix.from_scipy(S, device="gpu").pattern(), carried)
    np.testing.assert_array_equal(levels, _levels(S, 0))
    expected = np.full(6000, -1.0)
    expected[:carried] = stats["iterations"]
    np.testing.assert_array_equal(extra, expected)
    assert stats["fused"], stats["not_fused"]
    # a short state: every iteration in the block; 5000 entries, more than the block takes
    # in one walk (Program.bounds): none
    assert carried < _fused.MAX_EDGES // 2 or carried > _fused.MAX_EDGES
    in_block = stats["iterations"] - 1 if carried < _fused.MAX_EDGES // 2 else 0
    assert stats["fused_iterations"] == in_block


def test_the_walks_read_the_kernels_counts_and_sizes_where_their_signatures_have_them():
    # _WALKS names arguments by position: C(k) must be a list's count, A(k) n or a list
    text = "".join(p.read_text() for p in sorted(pathlib.Path(_fused.__file__).parent.glob("*.cu")))
    for kernel, expression in _fused._WALKS.items():
        signature = re.search(r"\b" + kernel + r"\s*\(([^)]*)\)\s*\{", text)
        assert signature, kernel
        names = [re.split(r"[\s*]+", p.strip())[-1] for p in signature.group(1).split(",")]
        for k in map(int, re.findall(r"C\((\d+)\)", expression)):
            assert names[k].endswith("count") or names[k].startswith("count"), (kernel, k)
        for k in map(int, re.findall(r"A\((\d+)\)", expression)):
            assert names[k] in ("n", "n_in", "ids"), (kernel, k, names[k])


def test_every_kernel_the_block_runs_says_what_it_walks():
    assert {k for kinds in _fused.FUSIBLE.values() for k in kinds} == set(_fused._WALKS)
    launches = bfs_like()
    program = _fused.Program(launches)
    walk = program.source[
        program.source.index("walk(const u64* a)") : program.source.index(
            "static __device__ __forceinline__ void run("
        )
    ]
    # every launch but the first gather (the size test's) and the push (its gather's)
    assert walk.count("w = max(w,") == len(launches) - 2
    assert "(long long)(0)" not in walk
    # the store walks the longer of the new value's list and the buffer's where both are
    # known (a[k + 2], a[k + 8]), else all n
    k = sum(len(launch.args) for launch in launches[:-2])
    new, old = f"gbla_fw_count(a[{k + 2}])", f"gbla_fw_count(a[{k + 8}])"
    assert (
        f"{new} >= 0 && {old} >= 0 ? ({new} > {old} ? {new} : {old}) : (long long)a[{k}]"
    ) in walk


@on_gpu
def test_a_users_loop_fuses_and_its_stats_say_so():
    S = _path(200)
    # a pattern: the product of a bool frontier is bool, so the frontier is stored as it is
    levels, stats = _users_bfs(gbla.Matrix.from_scipy(S, device="gpu").pattern())
    np.testing.assert_array_equal(levels, _levels(S, 0))
    assert stats["fused"], stats["not_fused"]
    assert stats["fused_iterations"] == stats["iterations"] - 1


@on_gpu
def test_a_loop_casting_its_state_is_not_fused_and_says_why():
    S = _path(200)
    # float values: the product is float, cast back to the bool frontier each level by CuPy
    levels, stats = _users_bfs(gbla.Matrix.from_scipy(S, device="gpu"))
    np.testing.assert_array_equal(levels, _levels(S, 0))
    assert not stats["fused"] and "besides the kernels it launched" in stats["not_fused"]


@on_gpu
def test_a_pull_only_loop_is_not_fused_and_says_why():
    S = _path(50)
    A = gbla.Matrix.from_scipy(S, device="gpu")
    stats = {}
    levels = gbla.bfs(A, 0, direction="pull", stats=stats)
    np.testing.assert_array_equal(host(levels), _levels(S, 0))
    assert not stats["fused"] and "no push product" in stats["not_fused"]


@on_gpu
def test_a_thousand_fused_searches_do_not_grow_the_pool():
    import cupy as cp

    S = _grid(30)
    A = gbla.Matrix.from_scipy(S, device="gpu")
    pool = cp.get_default_memory_pool()
    for s in range(20):
        gbla.bfs(A, s)
    gc.collect()
    before = pool.used_bytes()
    for k in range(1000):
        gbla.bfs(A, k % 900)
    gc.collect()
    assert pool.used_bytes() <= before
