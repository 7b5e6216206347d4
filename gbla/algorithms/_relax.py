"""Label correcting in the algebra, shared by Bellman-Ford and the component labellings: each
round multiplies only the entries that changed in the last one,

    t = product(f) ;  f = improve(d, t)   (t where better(t, d) or d has no entry, written
                                          into d: gbla.ops.improve, one op; with the
                                          product, gbla.ops.relax)

one round an iteration of gbla.iterate (so on the device when the matrix is there)."""

from .. import direction as _direction
from .. import ops, runtime
from ..semirings import binary

# The rule direction='auto' means for the algebra's relaxation rounds (Bellman-Ford,
# delta-stepping, the BFS levels of 'algebraic_relax': gbla.algorithms.sssp and bfs take it
# from here): each round decided alone, pull when its frontier's out-edges reach 1 /
# RELAXATION_ALPHA of every stored edge ((min, +) has a terminal, -inf, so the rule reads
# alpha, and alpha_no_exit is set alike). GAP's rule (DEFAULT_POLICY) spends its count of
# unexplored edges on a relaxation's rounds, which reach a vertex again and again, and then
# pulls every other round. 32 was the fastest of 2, 8, 32 and 128 on an H200, against GAP's
# rule: Bellman-Ford 0.97x (USA-road-NE) and 0.96x (FLA), delta-stepping 0.85x and 0.88x, R-MAT
# 20 and 22 within noise (benchmarks/results/ab/sssp_algebra_relaxation_policy_alpha_h200.log).
# A round that relaxes more than one hop pushes wherever its product walks the frontier itself
# (kernels/_spmv.py's device_product), whatever this rule says.
RELAXATION_ALPHA = 32.0
RELAXATION_POLICY = _direction.DirectionPolicy(
    alpha=RELAXATION_ALPHA, alpha_no_exit=RELAXATION_ALPHA, memory=False
)


def relax(dist, frontier, A, semiring, better, direction, also=None, window=None, hops=1):
    """d = better-of(d, frontier (+).(x) A): :func:`gbla.ops.relax` (with ``also``'s entries
    joining what changed, and only the frontier's entries within ``window`` expanded, up to
    ``hops`` edges deep)."""
    return ops.relax(
        dist,
        frontier,
        A,
        semiring,
        better,
        direction=direction,
        also=also,
        window=window,
        hops=hops,
    )


def relax_all(
    start,
    product=None,
    *,
    step=None,
    better=binary.lt,
    frontier=None,
    max_iterations=None,
    cache=None,
    key=None,
    stats=None,
    fuse=None,
):
    """Rounds of ``ops.improve(d, product(f), better)`` from ``start`` (the values, and
    the first frontier unless ``frontier`` is given) until nothing improves or
    ``max_iterations``; returns (the values, the last frontier, the rounds run). With ``cache``
    (a Matrix), the recording is kept there under ``key``, which must name everything
    ``product`` depends on besides that matrix. ``step(d, f)``, where given instead of
    ``product``, is the round itself (say :func:`gbla.ops.relax`, the product and its
    improve in one op): it writes d and returns what changed. ``fuse`` as
    :func:`gbla.iterate` takes it."""
    if step is None:

        def step(d, f):
            return ops.improve(d, product(f), better)

    def round_(s, _):
        s.frontier = step(s.dist, s.frontier)

    run = {}
    out = runtime.iterate(
        round_,
        {"dist": start, "frontier": start if frontier is None else frontier},
        while_nonempty="frontier",
        max_iterations=max_iterations,
        cache=cache,
        key=(key, better.name),
        stats=run,
        fuse=fuse,
    )
    if stats is not None:
        stats.update(run)
    return out["dist"], out["frontier"], run["iterations"]


def policy_of(tracker):
    """What a tracker's recording depends on: its policy (a fixed direction is itself)."""
    return tracker.policy if isinstance(tracker, _direction.DirectionTracker) else tracker


__all__ = ["relax", "relax_all", "policy_of", "RELAXATION_ALPHA", "RELAXATION_POLICY"]
