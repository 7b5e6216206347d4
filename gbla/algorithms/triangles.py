"""Triangles in the algebra, and the clustering they measure: each vertex's count, from the masked
product of the undirected graph's pattern with itself,

    C<P.S> = P plus.pair P      (C(i, j): the common neighbours of i and j, for each edge)

whose row sums count every triangle at i twice (once from each of its two edges at i); P is
the graph without self-loops, directions dropped (P or its transpose). The product computes
only the mask's positions. A vertex's degree is its row sum of P (its neighbours, itself
aside), and its clustering coefficient its triangles over the pairs of its neighbours.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _backend as B
from .. import _validation as V
from .. import ops
from ..matrix import as_graph
from ..semirings import binary, monoid, plus_pair

__all__ = ["triangles", "clustering", "transitivity"]


def triangles(A: Any, *, direction: Any = "auto") -> Any:
    """The number of triangles at every vertex of the undirected graph of A (networkx's
    ``triangles``): the pairs of its neighbours that are neighbours of each other.

    Parameters
    ----------
    A : Matrix, scipy.sparse or cupyx.scipy.sparse, square
        Entry (i, j) is an edge between i and j, whatever its direction and value (a directed
        A is read as undirected: i and j are neighbours when either entry exists); self-loops
        are ignored.
    direction : 'auto', 'push' or 'pull'
        How the masked product runs (``gbla.mxm``); the counts are the same.

    Returns
    -------
    int64 array (NumPy or CuPy, A's device)
        counts[v]; ``counts.sum() // 3`` is the number of triangles in the graph.

    Raises
    ------
    DimensionMismatch (A not square), DomainMismatch (A not a matrix), InvalidValue (direction)

    Examples
    --------
    >>> import gbla
    >>> A = gbla.Matrix.from_edges([0, 0, 1, 2], [1, 2, 2, 3], n=5, device="cpu")
    >>> gbla.triangles(A)
    array([1, 1, 1, 0, 0])
    """
    twice, _ = _twice_and_degrees(A, direction)
    return twice // 2  # each triangle at v was met from both of its edges at v


def clustering(A: Any, *, direction: Any = "auto") -> Any:
    """Each vertex's clustering coefficient in the undirected graph of A (networkx's unweighted
    ``clustering``): its triangles over the pairs of its neighbours, 2 t(v) / (d(v) (d(v) -
    1)), d(v) its neighbours but itself; 0 where it has no triangle.

    Parameters and Raises as :func:`triangles`.

    Returns
    -------
    float64 array (NumPy or CuPy, A's device)

    Examples
    --------
    >>> import gbla
    >>> A = gbla.Matrix.from_edges([0, 0, 1, 2], [1, 2, 2, 3], n=5, device="cpu")
    >>> gbla.clustering(A)
    array([1.        , 1.        , 0.33333333, 0.        , 0.        ])
    """
    twice, degrees = _twice_and_degrees(A, direction)
    xp = B.xp_of(B.array_device(twice))
    pairs = degrees * (degrees - 1)
    return xp.where(twice > 0, twice / xp.maximum(pairs, 1), 0.0)


def transitivity(A: Any, *, direction: Any = "auto") -> float:
    """The fraction of connected triples of the undirected graph of A that are triangles,
    3 x triangles / triples (networkx's ``transitivity``); 0.0 without a triangle.

    Parameters and Raises as :func:`triangles`.

    Returns
    -------
    float

    Examples
    --------
    >>> import gbla
    >>> A = gbla.Matrix.from_edges([0, 0, 1, 2], [1, 2, 2, 3], n=5, device="cpu")
    >>> gbla.transitivity(A)
    0.6
    """
    twice, degrees = _twice_and_degrees(A, direction)
    closed = int(twice.sum())  # sync: two sums
    return 0.0 if closed == 0 else closed / int((degrees * (degrees - 1)).sum())


def _twice_and_degrees(A, direction):
    """(each vertex's triangles counted twice, its degree), int64 arrays, of the undirected
    graph of A without self-loops."""
    A = as_graph(A)
    V.one_of(direction, ("auto", "push", "pull"), "direction")
    P = A.pattern()
    if not P.is_symmetric:  # sync on the GPU: the undirected graph, both directions
        P = ops.ewise_add(P, P.T, binary.lor)
    # counted in int64 (plus.pair takes no bool): a hub's count may pass 2**31
    P = ops.select(P, "offdiag").astype(np.int64)
    common = ops.mxm(P, P, plus_pair, mask=P.S, direction=direction)
    twice = ops.reduce_rowwise(common, monoid.plus).to_dense(0)
    return twice, ops.reduce_rowwise(P, monoid.plus).to_dense(0)
