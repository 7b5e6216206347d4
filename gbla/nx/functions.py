"""networkx's breadth-first, shortest-path, component, PageRank, triangle and clustering
functions, computed by gbla.

Levels, distances and components come from gbla's algorithms (on the GPU when there is one);
what networkx defines beyond them (the order of a traversal, which of several shortest paths,
its exceptions and messages) is put together on the host to be networkx's. Results hold plain
Python numbers, as networkx's do.
"""

import math

import networkx as nx
import numpy as np

from .. import _backend as B
from .._compat import BATCH, bfs_order, with_hub
from ..algorithms import bfs as _bfs
from ..algorithms import clustering as _clustering
from ..algorithms import connected_components as _components
from ..algorithms import pagerank as _pagerank
from ..algorithms import sssp as _sssp
from ..algorithms import transitivity as _transitivity
from ..algorithms import triangles as _triangles
from ..exceptions import ConvergenceError, NegativeCycleError
from ..matrix import Matrix
from . import FUNCTIONS
from .lengths import HopLengths, Labels

__all__ = list(FUNCTIONS)


# ============================================================================== searches
def _with_hub(matrix, starts, weight):
    """The matrix with one more vertex, n, and an edge n -> s (of ``weight``) to each start."""
    # sync: to the host, once per multi-source search
    return Matrix.from_scipy(with_hub(matrix.to_scipy(), starts, weight), device=matrix.device)


def _levels(g, starts, *, reverse=False, depth_limit=None):
    """Hop levels (host int64, -1 unreached) from the start indices."""
    A = g.matrix.T if (reverse and g.is_directed()) else g.matrix
    if len(starts) == 1:
        levels = _bfs(A, starts[0], depth_limit=depth_limit)
        return B.to_host(levels).astype(np.int64)
    limit = None if depth_limit is None else depth_limit + 1
    levels = B.to_host(_bfs(_with_hub(A, starts, 1.0), A.nrows, depth_limit=limit))
    levels = levels[:-1].astype(np.int64)
    return np.where(levels > 0, levels - 1, -1)


def _order(g, starts, *, reverse=False, depth_limit=None):
    """(visit order, parent index, levels) of networkx's queue-based BFS."""
    levels = _levels(g, starts, reverse=reverse, depth_limit=depth_limit)
    order, parent = bfs_order([g.neighbour_lists(reverse)], levels, starts)
    return order, parent, levels


def _depth_limit(value):
    """The deepest level networkx's loops reach (``while depth < depth_limit``, ``while cutoff >
    level``): ceil(value), 0 for none past the start; None for no limit."""
    if value is None or value == math.inf:
        return None
    return math.ceil(value) if value > 0 else 0


def _number(x, integral):
    """A distance as networkx gives it: an int where every weight is an integer."""
    return int(x) if integral and float(x).is_integer() else float(x)


def _distances(g, source, *, method, reverse=False, weighted=True):
    """(host float64 distances, host int64 predecessor indices) from one source index (to it,
    with ``reverse``, in a digraph); hops when not ``weighted`` or the graph has no weights."""
    A = g.matrix.T if (reverse and g.is_directed()) else g.matrix
    if g.weight is None or not weighted:
        levels, parents = (B.to_host(a) for a in _bfs(A, source, return_predecessors=True))
        return np.where(levels < 0, np.inf, levels.astype(np.float64)), parents.astype(np.int64)
    dist, pred = (B.to_host(a) for a in _sssp(A, source, method=method, return_predecessors=True))
    return dist.astype(np.float64), pred.astype(np.int64)


def _integral(g):
    if "integral" not in g._cache:
        values = B.to_host(g.matrix._values_or_ones()) if g.matrix.nvals else np.zeros(0)
        g._cache["integral"] = bool(np.all(np.asarray(values, np.float64) % 1 == 0))
    return g._cache["integral"]


def _negative(g):
    if g.weight is None or not g.matrix.nvals:
        return False
    return float(B.to_host(g.matrix._values_or_ones()).min()) < 0


def _dijkstra(g, source, cutoff=None, *, reverse=False):
    """{node: distance} within ``cutoff``, in increasing distance, from a source index."""
    if _negative(g):
        raise NotImplementedError("gbla's Dijkstra functions take non-negative weights only")
    dist, _ = _distances(g, source, method="auto", reverse=reverse)
    return _length_dict(g, dist, cutoff)


def _length_dict(g, dist, cutoff=None):
    reached = np.flatnonzero(np.isfinite(dist))
    if cutoff is not None:
        reached = reached[dist[reached] <= cutoff]
    reached = reached[np.argsort(dist[reached], kind="stable")]
    integral = _integral(g)
    return {g.nodes[v]: _number(dist[v], integral) for v in reached.tolist()}


