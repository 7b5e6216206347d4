"""A matrix kept in host memory whose products bring the device, within a memory budget, only
the edges each needs: the algebra's BFS and SSSP (``gbla/algorithms``, unchanged) on a graph
larger than the GPU's memory.

``gbla.vxm(u, H, ...)`` on a :class:`HostMatrix` ``H`` is a push over H's rows (the edges stay
grouped by source, as the partition cuts them). Each product tallies the frontier by subgraph
(its vertices and their out-edges: one small copy to the host), the
:class:`~.schedule.Scheduler` plans what crosses the bus as it does for the out-of-core
kernels, and gbla's own push kernel (``_spmv.push_into``, the one every in-memory push runs)
combines into one output, block by block:

- a resident or whole subgraph is read from its device copy, through addresses set back by
  its first row and edge, so the kernel reads it at global ids (a semiring that reads the
  row id, as ``any.secondi`` does for parents, gets the true one);
- a compacted or zero-copy step is read in place from mapped pinned host memory (the bytes
  a compacted batch would send, without the host's gather; the Subway-like ``compact``
  strategy reads its batches in place too);
- the matrix's values cross only when the semiring reads them (not for ``any.pair``).

Without a GPU the same schedule is planned and accounted and NumPy runs the product.

Device memory: the vectors of the search around the products (:data:`VERTEX_BYTES` a vertex,
reserved in the budget), the residents and one non-resident subgraph at a time. Matrices made
from a HostMatrix (its pattern, ``gbla.select`` and ``gbla.scale`` of it: edges selected by
weight, SSSP's tight edges) share its budget: each may keep residents up to its
share of the edges, and a product that needs room takes it from the residents of the one
used longest ago. A HostMatrix holds its residents until it is dropped (or :meth:`release`).
"""

import numpy as np

from .. import _backend as B
from .. import _cpu
from .. import _validation as V
from .._weights import weight_facts
from ..kernels import _spmv
from ..kernels._codegen import SpmvTypes
from .schedule import plan_graph
from .traverse import HostGraph

__all__ = ["HostMatrix", "VERTEX_BYTES", "budget_bytes", "host_graph"]

# Device bytes per vertex an algebraic search holds besides the edges: BFS's frontier (int64
# values and presence), levels and parents (int32 and presence), the complemented mask, the
# product's output and presence, its entry list and the write's temporaries; SSSP's float64
# distances and frontiers take about as much.
VERTEX_BYTES = 96
GRANULE = 512  # bytes: CuPy's pool rounds every allocation up to a multiple of this
ALLOCATIONS = 64  # allocations a level may hold at once, each rounded up by the pool
# the strategies whose steps a product reads in place or keeps resident (a compacted or
# staged copy would need the rows renumbered, which a semiring reading the row id cannot take)
STRATEGIES_HERE = ("differential", "zerocopy")


def budget_bytes(memory_budget, xp):
    """A budget in bytes (an int), or a float in (0, 1]: that fraction of the GPU's free
    memory."""
    if isinstance(memory_budget, (float, np.floating)):
        if not 0 < memory_budget <= 1:
            raise V.invalid_value(
                "memory_budget", "be bytes (an int) or a fraction in (0, 1]", memory_budget
            )
        if xp is np:
            raise V.invalid_value(
                "memory_budget",
                "be bytes (an int) without a GPU (a fraction is of the GPU's free memory)",
                memory_budget,
            )
        free, _ = xp.cuda.Device().mem_info
        return int(memory_budget * free)
    budget = V.integer(memory_budget, "memory_budget")
    if budget < 1:
        raise V.invalid_value("memory_budget", "be a positive number of bytes", memory_budget)
    return budget


def host_graph(A):
    """(A's CSR as a HostGraph, kept with A: pinned where a GPU will read it; the device's
    array module). A is a CPU matrix: it stays in host memory."""
    xp = B._cupy() if B.gpu_available() else np
    key = ("host_graph", xp is not np)
    if key not in A._cache:
        graph = HostGraph.of(A)
        A._cache[key] = graph.pin() if xp is not np else graph
    return A._cache[key], xp


def _pinned_empty(shape, dtype):
    import cupyx  # a pinned graph: the GPU path only

    return cupyx.empty_pinned(shape, dtype)


def _pinned_copy(a):
    out = _pinned_empty(a.shape, a.dtype)
    out[...] = a
    return out


