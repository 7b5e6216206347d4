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
from .._storage import expand_rows
from ..kernels._distributed import DeviceRelax
from .bitmap import _bits, _range_mask, _span
from .matrix import _pack, _unpack
from .traverse import _Levels, _result, _tree

__all__ = ["push_sssp", "HostRelax"]

REALS = (np.dtype(np.float32), np.dtype(np.float64))


class HostRelax:
    """A rank's steps of a round with NumPy: what :class:`~gbla.kernels._distributed.DeviceRelax`
    computes on the GPU (the same interface). ``lo``, ``hi``: the rank's range; ``indptr``,
    ``indices``: its rows (global column ids); ``weights``: of the distances' dtype, or None
    (each edge weighs 1). Where a kernel's offers read distances as other offers lower them,
    these read them all first: the same distances in the end, maybe in other rounds."""

    def __init__(self, lo, hi, indptr, indices, weights, dtype):
        self.lo = lo  # (hi: the interface's; nothing here needs the range's end)
        self.indptr, self.indices, self.weights = indptr, indices, weights
        self.dtype = np.dtype(dtype)

    def relax(self, queue, count, bound, dist, changed):
        """Offers along the out-edges of ``queue[:count]`` (local offsets). (``bound``, at
        least the count, sizes the device's grid.)"""
        rows = queue[: int(count)].astype(np.int64)
        edge, row = expand_rows(self.indptr, rows, np)
        w = self.dtype.type(1) if self.weights is None else self.weights[edge]
        self._offer(
            self.indices[edge].astype(np.int64), dist[self.lo + rows[row]] + w, dist, changed
        )

    def pack(self, changed, lo, hi, dist, offsets, values, tally, clear):
        """The set bits of ``changed`` in [lo, hi), counted into ``tally`` (one uint64, from
        its value on); with ``offsets``, listed there (from lo) and their distances in
        ``values`` (or None); with ``clear``, cleared."""
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
    """(A as searched, its weights as ``dtype`` or None for weight 1 an edge): a bool matrix
    weighs 1 an edge (an explicit False included); NaN and -inf raise. The cast is kept with A."""
    if A.dtype == np.bool_:
        A = A.pattern()
    if A.values is None:
        return A, None
    if A.weights.bad is not None:
        raise V.invalid_value("A", "hold no NaN or -inf weight", A.weights.bad)
    if A.values.dtype == dtype:
        return A, A.values
    key = ("push_sssp_weights", dtype.name)
    if key not in A._cache:
        A._cache[key] = A.values.astype(dtype)
    return A, A._cache[key]


def push_sssp(A, source, *, return_predecessors=False, dtype=np.float64, stats=None, gather=True):
    """Distances (``dtype``: float32 or float64, inf unreached; each sum d(u) + w(u, v) in it,
    the weights cast to it) from ``source``, whole on every rank (``gather=False``: each rank
    those of its vertices, A.lo to A.hi), and with ``return_predecessors`` a shortest-path tree
    (int64, pred[source] == source, -1 unreached; whole on every rank): a BFS over the tight
    edges, as :func:`gbla.distributed.sssp`'s. Any weights, negative ones included (a negative
    cycle reachable from the source raises NegativeCycleError on every rank). ``stats`` as
    gbla.distributed.traverse says (a level is a round; ``found``: the vertices whose distance
    fell in it, or that were offered one lower by another rank, over every rank)."""
    comm, xp, n = A.comm, A.comm.xp, A.n
    source = V.source(source, n)
    dtype = _real(dtype)
    V.flag(return_predecessors, "return_predecessors")
    gather = V.flag(gather, "gather")
    A, weights = _weights(A, dtype)
    kind = HostRelax if xp is np else DeviceRelax
    steps = kind(A.lo, A.hi, A.indptr, A.indices, weights, dtype)
    me, p, bounds = comm.rank, comm.size, [int(b) for b in A.bounds]
    dist = xp.full(n, np.inf, dtype)
    changed = xp.zeros((n + 31) >> 5, np.uint32)
    queue = xp.empty(max(A.hi - A.lo, 1), np.int32)
    # what this rank offers rank d's vertices, at [bounds[d], bounds[d + 1]) (room for each)
    offsets, values = xp.empty(max(n, 1), np.int32), xp.empty(max(n, 1), dtype)
    # the offers to each rank (this one's own: counted, not listed), then the next queue's size
    tally = xp.zeros(p + 1, np.uint64)
    count = bound = 0
    if A.lo <= source < A.hi:
        dist[source] = 0
        queue[0] = source - A.lo
        count = bound = 1
    log = _Levels(A, "push")
    rounds, size = 0, 4 + dtype.itemsize
    log.start()
    while True:
        steps.relax(queue, count, bound, dist, changed)
        tally.fill(0)
        for d in range(p):
            lo, hi = bounds[d], bounds[d + 1]
            if d == me:
                steps.pack(changed, lo, hi, dist, None, None, tally[d : d + 1], False)
            else:
                steps.pack(
                    changed, lo, hi, dist, offsets[lo:hi], values[lo:hi], tally[d : d + 1], True
                )
        table = xp.zeros(p * p, np.int64)
        table[me * p : (me + 1) * p] = tally[:p].astype(np.int64)
        table = np.asarray(comm.allreduce_sums(table)).reshape(p, p)  # sync: the round's offers
        total = int(table.sum())
        log.end(total)
        if not total:
            break
        log.start()  # the exchange and the offers applied: the next round's
        rounds += 1
        if rounds > n:
            raise V.negative_cycle(n)
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
                steps.apply(*_unpack(message, dtype), dist, changed)
        steps.pack(changed, A.lo, A.hi, dist, queue, None, tally[p:], True)
        count = int(tally[p]) if xp is np else tally[p:]
        bound = int(table[:, me].sum())  # at least the frontier: offers made to this range
    log.report(stats)
    local = dist[A.lo : A.hi].copy()
    del dist, changed, offsets, values, queue
    if not return_predecessors:
        return _result(A, local, gather)
    whole = A.gather(local)
    parents = _tree(A, source, whole, dtype)
    return (whole if gather else local), parents