def _bellman(g, source, *, reverse=False):
    """(distances, predecessor indices) by Bellman-Ford; NetworkXUnbounded on a cycle."""
    try:
        return _distances(g, source, method="bellman_ford", reverse=reverse)
    except NegativeCycleError:
        raise nx.NetworkXUnbounded("Negative cycle detected.") from None


def _path(g, parent, v):
    path = [v]
    while parent[path[-1]] >= 0:
        path.append(int(parent[path[-1]]))
    return [g.nodes[u] for u in reversed(path)]


# ============================================================================== traversals
def bfs_edges(G, source, reverse=False, depth_limit=None, sort_neighbors=None):
    (s,) = G.ids([source], error=nx.NetworkXError)
    order, parent, _ = _order(G, [s], reverse=reverse, depth_limit=_depth_limit(depth_limit))
    nodes = G.nodes
    for v in order[1:].tolist():
        yield nodes[parent[v]], nodes[v]


def bfs_tree(G, source, reverse=False, depth_limit=None, sort_neighbors=None):
    T = nx.DiGraph()
    T.add_node(source)
    T.add_edges_from(bfs_edges(G, source, reverse=reverse, depth_limit=depth_limit))
    return T


def bfs_layers(G, sources):
    if sources in G:
        sources = [sources]
    current = list(set(sources))  # networkx's first layer is in a set's order
    starts = G.ids(current, error=nx.NetworkXError)
    if not starts:
        return
    order, _, levels = _order(G, starts)
    ranks = levels[order]
    nodes = G.nodes
    for depth in range(int(ranks.max()) + 1):
        yield [nodes[v] for v in order[ranks == depth].tolist()]


def bfs_predecessors(G, source, depth_limit=None, sort_neighbors=None):
    for s, t in bfs_edges(G, source, depth_limit=depth_limit):
        yield t, s


def bfs_successors(G, source, depth_limit=None, sort_neighbors=None):
    parent, children = source, []
    for p, c in bfs_edges(G, source, depth_limit=depth_limit):
        if p == parent:
            children.append(c)
            continue
        yield parent, children
        children, parent = [c], p
    yield parent, children


def descendants_at_distance(G, source, distance):
    (s,) = G.ids([source], error=nx.NetworkXError)
    if distance < 0:
        return set()
    levels = _levels(G, [s], depth_limit=_depth_limit(distance))
    return {G.nodes[v] for v in np.flatnonzero(levels == distance).tolist()}


# ============================================================================== hop lengths
def _hop_lengths(g, start, cutoff, *, reverse=False):
    order, _, levels = _order(g, [start], reverse=reverse, depth_limit=_depth_limit(cutoff))
    return {g.nodes[v]: int(levels[v]) for v in order.tolist()}


def single_source_shortest_path_length(G, source, cutoff=None):
    if source not in G:
        raise nx.NodeNotFound(f"Source {source} is not in G")
    return _hop_lengths(G, G.index[source], cutoff)


def single_target_shortest_path_length(G, target, cutoff=None):
    if target not in G:
        raise nx.NodeNotFound(f"Target {target} is not in G")
    return _hop_lengths(G, G.index[target], cutoff, reverse=True)


def all_pairs_shortest_path_length(G, cutoff=None):
    """(node, lengths) for each node, in ``list(G)`` order: ``lengths`` is a :class:`HopLengths`,
    a read-only mapping {target: hops} that reads like networkx's dict (len, iteration, [],
    ==, repr) and is built from the levels of a multi-source BFS, ``BATCH`` sources a search,
    without a Python object per entry. Targets iterate by distance, ties in node order:
    networkx lists them as its search meets them, an order it does not promise and one that
    costs a scan of every edge per source to reproduce."""
    limit = _depth_limit(cutoff)
    labels = _labels(G)
    nodes = G.nodes
    for at in range(0, len(G), BATCH):
        batch = range(at, min(at + BATCH, len(G)))
        # sync: the batch's levels to the host, once
        levels = B.to_host(_bfs(G.matrix, list(batch), depth_limit=limit))
        yield from zip(map(nodes.__getitem__, batch), HopLengths.rows(levels, labels))


def _labels(g):
    if "labels" not in g._cache:
        g._cache["labels"] = Labels(g.nodes, g.index)
    return g._cache["labels"]


def _check_method(method):
    if method not in ("dijkstra", "bellman-ford"):
        raise ValueError(f"method not supported: {method}")


