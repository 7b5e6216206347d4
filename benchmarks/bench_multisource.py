"""Many sources in one traversal against one: gbla.bfs and gbla.sssp from a batch of k sources
(a frontier matrix, one product a level or round for all of them) timed against a call from a
single source; and networkx's all_pairs_shortest_path_length through the gbla backend against
plain networkx (issue 12's two aims).

    python benchmarks/bench_multisource.py --graph rmat:22 --algo bfs,sssp \
        --nx-all-pairs 10000 --json out.json            # the H100 (tools/device_run.sh)
    python benchmarks/bench_multisource.py --graph rmat:10 --nx-all-pairs 300    # CPU, seconds

Per graph and algorithm: 'one source' is the median, over the largest batch's sources, of a
whole call from each source alone (the default method: gbla.bfs 'algebraic', gbla.sssp 'auto');
a batch of k is the first k of those sources, timed as the median of --repeats whole calls
after one untimed call of the same batch. Every call is timed with the device synchronized
before and after. Sources are drawn (seeded) from the vertices with an out-edge; an SSSP on a
graph without weights gets integer weights drawn from --weights, as gbla bench does. Each
batch's rows are checked against the single-source results: levels equal, distances allclose.

--nx-all-pairs N: nx.gnm_random_graph(N, 5N, seed), with plain networkx and with
backend="gbla" (each on a fresh copy; both warmed up first on a 100-vertex graph), two times
each: 'produce', dict(all_pairs_shortest_path_length(G)) (the graph's conversion included), and
'read', then every entry of every row read (sum(len(d)) and a whole `for k, v in d.items()`
pass). The backend's rows are read-only mappings whose entries become Python objects only as
they are read (gbla.nx.lengths.HopLengths), so its produce time alone is not a dict's: the sum
of the two is the like-for-like number. The results are checked equal, row by row.
"""

import argparse
import datetime
import json
import shlex
import statistics
import sys
import time

import numpy as np

import gbla
from gbla import bench

SCHEMA = "gbla-multisource/1"


def timed(device, call):
    """(milliseconds, result) of one whole call, the device synchronized before and after."""
    gbla.synchronize(device)  # sync: nothing queued before the timed call
    t0 = time.perf_counter()
    result = call()
    gbla.synchronize(device)  # sync: the call's work is done
    return (time.perf_counter() - t0) * 1e3, result


def _search(algo, A, source, stats):
    if algo == "bfs":
        return gbla.bfs(A, source)
    return gbla.sssp(A, source, stats=stats)


def _count(algo, result, stats):
    """BFS: levels (the source's included, the most over a batch); SSSP: min-plus rounds."""
    if algo == "bfs":
        return int(result.max()) + 1
    return stats.get("iterations")


def _same(algo, got, expected):
    if algo == "bfs":
        return np.array_equal(got, expected)
    return got.shape == expected.shape and np.allclose(got, expected)


def run_graph(spec, algo, ks, repeats, seed, weights, device):
    """The rows of one graph and algorithm: one source, then each batch size in ``ks``."""
    A = bench.load_graph(spec, device=device, seed=seed)
    weight_note = None
    if algo == "sssp":
        A, generated = bench.sssp_weights(A, weights, seed=seed)
        weight_note = (
            f"integers drawn from [{weights[0]}, {weights[1]}]"
            if generated
            else f"the graph's ({A.dtype.name})"
        )
    info = bench.graph_info(A)
    warmup, sources = bench.pick_sources(A, max(ks), seed=seed)
    stats = {}
    _search(algo, A, warmup, stats)  # compiles, builds what the graph caches
    single_ms, singles, counts = [], [], []
    for s in sources:
        stats = {}
        ms, result = timed(A.device, lambda: _search(algo, A, s, stats))
        result = gbla.to_numpy(result)
        single_ms.append(ms)
        singles.append(result)
        counts.append(_count(algo, result, stats))
    one = statistics.median(single_ms)
    rows = [
        dict(
            k=1,
            batch=False,
            method=stats.get("method", "algebraic"),
            ms=one,
            ms_per_source=one,
            times_ms=single_ms,
            ratio=1.0,
            count=max(counts),
            check="ok",
        )
    ]
    for k in ks:
        try:
            rows.append(_batch(algo, A, sources[:k], singles, one, repeats))
        except Exception as error:  # out of memory, most often: the next batch still runs
            rows.append(
                dict(
                    k=k,
                    batch=True,
                    method=None,
                    ms=None,
                    ms_per_source=None,
                    times_ms=[],
                    ratio=None,
                    count=None,
                    check="ERROR",
                    note=f"{type(error).__name__}: {str(error).splitlines()[0]}",
                )
            )
            _free(device)
    A = None  # the graph's memory back to the pool before it is freed (not del: closures use A)
    _free(device)
    return dict(
        graph=spec,
        algo=algo,
        graph_info=info,
        weights=weight_note,
        sources=sources,
        warmup=warmup,
        rows=rows,
    )


