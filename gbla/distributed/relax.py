"""Bellman-Ford over a :class:`~.matrix.DistMatrix` with hand-written steps: each rank relaxes
the out-edges of its frontier with atomicMin into a distance array over every vertex, and sends
each remote vertex it lowered, once a round, to its owner. gbla/kernels/distributed.cu's
kernels on GPU ranks (:class:`gbla.kernels._distributed.DeviceRelax`: a block's frontier rows
at a time, their edges spread over its threads; a hub's over the grid), :class:`HostRelax`
(NumPy) on CPU ranks, the same interface.

Each rank keeps ``dist``, a distance for each of the n vertices: its own range [lo, hi) holds
its vertices' distances; every other vertex holds the lowest offer this rank has made it. Its
owner's distance is at most that, so an offer no lower is never made again: the offers are
combined per target within a round (one a vertex) and across rounds. A round:

1. relax: every vertex of the frontier offers dist(u) + w(u, v) to each out-neighbour v;
   whatever an offer lowers, this rank's or not, gets its bit set in ``changed`` (a bitmap over
   all n vertices);
2. each other rank's set bits are packed as (offset in its range, distance) and counted, this
   rank's own counted; one ``allreduce_sums`` of the counts (a p x p table: what each rank sends
   each) tells every rank what it receives and whether anything moved anywhere (else the search
   is over): the round's one synchronisation;
3. one all-to-all of the packed offers; each rank applies what it received (an offer that lowers
   sets the vertex's bit) and lists its set bits as the next frontier.

A distance still falling after n rounds proves a negative cycle (NegativeCycleError on every
rank). Collective: every rank calls :func:`push_sssp` with the same arguments.
"""

import numpy as np

from .. import _validation as V
from .. import direction as _direction
from .._storage import expand_rows
from ..kernels._distributed import DeviceRelax
from .bitmap import _assembled, _bits, _range_mask, _span, _test
from .matrix import _pack, _unpack
from .traverse import _Levels, _result, _tree

__all__ = ["push_sssp", "HostRelax"]

REALS = (np.dtype(np.float32), np.dtype(np.float64))


class HostRelax:
    """A rank's steps of a round with NumPy: what :class:`~gbla.kernels._distributed.DeviceRelax`
    computes on the GPU (the same interface). ``lo``, ``hi``: the rank's range; ``indptr``,
    ``indices``: its rows (global column ids); ``weights``: of the distances' dtype, or None
    (each edge weighs 1); ``transpose``: ``(t_indptr, t_indices, t_weights)``, the same rows of
    A.T, for the pull (None: push only). Where a kernel's offers read distances as other offers
    lower them, these read them all first: the same distances in the end, maybe in other
    rounds."""

    def __init__(self, lo, hi, indptr, indices, weights, dtype, transpose=None):
        self.lo, self.hi = lo, hi
        self.indptr, self.indices, self.weights = indptr, indices, weights
        self.dtype = np.dtype(dtype)
        self.transpose = transpose

    def relax(self, queue, count, bound, dist, changed):
        """Offers along the out-edges of ``queue[:count]`` (local offsets). (``bound``, at
        least the count, sizes the device's grid.)"""
        rows = queue[: int(count)].astype(np.int64)
        edge, row = expand_rows(self.indptr, rows, np)
        w = self.dtype.type(1) if self.weights is None else self.weights[edge]
        self._offer(
            self.indices[edge].astype(np.int64), dist[self.lo + rows[row]] + w, dist, changed
        )

    def pull(self, frontier, dist, changed):
        """Each vertex of the range takes the lowest offer of its in-neighbours in
        ``frontier`` (a bitmap over all n, their distances in ``dist``) where it is lower."""
        t_indptr, t_indices, t_weights = self.transpose
        edge, row = expand_rows(t_indptr, np.arange(self.hi - self.lo), np)
        u = t_indices[edge].astype(np.int64)
        held = _test(frontier, u)
        edge, row, u = edge[held], row[held], u[held]
        w = self.dtype.type(1) if t_weights is None else t_weights[edge]
        self._offer(self.lo + row, dist[u] + w, dist, changed)

    def pack(self, changed, lo, hi, dist, offsets, values, tally, clear, degrees=False):
        """The set bits of ``changed`` in [lo, hi), counted into ``tally[0]`` (uint64, from its
        value on); with ``offsets``, listed there (from lo) and their distances in ``values``
        (or None); with ``degrees`` (this rank's range only), their out-edges added to
        ``tally[1]``; with ``clear``, cleared."""
        if hi <= lo:
            return
        w0, end = _span(lo, hi)
        words = changed[w0:end] & _range_mask(lo, hi)
        bits = (words[:, None] >> np.arange(32, dtype=np.uint32)) & np.uint32(1)
        ids = np.flatnonzero(bits.ravel()) + (w0 << 5)  # ascending
        at = int(tally[0])
        if offsets is not None:
            offsets[at : at + len(ids)] = ids - lo
            if values is not None:
                values[at : at + len(ids)] = dist[ids]
        tally[0] += len(ids)
        if degrees:
            tally[1] += int((self.indptr[ids - lo + 1] - self.indptr[ids - lo]).sum())
        if clear:
            changed[w0:end] &= ~words

    def apply(self, offsets, values, dist, changed):
        """Offers another rank sent this one's vertices (int32 offsets from lo, distances)."""
        self._offer(self.lo + offsets.astype(np.int64), values, dist, changed)

    @staticmethod
    def _offer(v, candidates, dist, changed):
        """The lowest offer to each of ``v`` taken where it is lower; their bits set."""
        before = dist[v]
        np.minimum.at(dist, v, candidates)
        lowered = v[candidates < before]
        np.bitwise_or.at(changed, lowered >> 5, _bits(lowered))


