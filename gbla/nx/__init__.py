"""The networkx backend named ``gbla``: networkx code runs on gbla unchanged.

    import networkx as nx
    nx.single_source_shortest_path_length(G, 0, backend="gbla")
    nx.config.backend_priority = ["gbla"]   # or for every call that gbla can run

``graph.py`` converts a networkx graph (its nodes in order, the adjacency as a gbla Matrix
weighted by one edge attribute, networkx's neighbour order on the host); ``functions.py``
holds the functions, computed by gbla's algorithms; ``interface.py`` is what networkx loads
(entry points ``networkx.backends`` and ``networkx.backend_info`` in pyproject.toml).

This module itself imports no networkx: networkx reads :func:`get_info` while it is being
imported, so the interface is loaded only when networkx asks for it.
"""

from .._backend import gpu_available
from .._version import __version__

__all__ = ["FUNCTIONS", "get_info", "backend_interface", "BackendInterface"]

FUNCTIONS = (
    "bfs_edges",
    "bfs_tree",
    "bfs_layers",
    "bfs_predecessors",
    "bfs_successors",
    "descendants_at_distance",
    "single_source_shortest_path_length",
    "single_target_shortest_path_length",
    "shortest_path_length",
    "shortest_path",
    "has_path",
    "single_source_dijkstra",
    "single_source_dijkstra_path_length",
    "dijkstra_path_length",
    "multi_source_dijkstra_path_length",
    "single_source_bellman_ford_path_length",
    "bellman_ford_predecessor_and_distance",
    "negative_edge_cycle",
    "all_pairs_shortest_path_length",
    "connected_components",
    "is_connected",
    "node_connected_component",
    "pagerank",
    "triangles",
    "clustering",
    "average_clustering",
    "transitivity",
)


def get_info():
    """networkx's backend_info for gbla (entry point ``networkx.backend_info``)."""
    where = "the GPU" if gpu_available() else "the CPU"
    return {
        "backend_name": "gbla",
        "project": "gbla",
        "package": "gbla",
        "url": "https://github.com/gbla",
        "short_summary": f"GraphBLAS-style graph algorithms on the GPU or the CPU "
        f"(gbla {__version__})",
        "default_config": {},
        "functions": {
            name: {"extra_docstring": f"Computed by gbla on {where}." + _EXTRA.get(name, "")}
            for name in FUNCTIONS
        },
    }


_EXTRA = {
    "all_pairs_shortest_path_length": (
        "\nEach source's lengths are a read-only mapping (gbla.nx.lengths.HopLengths) over its row "
        "of a\nmulti-source BFS, not a dict: len, iteration (by distance, ties in node order), [], "
        "in,\n== with a dict and repr behave as the dict's; entries become Python objects only as "
        "they\nare read; d.copy() gives a dict."
    )
}


def __getattr__(name):
    if name in ("backend_interface", "BackendInterface"):
        from . import interface

        return getattr(interface, name)
    raise AttributeError(f"module 'gbla.nx' has no attribute {name!r}")
