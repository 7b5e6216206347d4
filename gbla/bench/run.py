"""Running a benchmark: the methods chosen from the registry, each timed on the same sources
and its peak memory measured in untimed calls of its own, the peers (SciPy, python-graphblas)
on the host, and every result checked against the reference method's."""

import contextlib
import functools
import gc
import importlib
import os
import re
import statistics
import subprocess
import tempfile
import time
import tracemalloc

import numpy as np
from scipy.sparse import csgraph

from .. import _backend as B
from .. import _validation as V
from .. import methods as registry
from .. import verify
from .._warmup import command
from ..algorithms import bfs, sssp
from ..exceptions import UnknownName, ValidationError
from ..io import FormatError
from ..matrix import Matrix
from .graphs import (
    GraphSpec,
    _edge_weights,
    graph_info,
    load_graph,
    parse_graph_spec,
    pick_sources,
    sssp_weights,
)
from .report import WARM_MS, us_per_level

PEERS = ("scipy", "graphblas")


class _Auto:
    """``method='auto'`` of gbla.sssp as a row of its own: the method it picks, the one it ran
    named in the row's note."""

    name = "auto"
    algebraic = False
    devices = ("cpu", "gpu")
    options = ()

    @staticmethod
    def unsupported_reason(A):
        return None


AUTO = _Auto()


def resolve_methods(algo, methods="all"):
    """The registered methods that ``methods`` names: 'all', or names joined by commas (a
    list also works), in the order given; the first one that runs is the reference. For SSSP,
    'auto' (not in 'all') is the method gbla.sssp picks itself (:data:`AUTO`).

    Raises
    ------
    UnknownName
        A name that is not a registered method of ``algo``.
    """
    V.one_of(algo, registry.ALGORITHMS, "algo")
    valid = registry.names(algo)
    if isinstance(methods, str):
        methods = valid if methods == "all" else [m.strip() for m in methods.split(",")]
    chosen = []
    for name in methods:
        if name not in valid and not (name == "auto" and algo == "sssp"):
            choices = "'all', 'auto' or sssp" if algo == "sssp" else f"'all' or {algo}"
            raise UnknownName(V.message("--methods", f"be {choices} methods from {valid}", name))
        if name not in chosen:
            chosen.append(name)
    return [AUTO if name == "auto" else registry.get(name, algo) for name in chosen]


def skip_note(method, A, memory_budget=None):
    """A short reason why ``method`` cannot run on A (None when it can). An out-of-core method
    runs only with a ``memory_budget``, on a host copy of A."""
    if "memory_budget" in method.options:
        return "out of core: needs --memory-budget" if memory_budget is None else None
    reason = method.unsupported_reason(A)
    if reason is None:
        return None
    if A.device not in method.devices and "gpu" in method.devices:
        return "needs a GPU" if not B.gpu_available() else "GPU only: run with --device gpu"
    return reason


class _PeakMemory:
    """The most bytes a method's calls held at once above what was in use before the first of
    them: on the GPU the bytes in use in CuPy's default pool, read by a memory hook after each
    allocation (a recording's private pool draws its blocks from the default one, so they
    count); on the CPU the bytes tracemalloc traces (NumPy reports its buffers to it). Each
    :meth:`measure` is a call of its own, never a timed one: the hook and tracemalloc slow it.
    What a call leaves allocated (a cache on the matrix) stays counted in the later calls'
    peaks."""

    def __init__(self, device):
        self.device = device
        self.held = 0
        gc.collect()  # what an earlier method left in cycles goes now, not during a measure
        self.base = B._cupy().get_default_memory_pool().used_bytes() if device == "gpu" else None

    def measure(self, call):
        """Run ``call()``, dropping what it returns; its peak bytes above the first call's
        start."""
        # Garbage in cycles (a matrix made for one call and its caches) goes before each
        # reading, so that none counts as kept, nor lowers a peak when it goes mid-call.
        gc.collect()
        if self.device == "gpu":
            pool = B._cupy().get_default_memory_pool()
            before = pool.used_bytes()
            with _pool_peak_hook()(pool) as hook:
                call()
            gc.collect()
            top, after = hook.peak, pool.used_bytes()
        else:
            tracing = tracemalloc.is_tracing()  # a caller's tracing is left running
            if not tracing:
                tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            try:
                call()
                gc.collect()
                after, top = tracemalloc.get_traced_memory()
            finally:
                if not tracing:
                    tracemalloc.stop()
        peak = self.held + top - before
        self.held += after - before
        return peak