def shortest_path_length(G, source=None, target=None, weight=None, method="dijkstra"):
    _check_method(method)
    if source is None and target is None:
        return _all_lengths(G, weight, method)
    if source is None:
        if target not in G:
            raise nx.NodeNotFound(f"Target {target} is not in G")
        start, reverse = G.index[target], True
    else:
        if source not in G:
            raise nx.NodeNotFound(f"Source {source} is not in G")
        start, reverse = G.index[source], False
    if source is not None and target is not None:
        if target not in G:
            raise nx.NodeNotFound(f"Either source {source} or target {target} is not in G")
        if source == target:
            return 0
    # networkx may hand over a conversion made with weights for a call without them
    if weight is None or G.weight is None:
        lengths = _hop_lengths(G, start, None, reverse=reverse)
    elif method == "bellman-ford":
        lengths = _length_dict(G, _bellman(G, start, reverse=reverse)[0])
    else:
        lengths = _dijkstra(G, start, reverse=reverse)
    if source is None or target is None:
        return lengths
    if target not in lengths:
        raise nx.NetworkXNoPath(f"No path between {source} and {target}.")
    return lengths[target]


def _all_lengths(G, weight, method):
    for node in G.nodes:
        start = G.index[node]
        if weight is None or G.weight is None:
            yield node, _hop_lengths(G, start, None)
        elif method == "bellman-ford":
            yield node, _length_dict(G, _bellman(G, start)[0])
        else:
            yield node, _dijkstra(G, start)


def shortest_path(G, source=None, target=None, weight=None, method="dijkstra"):
    # reached only for a source alone and no weight (see interface.can_run): networkx's
    # single_source_shortest_path, whose tree is the queue's first discoverers
    _check_method(method)
    if source not in G:
        raise nx.NodeNotFound(f"Source {source} not in G")
    order, parent, _ = _order(G, [G.index[source]])
    return {G.nodes[v]: _path(G, parent, v) for v in order.tolist()}


def has_path(G, source, target):
    if source not in G or target not in G:
        raise nx.NodeNotFound(f"Either source {source} or target {target} is not in G")
    levels = _levels(G, [G.index[source]])
    return bool(levels[G.index[target]] >= 0)


# ============================================================================== weighted
def single_source_dijkstra_path_length(G, source, cutoff=None, weight="weight"):
    if source not in G:
        raise nx.NodeNotFound(f"Node {source} not found in graph")
    return _dijkstra(G, G.index[source], cutoff)


def single_source_dijkstra(G, source, target=None, cutoff=None, weight="weight"):
    if source not in G:
        raise nx.NodeNotFound(f"Node {source} not found in graph")
    if _negative(G):
        raise NotImplementedError("gbla's Dijkstra functions take non-negative weights only")
    s = G.index[source]
    dist, pred = _distances(G, s, method="auto")
    lengths = _length_dict(G, dist, cutoff)
    if np.bincount(_tight_edges(G, dist, s)[1], minlength=len(G)).max(initial=0) > 1:
        # networkx's path is the first its heap finds: gbla gives paths only where unique
        raise NotImplementedError("gbla: shortest paths that tie (networkx's own choice)")
    tree = pred.copy()
    tree[s] = -1
    paths = {node: _path(G, tree, G.index[node]) for node in lengths}
    if target is None:
        return lengths, paths
    if target not in lengths:
        raise nx.NetworkXNoPath(f"No path to {target}.")
    return lengths[target], paths[target]


def _tight_edges(g, dist, source):
    """(u, v) of every edge u -> v that achieves dist[v]: u reached, u != v, v not the source
    (equal within rounding of a sum taken in another order)."""
    S = g.matrix.to_scipy().tocoo()  # sync: to the host
    u, v, w = S.row, S.col, S.data.astype(np.float64)
    tight = np.isfinite(dist[u]) & np.isfinite(dist[v]) & (u != v) & (v != source)
    tight &= np.isclose(dist[u] + w, dist[v], rtol=1e-12, atol=0)
    return u[tight], v[tight]


def dijkstra_path_length(G, source, target, weight="weight"):
    if source not in G:
        raise nx.NodeNotFound(f"Node {source} not found in graph")
    if source == target:
        return 0
    lengths = _dijkstra(G, G.index[source])
    if target not in lengths:
        raise nx.NetworkXNoPath(f"Node {target} not reachable from {source}")
    return lengths[target]


