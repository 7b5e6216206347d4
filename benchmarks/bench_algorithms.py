"""BFS and SSSP time per source, gbla against SciPy on the same graph and the same sources.

    python benchmarks/bench_algorithms.py GRAPH --algo bfs|sssp [--sources 16]
        [--scipy-sources K] [--weights LO HI] [--device gpu] [--json out.json]

GRAPH is a Matrix Market file or ``rmat:SCALE``. Sources are random non-isolated vertices
(seed 0). gbla's time is the whole call, device synchronized, after one warm-up call on another
source (kernel compilation stays out); SciPy runs breadth_first_order (BFS) or dijkstra (SSSP)
on the host, on the first K of the same sources. Every gbla result that SciPy also computed is
checked equal. SSSP weights are integers in [LO, HI], symmetric (gbla.generators.with_weights).
"""

import argparse
import json
import time

import numpy as np
import scipy.sparse.csgraph as csgraph

import gbla
from gbla._backend import sync, to_host


def load(spec, device):
    if spec.startswith("rmat:"):
        return gbla.generators.rmat(int(spec.split(":")[1]), device=device)
    return gbla.io.read_mtx(spec, device=device)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("graph")
    p.add_argument("--algo", choices=["bfs", "sssp"], default="bfs")
    p.add_argument("--sources", type=int, default=16)
    p.add_argument("--scipy-sources", type=int, default=None)
    p.add_argument("--weights", type=int, nargs=2, default=(1, 255))
    p.add_argument("--device", choices=["cpu", "gpu"], default=None)
    p.add_argument("--json")
    args = p.parse_args(argv)

    A = load(args.graph, args.device)
    if args.algo == "sssp":
        A = gbla.generators.with_weights(A, *args.weights)
    S = A.to_scipy()
    n = A.nrows
    rng = np.random.default_rng(0)
    candidates = np.flatnonzero(np.diff(S.indptr))
    picks = rng.choice(candidates, args.sources + 1, replace=False)
    warm, sources = int(picks[0]), [int(s) for s in picks[1:]]
    run = (lambda s: gbla.bfs(A, s)) if args.algo == "bfs" else (lambda s: gbla.sssp(A, s))
    run(warm)
    times, results = [], []
    for s in sources:
        sync(A.device)
        t0 = time.perf_counter()
        r = run(s)
        sync(A.device)
        times.append((time.perf_counter() - t0) * 1e3)
        results.append(to_host(r))
    k = len(sources) if args.scipy_sources is None else min(args.scipy_sources, len(sources))
    scipy_times = []
    for s, r in zip(sources[:k], results):
        t0 = time.perf_counter()
        if args.algo == "bfs":
            order, _ = csgraph.breadth_first_order(S, s, directed=True)
            scipy_times.append((time.perf_counter() - t0) * 1e3)
            assert np.array_equal(np.sort(order), np.flatnonzero(r >= 0)), f"reach from {s}"
        else:
            ref = csgraph.dijkstra(S, indices=s)
            scipy_times.append((time.perf_counter() - t0) * 1e3)
            assert np.array_equal(ref, r), f"distances from {s} differ from SciPy"
    depth = [float(np.max(r[r >= 0] if args.algo == "bfs" else r[np.isfinite(r)]))
             for r in results]
    row = dict(graph=args.graph, algo=args.algo, device=A.device, n=n, nnz=A.nvals,
               sources=len(sources), gbla_ms_mean=float(np.mean(times)),
               gbla_ms_median=float(np.median(times)), scipy_sources=k,
               scipy_ms_mean=float(np.mean(scipy_times)) if k else None,
               gbla_ms_on_scipy_sources=float(np.mean(times[:k])) if k else None,
               max_level_or_distance_mean=float(np.mean(depth)),
               weights=list(args.weights) if args.algo == "sssp" else None)
    print(f"{args.algo} {args.graph} ({n} vertices, {A.nvals} stored edges) on {A.device}: "
          f"gbla {row['gbla_ms_mean']:.2f} ms/source (mean of {len(sources)}, median "
          f"{row['gbla_ms_median']:.2f}); SciPy {row['scipy_ms_mean'] or float('nan'):.2f} "
          f"ms/source (mean of {k} of the same sources; gbla on those "
          f"{row['gbla_ms_on_scipy_sources'] or float('nan'):.2f}); results equal")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(row, f, indent=1)
    return row


if __name__ == "__main__":
    main()
