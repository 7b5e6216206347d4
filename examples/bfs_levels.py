"""BFS levels and parents from random sources of a real graph (or, with no file, an embedded
default: a generated Graph500 rmat graph), checked against SciPy and Graph500's rules.

    python examples/bfs_levels.py [GRAPH file] [--scale 16] [--sources 4] [--device cpu|gpu]
"""

import argparse
import time

import numpy as np
import scipy.sparse.csgraph as csgraph

import gbla


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", nargs="?", help="a graph file (gbla.io.read); default: rmat")
    parser.add_argument("--scale", type=int, default=16, help="rmat scale of the default")
    parser.add_argument("--sources", type=int, default=4)
    parser.add_argument("--device", choices=["cpu", "gpu"], default=None)
    args = parser.parse_args(argv)
    if args.graph:
        A = gbla.io.read(args.graph, device=args.device)
        name = args.graph
    else:
        A = gbla.generators.rmat(args.scale, seed=2, device=args.device)
        name = f"rmat({args.scale})"
    S = A.to_scipy()
    degrees = np.diff(S.indptr)
    sources = np.random.default_rng(0).choice(np.flatnonzero(degrees), args.sources, replace=False)
    print(f"{name} on {A.device}: {A.nrows} vertices, {A.nvals} stored edges")
    gbla.bfs(A, int(sources[0]))  # warm-up: kernels compile on first use
    for s in sources:
        gbla.synchronize(A.device)
        t0 = time.perf_counter()
        levels, parents = gbla.bfs(A, int(s), return_predecessors=True)
        gbla.synchronize(A.device)
        ms = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        ref = csgraph.shortest_path(S, unweighted=True, indices=int(s))
        scipy_ms = (time.perf_counter() - t0) * 1e3
        levels_h = gbla.to_numpy(levels)
        ref = np.where(np.isinf(ref), -1, ref).astype(levels_h.dtype)
        assert np.array_equal(levels_h, ref), f"levels from {s} differ from SciPy"
        gbla.verify.bfs(A, int(s), levels, parents)
        print(
            f"  source {s:>8}: {int((levels_h >= 0).sum()):>9} reached, depth "
            f"{int(levels_h.max()):>5}, {ms:9.2f} ms (SciPy {scipy_ms:9.2f} ms); levels equal "
            "to SciPy, parents valid"
        )


if __name__ == "__main__":
    main()
