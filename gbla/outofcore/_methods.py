"""The out-of-core traversals as methods of gbla.bfs and gbla.sssp (``out_of_core_bfs``,
``out_of_core_sssp``), which those pick when a ``memory_budget`` is given: the matrix stays in
host memory (pinned when a GPU runs the search) and the search keeps within the budget on the
GPU, or runs the same schedule with NumPy as the device where there is none; and how the
algebraic methods take a budget: on a :class:`~.host_matrix.HostMatrix`."""

import numpy as np

from .. import methods
from .host_matrix import HostMatrix, budget_bytes, host_graph
from .traverse import HostGraph, bfs, sssp

__all__ = []


def _prepare(A, memory_budget):
    """(the host graph, kept with A, the array module of the device, the budget in bytes).
    The matrix is a CPU one (the registry refuses the others): it stays in host memory."""
    graph, xp = host_graph(A)
    return graph, xp, budget_bytes(memory_budget, xp)


def _on_host(a):
    return a.get() if hasattr(a, "get") else a  # sync: the result to the host


def _run_bfs(A, source, *, return_parents, depth_limit, direction, stats, memory_budget):
    graph, xp, budget = _prepare(A, memory_budget)
    out = bfs(
        graph,
        source,
        memory_budget=budget,
        return_parents=return_parents,
        depth_limit=depth_limit,
        xp=xp,
        stats=stats,
    )
    if return_parents:
        levels, parents = out
        return _on_host(levels), _on_host(parents).astype(np.int32)
    return _on_host(out)


def _run_sssp(A, source, *, dtype, return_predecessors, direction, stats, memory_budget):
    graph, xp, budget = _prepare(A, memory_budget)
    dist = _on_host(sssp(graph, source, memory_budget=budget, dtype=dtype, xp=xp, stats=stats))
    if not return_predecessors:
        return dist
    # a BFS tree over the tight edges (d[u] + w == d[v] in the distances' dtype): no cycle of
    # predecessors through zero-weight edges
    rows = np.repeat(np.arange(graph.n), graph.degrees)
    w = np.ones(len(graph.indices), dtype) if graph.values is None else graph.values.astype(dtype)
    with np.errstate(invalid="ignore"):
        tight = np.isfinite(dist[rows]) & (dist[rows] + w == dist[graph.indices])
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows[tight], minlength=graph.n))])
    tree = HostGraph(indptr, graph.indices[tight])
    _, parents = bfs(tree, source, memory_budget=budget, return_parents=True, xp=np)
    return dist, parents.astype(np.int32)


methods.register(
    methods.Method(
        "out_of_core_bfs",
        "bfs",
        "the graph in host memory, cut into L2-sized subgraphs; each "
        "level sends what the differential schedule chooses within memory_budget; a level's "
        "frontier edges are gathered on the device as source and target lists beside the "
        "budget (about 6x the graph on R-MAT with NumPy as the device)",
        _run_bfs,
        devices=("cpu",),
        options=("memory_budget",),
        max_index=methods.INT32_MAX - 1,
    )
)
methods.register(
    methods.Method(
        "out_of_core_sssp",
        "sssp",
        "the graph in host memory, cut into L2-sized subgraphs; "
        "buckets of width delta (Bellman-Ford with a negative weight) within memory_budget; an "
        "iteration's edges are gathered on the device as source and target lists and their "
        "weights beside the budget (about 6x the graph on R-MAT with NumPy as the device)",
        _run_sssp,
        devices=("cpu",),
        options=("memory_budget",),
        negative_weights=True,
        max_index=methods.INT32_MAX - 1,
    )
)

# the algebraic methods given a memory_budget run on the matrix kept in host memory
methods.set_host_matrix(lambda A, memory_budget: HostMatrix(A, memory_budget))
