"""BFS and Bellman-Ford over a :class:`~.matrix.DistMatrix`, as the algebra writes them: one
distributed ``vxm`` a level (any.pair for levels, any.secondi for parents, min.plus for
distances), each rank keeping its range of the results, a sum over the ranks deciding when to
stop, and the whole result gathered on every rank at the end. Collective: every rank calls
them with the same arguments.

``stats={}`` receives, on every rank, the traversal's communication level by level:
``directions`` (push or pull), ``found`` (vertices the level reached or lowered, over every
rank), ``bytes`` (payload bytes every rank together sent in the level: the products of a push,
the frontier gathered for a pull, the one sum of the new frontier's size and out-edges that
decides both the next direction and the end; the first level also counts the source's) and
``collectives`` (calls a rank made in the level), with ``bytes_total``: what a model of a
bigger machine starts from (see benchmarks/bench_distributed_volume.py); and ``seconds``, this
rank's wall time of each level (a level ends in a sum read on the host, so its device work is
done; the first level includes the start; for the bitmap BFS's levels run on the device, the
device's clock from a level's choice of direction to its sum)."""

import time

import numpy as np

from .. import _backend as B
from .. import _validation as V
from .. import direction as _direction
from ..semirings import any_pair, any_secondi, min_plus
from .matrix import frontier_counts, vxm

__all__ = ["bfs", "sssp"]


def _result(A, local, gather):
    """A traversal's result: whole on every rank (``gather``), or this rank's range of it."""
    return A.gather(local) if gather else local


class _Levels:
    """What each level of a traversal sent, for ``stats``."""

    def __init__(self, A, steps):
        self.A, self.steps = A, steps
        self.directions, self.found, self.bytes, self.collectives = [], [], [], []
        self.seconds = []

    def start(self):
        self.bytes0, self.calls0 = self.A.comm.bytes_sent, self.A.comm.collectives
        self.t0 = time.perf_counter()

    def end(self, found):
        # the level's sum was read on the host (a sync): its device work is done
        self.seconds.append(time.perf_counter() - self.t0)
        steps = self.steps
        self.directions.append(
            steps.last if isinstance(steps, _direction.DirectionTracker) else steps
        )
        self.found.append(int(found))
        self.bytes.append(self.A.comm.bytes_sent - self.bytes0)
        self.collectives.append(self.A.comm.collectives - self.calls0)

    def add(self, direction, found, sent, collectives, seconds):
        """A level that ran where the host did not see it (the bitmap BFS's device loop): its
        direction, vertices found, bytes this rank sent, collectives and time."""
        self.directions.append(direction)
        self.found.append(found)
        self.bytes.append(sent)
        self.collectives.append(collectives)
        self.seconds.append(seconds)

    def report(self, stats):
        """The levels into ``stats``, bytes summed over the ranks (one more collective, after
        the traversal)."""
        if stats is None:
            return
        per_level = []
        if self.bytes:  # every rank ran the same levels: one sum of its bytes of each
            mine = self.A.comm.xp.asarray(np.asarray(self.bytes, np.int64))
            per_level = self.A.comm.allreduce_sums(mine)
        stats.update(
            directions=self.directions,
            found=self.found,
            bytes=per_level,
            collectives=self.collectives,
            bytes_total=sum(per_level),
            seconds=self.seconds,
        )


def bfs(
    A,
    source,
    *,
    return_predecessors=False,
    depth_limit=None,
    direction="auto",
    stats=None,
    gather=True,
):
    """Levels (int32, -1 unreached) and, when asked, parents (int64, parents[source] ==
    source) from ``source``, whole on every rank (``gather=False``: each rank those of its
    vertices, A.lo to A.hi); ``direction`` as for :func:`gbla.bfs` (a policy chooses push or
    pull per level, from the whole frontier); ``stats`` as the module says."""
    xp, n = A.comm.xp, A.n
    source = V.source(source, n)
    gather = V.flag(gather, "gather")
    mine = A.lo <= source < A.hi
    levels = xp.full(A.hi - A.lo, -1, np.int32)
    parents = xp.full(A.hi - A.lo, -1, np.int64) if return_predecessors else None
    ids = [source] if mine else []
    if mine:
        levels[source - A.lo] = 0
        if parents is not None:
            parents[source - A.lo] = source
    q = A.vector(np.array(ids, np.int64), np.array([source] * len(ids), np.int64))
    semiring = any_secondi if return_predecessors else any_pair
    steps = _direction.start(direction)
    log = _Levels(A, steps)
    log.start()
    counts = frontier_counts(q, A)  # each frontier counted once: the direction and the end
    depth = 0
    allow = levels == -1  # kept as the levels fill (not made anew over the range a level)
    while depth_limit is None or depth < depth_limit:
        depth += 1
        q = vxm(q, A, semiring, allow=allow, direction=steps, frontier=counts)
        found = q.indices - A.lo
        levels[found] = depth
        allow[found] = False
        if parents is not None:
            parents[found] = q.values
        counts = frontier_counts(q, A)  # sync: anything found anywhere
        log.end(counts[0])
        if counts[0] == 0:
            break
        log.start()
    log.report(stats)
    if parents is None:
        return _result(A, levels, gather)
    return _result(A, levels, gather), _result(A, parents, gather)