@functools.lru_cache(maxsize=None)
def _pool_peak_hook():
    """A CuPy memory hook class (made on first use: it needs CuPy) keeping the most bytes in
    use in ``pool`` after any allocation while installed."""
    from cupy.cuda import memory_hook

    class PoolPeak(memory_hook.MemoryHook):
        name = "gbla_bench_peak"

        def __init__(self, pool):
            self.pool = pool
            self.peak = self.bound = pool.used_bytes()

        def malloc_postprocess(self, **kwargs):
            # used_bytes() walks the pool's blocks: read only when what was handed out since
            # the last reading (frees only lower it) could top the peak
            self.bound += kwargs["mem_size"]
            if self.bound > self.peak:
                self.bound = self.pool.used_bytes()
                self.peak = max(self.peak, self.bound)

    return PoolPeak


def _uncached(A):
    """A Matrix sharing A's arrays with none of its caches (a symmetric one keeps its free
    transpose): what a method builds on it counts in that method's memory and goes with it."""
    if not isinstance(A, Matrix):
        return A
    view = Matrix._wrap(A._indptr, A._indices, A._values, A.shape, A.dtype, A.device, A._symmetric)
    if A._symmetric:
        view._T = Matrix._wrap(A._indptr, A._indices, A._values, A.shape, A.dtype, A.device, True)
        view._T._T = view
    return view


def _call(algo, A, method, source, options):
    """One search; returns (result on the device, stats dict). A BFS asks for no stats unless
    it has options (out of core: the traffic), since its stats cost a device sync."""
    stats = {}
    if algo == "bfs":
        return bfs(A, source, method=method, stats=stats if options else None, **options), stats
    return sssp(A, source, method=method, stats=stats, **options), stats


def run_method(
    A,
    algo,
    method,
    sources,
    *,
    warmup=None,
    on_result=None,
    progress=None,
    options=None,
    memory_device=None,
):
    """Time the registered ``method`` (a name) on every source, after one untimed run from
    ``warmup`` (so that compilation stays out of the times), then measure its peak memory
    from each source in untimed calls of their own.

    Each run is timed as a whole call with the device synchronized before and after, the runs
    back to back: each result is copied to the host as it comes, and handed to
    ``on_result(i, result)`` only after the last timed run, so that no checking leaves the
    GPU idle between two timed calls (an H100 left idle for 20 ms runs the next kernels
    several times slower for a while: benchmarks/results/ab/fused_block_bounds_and_idle_gpu.log).
    ``progress()`` is called after every run, the warm-up and the memory runs included.

    The method runs on a view of A without A's caches, so that what it builds on the graph
    (a transpose, an int32 copy, a recorded loop, a worklist) counts in its memory, none of
    an earlier method's does, and all of it goes when the method is done.

    Returns
    -------
    dict
        times_ms (per source), counts (BFS: levels, the source's included; SSSP: min-plus
        iterations), relaxed (SSSP: the edges each search relaxed, from its stats; None where
        a method does not count them); peak_bytes_per_source (the most bytes the method held
        at once in its call from each source, above what was in use before its first call:
        what it keeps on the graph from earlier calls included, the graph itself not; CuPy's
        pool on the GPU, tracemalloc on the CPU, as ``memory_device`` says, A's device by
        default), peak_bytes (the largest of them and of the warm-up's), base_bytes (CuPy pool
        bytes in use before the first call; None on the CPU); with ``options`` (an
        out-of-core method's memory_budget), h2d_bytes per source and graph_bytes, and
        held_of_budget per source (the peak device bytes the search held, as it accounts them,
        over its budget).
    """
    options = options or {}
    A = _uncached(A)
    memory = _PeakMemory(memory_device or A.device)
    times, results, h2d, graph_bytes, peaks, held = [], [], [], None, [], []
    if warmup is not None:  # untimed: its peak is measured, compilation and caches included

        def warm():
            return _call(algo, A, method, warmup, options)

        peaks.append(memory.measure(warm))
        _warm(A.device, warm)
        if progress is not None:
            progress()
    for source in sources:
        B.sync(A.device)  # sync: nothing queued before the timed call
        t0 = time.perf_counter()
        result, stats = _call(algo, A, method, source, options)
        B.sync(A.device)  # sync: the call's work is done
        times.append((time.perf_counter() - t0) * 1e3)
        results.append((B.to_host(result), stats))
        if "h2d_bytes" in stats:
            h2d.append(stats["h2d_bytes"])
            graph_bytes = stats["graph_bytes"]
        if stats.get("budget_bytes"):  # out of core: the device bytes held against the budget
            held.append(stats["peak_bytes"] / stats["budget_bytes"])
        del result
        if progress is not None:
            progress()
    # BFS levels come from the result rather than stats=, whose reduction would add a device
    # sync to the timed call; the number is the same.
    counts = [
        _levels(result) if algo == "bfs" else stats.get("iterations") for result, stats in results
    ]
    if on_result is not None:
        for i, (result, _) in enumerate(results):
            on_result(i, result)
    relaxed = [stats.get("edges_relaxed") for _, stats in results]
    ran = sorted({stats["method"] for _, stats in results if "method" in stats})
    per_source = []
    for source in sources:
        per_source.append(memory.measure(lambda s=source: _call(algo, A, method, s, options)))
        if progress is not None:
            progress()
    out = dict(
        times_ms=times,
        counts=counts,
        relaxed=relaxed,
        peak_bytes=max(peaks + per_source, default=None),
        peak_bytes_per_source=per_source,
        base_bytes=memory.base,
        ran=ran,
    )
    if h2d:
        out.update(h2d_bytes=h2d, graph_bytes=graph_bytes)
    if held:
        out.update(held_of_budget=held)
    return out


