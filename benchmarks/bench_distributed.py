"""GTEPS of BFS and SSSP on a graph cut over ranks, each rank generating its own part of an R-MAT
graph (no rank ever holds the whole), run as one process per rank by the launcher. Two BFS:
``bfs``, gbla.distributed.bfs (sparse exchanges; a rank's products on one GPU's spmv kernels),
and ``bfs_bitmap``, gbla.distributed.bitmap_bfs (bitmap frontiers; distributed.cu's kernels on
the GPU); three SSSP: ``sssp``, gbla.distributed.sssp (Bellman-Ford), ``sssp_delta``, its
delta-stepping (the weights' default width), and ``sssp_push``, gbla.distributed.push_sssp
(Bellman-Ford, distributed.cu's kernels on the GPU; ``--push-deltas 64 256`` adds a row of its
rounds in windows of each width, ``sssp_push:64`` ...); and, when named with ``--algos``,
``bfs_algebra`` and ``sssp_algebra``, gbla.bfs and gbla.sssp of gbla/algorithms on the
DistMatrix (its vectors whole on every rank), and ``bfs_bitmap_host_loop``, the bitmap BFS with
its level loop on the host (the default runs it on the device where it can):

    python -m gbla.distributed.launch -n 2 benchmarks/bench_distributed.py --scale 26 \
        --json out.json                       # a GPU per rank, NCCL
    python -m gbla.distributed.launch -n 3 --backend socket \
        benchmarks/bench_distributed.py --scale 12     # CPU processes (what CI checks)

With one rank, ``--single bfs:persistent sssp:auto`` also times those single-GPU methods
(gbla.bfs / gbla.sssp on a gbla.Matrix sharing the rank's arrays) on the same sources: the
baseline of a multi-GPU run (McSherry et al.: the best one GPU does, not one rank of the same
code), which a run on several ranks reads with ``--baseline ONE_RANK.json`` and reports each of
its rows against (``vs_best_single``: the best one-GPU median of the row's algorithm over the
row's time; above 1 the ranks win). One rank of the distributed code is a one-GPU method too:
where it beats the --single methods, it is the baseline.

Per algorithm and source (random vertices with out-edges): the whole call (the BFS rows'
levels left on their ranks, each rank its vertices', as Graph500 times a search), every rank
synchronized before and after (a sum over the ranks, then CUDA events on the GPU or
perf_counter on the CPU), after one untimed warm-up source; GTEPS as gbla bench counts them
(undirected edges of the reached component / time); the bytes each search sent (summed over the
ranks) and its collectives. Rank 0 prints and writes the JSON. Each source's levels are checked
against a one-rank run of the same search on rank 0's copy when the graph is small
(--check-below, default 2**16 vertices).
"""

import argparse
import functools
import json
import platform
import time

import numpy as np

import gbla
from gbla import distributed as D
from gbla.distributed import launch


def _algebra(search):
    """gbla.bfs / gbla.sssp (gbla/algorithms, written once for every matrix) on the
    DistMatrix, with what the other searches report: its levels (or rounds), and the bytes and
    collectives its rank's counter saw (bytes summed over the ranks)."""

    def run(M, source, stats):
        comm, own = M.comm, {}
        sent, calls = comm.bytes_sent, comm.collectives
        out = search(M, source, stats=own)
        calls = comm.collectives - calls
        stats.update(
            bytes_total=comm.allreduce_sum(comm.bytes_sent - sent),
            collectives=[calls],
            levels=own.get("levels", own.get("iterations")),
        )
        return out

    return run


