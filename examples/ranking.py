"""PageRank, triangles and clustering of a real graph (or, with no file, an embedded default: a
generated Graph500 rmat graph), each checked against networkx.

    python examples/ranking.py [GRAPH file] [--scale 12] [--top 5] [--device cpu|gpu]
"""

import argparse
import time

import networkx as nx
import numpy as np

import gbla


def timed(fn, device):
    gbla.synchronize(device)
    t0 = time.perf_counter()
    result = fn()
    gbla.synchronize(device)
    return result, (time.perf_counter() - t0) * 1e3


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", nargs="?", help="a graph file (gbla.io.read); default: rmat")
    parser.add_argument("--scale", type=int, default=12, help="rmat scale of the default")
    parser.add_argument("--top", type=int, default=5, help="vertices to list by rank")
    parser.add_argument("--device", choices=["cpu", "gpu"], default=None)
    args = parser.parse_args(argv)
    if args.graph:
        A = gbla.io.read(args.graph, device=args.device)
        name = args.graph
    else:
        A = gbla.generators.rmat(args.scale, seed=3, device=args.device)
        name = f"rmat({args.scale})"
    print(f"{name} on {A.device}: {A.nrows} vertices, {A.nvals} stored edges")
    D = nx.from_scipy_sparse_array(A.to_scipy(), create_using=nx.DiGraph)
    H = D.to_undirected()
    n = A.nrows

    gbla.pagerank(A, weighted=False)  # warm-up: kernels compile, the loop is recorded
    ranks, ms = timed(lambda: gbla.pagerank(A, weighted=False), A.device)
    ranks = gbla.to_numpy(ranks)
    expected = nx.pagerank(D, weight=None)
    same = np.allclose(ranks, [expected[v] for v in range(n)], rtol=1e-9, atol=1e-12)
    top = np.argsort(-ranks, kind="stable")[: args.top]
    print(
        f"pagerank   {ms:8.2f} ms  top {', '.join(f'{v} ({ranks[v]:.4g})' for v in top)}  "
        f"{'equal to networkx' if same else 'DIFFERENT from networkx'}"
    )

    counts, ms = timed(lambda: gbla.triangles(A), A.device)
    counts = gbla.to_numpy(counts)
    expected = nx.triangles(H)
    same = all(int(counts[v]) == expected[v] for v in range(n))
    print(
        f"triangles  {ms:8.2f} ms  {int(counts.sum()) // 3} in all, at most "
        f"{int(counts.max())} at one vertex  "
        f"{'equal to networkx' if same else 'DIFFERENT from networkx'}"
    )

    coefficients, ms = timed(lambda: gbla.clustering(A), A.device)
    coefficients = gbla.to_numpy(coefficients)
    expected = nx.clustering(H)
    same = np.allclose(coefficients, [expected[v] for v in range(n)], rtol=1e-12)
    verdict = "equal to networkx" if same else "DIFFERENT from networkx"
    print(
        f"clustering {ms:8.2f} ms  average {coefficients.mean():.4f}, transitivity "
        f"{gbla.transitivity(A):.4f}  {verdict}"
    )


if __name__ == "__main__":
    main()
