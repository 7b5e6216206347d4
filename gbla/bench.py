"""Benchmarks of every registered method of an algorithm (and of SciPy and python-graphblas as
peers) on the same graphs and the same sources: time per source, Graph500 TEPS, levels or
iterations, peak device memory, and a check of every result against the first method's.

This module holds the logic of ``gbla bench``; ``gbla/cli.py`` only parses and prints.

>>> from gbla import bench
>>> records = bench.run_bench(["grid:8x8"], algo="bfs", methods="algebraic", sources=2,
...                           peers=["scipy"], device="cpu")
>>> [(r["method"], r["check"]) for r in records]
[('algebraic', 'ok'), ('scipy', 'ok')]
"""

import datetime
import importlib
import os
import platform
import re
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import _backend as B
from . import _validation as V
from . import generators, kernels
from .exceptions import InvalidValue, UnknownName

__all__ = ["GraphSpec", "PEERS", "parse_graph_spec", "default_graphs", "load_graph",
           "sssp_weights", "graph_info", "pick_sources", "resolve_methods", "run_method",
           "skip_note", "run_peer", "run_bench", "format_table", "describe", "group",
           "machine_info", "bench_document", "plot", "command_line"]

SPEC_FORMS = "a graph file, rmat:SCALE[:EDGE_FACTOR], grid:ROWSxCOLS, rgg:SCALE or dataset:NAME"
PEERS = ("scipy", "graphblas")
DEFAULT_WEIGHTS = (1, 255)
SCHEMA = "gbla-bench/1"
GTEPS_NOTE = ("GTEPS counts each undirected edge of the reached component once (a self-loop "
              "once, an arc of a directed graph once); harmonic mean over sources, as Graph500.")
TIMING_NOTE = ("Times are whole calls, device synchronized before and after, after one untimed "
               "warm-up source per method; every method runs on the same random sources.")
MEMORY_NOTE = ("Peak MiB: device memory in use in CuPy's pool at the peak of a method's runs, "
               "the graph included (GPU only).")
_MIB = 2.0 ** 20


# ------------------------------------------------------------------ graphs
@dataclass(frozen=True)
class GraphSpec:
    """A parsed GRAPH argument: ``kind`` is 'file', 'rmat', 'grid', 'rgg' or 'dataset';
    ``args`` its parameters ((path,), (scale, edge_factor), (rows, cols), (scale,), (name,));
    ``text`` the argument as given, which labels the graph in every output."""

    text: str
    kind: str
    args: tuple


_SPEC_PATTERNS = {
    "rmat": re.compile(r"rmat:(\d+)(?::(\d+))?"),
    "grid": re.compile(r"grid:(\d+)x(\d+)"),
    "rgg": re.compile(r"rgg:(\d+)"),
    "dataset": re.compile(r"dataset:(\w+)"),
}


def _bad_spec(text, condition=f"be {SPEC_FORMS}"):
    return InvalidValue(V.message("GRAPH", condition, text))


def _datasets():
    try:
        from . import datasets
    except ImportError:
        return None
    return datasets


def parse_graph_spec(text):
    """The GraphSpec of a GRAPH argument.

    Parameters
    ----------
    text : str
        A file gbla.io reads (``.mtx``, SNAP ``.txt``/``.el``, DIMACS ``.gr``, METIS
        ``.graph``, ``.npz``; gzip allowed), or ``rmat:SCALE``, ``rmat:SCALE:EDGE_FACTOR``,
        ``grid:ROWSxCOLS``, ``rgg:SCALE``, ``dataset:NAME`` (a graph of ``gbla.datasets``).

    Returns
    -------
    GraphSpec

    Raises
    ------
    InvalidValue
        A malformed spec, a file that does not exist, an unknown dataset name.

    Examples
    --------
    >>> parse_graph_spec("rmat:10:8")
    GraphSpec(text='rmat:10:8', kind='rmat', args=(10, 8))
    """
    if not isinstance(text, str) or not text:
        raise _bad_spec(text)
    prefix = text.split(":", 1)[0]
    if prefix in _SPEC_PATTERNS and not Path(text).is_file():
        match = _SPEC_PATTERNS[prefix].fullmatch(text)
        if match is None:
            raise _bad_spec(text)
        if prefix == "dataset":
            return GraphSpec(text, prefix, (_dataset_name(text, match.group(1)),))
        if prefix == "rmat":
            scale, edge_factor = match.groups()
            return GraphSpec(text, prefix, (int(scale), int(edge_factor or 16)))
        return GraphSpec(text, prefix, tuple(int(g) for g in match.groups()))
    if not Path(text).is_file():
        raise _bad_spec(text, f"name an existing file or be {SPEC_FORMS.split(', ', 1)[1]}")
    return GraphSpec(text, "file", (text,))


