"""Out-of-core BFS and SSSP, every strategy of ``gbla.outofcore.STRATEGIES`` side by side (issue
11's table, CUDA managed memory with prefetches among them): the graph in pinned host memory,
the device held to a budget of the search's vertex arrays plus ``--fraction`` of the graph's
bytes (as the device would hold it: int64 row pointers, the edges' ids and weights), and per
strategy the time, the host-to-device bytes against the graph's bytes, the bytes moved back
(``managed``'s evicted pages), the copy stream's busy time, and the time the bytes alone would
take at the measured pinned bandwidth. ``managed`` copies the graph into managed memory once
(untimed, at the first search) and is refused, as an ERROR row, when the graph exceeds the
GPU's free memory.

    python benchmarks/bench_outofcore.py --graph rmat:24 --graph file:NE.gr.gz --json out.json
    python benchmarks/bench_outofcore.py --beyond 27 --leave-free 8    # larger than the GPU
    python benchmarks/bench_outofcore.py --beyond 27 --leave-free 8 --beyond-algo bfs,sssp
    python benchmarks/bench_outofcore.py --graph rmat:12 --sources 2 --device cpu
        # the schedule's bytes only (NumPy plays the device; its times mean nothing)
    python benchmarks/bench_outofcore.py --graph rmat:21 --algo sssp --strategies differential \
        --widths 1,0.25,0.125,0.0625    # SSSP's bytes and time against the bucket width

The graph is made ready once (pinned on a GPU, weights in the distances' dtype; ``setup_ms``)
and kept for every search. Each (graph, algo, strategy) runs once untimed (compiles, plans;
``first_ms``), then from ``--sources``
sources (seeded, among vertices with an out-edge), each timed with the device synchronized
before and after; the medians are reported. The results are checked against the in-memory
GPU search of the same source (levels equal, distances allclose). SSSP on a graph without
weights gets integer weights from 1 to 255, float32 distances.
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
from gbla import outofcore as oc
from gbla._backend import host_map

from bench_multisource import timed  # one timing rule for the benchmark scripts

SCHEMA = "gbla-outofcore/1"
# a row beside the strategies: gbla.bfs(method="algebraic") / gbla.sssp(method=
# "delta_stepping") with the budget, on a gbla.outofcore.HostMatrix (differential schedule)
ALGEBRAIC = "algebraic"
# host to device from pinned memory, the bus bound's rate: measured at the start of a GPU run
# (or named by --pinned-gbps); this, measured on the H100's host, for a run on the CPU
PINNED_GBPS = 54.9


def measure_pinned_gbps(size=256 << 20, repeats=5):
    """GB/s of a copy of ``size`` bytes from pinned host memory to the GPU: the median of
    ``repeats`` after one untimed."""
    import cupy as cp
    import cupyx

    host = cupyx.empty_pinned(size, np.uint8)
    host[:] = 1
    dev = cp.empty(size, np.uint8)
    times = []
    for _ in range(repeats + 1):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        dev.set(host)
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
    return round(size / statistics.median(times[1:]) / 1e9, 1)


def _host(cpu, dtype, pin):
    """The CSR of ``cpu`` (a CPU Matrix) as a HostGraph (pinned for the GPU), weights (when
    any) as ``dtype``."""
    values = None if cpu.is_iso else cpu._values.astype(dtype)
    g = oc.HostGraph(cpu._indptr, cpu._indices, values)
    return g.pin() if pin else g


def run(spec, algo, strategies, fraction, n_sources, seed, device, widths=None, gbps=PINNED_GBPS):
    xp = np
    if device == "gpu":
        import cupy as xp
    A = bench.load_graph(spec, device=device, seed=seed)
    dtype = np.float32
    if algo == "sssp":
        A, _ = bench.sssp_weights(A, (1, 255), seed=seed)
    A_host = A.to_device("cpu")  # one host copy: the kernels' HostGraph and the HostMatrix's
    # the graph made ready once (pinned on a GPU, weights in the distances' dtype), reported
    # apart from the searches, which keep it (issue 40: setup once per matrix)
    setup_ms, hg = timed(device, lambda: _host(A_host, dtype, pin=device == "gpu"))
    warmup, sources = bench.pick_sources(A, n_sources, seed=seed)
    # the graph as the device holds it: int64 row pointers, the edges' ids and weights
    graph_bytes = int(
        oc.partition(
            hg.indptr,
            edge_bytes=hg.edge_bytes(dtype if algo == "sssp" else None),
            index_bytes=8,
            parts=1,
        )
        .nbytes()
        .sum()
    )
    vertex = oc.gpu.vertex_bytes(
        hg.n, 64, dist_dtype=dtype if algo == "sssp" else None, chunks=oc.gpu.heavy_chunks(hg)
    )
    budget = (
        int(vertex + fraction * graph_bytes)
        + 2 * hg.edge_bytes(dtype) * int(hg.degrees.max())
        + 4096
    )
    # the in-memory search: each source's time, and its result as the reference
    in_memory_search = (lambda s: gbla.bfs(A, s)) if algo == "bfs" else (lambda s: gbla.sssp(A, s))
    in_memory_search(warmup)
    expected, in_memory_times = {}, []
    for s in sources:
        ms, out = timed(device, lambda: in_memory_search(s))
        in_memory_times.append(ms)
        expected[s] = gbla.to_numpy(out)
    in_memory = statistics.median(in_memory_times)
    rows = []
    # the algebra's own search on a HostMatrix: its vectors reserved in the budget instead of
    # the kernels' vertex arrays, the same share of the graph for the edges
    from gbla.outofcore.host_matrix import ALLOCATIONS, GRANULE, VERTEX_BYTES

    algebra_budget = int(VERTEX_BYTES * hg.n + GRANULE * ALLOCATIONS + fraction * graph_bytes)
    # SSSP's bucket width as a multiple of in-memory delta-stepping's default (32 x the mean
    # weight / the mean out-degree); None: gbla.outofcore.sssp's 'auto' (traverse.auto_width,
    # narrower on graphs of higher degree), as a user gets it
    swept = algo == "sssp" and bool(widths)
    auto_width = A_host.weights.bucket_width(A_host.nvals, A_host.nrows) if swept else None
    runs = [
        (strategy, width)
        for strategy in strategies
        for width in (widths if swept and strategy != ALGEBRAIC else [None])
    ]
    for strategy, width in runs:
        delta = "auto" if width is None else width * auto_width

        def search(s, stats):
            if strategy == ALGEBRAIC:  # gbla.bfs / gbla.sssp's products streaming
                if algo == "bfs":
                    out = gbla.bfs(
                        A_host, s, method="algebraic", memory_budget=algebra_budget, stats=stats
                    )
                else:
                    out = gbla.sssp(
                        A_host,
                        s,
                        method="delta_stepping",
                        stats=stats,
                        memory_budget=algebra_budget,
                    )
                stats.update(graph_bytes=graph_bytes, d2h_bytes=0)
                return out
            if algo == "bfs":
                return oc.bfs(hg, s, memory_budget=budget, strategy=strategy, xp=xp, stats=stats)
            return oc.sssp(
                hg,
                s,
                memory_budget=budget,
                strategy=strategy,
                xp=xp,
                dtype=dtype,
                delta=delta,
                stats=stats,
            )

        try:
            first_ms = timed(device, lambda: search(warmup, {}))[0]  # untimed: compiles, plans
            times, stats_all, ok = [], [], True
            for s in sources:
                stats = {}
                ms, out = timed(device, lambda: search(s, stats))
                out = gbla.to_numpy(out)
                ok &= (
                    np.array_equal(out, expected[s])
                    if algo == "bfs"
                    else np.allclose(out, expected[s])
                )
                times.append(ms)
                stats_all.append(stats)
        except Exception as error:  # a strategy that fails is reported, the others still run
            rows.append(
                dict(strategy=strategy, width=width, error=f"{type(error).__name__}: {error}")
            )
            continue
        h2d = statistics.median(st["h2d_bytes"] for st in stats_all)
        moved = h2d + statistics.median(st["zerocopy_bytes"] for st in stats_all)
        bound = moved / (gbps * 1e9) * 1e3
        ms = statistics.median(times)
        rows.append(
            dict(
                strategy=strategy,
                width=width,
                delta=stats_all[0].get("delta") if width is None else float(delta),
                ms=ms,
                times_ms=times,
                first_ms=first_ms,
                check="ok" if ok else "MISMATCH",
                h2d_bytes=h2d,
                zerocopy_bytes=moved - h2d,
                d2h_bytes=statistics.median(st["d2h_bytes"] for st in stats_all),
                h2d_ratio=h2d / stats_all[0]["graph_bytes"],
                transfers=statistics.median(st["transfers"] for st in stats_all),
                transfer_ms=statistics.median(st.get("transfer_ms", 0.0) for st in stats_all),
                bus_bound_ms=bound,
                ratio_to_bound=ms / bound if bound else None,
                iterations=statistics.median(
                    st.get("levels", st.get("iterations", 0)) for st in stats_all
                ),
                subgraphs=stats_all[0].get("subgraphs"),
                # BFS on the GPU: the levels run on the device, the others planned on the host
                device_levels=statistics.median(st.get("device_levels", 0) for st in stats_all),
                peak_bytes=stats_all[0]["peak_bytes"],
                budget=algebra_budget if strategy == ALGEBRAIC else budget,
            )
        )
    info = bench.graph_info(A)
    A = A_host = None  # their memory freed below (not del: the searches' closures use them)
    if device == "gpu":
        xp.get_default_memory_pool().free_all_blocks()
    return dict(
        graph=spec,
        algo=algo,
        device=device,
        graph_info=info,
        graph_bytes=graph_bytes,
        budget=budget,
        vertex_bytes=int(vertex),
        setup_ms=setup_ms,
        fraction=fraction,
        sources=sources,
        in_memory_ms=in_memory,
        rows=rows,
    )


def _level_problem(indptr, indices, levels, source, rows=1 << 23):
    """None when ``levels`` are exactly the BFS levels of the symmetric CSR graph from
    ``source``, else what is wrong: levels[source] == 0, every other reached vertex's least
    neighbour level one below its own, no neighbour more than one above, and no edge between
    a reached and an unreached vertex (gbla.verify.bfs's rules). Host NumPy, ``rows`` vertices
    at a time: gbla.verify.bfs expands every edge's ends at once, 68 GB at rmat(27)."""
    if levels[source] != 0:
        return f"levels[source] = {levels[source]}"
    big = np.int64(2**40)
    for r0 in range(0, len(levels), rows):
        r1 = min(r0 + rows, len(levels))
        e0, e1 = int(indptr[r0]), int(indptr[r1])
        mine = levels[r0:r1].astype(np.int64)
        degree = np.diff(indptr[r0 : r1 + 1])
        theirs = levels[indices[e0:e1]].astype(np.int64)
        has = degree > 0
        starts = (indptr[r0:r1] - e0)[has]
        low = np.full(r1 - r0, big)
        high = np.full(r1 - r0, -big)
        low[has] = np.minimum.reduceat(np.where(theirs < 0, big, theirs), starts)
        high[has] = np.maximum.reduceat(theirs, starts)
        unreached_nb = np.zeros(r1 - r0, bool)
        unreached_nb[has] = np.maximum.reduceat((theirs < 0).astype(np.int8), starts) > 0
        ids = np.arange(r0, r1)
        reached = mine >= 0
        bad = reached & (ids != source) & (low != mine - 1)
        bad |= reached & (high > mine + 1)
        bad |= reached & unreached_nb
        bad |= ~reached & has & (high >= 0)
        if bad.any():
            v = int(ids[np.argmax(bad)])
            return (
                f"vertex {v}: level {levels[v]}, neighbours' levels {low[v - r0]}..{high[v - r0]}"
            )
    return None


def _distance_problem(indptr, indices, weights, dist, source, rows=1 << 20):
    """None when ``dist`` (float32) are exactly the shortest distances from ``source`` on the
    symmetric CSR graph whose weights are symmetric too (``w(u, v) == w(v, u)``), else what is
    wrong: dist[source] == 0, no edge relaxes (dist[v] <= dist[u] + w in float32, which also
    leaves no unreached neighbour of a reached vertex), and every other reached vertex has an
    in-edge that is tight (read in its own row: the graph and its weights are symmetric).
    With dist only ever lowered to a path's length, as every method does, these make it
    exact. Host NumPy, ``rows`` vertices at a time, a thread per CPU (about 20 bytes an edge
    of a block each: 16 threads of rmat(27)'s 2**20 rows, some 11 GB)."""
    if dist[source] != 0:
        return f"dist[source] = {dist[source]}"
    n = len(dist)

    def block(r0):
        r1 = min(r0 + rows, n)
        e0, e1 = int(indptr[r0]), int(indptr[r1])
        degree = np.diff(indptr[r0 : r1 + 1])
        theirs, w = dist[indices[e0:e1]], weights[e0:e1]
        relaxes = np.repeat(dist[r0:r1], degree) + w < theirs  # out-edges u -> v, float32

        if relaxes.any():
            k = int(np.argmax(relaxes))
            u = int(np.searchsorted(indptr, e0 + k, side="right") - 1)
            v = int(indices[e0 + k])
            return f"edge ({u}, {v}) relaxes: {dist[u]} + {w[k]} < {dist[v]}"
        has = degree > 0
        best = np.full(r1 - r0, np.inf, dist.dtype)
        best[has] = np.minimum.reduceat(theirs + w, (indptr[r0:r1] - e0)[has])  # in-edges
        ids = np.arange(r0, r1)
        loose = np.isfinite(dist[r0:r1]) & (ids != source) & (best != dist[r0:r1])
        if loose.any():
            v = int(ids[np.argmax(loose)])
            return f"vertex {v}: distance {dist[v]}, its tightest in-edge gives {best[v - r0]}"
        return None

    return next(filter(None, host_map(block, range(0, n, rows))), None)


def beyond(scale, leave_free_gb, parts, seed, algos=("bfs",), device="gpu"):
    """BFS and/or SSSP on rmat(scale), built in host memory a part at a time (SSSP's float32
    weights 1..255 as ``with_weights`` gives them, :func:`gbla.generators.host_csr_weights`),
    with the GPU's free memory cut to ``leave_free_gb`` by a ballast allocation when the graph
    alone would fit: the levels and the distances checked exactly on the host
    (:func:`_level_problem`, :func:`_distance_problem`). A list of one result per algo.
    ``device='cpu'``: NumPy plays the device within the vertex arrays and half the graph's
    bytes (the schedule's bytes only, as the other CPU runs)."""
    from gbla import generators

    gpu = device == "gpu"
    if gpu:
        import cupy as xp
        import cupyx

        empty = cupyx.empty_pinned
    else:
        xp, empty = np, np.empty
    t0 = time.perf_counter()
    indptr, indices = generators.rmat_host_csr(scale, 16, seed, parts=parts, device=device)
    generate_s = time.perf_counter() - t0
    n = len(indptr) - 1
    source = int(np.flatnonzero(np.diff(indptr))[0])
    t0 = time.perf_counter()
    hg = oc.HostGraph(indptr, indices)
    hg = hg.pin() if gpu else hg
    pin_s = time.perf_counter() - t0
    del indptr, indices
    weights_s = weighted = None
    if "sssp" in algos:  # into pinned memory at once: no second copy of 4 bytes an edge
        t0 = time.perf_counter()
        w = empty(len(hg.indices), np.float32)
        generators.host_csr_weights(hg.indptr, hg.indices, 1, 255, seed=seed, out=w)
        weighted = oc.HostGraph(hg.indptr, hg.indices, w, pinned=gpu)
        weights_s = time.perf_counter() - t0
    ballast = None
    if gpu:
        free_before, total = xp.cuda.Device().mem_info
        if leave_free_gb is not None and free_before > leave_free_gb * 1e9:
            ballast = xp.empty(int(free_before - leave_free_gb * 1e9), np.uint8)
        free = xp.cuda.Device().mem_info[0]
        budget = int(0.9 * free)
    else:  # the vertex arrays (SSSP's, the larger) and half the graph's bytes
        free_before = total = free = None
        graph = weighted or hg
        budget = int(oc.gpu.vertex_bytes(n, 64, dist_dtype=np.float32) + 0.5 * graph.nbytes)
    searches = {
        "bfs": lambda stats: oc.bfs(hg, source, memory_budget=budget, xp=xp, stats=stats),
        "sssp": lambda stats: oc.sssp(
            weighted, source, memory_budget=budget, xp=xp, dtype=np.float32, stats=stats
        ),
    }
    found = {}
    for algo in algos:
        searches[algo]({})  # untimed: loads the kernels, makes the graph's partition
        stats = {}
        ms, out = timed(device, lambda: searches[algo](stats))
        found[algo] = ms, stats, out.get() if gpu else out
        del out
    has_ballast = ballast is not None
    del ballast
    results = []
    for algo in algos:
        ms, stats, out = found[algo]
        t0 = time.perf_counter()
        if algo == "bfs":
            problem = _level_problem(hg.indptr, hg.indices, out, source)
            reached = int((out >= 0).sum())
        else:
            problem = _distance_problem(hg.indptr, hg.indices, weighted.values, out, source)
            reached = int(np.isfinite(out).sum())
        check_s = time.perf_counter() - t0
        graph = weighted if algo == "sssp" else hg
        result = dict(
            algo=algo,
            scale=scale,
            n=n,
            stored_edges=int(len(hg.indices)),
            host_bytes=graph.nbytes,
            device=device,
            card_bytes=total and int(total),
            free_bytes_before_ballast=free_before and int(free_before),
            free_bytes=free and int(free),
            budget=budget,
            source=source,
            ms=ms,
            generate_s=generate_s,
            pin_s=pin_s,
            weights_s=weights_s if algo == "sssp" else None,
            check="ok" if problem is None else "MISMATCH",
            reached=reached,
            ballast=has_ballast,
            problem=problem,
            check_s=check_s,
            stats={k: v for k, v in stats.items() if not isinstance(v, list)},
        )
        room = (
            f"GPU free {free / 1e9:.1f} GB of {total / 1e9:.1f} (ballast: {has_ballast})"
            if gpu
            else "NumPy as the device"
        )
        print(
            f"\nrmat({scale}) in host memory: {n:,} vertices, {result['stored_edges']:,} "
            f"stored edges, {graph.nbytes / 1e9:.1f} GB; {room}; budget {budget / 1e9:.1f} GB\n"
            f"  {algo.upper()} {ms:.0f} ms, H2D {stats['h2d_bytes'] / 1e9:.2f} GB "
            f"({stats['h2d_bytes'] / stats['graph_bytes']:.2f}x the graph), copies "
            f"{stats.get('transfer_ms', 0):.0f} ms, {stats['iterations']} iterations, {reached:,} "
            f"reached; {result['check']} {problem or ''} (generated in {generate_s:.0f} s, "
            f"pinned in {pin_s:.0f} s"
            + (f", weighted in {weights_s:.0f} s" if algo == "sssp" else "")
            + f", checked in {check_s:.0f} s)",
            flush=True,
        )
        results.append(result)
    return results


def print_table(result):
    print(
        f"\n{result['graph']} {result['algo']}: graph {result['graph_bytes'] / 1e9:.3g} GB, "
        f"budget {result['budget'] / 1e9:.3g} GB (vertex arrays "
        f"{result['vertex_bytes'] / 1e9:.3g} GB + {result['fraction']} of the graph); "
        f"in memory {result['in_memory_ms']:.2f} ms; the graph made ready once in "
        f"{result['setup_ms']:.0f} ms"
    )
    print(
        f"{'strategy':<20}{'ms':>10}{'first ms':>10}{'H2D GB':>9}{'H2D/graph':>10}"
        f"{'D2H GB':>9}{'copy ms':>9}{'bus ms':>9}{'x bus':>8}{'iters':>7}{'peak/budget':>12}"
        "  check"
    )
    swept = any(r.get("width") is not None for r in result["rows"])
    for r in result["rows"]:
        auto = " auto" if swept and r["strategy"] != ALGEBRAIC else ""
        name = r["strategy"] + (auto if r.get("width") is None else f" x{r['width']:g}")
        if "error" in r:
            print(f"{name:<20}  ERROR {r['error']}")
            continue
        x = "-" if r["ratio_to_bound"] is None else f"{r['ratio_to_bound']:.2f}"
        print(
            f"{name:<20}{r['ms']:>10.2f}{r['first_ms']:>10.1f}"
            f"{r['h2d_bytes'] / 1e9:>9.3f}{r['h2d_ratio']:>10.2f}{r['d2h_bytes'] / 1e9:>9.3f}"
            f"{r['transfer_ms']:>9.2f}{r['bus_bound_ms']:>9.2f} {x:>7}{r['iterations']:>7.0f}"
            f"{r['peak_bytes'] / r['budget']:>12.2f}  {r['check']}"
        )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--graph", action="append", default=[])
    p.add_argument(
        "--beyond",
        type=int,
        metavar="SCALE",
        help="also BFS (and SSSP: --beyond-algo) on rmat(SCALE) built in host memory a part at a "
        "time",
    )
    p.add_argument(
        "--beyond-algo",
        default="bfs",
        help="with --beyond: bfs, sssp or bfs,sssp (SSSP: float32 weights 1..255)",
    )
    p.add_argument(
        "--leave-free",
        type=float,
        metavar="GB",
        help="with --beyond: a ballast leaves this much of the GPU free",
    )
    p.add_argument("--parts", type=int, default=16, help="with --beyond: generation parts")
    p.add_argument("--algo", default="bfs,sssp")
    p.add_argument(
        "--strategies",
        default=",".join(oc.STRATEGIES + (ALGEBRAIC,)),
        help=f"of {', '.join(oc.STRATEGIES)} and {ALGEBRAIC!r} (the algebra on a HostMatrix)",
    )
    p.add_argument("--fraction", type=float, default=0.5)
    p.add_argument(
        "--widths",
        help="SSSP: each strategy at these multiples of in-memory delta-stepping's default bucket "
        "width, 'auto' for the out-of-core default (auto,1,0.25,...)",
    )
    p.add_argument("--sources", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", choices=("gpu", "cpu"), default="gpu")
    p.add_argument(
        "--pinned-gbps",
        type=float,
        help="the bus bound's rate (GB/s); default: measured at the start on a GPU",
    )
    p.add_argument("--json")
    args = p.parse_args(argv)
    gbps = args.pinned_gbps
    if gbps is None:
        gbps = measure_pinned_gbps() if args.device == "gpu" else PINNED_GBPS
    elif not gbps > 0:
        p.error(f"--pinned-gbps must be a positive number; got {gbps}")
    print(f"bus bound at {gbps} GB/s host to device (pinned)", flush=True)
    results = []
    for spec in args.graph:
        for algo in args.algo.split(","):
            result = run(
                spec,
                algo,
                args.strategies.split(","),
                args.fraction,
                args.sources,
                args.seed,
                args.device,
                [None if w == "auto" else float(w) for w in args.widths.split(",")]
                if args.widths
                else None,
                gbps,
            )
            print_table(result)
            sys.stdout.flush()
            results.append(result)
    larger = None
    if args.beyond:
        algos = tuple(args.beyond_algo.split(","))
        if not algos or set(algos) - {"bfs", "sssp"}:
            p.error(f"--beyond-algo must be bfs, sssp or bfs,sssp; got {args.beyond_algo!r}")
        larger = beyond(args.beyond, args.leave_free, args.parts, args.seed, algos, args.device)
    if args.json:
        doc = dict(
            schema=SCHEMA,
            date=datetime.datetime.now().isoformat(timespec="seconds"),
            command=shlex.join(
                ["python", "benchmarks/bench_outofcore.py"] + (argv or sys.argv[1:])
            ),
            machine=bench.machine_info(),
            pinned_gbps=gbps,
            results=results,
            beyond=larger,
        )
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1, default=float)


if __name__ == "__main__":
    main()