def multi_source_dijkstra_path_length(G, sources, cutoff=None, weight="weight"):
    if not sources:
        raise ValueError("sources must not be empty")
    for s in sources:
        if s not in G:
            raise nx.NodeNotFound(f"Node {s} not found in graph")
    if _negative(G):
        raise NotImplementedError("gbla's Dijkstra functions take non-negative weights only")
    starts = sorted({G.index[s] for s in sources})
    n = len(G)
    hub = _with_hub(G.matrix, starts, 0.0)
    dist = B.to_host(_sssp(hub, n)).astype(np.float64)[:n]
    return _length_dict(G, dist, cutoff)


def single_source_bellman_ford_path_length(G, source, weight="weight"):
    if source not in G:
        raise nx.NodeNotFound(f"Node {source} not found in graph")
    return _length_dict(G, _bellman(G, G.index[source])[0])


def bellman_ford_predecessor_and_distance(G, source, target=None, weight="weight", heuristic=False):
    if source not in G:
        raise nx.NodeNotFound(f"Node {source} is not found in the graph")
    dist, _ = _bellman(G, G.index[source])
    lengths = _length_dict(G, dist)
    # every tight in-edge u -> v of a reached v, as networkx lists them (the source keeps [])
    u, v = _tight_edges(G, dist, G.index[source])
    pred = {node: [] for node in lengths}
    for a, b in sorted(zip(v.tolist(), u.tolist())):
        pred[G.nodes[a]].append(G.nodes[b])
    return pred, lengths


def negative_edge_cycle(G, weight="weight", heuristic=True):
    if G.nx.size() == 0:
        return False
    if G.weight is None or not _negative(G):
        return False
    n = len(G)
    hub = _with_hub(G.matrix, list(range(n)), 0.0)
    try:
        _sssp(hub, n, method="bellman_ford")
    except NegativeCycleError:
        return True
    return False


# ============================================================================== components
def connected_components(G):
    count, labels = _components(G.matrix, directed=False)
    labels = B.to_host(labels)
    groups = [set() for _ in range(count)]
    for node, label in zip(G.nodes, labels.tolist()):
        groups[label].add(node)
    yield from groups


def is_connected(G):
    if len(G) == 0:
        raise nx.NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
    return _components(G.matrix, directed=False)[0] == 1


def node_connected_component(G, n):
    if n not in G:
        raise KeyError(n)
    levels = _levels(G, [G.index[n]])
    return {G.nodes[v] for v in np.flatnonzero(levels >= 0).tolist()}


# ============================================================================== link analysis
def pagerank(
    G,
    alpha=0.85,
    personalization=None,
    max_iter=100,
    tol=1e-06,
    nstart=None,
    weight="weight",
    dangling=None,
):
    if len(G) == 0:
        return {}
    p, start, lost = (
        None if d is None else node_weights(G, d) for d in (personalization, nstart, dangling)
    )
    if p is not None and p.sum() == 0:
        raise ZeroDivisionError  # as networkx
    try:
        ranks = _pagerank(
            G.matrix,
            alpha=alpha,
            personalization=p,
            max_iter=max_iter,
            tol=tol,
            nstart=start,
            dangling=lost,
            # a graph converted with weights may serve an unweighted call
            weighted=weight is not None and G.weight is not None,
        )
    except ConvergenceError:
        raise nx.PowerIterationFailedConvergence(max_iter) from None
    return dict(zip(G.nodes, map(float, B.to_host(ranks).tolist())))


def node_weights(G, values):
    """A dict of node -> number as an array in G's node order (0 for a node it lacks)."""
    return np.array([values.get(node, 0) for node in G.nodes], dtype=float)


# ============================================================================== clustering
def triangles(G, nodes=None):
    counts = B.to_host(_triangles(G.matrix)).tolist()
    if nodes is not None:
        if nodes in G:  # one node: its count
            return counts[G.index[nodes]]
        # a container of nodes, those not in G skipped (networkx's nbunch)
        return {v: counts[G.index[v]] for v in G.nx.nbunch_iter(nodes)}
    return dict(zip(G.nodes, counts))


def clustering(G, nodes=None, weight=None):
    c = B.to_host(_clustering(G.matrix)).tolist()
    # networkx's int 0 where a vertex has no triangle (`or 0`)
    if nodes is not None and nodes in G:
        return c[G.index[nodes]] or 0
    ids = range(len(G)) if nodes is None else [G.index[v] for v in G.nx.nbunch_iter(nodes)]
    return {G.nodes[i]: c[i] or 0 for i in ids}


def average_clustering(G, nodes=None, weight=None, count_zeros=True):
    c = clustering(G, nodes, weight=weight).values()  # a single node fails, as in networkx
    if not count_zeros:
        c = [v for v in c if abs(v) > 0]
    return sum(c) / len(c)


def transitivity(G):
    return _transitivity(G.matrix) or 0  # networkx's int 0 without a triangle