def _dataset_name(text, name):
    datasets = _datasets()
    if datasets is None:
        raise _bad_spec(text, "not be dataset:NAME with this install (gbla.datasets is missing)")
    if name not in datasets.names():
        raise _bad_spec(text, f"name a dataset from {list(datasets.names())}")
    return name


def default_graphs(device):
    """The graphs of a bare ``gbla bench``: the embedded power-grid dataset (when shipped) and
    a generated Graph500 rmat, scale 16 on the GPU and 12 on the CPU."""
    datasets = _datasets()
    specs = []
    if datasets is not None and "power_grid" in datasets.names():
        specs.append("dataset:power_grid")
    specs.append("rmat:16" if B.resolve_device(device) == "gpu" else "rmat:12")
    return specs


def load_graph(spec, *, device=None, seed=0):
    """The Matrix that ``spec`` (a GraphSpec or its text) names, on ``device``; generated
    graphs use ``seed``. Weights are those of the file or dataset; generated graphs have none."""
    if not isinstance(spec, GraphSpec):
        spec = parse_graph_spec(spec)
    device = B.resolve_device(device)
    if spec.kind == "rmat":
        return generators.rmat(*spec.args, seed=seed, device=device)
    if spec.kind == "grid":
        return generators.grid2d(*spec.args, device=device)
    if spec.kind == "rgg":
        if not hasattr(generators, "rgg"):
            raise _bad_spec(spec.text, "not be rgg:SCALE with this install "
                            "(gbla.generators.rgg is missing)")
        return generators.rgg(*spec.args, seed=seed, device=device)
    if spec.kind == "dataset":
        return _datasets().load(spec.args[0], device=device)
    from . import io
    if hasattr(io, "read"):
        return io.read(spec.args[0], device=device)
    if re.search(r"\.mtx(\.gz)?$", spec.args[0]):
        return io.read_mtx(spec.args[0], device=device)
    raise _bad_spec(spec.text, "be a Matrix Market file with this install (gbla.io.read is "
                    "missing)")


def sssp_weights(A, weights=DEFAULT_WEIGHTS, seed=0):
    """``(W, generated)``: A itself when it has weights, else A's structure with symmetric
    integer weights drawn uniformly from ``weights = (lo, hi)`` by
    :func:`gbla.generators.with_weights`; ``generated`` says which."""
    if A.dtype != np.bool_:
        return A, False
    return generators.with_weights(A, *weights, seed=seed), True


def graph_info(A):
    """Size of the graph as a dict: n, stored entries, symmetric, self-loops, and ``edges``,
    Graph500's count: one per undirected edge of a symmetric graph (a self-loop, stored once,
    counts once), one per stored arc otherwise."""
    symmetric = bool(A.is_symmetric)
    loops = _loops_per_vertex(A)
    n_loops = int(loops.sum())
    edges = (A.nvals + n_loops) // 2 if symmetric else A.nvals
    return dict(n=A.nrows, nvals=A.nvals, symmetric=symmetric, self_loops=n_loops, edges=edges,
                dtype=A.dtype.name, device=A.device)


