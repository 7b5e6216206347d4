"""BFS and SSSP over a graph kept in host memory, the device holding only the vertex arrays, a
staging buffer and the subgraphs the :class:`~.schedule.Scheduler` keeps resident.

Each iteration brings the frontier to the host (its ids: the plan needs each active
subgraph's value), asks the scheduler for the plan, and expands the frontier subgraph by
subgraph from wherever the plan puts the edges: a resident or just-sent (under 'managed',
just-prefetched) subgraph on the device, a compacted batch of the active vertices' edges, or
(zero-copy, and managed memory left on the host) the host arrays read in place. When the search
ends the scheduler releases its residents (:meth:`~.schedule.Scheduler.release`).
``xp`` is the array module of the "device": CuPy on the GPU, NumPy to run the same schedule on
the CPU (what the CPU tests check: results, accounts and the budget).
"""

import numpy as np

from .. import _backend as B
from .. import _validation as V
from .. import _weights
from .._storage import expand_rows
from . import gpu
from .schedule import plan_graph

__all__ = ["HostGraph", "bfs", "sssp"]


class HostGraph:
    """A CSR graph on the host (``indptr``, ``indices``, ``values`` or None for weight 1), cut
    into subgraphs on first use. On the GPU path its arrays should be pinned (page-locked) so
    that transfers run at the bus's speed."""

    def __init__(self, indptr, indices, values=None, *, pinned=False):
        self.indptr = np.asarray(indptr, np.int64)
        self.indices = np.asarray(indices)
        self.values = None if values is None else np.asarray(values)
        self.n = len(self.indptr) - 1
        self.degrees = np.diff(self.indptr)
        self.pinned = pinned
        self._converted = {}  # weights by dtype, int32 degrees: each converted once
        # the arrays in CUDA managed memory that strategy 'managed' reads, by array and device
        # (gpu._managed_arrays): copied at the first such search, kept for the next ones
        self._managed = {}

    @classmethod
    def of(cls, A):
        """The host CSR of a gbla Matrix (copied to the host when it is on the GPU)."""
        from .._backend import to_host

        return cls(
            to_host(A._indptr),
            to_host(A._indices),
            None if A._values is None else to_host(A._values),
        )

    def pin(self):
        """This graph with its arrays in pinned (page-locked) host memory, so that copies to the
        GPU run at the bus's speed (54.9 GB/s measured on the H100's host against 9.5 from
        pageable memory) and kernels can read them in place. Needs CuPy."""
        return HostGraph(
            _pinned(self.indptr), _pinned(self.indices), _pinned(self.values), pinned=True
        )

    def degrees_int32(self):
        """The out-degrees as int32, what the GPU's frontier kernels read (kept: see
        :meth:`_kept`)."""
        return self._kept("degrees", lambda: self.degrees.astype(np.int32))

    def weights_as(self, dtype):
        """The weights in ``dtype`` (None without weights; kept: see :meth:`_kept`)."""
        dtype = np.dtype(dtype)
        if self.values is None or self.values.dtype == dtype:
            return self.values
        return self._kept(dtype, lambda: self.values.astype(dtype))

    def derived(self, key, make):
        """``make()`` (anything made from this graph: a selection of its edges, its weights'
        facts), made once per key and kept with the graph, as a Matrix keeps its caches."""
        key = ("derived", key)
        if key not in self._converted:
            self._converted[key] = make()
        return self._converted[key]

    def _kept(self, key, make):
        """``make()``, made once per key (into pinned memory for a pinned graph) and kept."""
        if key not in self._converted:
            a = make()
            self._converted[key] = _pinned(a) if self.pinned else a
        return self._converted[key]

    @property
    def nbytes(self):
        return (
            self.indptr.nbytes
            + self.indices.nbytes
            + (0 if self.values is None else self.values.nbytes)
        )

    def edge_bytes(self, value_dtype=None):
        return self.indices.itemsize + (
            0 if self.values is None else np.dtype(value_dtype or self.values.dtype).itemsize
        )


def _pinned(a):
    """A copy of ``a`` in pinned host memory (None stays None)."""
    if a is None:
        return None
    import cupyx  # the GPU path only

    out = cupyx.empty_pinned(a.shape, a.dtype)
    out[...] = a
    return out


