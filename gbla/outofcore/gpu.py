"""The GPU side of the out-of-core traversals: the vertex arrays stay on the device, the edges
come over the bus as the :class:`~.schedule.Scheduler` plans, on a copy stream of their own,
so that the copy of one subgraph runs while the kernels of outofcore.cu work on the one before.

Each level (BFS) or round (SSSP) the device selects the frontier grouped by subgraph with each
subgraph's active count and out-degree sum, and only those two small arrays come back (the
plan needs them; a compacted batch also needs its vertices' ids). Then, per planned step:

- ``resident``: the kernel reads the subgraph the device already holds;
- ``whole``: its row pointers and edges are copied from pinned host memory into a buffer of
  its own (kept while the scheduler keeps it) or, when not kept, into a staging half;
- ``compact``: under the differential scheme, the kernel reads the active vertices' edges in
  place from mapped pinned memory: the bytes a compacted batch would send, read at about the
  copy's bandwidth (50.6 GB/s measured against 54.9), without the host's gather, the round
  trip for the vertices' ids, or staging memory; under the Subway-like ``compact`` strategy,
  as Subway does, the host gathers them into a pinned staging half, copied into the device's
  twin half, batches larger than a half in several, the two halves alternating so that the
  host fills one while the other is copied or read;
- ``zerocopy``: the kernel reads the pinned host arrays in place (EMOGI-like).

Strategy ``managed`` (CUDA managed memory with prefetch hints) reads the graph from copies of
its arrays in managed memory instead, made once per graph (kept on the HostGraph) and only
when they fit in the device's free memory (else :class:`~.schedule.MemoryBudgetError`: managed
memory is never asked for beyond it), advised to live on the host and to be read in place by
the device. Each level the subgraphs the scheduler evicts are prefetched back to the host and
those it makes resident (``prefetch`` steps) to the device, on the copy stream, the kernels
waiting for them; every kernel reads the managed arrays at their own addresses, in device
memory where a subgraph is resident, over the bus where it is not. A resident's pages are
whole pages of :data:`MANAGED_PAGE` bytes (what the scheduler counts them as), and when the
search ends every one goes back to the host. It needs cuda-bindings (the prefetch and advice
calls) and a device with concurrent managed access, else it is refused.

A BFS under the differential scheme runs its levels on the device once its plan settles (a
level that sent nothing whole, past its first :data:`DEVICE_AFTER`): the residents fixed, every
other active subgraph read in place, each level's count by subgraph, the plan's decision and
its walk queued in CUDA graphs of :data:`DEVICE_BATCH` levels that stop themselves where the
search ends or where a level would send a subgraph whole, the host reading only where a batch
stopped (one read a batch, not two round trips a level). That level goes back to the host's
plan; the accounts are the same as the host's plan would keep. The frontier is a list: the
span's first level's from one pass over the levels, each next level's appended by the walk
that reaches it, so a level costs its frontier, not a pass over every vertex.

An SSSP runs its rounds there the same way, its frontier a list too: a round relaxes the
vertices its list holds and lists, for the next round, each vertex it lowers below the bucket's
end (once: a pending mark says whether it is listed). A round whose list is empty moves the
bucket on on the device (the smallest pending distance, then the end of the bucket that holds
it, as the host computes it, then the pending vertices below it listed: one pass over the
vertices, in a few of a search's rounds); a Bellman-Ford round past the n-th stops the batch
and the host raises the negative cycle. Where several threads lower one vertex in a round,
which round relaxes what depends on their order, on the device as on the host's plan, so only
a graph whose vertices are lowered once (a tree) has the CPU schedule's accounts exactly.

Device memory: the vertex arrays (:func:`vertex_bytes`, the device levels' words among them,
made at their first use), the staging buffer and the residents (or the prefetched pages), all
within the budget; nothing else is allocated while the search runs.
"""

import ctypes

import numpy as np

from .. import _validation as V
from .._backend import _cupy
from .._storage import expand_rows
from ..kernels import _outofcore as K
from .schedule import STAGING_ALIGN, MemoryBudgetError, page_spans, plan_graph

__all__ = ["bfs", "sssp", "vertex_bytes", "heavy_chunks", "MANAGED_PAGE", "HEAVY_CHUNK"]

ALIGN = STAGING_ALIGN  # bytes: each region of a buffer starts aligned for its loads
GRANULE = 512  # bytes: CuPy's pool rounds every allocation up to a multiple of this
ALLOCATIONS = 16  # the most arrays a search allocates besides its residents
# bytes: the unit strategy 'managed' prefetches and evicts, from page-aligned arrays. The
# driver migrates host pages (4 KiB) but backs managed memory on the device in chunks up to the
# GPU's 64 KiB large page; whole 64 KiB pages keep what the device holds to what the budget
# counts
MANAGED_PAGE = 64 * 1024
CONCURRENT_MANAGED_ACCESS = 89  # cudaDevAttrConcurrentManagedAccess
# edges: a frontier vertex of more has the rest of its edges walked in chunks of this many by
# warps all over the grid (0: a warp walks a vertex's every edge)
HEAVY_CHUNK = 256
# levels: a batch of BFS levels (SSSP rounds) on the device, one CUDA graph launch and one read
# of where it stopped; a span's first batch before the graph is captured, launched one kernel
# at a time (a search of a few levels on the device pays no capture)
DEVICE_BATCH = 32
EAGER_BATCH = 4  # even, as DEVICE_BATCH: SSSP's two lists alternate round by round
# levels: the host plans a search's first this many (a search of a few levels, R-MAT's seven,
# gains nothing from the device's batches, and its first levels make the residents anyway)
DEVICE_AFTER = 8


