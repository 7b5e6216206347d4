"""Direction-optimizing BFS over a :class:`~.matrix.DistMatrix` with bitmap frontiers: the 1D
scheme of Beamer, Buluc, Asanovic and Yelick (distributed top-down and bottom-up steps, IPDPSW
2013) that Graph500's bitmap codes run, with hand-written kernels for each rank's local work
(gbla/kernels/distributed.cu) on CuPy ranks and the same steps in NumPy on CPU ranks.

Each rank owns the vertices [lo, hi) with their out-edges and in-edges. A bitmap over vertices
is an array of uint32 words, vertex v at bit v & 31 of word v >> 5; rank r's vertices lie in
words lo_r >> 5 to (hi_r + 31) >> 5, a boundary word shared with the neighbouring rank, whose
bits each side masks off (so the bounds need no alignment). A level is one of two exchanges,
chosen alike on every rank by the direction policy from the frontier's size and out-edges
summed over the ranks (one ``allreduce_sums`` a level, which also ends the search):

- push: each rank sets, in a bitmap of all n vertices, the out-neighbours of its frontier that it
  does not know to be visited; one all-to-all sends rank s, from every rank, the words covering
  [lo_s, hi_s); s ORs them and keeps its range's bits that are not visited: the new frontier.
- pull: one all-gather of every rank's frontier words (n / 8 bytes in all); each rank's
  unvisited vertices scan their in-edges and stop at the first in the frontier, the parent.

Parents after a push are found by the owner of each new vertex as a pull finds them: its first
in-neighbour in the frontier of the level before, which every rank then appends to its push
message (one all-to-all still; the claiming rank's id never has to travel back). A rank's
``known`` bitmap marks what it knows visited: its own range exactly, and every frontier it
gathered; a push sets no bit for those.

The local work of a level sits behind one interface, :class:`HostSteps` (NumPy) and
:class:`gbla.kernels._distributed.DeviceSteps` (CuPy, distributed.cu): ``push`` (set the bits of
the out-neighbours), ``claim`` (merge what the ranks sent; the parents) and ``pull``; the
exchanges, the bitmaps' layout, the direction and the levels are the driver's, shared.
Collective: every rank calls :func:`bitmap_bfs` with the same arguments.
"""

import numpy as np

from .. import _backend as B
from .. import _validation as V
from .. import direction as _direction
from .. import methods
from .._storage import expand_rows
from ..kernels._distributed import DeviceSteps, LoopKernels
from ..runtime import _graphs
from .comm import SelfComm
from .matrix import DistMatrix
from .traverse import _Levels, _result

__all__ = ["bitmap_bfs", "HostSteps"]

_ALL = 0xFFFFFFFF


def _span(lo, hi):
    """(first word, end word) of the bitmap words holding the bits of [lo, hi); none for an
    empty range."""
    return (lo >> 5, (hi + 31) >> 5) if hi > lo else (lo >> 5, lo >> 5)


def _bits(v):
    """Each id's bit in its word (uint32)."""
    return np.left_shift(np.uint32(1), (v & 31).astype(np.uint32))


def _test(words, v):
    """Whether the bitmap ``words`` holds each of the ids ``v`` (int64)."""
    return ((words[v >> 5] >> (v & 31).astype(np.uint32)) & np.uint32(1)).astype(bool)


def _range_mask(lo, hi):
    """The words of [lo, hi)'s span with exactly its bits set (the boundary words shared with
    the neighbouring ranks keep only this range's)."""
    first, end = _span(lo, hi)
    mask = np.full(end - first, _ALL, np.uint32)
    if len(mask):
        mask[0] &= np.uint32((_ALL << (lo & 31)) & _ALL)
        top = hi - ((end - 1) << 5)  # the last word's bits in the range: 1..32
        if top < 32:
            mask[-1] &= np.uint32((1 << top) - 1)
    return mask


