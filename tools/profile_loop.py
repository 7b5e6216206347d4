"""Where an iteration of a loop the algebra records goes on the GPU (the BFS's levels by
default, or an SSSP method's rounds with ``--algo sssp --method M``): the graph nodes one
recorded iteration holds, microseconds per iteration (CUDA events, median of repeats after a
warm-up), and, run under Nsight Compute, each kernel's own time inside the replayed graph.

    python tools/profile_loop.py GRAPH [--sources K] [--blocks-per-sm 2 4 8]
    python tools/profile_loop.py GRAPH --algo sssp --method delta_stepping [--weights 1 255]
    ncu --graph-profiling node --metrics gpu__time_duration.sum --launch-skip 400 \\
        --launch-count 120 --csv --log-file ncu.csv python tools/profile_loop.py GRAPH --once \\
        --per-iteration
    python tools/profile_loop.py --summarize ncu.csv

GRAPH is what ``gbla bench`` takes (a file, rmat:SCALE, ...). Nsight Compute cannot profile
the kernel nodes of a graph holding a conditional node: ``--per-iteration`` records the same
body without one (one graph launch an iteration, as where conditional nodes are missing)."""

import argparse
import csv
import statistics
import sys
from collections import defaultdict


def _search(algo, method):
    """(a function running one search from a source into ``stats``, the stats key counting its
    iterations)."""
    import gbla

    if algo == "bfs":
        return (lambda A, s, stats: gbla.bfs(A, s, stats=stats)), "levels"
    return (lambda A, s, stats: gbla.sssp(A, s, method=method, stats=stats)), "iterations"


def measure(
    graph, sources, once, per_iteration, blocks_per_sm=None, algo="bfs", method="auto", weights=None
):
    import cupy as cp

    from gbla.kernels import _spmv
    from gbla.runtime import capture

    if per_iteration:  # as on a driver without conditional nodes
        capture.conditional_graphs = lambda: None
    if blocks_per_sm:  # the device product's grid (recorded anew: the graph is loaded anew)
        _spmv.BLOCKS_PER_SM = blocks_per_sm
        print(f"device product grid: {blocks_per_sm} blocks an SM")
    from gbla.bench.graphs import load_graph, pick_sources, sssp_weights

    A = load_graph(graph, device="gpu")
    if algo == "sssp":
        A, _ = sssp_weights(A, weights)
    search, count = _search(algo, method)
    warmup, picks = pick_sources(A, sources)
    picks = [int(s) for s in picks]
    stats = {}
    search(A, int(warmup), stats)  # compiles and records
    print(
        f"{graph}: {A.nrows:,} vertices, {A.nvals:,} entries; one iteration's graph: "
        f"{stats.get('body_nodes')} ({stats.get('graph')}); fused: {stats.get('fused')} "
        f"{stats.get('not_fused', '')}"
    )
    if once:
        search(A, picks[0], {})
        cp.cuda.Device().synchronize()
        return
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    per_level = []
    for s in picks:
        stats = {}
        start.record()
        search(A, s, stats)
        stop.record()
        stop.synchronize()
        ms = cp.cuda.get_elapsed_time(start, stop)
        per_level.append(
            (1000 * ms / max(stats[count], 1), ms, stats[count], stats.get("fused_iterations"))
        )
    us = [p[0] for p in per_level]
    print(
        f"us per {count[:-1]}: median {statistics.median(us):.1f} "
        f"(min {min(us):.1f}, max {max(us):.1f}, {len(picks)} sources); ms a search: median "
        f"{statistics.median(p[1] for p in per_level):.2f}; {count}: "
        f"{[p[2] for p in per_level]}; fused: {[p[3] for p in per_level]}"
    )


def summarize(path):
    """Mean and total ns per kernel name from an ncu --csv log."""
    times = defaultdict(list)
    with open(path, newline="") as f:
        rows = [line for line in f if line.startswith('"')]
    for row in csv.DictReader(rows):
        if row.get("Metric Name") == "gpu__time_duration.sum":
            name = row["Kernel Name"].split("<")[0].split("(")[0]
            value = float(row["Metric Value"].replace(",", ""))
            unit = row.get("Metric Unit", "nsecond")
            times[name].append(value * {"usecond": 1e3, "msecond": 1e6}.get(unit, 1.0))
    if not times:
        print(f"{path}: no kernel was profiled (see the log's warnings)")
        return
    total = sum(sum(v) for v in times.values()) or 1.0
    print(f"{'kernel':40s} {'launches':>8s} {'mean us':>9s} {'share':>6s}")
    for name, v in sorted(times.items(), key=lambda kv: -sum(kv[1])):
        print(
            f"{name:40s} {len(v):8d} {statistics.mean(v) / 1e3:9.2f} {100 * sum(v) / total:5.1f}%"
        )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("graph", nargs="?", default="rmat:16")
    p.add_argument("--sources", type=int, default=8)
    p.add_argument(
        "--once", action="store_true", help="one traversal after the warm-up (what ncu profiles)"
    )
    p.add_argument(
        "--per-iteration",
        action="store_true",
        help="no conditional node: one "
        "graph launch an iteration (what ncu can profile node by node)",
    )
    p.add_argument(
        "--blocks-per-sm",
        type=int,
        nargs="+",
        metavar="B",
        help="measure with each of these device product grids in turn",
    )
    p.add_argument("--summarize", metavar="CSV", help="summarise an ncu --csv log instead")
    p.add_argument("--algo", choices=("bfs", "sssp"), default="bfs")
    p.add_argument("--method", default="auto", help="the SSSP method (an algebraic one)")
    p.add_argument(
        "--weights",
        type=int,
        nargs=2,
        metavar=("LO", "HI"),
        help="random integer weights in [LO, HI] (seed 0), as gbla bench gives",
    )
    args = p.parse_args(argv)
    if args.summarize:
        summarize(args.summarize)
    else:
        for blocks in args.blocks_per_sm or [None]:
            measure(
                args.graph,
                args.sources,
                args.once,
                args.per_iteration,
                blocks,
                args.algo,
                args.method,
                args.weights,
            )


if __name__ == "__main__":
    sys.exit(main())
