"""The ``gbla`` command and gbla.bench, on the CPU: bench tables and JSON, peers, the check
against the reference (a deliberately wrong method is flagged), the bfs/sssp subcommands
against SciPy, clean usage errors, and tools/benchmarks_md.py on the JSON."""

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from scipy.sparse import csgraph

import gbla
from gbla import bench, cli

ROOT = Path(__file__).resolve().parents[1]
GRAPHS = ["rmat:8", "grid:20x20", "rgg:8"]


def run(capsys, *argv):
    """(exit status, stdout, stderr) of ``gbla ARGV`` run in-process."""
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def load_module(relative):
    spec = importlib.util.spec_from_file_location(Path(relative).stem, ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bench_json(capsys, tmp_path, *argv):
    path = tmp_path / "out.json"
    status, out, err = run(capsys, "bench", *argv, "--no-progress", "--json", path)
    return status, out, err, json.loads(path.read_text())


def _registered(name, run, devices, description):
    """Registers a BFS method for one test (a fixture body: yields its name, then removes it)."""
    gbla.methods.register(gbla.methods.Method(name, "bfs", description, run, devices=devices))
    yield name
    gbla.methods.unregister(name)


@pytest.fixture
def wrong_bfs():
    """A registered BFS method that puts every reached vertex but the source one level too
    deep: the benchmark must flag it."""

    def run_wrong(A, source, **kwargs):
        levels = gbla.bfs(A, source)
        return levels + (levels > 0)

    yield from _registered("wrong_bfs", run_wrong, ("cpu", "gpu"), "test: one level too deep")


@pytest.fixture
def gpu_only_bfs():
    """A registered GPU-only BFS method (runs nowhere in these tests)."""

    def never(*args, **kwargs):
        raise AssertionError("a GPU-only method ran on the CPU")

    yield from _registered("fake_gpu_bfs", never, ("gpu",), "test: GPU only")


@pytest.fixture
def broken_bfs():
    """A registered BFS method that raises."""

    def broken(*args, **kwargs):
        raise RuntimeError("out of luck")

    yield from _registered("broken_bfs", broken, ("cpu", "gpu"), "test: raises")


# ------------------------------------------------------------------ methods
def test_methods_lists_every_registered_method_and_where_it_runs(capsys, gpu_only_bfs):
    status, out, _ = run(capsys, "methods")
    assert status == 0
    lines = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert list(lines) == gbla.methods.names()
    assert " algebraic " in lines["algebraic"] and " yes " in lines["algebraic"]
    expected = " yes " if gbla.gpu_available() else " no: needs a GPU "
    assert " kernel " in lines[gpu_only_bfs] and expected in lines[gpu_only_bfs]
    _, out, _ = run(capsys, "methods", "--algo", "sssp")
    assert [line.split()[0] for line in out.splitlines()[1:]] == gbla.methods.names("sssp")


def test_python_m_gbla_runs_the_console_entry():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-m", "gbla", "methods"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "algebraic" in done.stdout and "delta_stepping" in done.stdout


# ------------------------------------------------------------------ bench
@pytest.mark.parametrize("algo", ["bfs", "sssp"])
def test_bench_reports_every_method_checked_with_positive_times_and_gteps(capsys, tmp_path, algo):
    status, out, _, doc = bench_json(
        capsys, tmp_path, *GRAPHS, "--algo", algo, "--sources", 3, "--device", "cpu"
    )
    assert status == 0
    assert "GTEPS counts each undirected edge of the reached component once" in out
    assert doc["schema"] == "gbla-bench/1"
    assert doc["command"].startswith("gbla bench rmat:8 grid:20x20")
    for key in ("gbla", "numpy", "scipy", "python", "cpu", "gpu"):
        assert key in doc["machine"]
    ran = [r for r in doc["records"] if r["status"] == "ok"]
    assert {r["graph"] for r in ran} == set(GRAPHS)
    assert {r["method"] for r in ran} == {
        m
        for m in gbla.methods.names(algo)
        if "cpu" in gbla.methods.get(m).devices
        and "memory_budget" not in gbla.methods.get(m).options
    }  # out of core: not benched yet
    for r in ran:
        assert r["algo"] == algo and r["device"] == "cpu" and r["check"] == "ok"
        assert len(r["times_ms"]) == len(r["sources"]) == 3
        assert all(t > 0 for t in r["times_ms"]) and r["mean_ms"] > 0 and r["gteps"] > 0
        assert all(0 < e <= r["graph_info"]["edges"] for e in r["edges"])
        assert r["peak_bytes"] > 0 and r["peak_ratio"] > 0  # CPU: tracemalloc's peak
        assert r["count_name"] == ("levels" if algo == "bfs" else "iterations")
        assert all(c >= 1 for c in r["counts"])
        assert f"{r['method']} " in out
    for r in doc["records"]:
        assert r["status"] in ("ok", "skipped") and (r["status"] == "ok") == (r["check"] == "ok")
    if algo == "sssp":  # unweighted generators: weight 1 an edge unless --weights, said so
        assert all(r["graph_info"]["weights"]["source"] == "unit" for r in ran)
        assert "every edge weighs 1" in out


def test_random_sssp_weights_only_when_asked_and_said_so(capsys, tmp_path):
    #   0 - 1 - 2, unweighted
    path = tmp_path / "chain.txt"
    path.write_text("0 1\n1 0\n1 2\n2 1\n")
    out_path = tmp_path / "d.npy"
    status = cli.main(
        ["sssp", str(path), "--source", "0", "--device", "cpu", "--save", str(out_path)]
    )
    out = capsys.readouterr().out
    assert status == 0 and "every edge weighs 1" in out
    np.testing.assert_array_equal(np.load(out_path), [0.0, 1.0, 2.0])
    status = cli.main(
        [
            "sssp",
            str(path),
            "--source",
            "0",
            "--device",
            "cpu",
            "--weights",
            "5",
            "9",
            "--save",
            str(out_path),
        ]
    )
    out = capsys.readouterr().out
    assert status == 0 and "random integers in [5, 9] (--weights" in out
    d = np.load(out_path)
    assert 5 <= d[1] <= 9 and 10 <= d[2] <= 18
    status, out, _, doc = bench_json(
        capsys,
        tmp_path,
        str(path),
        "--algo",
        "sssp",
        "--sources",
        1,
        "--device",
        "cpu",
        "--weights",
        "1",
        "255",
    )
    assert status == 0 and "as --weights asked" in out
    assert doc["records"][0]["graph_info"]["weights"] == dict(
        source="generated", lo=1, hi=255, seed=0
    )


def test_bench_uses_the_same_sources_for_every_method(capsys, tmp_path):
    _, _, _, doc = bench_json(
        capsys,
        tmp_path,
        "rmat:8",
        "--algo",
        "sssp",
        "--sources",
        4,
        "--seed",
        3,
        "--peer-libs",
        "scipy",
        "--device",
        "cpu",
    )
    ran = [r for r in doc["records"] if r["status"] == "ok"]
    assert len({tuple(r["sources"]) for r in ran}) == 1
    A = gbla.generators.rmat(8, seed=3, device="cpu")
    warmup, sources = bench.pick_sources(A, 4, seed=3)
    assert ran[0]["sources"] == sources and ran[0]["warmup_source"] == warmup
    degrees = np.diff(A.to_scipy().indptr)
    assert all(degrees[s] > 0 for s in sources + [warmup])


def test_bench_plot_writes_a_png(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "bench.png"
    status, out, _ = run(
        capsys,
        "bench",
        "rmat:8",
        "grid:20x20",
        "--sources",
        2,
        "--peer-libs",
        "scipy",
        "--device",
        "cpu",
        "--plot",
        png,
    )
    assert status == 0 and f"wrote {png}" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_plot_without_matplotlib_is_a_clean_error(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    status, out, err = run(capsys, "bench", "rmat:8", "--plot", tmp_path / "x.png")
    assert status == 2 and out == ""
    assert err == "gbla: error: --plot needs matplotlib: pip install gbla[plot]\n"


def test_bench_without_graph_runs_the_embedded_defaults(capsys):
    status, out, _ = run(capsys, "bench", "--sources", 2, "--no-progress")
    assert status == 0
    default_rmat = "rmat:16" if gbla.gpu_available() else "rmat:12"
    assert f"bfs on {default_rmat}:" in out
    assert "bfs on dataset:power_grid:" in out
    if not gbla.gpu_available():  # one method on the CPU: SciPy joins for a comparison
        assert "\nscipy " in out


@pytest.mark.parametrize("algo", ["bfs", "sssp"])
def test_bench_peers_agree_with_gbla(capsys, tmp_path, algo):
    peers = ["scipy"] + (["graphblas"] if importlib.util.find_spec("graphblas") else [])
    status, _, _, doc = bench_json(
        capsys,
        tmp_path,
        "rmat:8",
        "grid:20x20",
        "--algo",
        algo,
        "--methods",
        gbla.methods.names(algo)[0],
        "--sources",
        4,
        "--peers",
        "--peer-sources",
        2,
        "--device",
        "cpu",
    )
    assert status == 0
    for graph in ("rmat:8", "grid:20x20"):
        rows = {r["method"]: r for r in doc["records"] if r["graph"] == graph}
        assert set(peers) <= set(rows)
        reference = rows[gbla.methods.names(algo)[0]]
        for peer in peers:
            r = rows[peer]
            assert r["kind"] == "peer" and r["check"] == "ok" and r["gteps"] > 0
            assert r["sources"] == reference["sources"][:2]
            assert r["edges"] == reference["edges"][:2]
            assert "first 2 of 4 sources" in r["note"]
        if algo == "bfs":
            assert rows["scipy"]["counts"] == reference["counts"][:2]


@pytest.mark.parametrize("algo, column", [("bfs", "us/level"), ("sssp", "us/iter")])
def test_bench_reports_microseconds_per_level_for_gbla_methods_only(capsys, tmp_path, algo, column):
    status, out, _, doc = bench_json(
        capsys,
        tmp_path,
        "grid:12x12",
        "--algo",
        algo,
        "--methods",
        gbla.methods.names(algo)[0],
        "--sources",
        3,
        "--peers",
        "--device",
        "cpu",
    )
    assert status == 0
    header = out.splitlines()[
        out.splitlines().index(next(line for line in out.splitlines() if line.startswith("method")))
    ]
    assert column in header.split()
    rows = {r["method"]: r for r in doc["records"]}
    mine = rows[gbla.methods.names(algo)[0]]
    expected = np.mean([t * 1e3 / c for t, c in zip(mine["times_ms"], mine["counts"])])
    assert mine["us_per_level"] == pytest.approx(expected)
    assert rows["scipy"]["us_per_level"] is None  # SciPy does not run in levels


def test_bench_lists_gpu_methods_as_skipped_on_a_cpu_only_machine(capsys, tmp_path, gpu_only_bfs):
    if gbla.gpu_available():
        pytest.skip("this machine has a GPU")
    status, out, _, doc = bench_json(capsys, tmp_path, "rmat:8", "--sources", 2)
    assert status == 0
    assert out.startswith("GPU methods need a GPU")
    assert gpu_only_bfs in out.splitlines()[0]
    row = next(line for line in out.splitlines() if line.startswith(gpu_only_bfs + " "))
    assert "skipped" in row and "needs a GPU" in row
    record = next(r for r in doc["records"] if r["method"] == gpu_only_bfs)
    assert record["status"] == "skipped" and record["check"] is None
    assert "gpu only" in record["reason"]


def test_bench_flags_a_wrong_method_as_mismatch_with_nonzero_exit(capsys, tmp_path, wrong_bfs):
    status, out, err, doc = bench_json(
        capsys,
        tmp_path,
        "rmat:8",
        "--methods",
        f"algebraic,{wrong_bfs}",
        "--sources",
        3,
        "--device",
        "cpu",
    )
    assert status == 1
    row = next(line for line in out.splitlines() if line.startswith(wrong_bfs + " "))
    assert "MISMATCH" in row and "differ from algebraic on 3 of 3 sources" in row
    assert f"gbla: MISMATCH: {wrong_bfs} on rmat:8" in err
    record = next(r for r in doc["records"] if r["method"] == wrong_bfs)
    assert record["check"] == "MISMATCH" and record["mismatches"] == record["sources"]


def test_results_are_checked_only_after_the_last_timed_run():
    """No host work between two timed calls: on_result sees every result after the runs."""
    A = gbla.Matrix.from_scipy(
        sp.random(60, 60, density=0.08, format="csr", random_state=3), device="cpu"
    )
    calls, seen = [], []

    def counting(A, source, **kwargs):
        calls.append(source)
        return gbla.bfs(A, source)

    gbla.methods.register(
        gbla.methods.Method(
            "counting_bfs", "bfs", "test: counts its calls", counting, devices=("cpu",)
        )
    )
    try:
        run = bench.run_method(
            A,
            "bfs",
            "counting_bfs",
            [3, 5, 7],
            warmup=1,
            on_result=lambda i, result: seen.append((i, len(calls), result.copy())),
        )
    finally:
        gbla.methods.unregister("counting_bfs")
    assert calls == [1, 3, 5, 7] + [3, 5, 7]  # then a call a source to measure its memory
    assert [i for i, _, _ in seen] == [0, 1, 2] and all(made == 4 for _, made, _ in seen)
    S = A.to_scipy()
    for (i, _, levels), source in zip(seen, [3, 5, 7]):
        hops = csgraph.shortest_path(S, unweighted=True, indices=source)
        np.testing.assert_array_equal(levels, np.where(np.isinf(hops), -1, hops))
        assert run["counts"][i] == levels.max() + 1
    peer = bench.run_peer(S.tocsr(), "bfs", "scipy", [3, 5], on_result=lambda i, r: seen.append(i))
    assert seen[-2:] == [0, 1] and len(peer["times_ms"]) == 2


def test_bench_reports_a_method_that_raises_as_error_and_goes_on(capsys, tmp_path, broken_bfs):
    status, out, err, doc = bench_json(
        capsys,
        tmp_path,
        "rmat:8",
        "--methods",
        "broken_bfs,algebraic",
        "--sources",
        2,
        "--device",
        "cpu",
    )
    assert status == 1 and "gbla: ERROR: broken_bfs on rmat:8" in err
    checks = {r["method"]: (r["check"], r["note"]) for r in doc["records"]}
    assert checks["broken_bfs"] == ("ERROR", "RuntimeError: out of luck")
    assert checks["algebraic"][0] == "ok"  # the next method becomes the reference


def test_reference_method_is_validated_by_graph500_rules(capsys, tmp_path, wrong_bfs):
    # The wrong method first: it becomes the reference and fails gbla.verify.
    status, _, err, doc = bench_json(
        capsys,
        tmp_path,
        "grid:20x20",
        "--methods",
        f"{wrong_bfs},algebraic",
        "--sources",
        2,
        "--device",
        "cpu",
    )
    assert status == 1
    checks = {r["method"]: r["check"] for r in doc["records"]}
    assert checks == {wrong_bfs: "INVALID", "algebraic": "MISMATCH"}
    assert "fails gbla.verify" in err


def test_gteps_counts_each_undirected_edge_and_self_loop_once(tmp_path):
    # 0 - 1 - 2 with a self-loop on 1, and a separate edge 3 - 4: 7 stored entries, 4 edges
    # (3 undirected ones and the loop); the component of 0, 1 or 2 has 3, that of 3 or 4 one.
    src = [0, 1, 1, 2, 1, 3, 4]
    dst = [1, 0, 2, 1, 1, 4, 3]
    path = tmp_path / "loop.mtx"
    scipy.io.mmwrite(path, sp.coo_array((np.ones(7), (src, dst)), shape=(5, 5)))
    records = bench.run_bench([str(path)], methods="algebraic", sources=6, device="cpu")
    r = records[0]
    assert r["graph_info"]["symmetric"] and r["graph_info"]["self_loops"] == 1
    assert r["graph_info"]["edges"] == 4
    expected = {0: 3, 1: 3, 2: 3, 3: 1, 4: 1}
    assert r["edges"] == [expected[s] for s in r["sources"]]


def test_gteps_counts_each_arc_of_a_directed_graph(tmp_path):
    # 0 -> 1 -> 2 -> 2 (a self-loop): from 0 three arcs, from 1 two, from 2 one.
    path = tmp_path / "arcs.mtx"
    scipy.io.mmwrite(path, sp.coo_array((np.ones(3), ([0, 1, 2], [1, 2, 2])), shape=(3, 3)))
    r = bench.run_bench([str(path)], methods="algebraic", sources=5, device="cpu")[0]
    assert not r["graph_info"]["symmetric"] and r["graph_info"]["edges"] == 3
    assert r["edges"] == [{0: 3, 1: 2, 2: 1}[s] for s in r["sources"]]


def test_bench_runs_sssps_auto_as_a_row_naming_the_method_it_ran():
    # 'auto' is gbla.sssp's own choice (on the CPU the algebra's bellman_ford), checked against
    # the reference like any row; BFS has no 'auto'
    records = bench.run_bench(
        ["rmat:8"], algo="sssp", methods="delta_stepping,auto", sources=3, device="cpu"
    )
    auto = [r for r in records if r["method"] == "auto"][0]
    assert auto["status"] == "ok" and auto["check"] == "ok"
    assert auto["ran"] == ["bellman_ford"] and auto["note"] == "ran bellman_ford"
    assert [r["ran"] for r in records if r["method"] == "delta_stepping"] == [["delta_stepping"]]
    with pytest.raises(gbla.UnknownName, match="'auto'"):
        bench.resolve_methods("bfs", "auto")


def test_the_warm_up_repeats_on_a_gpu_until_its_time_has_passed(monkeypatch):
    run = importlib.import_module("gbla.bench.run")
    monkeypatch.setattr(run.B, "sync", lambda device: None)
    calls = []
    run._warm("cpu", lambda: calls.append(1))
    assert calls == []  # the CPU has no clocks to wake
    run._warm("gpu", lambda: (calls.append(1), time.sleep(0.01)), ms=25)
    assert len(calls) == 3  # 10, 20, 30 ms: the third passes 25
    run._warm("gpu", lambda: calls.append(1), ms=1e9, most=5)
    assert len(calls) == 8  # at most `most` calls


# ------------------------------------------------------------------ bfs / sssp
def summary(out):
    return dict(line.split(None, 1) for line in out.splitlines() if line.strip())


def test_bfs_subcommand_summary_and_saved_levels_match_scipy(capsys, tmp_path):
    A = gbla.generators.rmat(8, device="cpu")
    source = int(np.flatnonzero(np.diff(A.to_scipy().indptr))[0])
    ref = csgraph.shortest_path(A.to_scipy(), unweighted=True, indices=source)
    status, out, _ = run(
        capsys,
        "bfs",
        "rmat:8",
        "--source",
        source,
        "--device",
        "cpu",
        "--save",
        tmp_path / "levels.npy",
    )
    assert status == 0
    s = summary(out)
    assert s["reached"] == f"{int(np.isfinite(ref).sum()):,} vertices"
    assert s["depth"].split()[0] == str(int(ref[np.isfinite(ref)].max()))
    assert s["method"] == "algebraic on cpu"
    np.testing.assert_array_equal(np.load(tmp_path / "levels.npy"), gbla.bfs(A, source))

    status, out, _ = run(
        capsys,
        "bfs",
        "rmat:8",
        "--source",
        source,
        "--device",
        "cpu",
        "--predecessors",
        "--save",
        tmp_path / "tree.npy",
    )
    assert status == 0 and "tree.npz (levels and parents)" in out
    saved = np.load(tmp_path / "tree.npz")
    np.testing.assert_array_equal(saved["levels"], gbla.bfs(A, source))
    gbla.verify.bfs(A, source, saved["levels"], saved["parents"])


def test_pagerank_subcommand_summary_and_saved_ranks_match_networkx(capsys, tmp_path):
    nx = pytest.importorskip("networkx")
    A = gbla.generators.rmat(8, device="cpu")
    status, out, _ = run(
        capsys,
        "pagerank",
        "rmat:8",
        "--device",
        "cpu",
        "--top",
        "3",
        "--save",
        tmp_path / "ranks.npy",
    )
    assert status == 0
    H = nx.from_scipy_sparse_array(A.to_scipy(), create_using=nx.DiGraph)
    ranks = nx.pagerank(H, weight=None)
    expected = np.array([ranks[v] for v in range(A.nrows)])
    saved = np.load(tmp_path / "ranks.npy")
    np.testing.assert_allclose(saved, expected, rtol=1e-9)
    best = int(np.argmax(expected))
    assert summary(out)["top"].startswith(f"{best} (")
    status, _, err = run(
        capsys, "pagerank", "rmat:8", "--device", "cpu", "--max-iter", "1", "--tol", "1e-12"
    )
    assert status == 2 and "did not converge" in err and "max_iter=1" in err


def test_sssp_subcommand_summary_and_saved_distances_match_scipy(capsys, tmp_path):
    W = gbla.generators.with_weights(gbla.generators.grid2d(20, 20, device="cpu"), 1, 9, seed=0)
    ref = csgraph.dijkstra(W.to_scipy(), indices=5)
    status, out, _ = run(
        capsys,
        "sssp",
        "grid:20x20",
        "--source",
        5,
        "--weights",
        1,
        9,
        "--device",
        "cpu",
        "--predecessors",
        "--save",
        tmp_path / "d.npz",
    )
    assert status == 0
    s = summary(out)
    assert s["reached"] == "400 vertices"
    assert float(s["max"].split()[1]) == ref.max()
    assert "integers in [1, 9]" in s["weights"]
    saved = np.load(tmp_path / "d.npz")
    np.testing.assert_array_equal(saved["dist"], ref)
    gbla.verify.sssp(W, 5, saved["dist"], saved["pred"])


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "argv, bad",
    [
        (["bench", "rmat:x"], "'rmat:x'"),
        (["bench", "grid:10"], "'grid:10'"),
        (["bench", "no/such/graph.mtx"], "'no/such/graph.mtx'"),
        (["bfs", "missing.mtx", "--source", "0"], "'missing.mtx'"),
        (["bench", "rmat:8", "--methods", "no_such_method"], "'no_such_method'"),
        (["bfs", "rmat:8", "--source", "0", "--method", "no_such_method"], "'no_such_method'"),
        (["bench", "rmat:8", "--sources", "0"], "'0'"),
        (["bench", "rmat:8", "--sources", "many"], "'many'"),
        (["bench", "rmat:8", "--peer-libs", "networkx"], "'networkx'"),
        (["bfs", "rmat:8", "--source", "256"], "256"),
        (["bench", "dataset:no_such_dataset"], "'dataset:no_such_dataset'"),
    ],
)
def test_usage_errors_are_one_line_with_exit_status_2(capsys, argv, bad):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert err.startswith("gbla: error: ") and err.count("\n") == 1 and bad in err


# ------------------------------------------------------------------ tools and wrappers
def test_benchmarks_md_has_a_table_row_per_method(capsys, tmp_path, wrong_bfs):
    _, _, _, doc = bench_json(
        capsys,
        tmp_path,
        "rmat:8",
        "grid:20x20",
        "--methods",
        f"algebraic,{wrong_bfs}",
        "--sources",
        2,
        "--peer-libs",
        "scipy",
        "--device",
        "cpu",
    )
    tool = load_module("tools/benchmarks_md.py")
    assert tool.main([str(tmp_path / "out.json")]) == 0
    md = capsys.readouterr().out
    assert md.startswith("# Benchmarks\n")
    assert f"`{doc['command']}`" in md
    for graph in ("rmat:8", "grid:20x20"):
        assert f"### {graph}, bfs\n" in md
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert sum(line.startswith("| algebraic | cpu |") for line in rows) == 2
    assert sum(line.startswith("| scipy | cpu |") for line in rows) == 2
    assert sum(f"| {wrong_bfs} | cpu |" in line and "| MISMATCH |" in line for line in rows) == 2
    # a run timed back to back and warmed says so; one written before (no "timing") does not
    assert doc["timing"] == bench.WARMED
    assert f"({doc['created']}, sources back to back, GPU warmed)" in md
    older = dict(doc)
    del older["timing"]
    (tmp_path / "older.json").write_text(json.dumps(older))
    assert tool.main([str(tmp_path / "older.json")]) == 0
    md = capsys.readouterr().out
    assert f"({doc['created']})" in md and "## older\n" in md


def test_benchmarks_md_renders_every_file_in_benchmarks_results():
    # BENCHMARKS.md is made from every JSON there: each must have its section and its tables
    tool = load_module("tools/benchmarks_md.py")
    root = Path(__file__).parents[1]
    paths = sorted(
        (str(p.relative_to(root)) for p in (root / "benchmarks" / "results").glob("*.json")),
        key=tool._order,
    )
    documents = [json.loads((root / p).read_text()) for p in paths]
    md = tool.render(documents, paths)
    for path in paths:
        section = md.split(f"\n## {Path(path).stem}\n", 1)[1].split("\n## ", 1)[0]
        assert "Command: " in section and "\n### " in section
    assert "## Summary: gbla against SciPy and GPU peers" in md


def test_corpus_table_has_a_row_a_graph_and_counts_the_wins_it_shows(capsys, tmp_path, wrong_bfs):
    # a correct stand-in kernel and a wrong one (which the table must never call the fastest)
    def right(A, source, **kwargs):
        return gbla.bfs(A, source)

    graphs = ("rmat:8", "grid:20x20")
    gbla.methods.register(
        gbla.methods.Method(
            "right_bfs", "bfs", "test: the algebra's levels", right, devices=("cpu",)
        )
    )
    try:
        runs = {}
        for algo, methods in (
            ("bfs", f"algebraic,right_bfs,{wrong_bfs}"),
            ("sssp", "bellman_ford"),
        ):
            _, _, _, doc = bench_json(
                capsys,
                tmp_path,
                *graphs,
                "--algo",
                algo,
                "--methods",
                methods,
                "--sources",
                2,
                "--peer-libs",
                "scipy",
                "--device",
                "cpu",
            )
            runs[algo] = tmp_path / f"{algo}.json"
            runs[algo].write_text(json.dumps(doc))
    finally:
        gbla.methods.unregister("right_bfs")
    tool = load_module("tools/corpus_table.py")
    assert tool.main([str(runs["bfs"]), str(runs["sssp"])]) == 0
    out = capsys.readouterr().out
    rows = [
        line.split(" | ")
        for line in out.splitlines()
        if line.startswith("| ") and not line.startswith("| graph") and not line.startswith("|---")
    ]
    assert [r[0] for r in rows] == ["| rmat:8", "| grid:20x20"]
    assert all(len(r) == 9 for r in rows)
    assert "wrong_bfs" not in out and all(r[4].endswith("`right_bfs`") for r in rows)
    assert all(r[7] == "-" for r in rows)  # no SSSP kernel ran
    bold = [sum(r[k].startswith("**") for r in rows) for k in (3, 6)]
    assert f"BFS: the algebra beats SciPy on {bold[0]} of 2 graphs" in out
    assert f"SSSP: the algebra beats SciPy on {bold[1]} of 2 graphs, the kernels on 0" in out


def test_benchmarks_md_renders_a_distributed_run_from_the_launcher(capsys, tmp_path):
    # what benchmarks/bench_distributed.py writes, here from two CPU processes
    from gbla.distributed import launch

    bench_script = Path(__file__).parents[1] / "benchmarks" / "bench_distributed.py"
    out = tmp_path / "dist.json"
    assert (
        launch.main(
            [
                "-n",
                "2",
                "--backend",
                "socket",
                str(bench_script),
                "--scale",
                "7",
                "--sources",
                "2",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    capsys.readouterr()
    tool = load_module("tools/benchmarks_md.py")
    assert tool.main([str(out)]) == 0
    md = capsys.readouterr().out
    assert (
        "Command: `python -m gbla.distributed.launch -n 2 benchmarks/bench_distributed.py "
        "--scale 7`" in md
    )
    assert "### rmat(7) over 2 rank(s) on the CPU\n" in md
    rows = [
        line
        for line in md.splitlines()
        if line.startswith(("| bfs |", "| sssp |", "| sssp_delta |"))
    ]
    assert len(rows) == 6 and all(int(r.split("|")[5]) >= 1 for r in rows)  # levels


def test_benchmarks_md_tables_issue_40_s_out_of_core_aims():
    # the differential row of each search of the issue's graphs against its aims: BFS within
    # 2x the bus bound (3x the in-memory search on a road network), SSSP at most 1.5x the
    # graph's bytes and 3x the bus bound; other files and strategies stay out of the table
    tool = load_module("tools/benchmarks_md.py")

    def result(graph, algo, ms, ratio, bound, in_memory):
        row = dict(strategy="differential", ms=ms, first_ms=2 * ms, h2d_ratio=ratio)
        row.update(ratio_to_bound=ms / bound, bus_bound_ms=bound)
        other = dict(row, strategy="zerocopy", ms=1.0)
        return dict(graph=graph, algo=algo, in_memory_ms=in_memory, rows=[other, row])

    def doc(*results):
        machine = dict(gpu="NVIDIA H200")
        return dict(
            schema=tool.OUTOFCORE,
            date="2026-11-29T01:00:00",
            machine=machine,
            results=list(results),
        )

    rmat = doc(
        result("rmat:21", "bfs", 9.0, 1.0, 5.0, 1.0),
        result("rmat:21", "sssp", 40.0, 1.6, 10.0, 4.0),
    )
    road = doc(result("x/USA-road-NE.mtx.gz", "bfs", 40.0, 1.0, 0.5, 20.0))
    paths = [
        "r/outofcore_rmat21_h200.json",
        "r/outofcore_usa_road_ne_h200.json",
        "r/outofcore_rmat21_sssp_widths_h200.json",
    ]
    md = tool._outofcore_summary([rmat, road, rmat], paths)
    rows = [line for line in md if line.startswith("| ") and "---" not in line][1:]
    assert rows == [
        "| rmat:21 | BFS | NVIDIA H200 (2026-11-29) | 9 (18) | 1.00 | 1.80 | 1 | 0.20 | 9.0 "
        "| x bus <= 2: 1.80, met |",
        "| rmat:21 | SSSP | NVIDIA H200 (2026-11-29) | 40 (80) | 1.60 | 4.00 | 4 | 0.40 | 10.0 "
        "| bytes / graph <= 1.5: 1.60, missed by 1.07x; x bus <= 3: 4.00, missed by 1.33x |",
        "| USA-road-NE | BFS | NVIDIA H200 (2026-11-29) | 40 (80) | 1.00 | 80.00 | 20 | 40.00 "
        "| 2.0 | time / in memory <= 3: 2.00, met |",
    ]


def test_benchmarks_md_tables_several_gpus_against_the_best_one_gpu_row():
    # the one-rank run's fastest row of each family is the baseline: a --single method
    # (SSSP: auto) or one rank of the distributed code (BFS: bfs_bitmap beats persistent)
    tool = load_module("tools/benchmarks_md.py")

    def row(algo, seconds, gteps):
        return {
            "algo": algo,
            "source": 0,
            "seconds": seconds,
            "gteps": gteps,
            "levels": 3,
            "bytes_total": 0,
            "collectives": 1,
        }

    def run(ranks, rows):
        return {
            "ranks": ranks,
            "device": "gpu",
            "scale": 9,
            "edge_factor": 16,
            "undirected_edges": 100,
            "build_seconds": 1.0,
            "machine": "two GPUs",
            "python": "3.12",
            "gbla": "0.1.0",
            "rows": rows,
        }

    one = run(
        1,
        [
            row("bfs_bitmap", 0.01, 100.0),
            row("sssp_push", 0.2, 5.0),
            row("sssp_push", 0.4, 2.5),
            row("single:bfs:persistent", 0.02, 50.0),
            row("single:sssp:auto", 0.1, 10.0),
        ],
    )
    two = run(2, [row("bfs_bitmap", 0.004, 250.0), row("sssp_push", 0.05, 20.0)])
    stem, gpu = tool.SCALING[0]
    md = tool.render([one, two], [f"r/{stem}_1x{gpu}.json", f"r/{stem}_2x{gpu}.json"])
    table = md[md.index("## Several GPUs against one") : md.index("## Files")]
    assert "| graph | search | best one GPU | 1 GPU | 2 GPUs |" in table
    assert (
        "| rmat(9) | bfs_bitmap | 10 (100.0): `bfs_bitmap, one rank` | 10 (100.0): 1.00x | "
        "4 (250.0): 2.50x |" in table
    )
    assert (
        "| rmat(9) | sssp_push | 100 (10.0): `auto` | 300 (3.3): 0.33x | 50 (20.0): 2.00x |"
        in table
    )
    assert "single:" not in table.split("|---")[-1]
    # a run without its one-rank file makes no table
    assert "## Several GPUs" not in tool.render([two], [f"r/{stem}_2x{gpu}.json"])


def _multisource(tmp_path, *extra):
    """(exit status, JSON) of benchmarks/bench_multisource.py on rmat(8), on the CPU."""
    out = tmp_path / "multisource.json"
    status = load_module("benchmarks/bench_multisource.py").main(
        [
            "--graph",
            "rmat:8",
            "--k",
            "1,4",
            "--repeats",
            "2",
            "--device",
            "cpu",
            "--json",
            str(out),
            *extra,
        ]
    )
    return status, json.loads(out.read_text())


def test_bench_multisource_checks_every_batch_and_renders_in_benchmarks_md(capsys, tmp_path):
    pytest.importorskip("networkx")
    status, doc = _multisource(tmp_path, "--algo", "bfs,sssp", "--nx-all-pairs", "60")
    assert status == 0
    assert [(run["graph"], run["algo"]) for run in doc["runs"]] == [
        ("rmat:8", "bfs"),
        ("rmat:8", "sssp"),
    ]
    for run in doc["runs"]:
        # one source alone, then the batches of 1 and 4
        assert [(r["k"], r["batch"]) for r in run["rows"]] == [(1, False), (1, True), (4, True)]
        assert all(r["check"] == "ok" and r["ms"] > 0 for r in run["rows"])
        assert run["rows"][-1]["ms_per_source"] == pytest.approx(run["rows"][-1]["ms"] / 4)
    pairs = doc["all_pairs"]
    assert pairs["check"] == "ok" and pairs["edges"] == 300 and pairs["entries"] > 60
    # the backend's rows are lazy: the time to read them is reported beside the time to make them
    assert pairs["gbla_row_type"] == "HopLengths" and pairs["gbla_read_s"] > 0
    assert pairs["speedup_with_read"] == pytest.approx(
        (pairs["networkx_s"] + pairs["networkx_read_s"]) / (pairs["gbla_s"] + pairs["gbla_read_s"])
    )
    printed = capsys.readouterr().out
    assert "then read every entry: networkx" in printed and "HopLengths" in printed
    capsys.readouterr()
    assert load_module("tools/benchmarks_md.py").main([str(tmp_path / "multisource.json")]) == 0
    md = capsys.readouterr().out
    assert f"Command: `{doc['command']}`" in md
    assert doc["command"].startswith("python benchmarks/bench_multisource.py --graph rmat:8")
    for algo in ("bfs", "sssp"):
        assert f"### rmat:8, {algo} from many sources at once\n" in md
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert sum(line.startswith("| 4 |") and line.endswith("| ok |") for line in rows) == 2
    assert "### networkx all_pairs_shortest_path_length\n" in md
    assert "then every entry read" in md and "`HopLengths` mappings" in md
    assert "the results equal" in md
    # a run from before the read time was measured renders as it did
    md_tool = load_module("tools/benchmarks_md.py")
    old = {
        k: v
        for k, v in pairs.items()
        if k not in ("networkx_read_s", "gbla_read_s", "speedup_with_read", "gbla_row_type")
    }
    assert md_tool._all_pairs_line(old).endswith(f"**{old['speedup']:.1f}x**; the dicts equal.")


def test_bench_multisource_flags_a_batch_unlike_its_single_sources(capsys, tmp_path, monkeypatch):
    bfs = gbla.bfs

    def wrong_with_several(A, source, **kwargs):
        levels = bfs(A, source, **kwargs)
        return levels + 1 if np.ndim(source) else levels

    monkeypatch.setattr(gbla, "bfs", wrong_with_several)
    status, doc = _multisource(tmp_path)
    assert status == 1
    assert [r["check"] for r in doc["runs"][0]["rows"]] == ["ok", "MISMATCH", "MISMATCH"]


def test_bench_multisource_reports_a_batch_that_raises_and_goes_on(capsys, tmp_path, monkeypatch):
    bfs = gbla.bfs

    def out_of_memory_with_four(A, source, **kwargs):
        if np.ndim(source) and len(source) == 4:
            raise MemoryError("Out of memory allocating 9,999,999,999 bytes")
        return bfs(A, source, **kwargs)

    monkeypatch.setattr(gbla, "bfs", out_of_memory_with_four)
    status, doc = _multisource(tmp_path)
    assert status == 1
    assert [r["check"] for r in doc["runs"][0]["rows"]] == ["ok", "ok", "ERROR"]
    capsys.readouterr()
    assert load_module("tools/benchmarks_md.py").main([str(tmp_path / "multisource.json")]) == 0
    assert (
        "| 4 | - | - | - | - | - | ERROR: MemoryError: Out of memory allocating"
        in capsys.readouterr().out
    )


def test_table_computes_us_per_level_for_records_older_than_the_column():
    base = dict(
        graph="g",
        algo="bfs",
        count_name="levels",
        device="gpu",
        mean_ms=3.0,
        median_ms=3.0,
        gteps=None,
        peak_bytes=None,
        check="ok",
        status="ok",
        note=None,
    )
    old = dict(base, method="old", kind="kernel", times_ms=[2.0, 4.0], counts=[4, 2])
    peer = dict(base, method="scipy", kind="peer", times_ms=[2.0], counts=[4])
    rows = {
        line.split()[0]: line.split() for line in bench.format_table([old, peer]).splitlines()[2:]
    }
    assert rows["old"][6] == "1250.0"  # mean of 500 and 2000 microseconds per level
    assert rows["scipy"][6] == "-"


def test_version_and_bare_usage_and_help_on_every_option(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"gbla {gbla.__version__}"
    assert cli.main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: gbla") and "bench" in out and "sssp" in out
    parser = cli._parser()
    subparsers = next(a for a in parser._actions if a.dest == "command").choices
    for name, sub in [("gbla", parser)] + list(subparsers.items()):
        for action in sub._actions:
            assert action.help, f"{name} {action.option_strings or action.dest} has no help"


def test_an_unreadable_graph_is_recorded_and_the_others_still_run(capsys, tmp_path):
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n")  # 1 of 2
    status, out, err, doc = bench_json(
        capsys, tmp_path, "rmat:6", str(bad), "grid:5x5", "--sources", 1, "--device", "cpu"
    )
    assert status == 1  # a failure to report, and the JSON written all the same
    by_graph = {}
    for r in doc["records"]:
        by_graph.setdefault(r["graph"], []).append(r)
    assert set(by_graph) == {"rmat:6", str(bad), "grid:5x5"}
    (unreadable,) = by_graph[str(bad)]
    assert unreadable["check"] == "UNREADABLE" and "ends after 1 entries" in unreadable["note"]
    assert all(r["check"] in ("ok", None) for g in ("rmat:6", "grid:5x5") for r in by_graph[g])
    assert "could not be read" in out and "UNREADABLE" in err


def test_the_chart_names_graphs_by_file_name():
    from gbla.bench import chart

    assert chart.label("/data/road/USA-road-NE.mtx.gz") == "USA-road-NE"
    assert (
        chart.label("rmat:22") == "rmat:22"
        and chart.label("dataset:power_grid") == "dataset:power_grid"
    )


def test_the_chart_is_drawn_with_the_machine(tmp_path):
    pytest.importorskip("matplotlib")  # gbla[plot]; the GPU machine has it
    status = cli.main(
        [
            "bench",
            "rmat:6",
            "--sources",
            "1",
            "--device",
            "cpu",
            "--plot",
            str(tmp_path / "c.png"),
            "--no-progress",
        ]
    )
    assert status == 0 and (tmp_path / "c.png").stat().st_size > 0


@pytest.mark.parametrize("algo, method", [("bfs", "out_of_core_bfs"), ("sssp", "out_of_core_sssp")])
def test_bench_runs_the_out_of_core_methods_with_a_memory_budget_and_reports_the_traffic(
    capsys, tmp_path, algo, method
):
    reference = "algebraic" if algo == "bfs" else "bellman_ford"
    status, out, _, doc = bench_json(
        capsys,
        tmp_path,
        "rmat:8",
        "--algo",
        algo,
        "--methods",
        f"{reference},{method}",
        "--sources",
        2,
        "--device",
        "cpu",
        "--memory-budget",
        50_000,
    )
    assert status == 0
    record = next(r for r in doc["records"] if r["method"] == method)
    assert record["status"] == "ok" and record["check"] == "ok"
    assert len(record["h2d_bytes"]) == 2 and all(b > 0 for b in record["h2d_bytes"])
    assert record["graph_bytes"] > 0
    # the table gains the traffic columns, filled for the out-of-core method only
    header = next(line for line in out.splitlines() if line.startswith("method"))
    assert "H2D GB" in header and "H2D / graph" in header and "held / budget" in header
    row = next(line.split() for line in out.splitlines() if line.startswith(method))
    moved = sorted(record["h2d_bytes"])
    assert f"{(moved[0] + moved[1]) / 2 / record['graph_bytes']:.2f}" in row
    # the device bytes each search held, as it accounts them, within its budget
    held = record["held_of_budget"]
    assert len(held) == 2 and all(0 < h <= 1 for h in held)
    assert f"{max(held):.2f}" in row
    assert doc["settings"]["memory_budget"] == 50_000
    # without a budget the method is listed, skipped, and says why
    status, out, _, doc = bench_json(
        capsys,
        tmp_path,
        "rmat:8",
        "--algo",
        algo,
        "--methods",
        f"{reference},{method}",
        "--sources",
        2,
        "--device",
        "cpu",
    )
    record = next(r for r in doc["records"] if r["method"] == method)
    assert record["status"] == "skipped" and "needs --memory-budget" in record["note"]


@pytest.mark.parametrize("value", ["0", "2.5", "lots"])
def test_a_bad_memory_budget_is_refused_by_the_command_line(capsys, value):
    status, _, err = run(capsys, "bench", "rmat:8", "--memory-budget", value)
    assert status == 2
    assert "--memory-budget: must be bytes or a fraction in (0, 1]" in err


def test_a_gpu_bench_run_says_which_kernels_compiled_ahead_of_time_it_could_take(
    capsys, tmp_path, monkeypatch
):
    # gbla/_prebuilt.py: a first call "cold" loads them; a GPU run's JSON keeps what they were
    # (GBLA_PREBUILT's folders, the package's archives; a CPU run's None) and BENCHMARKS.md
    # says it beside the timing
    from gbla import _prebuilt

    monkeypatch.delenv("GBLA_PREBUILT", raising=False)
    status, _, _, doc = bench_json(capsys, tmp_path, "rmat:6", "--sources", 1, "--device", "cpu")
    assert status == 0 and doc["settings"]["prebuilt"] is None
    package = _prebuilt.describe()
    assert package.startswith("the package's for CuPy ") and "sm_90" in package
    monkeypatch.setenv("GBLA_PREBUILT", str(tmp_path / "prebuilt"))
    said = _prebuilt.describe()
    assert said == f"GBLA_PREBUILT={tmp_path / 'prebuilt'}; {package}"
    monkeypatch.setattr(_prebuilt, "PACKAGE_DIR", tmp_path / "none")
    monkeypatch.delenv("GBLA_PREBUILT")
    assert _prebuilt.describe() is None
    doc["settings"]["prebuilt"] = said  # as a GPU run writes it
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc))
    capsys.readouterr()
    assert load_module("tools/benchmarks_md.py").main([str(path)]) == 0
    assert f", kernels compiled ahead of time: {said})" in capsys.readouterr().out
