"""What moves to the device each iteration of a traversal over a partitioned host graph.

Each iteration the traversal tells the :class:`Scheduler` each subgraph's value (the out-edges
of its active vertices) and active vertex count; the scheduler answers with a plan, a
:class:`Step` per active subgraph, and keeps the accounts (host-to-device bytes, transfers).
Strategies:

- ``"differential"`` (the default; Song et al., 2022): a subgraph whose active edges are at
  least ``whole_ratio`` of its edges is sent whole and kept resident for later iterations
  (room made by evicting the residents of least value this iteration, never one it uses); so
  is any active subgraph while there is room without evicting (device memory otherwise idle,
  and a subgraph touched again costs nothing more); a resident one costs nothing; the others
  send only their active vertices' edges, compacted on the host.
- ``"all"`` (GraphCage-like): the subgraphs that fit are resident from the start, in order;
  every other active subgraph is sent whole every iteration, never kept.
- ``"compact"`` (Subway-like): every active subgraph sends its active edges, compacted;
  nothing is resident.
- ``"zerocopy"`` (EMOGI-like): nothing is sent; the kernels read the edges they need from
  mapped pinned host memory (counted as bytes read over the bus, not as transfers).
- ``"managed"`` (CUDA managed memory with prefetch hints): the graph in managed memory that
  lives on the host and that the device reads in place; the resident choice and the evictions
  are the differential scheme's, but a subgraph made resident is prefetched to the device
  ('prefetch', host-to-device bytes) and an evicted one prefetched back to the host
  (``d2h_bytes``, as are the residents' when the search ends), and the other active subgraphs
  are read in place ('zerocopy', bytes read over the bus): no staging, no compaction, the
  budget past the vertex arrays all for residents.
"""

from dataclasses import dataclass, field

import numpy as np

from .. import _validation as V
from ..exceptions import InvalidValue
from .partition import part_bytes_for, partition

__all__ = [
    "STRATEGIES",
    "Step",
    "Accounts",
    "Scheduler",
    "MemoryBudgetError",
    "plan_graph",
    "page_spans",
]

STRATEGIES = ("differential", "all", "compact", "zerocopy", "managed")
STAGING_ALIGN = 16  # bytes: where each region of a double-buffered staging half starts


class MemoryBudgetError(InvalidValue):
    """A device memory budget too small for one iteration's working set."""


@dataclass(frozen=True)
class Step:
    """What one active subgraph needs this iteration: ``kind`` is 'resident' (already on the
    device), 'whole' (sent whole, then resident unless the strategy keeps nothing), 'prefetch'
    ('managed': its pages migrated to the device, then resident, as 'whole' under the
    differential scheme), 'compact' (its active edges sent) or 'zerocopy' (its active edges
    read in place); ``bytes`` what crosses the bus."""

    subgraph: int
    kind: str
    bytes: int


@dataclass
class Accounts:
    """A run's traffic: host-to-device bytes and transfers (whole or prefetched subgraphs,
    compacted batches), bytes read in place (zero-copy), device-to-host bytes (the evicted
    subgraphs' pages that strategy 'managed' prefetches back to the host), iterations, and the
    peak device bytes the scheduler held (residents and staging) beside its budget."""

    h2d_bytes: int = 0
    d2h_bytes: int = 0
    whole: int = 0
    compact: int = 0
    zerocopy_bytes: int = 0
    resident_hits: int = 0
    iterations: int = 0
    peak_bytes: int = 0
    budget_bytes: int = 0
    per_iteration: list = field(default_factory=list)

    def as_dict(self):
        return {
            "h2d_bytes": self.h2d_bytes,
            "d2h_bytes": self.d2h_bytes,
            "transfers": self.whole + self.compact,
            "whole_transfers": self.whole,
            "compact_transfers": self.compact,
            "zerocopy_bytes": self.zerocopy_bytes,
            "resident_hits": self.resident_hits,
            "iterations": self.iterations,
            "peak_bytes": self.peak_bytes,
            "budget_bytes": self.budget_bytes,
        }


