"""What the compatibility layers (gbla.csgraph, gbla.nx) share, on the host:

- :func:`bfs_order` (:func:`bfs_orders` for several searches at once), the order a queue-based breadth-first search visits vertices in, put
  together from levels gbla computed (within each level, vertices in the order they are first
  seen, scanning the previous level in its order and each vertex's neighbour lists in their
  stored order), as SciPy's breadth_first_order and networkx's bfs_edges visit;
- :func:`with_hub`, a graph with one more vertex joined to some (a search from several
  vertices at once, each at distance 0, or 1 hop);
- :data:`BATCH`, how many sources one multi-source search takes.
"""

import numpy as np
import scipy.sparse as sp

__all__ = ["bfs_order", "bfs_orders", "with_hub", "BATCH"]

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
    orders, parents = bfs_orders(adjacency, np.asarray(levels)[None, :], [starts])
    return orders[0], parents[0]


def bfs_orders(adjacency, levels, starts):
    """:func:`bfs_order` for several searches at once (one pass a level for all of them):
    ``levels`` is k x n (a row per search), ``starts`` k lists; returns (k order arrays, the
    k x n parents)."""
    k, n = levels.shape
    parent = np.full((k, n), -1, np.int64)
    # a level: (search, vertex) pairs, by search, each search's vertices in visit order
    rows = np.concatenate([np.full(len(st), r, np.int64) for r, st in enumerate(starts)])
    verts = np.concatenate([np.asarray(st, np.int64) for st in starts])
    found_rows, found_verts = [rows], [verts]
    span = 1 + max((len(ind) for _, ind in adjacency), default=0)
    depth_max = int(levels.max()) if levels.size else 0
    for depth in range(depth_max):
        heads, tails, keys, owners = [], [], [], []
        for part, (indptr, indices) in enumerate(adjacency):
            first = indptr[verts].astype(np.int64)
            counts = indptr[verts + 1].astype(np.int64) - first
            place = np.repeat(np.arange(len(verts)), counts)
            before = np.cumsum(counts) - counts
            slots = np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(first - before,
                                                                             counts)
            heads.append(verts[place])
            owners.append(rows[place])
            tails.append(indices[slots].astype(np.int64))
            # scan order: the head's place in the level, then which list, then the slot
            keys.append((place * len(adjacency) + part) * span + (slots - first[place]))
        heads, tails, keys, owners = (np.concatenate(a) for a in (heads, tails, keys, owners))
        new = levels[owners, tails] == depth + 1
        heads, tails, keys, owners = heads[new], tails[new], keys[new], owners[new]
        by_scan = np.argsort(keys, kind="stable")
        heads, tails, owners = heads[by_scan], tails[by_scan], owners[by_scan]
        _, first_seen = np.unique(owners * n + tails, return_index=True)
        first_seen.sort()  # scan order: by search, then as each search visits
        if not len(first_seen):
            break
        rows, verts = owners[first_seen], tails[first_seen]
        parent[rows, verts] = heads[first_seen]
        found_rows.append(rows)
        found_verts.append(verts)
    rows, verts = np.concatenate(found_rows), np.concatenate(found_verts)
    by_search = np.argsort(rows, kind="stable")  # levels in turn within each search
    bounds = np.searchsorted(rows[by_search], np.arange(k + 1))
    verts = verts[by_search]
    return [verts[bounds[r]:bounds[r + 1]] for r in range(k)], parent
