"""Where a level of the algebraic BFS goes on the GPU: the graph nodes one recorded iteration
holds, microseconds per level (CUDA events, median of repeats after a warm-up), and, run under
Nsight Compute, each kernel's own time inside the replayed graph.

    python tools/profile_loop.py GRAPH [--sources K] [--blocks-per-sm 2 4 8]
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


def measure(graph, sources, once, per_iteration, blocks_per_sm=None):
    import cupy as cp

    import gbla
    from gbla.kernels import _spmv
    from gbla.runtime import capture

    if per_iteration:  # as on a driver without conditional nodes
        capture.conditional_graphs = lambda: None
    if blocks_per_sm:  # the device product's grid (recorded anew: the graph is loaded anew)
        _spmv.BLOCKS_PER_SM = blocks_per_sm
        print(f"device product grid: {blocks_per_sm} blocks an SM")
    from gbla.bench.graphs import load_graph, pick_sources

    A = load_graph(graph, device="gpu")
    warmup, picks = pick_sources(A, sources)
    picks = [int(s) for s in picks]
    stats = {}
    gbla.bfs(A, int(warmup), stats=stats)  # compiles and records
    print(f"{graph}: {A.nrows:,} vertices, {A.nvals:,} entries; one iteration's graph: "
          f"{stats.get('body_nodes')} ({stats.get('graph')})")
    if once:
        gbla.bfs(A, picks[0])
        cp.cuda.Device().synchronize()
        return
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    per_level = []
    for s in picks:
        stats = {}
        start.record()
        gbla.bfs(A, s, stats=stats)
        stop.record()
        stop.synchronize()
        ms = cp.cuda.get_elapsed_time(start, stop)
        per_level.append(1000 * ms / max(stats["levels"], 1))
    print(f"us per level: median {statistics.median(per_level):.1f} "
          f"(min {min(per_level):.1f}, max {max(per_level):.1f}, {len(picks)} sources)")


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
        print(f"{name:40s} {len(v):8d} {statistics.mean(v) / 1e3:9.2f} "
              f"{100 * sum(v) / total:5.1f}%")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("graph", nargs="?", default="rmat:16")
    p.add_argument("--sources", type=int, default=8)
    p.add_argument("--once", action="store_true", help="one traversal after the warm-up "
                   "(what ncu profiles)")
    p.add_argument("--per-iteration", action="store_true", help="no conditional node: one "
                   "graph launch an iteration (what ncu can profile node by node)")
    p.add_argument("--blocks-per-sm", type=int, nargs="+", metavar="B",
                   help="measure with each of these device product grids in turn")
    p.add_argument("--summarize", metavar="CSV", help="summarise an ncu --csv log instead")
    args = p.parse_args(argv)
    if args.summarize:
        summarize(args.summarize)
    else:
        for blocks in args.blocks_per_sm or [None]:
            measure(args.graph, args.sources, args.once, args.per_iteration, blocks)


if __name__ == "__main__":
    sys.exit(main())