class HostSteps:
    """One rank's local steps of a level with NumPy, written with whole-array operations: what
    distributed.cu's kernels compute (:class:`~gbla.kernels._distributed.DeviceSteps`, the same
    interface). Where a kernel's pull stops at the first in-neighbour in the frontier, this one
    reads them all and keeps the first: the same parents.

    ``lo``, ``hi``: the rank's range; ``w0``: its first word; ``indptr``, ``indices``: its rows
    (global column ids); ``t_indptr``, ``t_indices``: A.T's rows lo..hi (None: push only);
    ``levels`` (int32) and ``parents`` (int64, or None): the rank's results, which the steps
    fill."""

    def __init__(self, lo, hi, w0, indptr, indices, t_indptr, t_indices, levels, parents):
        self.lo, self.hi, self.w0 = lo, hi, w0
        self.indptr, self.indices = indptr, indices
        self.t_indptr, self.t_indices = t_indptr, t_indices
        self.levels, self.parents = levels, parents
        self.mask = _range_mask(lo, hi)

    def push(self, queue, count, known, nxt, bound=None):
        """Sets the bits of ``nxt`` (all n vertices) of the out-neighbours of ``queue[:count]``
        (local offsets) that ``known`` does not mark visited. (``bound``, at least the count,
        sizes the device's grid where its count stays on the device.)"""
        edge, _ = expand_rows(self.indptr, queue[:count].astype(np.int64), np, owners=False)
        v = self.indices[edge].astype(np.int64)
        v = v[~_test(known, v)]
        np.bitwise_or.at(nxt, v >> 5, _bits(v))

    def claim(self, received, depth, known, front, queue, frontier):
        """Labels ``depth`` the vertices of the range set in any of ``received`` (the range's
        words from each rank) and not in ``known``: ``front`` becomes their words, ``queue``
        their list, ``known`` gains them; with ``frontier`` (the whole frontier of the level
        before) and parents, each gets its first in-neighbour there. Returns (count, out-edges)
        of them."""
        new = np.bitwise_or.reduce(np.stack(received), axis=0)
        new &= self.mask & ~known[self.w0 : self.w0 + len(front)]
        front[:] = new
        known[self.w0 : self.w0 + len(front)] |= new
        ids = self._ids(new)
        self.levels[ids] = depth
        queue[: len(ids)] = ids
        if frontier is not None and self.parents is not None:
            at, parent = self._first_in(ids, frontier)  # every one of them has one
            self.parents[ids[at]] = parent
        return len(ids), self._edges(ids)

    def pull(self, frontier, depth, known, front, queue):
        """Labels ``depth`` each unvisited vertex of the range with an in-neighbour in
        ``frontier`` (all n vertices), the first one its parent; ``front`` (zeroed by the
        caller), ``known`` and ``queue`` get them. Returns (count, out-edges) of them."""
        unvisited = np.flatnonzero(self.levels == -1)
        at, parent = self._first_in(unvisited, frontier)
        ids = unvisited[at]
        self.levels[ids] = depth
        if self.parents is not None:
            self.parents[ids] = parent
        g = ids + self.lo
        np.bitwise_or.at(front, (g >> 5) - self.w0, _bits(g))
        np.bitwise_or.at(known, g >> 5, _bits(g))
        queue[: len(ids)] = ids
        return len(ids), self._edges(ids)

    def _first_in(self, ids, frontier):
        """(positions in ``ids`` of the vertices with an in-neighbour in ``frontier``, the first
        such in-neighbour of each, in A.T's row order)."""
        edge, row = expand_rows(self.t_indptr, ids.astype(np.int64), np)
        u = self.t_indices[edge].astype(np.int64)
        hit = _test(frontier, u)
        row, u = row[hit], u[hit]
        first = np.ones(len(row), bool)
        first[1:] = row[1:] != row[:-1]  # rows ascending: a row's first hit opens its run
        return row[first], u[first]

    def _ids(self, words):
        """Local offsets of the set bits of the range's words, ascending."""
        bits = (words[:, None] >> np.arange(32, dtype=np.uint32)) & np.uint32(1)
        return np.flatnonzero(bits.ravel()) + ((self.w0 << 5) - self.lo)

    def _edges(self, ids):
        return int((self.indptr[ids + 1] - self.indptr[ids]).sum())