def _warm(device, call, ms=WARM_MS, most=200):
    """On a GPU, ``call()`` again until ``ms`` have passed (at most ``most`` times): the clocks
    of a GPU that sat idle take that long to come back (report.WARMED)."""
    if device != "gpu":
        return
    start = time.perf_counter()
    for _ in range(most):
        call()
        B.sync(device)  # sync: the warm-up's work is done
        if (time.perf_counter() - start) * 1e3 >= ms:
            return


def _levels(levels):
    return int(levels.max()) + 1


def run_peer(S, algo, peer, sources, *, on_result=None, progress=None):
    """Time a peer library on the host on every source: ``peer`` 'scipy'
    (``csgraph.breadth_first_order``; ``csgraph.dijkstra``) or 'graphblas' (python-graphblas:
    a masked ``any_pair`` vxm per level; Bellman-Ford over ``min_plus``). ``S`` is the graph
    as a scipy.sparse CSR array. Results (levels with -1, distances with inf) go to
    ``on_result`` as in :func:`run_method`; times cover the search alone, not the levels
    derived from SciPy's predecessors. Returns the same dict, peak memory None (not
    measured)."""
    search = _peer_search(S, algo, peer)
    times, raws = [], []
    for source in sources:
        t0 = time.perf_counter()
        raw = search(source)
        times.append((time.perf_counter() - t0) * 1e3)
        raws.append(raw)
        if progress is not None:
            progress()
    counts = []
    for i, raw in enumerate(raws):  # checked after the timed runs, as run_method's
        result, count = raw() if callable(raw) else raw
        counts.append(count)
        if on_result is not None:
            on_result(i, result)
    return dict(
        times_ms=times,
        counts=counts,
        relaxed=[None] * len(times),
        peak_bytes=None,
        peak_bytes_per_source=[],
        base_bytes=None,
    )