def _loops_per_vertex(A):
    from .matrix import _rows_of_entries
    xp = B.xp_of(A.device)
    loops = xp.zeros(A.nrows, np.int64)
    # Not ops._entry_rows: it would cache an array of nvals rows on the matrix, device memory
    # every method would then carry.
    rows = _rows_of_entries(A._indptr, A.nvals, xp)
    loops[A._indices[rows == A._indices]] = 1
    return B.to_host(loops)


def _edge_weights(A, symmetric):
    """Per vertex, what reaching it adds to the component's edge count (times 2 when
    symmetric: its stored entries, a self-loop counted twice so it totals one edge)."""
    deg = B.to_host(A._degrees()).astype(np.int64)
    return deg + _loops_per_vertex(A) if symmetric else deg


def pick_sources(A, count, seed=0):
    """``(warmup, sources)``: ``count`` + 1 vertices with an out-edge, drawn by
    ``numpy.random.default_rng(seed)``, distinct while the graph has enough of them (else drawn
    with repeats); the first is the untimed warm-up.

    Raises
    ------
    InvalidValue
        count < 1, or no vertex of A has an out-edge.
    """
    count = V.integer(count, "sources")
    if count < 1:
        raise V.invalid_value("sources", "be a positive integer", count)
    candidates = np.flatnonzero(B.to_host(A._degrees()))
    if candidates.size == 0:
        raise V.invalid_value("A", "have a vertex with an out-edge to search from",
                              f"{A.nvals} edges")
    picks = np.random.default_rng(seed).choice(candidates, count + 1,
                                               replace=candidates.size < count + 1)
    return int(picks[0]), [int(s) for s in picks[1:]]


def resolve_methods(algo, methods="all"):
    """The registered methods that ``methods`` names: 'all', or names joined by commas (a
    list also works), in the order given; the first one that runs is the reference.

    Raises
    ------
    UnknownName
        A name that is not a registered method of ``algo``.
    """
    V.one_of(algo, kernels.ALGORITHMS, "algo")
    valid = kernels.names(algo)
    if isinstance(methods, str):
        methods = valid if methods == "all" else [m.strip() for m in methods.split(",")]
    chosen = []
    for name in methods:
        if name not in valid:
            raise UnknownName(V.message("--methods", f"be 'all' or {algo} methods from {valid}",
                                        name))
        if name not in chosen:
            chosen.append(name)
    return [kernels.get(name, algo) for name in chosen]


def skip_note(method, A):
    """A short reason why ``method`` cannot run on A (None when it can)."""
    reason = method.unsupported_reason(A)
    if reason is None:
        return None
    if A.device not in method.devices and "gpu" in method.devices:
        return "needs a GPU" if not B.gpu_available() else "GPU only: run with --device gpu"
    return reason


# ------------------------------------------------------------------ running
class _PeakMemory:
    """Peak bytes in use in CuPy's memory pool while installed (GPU); None on the CPU.
    Wraps the current allocator, so every allocation of the method, kernels included,
    records the pool's usage right after it."""

    def __init__(self, device):
        self.device = device
        self.base = self.peak = None

    def __enter__(self):
        if self.device == "gpu":
            import cupy
            self._cupy, self._pool = cupy, cupy.get_default_memory_pool()
            self._previous = cupy.cuda.get_allocator()
            self.base = self.peak = self._pool.used_bytes()
            cupy.cuda.set_allocator(self._malloc)
        return self

    def _malloc(self, size):
        memory = self._previous(size)
        self.peak = max(self.peak, self._pool.used_bytes())
        return memory

    def __exit__(self, *exc):
        if self.device == "gpu":
            self._cupy.cuda.set_allocator(self._previous)
        return False


def _call(algo, A, method, source):
    """One search; returns (result on the device, stats dict)."""
    from .algorithms import bfs, sssp
    stats = {}
    if algo == "bfs":
        return bfs(A, source, method=method), stats
    return sssp(A, source, method=method, stats=stats), stats


