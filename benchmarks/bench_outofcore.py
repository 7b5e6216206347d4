"""The traffic of every out-of-core strategy (gbla.outofcore): host-to-device bytes over the
graph's bytes, transfers, and the time, for BFS and SSSP at given device memory budgets (a
fraction of the graph's bytes, plus the vertex arrays and staging). The bytes moved depend only
on the schedule, so ``--device cpu`` (NumPy as the device) measures them anywhere; times mean
something only with ``--device gpu``, and then against the bus's measured bandwidth.

Usage: python benchmarks/bench_outofcore.py [GRAPH ...] [--fractions 0.5 2] [--sources 2]
       [--device cpu|gpu] [--json out.json]
GRAPH is what ``gbla bench`` takes (default rmat:16 and dataset:power_grid); SSSP weights are
the graph's own, else integers 1..255, as float64 on the device. The budget's fraction is of the
graph as the device holds it (int64 row pointers, the ids, float64 weights for SSSP), in
``--parts`` subgraphs (default 64).
"""

import argparse
import json
import platform
import time

import numpy as np

import gbla
from gbla import outofcore as oc
from gbla.bench.graphs import load_graph, pick_sources, sssp_weights


def run(specs, fractions, sources, device, parts):
    xp = np
    if device == "gpu":
        import cupy as xp
    rows = []
    for spec in specs:
        A = load_graph(spec, device="cpu")
        W, _ = sssp_weights(A, (1, 255), seed=1)
        graphs = {"bfs": oc.HostGraph(A._indptr, A._indices),
                  "sssp": oc.HostGraph.of(W)}
        _, picks = pick_sources(A, sources)
        for algo, g in graphs.items():
            per_vertex = 12 if algo == "bfs" else 16
            largest = int(g.degrees.max()) if g.n else 0
            for fraction in fractions:
                whole = oc.partition(g.indptr, edge_bytes=g.edge_bytes(
                    np.float64 if algo == "sssp" else None), index_bytes=8, parts=parts)
                budget = g.n * per_vertex + 4 * (largest * 16 + 16) + \
                    int(fraction * whole.nbytes().sum())
                for strategy in oc.STRATEGIES:
                    ratios, times, transfers = [], [], []
                    for s in picks:
                        stats = {}
                        start = time.perf_counter()
                        getattr(oc, algo)(g, int(s), memory_budget=budget, strategy=strategy,
                                          parts=parts, xp=xp, stats=stats)
                        if device == "gpu":
                            xp.cuda.Device().synchronize()
                        times.append(1e3 * (time.perf_counter() - start))
                        ratios.append(stats["h2d_bytes"] / stats["graph_bytes"])
                        transfers.append(stats["transfers"])
                    row = {"graph": spec, "algo": algo, "fraction": fraction,
                           "strategy": strategy, "graph_bytes": stats["graph_bytes"],
                           "budget": budget,
                           "subgraphs": stats["subgraphs"],
                           "h2d_over_graph": float(np.median(ratios)),
                           "transfers": float(np.median(transfers)),
                           "median_ms": float(np.median(times)), "device": device}
                    rows.append(row)
                    print(f"{spec:24s} {algo:4s} budget {fraction:4.2f}x {strategy:12s} "
                          f"H2D {row['h2d_over_graph']:7.2f}x graph  "
                          f"{row['transfers']:8.0f} transfers  {row['median_ms']:9.1f} ms",
                          flush=True)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("graphs", nargs="*", default=["rmat:16", "dataset:power_grid"])
    p.add_argument("--fractions", type=float, nargs="+", default=[0.5, 2.0])
    p.add_argument("--sources", type=int, default=2)
    p.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    p.add_argument("--parts", type=int, default=64, help="subgraphs (default 64)")
    p.add_argument("--json")
    args = p.parse_args()
    rows = run(args.graphs, args.fractions, args.sources, args.device, args.parts)
    if args.json:
        machine = {"python": platform.python_version(), "gbla": gbla.__version__,
                   "processor": platform.processor() or platform.machine()}
        with open(args.json, "w") as f:
            json.dump({"command": "python benchmarks/bench_outofcore.py " +
                       " ".join(args.graphs) + f" --fractions {args.fractions} "
                       f"--sources {args.sources} --device {args.device} --parts {args.parts}",
                       "machine": machine, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