def _peer_search(S, algo, peer):
    """A function source -> (result, count), or -> a function giving them (work after the
    timed part)."""
    if peer == "scipy":
        if algo == "bfs":

            def search(source):
                _, pred = csgraph.breadth_first_order(
                    S, source, directed=True, return_predecessors=True
                )

                def levels():
                    pred[source] = source
                    depth, _ = verify._tree_depths(np.where(pred < 0, -1, pred), source)
                    return depth, _levels(depth)

                return levels

            return search
        return lambda source: (csgraph.dijkstra(S, directed=True, indices=source), None)
    import graphblas as gb

    G = gb.io.from_scipy_sparse(S)
    n = S.shape[0]
    if algo == "bfs":

        def search(source):
            levels = gb.Vector(gb.dtypes.INT64, n)
            q = gb.Vector(gb.dtypes.BOOL, n)
            q[source] = True
            depth = 0
            while q.nvals:
                levels(q.S) << depth
                depth += 1
                q(~levels.S, replace=True) << q.vxm(G, gb.semiring.any_pair)
            return levels.to_dense(fill_value=-1), depth

        return search

    def search(source):
        dist = gb.Vector(gb.dtypes.FP64, n)
        dist[source] = 0
        frontier, rounds = dist.dup(), 0
        while frontier.nvals:  # relax from the vertices whose distance changed
            rounds += 1
            t = frontier.vxm(G, gb.semiring.min_plus).new()
            new = gb.binary.min(dist | t).new()
            frontier = gb.Vector(gb.dtypes.FP64, n)
            frontier(~dist.S) << new
            frontier(gb.binary.lt(new & dist).new().V) << new
            dist = new
        return dist.to_dense(fill_value=np.inf), rounds

    return search


def _same(algo, a, b):
    if a.shape != b.shape:
        return False
    if algo == "bfs":
        return bool(np.array_equal(a, b))
    rtol = 1e-5 if np.float32 in (a.dtype, b.dtype) else 1e-9
    return bool(np.allclose(a, b, rtol=rtol, atol=0.0))


def _reached(algo, result):
    return result >= 0 if algo == "bfs" else np.isfinite(result)


def _summary(run, edges, level_synchronous=True):
    """Mean and median ms; Graph500's TEPS: the harmonic mean over sources of edges / time, in
    billions; and, for a level-synchronous method, the mean over sources of microseconds per
    level (BFS: per level reached, the source's included; SSSP: per min-plus product)."""
    times = run["times_ms"]
    per_source = [e / (t / 1e3) / 1e9 if t > 0 else None for t, e in zip(times, edges)]
    seconds_per_edge = sum(t / 1e3 / e for t, e in zip(times, edges) if e)
    return dict(
        mean_ms=statistics.fmean(times),
        median_ms=statistics.median(times),
        gteps=len(times) / seconds_per_edge / 1e9 if seconds_per_edge else None,
        gteps_per_source=per_source,
        us_per_level=us_per_level(times, run["counts"]) if level_synchronous else None,
    )


def _unreadable(spec, algo, device, error):
    """The record of a graph that could not be read (check 'UNREADABLE', the reason in note)."""
    return dict(
        _empty(),
        graph=spec.text,
        graph_info=None,
        algo=algo,
        kind="graph",
        method="-",
        device=device,
        status="unreadable",
        check="UNREADABLE",
        note=f"{type(error).__name__}: {error}",
        sources=[],
        count_name="levels" if algo == "bfs" else "iterations",
    )