# what each row's "algo" names: the search, called as search(M, source, stats=stats). The
# algebra's rows (gbla.bfs: method 'algebraic'; gbla.sssp: delta-stepping) are not part of the
# default run; name them with --algos.
# The BFS rows leave their levels on the ranks (gather=False: each rank its vertices'), as
# Graph500 times a search; the whole vector on every rank is one all-gather more, after the
# timer (rmat(25) on 2 H200: about 0.45 ms).
ALGOS = {
    "bfs": functools.partial(D.bfs, gather=False),
    "bfs_bitmap": functools.partial(D.bitmap_bfs, gather=False),
    # its level loop on the host (a sum read back a level) where the default runs it on the
    # device: what the device loop saves
    "bfs_bitmap_host_loop": functools.partial(D.bitmap_bfs, gather=False, device_loop=False),
    "sssp": D.sssp,
    "sssp_delta": functools.partial(D.sssp, method="delta_stepping"),
    # Bellman-Ford with hand-written kernels, the offers combined per target (the BFS rows'
    # gather=False: each rank its vertices' distances); --push-deltas adds rows of its rounds
    # in windows of distances
    "sssp_push": functools.partial(D.push_sssp, gather=False),
    "bfs_algebra": _algebra(gbla.bfs),
    "sssp_algebra": _algebra(gbla.sssp),
}
DEFAULT_ALGOS = ["bfs", "bfs_bitmap", "sssp", "sssp_delta", "sssp_push"]  # the others: name them


def edge_weights(src, dst, bounds, xp):
    """Integer weights in [bounds[0], bounds[1]] from each edge's ends alone (a multiplicative
    hash of the unordered pair): the same both ways and on every rank, so that ranks weigh the
    edges they generate without talking."""
    lo = xp.minimum(src, dst).astype(np.uint64)
    hi = xp.maximum(src, dst).astype(np.uint64)
    h = (lo * np.uint64(0x9E3779B97F4A7C15) + hi) * np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(31)
    span = np.uint64(bounds[1] - bounds[0] + 1)
    return (h % span).astype(np.float64) + bounds[0]