def _graph(A):
    """(indptr, indices, t_indptr, t_indices) of this rank's rows, both parts' offsets of one
    dtype and their ids of one (int32 where both are, else int64: the kernels' instantiations),
    converted once and kept with A where they differ."""
    t_indptr, t_indices = (None, None) if A.transpose is None else A.transpose[:2]
    parts = (A.indptr, A.indices, t_indptr, t_indices)

    def common(*arrays):
        both = {np.dtype(a.dtype) for a in arrays if a is not None}
        return np.dtype(np.int32) if both == {np.dtype(np.int32)} else np.dtype(np.int64)

    offsets, ids = common(A.indptr, t_indptr), common(A.indices, t_indices)
    wanted = (offsets, ids, offsets, ids)
    if all(a is None or a.dtype == d for a, d in zip(parts, wanted)):
        return parts
    if "bitmap_bfs" not in A._cache:
        A._cache["bitmap_bfs"] = tuple(
            None if a is None else a.astype(d) for a, d in zip(parts, wanted)
        )
    return A._cache["bitmap_bfs"]


class _Search:
    """One rank's state of one search: its levels and parents, the bitmaps, two frontier
    queues (the level's and the next), and the exchanges of a push or pull level."""

    def __init__(self, A, parents):
        comm, xp = A.comm, A.comm.xp
        self.A, self.comm, self.xp = A, comm, xp
        self.spans = [_span(int(A.bounds[r]), int(A.bounds[r + 1])) for r in range(comm.size)]
        self.w0, end = self.spans[comm.rank]
        self.words = end - self.w0
        m, all_words = A.hi - A.lo, (A.n + 31) >> 5
        self.levels, self.parents = self._results(m, parents)
        self.known = xp.zeros(all_words, np.uint32)
        self.next = xp.zeros(all_words, np.uint32)
        self.frontier = None  # the whole frontier, gathered (made by the first level needing it)
        # double-buffered: the words and queue of the frontier being expanded, and of the one
        # being built; the ranks read what this one sent (ThreadComm: its very arrays) until
        # the level's sum, and it writes only the other buffer before then
        self.fronts = [xp.zeros(self.words, np.uint32) for _ in range(2)]
        self.queues = [xp.empty(max(m, 1), np.int32) for _ in range(2)]
        # the frontier's vertices on this rank: an int, or where the device steps left it
        self.count = 0
        steps = HostSteps if xp is np else DeviceSteps
        self.steps = steps(A.lo, A.hi, self.w0, *_graph(A), self.levels, self.parents)

    def _results(self, m, parents):
        """The levels and parents (or None) the steps fill, all unreached."""
        xp = self.xp
        return xp.full(m, -1, np.int32), xp.full(m, -1, np.int64) if parents else None

    def start(self, source):
        """The source labelled where it lives; (this rank's frontier size, its out-edges)."""
        A = self.A
        if not A.lo <= source < A.hi:
            return 0, 0
        v = source - A.lo
        self.levels[v] = 0
        if self.parents is not None:
            self.parents[v] = source
        self.queues[0][0] = v
        bit = np.uint32(1 << (source & 31))
        self.fronts[0][(source >> 5) - self.w0] = bit  # every word is zero yet
        self.known[source >> 5] = bit
        self.count = 1
        return 1, int(A.indptr[v + 1] - A.indptr[v])  # sync: the source's out-degree

    def push(self, depth, bound):
        """A push level: this rank's bits of the out-neighbours to their owners (with parents,
        its frontier words after them), then its range's claimed. ``bound``: the frontier over
        every rank."""
        xp = self.xp
        self.next.fill(0)
        self.steps.push(self.queues[0], self.count, self.known, self.next, bound)
        sends = [self.next[a:b] for a, b in self.spans]
        # what each rank sends this one: the words of this range (and its frontier's words)
        lengths = [self.words] * len(sends)
        if self.parents is not None:  # where the new vertices' parents are to be found
            sends = [xp.concatenate([s, self.fronts[0]]) for s in sends]
            lengths = [self.words + b - a for a, b in self.spans]
        got = self.comm.alltoallv(sends, lengths)
        frontier = None
        if self.parents is not None:
            frontier = self._assemble([g[self.words :] for g in got])
            got = [g[: self.words] for g in got]
        # (the claim writes every word of the front it builds: none zeroed first)
        return self.steps.claim(got, depth, self.known, self.fronts[1], self.queues[1], frontier)

    def pull(self, depth):
        """A pull level: every rank's frontier words gathered, then this rank's unvisited
        vertices scan their in-edges."""
        lengths = [b - a for a, b in self.spans]
        frontier = self._assemble(self.comm.allgather(self.fronts[0], lengths))
        self.fronts[1].fill(0)
        return self.steps.pull(frontier, depth, self.known, self.fronts[1], self.queues[1])

    def _assemble(self, parts):
        """The whole frontier from each rank's words (OR-ed where two ranks share a word);
        what it holds is visited, so ``known`` gains it."""
        if self.frontier is None:
            self.frontier = self.xp.zeros_like(self.known)
        frontier = self.frontier
        frontier.fill(0)
        for (first, _), part in zip(self.spans, parts):
            frontier[first : first + len(part)] |= part
        self.known |= frontier
        return frontier

    def advance(self, count):
        """The frontier built becomes the one to expand (``count``: its size here, the first
        item of what the steps returned: an int, or a device scalar the next push reads)."""
        self.fronts.reverse()
        self.queues.reverse()
        self.count = count


