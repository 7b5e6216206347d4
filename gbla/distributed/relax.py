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
rank).

On GPU ranks that a CUDA graph can hold (NCCL, or one rank) the rounds run on the device
(:class:`_GraphedRelax`) while every count of the table fits a message of
:data:`LOOP_OFFERS` offers; a round with more (the few large ones of a big graph) runs on the
host, as above, with messages of its own size. Collective: every rank calls
:func:`push_sssp` with the same arguments.
"""

import numpy as np

from .. import _validation as V
from .._storage import expand_rows
from ..kernels._distributed import BINS, LOG_WORDS, DeviceRelax, RelaxLoopKernels
from ..runtime import _graphs
from .bitmap import _bits, _device_loop, _range_mask, _span
from .matrix import _pack, _unpack
from .traverse import _Levels, _result, _tree

__all__ = ["push_sssp", "HostRelax", "LOOP_OFFERS"]

REALS = (np.dtype(np.float32), np.dtype(np.float64))
# The device loop's largest message: the most offers a rank sends another in a round there (a
# round with more runs on the host, 0.9-1.1 ms for rmat(26)'s rounds of 10**5 offers on four
# H200, most of it the host's). A round sends the smallest of three messages that holds its
# offers, whole (12 bytes an offer in float64: 3 MB at 2**18, 48 KB, 768 bytes).
LOOP_OFFERS = 1 << 18
# Rounds a launch of the loop logs before the host reads the log and launches it again.
LOG_ROUNDS = 1024


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

    def relax(self, queue, count, bound, dist, changed, relaxed):
        """Offers along the out-edges of ``queue[:count]`` (local offsets), counted into
        ``relaxed`` (one uint64). (``bound``, at least the count, sizes the device's grid.)"""
        rows = queue[: int(count)].astype(np.int64)
        edge, row = expand_rows(self.indptr, rows, np)
        relaxed += np.uint64(len(edge))
        w = self.dtype.type(1) if self.weights is None else self.weights[edge]
        self._offer(
            self.indices[edge].astype(np.int64), dist[self.lo + rows[row]] + w, dist, changed
        )

    def pack(self, changed, lo, hi, dist, offsets, values, tally, clear, window=None, bins=None):
        """The set bits of ``changed`` in [lo, hi), counted into ``tally`` (one uint64, from
        its value on); with ``offsets``, listed there (from lo) and their distances in
        ``values`` (or None); with ``clear``, cleared. ``window``: None, or (its end, its
        width): only the bits of a distance below the end are taken, and with ``bins``
        (:data:`~gbla.kernels._distributed.BINS` uint64) each other one is counted in bin
        min(floor((distance - end) / width), BINS - 1)."""
        if hi <= lo:
            return
        w0, end = _span(lo, hi)
        words = changed[w0:end] & _range_mask(lo, hi)
        bits = (words[:, None] >> np.arange(32, dtype=np.uint32)) & np.uint32(1)
        ids = np.flatnonzero(bits.ravel()) + (w0 << 5)  # ascending
        if window is not None:
            d = dist[ids].astype(np.float64)  # compared as the device compares: in double
            near = d < window[0]
            if bins is not None:
                j = np.floor((d[~near] - window[0]) / window[1])
                j = np.minimum(j, BINS - 1).astype(np.int64)
                bins += np.bincount(j, minlength=BINS).astype(bins.dtype)
            ids = ids[near]
            words = np.zeros_like(words)
            np.bitwise_or.at(words, (ids >> 5) - w0, _bits(ids))
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


class _GraphedRelax(_graphs.GraphOwner):
    """push_sssp's rounds on the device: one CUDA graph (made once for a matrix and a dtype,
    kept with the matrix) holds a WHILE node whose body is a round: the offers exchanged, each
    rank sending each other one a message of a fixed size (NCCL captured:
    :meth:`NcclComm.exchange`; three sizes, an IF node each, the smallest that holds every
    count of the table taken), applied as the table says; the frontier listed and relaxed;
    the new offers packed (also into the next messages) and the table of their counts summed
    over the ranks (``sum_into``); a kernel logs the round and goes on while there are offers
    and every count fits the largest message (:data:`LOOP_OFFERS` offers). A round whose
    offers do not fit stops the loop, and the host runs it with messages of their size
    (:func:`push_sssp`), handing back when they fit again. The search's own arrays (distances,
    bitmap, queue, offers) are made for each search; the graph finds their addresses in
    ``control``. What the graph keeps: the messages (2 x ranks x LOOP_OFFERS offers at most),
    the counts, its log."""

    def __init__(self, A, weights, dtype):
        cp, comm = A.comm.xp, A.comm
        # (A itself is not kept: the graph is kept with it)
        self.comm, self.xp, self.dtype, self.n = comm, cp, dtype, A.n
        self.rt = _graphs.driver()
        self.me, self.p = comm.rank, comm.size
        self.bounds = [int(b) for b in A.bounds]
        self.m = A.hi - A.lo
        self.steps = DeviceRelax(A.lo, A.hi, A.indptr, A.indices, weights, dtype)
        self.capacity = LOOP_OFFERS
        # the three messages' sizes: 1/4096, 1/64 and all of LOOP_OFFERS (a round's tail of a
        # few offers sends a few hundred bytes)
        self.sizes = [max(1, LOOP_OFFERS >> 12), max(1, LOOP_OFFERS >> 6), LOOP_OFFERS]
        self.ranges = [b - a for a, b in zip(self.bounds, self.bounds[1:])]
        # a message to rank d holds at most LOOP_OFFERS offers, or d's every vertex
        caps = [min(self.capacity, size) for size in self.ranges]
        self.sent = [
            (cp.empty(cap, np.int32), cp.empty(cap, dtype)) if d != self.me else None
            for d, cap in enumerate(caps)
        ]
        self.received = [
            (cp.empty(caps[self.me], np.int32), cp.empty(caps[self.me], dtype))
            if r != self.me
            else None
            for r in range(self.p)
        ]
        # the offers to each rank, the queue's size, the bins past the window
        self.tally = cp.zeros(self.p + 1 + BINS, np.uint64)
        # the p x p table of offers, then the bins summed over the ranks
        self.table = cp.zeros(self.p * self.p + BINS, np.int64)
        # distributed.cu's GBLA_DSSSP_* words: the loop's, the search's arrays' addresses
        # (slots), the window's end and width (doubles' bits)
        self.control = cp.zeros(12, np.int64)
        self.slots, self.window = self.control[4:10], self.control[10:12]
        # each round's offers, its end's clock, its message's size (0, 1, 2)
        self.log = cp.zeros(LOG_WORDS * LOG_ROUNDS, np.int64)
        self.kernels = RelaxLoopKernels(self.control)
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.stream.wait_event(cp.cuda.get_current_stream().record())
        with self.stream:
            self._record()

    def _bytes(self, size):
        """What this rank sends in a round whose messages hold ``size`` offers: its messages
        and its share of the table's sum (the p x p counts and the bins)."""
        p = self.p
        offers = sum(min(size, self.ranges[d]) for d in range(p) if d != self.me)
        return offers * (4 + np.dtype(self.dtype).itemsize) + 8 * len(self.table) * (p - 1)

    def _pack(self, lo, hi, tally, clear, **kw):
        """steps.pack of the search's changed bits in [lo, hi), its arrays found through the
        slots."""
        self.steps.pack(None, lo, hi, None, None, None, tally, clear, slots=self.slots, **kw)

    def _exchanged(self, size):
        """A round's first part, captured: the offers exchanged in messages of ``size``
        offers and applied; the frontier listed and relaxed (its rows at most ranks x size:
        the counts sent to this rank, its own included)."""
        steps, me, p, slots = self.steps, self.me, self.p, self.slots
        if p > 1:
            into = min(size, self.ranges[me])
            sends = [[] for _ in range(p)]
            recvs = [[] for _ in range(p)]
            for d in range(p):
                if d != me and min(size, self.ranges[d]):
                    sends[d] = [a[: min(size, self.ranges[d])] for a in self.sent[d]]
                if d != me and into:
                    recvs[d] = [a[:into] for a in self.received[d]]
            self.comm.exchange(sends, recvs)
            for r in range(p):
                if r != me and into:
                    at = r * p + me
                    offsets, values = (a[:into] for a in self.received[r])
                    steps.apply(
                        offsets, values, None, None, count_at=self.table[at : at + 1], slots=slots
                    )
        self.tally.fill(0)
        lo, hi = self.bounds[me], self.bounds[me + 1]
        self._pack(lo, hi, self.tally[p:], True, listed=1, window=self.window)
        bound = max(1, min(self.m, p * size))
        steps.relax(None, self.tally[p:], bound, None, None, None, slots=slots)

    def _packed(self, loop_handle):
        """A round's second part, captured: the new offers packed, their table summed, the
        round logged and the next one decided."""
        me, p = self.me, self.p
        for d in range(p):
            lo, hi = self.bounds[d], self.bounds[d + 1]
            tally = self.tally[d : d + 1]
            if d == me:
                self._pack(lo, hi, tally, False, window=self.window, bins=self.tally[p + 1 :])
            else:
                self._pack(lo, hi, tally, True, sent=self.sent[d], listed=2, at=lo)
        self.kernels.to_table(self.tally, self.table, p, me)
        if p > 1:
            self.comm.sum_into(self.table)
        self.kernels.decide(self.table, p, self.capacity, self.n, self.log, loop_handle)

    def _record(self):
        rt, s = self.rt, self.stream.ptr
        graph = rt.graph()
        try:
            loop_handle = rt.conditional_handle(graph, default=1)
            begin = rt.capture(s, graph, self.kernels.begin)
            _, body = rt.add_while(graph, begin, loop_handle)
            handles = [rt.conditional_handle(body) for _ in self.sizes]
            after = rt.capture(
                s,
                body,
                lambda: self.kernels.choose(
                    self.table, self.p, self.sizes[0], self.sizes[1], self.log, handles
                ),
            )
            for size, handle in zip(self.sizes, handles):
                node, part = rt.add_if(body, after, handle)
                rt.capture(s, part, lambda size=size: self._exchanged(size))
                after = [node]
            rt.capture(s, body, lambda: self._packed(loop_handle), after=after)
            self._exec = rt.instantiate(graph)
            self._graph = graph
        except BaseException:
            rt.destroy(graph)
            raise

    def fits(self, table):
        """Whether every count of ``table`` (the offers packed) fits a message."""
        return int(table.max()) <= self.capacity

    def run(self, arrays, table, far, rounds, window, log):
        """Rounds from where the host left the search (``arrays``: its dist, changed, queue,
        offsets, values and edges relaxed; ``table``: the p x p counts of the offers packed,
        which fit; ``far``: the bins past the window; ``rounds`` so far; ``window``: its end
        and width) until the search is over or a round's offers do not fit: (why it stopped:
        1 over, 2 too many offers, 4 more rounds than vertices; the rounds; the table and the
        bins where 2; the window's end; the rounds it ran). With ``log`` (a _Levels), each round's
        offers, bytes and time into it."""
        cp = self.xp
        caller = cp.cuda.get_current_stream()
        ends = np.array(window, np.float64).view(np.int64)
        control = np.array([rounds, 0, 0, 0, *(a.data.ptr for a in arrays), *ends], np.int64)
        self.stream.wait_event(caller.record())  # the caller's writes of the arrays first
        ran, calls = 0, 2 if self.p > 1 else 0  # a round's collectives: exchange, sum
        with self.stream:
            self.control.set(control)
            self.table.set(np.concatenate([np.ravel(table), far]).astype(np.int64))
            while True:
                self.rt.launch(self._exec, self.stream.ptr)
                control = self.control.get()  # sync: the loop's end, or a full log
                ran += int(control[2])
                if log is not None:
                    logged = int(control[2])
                    t = int(control[3])
                    entries = self.log[: LOG_WORDS * logged].get().reshape(-1, LOG_WORDS)
                    for found, stamp, size in entries.tolist():
                        sent = self._bytes(self.sizes[size])
                        log.add("push", found, sent, calls, (stamp - t) * 1e-9)
                        t = stamp
                if control[1] != 3:
                    break
            got = self.table.get() if control[1] == 2 else None
        caller.wait_event(self.stream.record())
        end = float(control[10:11].view(np.float64)[0])
        if got is None:
            return int(control[1]), int(control[0]), None, None, end, ran
        p = self.p
        return int(control[1]), int(control[0]), got[: p * p].reshape(p, p), got[p * p :], end, ran


def push_sssp(
    A,
    source,
    *,
    return_predecessors=False,
    dtype=np.float64,
    delta=None,
    stats=None,
    gather=True,
    device_loop=None,
):
    """Distances (``dtype``: float32 or float64, inf unreached; each sum d(u) + w(u, v) in it,
    the weights cast to it) from ``source``, whole on every rank (``gather=False``: each rank
    those of its vertices, A.lo to A.hi), and with ``return_predecessors`` a shortest-path tree
    (int64, pred[source] == source, -1 unreached; whole on every rank): a BFS over the tight
    edges, as :func:`gbla.distributed.sssp`'s. Any weights, negative ones included (a negative
    cycle reachable from the source raises NegativeCycleError on every rank).

    ``delta``: None (the default: Bellman-Ford, every vertex whose distance fell relaxes in
    the next round), or the width of a window of distances (delta-stepping's buckets; the
    weights must be non-negative): the window starts at [0, delta); a round relaxes only the
    vertices whose distance fell below its end, and where no rank has one left and no offer
    is on its way, the end moves past the nearest waiting vertex's bin of delta (the bins
    counted in the round's sum: no collective of its own). Fewer relaxations, in more rounds:
    on R-MAT graphs they cost more time than they save (BENCHMARKS.md).

    ``stats`` as gbla.distributed.traverse says (a level is a round; ``found``: the vertices
    whose distance fell in it, or that were offered one lower by another rank, over every
    rank), ``loop`` ('device' or 'host': where the rounds may run), ``device_rounds`` (those
    that ran on the device), ``delta`` (the window's width, None for none) and ``relaxed``
    (the edges relaxed over every rank: an edge relaxed twice counts twice).
    ``device_loop``: None (the default) runs the rounds whose offers fit a fixed message
    (:data:`LOOP_OFFERS` offers from a rank to another) in a CUDA graph, the others on the
    host, where it can (as :func:`gbla.distributed.bitmap_bfs` says); False: every round on
    the host; True: as None, or raise where it cannot."""
    comm, xp, n = A.comm, A.comm.xp, A.n
    source = V.source(source, n)
    dtype = _real(dtype)
    V.flag(return_predecessors, "return_predecessors")
    gather = V.flag(gather, "gather")
    V.optional_flag(device_loop, "device_loop")
    A, weights = _weights(A, dtype)
    width = _window(A, delta)
    graphed = _device_loop(
        A,
        ("push_sssp_loop", dtype.name),
        lambda: _GraphedRelax(A, weights, dtype),
        device_loop,
    )
    if graphed is not None:
        steps = graphed.steps
    else:
        kind = HostRelax if xp is np else DeviceRelax
        steps = kind(A.lo, A.hi, A.indptr, A.indices, weights, dtype)
    me, p, bounds = comm.rank, comm.size, [int(b) for b in A.bounds]
    dist = xp.full(n, np.inf, dtype)
    changed = xp.zeros((n + 31) >> 5, np.uint32)
    queue = xp.empty(max(A.hi - A.lo, 1), np.int32)
    relaxed = xp.zeros(1, np.uint64)  # the edges this rank relaxed
    # what this rank offers rank d's vertices, at [bounds[d], bounds[d + 1]) (room for each)
    offsets, values = xp.empty(max(n, 1), np.int32), xp.empty(max(n, 1), dtype)
    # the offers to each rank (this one's own: counted, not listed), the next queue's size,
    # the bins past the window
    tally = xp.zeros(p + 1 + BINS, np.uint64)
    # the counts of the offers packed, rank r's to rank d's vertices at [r, d] (this rank's
    # own: those below the window's end), alike on every rank, and the vertices past the end
    # in bins of the window's width (far); the source's bit, set where it lives, is its
    # owner's own: the first frontier
    table, far = np.zeros((p, p), np.int64), np.zeros(BINS, np.int64)
    owner = A.owner(source)
    table[owner, owner] = 1
    if A.lo <= source < A.hi:
        dist[source] = 0
        changed[source >> 5] = np.uint32(1 << (source & 31))
    end = np.inf if width is None else width  # the window's end: [0, width) first
    log = _Levels(A, "push")
    rounds, size, device_rounds = 0, 4 + dtype.itemsize, 0
    while True:
        if graphed is not None and graphed.fits(table):
            arrays = (dist, changed, queue, offsets, values, relaxed)
            stop, rounds, got, got_far, end, ran = graphed.run(
                arrays, table, far, rounds, (end, width or 1.0), None if stats is None else log
            )
            device_rounds += ran
            if stop == 1:
                break
            if stop == 4:
                raise V.negative_cycle(n)
            table, far = got, got_far
        windowed = None if width is None else (end, width)
        log.start()
        if (table.sum() - table.trace()) > 0:  # alike on every rank: all exchange or none
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
        tally.fill(0)
        steps.pack(changed, A.lo, A.hi, dist, queue, None, tally[p:], True, window=windowed)
        count = int(tally[p]) if xp is np else tally[p:]
        # at least the frontier: offers made to this range (with the vertices a moved window
        # takes in the diagonal)
        bound = int(table[:, me].sum())
        steps.relax(queue, count, bound, dist, changed, relaxed)
        for d in range(p):
            lo, hi = bounds[d], bounds[d + 1]
            if d == me:
                steps.pack(
                    changed,
                    lo,
                    hi,
                    dist,
                    None,
                    None,
                    tally[d : d + 1],
                    False,
                    window=windowed,
                    bins=tally[p + 1 :],
                )
            else:
                kept = {} if graphed is None else {"sent": graphed.sent[d]}
                steps.pack(
                    changed,
                    lo,
                    hi,
                    dist,
                    offsets[lo:hi],
                    values[lo:hi],
                    tally[d : d + 1],
                    True,
                    **kept,
                )
        counts = xp.zeros(p * p + BINS, np.int64)
        counts[me * p : (me + 1) * p] = tally[:p].astype(np.int64)
        counts[p * p :] = tally[p + 1 :].astype(np.int64)
        counts = np.asarray(comm.allreduce_sums(counts))  # sync: the round's offers
        table, far = counts[: p * p].reshape(p, p), counts[p * p :]
        total = int(table.sum())
        log.end(total)
        if total:
            rounds += 1
            if rounds > n:
                raise V.negative_cycle(n)
        elif far.any():  # as gbla_dsssp_decide: the window past the first bin that holds any
            first = int(np.flatnonzero(far)[0])
            end += (first + 1) * width
            table[np.arange(p), np.arange(p)] = far[first]  # at most what a rank lists next
        else:
            break
    log.report(stats)
    if stats is not None:
        stats["loop"] = "host" if graphed is None else "device"
        stats["device_rounds"] = device_rounds
        stats["delta"] = width
        stats["relaxed"] = int(np.asarray(comm.allreduce_sums(relaxed.astype(np.int64)))[0])
    local = dist[A.lo : A.hi].copy()
    del dist, changed, offsets, values, queue, relaxed
    if not return_predecessors:
        return _result(A, local, gather)
    whole = A.gather(local)
    parents = _tree(A, source, whole, dtype)
    return (whole if gather else local), parents


def _window(A, delta):
    """The window's width, ``delta`` checked: None for no window."""
    if delta is None:
        return None
    width = V.positive_finite(delta, "delta", "be None or a positive finite number")
    facts = A.weights
    if facts.lowest < 0:
        raise V.invalid_value("A", "hold no negative weight with a delta", facts.lowest)
    return width
