"""Result checks: is a BFS or SSSP result valid (Graph500's rules)? For results that are not
unique (parents, predecessors) this, not equality, is the test.

The checks run on the host with NumPy; they accept NumPy or CuPy arrays and any graph
``gbla.bfs``/``gbla.sssp`` accept.
"""

import numpy as np

from . import _backend as B
from ._storage import find_sorted, rows_of_entries
from .exceptions import ValidationError
from .matrix import as_graph

__all__ = ["bfs", "sssp"]


def _graph(A):
    S = as_graph(A).to_scipy().tocsr()  # canonical: sorted, no duplicates
    rows = rows_of_entries(S.indptr, S.nnz, np).astype(np.int64)
    return S, rows, S.indices.astype(np.int64), S.data


def _fail(message):
    raise ValidationError(message)


def _tree_depths(parents, source):
    """Depth of every vertex in the parent forest by pointer jumping; -1 where a parent chain
    never reaches the source (a cycle)."""
    n = len(parents)
    reached = parents >= 0
    up = np.where(reached, parents, np.arange(n))
    depth = np.where(reached & (np.arange(n) != source), 1, 0).astype(np.int64)
    for _ in range(max(1, int(np.ceil(np.log2(max(n, 2)))) + 1)):
        depth = depth + depth[up]
        up = up[up]
    ok = up == source
    return np.where(reached & ok, depth, -1), reached & ~ok


def _tree_array(tree, name, n, source):
    """A parent or predecessor array on the host, int64, checked for its shape, its root and
    its range (vertex ids or -1)."""
    tree = np.asarray(B.to_host(tree)).astype(np.int64)
    if tree.shape != (n,):
        _fail(f"{name} must have shape ({n},); got {tree.shape}")
    if tree[source] != source:
        _fail(f"{name}[source] must be the source {source}; got {tree[source]}")
    if ((tree < -1) | (tree >= n)).any():
        _fail(f"{name} must hold vertex ids or -1")
    return tree


def bfs(A, source, levels, parents=None):
    """Check BFS levels (and a parent tree) from ``source``; raise ValidationError with the
    first violation.

    levels: levels[source] == 0, -1 unreached; every edge u -> v with u reached has v reached
    and levels[v] <= levels[u] + 1; every reached v != source has an in-edge from level
    levels[v] - 1. parents (Graph500's five checks): the tree has no cycle; each tree edge joins
    consecutive levels; the edge rule above; the tree spans exactly the reached set; every parent
    link is a real edge.
    """
    S, rows, cols, _ = _graph(A)
    n = S.shape[0]
    levels = np.asarray(B.to_host(levels)).astype(np.int64)
    if levels.shape != (n,):
        _fail(f"levels must have shape ({n},); got {levels.shape}")
    if levels[source] != 0:
        _fail(f"levels[source] must be 0; got {levels[source]}")
    reached = levels >= 0
    if (levels < -1).any():
        _fail(f"levels must be >= -1; got {levels.min()}")
    bad = np.flatnonzero(reached[rows] & ~reached[cols])
    if bad.size:
        e = bad[0]
        _fail(
            f"edge ({rows[e]}, {cols[e]}) leaves the reached set: level {levels[rows[e]]} "
            "to unreached"
        )
    bad = np.flatnonzero(reached[rows] & (levels[cols] > levels[rows] + 1))
    if bad.size:
        e = bad[0]
        _fail(f"edge ({rows[e]}, {cols[e]}) skips a level: {levels[rows[e]]} -> {levels[cols[e]]}")
    has_prev = np.zeros(n, bool)
    tight = reached[rows] & (levels[cols] == levels[rows] + 1)
    has_prev[cols[tight]] = True
    orphan = np.flatnonzero(reached & ~has_prev & (np.arange(n) != source))
    if orphan.size:
        _fail(
            f"vertex {orphan[0]} at level {levels[orphan[0]]} has no in-edge from level "
            f"{levels[orphan[0]] - 1}"
        )
    if parents is None:
        return
    parents = _tree_array(parents, "parents", n, source)
    span = np.flatnonzero((parents >= 0) != reached)
    if span.size:
        v = span[0]
        _fail(
            f"the tree must span exactly the reached set: vertex {v} has level {levels[v]} "
            f"and parent {parents[v]}"
        )
    depth, cyclic = _tree_depths(parents, source)
    if cyclic.any():
        _fail(f"the parent tree has a cycle through vertex {np.flatnonzero(cyclic)[0]}")
    others = np.flatnonzero(reached & (np.arange(n) != source))
    bad = others[levels[others] != levels[parents[others]] + 1]
    if bad.size:
        v = bad[0]
        _fail(
            f"tree edge ({parents[v]}, {v}) joins levels {levels[parents[v]]} and "
            f"{levels[v]}, not consecutive ones"
        )
    missing = others[_find_edges(rows, cols, n, parents[others], others) < 0]
    if missing.size:
        _fail(f"parent link ({parents[missing[0]]}, {missing[0]}) is not an edge of A")


