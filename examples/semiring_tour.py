"""A tour of the algebra on an embedded default graph: one BFS step as vxm over any_pair (push
and pull), BFS parents with any_secondi, one shortest-path relaxation with min_plus, each
checked against SciPy.

    python examples/semiring_tour.py [--scale 14] [--device cpu|gpu]
"""

import argparse
import time

import numpy as np

import gbla
from gbla import semirings


def timed(device, fn):
    gbla.synchronize(device)
    t0 = time.perf_counter()
    result = fn()
    gbla.synchronize(device)
    return result, (time.perf_counter() - t0) * 1e3


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=14)
    parser.add_argument("--device", choices=["cpu", "gpu"], default=None)
    args = parser.parse_args(argv)
    A = gbla.generators.rmat(args.scale, seed=1, device=args.device)
    device = A.device
    S = A.to_scipy().astype(np.float64)
    n = A.nrows
    print(f"rmat({args.scale}) on {device}: {n} vertices, {A.nvals} stored edges")

    # A frontier of 2% of the vertices; its unvisited out-neighbours, both directions.
    rng = np.random.default_rng(0)
    frontier = np.sort(rng.choice(n, n // 50, replace=False))
    q = gbla.Vector.from_coo(frontier, True, n, device=device)
    expected = np.flatnonzero(S.T @ np.isin(np.arange(n), frontier).astype(float))
    expected = np.setdiff1d(expected, frontier)
    for direction in ("push", "pull"):
        w, ms = timed(
            device, lambda: gbla.vxm(q, A, semirings.any_pair, mask=~q.S, direction=direction)
        )
        found = gbla.to_numpy(w.to_coo()[0])
        assert np.array_equal(found, expected), f"{direction} disagrees with SciPy"
        print(
            f"  any_pair  {direction:>4}: {len(found)} new vertices in {ms:.2f} ms (equal to SciPy)"
        )

    # Parents: any_secondi gives, for each new vertex, one frontier vertex with an edge to it.
    parents = gbla.vxm(q, A, semirings.any_secondi, mask=~q.S)
    idx, par = (gbla.to_numpy(a) for a in parents.to_coo())
    assert all(S[p, v] != 0 and p in set(frontier) for v, p in zip(idx[:1000], par[:1000]))
    print(f"  any_secondi: {len(idx)} parents, every one a frontier vertex with an edge")

    # One Bellman-Ford relaxation from vertex 0 with weights 1..9: d' = min(d, d min.+ A).
    W = S.copy()
    W.data = (np.arange(W.nnz) % 9 + 1).astype(np.float64)
    Aw = gbla.Matrix.from_scipy(W, device=device)
    d = gbla.Vector.from_coo([0], 0.0, n, device=device)
    d2 = gbla.vxm(d, Aw, semirings.min_plus, accum=semirings.binary.min, out=d.dup())
    ref = np.full(n, np.inf)
    ref[0] = 0
    cols, weights = W.indices[W.indptr[0] : W.indptr[1]], W.data[W.indptr[0] : W.indptr[1]]
    ref[cols] = np.minimum(ref[cols], weights)
    assert np.array_equal(gbla.to_numpy(d2.to_dense(np.inf)), ref)
    print(f"  min_plus: one relaxation reaches {d2.nvals} vertices (equal to SciPy)")


if __name__ == "__main__":
    main()