def _timer(comm):
    """start(), stop() -> seconds of the region between them, every rank synchronized."""
    if comm.xp is np:
        t = {}

        def start():
            comm.allreduce_sum(0)
            t["0"] = time.perf_counter()

        def stop():
            comm.allreduce_sum(0)
            return time.perf_counter() - t["0"]

        return start, stop
    cp = comm.xp
    events = {}

    def start():
        comm.allreduce_sum(0)
        events["a"] = cp.cuda.Event()
        events["a"].record()

    def stop():
        comm.allreduce_sum(0)
        b = cp.cuda.Event()
        b.record()
        b.synchronize()
        return cp.cuda.get_elapsed_time(events["a"], b) / 1e3

    return start, stop


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=int, default=20)
    p.add_argument("--edge-factor", type=int, default=16)
    p.add_argument("--sources", type=int, default=4)
    p.add_argument("--weights", type=int, nargs=2, default=[1, 255])
    p.add_argument("--check-below", type=int, default=2**16)
    p.add_argument("--algos", nargs="+", choices=list(ALGOS), default=DEFAULT_ALGOS)
    p.add_argument(
        "--piece-edges",
        type=int,
        default=2**26,
        help="generated edges a rank holds at once while it builds its part",
    )
    p.add_argument(
        "--levels",
        action="store_true",
        help="print each timed search's levels: direction, vertices found, ms",
    )
    p.add_argument(
        "--single",
        nargs="+",
        default=[],
        metavar="ALGO:METHOD",
        help="with one rank: also time gbla.bfs / gbla.sssp with these methods on the whole "
        "graph (bfs:persistent sssp:auto), the baseline of several ranks' rows",
    )
    p.add_argument(
        "--baseline",
        help="a one-rank run's JSON with --single rows: each row against the best of them",
    )
    p.add_argument(
        "--push-deltas",
        nargs="+",
        type=float,
        default=[],
        metavar="DELTA",
        help="also time push_sssp with these windows' widths (rows sssp_push:DELTA)",
    )
    p.add_argument("--json")
    args = p.parse_args(argv)
    singles = [_single_spec(text) for text in args.single]
    baseline = _baseline(args.baseline) if args.baseline else None
    comm = D.Counted(launch.init())
    if singles and comm.size != 1:
        raise SystemExit("--single runs with one rank (its rows are the baseline of the others)")
    xp, n = comm.xp, 2**args.scale
    t0 = time.perf_counter()
    # a piece of the rank's part of the edges at a time, generated twice (counted, then
    # placed): a rank holds its part of the graph and one piece, never all its edges
    generated = gbla.generators.rmat_edge_pieces(
        args.scale,
        args.edge_factor,
        seed=args.scale,
        part=comm.rank,
        parts=comm.size,
        piece_edges=args.piece_edges,
        device="cpu" if xp is np else "gpu",
    )

    def pieces():
        for src, dst in generated():
            yield src, dst, edge_weights(src, dst, args.weights, xp)

    M = D.DistMatrix.from_edge_pieces(comm, pieces, n=n)
    build_s = time.perf_counter() - t0
    part_bytes = sum(
        a.nbytes for a in (M.indptr, M.indices, M.values, *M.transpose) if a is not None
    )
    stored = comm.allreduce_sum(part_bytes)
    if comm.rank == 0:
        print(
            f"rmat({args.scale}) built on {comm.size} ranks in {build_s:.1f} s: "
            f"{stored / 1e9:.1f} GB stored over the ranks",
            flush=True,
        )
    undirected = M.nvals // 2
    # the warm-up source first: the vertex of most out-edges, in the large component, so that
    # its search runs (and compiles) every kind of level the timed ones will
    picks = [hub(M)] + pick_sources(M, args.sources + 1, args.scale)[1:]
    start, stop = _timer(comm)
    rows = []
    whole = _whole_matrix(M) if singles else None
    runs = [(algo, ALGOS[algo]) for algo in args.algos]
    runs += [
        (f"sssp_push:{d:g}", functools.partial(D.push_sssp, gather=False, delta=d))
        for d in args.push_deltas
    ]
    runs += [
        (f"single:{family}:{method}", _single_run(whole, family, method))
        for family, method in singles
    ]
    for algo, search in runs:
        _forget(M, whole, xp)
        for i, s in enumerate(picks):
            stats = {}
            start()
            out = search(M, s, stats=stats)
            seconds = stop()
            if len(out) != M.n:  # this rank's vertices' levels (gather=False): whole for checks
                out = M.gather(out)
            reached = xp.isfinite(out) if _family(algo) == "sssp" else out >= 0
            # undirected edges of the reached component: half the out-edges of its vertices
            mine = reached[M.lo : M.hi]
            local = int((M.indptr[1:] - M.indptr[:-1])[mine].sum()) if M.hi > M.lo else 0
            edges = comm.allreduce_sum(local) // 2
            del reached, mine
            if i == 0:
                continue  # the warm-up
            rows.append(
                {
                    "algo": algo,
                    "source": s,
                    "seconds": seconds,
                    "gteps": edges / seconds / 1e9 if seconds else None,
                    "levels": _levels(stats, out),
                    "bytes_total": stats["bytes_total"],
                    "collectives": int(sum(stats["collectives"])),
                }
            )
            if "relaxed" in stats:  # edges relaxed over the ranks, and per stored edge
                rows[-1].update(
                    relaxed=stats["relaxed"], relaxed_per_edge=stats["relaxed"] / M.nvals
                )
            if baseline is not None and _family(algo) in baseline:
                rows[-1]["vs_best_single"] = baseline[_family(algo)]["seconds"] / seconds
            if "seconds" in stats:  # the dedicated traversals' levels, as rank 0 saw them
                rows[-1].update(
                    level_ms=[round(t * 1e3, 3) for t in stats["seconds"]],
                    directions=stats["directions"],
                    found=stats["found"],
                )
                if args.levels and comm.rank == 0:
                    print(
                        f"  {algo} from {s}: "
                        + ", ".join(
                            f"{w[:4]} {f} {t:.2f}"
                            for w, f, t in zip(
                                stats["directions"], stats["found"], rows[-1]["level_ms"]
                            )
                        ),
                        flush=True,
                    )
            if n <= args.check_below and comm.rank == 0:
                check(args, out, algo, s)
        if comm.rank == 0:  # each algorithm's line and the file as it ends (a later one may
            summarize(args, comm, M, rows, algo, baseline)  # not fit the memory left)
            if args.json:
                with open(args.json, "w") as f:
                    json.dump(
                        {
                            "ranks": comm.size,
                            "device": M.device,
                            "scale": args.scale,
                            "edge_factor": args.edge_factor,
                            "undirected_edges": undirected,
                            "build_seconds": build_s,
                            "stored_bytes": stored,
                            "machine": machine(comm),
                            "python": platform.python_version(),
                            "gbla": gbla.__version__,
                            "rows": rows,
                            **({"baseline": baseline} if baseline else {}),
                        },
                        f,
                        indent=1,
                    )