METHODS = ("bellman_ford", "delta_stepping")


def sssp(
    A,
    source,
    *,
    return_predecessors=False,
    dtype=np.float64,
    method="bellman_ford",
    delta=None,
    direction="auto",
    stats=None,
):
    """Distances (``dtype``, inf unreached) from ``source`` on every rank, and with
    ``return_predecessors`` a shortest-path tree (int64, pred[source] == source, -1
    unreached): a BFS over the tight edges (d(u) + w(u, v) == d(v), summed as the search
    sums), so that zero-weight cycles close no loop.

    ``method`` 'bellman_ford': each round only the vertices whose distance fell push; a
    distance still falling in round n raises NegativeCycleError on every rank.
    'delta_stepping' (non-negative weights; near-far form, as gbla.sssp's): a round pushes
    only the pending vertices (those whose distance fell since they last pushed) within
    ``delta`` of the nearest pending one over every rank (None: the weights'
    ``bucket_width``), so a vertex mostly pushes once its distance is final: fewer
    relaxations sent between ranks than Bellman-Ford's, in more rounds. Either way every
    push is combined per target on its sender before it leaves (one product per target and
    rank). ``stats`` as the module says (a level is a round)."""
    xp, n = A.comm.xp, A.n
    source = V.source(source, n)
    dtype = np.dtype(dtype)
    V.one_of(method, METHODS, "method")
    V.flag(return_predecessors, "return_predecessors")
    if method == "delta_stepping":
        width = _width(A, delta)
    elif delta is not None:
        raise V.invalid_value("delta", "be None with method='bellman_ford'", delta)
    dist = xp.full(A.hi - A.lo, np.inf, dtype)
    mine = A.lo <= source < A.hi
    if mine:
        dist[source - A.lo] = 0
    start = A.vector(np.array([source] if mine else [], np.int64), np.zeros(int(mine), dtype))
    steps = _direction.start(direction)
    log = _Levels(A, steps)
    if method == "delta_stepping":
        _delta_rounds(A, start, dist, width, steps, log)
    else:
        _bellman_ford_rounds(A, start, dist, steps, log)
    log.report(stats)
    dist = A.gather(dist)
    if not return_predecessors:
        return dist
    return dist, _tree(A, source, dist)


def _tree(A, source, dist, dtype=None):
    """Parents of a BFS from ``source`` over the tight edges of A, given the whole ``dist`` on
    every rank: d(u) + w(u, v) summed in ``dtype`` (None: the product's, as ``_lower`` keeps
    them), cast to the distances', equal to d(v). Collective."""
    xp = A.comm.xp
    reached = xp.isfinite(dist)
    if dtype is None:  # the dtype a min.plus product of the distances with A's weights takes
        dtype = dist.dtype if A.values is None else np.result_type(dist.dtype, A.values.dtype)

    def plus(d, w):
        return (d.astype(dtype) + w.astype(dtype)).astype(dist.dtype)

    sums = A.scaled(dist, reached, plus, "left")
    tight = sums.scaled(dist, reached, lambda d, s: s == d, "right")
    _, parents = bfs(tight.keep_entries(lambda kept: kept), source, return_predecessors=True)
    return parents


def _lower(A, t, dist):
    """The entries of the product ``t`` (this rank's range) below their distance, written
    into ``dist``: (their ids, their new distances)."""
    better = t.values < dist[t.indices - A.lo]
    ids, values = t.indices[better], t.values[better].astype(dist.dtype)
    dist[ids - A.lo] = values
    return ids, values


