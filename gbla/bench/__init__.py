"""Benchmarks of every registered method of an algorithm (and of SciPy and python-graphblas as
peers) on the same graphs and the same sources: time per source, Graph500 TEPS, levels or
iterations, each method's peak memory, and a check of every result against the first method's.

This package holds the logic of ``gbla bench``; ``gbla/cli.py`` only parses and prints.

>>> from gbla import bench
>>> records = bench.run_bench(["grid:8x8"], algo="bfs", methods="algebraic", sources=2,
...                           peers=["scipy"], device="cpu")
>>> [(r["method"], r["check"]) for r in records]
[('algebraic', 'ok'), ('scipy', 'ok')]

The modules, each importing only those above it: ``graphs`` (GRAPH arguments, loading, sizes,
weights, sources), ``report`` (tables, descriptions, the machine, the JSON document), ``run``
(methods and peers timed and checked), ``chart`` (the PNG chart).
"""

from .chart import plot
from .graphs import (
    DEFAULT_WEIGHTS,
    GraphSpec,
    default_graphs,
    graph_info,
    load_graph,
    parse_graph_spec,
    pick_sources,
    sssp_weights,
)
from .report import (
    BACK_TO_BACK,
    FIRST_CALL_NOTE,
    GTEPS_NOTE,
    MEMORY_NOTE,
    PER_METHOD,
    SCHEMA,
    TIMING_NOTE,
    WARM_MS,
    WARMED,
    bench_document,
    command_line,
    describe,
    format_table,
    group,
    machine_info,
)
from .run import (
    PEERS,
    first_calls,
    resolve_methods,
    run_bench,
    run_method,
    run_peer,
    skip_note,
)

__all__ = [
    "GraphSpec",
    "PEERS",
    "parse_graph_spec",
    "default_graphs",
    "load_graph",
    "sssp_weights",
    "graph_info",
    "pick_sources",
    "resolve_methods",
    "run_method",
    "skip_note",
    "run_peer",
    "run_bench",
    "first_calls",
    "format_table",
    "describe",
    "group",
    "machine_info",
    "bench_document",
    "plot",
    "command_line",
    "DEFAULT_WEIGHTS",
    "SCHEMA",
    "GTEPS_NOTE",
    "TIMING_NOTE",
    "MEMORY_NOTE",
    "FIRST_CALL_NOTE",
    "BACK_TO_BACK",
    "WARMED",
    "WARM_MS",
    "PER_METHOD",
]
