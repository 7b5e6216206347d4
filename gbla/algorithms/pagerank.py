"""PageRank in the algebra: the power iteration networkx's and LAGraph's PageRank run,

    x' = alpha (x ./ d) plus.times A  +  alpha (sum of x over the dangling vertices) dw
         + (1 - alpha) p

with d each vertex's out-weight (its row sum, a product with ones), the dangling vertices those
of out-weight 0, p the personalization and dw the dangling weights (p unless given), until
the L1 change ``sum |x' - x|`` falls below ``n tol``. Each iteration is one iteration of
:func:`gbla.iterate` (on the device when the graph is there): the two sums go through
:class:`gbla.Scalar` s and the loop's test is a one-entry vector that holds the change while it
is still too large, so no value goes back to the host before the end.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .. import _backend as B
from .. import _validation as V
from .. import direction as _direction
from .. import ops, runtime
from ..exceptions import ConvergenceError
from ..matrix import as_graph
from ..scalar import Scalar
from ..semirings import binary, monoid, plus_times, unary
from ..vector import Vector
from ._relax import policy_of

__all__ = ["pagerank"]


def pagerank(
    A: Any,
    *,
    alpha: float = 0.85,
    personalization: Any = None,
    max_iter: int = 100,
    tol: float = 1e-6,
    nstart: Any = None,
    dangling: Any = None,
    weighted: bool = True,
    direction: Any = "auto",
    stats: dict | None = None,
) -> Any:
    """PageRank of every vertex by power iteration (networkx's ``pagerank``, on arrays).

    Parameters
    ----------
    A : Matrix, scipy.sparse or cupyx.scipy.sparse, square
        Entry (i, j) is the edge i -> j, of weight A(i, j) (an undirected graph stores both
        directions). A vertex whose out-weights sum to 0 is dangling: its rank goes to every
        vertex by ``dangling``.
    alpha : float, default 0.85
        The damping factor, in [0, 1].
    personalization : 1-D array of n non-negative numbers, or None
        Where the random surfer restarts, in proportion (normalized here); None: uniformly.
    max_iter : int, default 100
        Iterations at most; not converged by then raises :class:`gbla.ConvergenceError`.
    tol : float, default 1e-6
        Converged when the L1 change of an iteration is below n * tol.
    nstart : 1-D array of n non-negative numbers, or None
        The starting ranks (normalized here); None: 1/n each.
    dangling : 1-D array of n non-negative numbers, or None
        Where a dangling vertex's rank goes, in proportion; None: as ``personalization``.
    weighted : bool, default True
        False: every edge weighs 1 (A's values are ignored).
    direction : 'auto', 'push', 'pull' or DirectionPolicy
        How each product runs; the ranks are the same up to rounding.
    stats : dict or None
        ``stats["iterations"]``: the iterations run, and :func:`gbla.iterate`'s other keys.

    Returns
    -------
    float64 array (NumPy or CuPy, A's device)
        The ranks, summing to 1 (up to the tolerance).

    Raises
    ------
    ConvergenceError
        Not converged within ``max_iter`` iterations (networkx raises
        PowerIterationFailedConvergence).
    InvalidValue
        alpha outside [0, 1], a negative or non-finite tol, a bad max_iter, or a
        personalization, nstart or dangling array that is not n finite non-negative numbers
        with a positive sum.
    DimensionMismatch (A not square), DomainMismatch (A not a matrix)

    Examples
    --------
    >>> import gbla
    >>> A = gbla.Matrix.from_edges([0, 1, 2, 2], [1, 2, 0, 1], n=3, device="cpu")
    >>> gbla.pagerank(A).round(4)
    array([0.2148, 0.3974, 0.3878])
    """
    A = as_graph(A)
    n = A.nrows
    alpha = _real(alpha, "alpha")
    if not 0 <= alpha <= 1:
        raise V.invalid_value("alpha", "be in [0, 1]", alpha)
    tol = _real(tol, "tol")
    if not (np.isfinite(tol) and tol >= 0):
        raise V.invalid_value("tol", "be a finite number >= 0", tol)
    max_iter = V.size(max_iter, "max_iter")
    V.flag(weighted, "weighted")
    _direction.resolve(direction)
    if stats is not None and not isinstance(stats, dict):
        raise V.domain("stats", "be a dict or None", type(stats).__name__)
    xp = B.xp_of(A.device)
    p = _distribution(personalization, n, "personalization", A.device)
    dw = p if dangling is None else _distribution(dangling, n, "dangling", A.device)
    x0 = _distribution(nstart, n, "nstart", A.device)
    if n == 0:
        return xp.zeros(0, np.float64)
    W = A if weighted else A.pattern()
    share, is_dangling = _out_shares(W, direction)
    teleport = ops.apply(p, binary.times, right=1.0 - alpha)
    lost, change = (Scalar.new(np.float64, device=A.device) for _ in range(2))

    def iteration(s, _):
        y = ops.vxm(ops.ewise_mult(s.x, s.share, binary.times), W, plus_times, direction=direction)
        ops.reduce(ops.apply(s.x, unary.identity, mask=s.dangling.S), monoid.plus, out=lost)
        x = ops.ewise_add(
            ops.apply(y, binary.times, right=alpha),
            ops.apply(ops.apply(s.dw, binary.times, right=lost), binary.times, right=alpha),
            binary.plus,
        )
        x = ops.ewise_add(x, s.teleport, binary.plus)
        ops.reduce(
            ops.apply(ops.ewise_add(x, s.x, binary.minus), unary.abs), monoid.plus, out=change
        )
        ops.assign(s.going, change)
        s.going = ops.select(s.going, ">=", n * tol)  # networkx stops once change < n tol
        s.x = x

    # what differs between two calls on one matrix is the state (the start, the personalization
    # and the dangling weights) or in the key: the recording is kept with the matrix
    state = {
        "x": x0,
        "going": Vector.from_dense(xp.ones(1), device=A.device),
        "share": share,
        "dangling": is_dangling,
        "teleport": teleport,
        "dw": dw,
    }
    run = {}
    out = runtime.iterate(
        iteration,
        state,
        while_nonempty="going",
        max_iterations=max_iter,
        cache=W,
        key=("gbla.pagerank", alpha, n * tol, policy_of(direction)),
        stats=run,
        keep=("x", "going"),
    )
    if stats is not None:
        stats.update(run)
    if out["going"].nvals:  # sync: whether the last change was still too large
        raise ConvergenceError(
            f"pagerank did not converge to tol={tol} in max_iter={max_iter} iterations", max_iter
        )
    return out["x"].to_dense(0.0)


def _out_shares(W, direction):
    """(1 / out-weight at each vertex that has one, the dangling vertices): W's row sums, a
    product with ones (a row without an entry gives none), found once a matrix."""
    key = "pagerank_shares"
    if key not in W._cache:
        n, device = W.nrows, W.device
        ones = Vector.from_dense(B.xp_of(device).ones(n), device=device)
        linked = ops.select(ops.mxv(W, ones, plus_times, direction=direction), "!=", 0)
        W._cache[key] = (
            ops.apply(linked, binary.div, left=1.0),
            ops.assign(Vector.new(n, bool, device=device), True, mask=~linked.S),
        )
    return W._cache[key]


def _real(value, arg):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise V.invalid_value(arg, "be a real number", value)
    return float(value)


def _distribution(values, n, arg, device):
    """``values`` (n finite non-negative numbers, positive sum) scaled to sum to 1, as a dense
    float64 Vector on ``device``; None: 1/n each."""
    if values is None:
        return Vector.from_dense(B.xp_of(device).full(n, 1.0 / max(n, 1)), device=device)
    a = np.asarray(B.to_host(values) if B.array_device(values) == "gpu" else values)
    if a.ndim != 1 or len(a) != n:
        raise V.invalid_value(arg, f"be a 1-D array of n = {n} numbers", f"shape {a.shape}")
    if a.dtype.kind not in "biuf":
        raise V.invalid_value(arg, "hold numbers", f"dtype {a.dtype.name}")
    a = a.astype(np.float64)
    if not np.isfinite(a).all() or (a < 0).any():
        raise V.invalid_value(
            arg, "hold finite non-negative numbers", float(a[~(np.isfinite(a) & (a >= 0))][0])
        )
    total = a.sum()
    if n and not total > 0:
        raise V.invalid_value(arg, "have a positive sum", float(total))
    return Vector.from_dense(a / total if n else a, device=device)
