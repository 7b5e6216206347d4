"""Times gbla.pagerank (the algebra's power iteration, one device loop) against the same power
iteration in SciPy on a CSR built beforehand (networkx's _pagerank_scipy without its graph
conversion) and against nx.pagerank itself (which converts the graph every call), on the same
graphs, unweighted, alpha 0.85, tol 1e-6.

GPU times are CUDA events around the whole call (it ends with one read back) after warm-up,
the median of repeats; CPU times are perf_counter medians. Every result is checked against
SciPy's (max absolute difference). For the GPU the bytes an iteration must move are counted:
the pull reads each in-edge's id (4 B) and its source's scaled rank (8 B), the row pointers
(4 B a vertex), and the element-wise ops read and write about 12 vectors of n float64.
Usage: python benchmarks/bench_pagerank.py [--rmat 22] [--json out.json] FILE...
"""

import argparse
import json
import os
import time

import numpy as np
import scipy.sparse as sp

import gbla


def scipy_pagerank(S, alpha=0.85, tol=1e-6, max_iter=100):
    """networkx's _pagerank_scipy loop on a CSR (uniform personalization and start)."""
    n = S.shape[0]
    d = np.asarray(S.sum(axis=1)).ravel()
    inv = np.zeros(n)
    inv[d != 0] = 1.0 / d[d != 0]
    M = sp.diags(inv) @ S
    dangling = np.flatnonzero(d == 0)
    x = np.full(n, 1.0 / n)
    p = np.full(n, 1.0 / n)
    for it in range(max_iter):
        last = x
        x = alpha * (x @ M + x[dangling].sum() * p) + (1 - alpha) * p
        if np.abs(x - last).sum() < n * tol:
            return x, it + 1
    raise RuntimeError("no convergence")


def median_wall(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1e3


def median_events(cp, fn, repeats):
    times = []
    for _ in range(repeats):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b))
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--rmat", type=int, nargs="*", default=[])
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument(
        "--tol",
        type=float,
        default=1e-6,
        help="networkx's: converged when the L1 change is below n * tol",
    )
    ap.add_argument("--no-networkx", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    import cupy as cp
    import networkx as nx

    rows = []
    graphs = [
        (os.path.basename(f).split(".")[0], lambda f=f: gbla.io.read(f, device="cpu"))
        for f in args.files
    ]
    graphs += [(f"rmat({s})", lambda s=s: gbla.generators.rmat(s, device="cpu")) for s in args.rmat]
    for name, load in graphs:
        A = load()
        S = A.to_scipy().astype(np.float64)
        S.data[:] = 1.0
        n, nnz = S.shape[0], S.nnz
        G = gbla.Matrix.from_scipy(S, device="gpu").pattern()
        tol = args.tol
        ref, iterations = scipy_pagerank(S, tol=tol)
        for _ in range(3):
            got = gbla.pagerank(G, tol=tol)
        stats = {}
        gbla.pagerank(G, tol=tol, stats=stats)
        gpu_ms = median_events(cp, lambda: gbla.pagerank(G, tol=tol), args.repeats)
        cpu_reps = max(1, min(args.repeats, int(2e8 // max(nnz * iterations, 1))))
        scipy_ms = median_wall(lambda: scipy_pagerank(S, tol=tol), cpu_reps)
        row = {
            "graph": name,
            "n": n,
            "nnz": nnz,
            "tol": tol,
            "iterations": stats["iterations"],
            "scipy_iterations": iterations,
            "mode": stats["mode"],
            "fused": stats.get("fused"),
            "gbla_gpu_ms": round(gpu_ms, 3),
            "scipy_ms": round(scipy_ms, 3),
            "speedup_vs_scipy": round(scipy_ms / gpu_ms, 1),
            "max_abs_diff": float(np.abs(cp.asnumpy(got) - ref).max()),
        }
        iteration_bytes = nnz * 12 + n * (4 + 12 * 8)
        row["gpu_us_per_iteration"] = round(gpu_ms * 1e3 / stats["iterations"], 1)
        row["gpu_gb_s_per_iteration"] = round(
            iteration_bytes / (gpu_ms / 1e3 / stats["iterations"]) / 1e9, 1
        )
        if nnz <= 20_000_000 and not args.no_networkx:
            H = nx.from_scipy_sparse_array(S, create_using=nx.DiGraph)
            row["networkx_ms"] = round(
                median_wall(lambda: nx.pagerank(H, weight=None), max(1, cpu_reps // 2)), 3
            )
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
            json.dump(
                {"benchmark": "pagerank", "tol": args.tol, "device": device, "rows": rows},
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()
