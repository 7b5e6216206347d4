"""Breadth-first search as masked SpMV over a boolean semiring: each level is

    q<!visited> = q any.pair A          (any.secondi when parents are asked for)

with the direction of every product chosen by the policy (push while the frontier is small,
pull with early exit while it is large). The levels are iterations of :func:`gbla.iterate`,
recorded once and run on the device when the graph is on the GPU.

Several sources search at once, 64 a batch, bit-parallel (MS-BFS): a vertex's frontier and
seen sets are one int64 word, bit b for the b-th source, and a level is one product over
``bor.first`` for every source (:func:`_bit_levels`); parents, when asked for, are read off the
levels afterwards (:func:`_parents_from_levels`).

Method 'algebraic_relax' finds the same levels as min.+ distances over unit weights, with
:func:`gbla.relax` rounds that go up to :data:`RELAX_HOPS` edges deep where the product walks
the frontier itself (:func:`_bfs_relax`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import _backend as B
from .. import _validation as V
from .. import direction as _direction
from .. import methods, ops, runtime
from ..matrix import as_graph
from ..semirings import any_pair, any_secondi, binary, bor_first, min_first, min_plus, unary
from ..vector import Vector
from ._relax import RELAXATION_POLICY, policy_of


def bfs(
    A: Any,
    source: Any,
    *,
    return_predecessors: bool = False,
    method: str | None = None,
    direction: Any = "auto",
    depth_limit: int | None = None,
    stats: dict | None = None,
    memory_budget: int | None = None,
    return_parents: bool | None = None,
) -> Any:
    """Levels (and parents) of a breadth-first search from ``source``.

    Parameters
    ----------
    A : Matrix, scipy.sparse or cupyx.scipy.sparse, square
        Entry (i, j) is the edge i -> j; values are ignored.
    source : int, or a sequence or 1-D array of ints
        0 <= source < n. Several sources (repeats allowed) search at once, 64 a batch, one
        product a level for all of a batch's sources (a bit each of a word per vertex; method
        'algebraic' only), and give 2-D results, a row per source.
    return_predecessors : bool
        Also return a BFS tree: parents[v] is the vertex v was reached from (the same name as
        :func:`gbla.sssp`'s).
    method : str or None
        A name from ``gbla.methods.names("bfs")``: ``"algebraic"``, ``"algebraic_relax"``
        (the levels as a relaxation whose rounds go up to :data:`RELAX_HOPS` levels deep on
        the GPU: the faster on road networks), a hand-written CUDA kernel (GPU only) or
        ``"out_of_core_bfs"``. None (the default): ``"algebraic"``, or ``"out_of_core_bfs"``
        when a ``memory_budget`` is given. Every method gives the same levels.
    direction : 'auto', 'push', 'pull' or DirectionPolicy
        'auto' lets the default policy choose per level, with hysteresis. Only methods that
        switch direction (``gbla.methods.get(method).directions``) take anything but 'auto'.
    depth_limit : int or None
        Stop after this many levels (vertices further away count as unreached).
    stats : dict or None
        When a dict is given, ``stats["levels"]`` is set to the number of levels reached
        (the source's level 0 included; with several sources the most any reached, and
        ``stats["products"]`` the products run, summed over the batches); out of core, also
        the traffic (``h2d_bytes``, ``transfers``, ``graph_bytes``) and the most device
        bytes the search held, ``peak_bytes``, beside its ``budget_bytes``.
    memory_budget : int, float or None
        Device bytes the search may hold (a float in (0, 1]: that fraction of the GPU's free
        memory): A, a CPU matrix, stays in host memory and :mod:`gbla.outofcore` sends the
        GPU what each level needs (NumPy plays the device where there is no GPU). With
        ``method`` None or ``"out_of_core_bfs"`` the out-of-core kernels search; with
        ``"algebraic"`` this function's own products run on a
        :class:`gbla.outofcore.HostMatrix` (pushing, whatever ``direction`` says). One source.
    return_parents : bool or None
        The former name of ``return_predecessors``: still taken, with a DeprecationWarning.

    Returns
    -------
    levels : array (NumPy or CuPy, the matrix's device), int32 (int64 when n >= 2**31)
        levels[source] == 0; -1 = unreached. (len(sources), n) for several sources.
    parents : array of the same dtype, when ``return_predecessors``
        parents[source] == source; -1 = unreached. With several sources, each reached
        vertex's in-neighbour of least level (then least id): a valid BFS tree, as with one.

    Raises
    ------
    DimensionMismatch (A not square), InvalidValue / InvalidIndex (source, depth_limit,
    direction), UnknownName (method), UnsupportedMethod (a kernel asked to run where it cannot,
    e.g. on the CPU), DomainMismatch (A not a matrix)

    Examples
    --------
    >>> import gbla
    >>> A = gbla.Matrix.from_edges([0, 1, 1], [1, 2, 3], n=5, device="cpu")
    >>> gbla.bfs(A, 0)
    array([ 0,  1,  2,  2, -1], dtype=int32)
    >>> gbla.bfs(A, [1, 0, 1])
    array([[-1,  0,  1,  1, -1],
           [ 0,  1,  2,  2, -1],
           [-1,  0,  1,  1, -1]], dtype=int32)
    """
    return_parents = _predecessors_flag(return_predecessors, return_parents)
    A = as_graph(A)
    n = A.nrows
    if method is None:
        method = "algebraic" if memory_budget is None else "out_of_core_bfs"
    if _several(source):
        _no_budget_with_several(memory_budget)
        return _bfs_many(
            A,
            source,
            return_parents=return_parents,
            method=method,
            direction=direction,
            depth_limit=depth_limit,
            stats=stats,
        )
    source = V.source(source, n)
    if depth_limit is not None:
        depth_limit = V.size(depth_limit, "depth_limit")
    if stats is not None and not isinstance(stats, dict):
        raise V.domain("stats", "be a dict or None", type(stats).__name__)
    entry, direction = methods.resolve(method, "bfs", A, direction)
    # the out-of-core kernel takes the budget; the algebra runs on A kept in host memory
    A, options = methods.with_budget(entry, A, memory_budget)
    run_stats = {}
    result = entry.run(
        A,
        source,
        return_parents=return_parents,
        depth_limit=depth_limit,
        direction=direction,
        stats=run_stats,
        **options,
    )
    if stats is not None:
        levels = result[0] if return_parents else result
        stats.update(run_stats)
        traffic = getattr(A, "traffic", None)  # kept in host memory: what crossed the bus
        if traffic is not None:
            stats.update(traffic())
        stats["levels"] = int(levels.max()) + 1  # sync: only when asked for
    return result


def _bfs_algebraic(A, source, *, return_parents, depth_limit, direction, stats):
    """levels (and parents) by the algebra: one level is one iteration of gbla.iterate, which
    runs on the device when A is there."""
    n = A.nrows
    tracker = _direction.start(direction)
    level_dtype = np.int32 if n < 2**31 else np.int64
    P = A.pattern()
    semiring = any_secondi if return_parents else any_pair
    # The frontier keeps one dtype throughout: a parent id under secondi, True under pair.
    q_dtype = semiring.output_dtype(np.dtype(np.int64 if return_parents else bool))

    # the start, one entry each, stays on the host until used: a recorded loop loads it
    # inside its launch
    def at_source(value, dtype):
        return Vector._from_host_entries([source], np.full(1, value, dtype), n, None, A.device)

    q = at_source(source if return_parents else True, q_dtype)
    state = {"q": q, "levels": at_source(0, level_dtype)}
    if return_parents:
        state["parents"] = at_source(source, level_dtype)

    def level(s, depth):
        s.q = ops.vxm(s.q, P, semiring, mask=~s.levels.S, direction=tracker)
        ops.assign(s.levels, depth, mask=s.q.S)
        if return_parents:
            ops.assign(s.parents, s.q, mask=s.q.S)

    wanted = ("levels", "parents")[: 1 + return_parents]
    out = runtime.iterate(
        level,
        state,
        while_nonempty="q",
        max_iterations=depth_limit,
        cache=P,
        key=("gbla.bfs", semiring.name, policy_of(tracker)),
        stats=stats,
        keep=wanted,
        dense=dict.fromkeys(wanted, -1),
    )
    if return_parents:
        return out["levels"], out["parents"]
    return out["levels"]


# How many edges deep a round of 'algebraic_relax' relaxes from the vertices whose level fell
# (gbla.relax's hops, where the product walks the frontier itself: a road network's). One
# H200, 6 sources (benchmarks/results/ab/algebra_bfs_relax_h200.log): USA-road-NE 7.8 / 7.1 /
# 7.5 ms at 16 / 24 / 32 (1,700 levels in 88 rounds at 24), FLA 6.1 / 5.6 / 5.9, against
# single_block's 10.6 and 5.6 and 'algebraic''s 33.5 and 23.4.
RELAX_HOPS = 24


def _bfs_relax(A, source, *, return_parents, depth_limit, direction, stats):
    """levels (and parents) by the algebra as a relaxation: the levels are min.+ distances over
    unit weights, each round ``f = relax(levels, f, A, hops=RELAX_HOPS)``, which on the GPU
    follows what it improves up to RELAX_HOPS edges deep in one launch where the product walks
    the frontier itself (out-degrees of at most 32): a deep search (a road network's 1,700
    levels) takes a round per RELAX_HOPS levels or so, where a level-synchronous search takes
    one per level. A vertex's level may fall more than once (its work is a label-correcting
    search's, not a BFS's); parents are read off the levels by one product afterwards
    (:func:`_parents_from_levels`). A ``depth_limit`` cuts the levels after the search."""
    n = A.nrows
    _parents_fit(return_parents, n, "for method 'algebraic_relax'")
    level_dtype = np.dtype(np.int32 if n < 2**31 else np.int64)
    far = level_dtype.type(np.iinfo(level_dtype).max - 1)  # far + 1 does not overflow
    P = A.pattern()
    tracker = _direction.start(direction)
    hops = RELAX_HOPS

    def at_source(fill):  # on the host until used: a recorded loop loads it in its launch
        return Vector._from_host_entries([source], np.zeros(1, level_dtype), n, fill, A.device)

    def round_(s, _):
        s.frontier = ops.relax(
            s.levels, s.frontier, P, min_plus, binary.lt, direction=tracker, hops=hops
        )

    out = runtime.iterate(
        round_,
        {"levels": at_source(far), "frontier": at_source(None)},
        while_nonempty="frontier",
        cache=P,
        key=("gbla.bfs_relax", policy_of(tracker), hops),
        stats=stats,
        fuse=False,
    )
    cut = far if depth_limit is None else min(int(far), depth_limit + 1)
    levels = ops.select(out["levels"], "<", level_dtype.type(cut)).to_dense(-1)
    if not return_parents:
        return levels
    return levels, _parents_from_levels(P, levels, source, direction, level_dtype)


def _predecessors_flag(return_predecessors, return_parents):
    """The one flag, from the name both searches take or the former one."""
    if return_parents is None:
        return V.flag(return_predecessors, "return_predecessors")
    warnings.warn(
        "bfs(return_parents=) is now return_predecessors=, as in sssp",
        DeprecationWarning,
        stacklevel=3,
    )
    V.flag(return_parents, "return_parents")
    if return_predecessors and not return_parents:
        raise V.invalid_value(
            "return_parents", "agree with return_predecessors or be None", return_parents
        )
    return return_parents


def _several(source):
    return isinstance(source, (list, tuple, range)) or (
        hasattr(source, "ndim") and getattr(source, "ndim", 0) == 1
    )


def _no_budget_with_several(memory_budget):
    """Several sources search together in memory: an out-of-core budget takes one."""
    if memory_budget is not None:
        raise V.invalid_value("memory_budget", "be None with several sources", memory_budget)


def _sources(sources, n):
    """Several sources as a list of checked vertex ids."""
    if B.array_device(sources) == "gpu":
        sources = B.to_host(sources)  # sync: the ids, once
    return [
        V.source(s, n) for s in (sources.tolist() if hasattr(sources, "tolist") else list(sources))
    ]


# Sources one bit-parallel search runs: the bits of an int64 word.
BATCH = 64


def _bfs_many(A, sources, *, return_parents, method, direction, depth_limit, stats):
    """Levels (and parents) from several sources: a bit-parallel search for each batch of up to
    64 sources (:func:`_bit_levels`), then, when asked for, every reached vertex's parent read
    off the levels (:func:`_parents_from_levels`)."""
    n = A.nrows
    sources = _sources(sources, n)
    if not (isinstance(method, str) and method == "algebraic"):
        raise V.invalid_value("method", "be 'algebraic' with several sources", method)
    _direction.resolve(direction)
    if depth_limit is not None:
        depth_limit = V.size(depth_limit, "depth_limit")
    if stats is not None and not isinstance(stats, dict):
        raise V.domain("stats", "be a dict or None", type(stats).__name__)
    _parents_fit(return_parents, n, "with several sources")
    level_dtype = np.int32 if n < 2**31 else np.int64
    xp = B.xp_of(A.device)
    P = A.pattern()
    rows, products = [], 0
    for at in range(0, len(sources), BATCH):
        levels, iterations = _bit_levels(
            P, sources[at : at + BATCH], direction, depth_limit, level_dtype
        )
        rows.append(levels)
        products += iterations
    levels = (
        rows[0]
        if len(rows) == 1
        else xp.concatenate(rows)
        if rows
        else xp.zeros((0, n), level_dtype)
    )
    if stats is not None:  # sync: only when asked for
        stats.update(levels=int(levels.max()) + 1 if levels.size else 0, products=products)
    if not return_parents:
        return levels
    parents = [
        _parents_from_levels(P, levels[row], s, direction, level_dtype)
        for row, s in enumerate(sources)
    ]
    return levels, (xp.stack(parents) if parents else xp.zeros((0, n), level_dtype))


def _start_words(batch):
    """(the batch's distinct vertices ascending, their words): bit b is the batch's b-th source,
    so a vertex given twice holds both bits."""
    vertices = np.asarray(batch, np.int64)
    order = np.argsort(vertices, kind="stable")
    vertices = vertices[order]
    bits = np.left_shift(np.uint64(1), np.arange(len(batch), dtype=np.uint64))[order]
    first = np.flatnonzero(np.concatenate([[True], vertices[1:] != vertices[:-1]]))
    return vertices[first], np.bitwise_or.reduceat(bits, first).view(np.int64)


def _bit_levels(P, batch, direction, depth_limit, level_dtype):
    """((len(batch), n) levels, iterations) of one bit-parallel search (MS-BFS, Then et al.,
    VLDB 2015): a vertex's frontier and seen sets are one int64 word each, bit b for the b-th
    source, and one product a level serves every source at once:

        t<!done> = q bor.first A ;  q = t & ~seen where nonzero ;  seen |= q ;
        levels(v, b) = depth for each bit b of q(v)

    ``done`` marks the vertices every source has reached, which no product visits again. The
    levels are iterations of :func:`gbla.iterate`, recorded once and run on the device when A
    is there."""
    n, k = P.nrows, len(batch)
    device = P.device
    xp = B.xp_of(device)
    tracker = _direction.start(direction)
    # The bits no source of the batch owns count as seen from the start, so that a vertex is
    # done when its word is all ones whatever the batch's size, and one recording serves any.
    pad = -(1 << k) if k < BATCH else 0
    vertices, words = _start_words(batch)
    q = Vector.from_coo(vertices, words, n, device=device)
    seen = Vector.from_dense(xp.full(n, pad, np.int64), device=device)
    ops.assign(seen, ops.apply(q, binary.bor, right=pad), mask=q.S)
    done = ops.assign(Vector.new(n, bool, device=device), True, mask=ops.select(seen, "==", -1).S)
    # (width, n) levels, a row per bit; the width a power of two, so that the recordings kept
    # with P are few
    width = 1 << (k - 1).bit_length()
    levels = ops.assign_bits(Vector.new(n * width, level_dtype, device=device), 0, q)

    def level(s, depth):
        reached = ops.vxm(s.q, P, bor_first, mask=~s.done.S, direction=tracker)
        s.q = ops.select(ops.ewise_mult(reached, s.seen, binary.bandnot), "nonzero")
        grown = ops.ewise_mult(s.q, s.seen, binary.bor)
        ops.assign(s.seen, grown, mask=s.q.S)
        ops.assign(s.done, True, mask=ops.select(grown, "==", -1).S)
        ops.assign_bits(s.levels, depth, s.q)

    run_stats = {}
    out = runtime.iterate(
        level,
        {"q": q, "seen": seen, "done": done, "levels": levels},
        while_nonempty="q",
        max_iterations=depth_limit,
        cache=P,
        key=("gbla.bfs.bits", policy_of(tracker)),
        stats=run_stats,
        keep=("levels",),
        dense={"levels": -1},
    )
    return out["levels"].reshape(width, n)[:k], run_stats["iterations"]


def _parents_fit(return_parents, n, where):
    """Parents read off the levels (:func:`_parents_from_levels`) pack an id in 32 bits: asked
    for on a graph of 2**32 vertices or more, InvalidValue naming ``return_predecessors``."""
    if return_parents and n >= 2**32:
        raise V.invalid_value(
            "return_predecessors", f"be False {where} on a graph of 2**32 vertices or more", True
        )


def _parents_from_levels(P, levels, source, direction, level_dtype):
    """A BFS tree from one source's levels: for each reached v, its in-neighbour of least
    level, then least id, found by one product over keys level * 2**32 + id. No in-neighbour of
    v is more than one level nearer the source than v, so that one is exactly one nearer: a
    valid parent (Graph500's rules). -1 = unreached; parents[source] == source."""
    n = P.nrows
    reached = ops.select(Vector.from_dense(levels, device=P.device), ">=", 0)
    key = ops.ewise_add(
        ops.apply(reached, binary.times, right=2**32),
        ops.apply(reached, unary.rowindex),
        binary.plus,
    )
    nearest = ops.vxm(key, P, min_first, mask=reached.S, direction=direction)
    parents = ops.apply(nearest, binary.band, right=2**32 - 1)
    ops.assign(parents, source, mask=Vector.from_coo([source], True, n, device=P.device).S)
    return parents.to_dense(-1).astype(level_dtype, copy=False)


methods.register(
    methods.Method(
        "algebraic",
        "bfs",
        "masked vxm over any.pair (any.secondi for parents), push/pull chosen "
        "per level by the direction policy; on a directed graph pull builds A's transpose once and "
        "keeps it with A, by an int64 sort of the entries (the peak, about 6x a graph of int32 "
        "ids)",
        _bfs_algebraic,
        algebraic=True,
        directions=True,
        partitioned=True,
    )
)
methods.register(
    methods.Method(
        "algebraic_relax",
        "bfs",
        "levels as min.+ distances over unit weights, relax's rounds going up to RELAX_HOPS "
        "edges deep where the product walks the frontier itself (road networks); parents read "
        "off the levels by one min.first product",
        _bfs_relax,
        algebraic=True,
        directions=True,
        auto_policy=RELAXATION_POLICY,
    )
)
