"""gbla.warmup and `gbla warmup`: every built-in method run once on small graphs, so that its
kernels are compiled into the kernel cache before a user's first call."""

import os
import re
import subprocess
import sys

import pytest

import gbla
from gbla import cli, methods
from gbla._warmup import WEIGHTS, jobs

from .conftest import SKIP_NO_GPU


def test_jobs_are_every_method_once_and_sssp_once_a_weight_dtype():
    out = jobs()
    bfs = [j for j in out if j[0] == "bfs"]
    sssp = [j for j in out if j[0] == "sssp"]
    assert [name for _, name, _ in bfs] == methods.names("bfs")
    assert all(w is None for _, _, w in bfs)
    assert len(sssp) == len(methods.names("sssp")) * len(WEIGHTS)
    assert {(name, w) for _, name, w in sssp} == {
        (name, w) for name in methods.names("sssp") for w in WEIGHTS
    }


def test_jobs_take_names_as_lists_or_comma_strings():
    assert jobs("sssp", "bellman_ford,delta_stepping", "float32") == [
        ("sssp", "delta_stepping", "float32"),
        ("sssp", "bellman_ford", "float32"),
    ]
    assert jobs(["bfs"], ["algebraic"]) == [("bfs", "algebraic", None)]


@pytest.mark.parametrize(
    "kwargs, named",
    [
        ({"algorithms": ["bfs", "pagerank"]}, "algorithms"),
        ({"method_names": ["bellman_ford"], "algorithms": ["bfs"]}, "methods"),
        ({"method_names": ["no_such"]}, "methods"),
        ({"weights": ["int8"]}, "weights"),
        ({"weights": []}, "weights"),
        ({"algorithms": 3}, "algorithms"),
    ],
)
def test_bad_names_raise_naming_the_argument(kwargs, named):
    with pytest.raises((gbla.InvalidValue, gbla.DomainMismatch), match=named):
        jobs(**kwargs)


def test_warmup_in_this_process_runs_every_method_that_runs_here():
    report = gbla.warmup(workers=0, device="cpu")
    assert report["failed"] == []
    runs_here = [j for j in jobs() if "cpu" in methods.get(j[1]).devices]
    assert report["jobs"] == len(runs_here) > 0
    # each method that cannot run on the CPU is named once, with why
    gpu_only = [n for n in methods.names() if "cpu" not in methods.get(n).devices]
    assert len(report["skipped"]) == len(gpu_only)
    assert all("runs on the gpu only" in line for line in report["skipped"])
    assert report["device"] == "cpu" and "cache" not in report


def test_warmup_in_worker_processes():
    report = gbla.warmup(["bfs", "sssp"], ["algebraic", "bellman_ford"], workers=2, device="cpu")
    assert report == {**report, "jobs": 1 + len(WEIGHTS), "workers": 2, "failed": []}


def test_a_job_that_fails_is_reported_and_the_others_run():
    def broken(A, source, **kwargs):
        raise RuntimeError("kernel exploded")

    methods.register(methods.Method("broken_for_warmup", "bfs", "fails", broken))
    try:
        report = gbla.warmup(["bfs"], ["algebraic", "broken_for_warmup"], workers=0, device="cpu")
    finally:
        methods.unregister("broken_for_warmup")
    assert report["jobs"] == 2
    assert report["failed"] == ["bfs broken_for_warmup pattern: RuntimeError: kernel exploded"]


def test_on_job_hears_of_every_job_as_it_ends():
    heard = []
    report = gbla.warmup(
        ["sssp"],
        ["bellman_ford"],
        weights=["float32", "float64"],
        workers=2,
        device="cpu",
        on_job=lambda *args: heard.append(args),
    )
    assert [done for done, *_ in heard] == [1, 2]
    assert all(
        total == 2 and seconds > 0 and failure is None for _, total, _, seconds, failure in heard
    )
    assert {job for _, _, job, _, _ in heard} == {
        ("sssp", "bellman_ford", "float32"),
        ("sssp", "bellman_ford", "float64"),
    }
    assert report["failed"] == []


