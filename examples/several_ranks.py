"""BFS and Bellman-Ford over a graph cut by rows over several ranks (gbla.distributed): each
rank holds a vertex range and its edges, frontiers cross between ranks all-to-all, and a
direction policy picks push or pull per level from the whole frontier. Here the ranks are
threads of one process (what the tests run); with one GPU per rank they talk through NCCL.

    python examples/several_ranks.py [GRAPH file] [--scale 12] [--ranks 4]
"""

import argparse

import numpy as np
import scipy.sparse.csgraph as csgraph

import gbla
from gbla import distributed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", nargs="?", help="a graph file (gbla.io.read); default: rmat")
    parser.add_argument("--scale", type=int, default=12, help="rmat scale of the default")
    parser.add_argument("--ranks", type=int, default=4)
    args = parser.parse_args(argv)
    if args.graph:
        A = gbla.io.read(args.graph, device="cpu")
    else:
        A = gbla.generators.rmat(args.scale, seed=2, device="cpu", weights=(1, 255))
    S = A.to_scipy().astype(np.float64)
    source = int(np.flatnonzero(np.diff(S.indptr))[0])

    def rank(comm):
        M = distributed.DistMatrix.of(comm, A)
        levels, parents = distributed.bfs(M, source, return_predecessors=True)
        return (M.lo, M.hi), levels, parents, distributed.sssp(M, source)

    results = distributed.run_threads(args.ranks, rank)
    expected = csgraph.shortest_path(S, unweighted=True, indices=source)
    expected = np.where(np.isinf(expected), -1, expected)
    for r, (span, levels, parents, dist) in enumerate(results):
        gbla.verify.bfs(A, source, levels, parents)
        ok = np.array_equal(levels, expected) and \
            np.array_equal(dist, csgraph.dijkstra(S, indices=source))
        print(f"rank {r}: vertices {span[0]}..{span[1] - 1}; levels, parents and distances "
              f"{'equal to SciPy, parents valid' if ok else 'DIFFERENT FROM SCIPY'}")


if __name__ == "__main__":
    main()
