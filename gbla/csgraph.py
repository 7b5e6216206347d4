"""``scipy.sparse.csgraph``'s traversal and shortest-path functions over gbla: the same names,
signatures, outputs and sentinels, computed by gbla's algorithms (on the GPU when there is one).

    from gbla import csgraph          # instead of: from scipy.sparse import csgraph
    dist, pred = csgraph.dijkstra(A, indices=0, return_predecessors=True)

What is SciPy's here: the input rules (a dense array's zeros, infinities and NaNs are no edge;
a sparse matrix's explicit zeros are zero-weight edges and its duplicates are summed; weights
are taken as float64), ``directed=False`` (an edge goes either way, the lighter direction where
both exist), the sentinels (``inf`` for an unreached distance, ``-9999`` for "no predecessor",
the source's own included), int32 predecessors, a 1-D result for one index and a 2-D one (index
by vertex) otherwise, and the exceptions (:class:`NegativeCycleError` is SciPy's too; a bad
argument raises a ValueError). NumPy or SciPy in, NumPy out; CuPy in, CuPy out.

Where results are not unique (predecessors when shortest paths tie) they are valid, not
necessarily SciPy's; :func:`breadth_first_order` gives SciPy's order exactly; strong component
labels are numbered by each component's smallest vertex, weak ones exactly as SciPy's. Several
``indices`` search together, 64 at a time, in a bit-parallel BFS when unweighted (one
product a level for all of them); weighted, one Bellman-Ford an index.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph as _scipy

from . import _backend as B
from . import _storage, exceptions
from ._compat import BATCH, bfs_order, with_hub
from .algorithms import bfs as _bfs
from .algorithms import connected_components as _components
from .algorithms import sssp as _sssp
from .matrix import Matrix
from .semirings import binary

__all__ = [
    "shortest_path",
    "dijkstra",
    "bellman_ford",
    "johnson",
    "floyd_warshall",
    "breadth_first_order",
    "breadth_first_tree",
    "connected_components",
    "NegativeCycleError",
    "NULL",
]

NULL = -9999  # SciPy's "no predecessor"
METHODS = ("auto", "FW", "D", "BF", "J")


def __getattr__(name: str) -> Any:
    """A SciPy csgraph function gbla does not compute names where to find it."""
    if name in getattr(_scipy, "__all__", ()):
        ours = ", ".join(f for f in __all__ if f not in ("NegativeCycleError", "NULL"))
        raise AttributeError(
            f"gbla.csgraph has no {name!r}: it computes SciPy's traversal and shortest-path "
            f"functions ({ours}); use scipy.sparse.csgraph.{name}"
        )
    raise AttributeError(f"module 'gbla.csgraph' has no attribute {name!r}")


class NegativeCycleError(exceptions.NegativeCycleError, _scipy.NegativeCycleError):
    """A negative cycle: both gbla's and SciPy's exception, so either ``except`` catches it."""


# ============================================================================== the graph
class _Graph:
    """The input as SciPy reads it: ``host`` a float64 CSR on the host (after ``directed``),
    ``matrix`` the same on gbla's device, ``gpu_out`` whether results go back as CuPy."""

    def __init__(self, csgraph, directed, unweighted=False):
        self.gpu_out = False
        device = None
        if isinstance(csgraph, Matrix):
            self.gpu_out = csgraph.device == "gpu"
            device = csgraph.device
            S = csgraph.to_scipy()
        elif sp.issparse(csgraph):
            S = csgraph
        elif B.array_device(csgraph) == "gpu" or _is_cupy_sparse(csgraph):
            self.gpu_out = True
            device = "gpu"
            S = (
                csgraph.get()
                if _is_cupy_sparse(csgraph)
                else _scipy.csgraph_from_dense(B.to_host(csgraph), null_value=0)
            )
        else:
            dense = np.asarray(csgraph)
            if dense.ndim != 2:
                raise exceptions.InvalidValue(
                    f"csgraph must be a 2-D array or sparse matrix; got shape {dense.shape}"
                )
            S = _scipy.csgraph_from_dense(dense.astype(np.float64), null_value=0)
        if S.ndim != 2 or S.shape[0] != S.shape[1]:
            raise exceptions.DimensionMismatch(
                f"csgraph must be square (N x N); got shape {S.shape}"
            )
        S = sp.csr_array(S, dtype=np.float64)  # duplicates summed, explicit zeros kept
        self.stored = S.nnz  # the edges as given (SciPy's 'auto' counts them)
        if unweighted:
            S = sp.csr_array((np.ones(S.nnz), S.indices, S.indptr), shape=S.shape)
        if not directed:
            S = _either_way(S)
        self.n = S.shape[0]
        self.host = S
        self.device = device
        self._matrix = None

    @classmethod
    def of(cls, host, like):
        """A graph over another host CSR, results going where ``like``'s go."""
        g = cls.__new__(cls)
        g.n, g.host, g.device, g.gpu_out, g._matrix = (
            host.shape[0],
            host,
            like.device,
            like.gpu_out,
            None,
        )
        g.stored = host.nnz
        return g

    @property
    def matrix(self):
        """``host`` on gbla's device, moved there on first use."""
        if self._matrix is None:
            self._matrix = Matrix.from_scipy(self.host, device=self.device)
        return self._matrix

    def out(self, a):
        """A result array in the caller's kind (NumPy, or CuPy for CuPy input)."""
        return B.to_device(a, "gpu") if self.gpu_out else B.to_host(a)