class _Graphed(_Search, _graphs.GraphOwner):
    """A search whose level loop runs on the device: one CUDA graph (made once for a matrix,
    its return of parents and its direction, and kept with the matrix) holds a WHILE node whose
    body runs two levels, each an IF node for a push and one for a pull, with their exchanges
    (NCCL captured: :meth:`NcclComm.exchange`, ``sum_into``) and the sum of their tallies;
    a kernel chooses each level's direction from that sum (LoopKernels). The host launches it
    once (again every ``CAPACITY`` levels, to read the log of directions and counts) and reads
    one control array back: no Python a level. Every buffer a level touches is made here once,
    except the levels and parents: those are made for each search (the graph finds their
    addresses in control) and returned as they are."""

    CAPACITY = 64  # levels a launch runs before the host reads their log

    def __init__(self, A, parents, direction, edges):
        super().__init__(A, parents)
        cp, comm = self.xp, A.comm
        self.rt = _graphs.driver()
        self.m = A.hi - A.lo
        self.stream = cp.cuda.Stream(non_blocking=True)
        # distributed.cu's GBLA_DBFS_* words; [9], [10]: the addresses of the search's levels
        # and parents, made for it, which the kernels read there (the steps' slots) instead of
        # the arrays they were given, none kept here
        self.control = cp.zeros(11, np.int64)
        self.steps.slots = self.control[9:11]
        self.log_directions = cp.zeros(self.CAPACITY, np.int32)
        # a level's vertices found, and the device's clock (ns) at its choice and its sum
        self.log = cp.zeros((self.CAPACITY, 3), np.int64)
        self.frontier = cp.zeros_like(self.known)  # now: _assemble would make it in the capture
        lengths = [b - a for a, b in self.spans]
        if comm.size > 1:
            # what the ranks send this one: a push's words of this range, from each (end to
            # end, as the claim reads them); every rank's frontier words (a pull's, and a
            # push's with parents)
            self.block = cp.zeros(comm.size * self.words, np.uint32)
            gathered = cp.zeros(sum(lengths), np.uint32)
            ends = np.cumsum([0] + lengths)
            self.parts = [gathered[ends[r] : ends[r + 1]] for r in range(comm.size)]
        self.kernels = LoopKernels(self.control, A.n, edges, direction)
        # what was made on the caller's stream is there before the graph is (a non-blocking
        # stream waits for no other by itself)
        self.stream.wait_event(cp.cuda.get_current_stream().record())
        with self.stream:
            self._record()

    def _results(self, m, parents):
        # each search's are made by run(), the kernels finding them through control: none kept
        cp = self.xp
        return cp.empty(1, np.int32), cp.empty(1, np.int64) if parents else None

    # ------------------------------------------------------------------ a level, captured
    def _frontier_parts(self, p):
        """Every rank's frontier words (this one's own where it is the only one)."""
        return self.parts if self.comm.size > 1 else [self.fronts[p]]

    def _sum(self, logged=True):
        """The tally summed over the ranks into control, and (a level's) logged."""
        self.kernels.to_sum(self.steps.tally)
        if self.comm.size > 1:
            self.comm.sum_into(self.control[:2])
        if logged:
            self.kernels.logged(self.log)

    def _start(self):
        """The source labelled, its count and out-edges summed over the ranks into control."""
        self.known.fill(0)
        self.fronts[0].fill(0)
        self.kernels.start(self.steps, self.queues[0], self.fronts[0], self.known)
        self._sum(logged=False)

    def _push(self, p):
        comm, steps, front = self.comm, self.steps, self.fronts[p]
        depth = self.control[2:3]
        self.next.fill(0)
        # the frontier's size is the level before's tally, on the device
        steps.push(self.queues[p], steps.tally, self.known, self.next, bound=max(self.m, 1))
        frontier = None
        if comm.size > 1:
            words = self.words
            sends, recvs = [], []
            for r, (a, b) in enumerate(self.spans):
                sends.append([self.next[a:b]] + ([front] if self.parents is not None else []))
                got = [self.block[r * words : (r + 1) * words]]
                recvs.append(got + ([self.parts[r]] if self.parents is not None else []))
            comm.exchange(sends, recvs)
            received = self.block
        else:
            received = self.next[self.w0 : self.w0 + self.words]
        if self.parents is not None:
            frontier = self._assemble(self._frontier_parts(p))
        steps.claim(
            received,
            0,
            self.known,
            self.fronts[1 - p],
            self.queues[1 - p],
            frontier,
            depth_at=depth,
        )
        self._sum()

    def _pull(self, p):
        comm = self.comm
        if comm.size > 1:
            comm.exchange([[self.fronts[p]]] * comm.size, [[part] for part in self.parts])
        frontier = self._assemble(self._frontier_parts(p))
        self.fronts[1 - p].fill(0)
        self.steps.pull(
            frontier,
            0,
            self.known,
            self.fronts[1 - p],
            self.queues[1 - p],
            depth_at=self.control[2:3],
        )
        self._sum()

    def _record(self):
        rt, s = self.rt, self.stream.ptr
        graph = rt.graph()
        try:
            loop_handle = rt.conditional_handle(graph, default=1)
            # the start only where no level has run: a launch again (the log read) goes on
            start_handle = rt.conditional_handle(graph)
            begin = rt.capture(s, graph, lambda: self.kernels.begin(start_handle))
            start, start_body = rt.add_if(graph, begin, start_handle)
            rt.capture(s, start_body, self._start)
            _, body = rt.add_while(graph, [start], loop_handle)
            after = []
            for p in (0, 1):  # two levels a body: the buffers trade places, and back
                push_handle = rt.conditional_handle(body)
                pull_handle = rt.conditional_handle(body)
                after = rt.capture(
                    s,
                    body,
                    lambda: self.kernels.decide(
                        self.log_directions, self.log, push_handle, pull_handle
                    ),
                    after=after,
                )
                node, push_body = rt.add_if(body, after, push_handle)
                rt.capture(s, push_body, lambda: self._push(p))
                node, pull_body = rt.add_if(body, [node], pull_handle)
                rt.capture(s, pull_body, lambda: self._pull(p))
                after = [node]
            rt.capture(s, body, lambda: self.kernels.again(self.CAPACITY, loop_handle), after=after)
            self._exec = rt.instantiate(graph)
            self._graph = graph
        except BaseException:
            rt.destroy(graph)
            raise

    def _bytes(self, way):
        """What this rank sends in a level (as Counted counts it on the host): its words of
        the others' ranges (a push; with parents its frontier's words to each too) or its
        frontier's words to each (a pull), and the two sums."""
        comm, others = self.comm, self.comm.size - 1
        words = 4 * self.words * others
        if way == "push":
            sent = sum(4 * (b - a) for r, (a, b) in enumerate(self.spans) if r != comm.rank)
            words = sent + (words if self.parents is not None else 0)
        return words + 16 * others

    # ------------------------------------------------------------------ a search
    def run(self, source, depth_limit, log=None):
        """The search from ``source``: (levels, parents or None), this rank's, in arrays made
        for it on the caller's stream; with ``log`` (a _Levels), each level's direction,
        count, volume and time into it."""
        cp, comm = self.xp, self.comm
        caller = cp.cuda.get_current_stream()
        levels = cp.full(self.m, -1, np.int32)
        parents = None if self.parents is None else cp.full(self.m, -1, np.int64)
        limit = -1 if depth_limit is None else depth_limit
        at = [levels.data.ptr, 0 if parents is None else parents.data.ptr]
        control = np.array([0, 0, 0, 0, -1, 0, 0, limit, source, *at], np.int64)
        # the caller's work before this call first: the results' fill, and what read the
        # last search's buffers
        self.stream.wait_event(caller.record())
        with self.stream:
            self.control.set(control)
            while True:
                self.rt.launch(self._exec, self.stream.ptr)
                control = self.control.get()  # sync: the loop's end, or a full log
                if log is not None:  # sync: the levels' log
                    logged = int(control[6])
                    directions = self.log_directions[:logged].get()
                    for way, (found, t0, t1) in zip(directions, self.log[:logged].get()):
                        way = "pull" if way == 2 else "push"
                        # the first level counts the start's sum too, as the host's loop does
                        start = 0 if log.found else 1
                        sent = self._bytes(way) + start * 16 * (comm.size - 1)
                        log.add(way, int(found), sent, 2 + start, (int(t1) - int(t0)) * 1e-9)
                if control[5]:
                    break
                self.control[6:7] = 0
        caller.wait_event(self.stream.record())
        return levels, parents