def _batch(algo, A, batch, singles, one, repeats):
    """The row of one batch: the median of ``repeats`` calls after an untimed one, checked
    against the single-source results."""
    k = len(batch)
    stats = {}
    _search(algo, A, batch, stats)  # the untimed call
    times = []
    for _ in range(repeats):
        stats = {}
        ms, result = timed(A.device, lambda: _search(algo, A, batch, stats))
        times.append(ms)
    result = gbla.to_numpy(result)
    ms = statistics.median(times)
    return dict(
        k=k,
        batch=True,
        method=stats.get("method", "algebraic"),
        ms=ms,
        ms_per_source=ms / k,
        times_ms=times,
        ratio=ms / one,
        count=_count(algo, result, stats),
        check="ok" if _same(algo, result, np.stack(singles[:k])) else "MISMATCH",
    )


def _free(device):
    """Hand the graph's device memory back before the next graph (CuPy keeps a pool)."""
    if gbla.gpu_available() and device != "cpu":
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()


def all_pairs(n, seed, repeats):
    """networkx's all_pairs_shortest_path_length on gnm_random_graph(n, 5n), plain and through
    the gbla backend: for each, the median seconds to produce the dict of rows and to read every
    entry after it, the speedups, the results checked equal."""
    import networkx as nx

    def graph(size):  # a fresh object each time, so no run reuses another's conversion
        return nx.gnm_random_graph(size, 5 * size, seed=seed)

    def call(G, backend):
        kwargs = {} if backend is None else {"backend": backend}
        t0 = time.perf_counter()
        lengths = dict(nx.all_pairs_shortest_path_length(G, **kwargs))  # host rows: done
        produced = time.perf_counter() - t0
        t0 = time.perf_counter()
        entries, hops = sum(len(row) for row in lengths.values()), 0
        for row in lengths.values():
            for _, h in row.items():
                hops += h
        return produced, time.perf_counter() - t0, entries, hops, lengths

    for backend in (None, "gbla"):
        call(graph(100), backend)  # imports, compiles
    seconds, read, sums, results = {}, {}, {}, {}
    for backend in (None, "gbla"):
        runs = []
        for _ in range(repeats):
            *timing, entries, sums[backend], results[backend] = call(graph(n), backend)
            runs.append(timing)
        seconds[backend] = statistics.median(t[0] for t in runs)
        read[backend] = statistics.median(t[1] for t in runs)
    G = graph(n)
    equal = sums[None] == sums["gbla"] and results[None] == results["gbla"]
    row_type = type(next(iter(results["gbla"].values()), {})).__name__
    return dict(
        n=n,
        edges=G.number_of_edges(),
        seed=seed,
        repeats=repeats,
        entries=sum(len(d) for d in results[None].values()),
        networkx_s=seconds[None],
        gbla_s=seconds["gbla"],
        speedup=seconds[None] / seconds["gbla"],
        networkx_read_s=read[None],
        gbla_read_s=read["gbla"],
        speedup_with_read=(seconds[None] + read[None]) / (seconds["gbla"] + read["gbla"]),
        gbla_row_type=row_type,
        check="ok" if equal else "MISMATCH",
        networkx=nx.__version__,
        device=gbla.default_device(),
    )


def print_all_pairs(p):
    print(
        f"all_pairs_shortest_path_length, gnm_random_graph({p['n']}, {p['edges']}), "
        f"{p['entries']:,} entries, gbla backend on the {p['device']}:\n"
        f"  produce dict(all_pairs_shortest_path_length(G)): networkx {p['networkx_s']:.3g} s, "
        f"gbla {p['gbla_s']:.3g} s, {p['speedup']:.1f}x (gbla's rows: {p['gbla_row_type']}"
        f"{'' if p['gbla_row_type'] == 'dict' else ', entries made as they are read'})\n"
        f"  then read every entry: networkx {p['networkx_read_s']:.3g} s, gbla "
        f"{p['gbla_read_s']:.3g} s; produce + read: {p['speedup_with_read']:.1f}x; "
        f"{p['check']}",
        flush=True,
    )