def run_method(A, algo, method, sources, *, warmup=None, on_result=None, progress=None):
    """Time the registered ``method`` (a name) on every source, after one untimed run from
    ``warmup`` (so that compilation stays out of the times).

    Each run is timed as a whole call with the device synchronized before and after. Results
    go to the host and, one at a time, to ``on_result(i, result)``; none is kept.
    ``progress()`` is called after every run, the warm-up included.

    Returns
    -------
    dict
        times_ms (per source), counts (BFS: levels, the source's included; SSSP: min-plus
        iterations), peak_bytes and base_bytes (CuPy pool bytes in use at the peak of the
        method's runs and before them; None on the CPU).
    """
    times, counts = [], []
    runs = ([] if warmup is None else [(None, warmup)]) + list(enumerate(sources))
    with _PeakMemory(A.device) as memory:
        for i, source in runs:
            B.sync(A.device)  # sync: nothing queued before the timed call
            t0 = time.perf_counter()
            result, stats = _call(algo, A, method, source)
            B.sync(A.device)  # sync: the call's work is done
            elapsed = (time.perf_counter() - t0) * 1e3
            if i is not None:
                result = B.to_host(result)
                times.append(elapsed)
                # BFS levels come from the result rather than stats=, whose reduction would
                # add a device sync to the timed call; the number is the same.
                counts.append(_levels(result) if algo == "bfs" else stats.get("iterations"))
                if on_result is not None:
                    on_result(i, result)
            del result
            if progress is not None:
                progress()
    return dict(times_ms=times, counts=counts, peak_bytes=memory.peak, base_bytes=memory.base)


def _levels(levels):
    return int(levels.max()) + 1


def run_peer(S, algo, peer, sources, *, on_result=None, progress=None):
    """Time a peer library on the host on every source: ``peer`` 'scipy'
    (``csgraph.breadth_first_order``; ``csgraph.dijkstra``) or 'graphblas' (python-graphblas:
    a masked ``any_pair`` vxm per level; Bellman-Ford over ``min_plus``). ``S`` is the graph
    as a scipy.sparse CSR array. Results (levels with -1, distances with inf) go to
    ``on_result`` as in :func:`run_method`; times cover the search alone, not the levels
    derived from SciPy's predecessors. Returns the same dict, peak memory None."""
    search = _peer_search(S, algo, peer)
    times, counts = [], []
    for i, source in enumerate(sources):
        t0 = time.perf_counter()
        raw = search(source)
        times.append((time.perf_counter() - t0) * 1e3)
        result, count = raw() if callable(raw) else raw
        counts.append(count)
        if on_result is not None:
            on_result(i, result)
        if progress is not None:
            progress()
    return dict(times_ms=times, counts=counts, peak_bytes=None, base_bytes=None)


def _peer_search(S, algo, peer):
    """A function source -> (result, count), or -> a function giving them (work after the
    timed part)."""
    if peer == "scipy":
        from scipy.sparse import csgraph

        from .validate import _tree_depths
        if algo == "bfs":
            def search(source):
                _, pred = csgraph.breadth_first_order(S, source, directed=True,
                                                      return_predecessors=True)

                def levels():
                    pred[source] = source
                    depth, _ = _tree_depths(np.where(pred < 0, -1, pred), source)
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


def _summary(run, edges):
    """Mean and median ms, and Graph500's TEPS: the harmonic mean over sources of
    edges / time, in billions."""
    times = run["times_ms"]
    per_source = [e / (t / 1e3) / 1e9 if t > 0 else None for t, e in zip(times, edges)]
    seconds_per_edge = sum(t / 1e3 / e for t, e in zip(times, edges) if e)
    return dict(mean_ms=statistics.fmean(times), median_ms=statistics.median(times),
                gteps=len(times) / seconds_per_edge / 1e9 if seconds_per_edge else None,
                gteps_per_source=per_source)