def heavy_chunks(graph):
    """The most chunks a walk of ``graph``'s frontier can queue (kept with the graph)."""
    chunk = HEAVY_CHUNK
    return graph.derived(
        ("heavy chunks", chunk), lambda: K.Chunks.capacity_of(graph.degrees, chunk)
    )


def vertex_bytes(n, parts, *, parents=False, dist_dtype=None, chunks=0):
    """Device bytes of a search's vertex arrays (BFS levels and parents, or SSSP distances,
    pending marks and the device rounds' second list; the out-degrees; the frontier grouped by
    subgraph; the queue of ``chunks`` heavy vertices' chunks, :func:`heavy_chunks`) and the
    pool's rounding of every allocation it can make, a resident subgraph's (one buffer each)
    included: what the budget holds besides the staging and the residents."""
    own = _DeviceLevels.nbytes(parts) + (
        4 * n + (4 * n if parents else 0)
        if dist_dtype is None
        else (np.dtype(dist_dtype).itemsize + 1 + 4) * n + 8
    )
    rounding = GRANULE * (ALLOCATIONS + parts) + 3 * ALIGN * parts
    return own + 4 * n + K.Groups.nbytes(n, parts) + K.Chunks.nbytes(chunks) + rounding


def _align(nbytes):
    return -(-int(nbytes) // ALIGN) * ALIGN


def _h2d(cp, dst, src, nbytes, stream):
    """An asynchronous copy of ``nbytes`` from host address ``src`` to device address ``dst``."""
    if nbytes:
        cp.cuda.runtime.memcpyAsync(
            dst, src, nbytes, cp.cuda.runtime.memcpyHostToDevice, stream.ptr
        )


def _mapped(cp, a):
    """A device view of a pinned host array: kernels read it over the bus (unified addressing
    maps pinned memory at the same address)."""
    if a is None:
        return None
    mem = cp.cuda.UnownedMemory(a.ctypes.data, a.nbytes, a, device_id=cp.cuda.Device().id)
    return cp.ndarray(a.shape, a.dtype, cp.cuda.MemoryPointer(mem, 0))


# ---- strategy 'managed'


def _free_bytes(cp):
    """The current device's free memory, what managed memory is checked against."""
    return int(cp.cuda.Device().mem_info[0])


def _has_concurrent_managed_access(cp, device):
    return bool(cp.cuda.runtime.deviceGetAttribute(CONCURRENT_MANAGED_ACCESS, device))


def _cudart(cp, device):
    """cuda.bindings' runtime module; InvalidValue, naming why, where strategy 'managed'
    cannot run."""
    try:
        from cuda.bindings import runtime as cudart
    except ImportError:
        raise V.invalid_value(
            "strategy",
            "not be 'managed' without the cuda-bindings package "
            "(its runtime module makes the prefetch and advice calls)",
            "managed",
        ) from None
    if not _has_concurrent_managed_access(cp, device):
        raise V.invalid_value(
            "strategy",
            f"not be 'managed' on device {device}, which has no concurrent managed "
            "access (cudaDevAttrConcurrentManagedAccess is 0: it can neither read managed "
            "memory in host memory nor be prefetched to)",
            "managed",
        )
    return cudart


def _call(cudart, name, *args):
    """cudart's ``name`` on ``args``, its error code checked. The calls that take a
    cudaMemLocation are named ``<name>_v2`` in cuda-bindings 12 and ``<name>`` in 13."""
    function = getattr(cudart, name + "_v2", None) or getattr(cudart, name)
    result = function(*args)
    err = result[0] if isinstance(result, tuple) else result
    if err != cudart.cudaError_t.cudaSuccess:
        raise RuntimeError(f"{name} failed: {err!r}")


def _location(cudart, device):
    """A cudaMemLocation: the host (``device`` None) or the device of that ordinal."""
    where = cudart.cudaMemLocation()
    kind = cudart.cudaMemLocationType
    where.type = kind.cudaMemLocationTypeHost if device is None else kind.cudaMemLocationTypeDevice
    where.id = 0 if device is None else device  # ignored for the host
    return where


def _pages(nbytes):
    return -(-int(nbytes) // MANAGED_PAGE)


def _managed_bytes(a):
    """What a managed copy of ``a`` asks for: whole pages, at least one (cudaMallocManaged
    takes no empty size), and one more to start on a page wherever the allocation starts."""
    return (max(_pages(a.nbytes), 1) + 1) * MANAGED_PAGE


def _managed_copy(cp, cudart, a, device):
    """A copy of host array ``a`` in managed memory, starting on a page (a prefetch of whole
    pages stays inside it), advised to live on the host and to be read by ``device`` in place
    (mapped, so that reading a page neither faults nor migrates it)."""
    size = _managed_bytes(a)
    memory = cp.cuda.malloc_managed(size)
    start = cp.cuda.MemoryPointer(memory.mem, -memory.ptr % MANAGED_PAGE)
    advice = cudart.cudaMemoryAdvise
    _call(
        cudart,
        "cudaMemAdvise",
        memory.ptr,
        size,
        advice.cudaMemAdviseSetPreferredLocation,
        _location(cudart, None),
    )
    _call(
        cudart,
        "cudaMemAdvise",
        memory.ptr,
        size,
        advice.cudaMemAdviseSetAccessedBy,
        _location(cudart, device),
    )
    # written by the host: its first touch places the pages in host memory, their home
    ctypes.memmove(start.ptr, np.ascontiguousarray(a).ctypes.data, a.nbytes)
    return cp.ndarray(a.shape, a.dtype, start)


def _managed_arrays(cp, cudart, graph, weights, device):
    """(row pointers, ids, ``weights`` or None) of ``graph`` in managed memory for ``device``:
    copied at the first search that needs them, kept on the graph for the next ones.

    Raises MemoryBudgetError, before asking for any, when the bytes still to copy exceed the
    device's free memory: managed memory is never asked for beyond it."""
    named = {("indptr", device): graph.indptr, ("indices", device): graph.indices}
    if weights is not None:
        named[("weights", weights.dtype.str, device)] = weights
    missing = {key: a for key, a in named.items() if key not in graph._managed}
    needed = sum(_managed_bytes(a) for a in missing.values())
    if needed:
        free = _free_bytes(cp)
        if needed > free:
            raise MemoryBudgetError(
                V.message(
                    "the GPU's free memory",
                    f"hold the graph's {needed} bytes of managed memory "
                    "(strategy 'managed' never asks for more than is free)",
                    free,
                )
            )
    for key, a in missing.items():
        graph._managed[key] = _managed_copy(cp, cudart, a, device)
    arrays = [graph._managed[key] for key in named]
    return arrays[0], arrays[1], arrays[2] if weights is not None else None


class _Managed:
    """Strategy 'managed' on the device: the graph's managed arrays, the pages each subgraph's
    ranges take in them (:func:`~.schedule.page_spans`) and the ones on the device now.
    ``users[k][p]``: the resident subgraphs whose ranges take page p of array k; a page goes to
    the device with its first user and back to the host with its last, so that two residents
    sharing a page at their boundary both keep it."""

    def __init__(self, cp, graph, part, weights, stream):
        device = cp.cuda.Device().id
        self.cudart = _cudart(cp, device)
        self.arrays = _managed_arrays(cp, self.cudart, graph, weights, device)
        present = [a for a in self.arrays if a is not None]
        self.spans = page_spans(part, MANAGED_PAGE, [a.itemsize for a in present[1:]])
        self.bases = [a.data.ptr for a in present]
        self.users = [np.zeros(max(_pages(a.nbytes), 1), np.int32) for a in present]
        self.stream = stream
        self.host, self.device = _location(self.cudart, None), _location(self.cudart, device)
        self.pages = self.peak = 0  # on the device now, at most

    def fetch(self, i):
        """Queue subgraph i's pages to the device."""
        for k, (first, end) in enumerate(self.spans[i].tolist()):
            if end > first:
                users = self.users[k][first:end]
                self.pages += int(np.count_nonzero(users == 0))
                users += 1
                self._move(k, first, end, self.device)
        self.peak = max(self.peak, self.pages)

    def evict(self, subgraphs):
        """Queue the pages of ``subgraphs`` that no other resident takes back to the host."""
        for i in subgraphs:
            for k, (first, end) in enumerate(self.spans[i].tolist()):
                if end > first:
                    users = self.users[k][first:end]
                    users -= 1
                    # contiguous: only the end pages of a range can be another's too
                    alone = np.flatnonzero(users == 0)
                    if len(alone):
                        self.pages -= len(alone)
                        self._move(k, first + int(alone[0]), first + int(alone[-1]) + 1, self.host)

    def _move(self, k, first, end, where):
        _call(
            self.cudart,
            "cudaMemPrefetchAsync",
            self.bases[k] + first * MANAGED_PAGE,
            (end - first) * MANAGED_PAGE,
            where,
            0,
            self.stream.ptr,
        )

    @property
    def peak_bytes(self):
        return self.peak * MANAGED_PAGE


class _Run:
    """One search's transfers: the residents, the staging halves, the copy stream and the
    events that order the copies (and prefetches) against the kernels, and the time spent
    copying."""

    def __init__(self, cp, graph, part, scheduler, weights):
        self.cp, self.graph, self.part, self.scheduler = cp, graph, part, scheduler
        self.weights = weights  # pinned host weights in the distances' dtype, or None
        self.degrees = cp.asarray(graph.degrees_int32())  # the value of a frontier vertex
        self.compute = cp.cuda.get_current_stream()
        self.copy = cp.cuda.Stream(non_blocking=True)
        self.groups = K.Groups(cp, part.vertex_bounds, graph.n)
        capacity = heavy_chunks(graph)
        self.chunks = K.Chunks(cp, HEAVY_CHUNK, capacity) if capacity else None
        self.held = {}
        half = scheduler.staging // 2 // ALIGN * ALIGN
        self.half = half
        self.device_halves = [cp.empty(half, np.uint8) for _ in range(2)] if half else []
        import cupyx  # the GPU path only

        self.host_halves = [cupyx.empty_pinned(half, np.uint8) for _ in range(2)] if half else []
        self.copied = [None, None]  # the last copy out of each pinned half
        self.used = [None, None]  # the last kernel that read each device half
        self.turn = 0
        self.settled = False  # the last level's plan sent nothing whole (levels on the device)
        self.visit = {}  # the level's walk: what an edge does (level's arguments)
        self.timings = []  # (start, end) events of each copy
        self.mapped = None
        self.managed = (
            _Managed(cp, graph, part, weights, self.copy)
            if scheduler.strategy == "managed"
            else None
        )

    # ---- the frontier

    def select(self, **pred):
        """(count, value, offset) host arrays of the frontier pred selects, listed in
        ``groups.ids`` by subgraph; None when it is empty."""
        g, n = self.groups, self.graph.n
        g.tally.fill(0)
        K.select(g, self.degrees, n, fill=False, **pred)
        count, value = g.tally.get().astype(np.int64)  # sync: the plan needs both
        if not count.any():
            return None
        offset = np.concatenate([[0], np.cumsum(count)])
        g.offset.set(offset)
        g.cursor.fill(0)
        K.select(g, self.degrees, n, fill=True, **pred)
        return count, value, offset

    # ---- one level

    def level(self, selected, **visit):
        """Plan the level of ``selected`` and walk its frontier's edges wherever the plan puts
        them: ``visit`` says what an edge does (:func:`~gbla.kernels._outofcore.expand`'s
        BFS or SSSP arguments). The blocks read in place, resident or just made so go to one
        launch for the level; those that pass through a staging half, one launch each."""
        count, value, offset = selected
        self.visit = visit
        # the last level's table was copied: select waited for the compute stream
        self.groups.clear()
        steps = self.scheduler.plan(value, count)
        self.settled = all(step.kind in ("resident", "compact") for step in steps)
        evicted = [i for i in self.held if i not in self.scheduler.resident]
        for i in evicted:
            del self.held[i]  # evicted: the last level's kernels are done (select synced)
        if self.managed is not None:
            self._managed_level(steps, evicted, offset)
            return
        staged = self.scheduler.staging > 0  # else compacted steps are read in place
        ids = None
        if staged and any(step.kind == "compact" for step in steps):
            ids = self.groups.ids[: int(offset[-1])].get()  # sync: the batches' vertices
        for step in steps:
            i = step.subgraph
            if step.kind == "zerocopy" or (step.kind == "compact" and not staged):
                self.put_in_place(i)
            elif step.kind == "compact":
                verts = self.groups.ids[int(offset[i]) : int(offset[i + 1])]
                self._compact(verts, ids[int(offset[i]) : int(offset[i + 1])])
            else:
                self._whole(i, offset)
        self._walk_level(int(offset[-1]))

    def put_in_place(self, i):
        """Subgraph i's row of the level's table: the host CSR read in place."""
        if self.mapped is None:
            g = self.graph
            self.mapped = tuple(_mapped(self.cp, a) for a in (g.indptr, g.indices, self.weights))
        indptr, indices, weights = self.mapped
        self.groups.put(i, indptr, 0, indices, weights, 0)

    def put_resident(self, i):
        """Subgraph i's row of the level's table: its copy the device holds."""
        p = self.part
        indptr, indices, weights = self.held[i]
        self.groups.put(i, indptr, int(p.edge_bounds[i]), indices, weights, int(p.vertex_bounds[i]))

    def levels_in_place(self):
        """Whether the plan reads every step that is not whole in place (the differential
        scheme without staging, not 'managed'): what the levels on the device reproduce."""
        s = self.scheduler
        return s.strategy == "differential" and s.staging == 0 and self.managed is None

    def _walk_level(self, total):
        """The level's launch over the blocks :meth:`Groups.put` listed."""
        g = self.groups
        if g.rows[:, 0].any():
            K.expand_level(g, total, self.graph.indices.dtype, chunks=self.chunks, **self.visit)

    def _walk_one(self, verts, offsets, base, targets, weights, lo, by_position):
        """One block's launch (a staging half's, which the next copy may overwrite)."""
        K.expand(
            verts,
            offsets,
            base,
            targets,
            lo,
            by_position,
            chunks=self.chunks,
            weights=weights,
            **self.visit,
        )

    def _managed_level(self, steps, evicted, offset):
        """Strategy 'managed': the evicted subgraphs' pages back to the host, the level's
        prefetches queued, then one launch (waiting for them) over the managed arrays at their
        own addresses."""
        m = self.managed
        if evicted:  # before any prefetch: the device never holds more than the budget's
            self._timed(m.evict, evicted)
        indptr, indices, weights = m.arrays
        for step in steps:
            i = step.subgraph
            if step.kind == "prefetch":
                self._timed(m.fetch, i)
                self.held[i] = None
            self.groups.put(i, indptr, 0, indices, weights, 0)
        self._ready()
        self._walk_level(int(offset[-1]))

    def close(self):
        """The search is over: the scheduler releases its residents; under 'managed' their
        pages go back to the host, after the last kernels, before the search returns."""
        self.scheduler.release()
        if self.managed is not None and self.held:
            self.copy.wait_event(self.compute.record())
            self._timed(self.managed.evict, list(self.held))
            self.held.clear()
            self.copy.synchronize()  # sync: the next search's budget starts from no page held

    def _timed(self, queue, *args):
        """``queue(*args)``: work queued on the copy stream (copies, prefetches), timed."""
        start, end = self.cp.cuda.Event(), self.cp.cuda.Event()
        start.record(self.copy)
        queue(*args)
        end.record(self.copy)
        self.timings.append((start, end))

    def _copy(self, dst, src, nbytes):
        """Queue a copy on the copy stream, timed."""
        if nbytes:
            self._timed(_h2d, self.cp, dst, src, nbytes, self.copy)

    def _ready(self):
        """The compute stream waits for the copies queued so far."""
        self.compute.wait_event(self.copy.record())

    def _whole(self, i, offset):
        cp, g, p = self.cp, self.graph, self.part
        lo, hi = int(p.vertex_bounds[i]), int(p.vertex_bounds[i + 1])
        e0, e1 = int(p.edge_bounds[i]), int(p.edge_bounds[i + 1])
        if i in self.held:
            indptr, indices, weights = self.held[i]
        else:
            keep = i in self.scheduler.resident
            shapes = [(hi - lo + 1, np.int64), (e1 - e0, g.indices.dtype)]
            if self.weights is not None:
                shapes.append((e1 - e0, self.weights.dtype))
            if keep:  # one allocation: the pool rounds it up once
                arrays = self._carve(
                    cp.empty(
                        sum(_align(size * np.dtype(dtype).itemsize) for size, dtype in shapes),
                        np.uint8,
                    ),
                    shapes,
                )
            else:  # GraphCage-like: through a staging half, never kept
                h = self._take_half()
                arrays = self._carve(self.device_halves[h], shapes)
            sources = [g.indptr[lo : hi + 1], g.indices[e0:e1]]
            if self.weights is not None:
                sources.append(self.weights[e0:e1])
            for dst, src in zip(arrays, sources):
                self._copy(dst.data.ptr, src.ctypes.data, src.nbytes)
            self._ready()
            indptr, indices = arrays[0], arrays[1]
            weights = arrays[2] if self.weights is not None else None
            if keep:
                self.held[i] = (indptr, indices, weights)
            else:
                verts = self.groups.ids[int(offset[i]) : int(offset[i + 1])]
                self._walk_one(verts, indptr, e0, indices, weights, lo, False)
                self.used[h] = self.compute.record()
                return
        self.groups.put(i, indptr, e0, indices, weights, lo)

    def _take_half(self):
        """The staging half to fill next: its last copy out of pinned memory is done (the
        host may write it) and the copy stream waits for the last kernel that read it."""
        h = self.turn
        self.turn ^= 1
        if self.copied[h] is not None:
            self.copied[h].synchronize()  # sync: the pinned half is free to refill
        if self.used[h] is not None:
            self.copy.wait_event(self.used[h])
        return h

    @staticmethod
    def _carve(buffer, shapes):
        """Arrays of the given (size, dtype) laid out one after another in ``buffer``, each
        start aligned."""
        out, at = [], 0
        for size, dtype in shapes:
            nbytes = size * np.dtype(dtype).itemsize
            out.append(buffer[at : at + nbytes].view(dtype))
            at += _align(nbytes)
        return out

    def _compact(self, verts, ids):
        """The active vertices' edges gathered on the host, sent through the staging halves in
        batches that fit one."""
        g = self.graph
        degrees = g.degrees[ids]
        edge_bytes = self.part.edge_bytes
        regions = 3 if self.weights is not None else 2
        room = self.half - regions * ALIGN - 8  # the alignment padding, the first offset
        # batch [a, b): its offsets (8 bytes a vertex) and edges fill at most a half
        cost = np.cumsum(degrees * edge_bytes + 8)
        a = 0
        while a < len(ids):
            before = cost[a - 1] if a else 0
            b = max(a + 1, int(np.searchsorted(cost, before + room, side="right")))
            self._batch(verts[a:b], ids[a:b], degrees[a:b])
            a = b

    def _batch(self, verts, ids, degrees):
        g = self.graph
        edges = int(degrees.sum())
        if not edges:  # vertices without out-edges: nothing to send, nothing to read
            return
        shapes = [(len(ids) + 1, np.int64), (edges, g.indices.dtype)]
        if self.weights is not None:
            shapes.append((edges, self.weights.dtype))
        h = self._take_half()
        host = self._carve(self.host_halves[h], shapes)
        host[0][0] = 0
        np.cumsum(degrees, out=host[0][1:])
        position, _ = expand_rows(g.indptr, ids.astype(np.int64), np)
        np.take(g.indices, position, out=host[1])
        if self.weights is not None:
            np.take(self.weights, position, out=host[2])
        device = self._carve(self.device_halves[h], shapes)
        # the half's used prefix, from the layout (an empty region's address says nothing)
        end = sum(_align(size * np.dtype(dtype).itemsize) for size, dtype in shapes)
        self._copy(device[0].data.ptr, host[0].ctypes.data, end)
        self.copied[h] = self.copy.record()
        self._ready()
        self._walk_one(
            verts, device[0], 0, device[1], device[2] if self.weights is not None else None, 0, True
        )
        self.used[h] = self.compute.record()

    def transfer_ms(self):
        """Milliseconds the copy stream spent copying and prefetching (waits for the last)."""
        if not self.timings:
            return 0.0
        self.timings[-1][1].synchronize()  # sync: the copies' times
        return float(sum(self.cp.cuda.get_elapsed_time(s, e) for s, e in self.timings))


class _DeviceLevels:
    """BFS levels on the device while the plan stays settled (the module's docstring): the
    loop's control words, the levels' bytes and the subgraphs' facts in one device array
    (``state``, staged through a pinned twin), and the batch's CUDA graph, captured once a
    search at its first use."""

    def __init__(self, run, levels, parents, depth_limit):
        cp = run.cp
        import cupyx  # the GPU path only

        self.run, self.levels, self.parents = run, levels, parents
        self.parts = run.part.count
        self.words = K.LOOP_WORDS + DEVICE_BATCH  # the control words and the levels' bytes
        self.state = cp.zeros(self._length(self.parts), np.int64)
        self.host = cupyx.zeros_pinned(self._length(self.parts), np.int64)
        self.loop, self.facts = self.state[: self.words], self.state[self.words :]
        s = run.scheduler
        self.host[self.words : self.words + self.parts] = s.sizes
        self.host[self.words + self.parts : self.words + 2 * self.parts] = s.edges
        self.limit = -1 if depth_limit is None else int(depth_limit)
        self.plan = (s.whole_ratio, run.part.edge_bytes, run.part.index_bytes)
        self.graph = None
        self.ran = 0  # levels run on the device, over the search

    @staticmethod
    def _length(parts):
        return K.LOOP_WORDS + DEVICE_BATCH + 3 * parts

    @staticmethod
    def nbytes(parts):
        """Device bytes of a search's ``state`` (within :func:`vertex_bytes`)."""
        return 8 * _DeviceLevels._length(parts)

    def run_from(self, want):
        """Levels from level ``want`` on the device until the search ends or a level needs the
        host's plan: (the level the host takes next, whether the search is over). The
        scheduler's accounts gain what its plan would have counted for the levels run."""
        h = self._span({K.WANT: want, K.LIMIT: self.limit})
        return int(h[K.WANT]), int(h[K.STOP]) == 2

    def _span(self, words):
        """Run batches from the control ``words`` given (the others zero) until one stops; the
        host's copy of the words, read back."""
        run, s, cp, h = self.run, self.run.scheduler, self.run.cp, self.host
        g = run.groups
        g.clear()
        for i in range(self.parts):
            if i in run.held:
                run.put_resident(i)
            else:
                run.put_in_place(i)
        g.send()
        h[: K.LOOP_WORDS] = 0
        for k, v in words.items():
            h[k] = v
        h[K.FREE], h[K.CAPACITY] = s.capacity - s.resident_bytes, s.capacity
        h[self.words + 2 * self.parts :] = [int(i in s.resident) for i in range(self.parts)]
        stream = run.compute
        _copy_sync(cp, self.state.data.ptr, h.ctypes.data, h.nbytes, stream, to_device=True)
        self._start()
        acc = s.accounts
        first = True
        while True:
            if self.graph is None and first:
                K.loop_batch(self.loop)
                for j in range(EAGER_BATCH):
                    self._level(j)
            else:
                if self.graph is None:
                    self.graph = self._capture()
                self.graph.launch(stream)
            first = False
            # sync: where the batch stopped, and its levels' bytes
            _copy_sync(cp, self.state.data.ptr, h.ctypes.data, 8 * self.words, stream)
            ran = int(h[K.RUN])
            self.ran += ran
            acc.iterations += ran
            acc.per_iteration.extend(h[K.LOOP_WORDS : K.LOOP_WORDS + ran].tolist())
            if h[K.STOP]:
                break
        acc.h2d_bytes += int(h[K.H2D])
        acc.compact += int(h[K.COMPACT])
        acc.resident_hits += int(h[K.HITS])
        if h[K.STOP] == 1:  # the level at hand goes to the host's plan
            run.settled = False
        return h

    def _capture(self):
        """The batch: its start, then DEVICE_BATCH levels, captured into one CUDA graph (the
        kernels loaded first: nothing is loaded while capturing)."""
        run = self.run
        K.loop_kernels(run.graph.indices.dtype, run.chunks)
        capture = run.cp.cuda.Stream(non_blocking=True)
        with capture:
            capture.begin_capture()
            try:
                K.loop_batch(self.loop)
                for j in range(DEVICE_BATCH):
                    self._level(j)
            finally:
                graph = capture.end_capture()
        return graph

    def _start(self):
        """Enqueue the span's first level's list (:func:`~gbla.kernels._outofcore.loop_list`):
        each level then lists the next as it reaches it."""
        K.loop_list(self.run.groups, self.run.graph.n, self.loop, self.levels)

    def _level(self, j):
        """Enqueue one level (:func:`~gbla.kernels._outofcore.loop_level`), the batch's j-th."""
        K.loop_level(
            *self._loop_args(), levels=self.levels, parents=self.parents, chunks=self.run.chunks
        )

    def _loop_args(self):
        """What a level's (a round's) enqueue starts with: the groups, the out-degrees, n, the
        control words, the subgraphs' facts, the plan and the edges' id dtype."""
        run = self.run
        g = run.graph
        return run.groups, run.degrees, g.n, self.loop, self.facts, self.plan, g.indices.dtype


class _DeviceRounds(_DeviceLevels):
    """SSSP rounds on the device, as :class:`_DeviceLevels` runs BFS levels: the pending
    vertices below the bucket's end relaxed a round at a time, the bucket moved on on the
    device (delta-stepping), the same hand-back to the host's plan."""

    def __init__(self, run, dist, pending, delta):
        super().__init__(run, None, None, None)
        self.dist, self.pending, self.delta = dist, pending, delta
        self.bits = np.uint32 if dist.dtype.itemsize == 4 else np.uint64
        # the rounds' two lists, a round's own and the next's by the round's parity in its
        # batch (every batch's first round reads the first: EAGER_BATCH, DEVICE_BATCH even)
        self.lists = (run.groups.ids, run.cp.empty(max(run.graph.n, 1), np.int32))

    def run_from(self, rounds, top):
        """Rounds on the device from the host's ``rounds`` and bucket end ``top`` until the
        search ends or a round needs the host's plan: (rounds, top, 0 go on with the host,
        2 done, 3 a Bellman-Ford round past the n-th: a negative cycle)."""
        t = self.dist.dtype.type
        h = self._span(
            {
                K.LIMIT: -1,
                K.ROUNDS: rounds,
                K.TOP: self._word(t(top)),
                K.LEAST: self._word(t(np.inf)),
            }
        )
        top = np.array([h[K.TOP]], np.int64).view(np.uint64).astype(self.bits).view(t)[0]
        stop = int(h[K.STOP])
        return int(h[K.ROUNDS]), top, 0 if stop == 1 else stop

    def _word(self, value):
        """A T's bits as an int64 control word (a float's in the low half)."""
        return int(np.array([value]).view(self.bits)[0])

    def _start(self):
        """Enqueue the span's first round's list (the pending vertices below the bucket's end)."""
        K.loop_list_pending(self.run.graph.n, self.loop, self.dist, self.pending, self.lists[0])

    def _level(self, j):
        K.loop_round(
            *self._loop_args(),
            lists=(self.lists[j % 2], self.lists[1 - j % 2]),
            dist=self.dist,
            pending=self.pending,
            delta=self.delta,
            chunks=self.run.chunks,
        )

    def _capture(self):
        K.loop_round_kernels(self.run.graph.indices.dtype, self.dist.dtype, self.run.chunks)
        return super()._capture()


def _copy_sync(cp, device, host, nbytes, stream, to_device=False):
    """A copy between device and pinned host memory on ``stream``; from the device, waited
    for."""
    rt = cp.cuda.runtime
    if to_device:
        rt.memcpyAsync(device, host, nbytes, rt.memcpyHostToDevice, stream.ptr)
    else:
        rt.memcpyAsync(host, device, nbytes, rt.memcpyDeviceToHost, stream.ptr)
        stream.synchronize()


def _setup(graph, budget, strategy, parts, part_bytes, weights, fixed_of, tuning):
    if strategy == "managed":  # a resident takes the whole pages a prefetch moves
        tuning = dict(tuning, page_bytes=MANAGED_PAGE)
    return plan_graph(
        graph,
        budget,
        strategy=strategy,
        fixed_of=fixed_of,
        parts=parts,
        part_bytes=part_bytes,
        weights=weights,
        double_buffer=True,
        compact_in_place=True,
        **tuning,
    )


def _finish(run, part, scheduler, stats, **more):
    if stats is not None:
        if run.managed is not None:
            more["prefetched_peak_bytes"] = run.managed.peak_bytes
        stats.update(
            scheduler.accounts.as_dict(),
            subgraphs=part.count,
            graph_bytes=int(part.nbytes().sum()),
            transfer_ms=run.transfer_ms(),
            **more,
        )


def bfs(
    graph,
    source,
    *,
    memory_budget,
    strategy="differential",
    parts=None,
    part_bytes=None,
    return_parents=False,
    depth_limit=None,
    stats=None,
    **tuning,
):
    """:func:`gbla.outofcore.bfs` on the GPU (the same arguments and results; int32
    parents). ``stats["device_levels"]``: the levels run on the device (the module's
    docstring), the others planned on the host."""
    cp = _cupy()
    n = graph.n
    source = V.source(source, n)
    part, scheduler = _setup(
        graph,
        memory_budget,
        strategy,
        parts,
        part_bytes,
        None,
        lambda count: vertex_bytes(n, count, parents=return_parents, chunks=heavy_chunks(graph)),
        tuning,
    )
    levels = cp.full(n, -1, np.int32)
    levels[source] = 0
    parents = None
    if return_parents:
        parents = cp.full(n, -1, np.int32)
        parents[source] = source
    run = _Run(cp, graph, part, scheduler, None)
    # made at its first use: its pinned words cost a search that never goes to the device
    device, in_place = None, run.levels_in_place()

    want = 0
    try:
        while depth_limit is None or want < depth_limit:
            if in_place and run.settled and want >= DEVICE_AFTER:
                if device is None:
                    device = _DeviceLevels(run, levels, parents, depth_limit)
                want, done = device.run_from(want)
                if done:
                    break
            selected = run.select(levels=levels, want=want)
            if selected is None:
                break
            depth = want + 1
            run.level(selected, levels=levels, depth=depth, parents=parents)
            want = depth
    finally:
        run.close()  # 'managed': the pages back to the host, even after an error
    _finish(run, part, scheduler, stats, levels=want, device_levels=device.ran if device else 0)
    return levels if parents is None else (levels, parents)


def sssp(
    graph,
    source,
    *,
    memory_budget,
    dtype=np.float64,
    strategy="differential",
    parts=None,
    part_bytes=None,
    delta=None,
    stats=None,
    **tuning,
):
    """:func:`gbla.outofcore.sssp` on the GPU (the same results), ``delta`` already resolved:
    None (Bellman-Ford rounds) or a positive bucket width. ``stats["device_levels"]``: the
    rounds run on the device (the module's docstring)."""
    cp = _cupy()
    n = graph.n
    source = V.source(source, n)
    dtype = np.dtype(dtype)
    weights = graph.weights_as(dtype)
    part, scheduler = _setup(
        graph,
        memory_budget,
        strategy,
        parts,
        part_bytes,
        weights,
        lambda count: vertex_bytes(n, count, dist_dtype=dtype, chunks=heavy_chunks(graph)),
        tuning,
    )
    dist = cp.full(n, np.inf, dtype)
    dist[source] = 0
    pending = cp.zeros(-(-n // 4) * 4, np.uint8)[:n]  # whole 4-byte words (the device's marks)
    pending[source] = 1
    least = cp.empty(1, dtype)
    run = _Run(cp, graph, part, scheduler, weights)

    top = dtype.type(np.inf if delta is None else delta)  # the lowest bucket's end
    rounds = 0
    device, in_place = None, run.levels_in_place()  # rounds on the device, as BFS's levels
    try:
        while True:
            if in_place and run.settled and rounds >= DEVICE_AFTER:
                if device is None:
                    device = _DeviceRounds(run, dist, pending, delta)
                rounds, top, stop = device.run_from(rounds, top)
                if stop == 3:
                    raise V.negative_cycle(n)
                if stop == 2:
                    break
            selected = run.select(pending=pending, dist=dist, top=top)
            if selected is None:
                if delta is None:
                    break
                least.fill(np.inf)
                K.pending_min(pending, dist, least)
                m = least.get()[0]  # sync: the next bucket
                if not np.isfinite(m):
                    break
                top = max(
                    dtype.type((np.floor(m / delta) + 1) * delta),
                    np.nextafter(m, dtype.type(np.inf)),
                )
                continue
            rounds += 1
            if delta is None and rounds > n:
                raise V.negative_cycle(n)
            run.level(selected, dist=dist, pending=pending)
    finally:
        run.close()  # 'managed': the pages back to the host, even after an error
    _finish(
        run,
        part,
        scheduler,
        stats,
        iterations=rounds,
        delta=delta,
        device_levels=device.ran if device else 0,
    )
    return dist