def run_bench(
    graphs,
    *,
    algo="bfs",
    methods="all",
    sources=16,
    seed=0,
    peers=(),
    peer_sources=None,
    device=None,
    weights=None,
    progress=None,
    on_graph=None,
    memory_budget=None,
    first_call=False,
):
    """Benchmark ``methods`` of ``algo`` (and ``peers``) on each graph.

    Parameters
    ----------
    graphs : list of str or GraphSpec
        See :func:`parse_graph_spec`. All are parsed before any is loaded.
    algo : 'bfs' or 'sssp'
    methods : 'all', names joined by commas, or a list of names
        The first method that runs is the reference every other result is checked against;
        its own result on the first source is checked by gbla.verify (Graph500's rules).
    sources : int
        Number of timed sources per graph, the same for every method, plus one warm-up.
    seed : int
        Seeds the sources, the generated graphs and generated weights.
    peers : sequence of 'scipy', 'graphblas'
        Host libraries run on the first ``peer_sources`` of the same sources (all when None).
    device : 'cpu', 'gpu' or None (the default device)
    weights : (lo, hi)
        SSSP on a graph without weights draws integer weights in [lo, hi].
    progress : callable(done, total, label) or None
    on_graph : callable(list of records) or None
        Called with each graph's records as soon as its runs finish.
    memory_budget : int, float or None
        The out-of-core methods run with it, on a host copy of each graph (skipped without);
        their records get h2d_bytes (per source) and graph_bytes, and a note with the ratio.
    first_call : bool
        Also time each method's first call in new processes (:func:`first_calls`), the warm-up
        source's: records get first_cold_ms, first_warm_ms, process_cold_ms and
        process_warm_ms (None for the out-of-core methods, whose command takes no budget).

    Returns
    -------
    list of dict
        One record per (graph, method): see ``gbla bench --help`` and :func:`format_table`.
        ``check`` is 'ok', 'MISMATCH' (differs from the reference on some source), 'INVALID'
        (the reference fails gbla.verify), 'ERROR' (the method raised), 'UNREADABLE' (the
        graph's one record: its file could not be read; the other graphs still run) or None
        (skipped).

    Raises
    ------
    InvalidValue, UnknownName, DeviceMismatch
        A bad graph spec, method, peer, sources count or device, before anything runs.
    """
    specs = [g if isinstance(g, GraphSpec) else parse_graph_spec(g) for g in graphs]
    chosen = resolve_methods(algo, methods)
    for peer in peers:
        V.one_of(peer, PEERS, "peer")
    if "graphblas" in peers:
        importlib.import_module("graphblas")  # fail now, not after the first graph
    V.integer(sources, "sources")
    if sources < 1:
        raise V.invalid_value("sources", "be a positive integer", sources)
    if peer_sources is not None and (V.integer(peer_sources, "peer_sources") < 1):
        raise V.invalid_value("peer_sources", "be a positive integer", peer_sources)
    device = B.resolve_device(device)
    records, done = [], [0]
    n_peer = min(sources, peer_sources or sources)
    # a method: the warm-up, the timed runs, the memory runs
    total = len(specs) * (len(chosen) * (2 * sources + 1) + len(peers) * n_peer)

    def tick(label, units=1):
        done[0] += units
        if progress is not None:
            progress(done[0], total, label)

    for spec in specs:
        if progress is not None:
            progress(done[0], total, f"loading {spec.text}")
        try:
            graph_records = _bench_graph(
                spec,
                algo,
                chosen,
                sources,
                seed,
                peers,
                n_peer,
                device,
                weights,
                tick,
                memory_budget,
                first_call,
            )
        except (FormatError, OSError, MemoryError) as e:  # this graph only: the rest still run
            graph_records = [_unreadable(spec, algo, device, e)]
        records.extend(graph_records)
        if on_graph is not None:
            on_graph(graph_records)
    return records