class _Family:
    """The budget a HostMatrix shares with the matrices made from it, and their accounts."""

    def __init__(self, budget, graph_bytes, edges, n):
        self.budget, self.graph_bytes, self.edges = budget, graph_bytes, max(int(edges), 1)
        self.fixed = VERTEX_BYTES * n + GRANULE * ALLOCATIONS
        self.members = []  # engines, the one used last at the end
        self.peak = 0

    def make_room(self, engine):
        """Before ``engine``'s product: the others' residents released, the least recently
        used first, until every member's residents and engine's share fit the budget."""
        if engine in self.members:
            self.members.remove(engine)
        self.members.append(engine)
        for other in self.members[:-1]:
            if (
                sum(m.resident_bytes() for m in self.members[:-1]) + engine.capacity()
                <= self.budget - self.fixed
            ):
                break
            other.release()

    def note(self):
        self.peak = max(self.peak, self.fixed + sum(m.held_bytes() for m in self.members))


class _Engine:
    """The schedule and the device copies of one HostMatrix's products."""

    def __init__(self, H, xp):
        graph, family = H._graph, H._family
        self.graph, self.family, self.xp = graph, family, xp
        share = len(graph.indices) / family.edges
        budget = family.fixed + int((family.budget - family.fixed) * min(share, 1.0))
        weights = graph.values
        self.part, self.scheduler = plan_graph(
            graph,
            budget,
            strategy=H._strategy,
            fixed_of=lambda count: family.fixed,
            parts=H._parts,
            part_bytes=H._part_bytes,
            weights=weights,
            double_buffer=False,
            compact_in_place=True,
        )
        self.held = {}
        self.degrees = None
        self.mapped = None
        self.keepalive = None  # the last block read that is not resident (see _block)
        self.index_dtype = graph.indices.dtype

    def capacity(self):
        return self.scheduler.capacity + self.scheduler.staging

    def resident_bytes(self):
        return self.scheduler.resident_bytes

    def held_bytes(self):
        return self.scheduler.resident_bytes + self.scheduler.staging

    def release(self):
        """Give the residents back (the next product sends what it needs again)."""
        self.scheduler.release()
        self.held.clear()

    def plan(self, active, value):
        """The steps of one product, from the frontier's vertices and out-edges per
        subgraph."""
        steps = self.scheduler.plan(value, active)
        for i in [i for i in self.held if i not in self.scheduler.resident]:
            del self.held[i]  # evicted: the last product's kernels are done (its tally synced)
        self.family.note()
        return steps