def run_bench(graphs, *, algo="bfs", methods="all", sources=16, seed=0, peers=(),
              peer_sources=None, device=None, weights=DEFAULT_WEIGHTS, progress=None,
              on_graph=None):
    """Benchmark ``methods`` of ``algo`` (and ``peers``) on each graph.

    Parameters
    ----------
    graphs : list of str or GraphSpec
        See :func:`parse_graph_spec`. All are parsed before any is loaded.
    algo : 'bfs' or 'sssp'
    methods : 'all', names joined by commas, or a list of names
        The first method that runs is the reference every other result is checked against;
        its own result on the first source is checked by gbla.validate (Graph500's rules).
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

    Returns
    -------
    list of dict
        One record per (graph, method): see ``gbla bench --help`` and :func:`format_table`.
        ``check`` is 'ok', 'MISMATCH' (differs from the reference on some source), 'INVALID'
        (the reference fails gbla.validate), 'ERROR' (the method raised) or None (skipped).

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
    total = len(specs) * (len(chosen) * (sources + 1) + len(peers) * n_peer)

    def tick(label, units=1):
        done[0] += units
        if progress is not None:
            progress(done[0], total, label)

    for spec in specs:
        if progress is not None:
            progress(done[0], total, f"loading {spec.text}")
        graph_records = _bench_graph(spec, algo, chosen, sources, seed, peers, n_peer, device,
                                     weights, tick)
        records.extend(graph_records)
        if on_graph is not None:
            on_graph(graph_records)
    return records


def _bench_graph(spec, algo, chosen, n_sources, seed, peers, n_peer, device, weights, tick):
    A = load_graph(spec, device=device, seed=seed)
    generated = False
    if algo == "sssp":
        A, generated = sssp_weights(A, weights, seed)
    info = graph_info(A)
    info["weights"] = (dict(source="generated", lo=int(weights[0]), hi=int(weights[1]),
                            seed=seed) if generated else
                       dict(source="graph", dtype=A.dtype.name) if A.dtype != np.bool_ else None)
    vertex_edges = _edge_weights(A, info["symmetric"])
    divisor = 2 if info["symmetric"] else 1
    warmup, sources = pick_sources(A, n_sources, seed)
    base = dict(graph=spec.text, graph_info=info, algo=algo, warmup_source=warmup,
                count_name="levels" if algo == "bfs" else "iterations")
    reference = dict(name=None, results={})  # the first method that runs, its results
    records = []

    def contender(name, kind, dev, runner, k):
        record = dict(base, method=name, kind=kind, device=dev, sources=sources[:k],
                      status="ok", reason=None, check="ok", mismatches=[], note=None)
        edges = [None] * k
        first = reference["name"] is None

        def on_result(i, result):
            edges[i] = int(vertex_edges[_reached(algo, result)].sum()) // divisor
            if first:
                reference["results"][i] = result
            elif i in reference["results"] and not _same(algo, result,
                                                         reference["results"][i]):
                record["mismatches"].append(sources[i])

        try:
            run = runner(on_result)
        except Exception as e:  # noqa: BLE001  (reported in the table, exit status nonzero)
            if first:
                reference["results"].clear()
            record.update(_empty(), status="error", reason=_one_line(e), check="ERROR",
                          note=_one_line(e))
            records.append(record)
            return
        record.update(run, edges=edges, **_summary(run, edges))
        bad = record["mismatches"]
        if first:
            reference["name"] = name
            valid = _validate(algo, A, sources[0], reference["results"][0])
            record["note"] = f"reference; {valid or 'valid by gbla.validate'}"
            record["check"] = "INVALID" if valid else "ok"
        elif bad:
            record["check"] = "MISMATCH"
            record["note"] = (f"{'levels' if algo == 'bfs' else 'distances'} differ from "
                              f"{reference['name']} on {len(bad)} of {k} sources "
                              f"(first: {bad[0]})")
        if k < n_sources:
            record["note"] = "; ".join(filter(None, [record["note"],
                                                     f"first {k} of {n_sources} sources"]))
        records.append(record)

    for method in chosen:
        kind = "algebraic" if method.algebraic else "kernel"
        note = skip_note(method, A)
        if note is not None:
            records.append(dict(base, **_empty(), method=method.name, kind=kind,
                                device=",".join(method.devices),
                                sources=sources, status="skipped",
                                reason=method.unsupported_reason(A), check=None, note=note))
            tick(f"{spec.text} {method.name} (skipped)", n_sources + 1)
            continue
        contender(method.name, kind, A.device, lambda on_result, name=method.name: run_method(
            A, algo, name, sources, warmup=warmup, on_result=on_result,
            progress=lambda: tick(f"{spec.text} {name}")), n_sources)
    if peers:
        S = A.to_scipy()
        for peer in peers:
            contender(peer, "peer", "cpu", lambda on_result, peer=peer: run_peer(
                S, algo, peer, sources[:n_peer], on_result=on_result,
                progress=lambda: tick(f"{spec.text} {peer}")), n_peer)
    return records


def _empty():
    """The numbers of a method that did not run."""
    return dict(mismatches=[], times_ms=[], counts=[], edges=[], mean_ms=None, median_ms=None,
                gteps=None, gteps_per_source=[], peak_bytes=None, base_bytes=None)


def _validate(algo, A, source, result):
    """None when ``result`` passes gbla.validate, else why not."""
    from . import validate
    from .exceptions import ValidationError
    try:
        (validate.bfs if algo == "bfs" else validate.sssp)(A, source, result)
    except ValidationError as e:
        return f"fails gbla.validate from source {source}: {e}"
    return None


def _one_line(error):
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"


# ------------------------------------------------------------------ output
def _ms(x):
    if x is None:
        return "-"
    return f"{x:.3f}" if x < 1 else f"{x:.2f}" if x < 100 else f"{x:.0f}"


def _counts(counts):
    known = [c for c in counts if c is not None]
    if not known:
        return "-"
    lo, hi = min(known), max(known)
    return str(lo) if lo == hi else f"{lo}-{hi}"


def _row(r):
    return [r["method"], r["device"], _ms(r["mean_ms"]), _ms(r["median_ms"]),
            "-" if r["gteps"] is None else f"{r['gteps']:.3g}", _counts(r["counts"]),
            "-" if r["peak_bytes"] is None else f"{r['peak_bytes'] / _MIB:.1f}",
            r["check"] or r["status"], r["note"] or ""]


def format_table(records, style="text"):
    """The records of one (graph, algo) as a table: method, device, mean and median ms per
    source, GTEPS (harmonic mean), levels or iterations (range over sources), peak device MiB,
    check, note. ``style`` 'text' aligns plain columns; 'markdown' writes a pipe table."""
    count_name = next((r["count_name"] for r in records if r.get("count_name")), "levels")
    header = ["method", "device", "mean ms", "median ms", "GTEPS",
              "levels" if count_name == "levels" else "iters", "peak MiB", "check", "note"]
    rows = [_row(r) for r in records]
    if style == "markdown":
        right = {2, 3, 4, 5, 6}
        lines = ["| " + " | ".join(header) + " |",
                 "|" + "|".join("---:" if i in right else "---" for i in range(len(header)))
                 + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        return "\n".join(lines)
    V.one_of(style, ("text", "markdown"), "style")
    widths = [max(len(str(row[i])) for row in [header] + rows) for i in range(len(header))]
    lines = []
    for row in [header] + rows:
        cells = [c.rjust(w) if 2 <= i <= 6 else c.ljust(w)
                 for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def describe(records):
    """One line about the graph of these records (one graph, one algo)."""
    r = records[0]
    g = r["graph_info"]
    shape = (f"symmetric, {g['edges']:,} undirected edges" if g["symmetric"]
             else f"directed, {g['edges']:,} arcs")
    loops = f", {g['self_loops']:,} self-loops" if g["self_loops"] else ""
    line = (f"{r['algo']} on {r['graph']}: {g['n']:,} vertices, {g['nvals']:,} stored entries "
            f"({shape}{loops}); {g['device']}, {len(r['sources'])} sources + 1 warm-up")
    w = g.get("weights")
    if r["algo"] == "sssp" and w is not None:
        line += ("\n  weights: the graph has none, so integers drawn uniformly from "
                 f"[{w['lo']}, {w['hi']}] (gbla.generators.with_weights, seed {w['seed']})"
                 if w["source"] == "generated" else f"\n  weights: the graph's ({w['dtype']})")
    return line


def group(records):
    """The records grouped by (graph, algo), in order."""
    groups = {}
    for r in records:
        groups.setdefault((r["graph"], r["algo"]), []).append(r)
    return groups


def machine_info():
    """The machine as a dict: Python, NumPy, SciPy, gbla, CPU model and count, and (with a
    GPU) its name and memory, the CUDA runtime and driver versions, CuPy's version."""
    import scipy

    from . import __version__
    info = dict(gbla=__version__, python=platform.python_version(), numpy=np.__version__,
                scipy=scipy.__version__, platform=platform.platform(), cpu=_cpu_model(),
                cpu_count=os.cpu_count(), gpu=None)
    try:
        import graphblas
        info["python_graphblas"] = graphblas.__version__
    except ImportError:
        info["python_graphblas"] = None
    if B.gpu_available():
        cp = B._cupy()
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        name = props["name"]
        info.update(gpu=name.decode() if isinstance(name, bytes) else str(name),
                    gpu_memory_bytes=int(props["totalGlobalMem"]),
                    cuda_runtime=_cuda_version(cp.cuda.runtime.runtimeGetVersion()),
                    cuda_driver=_cuda_version(cp.cuda.runtime.driverGetVersion()),
                    cupy=cp.__version__)
    return info


