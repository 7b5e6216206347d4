"""Runs every hand-written BFS and SSSP kernel once on small graphs (or the methods named, the
algebraic ones too), for compute-sanitizer (see tools/sanitize.sh). CuPy's memory pool is
turned off so that every array is its own allocation and memcheck sees an access past its end.
Exits non-zero on a wrong level or distance."""

import os
import sys

import cupy
import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

import gbla
from gbla.kernels import _sssp

cupy.cuda.set_allocator(None)
# edge_bellman_ford runs its hybrid (light rounds decided on the device) on these small graphs
# too; its ablation variants stream every round
_sssp.HYBRID_EDGES = 0
if os.environ.get("GBLA_SANITIZE_TOOL") == "racecheck":
    # under racecheck, the algebraic methods' process ended without a word once (H100, CUDA
    # 13) where memcheck ran them through: their loops are checked here as one graph launch
    # an iteration (no conditional WHILE node), the same kernels
    from gbla.runtime import capture

    capture.conditional_graphs = lambda: None


def graphs():
    # a path (many levels in one single_block launch), a star past the block queues' capacity,
    # an out-star past the single block's edge budget, and a small RMAT graph (pull levels)
    n = 400
    path = sp.csr_array((np.ones(n - 1), (np.arange(n - 1), np.arange(1, n))), shape=(n, n))
    yield "path", path + path.T, 0
    leaves = 9000
    star = sp.csr_array(
        (np.ones(leaves), (np.zeros(leaves, int), np.arange(1, leaves + 1))),
        shape=(leaves + 1, leaves + 1),
    )
    yield "star", (star + star.T).tocsr(), 5
    leaves = 33000
    out = sp.csr_array(
        (np.ones(leaves), (np.zeros(leaves, int), np.arange(1, leaves + 1))),
        shape=(leaves + 1, leaves + 1),
    )
    yield "out_star", out, 0
    yield "rmat_9", gbla.generators.rmat(9, device="cpu").to_scipy(), 1
    # a level of 3 hubs of 4,200 out-edges, pushed with their edges spread over the grid
    # (frontier.cuh's spread bin), and an unreached ring of 300,000 edges that keeps GAP's
    # rule pushing
    hubs, degree, ring = 3, 4200, 300_000
    first = 1 + hubs + hubs * degree
    src = np.r_[np.zeros(hubs, int), np.repeat(np.arange(1, hubs + 1), degree)]
    dst = np.r_[np.arange(1, hubs + 1), 1 + hubs + np.arange(hubs * degree)]
    src = np.r_[src, first + np.arange(ring)]
    dst = np.r_[dst, first + (np.arange(ring) + 1) % ring]
    n = first + ring
    yield "hubs", sp.csr_array((np.ones(len(src)), (src, dst)), shape=(n, n)), 0
    # a grid (a road network's degrees): the algebra's delta-stepping relaxes several hops a
    # round from each block's queue in shared memory (spmv.cu's gbla_push_direct)
    side = 150
    line = sp.diags([np.ones(side - 1), np.ones(side - 1)], [-1, 1])
    yield (
        "grid",
        sp.csr_array(sp.kron(line, sp.identity(side)) + sp.kron(sp.identity(side), line)),
        0,
    )


def weighted(S, seed):
    """S with integer weights 1..20, the same both ways where S is symmetric."""
    upper = sp.triu(S, format="csr")
    upper.data = np.random.default_rng(seed).integers(1, 21, upper.nnz).astype(np.float64)
    lower = sp.tril(S, -1, format="csr")
    if (abs(S - S.T)).nnz == 0:  # symmetric: mirror the upper weights
        return (upper + sp.triu(upper, 1).T).tocsr()
    lower.data = np.random.default_rng(seed + 1).integers(1, 21, lower.nnz).astype(np.float64)
    return (upper + lower).tocsr()


def check(method, name, A, S, source):
    """One run of a kernel; True when its result is right."""
    if gbla.methods.get(method).algorithm == "bfs":
        d = csgraph.shortest_path(S, unweighted=True, indices=source)
        expected = np.where(np.isinf(d), -1, d).astype(np.int32)
        levels, parents = gbla.bfs(A, source, method=method, return_predecessors=True)
        gbla.verify.bfs(A, source, levels, parents)
        return np.array_equal(cupy.asnumpy(levels), expected)
    W = weighted(S, len(name))
    dist, pred = gbla.sssp(
        gbla.Matrix.from_scipy(W, device="gpu"), source, method=method, return_predecessors=True
    )
    gbla.verify.sssp(W, source, dist, pred)
    return np.array_equal(cupy.asnumpy(dist), csgraph.dijkstra(W, indices=source))


def main(methods):
    failures = 0
    for name, S, source in graphs():
        A = gbla.Matrix.from_scipy(S, device="gpu")
        for method in methods:
            ok = check(method, name, A, S, source)
            print(f"{name:9s} {method:28s} {'ok' if ok else 'WRONG'}", flush=True)
            failures += not ok
    return failures


def kernels():
    """The hand-written methods that run on a GPU matrix (the out-of-core ones take a host
    matrix and have their own tests)."""
    return [
        name
        for algo in ("bfs", "sssp")
        for name in gbla.methods.names(algo)
        if not gbla.methods.get(name).algebraic and "gpu" in gbla.methods.get(name).devices
    ]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or kernels()))