def _device_loop(A, key, make, wanted):
    """The loop kept with A under ``key``, made by ``make()`` at the first search (a
    :class:`_Graphed`, or push_sssp's); None where the loop stays on the host: not asked for
    (``wanted`` False), a CPU matrix, a communicator that a graph cannot hold, a driver
    without conditional nodes, or a graph the driver refused (the reason kept with A, and
    raised where ``wanted`` is True). Over several GPU ranks the choice is made together,
    once: one rank that cannot keeps every rank on the host (their collectives must match)."""
    if wanted is False:
        return None
    comm = A.comm
    if key not in A._cache:
        outcome = None
        if comm.xp is np:
            outcome = "the ranks' arrays are NumPy's"
        elif not getattr(comm, "capturable", False):
            kind = type(getattr(comm, "comm", comm)).__name__
            outcome = f"a {kind} cannot be captured in a graph"
        elif _graphs.driver() is None:
            outcome = "the CUDA driver makes no conditional graph nodes"
        else:
            try:
                outcome = make()
            except Exception as e:  # noqa: BLE001  (the driver or NCCL refused the graph)
                outcome = f"the graph was refused: {e}"
            if comm.size > 1:  # every GPU rank of one communicator gets here
                refused = comm.allreduce_sum(int(isinstance(outcome, str)))
                if refused and not isinstance(outcome, str):
                    outcome = f"{refused} of the {comm.size} ranks could not make the graph"
        A._cache[key] = outcome
    found = A._cache[key]
    if isinstance(found, str):
        if wanted:
            raise V.invalid_value("device_loop", f"be None or False here ({found})", True)
        return None
    return found