def _cuda_version(v):
    return f"{v // 1000}.{v % 1000 // 10}"


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def bench_document(records, *, command, settings):
    """The JSON document of a run: schema, command line, time, machine, settings, records."""
    return dict(schema=SCHEMA, command=command,
                created=datetime.datetime.now(datetime.timezone.utc).isoformat(
                    timespec="seconds"),
                machine=machine_info(), settings=settings, records=records)


def plot(records, path):
    """A PNG chart of the mean time per source of every method (grouped bars per graph and
    algorithm, log-scale ms) at ``path``. Needs matplotlib (``pip install gbla[plot]``)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("--plot needs matplotlib: pip install gbla[plot]") from None
    groups = group(records)
    names = []
    for r in records:
        if r["mean_ms"] is not None and r["method"] not in names:
            names.append(r["method"])
    width = 0.8 / max(len(names), 1)
    fig = Figure(figsize=(max(6.0, 1.2 + 1.1 * len(groups) * max(len(names), 1) ** 0.5), 4.5),
                 layout="constrained")
    ax = fig.subplots()
    # tab20: one distinct colour a method up to 20 (tab10 repeats after 10, and there are 12)
    from matplotlib import colormaps
    colors = colormaps["tab20"]
    for j, name in enumerate(names):
        xs, ys = [], []
        for g, rs in enumerate(groups.values()):
            r = next((r for r in rs if r["method"] == name and r["mean_ms"] is not None), None)
            if r is not None:
                xs.append(g - 0.4 + width * (j + 0.5))
                ys.append(r["mean_ms"])
        ax.bar(xs, ys, width, label=name, color=colors(j % 20))
    ax.set_yscale("log")
    ax.set_xticks(range(len(groups)), [f"{g}\n{a}" for g, a in groups])
    ax.set_ylabel("mean ms per source (log scale)")
    ax.set_title("gbla bench: time per source, lower is better")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.savefig(path, dpi=120)
    return path


def command_line(argv, prog="gbla"):
    """The command as one shell-quoted line."""
    import shlex
    return shlex.join([prog] + [str(a) for a in argv])
