"""The object networkx loads for the backend named ``gbla`` (entry point group
``networkx.backends``): the functions by name, the conversions, can_run and should_run."""

import networkx as nx

from . import FUNCTIONS, functions
from .graph import GblaGraph, from_nx

__all__ = ["BackendInterface", "backend_interface"]

# Arguments gbla does not take: a weight given as a function, a neighbour order of the
# caller's, and the one path networkx's bidirectional searches pick between two nodes.
_SORTING = {"bfs_edges", "bfs_tree", "bfs_predecessors", "bfs_successors"}
_WEIGHTED = {
    "shortest_path_length",
    "shortest_path",
    "single_source_dijkstra",
    "single_source_dijkstra_path_length",
    "dijkstra_path_length",
    "multi_source_dijkstra_path_length",
    "single_source_bellman_ford_path_length",
    "bellman_ford_predecessor_and_distance",
    "negative_edge_cycle",
}
_DEFAULT_WEIGHT = {"shortest_path_length": None, "shortest_path": None}


class BackendInterface:
    """What networkx asks of a backend: the functions by name, the conversions, and whether
    a call can (and should) run here."""

    def __init__(self):
        for name in FUNCTIONS:
            setattr(self, name, getattr(functions, name))

    @staticmethod
    def convert_from_nx(G, *args, **kwargs):
        return from_nx(G, *args, **kwargs)

    @staticmethod
    def convert_to_nx(obj, *, name=None):
        return obj.nx if isinstance(obj, GblaGraph) else obj

    @staticmethod
    def can_run(name, args, kwargs):
        """True, or a reason why not (networkx shows it and runs its own code instead)."""
        if name not in FUNCTIONS:
            return f"gbla has no {name}"
        bound = _bind(name, args, kwargs)
        if bound is None:
            return "arguments networkx would reject"
        G = bound.get("G")
        if (
            isinstance(G, nx.Graph)
            and G.is_multigraph()
            and name in _WEIGHTED
            and bound.get("weight", "weight") is None
        ):
            return "an unweighted multigraph path length"
        if name == "pagerank":
            return _pagerank_runs(G, bound)
        if name in _CLUSTERING:
            return _clustering_runs(name, G, bound)
        if name in _SORTING and bound.get("sort_neighbors") is not None:
            return "sort_neighbors: gbla keeps networkx's neighbour order only"
        weight = bound.get("weight", _DEFAULT_WEIGHT.get(name, "weight"))
        if name in _WEIGHTED and callable(weight):
            return "a weight function: gbla reads weights from one edge attribute"
        if name == "shortest_path":
            if bound.get("source") is None or bound.get("target") is not None:
                return (
                    "shortest_path between two nodes or all pairs (networkx's own choice of path)"
                )
            if weight is not None:
                return "weighted shortest paths (networkx's own choice among ties)"
        return True

    @staticmethod
    def should_run(name, args, kwargs):
        """Run here when asked to (backend='gbla' or a backend priority naming gbla)."""
        return True


_CLUSTERING = {"triangles", "clustering", "average_clustering", "transitivity"}


def _clustering_runs(name, G, bound):
    """True, or why gbla's counts would not be networkx's: a multigraph where networkx raises
    (all but triangles of the whole graph), a directed graph's clustering (networkx's own
    directed formula), or weighted clustering."""
    if (
        isinstance(G, nx.Graph)
        and G.is_multigraph()
        and (name != "triangles" or bound.get("nodes") is not None)
    ):
        return "a multigraph: networkx raises NetworkXNotImplemented"
    if isinstance(G, nx.Graph) and G.is_directed():
        return "a directed graph: networkx's directed clustering"
    if bound.get("weight") is not None:
        return "weighted clustering (networkx's geometric mean of edge weights)"
    return True


def _pagerank_runs(G, bound):
    """True, or why gbla's pagerank would not give networkx's answer: a multigraph (networkx
    sums parallel edges, gbla keeps the lightest), a damping factor outside [0, 1] or a
    negative tolerance, or node weights that are negative, or for nstart and dangling sum to
    0 (networkx then divides by zero into NaN ranks)."""
    if isinstance(G, nx.Graph) and G.is_multigraph():
        return "a multigraph: networkx sums parallel edges' weights"
    alpha, tol = bound.get("alpha"), bound.get("tol")
    if not (isinstance(alpha, (int, float)) and 0 <= alpha <= 1):
        return "a damping factor outside [0, 1]"
    if not (isinstance(tol, (int, float)) and tol >= 0):
        return "a negative or non-numeric tolerance"
    for arg in ("personalization", "nstart", "dangling"):
        values = bound.get(arg)
        if values is None:
            continue
        if not isinstance(values, dict) or any(
            not isinstance(x, (int, float)) or not x >= 0 for x in values.values()
        ):
            return f"{arg} with negative or non-numeric values"
        if arg != "personalization" and not sum(values.get(v, 0) for v in G) > 0:
            return f"{arg} summing to 0 over the nodes"
    return True


def _bind(name, args, kwargs):
    import inspect

    try:
        signature = inspect.signature(getattr(nx, name))
        bound = signature.bind(*args, **kwargs)
    except (TypeError, AttributeError):
        return None
    bound.apply_defaults()
    return bound.arguments


backend_interface = BackendInterface()
