"""gbla bench's peak memory: each method's own, measured in untimed calls of its own (CuPy's pool
on the GPU, tracemalloc on the CPU), none of it carried over from a method run before, and
set against the graph's stored bytes."""

import json
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

import gbla
from gbla import _backend as B
from gbla import bench, cli

from .conftest import SKIP_NO_GPU

MIB = 2**20
HOG = 64 * MIB  # what the hungry method holds: far above any graph of these tests


def _register(name, run, description):
    gbla.methods.register(gbla.methods.Method(name, "bfs", description, run))
    return name


@pytest.fixture
def hungry_bfs():
    """A BFS method that keeps HOG bytes on the matrix it is given (as a cached transpose
    would stay) and makes HOG more, transient, in every call."""

    def hungry(A, source, **kwargs):
        xp = B.xp_of(A.device)
        if "hog" not in A._cache:
            A._cache["hog"] = xp.ones(HOG // 8, np.int64)
        scratch = xp.ones(HOG // 8, np.int64)
        del scratch
        return gbla.bfs(A, source)

    yield _register("hungry_bfs", hungry, "test: holds 64 MiB, makes 64 MiB more a call")
    gbla.methods.unregister("hungry_bfs")


@pytest.fixture
def watched_bfs():
    """A BFS method that notes, at each call, whether memory is being measured: tracemalloc
    tracing (CPU) or a CuPy memory hook installed (GPU)."""
    seen = []

    def watched(A, source, **kwargs):
        if A.device == "gpu":
            from cupy.cuda import memory_hook

            seen.append(bool(memory_hook.get_memory_hooks()))
        else:
            seen.append(tracemalloc.is_tracing())
        return gbla.bfs(A, source)

    _register("watched_bfs", watched, "test: notes whether memory is measured")
    yield seen
    gbla.methods.unregister("watched_bfs")


def _records(device, methods, graph="grid:30x30", sources=3):
    return {
        r["method"]: r
        for r in bench.run_bench(
            [graph], algo="bfs", methods=methods, sources=sources, device=device
        )
    }


def test_a_rows_peak_carries_nothing_of_a_hungrier_method_run_before(device, hungry_bfs):
    alone = _records(device, "algebraic")["algebraic"]
    after = _records(device, f"{hungry_bfs},algebraic")
    assert after[hungry_bfs]["peak_bytes"] >= 2 * HOG  # its cache and its scratch at once
    # its cache stays with its own view of the graph: algebraic neither sees nor pays for it
    cheap = after["algebraic"]
    assert 0 < cheap["peak_bytes"] < HOG // 8
    assert cheap["peak_bytes"] <= 2 * alone["peak_bytes"] + MIB


def test_what_a_method_keeps_on_the_graph_counts_in_every_sources_peak(device, hungry_bfs):
    record = _records(device, hungry_bfs)[hungry_bfs]
    assert len(record["peak_bytes_per_source"]) == len(record["sources"]) == 3
    # kept from the first call (HOG) and made again in each (HOG)
    assert all(p >= 2 * HOG for p in record["peak_bytes_per_source"])
    assert record["peak_bytes"] == max(record["peak_bytes"], *record["peak_bytes_per_source"])


def test_memory_is_measured_only_in_untimed_calls(device, watched_bfs):
    A = gbla.Matrix.from_scipy(
        sp.random(80, 80, density=0.06, format="csr", random_state=1), device=device
    )
    run = bench.run_method(A, "bfs", "watched_bfs", [2, 5, 9], warmup=1)
    # the warm-up measured, its repeats while a GPU's clocks come back (as many as 25 ms
    # take) and the three timed calls not, then a measured call a source
    repeats = len(watched_bfs) - 7
    assert watched_bfs == [True] + [False] * (repeats + 3) + [True] * 3
    assert repeats == 0 if device == "cpu" else repeats >= 1
    assert len(run["times_ms"]) == 3 and len(run["peak_bytes_per_source"]) == 3
    assert all(p > 0 for p in run["peak_bytes_per_source"])


def test_a_callers_tracemalloc_is_left_running():
    A = gbla.Matrix.from_scipy(
        sp.random(50, 50, density=0.1, format="csr", random_state=2), device="cpu"
    )
    tracemalloc.start()
    try:
        run = bench.run_method(A, "bfs", "algebraic", [0, 3], warmup=1)
        assert tracemalloc.is_tracing()
    finally:
        tracemalloc.stop()
    assert all(p > 0 for p in run["peak_bytes_per_source"])


def test_json_and_table_give_peak_stored_bytes_and_their_ratio(capsys, tmp_path):
    path = tmp_path / "out.json"
    status = cli.main(
        [
            "bench",
            "grid:20x20",
            "rmat:8",
            "--algo",
            "sssp",
            "--sources",
            "2",
            "--device",
            "cpu",
            "--peers",
            "--peer-libs",
            "scipy",
            "--no-progress",
            "--json",
            str(path),
        ]
    )
    out = capsys.readouterr().out
    assert status == 0
    doc = json.loads(path.read_text())
    assert doc["memory"] == bench.PER_METHOD
    for r in doc["records"]:
        stored = r["graph_info"]["stored_bytes"]
        A = bench.load_graph(r["graph"], device="cpu")
        assert stored == A._indptr.nbytes + A._indices.nbytes + (
            0 if A._values is None else A._values.nbytes
        )
        if r["kind"] == "peer":  # not measured
            assert r["peak_bytes"] is None and r["peak_ratio"] is None
        elif r["status"] == "ok":
            assert r["peak_bytes"] > 0 and r["peak_ratio"] > 0
            assert r["peak_ratio"] == pytest.approx(r["peak_bytes"] / stored)
            assert all(p > 0 for p in r["peak_bytes_per_source"])
    header = next(line for line in out.splitlines() if line.startswith("method"))
    assert "peak MiB" in header and "peak/graph" in header
    assert "MiB stored" in out and bench.MEMORY_NOTE in out
    ok = next(r for r in doc["records"] if r["status"] == "ok" and r["kind"] != "peer")
    row = next(line.split() for line in out.splitlines() if line.startswith(ok["method"] + " "))
    assert f"{ok['peak_ratio']:.2f}" in row


@SKIP_NO_GPU
@pytest.mark.gpu
def test_a_private_pool_drawing_from_cupys_pool_counts_on_the_gpu():
    """A recorded loop allocates from a pool of its own whose blocks come from CuPy's default
    pool: the hook reads the default pool's bytes in use, so they count."""
    import cupy as cp

    seen = {}

    def private(A, source, **kwargs):
        pool = cp.cuda.MemoryPool(cp.get_default_memory_pool().malloc)
        block = pool.malloc(HOG)
        seen["block"] = True
        del block
        pool.free_all_blocks()
        return gbla.bfs(A, source)

    _register("private_pool_bfs", private, "test: a private pool's block")
    try:
        record = _records("gpu", "private_pool_bfs")["private_pool_bfs"]
    finally:
        gbla.methods.unregister("private_pool_bfs")
    assert seen and all(p >= HOG for p in record["peak_bytes_per_source"])


@SKIP_NO_GPU
@pytest.mark.gpu
def test_every_gpu_method_has_a_positive_peak_and_ratio():
    records = bench.run_bench(["rmat:10"], algo="bfs", methods="all", sources=2, device="gpu")
    ran = [r for r in records if r["status"] == "ok"]
    assert ran
    for r in ran:
        assert r["peak_bytes"] > 0 and r["peak_ratio"] > 0, r["method"]
        assert r["base_bytes"] is not None