def _is_cupy_sparse(x):
    cp = B._cupy()
    if cp is None:
        return False
    import cupyx.scipy.sparse as csp

    return csp.issparse(x)


def _either_way(S):
    """Every edge both ways, the lighter weight where both directions exist."""
    coo = S.tocoo()
    rows, cols, w = _storage.merge_entries(
        np.concatenate([coo.row, coo.col]),
        np.concatenate([coo.col, coo.row]),
        np.concatenate([coo.data, coo.data]),
        S.shape,
        binary.min,
        "cpu",
        arg="csgraph",
    )
    return sp.csr_array((w, (rows, cols)), shape=S.shape)


def _indices(indices, n):
    """(list of sources, whether the result is 1-D); ValueError as SciPy raises."""
    if indices is None:
        return list(range(n)), False
    arr = np.asarray(indices)
    if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and np.all(arr == arr // 1)):
        raise ValueError(f"indices must be integer vertex ids; got {indices!r}")
    flat = arr.astype(np.int64).ravel()
    if flat.size and (flat.min() < 0 or flat.max() >= n):
        raise ValueError(f"indices must satisfy 0 <= index < {n}; got {indices!r}")
    return flat.tolist(), arr.ndim == 0


# ============================================================================== searches
def _scipy_pred(parents, source):
    """gbla's predecessors (-1 unreached, the source its own) with SciPy's sentinel, int32."""
    pred = parents.astype(np.int32)
    pred[pred < 0] = NULL
    pred[source] = NULL
    return pred


def _hops(levels):
    """BFS levels (-1 unreached) as csgraph's float64 distances (inf unreached)."""
    return np.where(levels < 0, np.inf, levels.astype(np.float64))


def _search(g, source, *, method, unweighted):
    """(dist float64, pred int32 with SciPy's sentinels) on the host from one source."""
    if unweighted:
        levels, parents = (B.to_host(a) for a in _bfs(g.matrix, source, return_predecessors=True))
        return _hops(levels), _scipy_pred(parents, source)
    try:
        dist, pred = (
            B.to_host(a) for a in _sssp(g.matrix, source, method=method, return_predecessors=True)
        )
    except exceptions.NegativeCycleError as e:
        raise NegativeCycleError(f"Negative cycle detected on node {source}: {e}") from None
    return dist.astype(np.float64, copy=False), _scipy_pred(pred, source)


def _hop_rows(g, sources):
    """(dist, pred) rows of unweighted searches from ``sources``, BATCH sources a search."""
    for at in range(0, len(sources), BATCH):
        batch = sources[at : at + BATCH]
        levels, parents = (B.to_host(a) for a in _bfs(g.matrix, batch, return_predecessors=True))
        for row, s in enumerate(batch):
            yield _hops(levels[row]), _scipy_pred(parents[row], s)


def _weighted_rows(g, sources):
    """(dist, pred) rows of weighted searches from ``sources``: gbla.sssp's several sources
    (one Bellman-Ford each), BATCH sources a call."""
    for at in range(0, len(sources), BATCH):
        batch = sources[at : at + BATCH]
        try:
            dist, parents = (B.to_host(a) for a in _sssp(g.matrix, batch, return_predecessors=True))
        except exceptions.NegativeCycleError as e:
            raise NegativeCycleError(f"Negative cycle detected from {batch}: {e}") from None
        for row, s in enumerate(batch):
            yield dist[row].astype(np.float64, copy=False), _scipy_pred(parents[row], s)


def _many(g, indices, return_predecessors, *, method, unweighted, limit=np.inf):
    sources, scalar = _indices(indices, g.n)
    dists, preds = [], []
    if scalar:
        rows = [_search(g, sources[0], method=method, unweighted=unweighted)]
    else:
        rows = _hop_rows(g, sources) if unweighted else _weighted_rows(g, sources)
    for dist, pred in rows:
        if limit < np.inf:
            beyond = dist > limit
            dist[beyond] = np.inf
            pred[beyond] = NULL
        dists.append(dist)
        preds.append(pred)
    shape = (len(sources), g.n)
    dist = dists[0] if scalar else (np.stack(dists) if dists else np.zeros(shape))
    pred = preds[0] if scalar else (np.stack(preds) if preds else np.zeros(shape, np.int32))
    if return_predecessors:
        return g.out(dist), g.out(pred)
    return g.out(dist)


def _lowest_weight(g):
    return float(g.host.data.min()) if g.host.nnz else 0.0


def _no_negative_cycle(g):
    """Raise NegativeCycleError for a negative cycle anywhere in the graph, reachable from the
    indices or not, as SciPy's Johnson and Floyd-Warshall do: one Bellman-Ford from a vertex
    added with a zero-weight edge to every vertex, run only where a weight is negative."""
    if _lowest_weight(g) >= 0:
        return
    n = g.n
    hub = _Graph.of(with_hub(g.host, np.arange(n), 0.0), g)
    try:
        _sssp(hub.matrix, n, method="bellman_ford")
    except exceptions.NegativeCycleError:
        raise NegativeCycleError("Negative cycle detected in the graph") from None


def _warn_negative(g):
    if _lowest_weight(g) < 0:
        warnings.warn(
            "Graph has negative weights: dijkstra will give inaccurate results if "
            "the graph contains negative cycles. Consider johnson or bellman_ford.",
            UserWarning,
            stacklevel=3,
        )


def shortest_path(
    csgraph: Any,
    method: str = "auto",
    directed: bool = True,
    return_predecessors: bool = False,
    unweighted: bool = False,
    overwrite: bool = False,
    indices: Any = None,
) -> Any:
    """Shortest-path distances, as :func:`scipy.sparse.csgraph.shortest_path`.

    Every ``method`` ('auto', 'FW', 'D', 'BF', 'J') gives the same distances: gbla runs
    Bellman-Ford (:func:`gbla.sssp`'s 'auto'; BFS when
    ``unweighted``); 'D' warns on negative weights as SciPy does. As in SciPy, 'J' and 'FW'
    raise for a negative cycle anywhere in the graph and 'BF' for one an index reaches, 'FW'
    ignores self-loops and takes no ``indices``, and 'auto' is 'FW' for all pairs of a graph
    with at least N^2 / 4 edges, else 'J' where a weight is negative. ``overwrite`` is
    accepted and ignored (the input is never modified).

    Returns
    -------
    dist : float64 array, (N,) for one index, else (len(indices) or N, N); inf = unreached
    predecessors : int32 array of the same shape, when ``return_predecessors``; -9999 = none

    Raises
    ------
    NegativeCycleError
        A negative cycle reachable from an index, or under 'auto', 'J' and 'FW' anywhere
        (an undirected negative edge is one).
    ValueError
        An unknown method, 'FW' with indices, a non-square graph, indices out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from gbla import csgraph
    >>> G = np.array([[0, 1, 2], [0, 0, 0], [0, 0, 0]])
    >>> csgraph.shortest_path(G, indices=0)
    array([0., 1., 2.])
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}")
    if method == "FW" and indices is not None:
        raise ValueError("Cannot specify indices with method == 'FW'.")
    g = _Graph(csgraph, directed, unweighted)
    if method == "auto":  # SciPy's choice, for its rules on cycles and self-loops
        if indices is None and g.stored >= g.n * g.n / 4:
            method = "FW"
        else:
            method = "J" if _lowest_weight(g) < 0 else "D"
    if method == "FW":
        return _all_pairs(g, return_predecessors, unweighted)
    if method == "J":
        return _johnson(g, indices, return_predecessors, unweighted)
    if method == "D":
        _warn_negative(g)
    return _many(g, indices, return_predecessors, method="auto", unweighted=unweighted)


def dijkstra(
    csgraph: Any,
    directed: bool = True,
    indices: Any = None,
    return_predecessors: bool = False,
    unweighted: bool = False,
    limit: float = np.inf,
    min_only: bool = False,
) -> Any:
    """Shortest-path distances from non-negatively weighted edges, as
    :func:`scipy.sparse.csgraph.dijkstra` (gbla runs Bellman-Ford; a negative weight warns as
    SciPy does).

    ``limit``: distances above it are inf (and their predecessors -9999). ``min_only``: one
    search from all the indices at once; returns dist (N,) to the nearest index, and with
    ``return_predecessors`` also the predecessors and ``sources`` (the index each vertex's path
    starts from, -9999 where none).

    Examples
    --------
    >>> import numpy as np
    >>> from gbla import csgraph
    >>> G = np.array([[0, 4, 9], [0, 0, 2], [0, 0, 0]])
    >>> csgraph.dijkstra(G, indices=0, return_predecessors=True)
    (array([0., 4., 6.]), array([-9999,     0,     1], dtype=int32))
    """
    limit = float(limit)
    if np.isnan(limit):
        raise ValueError("limit must be a number; got nan")
    g = _Graph(csgraph, directed, unweighted)
    _warn_negative(g)
    if min_only:
        return _nearest(
            g, indices, return_predecessors, method="auto", unweighted=unweighted, limit=limit
        )
    return _many(g, indices, return_predecessors, method="auto", unweighted=unweighted, limit=limit)


def bellman_ford(
    csgraph: Any,
    directed: bool = True,
    indices: Any = None,
    return_predecessors: bool = False,
    unweighted: bool = False,
) -> Any:
    """Shortest-path distances with negative weights allowed, as
    :func:`scipy.sparse.csgraph.bellman_ford`: gbla's algebraic Bellman-Ford.

    Raises
    ------
    NegativeCycleError
        A negative cycle reachable from an index.

    Examples
    --------
    >>> import numpy as np
    >>> from gbla import csgraph
    >>> G = np.array([[0, 4, 9], [0, 0, -2], [0, 0, 0]])
    >>> csgraph.bellman_ford(G, indices=0)
    array([0., 4., 2.])
    """
    g = _Graph(csgraph, directed, unweighted)
    return _many(g, indices, return_predecessors, method="bellman_ford", unweighted=unweighted)


def johnson(
    csgraph: Any,
    directed: bool = True,
    indices: Any = None,
    return_predecessors: bool = False,
    unweighted: bool = False,
) -> Any:
    """Shortest-path distances with negative weights allowed, as
    :func:`scipy.sparse.csgraph.johnson`: the distances Johnson's reweighting gives, from
    gbla's search from each index (:func:`gbla.sssp`'s 'auto': Bellman-Ford where a weight
    is negative).

    Raises
    ------
    NegativeCycleError
        A negative cycle anywhere in the graph, reachable from an index or not, as SciPy's
        (an undirected negative edge is one).

    Examples
    --------
    >>> import numpy as np
    >>> from gbla import csgraph
    >>> G = np.array([[0, 4, 9], [0, 0, -2], [0, 0, 0]])
    >>> csgraph.johnson(G, indices=0)
    array([0., 4., 2.])
    """
    return _johnson(_Graph(csgraph, directed, unweighted), indices, return_predecessors, unweighted)


def _johnson(g, indices, return_predecessors, unweighted):
    """Johnson's result as SciPy's: a negative cycle anywhere an error, then each index's
    search."""
    _no_negative_cycle(g)
    return _many(g, indices, return_predecessors, method="auto", unweighted=unweighted)


def floyd_warshall(
    csgraph: Any,
    directed: bool = True,
    return_predecessors: bool = False,
    unweighted: bool = False,
    overwrite: bool = False,
) -> Any:
    """Every pair's shortest-path distance, negative weights allowed, as
    :func:`scipy.sparse.csgraph.floyd_warshall`: an (N, N) array, row i from vertex i, by
    gbla's search from every vertex (:func:`gbla.sssp`'s 'auto': Bellman-Ford where a weight
    is negative; sparse work, where Floyd-Warshall's is N^3). As in SciPy, self-loops are
    ignored: a vertex is 0 from itself. ``overwrite`` is accepted and ignored (the input is
    never modified).

    Raises
    ------
    NegativeCycleError
        A negative cycle of two or more edges anywhere in the graph (an undirected negative
        edge is one).

    Examples
    --------
    >>> import numpy as np
    >>> from gbla import csgraph
    >>> G = np.array([[0, 1, 0], [0, 0, 3], [2, 0, 0]])
    >>> csgraph.floyd_warshall(G)
    array([[0., 1., 4.],
           [5., 0., 3.],
           [2., 3., 0.]])
    """
    return _all_pairs(_Graph(csgraph, directed, unweighted), return_predecessors, unweighted)


def _all_pairs(g, return_predecessors, unweighted):
    """Floyd-Warshall's result as SciPy's: every vertex's row, self-loops ignored (its
    distance to itself is 0 whatever they weigh), a negative cycle anywhere an error."""
    h = g.host.tocoo()
    off = h.row != h.col
    h = sp.csr_array((h.data[off], (h.row[off], h.col[off])), shape=h.shape)
    return _many(_Graph.of(h, g), None, return_predecessors, method="auto", unweighted=unweighted)


def _nearest(g, indices, return_predecessors, *, method, unweighted, limit):
    """dijkstra's min_only: one search from a vertex added with a zero-weight edge to each
    index (an edge of weight 1 for an unweighted search, taken off again)."""
    sources, _ = _indices(indices, g.n)
    sources = sorted(set(sources))
    n = g.n
    H = _Graph.of(with_hub(g.host, sources, 1.0 if unweighted else 0.0), g)
    dist, pred = _search(H, n, method=method, unweighted=unweighted)
    dist, pred = dist[:n], pred[:n]
    if unweighted:
        dist = dist - 1
    pred[pred == n] = NULL
    beyond = dist > limit
    dist[beyond] = np.inf
    pred[beyond] = NULL
    if not return_predecessors:
        return g.out(dist)
    origin = np.where(pred == NULL, np.arange(n), pred).astype(np.int64)
    while True:  # pointer doubling to the root of each tree
        nxt = origin[origin]
        if np.array_equal(nxt, origin):
            break
        origin = nxt
    origin = np.where(np.isinf(dist), NULL, origin).astype(np.int32)
    return g.out(dist), g.out(pred), g.out(origin)


# ============================================================================== traversals
def breadth_first_order(
    csgraph: Any, i_start: int, directed: bool = True, return_predecessors: bool = True
) -> Any:
    """The vertices reached from ``i_start`` in SciPy's breadth-first order (each level in the
    order its vertices are first seen, scanning the previous level in order and each vertex's
    edges in stored order; out-edges then in-edges when ``directed`` is False), and the
    predecessors (-9999 for the start and the unreached), as
    :func:`scipy.sparse.csgraph.breadth_first_order`. The levels are gbla's BFS; the order is
    put together on the host.

    Examples
    --------
    >>> import numpy as np
    >>> from gbla import csgraph
    >>> G = np.array([[0, 1, 1, 0], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]])
    >>> csgraph.breadth_first_order(G, 0)
    (array([0, 1, 2, 3], dtype=int32), array([-9999,     0,     0,     1], dtype=int32))
    """
    g = _Graph(csgraph, True)  # the order scans stored rows: symmetrised here, not by _Graph
    order, pred = _order(g, _start(i_start, g.n), directed)
    if return_predecessors:
        return g.out(order), g.out(pred)
    return g.out(order)


def _order(g, start, directed):
    """(order, pred) on the host, int32: SciPy's visit order over g's stored rows (out-rows,
    then in-rows when undirected), levels from gbla's BFS."""
    rows = [g.host]
    searched = g
    if not directed:
        rows.append(sp.csr_array(g.host.T))
        searched = _Graph.of(_either_way(g.host), g)
    levels = B.to_host(_bfs(searched.matrix, start))
    order, parent = bfs_order([(S.indptr, S.indices) for S in rows], levels, [start])
    return order.astype(np.int32), np.where(parent < 0, NULL, parent).astype(np.int32)


