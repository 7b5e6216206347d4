"""gbla bench --first-call: a method's first call timed in new processes, with an empty kernel
cache and with the cache the first run filled."""

import statistics

import pytest

from gbla import bench
from gbla.bench.run import WARM_RUNS


def test_first_calls_time_the_call_and_the_process_cold_and_warm():
    records = bench.run_bench(
        ["dataset:power_grid"],
        algo="bfs",
        methods="algebraic",
        sources=1,
        device="cpu",
        first_call=True,
    )
    (r,) = records
    assert r["status"] == "ok" and r["check"] == "ok"
    for state in ("cold", "warm", "warmed"):
        call, process = r[f"first_{state}_ms"], r[f"process_{state}_ms"]
        # the process starts Python, imports gbla and loads the graph before the call
        assert 0 < call < process
    assert r["warmup_s"] > 0  # `gbla warmup` ran before the third
    runs = r["first_warm_runs_ms"]  # the warm call in several processes, their median shown
    assert len(runs) == WARM_RUNS and r["first_warm_ms"] == statistics.median(runs)
    table = bench.format_table(records)
    assert "first ms cold/warm/warmed" in table and "process ms cold/warm/warmed" in table


def test_a_bench_without_first_calls_has_no_such_columns():
    records = bench.run_bench(
        ["dataset:power_grid"], algo="bfs", methods="algebraic", sources=1, device="cpu"
    )
    assert "first_cold_ms" not in records[0]
    assert "first ms" not in bench.format_table(records)


def test_a_first_call_that_fails_says_the_command_and_its_error():
    with pytest.raises(RuntimeError, match="bfs dataset:power_grid --source 0 --method nowhere"):
        bench.first_calls("dataset:power_grid", "bfs", "nowhere", 0, "cpu")


def test_a_record_of_an_older_run_without_the_warmed_call_shows_a_dash():
    records = bench.run_bench(
        ["dataset:power_grid"], algo="bfs", methods="algebraic", sources=1, device="cpu"
    )
    records[0].update(
        first_cold_ms=900.0, first_warm_ms=20.0, process_cold_ms=2000.0, process_warm_ms=1100.0
    )
    table = bench.format_table(records)
    assert "900/20.00/-" in table and "2000/1100/-" in table