def _real(dtype):
    """The distances' dtype: float32 or float64."""
    try:
        d = np.dtype(dtype) if dtype is not None else None
    except TypeError:
        d = None
    if d is None or d not in REALS:  # (a dtype equals None: NumPy reads None as float64)
        raise V.invalid_value("dtype", "be float32 or float64", dtype)
    return d


def _weights(A, dtype):
    """(A as searched, its weights as ``dtype`` or None for weight 1 an edge, its transpose's
    rows with their weights so cast, or None where A keeps none): a bool matrix weighs 1 an
    edge (an explicit False included); NaN and -inf raise. The casts are kept with A."""
    if A.dtype == np.bool_:
        A = A.pattern()
    if A.values is not None and A.weights.bad is not None:
        raise V.invalid_value("A", "hold no NaN or -inf weight", A.weights.bad)

    def cast(values, name):
        if values is None or values.dtype == dtype:
            return values
        key = (name, dtype.name)
        if key not in A._cache:
            A._cache[key] = values.astype(dtype)
        return A._cache[key]

    t = A.transpose
    if t is not None:
        t = (t[0], t[1], cast(t[2], "push_sssp_transpose_weights"))
    return A, cast(A.values, "push_sssp_weights"), t


def push_sssp(
    A,
    source,
    *,
    return_predecessors=False,
    dtype=np.float64,
    direction="auto",
    stats=None,
    gather=True,
):
    """Distances (``dtype``: float32 or float64, inf unreached; each sum d(u) + w(u, v) in it,
    the weights cast to it) from ``source``, whole on every rank (``gather=False``: each rank
    those of its vertices, A.lo to A.hi), and with ``return_predecessors`` a shortest-path tree
    (int64, pred[source] == source, -1 unreached; whole on every rank): a BFS over the tight
    edges, as :func:`gbla.distributed.sssp`'s. Any weights, negative ones included (a negative
    cycle reachable from the source raises NegativeCycleError on every rank).

    ``direction``: 'push', 'pull', 'auto' or a DirectionPolicy (gbla.direction's rule, the
    round's frontier and its out-edges summed over the ranks: a pull reads every in-edge, as
    one that cannot stop early). A pull round gathers every rank's frontier bits and
    distances (n / 8 + n x the dtype's size bytes in all) and each rank's vertices take the
    lowest offer of their in-neighbours in it: no offers travel, and every rank learns every
    distance (so it offers no vertex what it already has). ``stats`` as
    gbla.distributed.traverse says (a level is a round; ``found``: the vertices whose distance
    fell in it, over every rank)."""
    comm, xp, n = A.comm, A.comm.xp, A.n
    source = V.source(source, n)
    dtype = _real(dtype)
    V.flag(return_predecessors, "return_predecessors")
    gather = V.flag(gather, "gather")
    steps = _direction.start(direction)
    A, weights, transpose = _weights(A, dtype)
    if transpose is None and steps != "push":
        if steps == "pull":
            raise V.invalid_value(
                "direction", "be 'push' or 'auto' for a matrix without its transpose", direction
            )
        steps = "push"
    kind = HostRelax if xp is np else DeviceRelax
    relax = kind(A.lo, A.hi, A.indptr, A.indices, weights, dtype, transpose)
    me, p, bounds = comm.rank, comm.size, [int(b) for b in A.bounds]
    spans = [_span(bounds[r], bounds[r + 1]) for r in range(p)]
    w0, w1 = spans[me]
    dist = xp.full(n, np.inf, dtype)
    changed = xp.zeros((n + 31) >> 5, np.uint32)
    front = xp.zeros(w1 - w0, np.uint32)  # this rank's words of the frontier (for a pull)
    frontier = None  # every rank's, gathered (made by the first pull)
    queue = xp.empty(max(A.hi - A.lo, 1), np.int32)
    # what this rank offers rank d's vertices, at [bounds[d], bounds[d + 1]) (room for each)
    offsets, values = xp.empty(max(n, 1), np.int32), xp.empty(max(n, 1), dtype)
    # the offers to each rank (this one's own: counted, not listed), then the next frontier's
    # size and out-edges here
    tally = xp.zeros(p + 2, np.uint64)
    count = 0
    if A.lo <= source < A.hi:
        dist[source] = 0
        queue[0] = source - A.lo
        count = 1
        front[(source >> 5) - w0] = np.uint32(1 << (source & 31))
    # the first round's frontier: the source, its out-edges not counted (no collective for
    # them: 'auto' pushes from it, but for a matrix without edges)
    found, edges = 1, 0
    log = _Levels(A, steps)
    rounds, size = 0, 4 + dtype.itemsize
    while True:
        direction = _choose(steps, found, edges, A)
        log.start()
        if direction == "pull":
            # every rank's distances (each at most the offers any rank made it) and frontier
            # words, one message a rank
            words = [front]
            if p > 1:
                message = xp.concatenate([dist[A.lo : A.hi].view(np.uint8), front.view(np.uint8)])
                sizes = [(bounds[r + 1] - bounds[r]) * dtype.itemsize for r in range(p)]
                lengths = [k + 4 * (b - a) for k, (a, b) in zip(sizes, spans)]
                words = []
                for r, (k, part) in enumerate(zip(sizes, comm.allgather(message, lengths))):
                    if r != me:
                        dist[bounds[r] : bounds[r + 1]] = part[:k].view(dtype)
                    words.append(part[k:].view(np.uint32))
            if frontier is None:
                frontier = xp.zeros_like(changed)
            relax.pull(_assembled(frontier, spans, words), dist, changed)
        else:
            relax.relax(queue, count, found, dist, changed)
            tally.fill(0)
            for d in range(p):
                lo, hi = bounds[d], bounds[d + 1]
                if d == me:
                    relax.pack(changed, lo, hi, dist, None, None, tally[d : d + 1], False)
                else:
                    relax.pack(
                        changed, lo, hi, dist, offsets[lo:hi], values[lo:hi], tally[d : d + 1], True
                    )
            table = xp.zeros(p * p, np.int64)
            table[me * p : (me + 1) * p] = tally[:p].astype(np.int64)
            table = np.asarray(comm.allreduce_sums(table)).reshape(p, p)  # sync: the offers
            if not table.sum():  # nothing fell anywhere, nor was offered lower: the end
                log.end(0)
                break
            sends = [
                offsets[:0].view(np.uint8)
                if d == me
                else _pack(
                    offsets[bounds[d] : bounds[d] + table[me, d]],
                    values[bounds[d] : bounds[d] + table[me, d]],
                    xp,
                )
                for d in range(p)
            ]
            lengths = [0 if r == me else int(table[r, me]) * size for r in range(p)]
            for r, message in enumerate(comm.alltoallv(sends, lengths)):
                if r != me and len(message):
                    relax.apply(*_unpack(message, dtype), dist, changed)
        # this rank's lowered vertices: the next frontier (its words kept for a pull)
        front[...] = changed[w0:w1]
        tally[p:].fill(0)
        relax.pack(changed, A.lo, A.hi, dist, queue, None, tally[p:], True, degrees=True)
        found, edges = comm.allreduce_sums(tally[p:].astype(np.int64))  # sync: the next round's
        log.end(found)
        if not found:
            break
        rounds += 1
        if rounds >= n:
            raise V.negative_cycle(n)
        count = int(tally[p]) if xp is np else tally[p : p + 1]
    log.report(stats)
    local = dist[A.lo : A.hi].copy()
    del dist, changed, offsets, values, queue, front, frontier
    if not return_predecessors:
        return _result(A, local, gather)
    whole = A.gather(local)
    parents = _tree(A, source, whole, dtype)
    return (whole if gather else local), parents


def _choose(steps, found, edges, A):
    """The round's direction: fixed, or a tracker's choice from the frontier (``found``
    vertices, ``edges`` out-edges, over every rank); a pull reads every in-edge."""
    if isinstance(steps, str):
        return steps
    return steps.choose(
        frontier_vertices=found, frontier_edges=edges, edges=A.nvals, n=A.n, early_exit=False
    )
