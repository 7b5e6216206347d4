"""BFS and SSSP over a graph cut by rows over several ranks (gbla.distributed): each rank holds a
vertex range and its edges, frontiers cross between ranks all-to-all, and a direction policy
picks push or pull per level from the whole frontier. gbla.bfs and gbla.sssp run on the cut
matrix as written; by default each rank generates its own part of an R-MAT graph, so that no
rank ever holds the whole. Here the ranks are threads of one process (what the tests run);
with one GPU per rank (python -m gbla.distributed.launch) they talk through NCCL.

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
    else:  # the whole graph, only to check the ranks' answers against SciPy's
        A = gbla.generators.rmat(args.scale, seed=2, device="cpu")
    S = A.to_scipy().astype(np.float64)
    source = int(np.flatnonzero(np.diff(S.indptr))[0])

    def rank(comm):
        if args.graph:  # every rank reads the file and keeps its rows
            M = distributed.DistMatrix.of(comm, A)
        else:  # each rank generates its part of the edges; they meet at their owners
            src, dst = gbla.generators.rmat_edges(
                args.scale, seed=2, part=comm.rank, parts=comm.size, device="cpu"
            )
            M = distributed.DistMatrix.from_edges(comm, src, dst, n=A.nrows)
        levels, parents = gbla.bfs(M, source, return_predecessors=True)  # gbla's own BFS
        dist, pred = gbla.sssp(M, source, return_predecessors=True)
        # each rank its range; what travels
        traffic = {}
        distributed.bfs(M, source, stats=traffic)
        near = distributed.sssp(  # near-far rounds, each rank its range
            M, source, method="delta_stepping", return_predecessors=True
        )
        pushed = distributed.push_sssp(M, source)  # Bellman-Ford in hand-written steps
        return (M.lo, M.hi), levels, parents, dist, pred, near, pushed, traffic

    results = distributed.run_threads(args.ranks, rank)
    expected = csgraph.shortest_path(S, unweighted=True, indices=source)
    expected = np.where(np.isinf(expected), -1, expected)
    dijkstra = csgraph.dijkstra(S, indices=source)
    for r, (span, levels, parents, dist, pred, near, pushed, _traffic) in enumerate(results):
        gbla.verify.bfs(A, source, levels, parents)
        gbla.verify.sssp(A, source, dist, pred)
        gbla.verify.sssp(A, source, *near)
        ok = (
            np.array_equal(levels, expected)
            and np.array_equal(dist, dijkstra)
            and np.array_equal(near[0], dijkstra)
            and np.array_equal(pushed, dijkstra)
        )
        print(
            f"rank {r}: vertices {span[0]}..{span[1] - 1}; levels, parents and distances "
            "(Bellman-Ford, delta-stepping, push_sssp) "
            f"{'equal to SciPy, parents valid' if ok else 'DIFFERENT FROM SCIPY'}"
        )
    traffic = results[0][-1]
    print(
        f"BFS over {args.ranks} ranks: {len(traffic['bytes'])} levels "
        f"({', '.join(traffic['directions'])}), {traffic['bytes_total']:,} bytes sent in all"
    )


if __name__ == "__main__":
    main()