def print_graph(doc):
    g = doc["graph_info"]
    count = "levels" if doc["algo"] == "bfs" else "rounds"
    print(
        f"{doc['algo']} on {doc['graph']}: {g['n']:,} vertices, {g['nvals']:,} stored "
        f"entries; {g['device']}" + (f"; weights {doc['weights']}" if doc["weights"] else "")
    )
    print(
        f"  {'k':>4} {'method':>14} {'ms/call':>10} {'ms/source':>10} {'x one':>7} "
        f"{count:>7}  check"
    )
    for r in doc["rows"]:
        k = str(r["k"]) if r["batch"] else "one"
        if r["ms"] is None:
            print(
                f"  {k:>4} {'-':>14} {'-':>10} {'-':>10} {'-':>7} {'-':>7}  {r['check']} "
                f"({r['note']})",
                flush=True,
            )
            continue
        print(
            f"  {k:>4} {r['method']:>14} {r['ms']:10.2f} {r['ms_per_source']:10.3f} "
            f"{r['ratio']:7.2f} {r['count']:>7}  {r['check']}",
            flush=True,
        )


def _write(doc, path):
    if path:
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)


def _ints(text):
    return [int(t) for t in text.split(",")]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--graph",
        nargs="+",
        default=["rmat:22"],
        dest="graphs",
        help="GRAPH arguments as gbla bench takes them (a file, rmat:SCALE, "
        "grid:RxC, rgg:SCALE, dataset:NAME); default rmat:22",
    )
    p.add_argument("--algo", default="bfs", help="bfs, sssp or both joined by a comma")
    p.add_argument(
        "--k", type=_ints, default=[1, 8, 64], help="batch sizes joined by commas (default 1,8,64)"
    )
    p.add_argument("--repeats", type=int, default=5, help="timed calls per batch (median)")
    p.add_argument("--seed", type=int, default=0, help="graphs, sources, weights")
    p.add_argument(
        "--weights",
        type=int,
        nargs=2,
        default=list(bench.DEFAULT_WEIGHTS),
        metavar=("LO", "HI"),
        help="SSSP weights for graphs without any",
    )
    p.add_argument("--device", choices=("cpu", "gpu"))
    p.add_argument(
        "--nx-all-pairs",
        type=int,
        metavar="N",
        help="also time all_pairs_shortest_path_length on an N-vertex graph",
    )
    p.add_argument("--nx-repeats", type=int, default=1)
    p.add_argument("--json", help="write the results here")
    args = p.parse_args(argv)
    algos = args.algo.split(",")
    for algo in algos:
        if algo not in ("bfs", "sssp"):
            p.error(f"--algo must be bfs, sssp or both; got {algo!r}")
    machine = bench.machine_info()
    print(
        f"device: {machine['gpu'] or 'no GPU'}; {machine['cpu']} ({machine['cpu_count']} CPUs)",
        flush=True,
    )
    doc = dict(
        schema=SCHEMA,
        command=shlex.join(["python", "benchmarks/bench_multisource.py", *argv]),
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        machine=machine,
        settings=dict(
            k=sorted(set(args.k)), repeats=args.repeats, seed=args.seed, weights=args.weights
        ),
        runs=[],
        all_pairs=None,
    )
    runs = doc["runs"]
    for spec in args.graphs:
        for algo in algos:
            runs.append(
                run_graph(
                    spec,
                    algo,
                    sorted(set(args.k)),
                    args.repeats,
                    args.seed,
                    tuple(args.weights),
                    args.device,
                )
            )
            print_graph(runs[-1])
            _write(doc, args.json)  # after each graph: a call cut short keeps what it measured
    pairs = None
    if args.nx_all_pairs:
        pairs = doc["all_pairs"] = all_pairs(args.nx_all_pairs, args.seed, args.nx_repeats)
        print_all_pairs(pairs)
        _write(doc, args.json)
    checks = [r["check"] for run in runs for r in run["rows"]] + ([pairs["check"]] if pairs else [])
    return 0 if all(c == "ok" for c in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