class _Device:
    """The subgraphs held on the device, kept in step with the scheduler's residents."""

    def __init__(self, graph, part, xp, weights):
        self.graph, self.part, self.xp, self.weights = graph, part, xp, weights
        self.held = {}

    def whole(self, i, keep):
        """Subgraph i on the device: (row pointers from 0, targets, weights or None)."""
        if i in self.held:
            return self.held[i]
        g, p, xp = self.graph, self.part, self.xp
        lo, hi = int(p.vertex_bounds[i]), int(p.vertex_bounds[i + 1])
        e0, e1 = int(p.edge_bounds[i]), int(p.edge_bounds[i + 1])
        sub = (
            xp.asarray(g.indptr[lo : hi + 1] - e0),
            xp.asarray(g.indices[e0:e1]),
            None if self.weights is None else xp.asarray(self.weights[e0:e1]),
        )
        if keep:
            self.held[i] = sub
        return sub

    def forget_evicted(self, resident):
        for i in [i for i in self.held if i not in resident]:
            del self.held[i]


def _edges_of(graph, part, device, step, verts, xp):
    """(sources, targets, weights) of the active vertices ``verts`` (host ids, all in
    ``step.subgraph``), from wherever the step puts them."""
    i = step.subgraph
    if step.kind in ("resident", "whole", "prefetch"):
        indptr, indices, weights = device.whole(
            i, keep=step.kind == "resident" or i in device.scheduler.resident
        )
        local = xp.asarray(verts - part.vertex_bounds[i])
        edge, owner = expand_rows(indptr, local, xp)
        src = xp.asarray(verts)[owner]
        return src, indices[edge], None if weights is None else weights[edge]
    # compact (a batch gathered on the host, then sent) or zero-copy (read in place)
    edge, owner = expand_rows(graph.indptr, verts, np)
    src, dst = verts[owner], graph.indices[edge]
    w = None if device.weights is None else device.weights[edge]
    return xp.asarray(src), xp.asarray(dst), None if w is None else xp.asarray(w)


def _setup(graph, budget, strategy, fixed_bytes, parts, part_bytes, xp, weights, tuning):
    part, scheduler = plan_graph(
        graph,
        budget,
        strategy=strategy,
        fixed_of=lambda count: fixed_bytes,
        parts=parts,
        part_bytes=part_bytes,
        weights=weights,
        **tuning,
    )
    device = _Device(graph, part, xp, weights)
    device.scheduler = scheduler
    return part, scheduler, device


