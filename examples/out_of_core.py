"""BFS and SSSP on a graph kept in host memory, the device holding at most a budget (here a
fraction of the graph's own bytes), every strategy side by side: the bytes each sends over the
bus, checked against SciPy. Runs on the GPU when there is one, else with NumPy as the device.

    python examples/out_of_core.py [GRAPH file] [--scale 14] [--budget 0.5]
"""

import argparse

import numpy as np
import scipy.sparse.csgraph as csgraph

import gbla
from gbla import outofcore


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", nargs="?", help="a graph file (gbla.io.read); default: rmat")
    parser.add_argument("--scale", type=int, default=14, help="rmat scale of the default")
    parser.add_argument(
        "--budget",
        type=float,
        default=0.5,
        help="the device budget as a fraction of the graph's bytes",
    )
    args = parser.parse_args(argv)
    if args.graph:
        A = gbla.io.read(args.graph, device="cpu")
        name = args.graph
    else:
        A = gbla.generators.rmat(args.scale, seed=2, device="cpu", weights=(1, 255))
        name = f"rmat({args.scale}), weights 1..255"
    S = A.to_scipy().astype(np.float64)
    graph = outofcore.HostGraph.of(A)
    # the vertex arrays, staging for a few of the largest vertex's edges, and the fraction of
    # the graph's bytes; the graph in 64 subgraphs (50 MiB each by default: an H100's L2)
    budget = (
        A.nrows * 24 + 4 * (int(graph.degrees.max()) * 16 + 16) + int(args.budget * graph.nbytes)
    )
    source = int(np.flatnonzero(graph.degrees)[0])
    print(
        f"{name}: {A.nrows} vertices, {A.nvals} stored edges, {graph.nbytes / 1e6:.1f} MB; "
        f"device budget {budget / 1e6:.1f} MB, source {source}"
    )
    expected_levels = csgraph.shortest_path(S, unweighted=True, indices=source)
    expected_levels = np.where(np.isinf(expected_levels), -1, expected_levels)
    expected_dist = csgraph.dijkstra(S, indices=source)
    for strategy in outofcore.STRATEGIES:
        bfs_stats, sssp_stats = {}, {}
        levels = gbla.to_numpy(
            outofcore.bfs(
                graph, source, memory_budget=budget, parts=64, strategy=strategy, stats=bfs_stats
            )
        )
        dist = gbla.to_numpy(
            outofcore.sssp(
                graph, source, memory_budget=budget, parts=64, strategy=strategy, stats=sssp_stats
            )
        )
        ok = np.array_equal(levels, expected_levels) and np.allclose(dist, expected_dist)
        print(
            f"  {strategy:12s} BFS sent {bfs_stats['h2d_bytes'] / bfs_stats['graph_bytes']:6.2f}"
            f"x the graph, SSSP {sssp_stats['h2d_bytes'] / sssp_stats['graph_bytes']:6.2f}x"
            f"  {'equal to SciPy' if ok else 'DIFFERENT FROM SCIPY'}"
        )
    # the same through gbla.bfs / gbla.sssp, which pick the out-of-core methods for a budget
    stats = {}
    levels = gbla.bfs(A, source, memory_budget=budget, stats=stats)
    print(
        f"gbla.bfs(A, {source}, memory_budget={budget}): "
        f"{'equal to SciPy' if np.array_equal(levels, expected_levels) else 'DIFFERENT'}, "
        f"{stats['h2d_bytes'] / 1e6:.2f} MB sent"
    )


if __name__ == "__main__":
    main()