def _forget(M, whole, xp):
    """What the last algorithm kept with the matrices (converted copies, recorded loops) and
    the pool's free blocks dropped before the next: on rmat(26) on one H200 the single-GPU
    SSSP found no room left beside what the distributed searches had kept."""
    M._cache.clear()
    if whole is not None:
        whole._cache.clear()
    if xp is not np:
        xp.get_default_memory_pool().free_all_blocks()


def machine(comm):
    """What ran it, in words: the GPUs (or CPU processes), CUDA, CuPy and NCCL."""
    if comm.xp is np:
        return f"{comm.size} CPU processes ({platform.machine()})"
    cp = comm.xp
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    nccl = ""
    if comm.size > 1:
        from cupy.cuda import nccl as _nccl

        v = _nccl.get_version()
        nccl = f", NCCL {v // 10000}.{v // 100 % 100}.{v % 100}"
    runtime = cp.cuda.runtime.runtimeGetVersion()
    return (
        f"{comm.size} {name} ({props['totalGlobalMem'] / 2**30:.0f} GiB each), one host"
        f"{nccl}, CuPy {cp.__version__}, CUDA runtime {runtime // 1000}."
        f"{runtime % 1000 // 10}"
    )


def summarize(args, comm, M, rows, algo, baseline=None):
    mine = [r for r in rows if r["algo"] == algo]
    gteps = [r["gteps"] for r in mine if r["gteps"]]
    median = float(np.median([r["seconds"] for r in mine]))
    best = (baseline or {}).get(_family(algo))
    against = (
        f", {best['seconds'] / median:.2f}x the best one-device method ({best['method']})"
        if best and not algo.startswith("single:")
        else ""
    )
    work = (
        f", {np.median([r['relaxed_per_edge'] for r in mine]):.2f} relaxations a stored edge"
        if all("relaxed_per_edge" in r for r in mine)
        else ""
    )
    print(
        f"{algo} rmat({args.scale}), {comm.size} ranks ({M.device}): median "
        f"{median * 1e3:.2f} ms, harmonic mean "
        f"{len(gteps) / sum(1 / g for g in gteps):.3f} GTEPS, "
        f"{np.median([r['bytes_total'] for r in mine]) / 2**20:.1f} MiB sent, "
        f"{int(np.median([r['collectives'] for r in mine]))} collectives{work}{against}",
        flush=True,
    )


def _levels(stats, out):
    """A search's levels (or rounds): from its stats, else from its per-level bytes, else (a
    single-GPU BFS) from its result, read after the timer stopped."""
    if stats.get("levels") is not None:
        return stats["levels"]
    if "bytes" in stats:
        return len(stats["bytes"])
    return int(out.max()) + 1


def _family(algo):
    """'bfs' or 'sssp': what a row searches (a single-GPU row's name is single:FAMILY:METHOD)."""
    name = algo.split(":")[1] if algo.startswith("single:") else algo
    return "sssp" if name.startswith("sssp") else "bfs"


def _single_spec(text):
    """``bfs:persistent`` as ('bfs', 'persistent'); the method must be registered (or auto)."""
    family, _, method = text.partition(":")
    if family not in ("bfs", "sssp") or not method:
        raise SystemExit(f"--single: {text!r} is not bfs:METHOD or sssp:METHOD")
    if not (family == "sssp" and method == "auto") and method not in gbla.methods.names(family):
        raise SystemExit(f"--single: {method!r} is not a registered {family} method")
    return family, method


def _whole_matrix(M):
    """The one rank's part (every row) as a gbla.Matrix sharing its arrays where it can (the
    row pointers cast to the indices' type)."""
    if M.lo != 0 or M.hi != M.n:
        raise SystemExit("--single needs the whole graph on one rank")
    if M.comm.xp is np:
        import scipy.sparse as sp

        S = sp.csr_array((M.values, M.indices, M.indptr), shape=(M.n, M.n))
        return gbla.Matrix.from_scipy(S, device="cpu")
    import cupyx.scipy.sparse as csp

    indptr = M.indptr.astype(M.indices.dtype, copy=False)
    C = csp.csr_matrix((M.values, M.indices, indptr), shape=(M.n, M.n))
    return gbla.Matrix.from_cupy(C)  # shared when canonical (CuPy checks), else converted