def test_on_job_must_be_callable():
    with pytest.raises(gbla.InvalidValue, match="on_job"):
        gbla.warmup(["bfs"], ["algebraic"], workers=0, device="cpu", on_job=3)


def test_bad_workers_raise():
    with pytest.raises(gbla.InvalidValue, match="workers"):
        gbla.warmup(["bfs"], ["algebraic"], workers=-1, device="cpu")


def test_the_command_says_what_ran(capsys):
    code = cli.main(["warmup", "--device", "cpu", "--workers", "0", "--methods", "algebraic"])
    out = capsys.readouterr().out
    assert code == 0
    assert "[1/1] bfs algebraic pattern: " in out
    assert "ran 1 of 1 jobs on the cpu" in out and "this process" in out


def test_the_command_fails_on_a_bad_name(capsys):
    assert cli.main(["warmup", "--device", "cpu", "--weights", "int8"]) == 2
    assert "weights" in capsys.readouterr().err


def _compiled_since(cache, before):
    """(gbla's kernels, CuPy's kernels) in the modules compiled into ``cache`` since it held
    the files ``before``, by the names their cubins hold."""
    names = set()
    for f in set(os.listdir(cache)) - before:
        names |= {m.decode() for m in re.findall(rb"(?:gbla|cupy)_\w+", (cache / f).read_bytes())}
    return sorted(n for n in names if n.startswith("gbla")), sorted(
        n for n in names if n.startswith("cupy")
    )


@SKIP_NO_GPU
@pytest.mark.gpu
def test_after_warmup_a_new_process_compiles_no_kernel_of_gbla(tmp_path, monkeypatch):
    cache = tmp_path / "kernels"
    monkeypatch.setenv("CUPY_CACHE_DIR", str(cache))
    report = gbla.warmup(
        ["bfs", "sssp"], ["algebraic", "bellman_ford"], weights=["float64"], workers=2
    )
    assert report["failed"] == [] and report["jobs"] == 2
    # its modules were compiled into the cache, or loaded compiled ahead of time (gbla._prebuilt)
    assert report["cache"] == str(cache)
    assert report["cache_files"] > 0 or report["modules"]["compiled"] == 0
    assert sum(report["modules"].values()) > 0
    before = set(os.listdir(cache))
    # other graphs of the same kinds, in a new process: gbla's kernels all come from the cache
    # (a kernel of CuPy's own, which CuPy specializes by shape, may still compile: printed)
    code = (
        "import numpy as np, gbla\n"
        "from gbla import generators as g\n"
        "A = g.rmat(11, 8, seed=5, device='gpu')\n"
        "for s in (0, 3, 17): gbla.bfs(A, s, return_predecessors=True)\n"
        "W = g.with_weights(g.grid2d(20, 30, device='gpu'), 1, 9).astype(np.float64)\n"
        "gbla.sssp(W, 7, method='bellman_ford', return_predecessors=True)\n"
        "gbla.synchronize()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    ours, cupys = _compiled_since(cache, before)
    print("CuPy's kernels compiled after the warm-up:", cupys)
    assert ours == [], f"gbla kernels compiled after the warm-up: {ours}"


@SKIP_NO_GPU
@pytest.mark.gpu
def test_after_warmup_the_command_compiles_no_kernel_of_gbla(tmp_path, monkeypatch):
    cache = tmp_path / "kernels"
    monkeypatch.setenv("CUPY_CACHE_DIR", str(cache))
    report = gbla.warmup(["sssp"], ["bellman_ford"], weights=["int32"], workers=1)
    assert report["failed"] == []
    before = set(os.listdir(cache))
    path = tmp_path / "road.mtx"
    gbla.io.write_mtx(path, gbla.generators.grid2d(30, 17, device="cpu"))
    command = [sys.executable, "-m", "gbla", "sssp", str(path), "--source", "5"]
    command += ["--method", "bellman_ford", "--weights", "1", "255", "--predecessors"]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    ours, cupys = _compiled_since(cache, before)
    print("CuPy's kernels compiled after the warm-up:", cupys)
    assert ours == [], f"gbla kernels compiled after the warm-up: {ours}"