def bitmap_bfs(
    A,
    source,
    *,
    return_predecessors=False,
    depth_limit=None,
    direction="auto",
    stats=None,
    gather=True,
    device_loop=None,
):
    """Breadth-first search over a matrix cut over ranks, direction-optimizing, its frontiers
    exchanged as bitmaps (the module says how); collective.

    Parameters
    ----------
    A : DistMatrix
        This rank's rows (with its transpose's rows, which a pull and the parents read:
        :meth:`DistMatrix.from_csr` and :meth:`DistMatrix.from_edges` build them).
    source : int
        0 <= source < n, the same on every rank.
    return_predecessors : bool
        Also return a BFS tree.
    depth_limit : int or None
        Stop after this many levels (vertices further away count as unreached).
    direction : 'auto', 'push', 'pull' or DirectionPolicy
        As for :func:`gbla.bfs`: 'auto' lets the default policy choose per level from the
        frontier's size and out-edges over every rank.
    stats : dict or None
        Receives, on every rank, ``directions``, ``found`` (vertices labelled per level, over
        every rank), ``bytes`` (payload every rank together sent per level), ``collectives``
        (calls a rank made per level) and ``bytes_total``, as :func:`gbla.distributed.bfs`
        reports them (one more collective, after the search).
    gather : bool
        True (the default): the results whole on every rank (one all-gather of each, n
        entries over the ranks); False: each rank keeps those of its vertices, A.lo to A.hi
        (none sent), as Graph500 leaves a search's tree.
    device_loop : bool or None
        Where the level loop runs. None (the default): on the device where it can (GPU ranks
        of an NCCL communicator, or one GPU rank; a CUDA driver with conditional graph nodes):
        one CUDA graph, made at the first search and kept with A, runs the levels with their
        exchanges and chooses each one's direction, without the host (where one rank cannot
        make it, every rank runs on the host). False: on the host, a sum read back a level.
        True: on the device, or raise where it cannot. ``stats`` gets
        ``loop``, 'device' or 'host' (a device level's ``seconds``: the device's clock from
        its choice of direction to its sum).

    Returns
    -------
    levels : array (the communicator's array module), int32, whole on every rank (or this
        rank's A.hi - A.lo, where ``gather`` is False)
        levels[source] == 0; -1 = unreached.
    parents : array, int64, when ``return_predecessors``, laid out as levels
        parents[source] == source; -1 = unreached; each other reached vertex's in-neighbour
        one level nearer the source (a valid BFS tree).

    Raises
    ------
    DomainMismatch (A not a DistMatrix, stats not a dict), InvalidIndex / InvalidValue (source,
    depth_limit, direction, device_loop; a pull or parents asked of a DistMatrix without its
    transpose; device_loop=True where the loop cannot run on the device)

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from gbla import distributed as D
    >>> S = sp.csr_array((np.ones(3), ([0, 1, 1], [1, 2, 3])), shape=(5, 5))
    >>> D.run_threads(2, lambda comm: D.bitmap_bfs(
    ...     D.DistMatrix.from_csr(comm, S.indptr, S.indices), 0))[1]
    array([ 0,  1,  2,  2, -1], dtype=int32)
    """
    if not isinstance(A, DistMatrix):
        raise V.domain("A", "be a gbla.distributed.DistMatrix", type(A).__name__)
    comm, n = A.comm, A.n
    source = V.source(source, n)
    parents = V.flag(return_predecessors, "return_predecessors")
    gather = V.flag(gather, "gather")
    if depth_limit is not None:
        depth_limit = V.size(depth_limit, "depth_limit")
    if stats is not None and not isinstance(stats, dict):
        raise V.domain("stats", "be a dict or None", type(stats).__name__)
    steps = _direction.start(direction)
    if A.transpose is None and (parents or steps != "push"):
        raise V.invalid_value(
            "A",
            "hold its transpose's rows to pull or find parents "
            "(DistMatrix.from_csr and from_edges build them)",
            "a DistMatrix without them",
        )
    V.optional_flag(device_loop, "device_loop")
    edges_total = A.nvals
    if edges_total is None and not isinstance(steps, str):  # a DistMatrix made by hand
        edges_total = comm.allreduce_sum(len(A.indices))
    log = _Levels(A, steps)
    resolved = _direction.resolve(direction)
    graphed = _device_loop(
        A,
        ("bitmap_bfs_loop", parents, resolved),
        lambda: _Graphed(A, parents, resolved, edges_total or 0),
        device_loop,
    )
    if graphed is not None:
        levels, tree = graphed.run(source, depth_limit, None if stats is None else log)
        if stats is not None:
            log.report(stats)
            stats["loop"] = "device"
        if not parents:
            return _result(A, levels, gather)
        return _result(A, levels, gather), _result(A, tree, gather)
    search = _Search(A, parents)
    log.start()
    found, edges = comm.allreduce_sums(search.start(source))
    depth = 0
    while depth_limit is None or depth < depth_limit:
        depth += 1
        if isinstance(steps, str):
            way = steps
        else:  # the same choice on every rank: from sums over all of them
            way = steps.choose(
                frontier_vertices=found,
                frontier_edges=edges,
                edges=edges_total,
                n=n,
                early_exit=True,
            )
        mine = search.pull(depth) if way == "pull" else search.push(depth, found)
        search.advance(mine[0])
        # the next direction, and the end (the device steps' tally summed where it lies)
        found, edges = comm.allreduce_sums(mine)
        log.end(found)
        if found == 0:
            break
        log.start()
    log.report(stats)
    if stats is not None:
        stats["loop"] = "host"
    if not parents:
        return _result(A, search.levels, gather)
    return _result(A, search.levels, gather), _result(A, search.parents, gather)