def _bench_graph(
    spec,
    algo,
    chosen,
    n_sources,
    seed,
    peers,
    n_peer,
    device,
    weights,
    tick,
    memory_budget=None,
    first_call=False,
):
    A = load_graph(spec, device=device, seed=seed)
    generated = False
    if algo == "sssp":
        A, generated = sssp_weights(A, weights, seed)
    info = graph_info(A)
    info["weights"] = (
        dict(source="generated", lo=int(weights[0]), hi=int(weights[1]), seed=seed)
        if generated
        else dict(source="graph", dtype=A.dtype.name)
        if A.dtype != np.bool_
        else dict(source="unit")
        if algo == "sssp"
        else None
    )
    vertex_edges = _edge_weights(A, info["symmetric"])
    divisor = 2 if info["symmetric"] else 1
    warmup, sources = pick_sources(A, n_sources, seed)
    base = dict(
        graph=spec.text,
        graph_info=info,
        algo=algo,
        warmup_source=warmup,
        count_name="levels" if algo == "bfs" else "iterations",
    )
    reference = dict(name=None, results={})  # the first method that runs, its results
    records = []

    def contender(name, kind, dev, runner, k):
        record = dict(
            base,
            method=name,
            kind=kind,
            device=dev,
            sources=sources[:k],
            status="ok",
            reason=None,
            check="ok",
            mismatches=[],
            note=None,
        )
        edges = [None] * k
        first = reference["name"] is None

        def on_result(i, result):
            edges[i] = int(vertex_edges[_reached(algo, result)].sum()) // divisor
            if first:
                reference["results"][i] = result
            elif i in reference["results"] and not _same(algo, result, reference["results"][i]):
                record["mismatches"].append(sources[i])

        try:
            run = runner(on_result)
        except Exception as e:  # noqa: BLE001  (reported in the table, exit status nonzero)
            if first:
                reference["results"].clear()
            record.update(
                _empty(), status="error", reason=_one_line(e), check="ERROR", note=_one_line(e)
            )
            records.append(record)
            return
        record.update(
            run,
            edges=edges,
            **_summary(run, edges, kind != "peer"),
            relaxed_per_edge=_per_edge(run["relaxed"], A.nvals),
            peak_ratio=_ratio(run["peak_bytes"], info["stored_bytes"]),
        )
        if name == "auto" and run.get("ran"):  # what 'auto' chose
            record["note"] = "ran " + ", ".join(run["ran"])
        bad = record["mismatches"]
        if first:
            reference["name"] = name
            valid = _validate(algo, A, sources[0], reference["results"][0])
            record["note"] = "; ".join(
                filter(None, [f"reference; {valid or 'valid by gbla.verify'}", record["note"]])
            )
            record["check"] = "INVALID" if valid else "ok"
        elif bad:
            record["check"] = "MISMATCH"
            record["note"] = (
                f"{'levels' if algo == 'bfs' else 'distances'} differ from "
                f"{reference['name']} on {len(bad)} of {k} sources "
                f"(first: {bad[0]})"
            )
        if k < n_sources:
            record["note"] = "; ".join(
                filter(None, [record["note"], f"first {k} of {n_sources} sources"])
            )
        records.append(record)

    host = {}  # a CPU copy of A for the out-of-core methods, made once

    def on_host():
        if "A" not in host:
            host["A"] = A if A.device == "cpu" else A.to_device("cpu")
        return host["A"]

    for method in chosen:
        kind = "auto" if method is AUTO else "algebraic" if method.algebraic else "kernel"
        note = skip_note(method, A, memory_budget)
        if note is not None:
            records.append(
                dict(
                    base,
                    **_empty(),
                    method=method.name,
                    kind=kind,
                    device=",".join(method.devices),
                    sources=sources,
                    status="skipped",
                    reason=method.unsupported_reason(A) or note,
                    check=None,
                    note=note,
                )
            )
            tick(f"{spec.text} {method.name} (skipped)", 2 * n_sources + 1)
            continue
        if "memory_budget" in method.options:
            contender(
                method.name,
                "out of core",
                "cpu",
                lambda on_result, name=method.name: run_method(
                    on_host(),
                    algo,
                    name,
                    sources,
                    warmup=warmup,
                    on_result=on_result,
                    progress=lambda: tick(f"{spec.text} {name}"),
                    options={"memory_budget": memory_budget},
                    memory_device=device,
                ),
                n_sources,
            )
            continue
        contender(
            method.name,
            kind,
            A.device,
            lambda on_result, name=method.name: run_method(
                A,
                algo,
                name,
                sources,
                warmup=warmup,
                on_result=on_result,
                progress=lambda: tick(f"{spec.text} {name}"),
            ),
            n_sources,
        )
        if first_call and records[-1]["status"] == "ok":
            record = records[-1]
            try:
                record.update(
                    first_calls(spec.text, algo, method.name, warmup, A.device, weights, seed)
                )
            except (RuntimeError, subprocess.TimeoutExpired) as e:  # said in the row's note
                record["note"] = "; ".join(filter(None, [record["note"], _one_line(e)]))
    if peers:
        S = A.to_scipy()
        for peer in peers:
            contender(
                peer,
                "peer",
                "cpu",
                lambda on_result, peer=peer: run_peer(
                    S,
                    algo,
                    peer,
                    sources[:n_peer],
                    on_result=on_result,
                    progress=lambda: tick(f"{spec.text} {peer}"),
                ),
                n_peer,
            )
    return records


_TIME = re.compile(r"^time\s+([0-9.,]+) ms", re.M)  # the line `gbla bfs|sssp` prints


# New processes the warm first call is timed in (the median is reported): one first call meets
# an idle GPU, whose clocks make single runs differ by up to 2x (98.7 and 198 ms in one run).
WARM_RUNS = 3