def _single_run(A, family, method):
    """A search over ``A`` (one GPU, the whole graph) as ALGOS' searches are called."""
    search = gbla.bfs if family == "bfs" else gbla.sssp

    def run(M, source, stats):
        own = {}
        out = search(A, source, method=method, stats=own if family == "sssp" else None)
        # a BFS's levels come from its result once the timer stopped (main): read here, they
        # would add a device sync to the timed call
        stats.update(bytes_total=0, collectives=[0], levels=own.get("iterations"))
        return out

    return run


def _baseline(path):
    """{family: {'method', 'seconds' (median), 'gteps'}}: the fastest method of each algorithm
    in a one-rank run's JSON, of its single-GPU rows (--single) and its own: one rank of the
    distributed code runs on one GPU too, and where it is the fastest there, it is the one
    several GPUs must beat (named ``ALGO on one rank``)."""
    with open(path) as f:
        doc = json.load(f)
    if doc.get("ranks") != 1:
        raise SystemExit(f"--baseline: {path} is a run on {doc.get('ranks')} ranks, not one")
    if not any(r["algo"].startswith("single:") for r in doc["rows"]):
        raise SystemExit(f"--baseline: {path} has no single-GPU rows (run it with --single)")
    best = {}
    for algo in {r["algo"] for r in doc["rows"]}:
        mine = [r for r in doc["rows"] if r["algo"] == algo]
        seconds = float(np.median([r["seconds"] for r in mine]))
        gteps = [r["gteps"] for r in mine if r["gteps"]]
        family = _family(algo)
        if family not in best or seconds < best[family]["seconds"]:
            single = algo.startswith("single:")
            best[family] = {
                "method": algo.split(":")[2] if single else f"{algo} on one rank",
                "seconds": seconds,
                "gteps": len(gteps) / sum(1 / g for g in gteps) if gteps else None,
            }
    return best


def hub(M):
    """The vertex of most out-edges over every rank (the same on each)."""
    xp = M.comm.xp
    degrees = M.indptr[1:] - M.indptr[:-1]
    mine = int(xp.argmax(degrees)) if M.hi > M.lo else 0
    best = [int(degrees[mine]) if M.hi > M.lo else -1, mine + M.lo]
    every = M.comm.allgather(xp.asarray(best, np.int64))
    return int(max((int(b[0]), int(b[1])) for b in every)[1])


def pick_sources(M, k, seed):
    """k random vertices with out-edges (R-MAT leaves many isolated: a search from one is no
    search), the same on every rank: candidates drawn alike everywhere, their degrees summed
    over the ranks (each rank knows those of its rows)."""
    rng = np.random.default_rng(seed)
    picks = []
    while len(picks) < k:
        candidates = [int(v) for v in rng.integers(0, M.n, 4 * k)]
        degrees = [
            int(M.indptr[v - M.lo + 1] - M.indptr[v - M.lo]) if M.lo <= v < M.hi else 0
            for v in candidates
        ]
        picks += [v for v, d in zip(candidates, M.comm.allreduce_sums(degrees)) if d]
    return picks[:k]


@functools.lru_cache(maxsize=None)
def _whole(scale, edge_factor, weights):
    """The whole graph on one rank, as a SciPy CSR weighted as the ranks weigh it (built
    once, for every check)."""
    src, dst = gbla.generators.rmat_edges(scale, edge_factor, seed=scale, device="cpu")
    S = gbla.Matrix.from_edges(src, dst, n=2**scale, device="cpu").to_scipy().tocoo()
    S.data = edge_weights(S.row.astype(np.int64), S.col.astype(np.int64), weights, np)
    return S.tocsr()


def check(args, out, algo, source):
    """The same search on one rank from the whole graph (small graphs only)."""
    from scipy.sparse import csgraph

    S = _whole(args.scale, args.edge_factor, tuple(args.weights))
    got = out.get() if hasattr(out, "get") else out
    if _family(algo) == "sssp":
        expected = csgraph.dijkstra(S, indices=source)
    else:
        d = csgraph.shortest_path(S, unweighted=True, indices=source)
        expected = np.where(np.isinf(d), -1, d)
    if not np.array_equal(got, expected):
        raise SystemExit(f"{algo} from {source}: the ranks' result differs from one rank's")


if __name__ == "__main__":
    main()