def _bellman_ford_rounds(A, frontier, dist, steps, log):
    n = A.n
    log.start()
    counts = frontier_counts(frontier, A)
    rounds = 0
    while counts[0]:  # sync: anything fell anywhere
        rounds += 1
        if rounds > n:
            raise V.negative_cycle(n)
        t = vxm(frontier, A, min_plus, direction=steps, frontier=counts)
        frontier = A.vector(*_lower(A, t, dist))
        counts = frontier_counts(frontier, A)
        log.end(counts[0])
        log.start()


def _width(A, delta):
    """Delta-stepping's window width: ``delta`` checked, or the weights' default; every
    weight must be non-negative."""
    facts = A.weights
    if facts.bad is not None:
        raise V.invalid_value("A", "hold no NaN or -inf weight", facts.bad)
    if facts.lowest < 0:
        raise V.invalid_value(
            "A", "hold no negative weight with method='delta_stepping'", facts.lowest
        )
    if delta is None:
        return A.weights.bucket_width(A.nvals, A.n)
    return V.positive_finite(delta, "delta")


# The window's front, counted for the direction (push or pull) without a collective of its
# own: every rank adds to the round's all-gather its pending vertices and their out-edges in
# BINS bins a quarter of the width wide from the last round's nearest distance (no pending
# distance is below it), and the bins below the new window's end stand for the front.
BINS = 32


def _delta_rounds(A, start, dist, width, steps, log):
    """Near-far rounds: pending ids (this rank's, no repeats, ``queued`` marking them); one
    all-gather a round of each rank's pending count, nearest pending distance, vertices the
    last round lowered and pending histogram (:data:`BINS`) decides the window, the end and
    the direction, and closes the last round's level; the window's front then pushes (or
    pulls) as Bellman-Ford's frontier does. Two collectives a round, as Bellman-Ford's."""
    xp, lo = A.comm.xp, A.lo
    pending = start.indices
    queued = xp.zeros(A.hi - A.lo, bool)
    queued[pending - lo] = True
    lowered, first, base, step = 0, True, 0.0, width / 4
    log.start()
    while True:
        rows = pending - lo
        near = dist[rows]
        head = xp.asarray([float(len(pending)), np.inf, float(lowered)], np.float64)
        if len(near):  # the nearest pending distance, written where it is (no sync)
            head[1] = near.min()
        degrees = (A.indptr[rows + 1] - A.indptr[rows]).astype(np.float64)
        bins = xp.clip(xp.floor((near.astype(np.float64) - base) / step), 0, BINS)
        bins = bins.astype(np.int64)
        mine = xp.concatenate(
            [
                head,
                xp.bincount(bins, minlength=BINS + 1).astype(np.float64),
                xp.bincount(bins, weights=degrees, minlength=BINS + 1).astype(np.float64),
            ]
        )
        every = np.stack([B.to_host(x) for x in A.comm.allgather(mine)])  # sync
        if not first:
            log.end(every[:, 2].sum())
            log.start()
        first = False
        if not every[:, 0].sum():
            break
        nearest = float(every[:, 1].min())
        # at least the nearest pending distance (it is in the front): the loop moves on
        with np.errstate(over="ignore"):  # a window past the dtype's range: +inf
            end = dist.dtype.type(nearest + width)
        # the bins that begin at or below the end: the front, give or take a bin
        span = (float(end) - base) / step  # inf where the end overflows
        below = BINS + 1 if not span < BINS else int(np.floor(span)) + 1
        counts = every[:, 3 : 3 + BINS + 1].sum(axis=0)
        edges = every[:, 4 + BINS :].sum(axis=0)
        front_counts = (int(counts[:below].sum()), int(edges[:below].sum()))
        base = nearest  # what the next round's pending distances are all at least
        take = near <= end
        front = xp.sort(pending[take])
        pending = pending[~take]
        queued[front - lo] = False
        front_vector = A.vector(front, dist[front - lo])
        t = vxm(front_vector, A, min_plus, direction=steps, frontier=front_counts)
        ids, _ = _lower(A, t, dist)
        new = ids[~queued[ids - lo]]  # those still pending are there already
        queued[new - lo] = True
        pending = xp.concatenate([pending, new])
        lowered = len(ids)
