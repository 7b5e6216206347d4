"""What the compatibility layers (gbla.csgraph, gbla.nx) share, on the host:

- :func:`bfs_order`, the order a queue-based breadth-first search visits vertices in, put
  together from levels gbla computed (within each level, vertices in the order they are first
  seen, scanning the previous level in its order and each vertex's neighbour lists in their
  stored order), as SciPy's breadth_first_order and networkx's bfs_edges visit;
- :func:`with_hub`, a graph with one more vertex joined to some (a search from several
  vertices at once, each at distance 0, or 1 hop);
- :data:`BATCH`, how many sources one multi-source search takes.
"""

import numpy as np
import scipy.sparse as sp

__all__ = ["bfs_order", "with_hub", "BATCH"]

BATCH = 64  # sources a multi-source search takes at once (a 64 x n frontier)


def with_hub(S, starts, weight):
    """S (a SciPy matrix, n x n) with one more vertex, n, and an edge n -> s of ``weight`` to
    each start, as a float64 CSR; built from the entries, since a sum of sparse matrices would
    drop zero weights."""
    coo = S.tocoo()
    n = S.shape[0]
    rows = np.concatenate([coo.row, np.full(len(starts), n)])
    cols = np.concatenate([coo.col, np.asarray(starts, np.int64)])
    values = np.concatenate([coo.data.astype(np.float64), np.full(len(starts), float(weight))])
    return sp.csr_array((values, (rows, cols)), shape=(n + 1, n + 1))


def bfs_order(adjacency, levels, starts):
    """(order, parent): the visited vertices (int64, ``starts`` first, in the order given) and,
    for each vertex, the one it was first seen from (-1 for the starts and the unvisited).

    ``adjacency``: (indptr, indices) pairs on the host, scanned one after the other for each
    vertex (out-lists, then in-lists for an undirected search of a directed matrix); ``levels``
    (host, -1 unvisited) must be the BFS levels from ``starts`` over the union of those lists.
    """
    n = len(levels)
    parent = np.full(n, -1, np.int64)
    order = [np.asarray(starts, np.int64)]
    depth_max = int(levels.max()) if n else 0
    for depth in range(depth_max):
        level = order[-1]
        heads, tails, keys = [], [], []
        span = 1 + max((len(ind) for _, ind in adjacency), default=0)
        for part, (indptr, indices) in enumerate(adjacency):
            starts_ = indptr[level].astype(np.int64)
            counts = indptr[level + 1].astype(np.int64) - starts_
            place = np.repeat(np.arange(len(level)), counts)
            before = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
            slots = np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(
                starts_ - before, counts
            )
            heads.append(level[place])
            tails.append(indices[slots].astype(np.int64))
            # scan order: the head's place in its level, then which list, then the slot
            keys.append((place * len(adjacency) + part) * span + (slots - starts_[place]))
        heads, tails, keys = (np.concatenate(a) for a in (heads, tails, keys))
        new = levels[tails] == depth + 1
        heads, tails, keys = heads[new], tails[new], keys[new]
        by_scan = np.argsort(keys, kind="stable")
        tails, heads = tails[by_scan], heads[by_scan]
        _, first = np.unique(tails, return_index=True)
        first.sort()
        seen = tails[first]
        if not len(seen):
            break
        parent[seen] = heads[first]
        order.append(seen)
    return np.concatenate(order), parent