def _find_edges(rows, cols, n, u, v):
    """Position of each edge (u[t], v[t]) among the (row-major sorted) entries, -1 if absent."""
    keys = rows * n + cols
    query = u.astype(np.int64) * n + v
    pos, found = find_sorted(keys, query, np)
    return np.where(found, pos, -1)


def sssp(A, source, dist, pred=None, *, rtol=1e-9):
    """Check shortest-path distances (and a predecessor tree) from ``source``; raise
    ValidationError with the first violation.

    dist[source] == 0, inf = unreached; dist[v] <= dist[u] + w(u, v) on every edge from a
    reached u; every reached v != source has an in-edge achieving equality (within ``rtol``
    for floating sums taken in another order). pred: pred[source] == source, -1 exactly where
    unreached, each link an edge achieving equality, the tree rooted at the source and acyclic.
    """
    S, rows, cols, w = _graph(A)
    n = S.shape[0]
    w = np.ones(len(rows)) if w.dtype == np.bool_ else w.astype(np.float64)
    dist = np.asarray(B.to_host(dist)).astype(np.float64)
    if dist.shape != (n,):
        _fail(f"dist must have shape ({n},); got {dist.shape}")
    if dist[source] != 0:
        _fail(f"dist[source] must be 0; got {dist[source]}")
    reached = np.isfinite(dist)
    if np.isnan(dist).any() or (dist == -np.inf).any():
        _fail("dist must hold finite values or +inf")
    with np.errstate(invalid="ignore"):  # inf - inf between unreached vertices
        cand = dist[rows] + w
        tol = rtol * np.maximum(np.abs(cand), 1.0)
        tight = reached[rows] & (np.abs(dist[cols] - cand) <= tol)
    bad = np.flatnonzero(reached[rows] & (dist[cols] > cand + tol))
    if bad.size:
        e = bad[0]
        _fail(
            f"edge ({rows[e]}, {cols[e]}) of weight {w[e]} relaxes further: dist "
            f"{dist[cols[e]]} > {dist[rows[e]]} + {w[e]}"
        )
    has_tight = np.zeros(n, bool)
    has_tight[cols[tight]] = True
    orphan = np.flatnonzero(reached & ~has_tight & (np.arange(n) != source))
    if orphan.size:
        _fail(f"vertex {orphan[0]} has dist {dist[orphan[0]]} but no in-edge achieves it")
    if pred is None:
        return
    pred = _tree_array(pred, "pred", n, source)
    span = np.flatnonzero((pred >= 0) != reached)
    if span.size:
        _fail(
            f"pred must be -1 exactly where unreached: vertex {span[0]} has dist "
            f"{dist[span[0]]} and pred {pred[span[0]]}"
        )
    _, cyclic = _tree_depths(pred, source)
    if cyclic.any():
        _fail(f"the predecessor tree has a cycle through vertex {np.flatnonzero(cyclic)[0]}")
    others = np.flatnonzero(reached & (np.arange(n) != source))
    pos = _find_edges(rows, cols, n, pred[others], others)
    if (pos < 0).any():
        v = others[np.flatnonzero(pos < 0)[0]]
        _fail(f"predecessor link ({pred[v]}, {v}) is not an edge of A")
    c = dist[pred[others]] + w[pos]
    bad = np.flatnonzero(np.abs(dist[others] - c) > rtol * np.maximum(np.abs(c), 1.0))
    if bad.size:
        v = others[bad[0]]
        _fail(
            f"predecessor link ({pred[v]}, {v}) is not tight: {dist[pred[v]]} + weight != {dist[v]}"
        )
