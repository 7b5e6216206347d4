"""The graph the gbla backend works on: a networkx graph's nodes in order, its adjacency as a
gbla Matrix (weighted by one edge attribute, or a pattern), and the neighbour lists in
networkx's own order (insertion order), kept on the host for the functions whose output order
networkx defines."""

import networkx as nx
import numpy as np

from ..matrix import Matrix

__all__ = ["GblaGraph", "from_nx"]


class GblaGraph:
    """A networkx graph converted for gbla (``__networkx_backend__ = 'gbla'``)."""

    __networkx_backend__ = "gbla"

    def __init__(self, G, weight):
        self.nx = G  # kept: functions returning graphs and networkx's error messages use it
        self.nodes = list(G)
        self.index = {node: i for i, node in enumerate(self.nodes)}
        self.weight = weight
        self._directed = G.is_directed()
        self._multigraph = G.is_multigraph()
        self.matrix = Matrix.from_networkx(G, weight=weight, nodelist=self.nodes)
        self._cache = {}  # neighbour lists, whether weights are integers

    def is_directed(self):
        return self._directed

    def is_multigraph(self):
        return self._multigraph

    def __len__(self):
        return len(self.nodes)

    def __contains__(self, node):
        try:
            return node in self.index
        except TypeError:  # an unhashable "node"
            return False

    def __iter__(self):
        return iter(self.nodes)

    def neighbour_lists(self, reverse=False):
        """(indptr, indices) of the successors (predecessors with ``reverse``) of each node, in
        networkx's order, on the host."""
        if ("lists", reverse) not in self._cache:
            adj = self.nx._pred if (reverse and self._directed) else self.nx._adj
            counts = np.fromiter((len(adj[v]) for v in self.nodes), np.int64, len(self.nodes))
            indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
            indices = np.fromiter(
                (self.index[u] for v in self.nodes for u in adj[v]), np.int64, int(indptr[-1])
            )
            self._cache["lists", reverse] = (indptr, indices)
        return self._cache["lists", reverse]

    def ids(self, nodes, what="node", error=nx.NodeNotFound):
        """The indices of ``nodes``; ``error`` naming the first missing one."""
        out = []
        for node in nodes:
            if node not in self:
                raise error(
                    f"{what} {node} is not in G"
                    if error is nx.NodeNotFound
                    else f"The node {node} is not in the graph."
                )
            out.append(self.index[node])
        return out


def from_nx(
    G,
    edge_attrs=None,
    node_attrs=None,
    preserve_edge_attrs=False,
    preserve_node_attrs=False,
    preserve_graph_attrs=False,
    name=None,
    graph_name=None,
):
    """networkx's convert_from_nx: the weight is the one edge attribute asked for (an edge
    without it weighs its default, 1 for networkx's shortest paths), or none."""
    if isinstance(G, GblaGraph):
        return G
    weight = None
    if edge_attrs:
        if len(edge_attrs) != 1:
            raise NotImplementedError("gbla reads one edge attribute, the weight")
        ((weight, default),) = edge_attrs.items()
        if weight is not None and default not in (1, None):
            raise NotImplementedError(
                f"gbla gives an edge without {weight!r} the weight 1, not {default!r}"
            )
    return GblaGraph(G, weight)
