"""The ablation of edge_bellman_ford, in the shape of the article it comes from: undirected
R-MAT graphs of average degree 32 (rmat(scale, 16)), integer weights 1..255, scales 14 to 24;
for each variant (all optimizations, no reordering, no read-only path, none) the edges relaxed
per second, rounds x stored edges / time, with CUDA events after a warm-up (median of repeats,
whole calls), on the GPU. frontier_bellman_ford and the algebraic bellman_ford run beside them
for reference (their relaxations are counted the same way, an upper bound for the frontier).

Usage: python benchmarks/bench_sssp_ablation.py [--scales 14 16 18 20 22] [--sources 3]
       [--json out.json] [--plot out.png]
"""

import argparse
import json
import platform
import statistics

import numpy as np

import gbla

VARIANTS = [
    "edge_bellman_ford",
    "edge_bellman_ford_no_reorder",
    "edge_bellman_ford_no_ldg",
    "edge_bellman_ford_plain",
    "edge_bellman_ford_fallen",
    "frontier_bellman_ford",
    "bellman_ford",
]


def time_source(cp, A, source, method):
    """(ms, rounds) of one whole call, synchronized before and after."""
    stats = {}
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    cp.cuda.Device().synchronize()
    start.record()
    gbla.sssp(A, source, method=method, stats=stats)
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop), stats.get("iterations", 0)


def run(scales, sources, methods):
    import cupy as cp

    rows = []
    for scale in scales:
        A = gbla.generators.rmat(scale, 16, seed=scale, device="gpu", weights=(1, 255))
        rng = np.random.default_rng(scale)
        degrees = cp.asnumpy(A._degrees())
        picks = rng.choice(np.flatnonzero(degrees), sources + 1, replace=False)
        for method in methods:
            time_source(cp, A, int(picks[0]), method)  # compiles, caches the edge arrays
            times, rates = [], []
            for s in picks[1:]:
                ms, rounds = time_source(cp, A, int(s), method)
                times.append(ms)
                rates.append(rounds * A.nvals / (ms / 1e3))
            row = {
                "scale": scale,
                "vertices": A.nrows,
                "stored_edges": A.nvals,
                "method": method,
                "median_ms": statistics.median(times),
                "times_ms": times,
                "relaxed_per_s": statistics.median(rates),
            }
            rows.append(row)
            print(
                f"rmat({scale}, 16) {method:30s} {row['median_ms']:9.2f} ms "
                f"{row['relaxed_per_s'] / 1e9:7.2f} G edges relaxed/s",
                flush=True,
            )
        del A
        cp.get_default_memory_pool().free_all_blocks()
    return rows


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for method in dict.fromkeys(r["method"] for r in rows):
        mine = [r for r in rows if r["method"] == method]
        ax.plot(
            [r["scale"] for r in mine],
            [r["relaxed_per_s"] / 1e9 for r in mine],
            marker="o",
            label=method,
        )
    ax.set_xlabel("R-MAT scale (average degree 32)")
    ax.set_ylabel("G edges relaxed / s")
    ax.set_title("edge_bellman_ford ablation")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    import cupy as cp

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--scales",
        type=int,
        nargs="+",
        default=[14, 16, 18, 20, 22],
        help="R-MAT scales (default 14-22; add 24 when a call has the minutes)",
    )
    p.add_argument("--sources", type=int, default=3)
    p.add_argument("--methods", default=",".join(VARIANTS))
    p.add_argument("--json")
    p.add_argument("--plot")
    args = p.parse_args()
    rows = run(args.scales, args.sources, args.methods.split(","))
    props = cp.cuda.runtime.getDeviceProperties(0)
    machine = {
        "gpu": props["name"].decode(),
        "cupy": cp.__version__,
        "python": platform.python_version(),
        "gbla": gbla.__version__,
    }
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine, "rows": rows}, f, indent=1)
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()