# ------------------------------------------------------------------ as a method of gbla.bfs
def _one_rank(A):
    """A gbla.Matrix as a DistMatrix of one rank over the matrix's own arrays (none copied;
    the in-edges from A.T, which A builds once and keeps), made once and kept with A (with
    what the searches keep on it: a GPU's level loop)."""
    if "one_rank" not in A._cache:
        A._cache["one_rank"] = _as_one_rank(A)
    return A._cache["one_rank"]


def _as_one_rank(A):
    T = A.T
    return DistMatrix(
        SelfComm(B.xp_of(A.device)),
        [0, A.nrows],
        A._indptr,
        A._indices,
        None,
        A.nrows,
        transpose=(T._indptr, T._indices, None),
        nvals=A.nvals,
    )


def _run(A, source, *, return_parents, depth_limit, direction, stats):
    """gbla.bfs's ``distributed_bitmap``: a DistMatrix as it is cut, a gbla.Matrix as one
    rank; levels and parents of gbla.bfs's dtype (int32, int64 from 2**31 vertices)."""
    if not isinstance(A, DistMatrix):  # the registry let no other partitioned matrix in
        A = _one_rank(A)
    out = bitmap_bfs(
        A,
        source,
        return_predecessors=return_parents,
        depth_limit=depth_limit,
        direction=direction,
        stats=stats,
    )
    dtype = np.int32 if A.n < 2**31 else np.int64
    if not return_parents:
        return out.astype(dtype, copy=False)
    return tuple(x.astype(dtype, copy=False) for x in out)


methods.register(
    methods.Method(
        "distributed_bitmap",
        "bfs",
        "direction-optimizing BFS over rows cut over ranks (a "
        "DistMatrix; a Matrix as one rank) with bitmap frontiers: a push's bits go to their owners "
        "in one all-to-all, a pull gathers the frontier's bits; distributed.cu on the GPU; on the "
        "CPU a pull expands every unvisited vertex's in-edges at once (int64 edge ids, rows and "
        "sources: 6x to 10x a graph of int32 ids), and a Matrix's in-edges are its transpose, "
        "built once and kept",
        _run,
        devices=("cpu", "gpu"),
        directions=True,
        partitioned=("DistMatrix",),
    )
)