def first_calls(graph, algo, method, source, device, weights=None, seed=0, timeout=900):
    """A method's first call in a new process, three ways: ``gbla ALGO GRAPH --source S
    --method M`` run with empty kernel caches (``CUPY_CACHE_DIR`` and ``GBLA_CACHE_DIR`` new
    folders, as on a fresh machine: the package's prebuilt modules unpacked, every other kernel
    compiled), then :data:`WARM_RUNS` times with what that run left there (the caches warm:
    the median, and each in first_warm_runs_ms),
    then in another empty cache after ``gbla warmup --algo ALGO --methods M`` filled it from
    its own small graphs (what a user who ran the warm-up once gets). Returns first_cold_ms,
    first_warm_ms and first_warmed_ms (the call, as the command prints it), process_cold_ms,
    process_warm_ms and process_warmed_ms (the whole process: start, import, the graph's load,
    the call) and warmup_s (the warm-up command's wall time).

    Parameters
    ----------
    graph : str
        What ``gbla bench`` and the command take (a file, ``rmat:SCALE``, ``dataset:NAME``...).
    algo : 'bfs' or 'sssp'
    method : str
        A registered method's name.
    source : int
        The source vertex.
    device : 'cpu' or 'gpu'
    weights : (lo, hi) or None
        SSSP on a graph without weights: integer weights drawn in [lo, hi].
    seed : int
        Seeds generated graphs and weights.
    timeout : float
        Seconds each process may take.

    Returns
    -------
    dict of str to float

    Raises
    ------
    RuntimeError
        A command failed (its last line of error output is said).
    """
    call = [algo, str(graph), "--source", str(int(source)), "--method", method]
    call += ["--device", device, "--seed", str(seed)]
    if algo == "sssp" and weights is not None:
        call += ["--weights", str(int(weights[0])), str(int(weights[1]))]
    warm_up = ["warmup", "--algo", algo, "--methods", method, "--device", device]

    out = {}
    with contextlib.ExitStack() as folders:

        def empty_cache():  # CuPy's kernel cache, and where gbla unpacks its prebuilt ones
            folder = folders.enter_context(tempfile.TemporaryDirectory(prefix="gbla-kernels-"))
            cupy, unpacked = os.path.join(folder, "cupy"), os.path.join(folder, "gbla")
            return dict(os.environ, CUPY_CACHE_DIR=cupy, GBLA_CACHE_DIR=unpacked)

        for state in ("cold", "warm", "warmed"):
            if state != "warm":  # the warm runs read what the cold one compiled
                env = empty_cache()
            if state == "warmed":
                out["warmup_s"] = command(warm_up, env=env, timeout=timeout)[1] / 1e3
            runs = []  # (call ms, process ms)
            for _ in range(WARM_RUNS if state == "warm" else 1):
                stdout, process_ms = command(call, env=env, timeout=timeout)
                found = _TIME.search(stdout)
                if found is None:
                    raise RuntimeError(f"gbla {' '.join(call)} printed no time")
                runs.append((float(found[1].replace(",", "")), process_ms))
            out[f"first_{state}_ms"] = statistics.median(r[0] for r in runs)
            out[f"process_{state}_ms"] = statistics.median(r[1] for r in runs)
            if state == "warm":
                out["first_warm_runs_ms"] = [r[0] for r in runs]
    return out


def _per_edge(relaxed, stored):
    """The median over sources of edges relaxed per stored edge (the papers' work efficiency:
    1 is every edge once), None where the method does not count them."""
    known = [r / stored for r in relaxed if r is not None] if stored else []
    return statistics.median(known) if known else None


def _ratio(peak, stored):
    """A method's peak bytes over the graph's stored bytes (None where either is unknown)."""
    return peak / stored if peak is not None and stored else None


def _empty():
    """The numbers of a method that did not run."""
    return dict(
        mismatches=[],
        times_ms=[],
        counts=[],
        relaxed=[],
        edges=[],
        mean_ms=None,
        median_ms=None,
        gteps=None,
        gteps_per_source=[],
        us_per_level=None,
        relaxed_per_edge=None,
        peak_bytes=None,
        peak_bytes_per_source=[],
        base_bytes=None,
        peak_ratio=None,
    )


def _validate(algo, A, source, result):
    """None when ``result`` passes gbla.verify, else why not."""
    try:
        (verify.bfs if algo == "bfs" else verify.sssp)(A, source, result)
    except ValidationError as e:
        return f"fails gbla.verify from source {source}: {e}"
    return None


def _one_line(error):
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"