def _start(i_start, n):
    if (
        isinstance(i_start, (bool, np.bool_))
        or not isinstance(i_start, (int, np.integer))
        or not 0 <= i_start < n
    ):
        raise ValueError(f"i_start must be a vertex id in [0, {n}); got {i_start!r}")
    return int(i_start)


def breadth_first_tree(csgraph: Any, i_start: int, directed: bool = True) -> Any:
    """The breadth-first tree from ``i_start`` as a sparse matrix holding the tree's edges with
    their weights, as :func:`scipy.sparse.csgraph.breadth_first_tree` (SciPy's
    ``reconstruct_path`` over :func:`breadth_first_order`'s predecessors).

    Examples
    --------
    >>> import numpy as np
    >>> from gbla import csgraph
    >>> G = np.array([[0, 3, 1], [0, 0, 5], [0, 0, 0]])
    >>> csgraph.breadth_first_tree(G, 0).toarray()
    array([[0., 3., 1.],
           [0., 0., 0.],
           [0., 0., 0.]])
    """
    g = _Graph(csgraph, True)
    _, pred = _order(g, _start(i_start, g.n), directed)
    tree = _scipy.reconstruct_path(g.host, pred, directed=directed)
    if g.gpu_out:
        import cupyx.scipy.sparse as csp

        return csp.csr_matrix(tree)
    return tree


def connected_components(
    csgraph: Any, directed: bool = True, connection: str = "weak", return_labels: bool = True
) -> Any:
    """The number of connected components and each vertex's label, as
    :func:`scipy.sparse.csgraph.connected_components`, computed by
    :func:`gbla.connected_components` (weak labels equal SciPy's; strong ones give the same
    partition, numbered by each component's smallest vertex).

    Examples
    --------
    >>> import numpy as np
    >>> from gbla import csgraph
    >>> G = np.array([[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]])
    >>> csgraph.connected_components(G)
    (2, array([0, 0, 1, 1], dtype=int32))
    """
    if connection not in ("weak", "strong"):
        raise ValueError(f"connection must be 'weak' or 'strong'; got {connection!r}")
    g = _Graph(csgraph, True)
    count, labels = _components(g.matrix, directed=bool(directed), connection=connection)
    return (count, g.out(labels)) if return_labels else count
