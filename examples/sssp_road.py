"""Shortest paths on a road network (any file gbla.io.read reads, with its own weights; or,
with no file, an embedded default: a generated 2-D grid, road-like and of large diameter, with
random integer weights), checked against SciPy's Dijkstra and the validator.

    python examples/sssp_road.py [ROAD.mtx[.gz] | ROAD.gr ...] [--grid 200] [--sources 2]
        [--device cpu|gpu]

A file without weights gets random integers in [1, 1000], and says so.
"""

import argparse
import time

import numpy as np
import scipy.sparse.csgraph as csgraph

import gbla


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", nargs="?", help="a graph file (gbla.io.read); default: a grid")
    parser.add_argument("--grid", type=int, default=200, help="side of the default grid")
    parser.add_argument("--sources", type=int, default=2)
    parser.add_argument(
        "--method", default="auto", choices=["auto", "bellman_ford", "delta_stepping"]
    )
    parser.add_argument("--device", choices=["cpu", "gpu"], default=None)
    args = parser.parse_args(argv)
    if args.graph:
        A = gbla.io.read(args.graph, device=args.device)
        name, weights = args.graph, f"the file's ({A.dtype})"
        if A.is_iso:  # no weights in the file: random ones, said so
            A = gbla.generators.with_weights(A, 1, 1000)
            weights = "none in the file: random integers 1..1000"
    else:
        A = gbla.generators.grid2d(args.grid, args.grid, weights=(1, 1000), device=args.device)
        name, weights = f"grid {args.grid}x{args.grid}", "random integers 1..1000"
    S = A.to_scipy()
    print(f"{name} on {A.device}: {A.nrows} vertices, {A.nvals} stored edges; weights: {weights}")
    rng = np.random.default_rng(0)
    sources = rng.choice(np.flatnonzero(np.diff(S.indptr)), args.sources, replace=False)
    gbla.sssp(A, int(sources[0]), method=args.method)  # warm-up: kernels compile on first use
    for s in sources:
        gbla.synchronize(A.device)
        t0 = time.perf_counter()
        dist, pred = gbla.sssp(A, int(s), return_predecessors=True, method=args.method)
        gbla.synchronize(A.device)
        ms = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        ref = csgraph.dijkstra(S, indices=int(s))
        scipy_ms = (time.perf_counter() - t0) * 1e3
        dist_h = gbla.to_numpy(dist)
        assert np.array_equal(dist_h, ref), f"distances from {s} differ from SciPy"
        gbla.verify.sssp(A, int(s), dist, pred)
        far = dist_h[np.isfinite(dist_h)].max()
        print(
            f"  source {s:>8}: farthest {far:>10.0f}, {ms:9.2f} ms (SciPy {scipy_ms:8.2f} ms);"
            " distances equal to SciPy, predecessors valid"
        )


if __name__ == "__main__":
    main()
