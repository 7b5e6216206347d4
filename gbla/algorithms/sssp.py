"""Single-source shortest paths as min-plus SpMV.

Bellman-Ford relaxes, each round, only the vertices whose distance changed in the last one:
    t = f min.+ A ;  f = t where t < d (or d has no entry) ;  d<f.S> = f
its rounds are iterations of :func:`gbla.iterate`, run on the device when A is there.
Delta-stepping (Meyer & Sanders, in Davidson et al.'s near-far form, its bucket a window that
slides) does the same from the pending vertices within delta of the nearest pending one only,
each of its rounds one iteration of :func:`gbla.iterate` too, the window's end a reduction
into a Scalar that never leaves the device; on the GPU a round goes up to HOPS edges deep
inside its window (gbla.relax's hops). Predecessors are a BFS tree over the tight edges,
those with d(u) + w(u, v) == d(v), found with two diagonal scalings and a select.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _backend as B
from .. import _validation as V
from .. import direction as _direction
from .. import methods, ops, runtime
from ..matrix import as_graph
from ..scalar import Scalar
from ..semirings import any_secondi, binary, min_plus, monoid
from ..vector import Vector
from ._relax import RELAXATION_POLICY, policy_of, relax, relax_all
from .bfs import _no_budget_with_several, _several, _sources, bfs


def sssp(
    A: Any,
    source: Any,
    *,
    return_predecessors: bool = False,
    method: str = "auto",
    delta: float | None = None,
    direction: Any = "auto",
    stats: dict | None = None,
    memory_budget: int | None = None,
) -> Any:
    """Shortest-path distances (and predecessors) from ``source``.

    Parameters
    ----------
    A : Matrix, scipy.sparse or cupyx.scipy.sparse, square
        Entry (i, j) is an edge i -> j of weight A[i, j]; an explicit zero is a zero-weight edge;
        an unweighted (bool) matrix has weight 1 on every edge.
    source : int, or a sequence or 1-D array of ints
        Several sources run one Bellman-Ford each (method 'auto' or 'bellman_ford', no delta)
        and give 2-D results, a row per source.
    return_predecessors : bool
        Also return a shortest-path tree: pred[v] is v's predecessor on a shortest path.
    method : 'auto' or a name from ``gbla.methods.names("sssp")``
        'auto': on one GPU, the method :func:`auto_method` picks from the graph's size,
        weights and degrees (``single_block_bellman_ford``, ``bellman_ford``,
        ``async_delta_stepping_fixed`` or ``edge_bellman_ford``, as measured: README);
        elsewhere (the CPU, a negative weight, a direction other than 'auto', a partitioned
        matrix) Bellman-Ford in the algebra;
        delta-stepping in the algebra when a ``delta`` is given; ``"out_of_core_sssp"`` when a
        ``memory_budget`` is given. ``stats["method"]`` names the one that ran.
    delta : float or None
        Bucket width of delta-stepping; None: :func:`default_delta` of the method. With
        method 'auto', a delta asks for delta-stepping (every weight must then be non-negative).
    direction : 'auto', 'push', 'pull' or DirectionPolicy
        How each min-plus product runs; the results are the same. For the algebra's methods
        'auto' is :data:`RELAXATION_POLICY` (a rule without memory: a relaxation's rounds reach
        a vertex again and again).
    stats : dict or None
        When a dict is given, ``stats["method"]`` is set to the method that ran and
        ``stats["iterations"]`` to the relaxation rounds (Bellman-Ford: one min-plus product
        each; delta-stepping: one product from the pending vertices within delta of the
        nearest pending one each, on the GPU up to :data:`HOPS` edges deep inside that window);
        ``stats["edges_relaxed"]`` to the edges the rounds relaxed (summed over the sources
        with several; the kernels count theirs, the algebra's methods take their loop's
        ``edges``: a pushing round its frontier's out-edges, a pulling one every stored edge;
        the predecessor search after the rounds is not counted; absent on a partitioned
        matrix, whose products count nothing); the algebra's methods also what their loop's
        :func:`gbla.iterate` sets (``mode``, ``edges``, and in device mode ``graph``,
        ``fused``, ``fused_iterations`` ...); out of core, also the traffic (``h2d_bytes``,
        ``transfers``, ...) and the most device bytes held, ``peak_bytes``, beside
        ``budget_bytes``.
    memory_budget : int, float or None
        Device bytes the search may hold, as in :func:`gbla.bfs`: A, a CPU matrix, stays in
        host memory. Method 'auto' runs ``"out_of_core_sssp"`` (the kernels);
        ``"bellman_ford"`` and ``"delta_stepping"`` run their products on a
        :class:`gbla.outofcore.HostMatrix`. One source.

    Returns
    -------
    dist : array (the matrix's device), float64 or the weights' floating dtype
        dist[source] == 0; inf = unreached.
    pred : int32 array (int64 when n >= 2**31), when ``return_predecessors``
        pred[source] == source; -1 = unreached.

    Raises
    ------
    NegativeCycleError
        Bellman-Ford found a negative cycle reachable from the source (after at most n rounds).
    InvalidValue
        A NaN weight; a negative weight with method='delta_stepping'; a bad delta or source.

    Examples
    --------
    >>> import gbla
    >>> A = gbla.Matrix.from_edges([0, 0, 1], [1, 2, 2], [4.0, 9.0, 2.0], device="cpu")
    >>> gbla.sssp(A, 0)
    array([0., 4., 6.])
    """
    A = as_graph(A)
    n = A.nrows
    if _several(source):
        _no_budget_with_several(memory_budget)
        return _sssp_many(
            A,
            source,
            return_predecessors=return_predecessors,
            method=method,
            delta=delta,
            direction=direction,
            stats=stats,
        )
    source = V.source(source, n)
    V.flag(return_predecessors, "return_predecessors")
    if stats is not None and not isinstance(stats, dict):
        raise V.domain("stats", "be a dict or None", type(stats).__name__)
    auto = isinstance(method, str) and method == "auto"
    if auto and memory_budget is not None:
        method, auto = "out_of_core_sssp", False
    options = {}
    if not auto:  # a bad method or direction raises before the weights are read
        entry, resolved = methods.resolve(method, "sssp", A, direction)
        # the out-of-core kernel takes the budget; the algebra runs on A kept in host memory
        A, options = methods.with_budget(entry, A, memory_budget)
    A, dtype, lowest = _weights(A)
    if auto:
        if delta is not None and lowest < 0:
            raise V.invalid_value(
                "delta",
                "be None where a weight is negative (method='auto' "
                "then runs Bellman-Ford, which takes no delta)",
                delta,
            )
        method = auto_method(A, lowest, direction) if delta is None else "delta_stepping"
        entry, resolved = methods.resolve(method, "sssp", A, direction)
    if lowest < 0 and not entry.negative_weights:
        raise V.invalid_value("A", f"hold no negative weight with method={method!r}", lowest)
    if "delta" in entry.options:  # resolved here, so every bucketed method has one default
        options["delta"] = (
            default_delta(A, method) if delta is None else V.positive_finite(delta, "delta")
        )
    elif delta is not None:
        raise V.invalid_value("delta", f"be None with method={method!r}", delta)
    run_stats = {}
    result = entry.run(
        A,
        source,
        dtype=dtype,
        return_predecessors=return_predecessors,
        direction=resolved,
        stats=run_stats,
        **options,
    )
    if stats is not None:
        stats.update(run_stats, method=method)
        traffic = getattr(A, "traffic", None)  # kept in host memory: what crossed the bus
        if traffic is not None:
            stats.update(traffic())
    return result


# method='auto' on one GPU (README), fitted to the data set's corpus runs (every real graph, 8
# sources: benchmarks/results/sssp_corpus_h100.json and sssp_corpus_h200.json, benchmarks/
# results/ab/sssp_auto_rule_corpus.log, where the method it picks is the fastest row on 25 of
# 28 graphs on the H200) and the README's graphs: what decides is a search's depth in hops,
# which the degrees tell apart.
# - A small unweighted graph (at most AUTO_TINY vertices and AUTO_SMALL stored edges, every
#   weight equal) runs in one block: a mesh of a thousand vertices, a power grid, small social
#   graphs; 0.10-0.28 ms, where a whole-GPU launch costs more than the search.
# - A graph with hubs (the largest out-degree at least AUTO_SPREAD times the average) or dense
#   (average out-degree at least AUTO_DENSE) is shallow (5-14 hops: social and web graphs,
#   R-MAT): a few rounds of every edge, edge_bellman_ford.
# - The rest are deep (20 to 1,900 hops: road networks, meshes, citation and peer-to-peer
#   graphs, weighted small road graphs). Where every out-degree is at most AUTO_CHASE_DEGREE
#   and the average at most AUTO_SPARSE (road networks, large or small, weighted or not), the
#   algebra's Bellman-Ford, whose rounds follow what they improve BELLMAN_FORD_HOPS edges
#   deep, is the fastest: on one H200 (benchmarks/results/sssp_corpus_h200.json, unit
#   weights) 0.60-8.5 ms against the asynchronous kernel's 0.68-11.0 on the six USA roads,
#   luxembourg_osm, rome99, OL and TG. Elsewhere (meshes, of average out-degree 6-10, citation
#   and peer-to-peer graphs, whose out-degrees pass the direct push's bound) the asynchronous
#   kernel, which needs no round per hop: the algebra took 1.2-2.7x its time there.
# single_block_bellman_ford itself runs persistent_bellman_ford past its own limits.
AUTO_SMALL = 1 << 17
AUTO_TINY = 10_000
AUTO_SPREAD = 100.0
AUTO_DENSE = 20.0
AUTO_SPARSE = 4.0
# the largest out-degree whose products walk their frontier themselves and so follow what they
# improve hops deep (gbla.relax's hops; the kernels' _spmv.DIRECT_DEGREE, which a test holds
# equal)
AUTO_CHASE_DEGREE = 32


def auto_method(A, lowest, direction="auto"):
    """The method ``method='auto'`` runs on the checked matrix A (no delta given) whose
    smallest weight is ``lowest``: on one GPU with non-negative weights, direction 'auto' and
    int32 ids, ``single_block_bellman_ford`` for a small graph of equal weights (at most
    AUTO_TINY vertices and AUTO_SMALL stored edges), ``edge_bellman_ford`` for one with hubs
    or many edges a vertex (its largest out-degree at least AUTO_SPREAD times the average, or
    the average at least AUTO_DENSE), the algebra's ``bellman_ford`` for a road network's
    degrees (every out-degree at most AUTO_CHASE_DEGREE, the average at most AUTO_SPARSE),
    else ``async_delta_stepping_fixed``; the algebra's ``bellman_ford`` everywhere else (the
    CPU, a partitioned matrix, a negative weight, a direction asked for).

    Examples
    --------
    >>> import gbla
    >>> from gbla.algorithms.sssp import auto_method
    >>> A = gbla.Matrix.from_edges([0, 1], [1, 2], [4.0, 2.0], device="cpu")
    >>> auto_method(A, 2.0)
    'bellman_ford'
    """
    if (
        A.device != "gpu"
        or getattr(A, "partitioned", False)
        or lowest < 0
        or not (isinstance(direction, str) and direction == "auto")
    ):
        return "bellman_ford"
    if not methods.get("edge_bellman_ford").supports(A):  # past int32 ids
        return "bellman_ford"
    n, stored = max(A.nrows, 1), A.nvals
    if n <= AUTO_TINY and stored <= AUTO_SMALL and _equal_weights(A):
        return "single_block_bellman_ford"
    average, largest = stored / n, A._largest_degree()
    if average >= AUTO_DENSE or largest >= AUTO_SPREAD * average:
        return "edge_bellman_ford"
    if largest <= AUTO_CHASE_DEGREE and average <= AUTO_SPARSE:
        return "bellman_ford"
    return "async_delta_stepping_fixed"


def _equal_weights(A):
    """Whether every stored weight of A is the same positive number (an unweighted graph)."""
    if A.is_iso:
        return True
    facts = A.weights
    return facts.positive_count == A.nvals and facts.positive_mean <= facts.positive_min * (
        1 + 1e-9
    )


def _weights(A):
    """(A as searched, the distance dtype, the smallest weight): a bool matrix weighs 1 an
    edge (an explicit False included), an edge of weight +inf connects nothing and goes; NaN and
    -inf raise. A Matrix never changes, so what this reads of its weights is found once and
    kept with it (a search's call otherwise pays several device syncs before it starts)."""
    if A.dtype == np.bool_:
        A = A.pattern()
    dtype = A.dtype if A.dtype.kind == "f" else np.dtype(np.float64)
    lowest, infinite = _check_weights(A)
    if infinite:  # a partitioned matrix drops them part by part, alike on every rank
        if getattr(A, "partitioned", False):
            return ops.select(A, "<", np.inf), dtype, lowest
        if "finite_weights" not in A._cache:  # one matrix, so one recording, a call
            A._cache["finite_weights"] = ops.select(A, "<", np.inf)
        A = A._cache["finite_weights"]
    return A, dtype, lowest


def _sssp_many(A, sources, *, return_predecessors, method, delta, direction, stats):
    """Distances from several sources: Bellman-Ford from each in turn (its recorded loop
    replayed from each source on the device), the rows stacked. Measured on an H100 and on the
    CPU (benchmarks/results/ab/sssp_calls.log), this is faster than one Bellman-Ford over a
    frontier matrix (a row per source, one min.+ mxm a round for all of them): 64 sources
    3-12x on the GPU on every graph tried, and on the CPU on the weighted ones."""
    n = A.nrows
    sources = _sources(sources, n)
    V.flag(return_predecessors, "return_predecessors")
    if not (isinstance(method, str) and method in ("auto", "bellman_ford")):
        raise V.invalid_value("method", "be 'auto' or 'bellman_ford' with several sources", method)
    if delta is not None:
        raise V.invalid_value("delta", "be None with several sources", delta)
    if stats is not None and not isinstance(stats, dict):
        raise V.domain("stats", "be a dict or None", type(stats).__name__)
    entry, resolved = methods.resolve("bellman_ford", "sssp", A, direction)
    A, dtype, _ = _weights(A)
    xp = B.xp_of(A.device)
    dists, preds, rounds, relaxed = [], [], 0, 0
    for s in sources:
        run_stats = {}
        out = entry.run(
            A,
            s,
            dtype=dtype,
            return_predecessors=return_predecessors,
            direction=resolved,
            stats=run_stats,
        )
        dist, pred = out if return_predecessors else (out, None)
        dists.append(dist.astype(dtype, copy=False))
        preds.append(pred)
        rounds = max(rounds, run_stats.get("iterations", 0))
        edges = run_stats.get("edges_relaxed")
        relaxed = None if relaxed is None or edges is None else relaxed + edges
    if stats is not None:
        stats.update(method="bellman_ford", iterations=rounds)
        if relaxed is not None:  # the work of every search, where each counted its own
            stats["edges_relaxed"] = relaxed
    index = np.int32 if n < 2**31 else np.int64
    dense = xp.stack(dists) if dists else xp.zeros((0, n), dtype)
    if not return_predecessors:
        return dense
    return dense, (xp.stack(preds) if preds else xp.zeros((0, n), index))


def _run(solve):
    """A registry entry's run: ``solve(A, source, dtype, direction, stats, **options)`` gives
    the distance Vector and puts its loop's stats in ``stats`` (gbla.iterate's: its iterations,
    one min-plus product each, and the edges they examined, every one a relaxation);
    predecessors are shared."""

    def run(A, source, *, dtype, return_predecessors, direction, stats, **options):
        dist = solve(A, source, dtype, _direction.start(direction), stats, **options)
        # every product of the loop is a relaxation; the predecessor search below runs
        # outside it and is not counted
        if "edges" in stats:
            stats["edges_relaxed"] = stats["edges"]
        if return_predecessors:
            return dist.to_dense(np.inf), _predecessors(A, source, dist)
        return dist.to_dense(np.inf)

    return run


# The algebra's delta-stepping takes a window this many times wider than the kernels' buckets:
# its iteration costs its 14 kernels, 3-8 us each whatever their lists hold
# (benchmarks/results/ab/loop_launches_store_reduce_sites_h100.log), not its edges, so fewer
# iterations pay more than fewer relaxations. One H200, weights 1..255,
# 4 sources, median ms at 0.5x / 1x / 2x / 3x the width, against the lowest bucket at 4x that
# it replaced (benchmarks/results/ab/sssp_algebra_sliding_window.log): USA-road-NE 127 / 118 /
# 109 / 107 (bucket 131), USA-road-FLA 101 / 95.1 / 97.6 / 94.2 (103), ego-Twitter 2.69 /
# 2.44 / 2.26 / 2.25 (2.26), rmat(22) 25.7 / 24.2 / 21.7 / 22.0 (22.6). With HOPS (below) 3x
# still wins: 2x is about 10% slower on NE and FLA, 6x collapses on NY, BAY and COL
# (benchmarks/results/ab/algebra_delta_stepping_hops_h200.log).
ALGEBRA_WIDTH = 3.0


def default_delta(A, method=None):
    """The default bucket width: ``A.weights.bucket_width`` (32 x mean positive weight /
    average out-degree, the GPU choice of Davidson et al., IPDPS 2014, at least the smallest
    positive weight; 1 when no weight is positive). Wider buckets mean fewer buckets, each
    relaxed like Bellman-Ford: on a GPU the number of steps, not the work per step, sets the
    time on high-diameter graphs. For ``method`` 'delta_stepping' (the algebra's)
    :data:`ALGEBRA_WIDTH` times wider."""
    if method == "delta_stepping":
        return ALGEBRA_WIDTH * default_delta(A)
    if A.nvals == 0:
        return 1.0
    return A.weights.bucket_width(A.nvals, A.nrows)  # the whole matrix's, on every rank


def _check_weights(A):
    """(the smallest finite weight, whether some weight is +inf); NaN and -inf weights raise.
    Read off ``A.weights`` (a Matrix's found once and kept)."""
    facts = A.weights
    if facts.bad is not None:
        raise V.invalid_value("A", "hold no NaN or -inf weight", facts.bad)
    return facts.lowest, facts.infinite


# Whether one block runs the small rounds of the algebra's Bellman-Ford and delta-stepping
# (gbla.iterate's fuse): no. On an H200 the block lost at every bound tried, road networks,
# weights 1..255 (benchmarks/results/ab/fused_block_bounds_h200.log): Bellman-Ford NE 48.4 ms
# without it against 50.1-51.0, FLA 56.1 against 57.1-59.9; delta-stepping NE 51.2 against
# 51.7-70.5, FLA 70.3 against 69.4-114.6. (A BFS level, which writes no relaxation, gains:
# NE 21.7 against 23.9, FLA 25.0 against 37.6.) The tests run the rounds both ways.
FUSE_ROUNDS = False


# How many edges deep the algebra's Bellman-Ford relaxes in one round from the vertices whose
# distance fell (gbla.relax's hops, with no window: every improvement is followed where the
# product walks the frontier's list itself, a road network's, which then always pushes).
# Swept on one H200, weights 1..255, 6 sources (benchmarks/results/ab/
# algebra_bellman_ford_hops_h200.log): USA-road-NE 76 ms at one hop, 10.5 / 9.0 / 10.3 at
# 16 / 24 / 32 (88 rounds, 10 relaxations a stored edge at 24), FLA 53 -> 8.5 / 7.4 / 7.8;
# at 24 it is ahead of delta-stepping's 32 hops on six road networks.
BELLMAN_FORD_HOPS = 24


def _bellman_ford(A, source, dtype, direction, stats):
    n = A.nrows
    hops = BELLMAN_FORD_HOPS
    first = _at_source(source, n, dtype, A.device)
    dist = _unreached_but(source, n, dtype, A.device)
    # Without a negative cycle, n - 1 rounds settle every shortest path (a round relaxes at
    # least one hop); a change in round n proves a reachable negative cycle. The loop is
    # bounded either way.
    dist, frontier, rounds = relax_all(
        dist,
        step=lambda d, f: ops.relax(d, f, A, min_plus, direction=direction, hops=hops),
        frontier=first,
        max_iterations=n,
        cache=A,
        key=("gbla.bellman_ford", policy_of(direction), hops),
        stats=stats,
        fuse=FUSE_ROUNDS,
    )
    if rounds == n and frontier.nvals:  # sync: a change in round n
        raise V.negative_cycle(n)
    return dist


def _unreached_but(source, n, dtype, device):
    """Every distance present, +inf but 0 at ``source``: a relaxation's test is then one
    comparison (see gbla.ops.improve)."""
    return _at_source(source, n, dtype, device, elsewhere=np.dtype(dtype).type(np.inf))


def _at_source(source, n, dtype, device, elsewhere=None):
    """0 at ``source``; no other entry, or ``elsewhere`` at every other. On the GPU it stays on
    the host until used: a recorded loop writes it inside its launch."""
    return Vector._from_host_entries([source], np.zeros(1, dtype), n, elsewhere, device)


# How many edges deep the algebra's delta-stepping relaxes in one round from the vertices it
# expands (gbla.relax's hops): a vertex whose distance falls inside the window has its edges
# relaxed in the same launch where the product walks the pending list itself (a road
# network's), instead of waiting for the next round. Swept on one H200 (8-64, widths 2-6x;
# benchmarks/results/ab/algebra_delta_stepping_hops_h200.log): at 32 and the 3x width, NE's
# rounds 1,300-2,200 -> 67-117, 51 -> 12.3 ms, at or ahead of async_delta_stepping_fixed on
# six road networks; a wider window lost (its fronts pass the direct push's bound).
HOPS = 32


def _delta_stepping(A, source, dtype, direction, stats, delta):
    # Delta-stepping in Davidson et al.'s near-far form (IPDPS 2014): an iteration of
    # gbla.iterate relaxes every out-edge of the pending vertices (those whose distance fell
    # since they were last expanded) within delta of the nearest of them, d <= min(d) + delta;
    # the others wait. The window slides with the nearest pending vertex instead of waiting for
    # the lowest of fixed buckets floor(d / delta) to empty: a vertex near a bucket's top no
    # longer waits a round for the bucket's last ones, which took 10-20% more rounds on the
    # road networks (benchmarks/results/ab/sssp_algebra_sliding_window.log).
    # The window's start, the least pending distance, is the loop's test_reduce: a Scalar that
    # never leaves the device, written by the store of the pending set at the end of each
    # iteration (no launch of its own). One product an iteration, none split into light and
    # heavy edges: on a GPU an iteration costs its launches, which a heavy pass would double,
    # and a road network's edges are all light at the default width anyway
    # (benchmarks/results/ab/sssp_algebra_near_far.log).
    n = A.nrows
    width = dtype.type(delta)
    low = Scalar.new(dtype, device=A.device)
    hops = HOPS

    def round_(s, _):
        # low: the least pending distance (test_reduce). The window, d <= low + width (added
        # in dtype by the kernels: the same value as the lowest of the rounded d + width, since
        # rounding is monotone, and no lower than the lowest pending distance, which is never
        # +inf: the window always holds that vertex, and the loop moves on). Its vertices are
        # expanded; the others stay pending beside the vertices whose distance fell (the lower
        # where both), the product's gather picking the window and the product writing both
        s.pending = relax(
            s.dist, s.pending, A, min_plus, binary.lt, direction, window=low + width, hops=hops
        )

    state = {
        "dist": _unreached_but(source, n, dtype, A.device),
        "pending": _at_source(source, n, dtype, A.device),
    }
    out = runtime.iterate(
        round_,
        state,
        while_nonempty="pending",
        cache=A,
        key=("gbla.delta_stepping", policy_of(direction), delta, hops),
        stats=stats,
        fuse=FUSE_ROUNDS,
        test_reduce=(monoid.min, low),
    )
    return out["dist"]


def _predecessors(A, source, dist):
    # A path sum that overflows to +inf reaches nothing: only finite distances are reached.
    dist = ops.select(dist, "<", np.inf)
    # d(u) + w(u, v) for reached u, compared with d(v): the tight edges.
    sums = ops.scale(A, dist, binary.plus, side="left")
    tight = ops.select(ops.scale(sums, dist, binary.eq, side="right"), "nonzero")
    if _climbing(A, dist):
        # Every tight edge climbs, so they form no cycle, and every reached vertex but the
        # source has one in (the last edge of its path): any of them is a shortest-path tree's
        # edge. One product; a search over them would record a loop on each new matrix. It
        # pushes: a pull would first build the transpose of a matrix used once (OL on an H200:
        # 1.25 ms, the push 0.3-0.5).
        parents = ops.vxm(dist, tight, any_secondi, direction="push").to_dense(-1)
        parents = parents.astype(np.int32 if A.nrows < 2**31 else np.int64, copy=False)
        parents[source] = source
        return parents
    return bfs(tight, source, return_predecessors=True)[1]


def _climbing(A, dist):
    """Whether A's weights climb over the distances ``dist`` (``WeightFacts.climbs``; a
    partitioned matrix's predecessors always come from the search)."""
    if getattr(A, "partitioned", False) or A.weights.lowest <= 0:  # no reduction then
        return False
    farthest = ops.reduce(dist, monoid.max)  # sync: the farthest distance (the source's is 0)
    return A.weights.climbs(float(farthest), dist.dtype)


methods.register(
    methods.Method(
        "delta_stepping",
        "sssp",
        "delta-stepping in min.plus products (near-far form): each "
        "round relaxes the pending vertices within delta of the nearest one (on the GPU up to "
        "HOPS edges deep inside that window, where the product walks them itself); on the CPU a "
        "product over a dense frontier gathers its edges' int64 columns, weights and "
        "products at once (about 6x the graph on R-MAT)",
        _run(_delta_stepping),
        algebraic=True,
        directions=True,
        options=("delta",),
        partitioned=True,
        auto_policy=RELAXATION_POLICY,
    )
)
methods.register(
    methods.Method(
        "bellman_ford",
        "sssp",
        "Bellman-Ford as repeated masked min.plus vxm until no distance "
        "changes; on the CPU a product over a dense frontier gathers its edges' int64 columns, "
        "weights and products at once (about 6x the graph on R-MAT)",
        _run(_bellman_ford),
        algebraic=True,
        directions=True,
        negative_weights=True,
        partitioned=True,
        auto_policy=RELAXATION_POLICY,
    )
)
