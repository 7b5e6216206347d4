"""Runs every hand-written BFS kernel once on small graphs, for compute-sanitizer (see
tools/sanitize.sh). CuPy's memory pool is turned off so that every array is its own
allocation and memcheck sees an access past its end. Exits non-zero on a wrong level."""

import sys

import cupy
import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

import gbla

cupy.cuda.set_allocator(None)


def graphs():
    # a path (many levels in one single_block launch), a star past the block queues' capacity,
    # an out-star past the single block's edge budget, and a small RMAT graph (pull levels)
    n = 400
    path = sp.csr_array((np.ones(n - 1), (np.arange(n - 1), np.arange(1, n))), shape=(n, n))
    yield "path", path + path.T, 0
    leaves = 9000
    star = sp.csr_array((np.ones(leaves), (np.zeros(leaves, int), np.arange(1, leaves + 1))),
                        shape=(leaves + 1, leaves + 1))
    yield "star", (star + star.T).tocsr(), 5
    leaves = 33000
    out = sp.csr_array((np.ones(leaves), (np.zeros(leaves, int), np.arange(1, leaves + 1))),
                       shape=(leaves + 1, leaves + 1))
    yield "out_star", out, 0
    yield "rmat_9", gbla.generators.rmat(9, device="cpu").to_scipy(), 1


def main(methods):
    failures = 0
    for name, S, source in graphs():
        A = gbla.Matrix.from_scipy(S, device="gpu")
        d = csgraph.shortest_path(S, unweighted=True, indices=source)
        expected = np.where(np.isinf(d), -1, d).astype(np.int32)
        for method in methods:
            levels, parents = gbla.bfs(A, source, method=method, return_predecessors=True)
            ok = np.array_equal(cupy.asnumpy(levels), expected)
            gbla.verify.bfs(A, source, levels, parents)
            print(f"{name:9s} {method:20s} {'ok' if ok else 'WRONG LEVELS'}", flush=True)
            failures += not ok
    return failures


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or gbla.methods.names("bfs")[1:]))
