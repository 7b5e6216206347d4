"""Connected components in the algebra.

Weak (and undirected): every vertex starts with its own id and takes the smallest id among its
neighbours in either direction, t = (f min.first A) min (A min.second f), only the labels that
changed last round propagating (label correcting, as Bellman-Ford); at the end every vertex
holds the smallest vertex of its component.

Strong (trim, then colour; Orzan's colouring as in Slota et al.'s Multistep): vertices with no
in-edge or no out-edge among the unlabelled ones are components of their own (trimmed, round
after round); then each vertex takes the largest id that reaches it (max.first over in-edges,
label correcting), every vertex whose colour is its own id is a root, and the vertices that
reach a root through edges of its colour (a BFS backwards over the edges whose ends share a
colour) are that root's component. Labelled vertices leave, and the colouring repeats.

Labels are numbered 0.. in the order of each component's smallest vertex (SciPy's numbering
for weak components; for strong ones SciPy numbers otherwise, the partition is the same).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _backend as B
from .. import _validation as V
from .. import direction as _direction
from .. import ops, runtime
from ..matrix import as_graph
from ..semirings import any_pair, binary, max_first, min_first, min_second, unary
from ..vector import Vector
from ._relax import policy_of, relax_all

__all__ = ["connected_components"]

CONNECTIONS = ("weak", "strong")


def connected_components(
    A: Any, *, directed: bool = True, connection: str = "weak", direction: Any = "auto"
) -> tuple[int, Any]:
    """The connected components of a graph.

    Parameters
    ----------
    A : Matrix, scipy.sparse or cupyx.scipy.sparse, square
        Entry (i, j) is the edge i -> j; values are ignored.
    directed : bool, default True
        False: edges are undirected (components are weak ones whatever ``connection`` says).
    connection : {'weak', 'strong'}, default 'weak'
        Weak: joined by a path ignoring directions; strong: each reaches the other.
    direction : 'auto', 'push', 'pull' or DirectionPolicy
        How each product runs; the result is the same.

    Returns
    -------
    n_components : int
    labels : int32 array (NumPy or CuPy, the matrix's device)
        labels[v] is v's component, numbered 0.. in the order of each component's smallest
        vertex.

    Raises
    ------
    DimensionMismatch (A not square), InvalidValue (directed, connection, direction),
    DomainMismatch (A not a matrix)

    Examples
    --------
    >>> import gbla
    >>> A = gbla.Matrix.from_edges([0, 1, 3], [1, 0, 2], n=5, device="cpu")
    >>> gbla.connected_components(A)
    (3, array([0, 0, 1, 1, 2], dtype=int32))
    >>> gbla.connected_components(A, connection="strong")
    (4, array([0, 0, 1, 2, 3], dtype=int32))
    """
    A = as_graph(A)
    V.flag(directed, "directed")
    V.one_of(connection, CONNECTIONS, "connection")
    _direction.resolve(direction)
    P = A.pattern()
    if not directed or connection == "weak":
        representative = _weak(P, direction)
    else:
        representative = _strong(P, direction)
    return _numbered(representative.to_dense(-1))


def _ids(n, device):
    """Every vertex, valued by its own id (int64)."""
    return ops.apply(
        Vector.from_dense(B.xp_of(device).zeros(n, np.int64), device=device), unary.rowindex
    )


def _weak(P, direction):
    forward, backward = _direction.start(direction), _direction.start(direction)

    def neighbours_min(f):  # the smallest label among in- and out-neighbours
        return ops.ewise_add(
            ops.vxm(f, P, min_first, direction=forward),
            ops.mxv(P, f, min_second, direction=backward),
            binary.min,
        )

    labels, _, _ = relax_all(
        _ids(P.nrows, P.device),
        neighbours_min,
        cache=P,
        key=("gbla.weak_components", policy_of(forward)),
    )
    return labels


def _strong(P, direction):
    n, device = P.nrows, P.device
    labels = Vector.new(n, np.int64, device=device)
    left = ops.assign(Vector.new(n, bool, device=device), True)  # the unlabelled vertices
    tracker = _direction.start(direction)
    ids = _ids(n, device)  # made once: every round reads it
    while True:
        left, labels = _trim(P, left, labels, tracker, ids)
        if not left.nvals:  # sync: anything left to colour
            return labels
        colour = ops.apply(ids, unary.identity, mask=left.S)
        colour, _, _ = relax_all(
            colour,
            lambda f: ops.vxm(f, P, max_first, mask=left.S, direction=tracker),
            better=binary.gt,
            cache=None,
        )  # the mask changes each round: nothing to keep
        roots = ops.select(ops.ewise_mult(colour, ids, binary.eq), "nonzero")
        # the edges inside one colour, then every vertex that reaches its root through them
        same = ops.select(
            ops.scale(
                ops.scale(P, colour, binary.first, side="left"), colour, binary.eq, side="right"
            ),
            "nonzero",
        )
        reached = _reach_backwards(same, roots, tracker)
        ops.assign(labels, colour, mask=reached.S)
        left = ops.apply(left, unary.identity, mask=~reached.S)


def _trim(P, left, labels, tracker, ids):
    """Label, round after round, the unlabelled vertices with no in-edge or no out-edge from an
    unlabelled vertex: each is a strong component alone (labelled by its id, from ``ids``)."""

    def round_(s, _):
        has_in = ops.vxm(s.left, P, any_pair, mask=s.left.S, direction=tracker)
        has_out = ops.mxv(P, s.left, any_pair, mask=s.left.S, direction=tracker)
        both = ops.ewise_mult(has_in, has_out, binary.land)
        s.trimmed = ops.apply(s.left, unary.identity, mask=~both.S)
        ops.assign(s.labels, ids, mask=s.trimmed.S)
        s.left = ops.apply(s.left, unary.identity, mask=both.S)

    out = runtime.iterate(
        round_,
        {"left": left, "trimmed": left, "labels": labels},
        while_nonempty="trimmed",
        cache=P,
        key=("gbla.strong_trim", policy_of(tracker)),
    )
    return out["left"], out["labels"]


def _reach_backwards(R, roots, tracker):
    """The vertices that reach a root through R's edges (roots included)."""

    def level(s, _):
        s.frontier = ops.mxv(R, s.frontier, any_pair, mask=~s.reached.S, direction=tracker)
        ops.assign(s.reached, True, mask=s.frontier.S)

    start = ops.apply(roots, unary.one)
    start = ops.assign(Vector.new(roots.size, bool, device=roots.device), True, mask=start.S)
    out = runtime.iterate(level, {"frontier": start, "reached": start}, while_nonempty="frontier")
    return out["reached"]


def _numbered(representative):
    """(count, int32 labels) numbering the representatives by their smallest vertex."""
    xp = B.xp_of(B.array_device(representative))
    if representative.size == 0:
        return 0, xp.zeros(0, np.int32)
    _, first, inverse = xp.unique(representative, return_index=True, return_inverse=True)
    rank = xp.empty(len(first), np.int64)
    rank[xp.argsort(first)] = xp.arange(len(first))
    return int(len(first)), rank[inverse.ravel()].astype(np.int32)