class HostMatrix:
    """A square matrix kept in host memory (pinned where a GPU runs its products), whose
    ``gbla.vxm`` sends the device, within ``memory_budget`` bytes, the edges each product
    needs, as :mod:`gbla.outofcore` plans them (see the module's notes).

    ``gbla.bfs`` and ``gbla.sssp`` make one when an algebraic method (``"algebraic"``,
    ``"bellman_ford"``, ``"delta_stepping"``) is given a ``memory_budget``; made directly, it
    keeps its residents across searches until it is dropped or :meth:`release` is called.
    ``gbla.vxm`` (push; a ``direction`` is taken and the product pushes), ``gbla.select`` (a
    comparison) and ``gbla.scale`` take it; the results are those of the same operations on
    A.

    Parameters
    ----------
    A : gbla.Matrix on the CPU, or scipy.sparse, square
    memory_budget : int or float
        Device bytes the search may hold, or a fraction in (0, 1] of the GPU's free memory.
    strategy : str
        'differential' (default) or 'zerocopy' (see :mod:`gbla.outofcore.schedule`; the
        product reads compacted steps in place, so it takes the strategies that stage
        nothing).
    parts, part_bytes : int or None
        The subgraph count, or bytes a subgraph (default: from the budget and the L2's size).

    Raises
    ------
    InvalidValue
        A matrix on the GPU (it is already in device memory), a bad budget or strategy.
    MemoryBudgetError
        The budget cannot hold one product's working set (at the first product).
    """

    partitioned = True  # ops, the registry and gbla.iterate take their partitioned paths

    def __init__(self, A, memory_budget, *, strategy="differential", parts=None, part_bytes=None):
        import scipy.sparse as sp

        from ..matrix import Matrix, as_graph

        A = Matrix.from_scipy(A, device="cpu") if sp.issparse(A) else as_graph(A)
        V.square(A.shape, "A")
        if A.device != "cpu":
            raise V.invalid_value(
                "A",
                "be a CPU matrix to be kept in host memory with a memory_budget (to_device('cpu'))",
                f"a {A.device} matrix",
            )
        V.one_of(strategy, STRATEGIES_HERE, "strategy")
        graph, xp = host_graph(A)
        budget = budget_bytes(memory_budget, xp)
        family = _Family(budget, graph.nbytes, len(graph.indices), graph.n)
        self._setup(graph, A.dtype, xp, family, strategy, parts, part_bytes)

    @classmethod
    def _derived(cls, H, graph, dtype):
        """A matrix made from H: host arrays of its own, H's budget shared."""
        self = cls.__new__(cls)
        self._setup(graph, dtype, H._xp, H._family, H._strategy, H._parts, H._part_bytes)
        return self

    def _setup(self, graph, dtype, xp, family, strategy, parts, part_bytes):
        self._graph, self._xp, self._family = graph, xp, family
        self._strategy, self._parts, self._part_bytes = strategy, parts, part_bytes
        self._dtype = np.dtype(dtype)
        self._engine = None
        self._cache = {}

    @property
    def weights(self):
        """The :class:`~gbla._weights.WeightFacts` of its weights (what gbla.sssp reads of
        them), found at the first read."""
        g = self._graph
        return g.derived("weight facts", lambda: weight_facts(g.indptr, g.indices, g.values))

    # ---- what ops and the algorithms read of a matrix
    @property
    def nrows(self):
        return self._graph.n

    ncols = nrows

    @property
    def shape(self):
        return (self.nrows, self.nrows)

    @property
    def nvals(self):
        return len(self._graph.indices)

    @property
    def dtype(self):
        return self._dtype

    @property
    def is_iso(self):
        return self._graph.values is None

    @property
    def device(self):
        """Where its products' vectors are: 'gpu' when a GPU runs them."""
        return "cpu" if self._xp is np else "gpu"

    def __repr__(self):
        return (
            f"HostMatrix({self.nrows}x{self.ncols}, nvals={self.nvals}, dtype={self.dtype}"
            f", budget={self._family.budget}, strategy={self._strategy!r})"
        )

    def traffic(self):
        """The accounts of every product this matrix and those made from it ran: host-to-device
        bytes, transfers, bytes read in place, resident hits, products planned, the peak device
        bytes held (vectors reserved, residents, staging), the budget and the graph's bytes."""
        out = {
            "h2d_bytes": 0,
            "transfers": 0,
            "zerocopy_bytes": 0,
            "resident_hits": 0,
            "products": 0,
        }
        for engine in self._family.members:
            acc = engine.scheduler.accounts.as_dict()
            out["h2d_bytes"] += acc["h2d_bytes"]
            out["transfers"] += acc["transfers"]
            out["zerocopy_bytes"] += acc["zerocopy_bytes"]
            out["resident_hits"] += acc["resident_hits"]
            out["products"] += acc["iterations"]
        out.update(
            peak_bytes=self._family.peak,
            budget_bytes=int(self._family.budget),
            graph_bytes=int(self._family.graph_bytes),
        )
        return out

    def release(self):
        """Give back the device copies this matrix and those made from it hold."""
        for engine in self._family.members:
            engine.release()

    def pattern(self):
        """The structure alone (weight 1 an edge), sharing the index arrays and the budget."""
        if self.is_iso:
            return self
        if "pattern" not in self._cache:
            g = self._graph
            self._cache["pattern"] = HostMatrix._derived(
                self, HostGraph(g.indptr, g.indices, None, pinned=g.pinned), np.bool_
            )
        return self._cache["pattern"]

    # ---- the partitioned protocol of ops
    def vxm_entries(self, u, semiring, dtype, mask, direction):
        """(keys, values) of u (+).(x) A on u's device, pushed block by block within the
        budget; ``direction`` is taken and the product pushes."""
        idx, u_values = u._sparse()
        engine = self._engine_for_product()
        if self._xp is np:
            return self._cpu_product(engine, idx, u_values, semiring, dtype, mask)
        return self._gpu_product(engine, idx, u_values, semiring, dtype, mask)

    def mxm_entries(self, F, semiring, dtype, mask):
        raise V.domain(
            "B",
            "be a gbla.Matrix (a HostMatrix streams its rows for vxm, one "
            "frontier at a time; several sources search in memory)",
            "HostMatrix",
        )

    def keep_entries(self, predicate, key=None):
        """The entries whose weight satisfies ``predicate`` (values -> bool array on the
        products' device; weight 1 where there is none), as a HostMatrix sharing the budget:
        what ``gbla.select`` runs on it. With a ``key`` naming the selection its host arrays
        are kept with the graph (a selection by a number, made once per graph and threshold as
        in memory, not per search)."""
        g = self._graph

        def keep(e0, e1):
            a = self._on_device(np.ones(e1 - e0, bool) if g.values is None else g.values[e0:e1])
            return B.to_host(predicate(a)), None

        graph = (
            self._kept_graph(keep)
            if key is None
            else g.derived(("select",) + tuple(key), lambda: self._kept_graph(keep))
        )
        return HostMatrix._derived(self, graph, self._dtype)

    def scaled(self, values, present, combine, side):
        """diag(v) A ('left') or A diag(v) ('right') for a v on the products' device
        (``values``, ``present`` or None for all), as a HostMatrix sharing the budget;
        entries whose row (left) or column (right) v lacks are dropped: what ``gbla.scale``
        runs on it."""
        g = self._graph
        out_dtype = []

        def keep(e0, e1):
            if side == "left":
                at = np.searchsorted(g.indptr, np.arange(e0, e1), side="right") - 1
            else:
                at = g.indices[e0:e1].astype(np.int64)
            at = self._on_device(at)
            a = self._on_device(np.ones(e1 - e0, bool) if g.values is None else g.values[e0:e1])
            out = combine(values[at], a)
            out_dtype[:] = [out.dtype]
            kept = self._xp.ones(e1 - e0, bool) if present is None else present[at]
            return B.to_host(kept), B.to_host(out)

        graph = self._kept_graph(keep, out_dtype)
        return HostMatrix._derived(self, graph, graph.values.dtype)  # the combined dtype

    # ---- helpers
    def _on_device(self, a):
        return a if self._xp is np else self._xp.asarray(a)

    def _chunk_edges(self):
        """Edges a select or scale handles at once: within what the budget leaves the edges
        (a few arrays of them at a time on the device)."""
        room = max(self._family.budget - self._family.fixed, 1 << 16)
        return max(1 << 12, room // 64)

    def _kept_graph(self, keep, out_dtype=None):
        """The HostGraph of the entries ``keep(e0, e1)`` marks, chunk by chunk of the edges
        (with the new values it gives, of dtype ``out_dtype[0]``, where ``out_dtype`` is a
        list it fills)."""
        g = self._graph
        mark, values = np.empty(len(g.indices), bool), []
        step = self._chunk_edges()
        for e0 in range(0, len(g.indices), step):
            e1 = min(e0 + step, len(g.indices))
            kept, new = keep(e0, e1)
            mark[e0:e1] = kept
            if new is not None:
                values.append(np.asarray(new)[mark[e0:e1]])
        # row i keeps the marks before indptr[i + 1] less those before indptr[i]
        before = np.zeros(len(mark) + 1, np.int64)
        np.cumsum(mark, out=before[1:])
        kept = int(before[-1])
        # gathered straight into pinned memory where the GPU reads it (no second copy)
        empty = _pinned_empty if g.pinned else np.empty
        indptr = empty(g.n + 1, np.int64)
        np.take(before, g.indptr, out=indptr)
        indices = empty(kept, g.indices.dtype)
        np.compress(mark, g.indices, out=indices)
        if out_dtype is not None:  # scaled: the combined values
            dtype = out_dtype[0] if out_dtype else np.dtype(np.float64)
            vals = (
                np.concatenate(values).astype(dtype, copy=False) if values else np.zeros(0, dtype)
            )
        elif g.values is not None:
            vals = empty(kept, g.values.dtype)
            np.compress(mark, g.values, out=vals)
        else:
            vals = None
        if g.pinned and vals is not None and out_dtype is not None:
            vals = _pinned_copy(vals)
        return HostGraph(indptr, indices, vals, pinned=g.pinned)

    def _engine_for_product(self):
        if self._engine is None:
            self._engine = _Engine(self, self._xp)
        self._family.make_room(self._engine)
        return self._engine

    def _cpu_product(self, engine, idx, u_values, semiring, dtype, mask):
        g = self._graph
        part = engine.part
        sub = part.of(idx)
        value = np.bincount(sub, weights=g.degrees[idx], minlength=part.count)
        active = np.bincount(sub, minlength=part.count)
        engine.plan(active, value.astype(np.int64))
        m, mode = (None, 0) if mask is None else mask.kernel_args()
        return _cpu.push(
            (g.indptr, g.indices, g.values), g.n, idx, u_values, semiring, True, dtype, m, mode
        )

    def _gpu_product(self, engine, idx, u_values, semiring, dtype, mask):
        cp, g, part = self._xp, self._graph, engine.part
        if engine.degrees is None:
            engine.degrees = cp.asarray(g.degrees_int32())
            engine.bounds = cp.asarray(part.vertex_bounds)
        types = SpmvTypes(
            semiring, None if self.is_iso else self._dtype, u_values.dtype, np.dtype(dtype), True
        )
        z = semiring.output_dtype(np.dtype(dtype))
        w = cp.full(g.n, semiring.add.identity_for(z), dtype=z)
        present = cp.zeros(g.n, np.uint8)
        m, mode = (None, 0) if mask is None else mask.kernel_args()
        # the frontier's out-edges, summed, and where each subgraph's vertices start in it
        sums = cp.zeros(len(idx) + 1, np.int64)
        if len(idx):
            cp.cumsum(engine.degrees[idx], dtype=np.int64, out=sums[1:])
        at = cp.searchsorted(idx, engine.bounds)
        tally = cp.concatenate([at, sums[at]]).get()  # sync: the plan needs both
        at, edge_at = tally[: part.count + 1], tally[part.count + 1 :]
        steps = engine.plan(np.diff(at), np.diff(edge_at))
        uses_a = types.uses_a
        for step in steps:
            i = step.subgraph
            a, b = int(at[i]), int(at[i + 1])
            total = int(edge_at[i + 1] - edge_at[i])
            if not total:
                continue
            offsets = sums[a : b + 1] - sums[a]
            P = self._block(engine, step, uses_a)
            _spmv.push_into(
                P,
                idx[a:b],
                u_values[a:b] if types.uses_u else None,
                offsets,
                total,
                types,
                m,
                mode,
                w,
                present,
                index_dtype=engine.index_dtype,
            )
        keys = cp.flatnonzero(present).astype(np.int64)  # sync: the entries' count
        return keys, w[keys]

    def _indptr(self, engine):
        """The row pointers in the kernels' index type, pinned, made once per graph."""
        g = self._graph
        if g.indptr.dtype == engine.index_dtype:
            return g.indptr
        return g._kept(("indptr", engine.index_dtype), lambda: g.indptr.astype(engine.index_dtype))

    def _block(self, engine, step, uses_a):
        """(indptr, indices, values) device addresses reading subgraph ``step.subgraph`` at
        global row and edge ids, from wherever the step puts it."""
        cp, g, p = self._xp, self._graph, engine.part
        i = step.subgraph
        if step.kind in ("compact", "zerocopy"):  # read in place over the bus
            if engine.mapped is None:  # pinned host memory is mapped at its own address
                engine.mapped = tuple(
                    np.uint64(0) if a is None else np.uint64(a.ctypes.data)
                    for a in (self._indptr(engine), g.indices, g.values)
                )
            indptr, indices, values = engine.mapped
            return indptr, indices, values if uses_a else np.uint64(0)
        if i not in engine.held:
            lo, hi = int(p.vertex_bounds[i]), int(p.vertex_bounds[i + 1])
            e0, e1 = int(p.edge_bounds[i]), int(p.edge_bounds[i + 1])
            arrays = (
                cp.asarray(self._indptr(engine)[lo : hi + 1]),
                cp.asarray(g.indices[e0:e1]),
                None if g.values is None else cp.asarray(g.values[e0:e1]),
            )
            held = (arrays, lo, e0)
            if i in engine.scheduler.resident:
                engine.held[i] = held
        else:
            held = engine.held[i]
        (indptr, indices, values), lo, e0 = held
        # addresses set back by the first row and edge: the kernel indexes them globally
        isz = np.dtype(engine.index_dtype).itemsize
        out = (
            np.uint64(indptr.data.ptr - lo * isz),
            np.uint64(indices.data.ptr - e0 * isz),
            np.uint64(0)
            if values is None or not uses_a
            else np.uint64(values.data.ptr - e0 * values.itemsize),
        )
        engine.keepalive = held  # a block not kept stays alive until the next one
        return out