def _iteration(graph, part, scheduler, device, frontier, xp):
    """Plan the iteration of ``frontier`` (host ids) and give its edges, subgraph by subgraph,
    as (sources, targets, weights) device arrays."""
    sub = part.of(frontier)
    value = np.bincount(sub, weights=graph.degrees[frontier], minlength=part.count)
    active = np.bincount(sub, minlength=part.count)
    steps = scheduler.plan(value.astype(np.int64), active)
    device.forget_evicted(scheduler.resident)
    by_sub = np.argsort(sub, kind="stable")
    bounds = np.searchsorted(sub[by_sub], np.arange(part.count + 1))
    for step in steps:
        i = step.subgraph
        verts = frontier[by_sub[bounds[i] : bounds[i + 1]]]
        yield _edges_of(graph, part, device, step, verts, xp)


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
    xp=np,
    stats=None,
    **tuning,
):
    """BFS levels (int32 on ``xp``, -1 unreached) and, with ``return_parents``, parents
    (int64, parents[source] == source) from ``source`` over a HostGraph, within
    ``memory_budget`` device bytes, stopping after ``depth_limit`` levels when given;
    ``parts`` / ``part_bytes`` size the partition, ``tuning`` goes to the
    :class:`~.schedule.Scheduler` (``whole_ratio``, ``staging_bytes``; ``strategy`` one of
    :data:`~.schedule.STRATEGIES`). ``stats`` gets the scheduler's accounts (``h2d_bytes``,
    ``d2h_bytes``, ``zerocopy_bytes``, transfers, ``peak_bytes``...) and ``graph_bytes``, the
    graph as the device holds it (all subgraphs whole), what ``h2d_bytes`` compares with; on
    the GPU also ``transfer_ms``, the copy stream's time in copies and prefetches (and, under
    'managed', ``prefetched_peak_bytes``). With CuPy as ``xp`` the search runs on the GPU
    (:mod:`.gpu`: device-resident vertex arrays, hand-written kernels, copies overlapped on
    a stream of their own; parents int32)."""
    if xp is not np:
        return gpu.bfs(
            graph,
            source,
            memory_budget=memory_budget,
            strategy=strategy,
            parts=parts,
            part_bytes=part_bytes,
            return_parents=return_parents,
            depth_limit=depth_limit,
            stats=stats,
            **tuning,
        )
    n = graph.n
    source = V.source(source, n)
    fixed = n * 4 + n * 8 + (n * 8 if return_parents else 0)  # levels, frontier, parents
    part, scheduler, device = _setup(
        graph, memory_budget, strategy, fixed, parts, part_bytes, xp, None, tuning
    )
    levels = xp.full(n, -1, np.int32)
    levels[source] = 0
    parents = None
    if return_parents:
        parents = xp.full(n, -1, np.int64)
        parents[source] = source
    frontier = np.array([source], np.int64)
    depth = 0
    while len(frontier) and (depth_limit is None or depth < depth_limit):
        depth += 1
        found = list(_iteration(graph, part, scheduler, device, frontier, xp))
        if not found:
            break
        src = xp.concatenate([f[0] for f in found])
        dst = xp.concatenate([f[1] for f in found])
        unseen = levels[dst] == -1
        src, dst = src[unseen], dst[unseen]
        by_target = xp.argsort(dst, kind="stable")  # each new vertex: its first finder
        src, dst = src[by_target], dst[by_target]
        first = xp.ones(len(dst), bool)
        first[1:] = dst[1:] != dst[:-1]
        new = dst[first]
        levels[new] = depth
        if parents is not None:
            parents[new] = src[first]
        frontier = np.asarray(new.get() if hasattr(new, "get") else new, np.int64)  # sync
    scheduler.release()
    if stats is not None:
        stats.update(
            scheduler.accounts.as_dict(),
            levels=depth,
            subgraphs=part.count,
            graph_bytes=int(part.nbytes().sum()),
        )
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
    delta="auto",
    xp=np,
    stats=None,
    **tuning,
):
    """Shortest-path distances (``dtype`` on ``xp``, inf unreached) from ``source`` over a
    HostGraph within ``memory_budget`` device bytes; only vertices whose distance fell relax.

    ``delta=None``: Bellman-Ford rounds (negative weights taken; a distance still falling after
    n rounds raises NegativeCycleError). ``delta`` a positive number: the fallen vertices wait
    in buckets of width delta and only those of the lowest bucket relax, so a vertex relaxes
    (and its edges cross the bus) closer to its final distance, fewer times (non-negative
    weights); a smaller delta moves fewer bytes in more iterations. ``'auto'`` (the default):
    :func:`auto_width` (in-memory delta-stepping's width, narrowed on graphs of mean out-degree
    above 4), or Bellman-Ford when a weight is negative.
    With CuPy as ``xp`` the search runs on the GPU (:mod:`.gpu`)."""
    n = graph.n
    source = V.source(source, n)
    dtype = np.dtype(dtype)
    weights = graph.weights_as(dtype)
    delta = _delta(graph, weights, delta)
    if xp is not np:
        return gpu.sssp(
            graph,
            source,
            memory_budget=memory_budget,
            dtype=dtype,
            strategy=strategy,
            parts=parts,
            part_bytes=part_bytes,
            delta=delta,
            stats=stats,
            **tuning,
        )
    fixed = n * dtype.itemsize + n * 8  # distances, and the frontier's ids
    part, scheduler, device = _setup(
        graph, memory_budget, strategy, fixed, parts, part_bytes, xp, weights, tuning
    )
    dist = xp.full(n, np.inf, dtype)
    dist[source] = 0
    pending = np.array([source], np.int64)
    top = dtype.type(np.inf if delta is None else delta)  # the lowest bucket's end
    rounds = 0
    while len(pending):
        rounds += 1
        if delta is None and rounds > n:
            raise V.negative_cycle(n)
        frontier, pending, top = _bucket(dist, pending, top, delta, xp)
        parts_ = list(_iteration(graph, part, scheduler, device, frontier, xp))
        if parts_:
            changed = _relax(dist, parts_, weights, dtype, xp)
            pending = np.union1d(pending, changed)
    scheduler.release()
    if stats is not None:
        stats.update(
            scheduler.accounts.as_dict(),
            iterations=rounds,
            subgraphs=part.count,
            graph_bytes=int(part.nbytes().sum()),
            delta=delta,
        )
    return dist