class Scheduler:
    """Plans the transfers of a traversal over ``part`` (a Partition) within ``budget`` device
    bytes, of which ``fixed_bytes`` (the traversal's vertex arrays) are taken before any edge.

    The rest holds a staging buffer for compacted edges (``staging_bytes``: a quarter of it by
    default, at least the largest vertex's edges, so any vertex can be sent) and the resident
    subgraphs. A budget that cannot hold the vertex arrays and that much staging raises
    :class:`MemoryBudgetError` naming both sizes. ``double_buffer``: the staging is two halves,
    each holding the largest vertex's edges (and, for 'all', the largest subgraph), so that one
    is filled while the other is read. ``compact_in_place``: the differential scheme's
    compacted steps are read in place from mapped host memory (the same bytes over the bus, no
    staging), which leaves the staging's share to the residents; 'zerocopy' and 'managed'
    read in place always. ``resident_sizes``: the device bytes each subgraph takes when whole
    (by default ``part.nbytes()``; 'managed' on the GPU: the whole pages its ranges span,
    :func:`page_spans`), what the residents count against the budget and what a whole or
    prefetched subgraph sends.
    """

    def __init__(
        self,
        part,
        budget,
        *,
        fixed_bytes,
        strategy="differential",
        whole_ratio=0.5,
        largest_vertex_edges=0,
        staging_bytes=None,
        double_buffer=False,
        compact_in_place=False,
        resident_sizes=None,
    ):
        V.one_of(strategy, STRATEGIES, "strategy")
        budget = V.integer(budget, "memory_budget")
        if not 0 < float(whole_ratio) <= 1:
            raise V.invalid_value("whole_ratio", "be in (0, 1]", whole_ratio)
        self.part, self.strategy, self.whole_ratio = part, strategy, float(whole_ratio)
        self.sizes = (
            part.nbytes() if resident_sizes is None else np.asarray(resident_sizes, np.int64)
        )
        self.edges = part.edges()
        least_staging = int(largest_vertex_edges) * part.edge_bytes + 2 * part.index_bytes
        if double_buffer:  # two halves (one filled while the other is read), regions aligned
            least_staging = 2 * (least_staging + 4 * STAGING_ALIGN)
            if strategy == "all" and len(self.sizes):  # a subgraph goes through a half whole
                least_staging = max(least_staging, 2 * (int(self.sizes.max()) + 4 * STAGING_ALIGN))
        # zero-copy, managed memory, or compacted steps read in place (the GPU's differential
        # scheme): no staging
        in_place = strategy in ("zerocopy", "managed") or (
            compact_in_place and strategy == "differential"
        )
        if in_place:
            least_staging = 0
        needed = int(fixed_bytes) + least_staging
        if budget < needed:
            raise MemoryBudgetError(
                V.message(
                    "memory_budget",
                    f"hold one iteration's working set, {needed} bytes "
                    f"({fixed_bytes} for the vertex arrays, {least_staging} to stage the largest "
                    "vertex's edges)",
                    budget,
                )
            )
        free = budget - int(fixed_bytes)
        if in_place:
            staging = 0
        elif staging_bytes is None:
            staging = max(least_staging, free // 4) if strategy != "all" else least_staging
        else:
            staging = max(least_staging, V.integer(staging_bytes, "staging_bytes"))
        self.staging = min(staging, free)
        self.capacity = free - self.staging  # for resident subgraphs
        self.fixed = int(fixed_bytes)
        self.resident = {}  # subgraph -> bytes
        self.accounts = Accounts(budget_bytes=budget)
        if strategy == "all":  # a static resident set, in order, as far as it fits
            used = 0
            for i, size in enumerate(self.sizes.tolist()):
                if used + size <= self.capacity:
                    self.resident[i] = size
                    used += size
            self._initial = dict(self.resident)  # sent once, at the first iteration
        self._note_peak()

    @property
    def resident_bytes(self):
        return sum(self.resident.values())

    def _note_peak(self):
        self.accounts.peak_bytes = max(
            self.accounts.peak_bytes, self.fixed + self.staging + self.resident_bytes
        )

    def plan(self, value, active, active_edges_bytes=None):
        """The steps of one iteration. ``value[i]``: out-edges of subgraph i's active vertices;
        ``active[i]``: its active vertex count (int arrays over the subgraphs). A compact step
        sends those edges and one offset per active vertex. Updates the accounts."""
        value = np.asarray(value, np.int64)
        active = np.asarray(active, np.int64)
        acc = self.accounts
        acc.iterations += 1
        moved_before = acc.h2d_bytes
        used = np.flatnonzero(active > 0)
        compact_cost = value * self.part.edge_bytes + (active + 1) * self.part.index_bytes
        steps = []
        if self.strategy == "zerocopy":
            steps = [self._read_in_place(i, value[i]) for i in used.tolist()]
        elif self.strategy == "compact":
            steps = [self._compact(i, compact_cost[i]) for i in used.tolist()]
        elif self.strategy == "all":
            for i in used.tolist():
                if i in self.resident:
                    if i in self._initial:  # the first use sends it, once
                        del self._initial[i]
                        steps.append(self._send_whole(i, keep=True))
                    else:
                        steps.append(self._hit(i))
                else:
                    steps.append(self._send_whole(i, keep=False))
        else:  # differential, or managed: the same residents, other ways to move them
            steps = self._differential(used, value, compact_cost)
        acc.per_iteration.append(acc.h2d_bytes - moved_before)
        self._note_peak()
        return steps

    def _differential(self, used, value, compact_cost):
        ratio = value[used] / np.maximum(self.edges[used], 1)
        steps = {}
        # most valuable first, so that they get the room
        for i in used[np.argsort(-ratio, kind="stable")].tolist():
            if i in self.resident:
                steps[i] = self._hit(i)
            elif self.sizes[i] <= self.capacity - self.resident_bytes or (
                value[i] >= self.whole_ratio * self.edges[i] and self._make_room(i, value, used)
            ):
                steps[i] = self._send_whole(i, keep=True)
            elif self.strategy == "managed":  # its pages stay on the host, read over the bus
                steps[i] = self._read_in_place(i, value[i])
            else:
                steps[i] = self._compact(i, compact_cost[i])
        return [steps[i] for i in used.tolist()]

    def _make_room(self, i, value, used):
        """Evict residents this iteration does not use, least valuable first, until subgraph i
        fits; False (evicting nothing) when it cannot."""
        need = int(self.sizes[i])
        if need > self.capacity:
            return False
        free = self.capacity - self.resident_bytes
        if free >= need:
            return True
        in_use = set(used.tolist())
        idle = sorted((j for j in self.resident if j not in in_use), key=lambda j: value[j])
        if free + sum(self.resident[j] for j in idle) < need:
            return False
        for j in idle:
            if free >= need:
                break
            free += self._evict(j)
        return True

    def release(self):
        """The search is over: every resident leaves the device (under 'managed' its pages go
        back to the host, counted in ``d2h_bytes``, so that the next search starts with a
        device that holds none of the graph). The subgraphs released, in residence order."""
        released = list(self.resident)
        for i in released:
            self._evict(i)
        return released

    def _evict(self, i):
        """Subgraph i no longer resident; its bytes."""
        size = self.resident.pop(i)
        if self.strategy == "managed":  # prefetched back: its pages cross the bus again
            self.accounts.d2h_bytes += size
        return size

    def _hit(self, i):
        self.accounts.resident_hits += 1
        return Step(i, "resident", 0)

    def _send_whole(self, i, keep):
        size = int(self.sizes[i])
        if keep:
            self.resident[i] = size
        self.accounts.h2d_bytes += size
        self.accounts.whole += 1
        return Step(i, "prefetch" if self.strategy == "managed" else "whole", size)

    def _read_in_place(self, i, value):
        """Subgraph i's active edges (``value`` of them) read where they are, in host memory."""
        step = Step(i, "zerocopy", int(value) * self.part.edge_bytes)
        self.accounts.zerocopy_bytes += step.bytes
        return step

    def _compact(self, i, cost):
        cost = int(cost)
        self.accounts.h2d_bytes += cost
        # a staging buffer's worth per transfer (one read in place without staging)
        self.accounts.compact += max(1, -(-cost // self.staging)) if self.staging else 1
        return Step(i, "compact", cost)


def page_spans(part, page, item_bytes):
    """The pages of ``page`` bytes that each subgraph's ranges take in the arrays of a CSR held
    with every array starting on a page: its row pointers (rows lo to hi inclusive, what its
    vertices' edges are found by; ``part.index_bytes`` each), then one edge array per entry of
    ``item_bytes`` (the ids', the weights'). int64 of shape (subgraphs, 1 + len(item_bytes),
    2): [first, end) page numbers, end == first for an empty range. Neighbouring subgraphs
    may share a page at their boundary."""
    vb, eb = part.vertex_bounds, part.edge_bounds
    ranges = [(vb[:-1] * part.index_bytes, (vb[1:] + 1) * part.index_bytes)]
    ranges += [(eb[:-1] * b, eb[1:] * b) for b in item_bytes]
    first = np.stack([lo // page for lo, _ in ranges], axis=1)
    end = np.stack([np.where(hi > lo, -(-hi // page), lo // page) for lo, hi in ranges], axis=1)
    return np.stack([first, end], axis=-1).astype(np.int64)


def plan_graph(
    graph, budget, *, strategy, fixed_of, parts, part_bytes, weights, page_bytes=None, **options
):
    """(the partition, its Scheduler) of a search over ``graph`` (a HostGraph) within
    ``budget``: ``parts`` subgraphs, or of ``part_bytes`` each (by default a size from the
    budget, :func:`~.partition.part_bytes_for`), edges of the ids' and ``weights``' bytes;
    ``fixed_of(subgraph count)`` the bytes the search holds besides edges; ``page_bytes``: a
    resident subgraph takes the whole pages of that size its ranges span in the arrays
    (:func:`page_spans`: strategy 'managed' on the GPU, where pages are what a prefetch
    moves); ``options`` go to the Scheduler."""
    edge_bytes = graph.indices.itemsize + (0 if weights is None else weights.itemsize)
    if parts is None and part_bytes is None:
        part_bytes = part_bytes_for(budget)
    part = partition(
        graph.indptr, edge_bytes=edge_bytes, index_bytes=8, parts=parts, part_bytes=part_bytes
    )
    if page_bytes is not None:
        items = (graph.indices.itemsize,) + (() if weights is None else (weights.itemsize,))
        spans = page_spans(part, int(page_bytes), items)
        options["resident_sizes"] = (spans[..., 1] - spans[..., 0]).sum(axis=1) * int(page_bytes)
    largest = int(graph.degrees.max()) if graph.n else 0
    scheduler = Scheduler(
        part,
        budget,
        fixed_bytes=fixed_of(part.count),
        strategy=strategy,
        largest_vertex_edges=largest,
        **options,
    )
    return part, scheduler