def _delta(graph, weights, delta):
    if delta is None:
        return None
    auto = isinstance(delta, str) and delta == "auto"
    if weights is None:
        facts, negative = _weights.ISO_FACTS, False
    else:  # passes over every weight (66 ms at 67 M float32): made once, kept with the graph
        facts, negative = graph.derived(
            ("weight facts", weights.dtype.str), lambda: _facts(weights)
        )
    if negative:
        if auto:
            return None
        raise V.invalid_value("delta", "be None or 'auto' with a negative weight", delta)
    if auto:
        return auto_width(facts, len(graph.indices), graph.n)
    return V.positive_finite(delta, "delta", "be None, 'auto' or a positive finite number")


NARROWING_DEGREE = 4


def auto_width(facts, stored, n):
    """Out of core, 'auto''s bucket width: the width every delta-stepping defaults to
    (``facts.bucket_width``: 32 x the mean positive weight / the mean out-degree d) times
    min(1, 4 / d), at least the smallest positive weight. Off the device, a vertex relaxed
    before its distance is final sends its d edges across the bus again, so the width narrows
    as the degree grows; where d <= 4 (roads, meshes) the rounds are many and their bytes few,
    and a narrower width only adds rounds. Measured on one H200 (half the graph's bytes,
    differential; benchmarks/results/outofcore_*sssp_widths*_h200.json), against the
    in-memory width: rmat(21) 1.24x the graph's bytes against 1.71x (30-35 ms against 32),
    rmat(24) 1.31x against 1.63x (193-197 ms against 199); ego-Twitter (d 33) 1.09x against
    2.17x, but 8.2 -> 10.3 ms (the rounds, not the bus, bound it); USA-road-NE (d 2.5) keeps
    its width: 98-101 ms, against 146 ms at a quarter of it."""
    width = facts.bucket_width(stored, n)
    degree = stored / max(n, 1)
    if degree <= NARROWING_DEGREE:
        return width
    return max(width * NARROWING_DEGREE / degree, facts.positive_min)


def _facts(weights):
    """(the weights' WeightFacts, whether one is negative: -inf included)."""
    w = np.asarray(weights)
    facts = _weights.facts(_weights.numbers(w), None)
    has_bad = facts.bad is not None  # a NaN or -inf: which, looked at again
    return facts, facts.lowest < 0 or (has_bad and bool(np.isneginf(w).any()))


def _bucket(dist, pending, top, delta, xp):
    """(the pending vertices that relax now, the rest, the bucket's end): all of them for
    Bellman-Ford; else those below ``top``, which moves up by whole deltas past the smallest
    pending distance when none is below it."""
    if delta is None:
        return pending, pending[:0], top
    d = dist[xp.asarray(pending)]
    d = d.get() if hasattr(d, "get") else d  # sync: the pending distances
    now = d < top
    if not now.any():
        m = d.min()
        top = max(type(top)((np.floor(m / delta) + 1) * delta), np.nextafter(m, type(m)(np.inf)))
        now = d < top
    return pending[now], pending[~now], top


def _relax(dist, parts_, weights, dtype, xp):
    """Relax the edges of one iteration into ``dist``; the host ids whose distance fell."""
    src = xp.concatenate([p[0] for p in parts_])
    dst = xp.concatenate([p[1] for p in parts_])
    w = xp.ones(len(dst), dtype) if weights is None else xp.concatenate([p[2] for p in parts_])
    candidate = dist[src] + w
    before = dist.copy()
    B.scatter_reduce("min", dist, dst, candidate)
    changed = xp.flatnonzero(dist < before)
    return np.asarray(changed.get() if hasattr(changed, "get") else changed, np.int64)  # sync
