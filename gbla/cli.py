"""The ``gbla`` command (also ``python -m gbla``): argument parsing and printing only; the work
is in :mod:`gbla.bench` and the public API.

    gbla bench [GRAPH ...] --algo bfs|sssp --methods all|NAME,... --sources 16 --peers
    gbla bfs GRAPH --source S [--method NAME] [--predecessors] [--save out.npy]
    gbla sssp GRAPH --source S [--method NAME] [--predecessors] [--save out.npy]
    gbla methods [--algo bfs|sssp]

Exit status: 0; 1 when a benchmarked result differs from the reference (MISMATCH) or a method
fails; 2 for a usage error (bad GRAPH, file, method, option), reported on one line.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from . import _backend as B
from . import _prebuilt, _warmup, bench, methods
from ._version import __version__
from .algorithms import bfs, pagerank, sssp
from .exceptions import GblaError

__all__ = ["main"]

GRAPH_HELP = (
    "a graph file (.mtx, SNAP .txt/.el, DIMACS .gr, METIS .graph, .npz; gzip ok) or "
    "rmat:SCALE[:EDGE_FACTOR], grid:ROWSxCOLS, rgg:SCALE, dataset:NAME"
)


class _UsageError(Exception):
    """A usage error found by the parser: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(message)


def _budget(text):
    """Bytes (an integer) or a fraction of the GPU's free memory (a number in (0, 1])."""
    try:
        value = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            value = 0
        if not 0 < value <= 1:
            raise argparse.ArgumentTypeError(
                f"must be bytes or a fraction in (0, 1]; got {text!r}"
            ) from None
        return value
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be bytes or a fraction in (0, 1]; got {text!r}")
    return value


def _positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer; got {text!r}")
    return value


def _parser():
    p = _Parser(
        prog="gbla",
        description="GraphBLAS-style graph algorithms on the GPU and CPU: "
        "benchmarks and single searches from the command line.",
    )
    p.add_argument(
        "--version",
        action="version",
        version=f"gbla {__version__}",
        help="print gbla's version and exit",
    )
    sub = p.add_subparsers(
        dest="command",
        required=True,
        metavar="COMMAND",
        parser_class=_Parser,
        help="what to run ('gbla COMMAND --help')",
    )
    device = dict(
        choices=["cpu", "gpu"],
        default=None,
        help="where to run; default: the GPU when CuPy sees one, else the CPU",
    )
    weights = dict(
        type=int,
        nargs=2,
        metavar=("LO", "HI"),
        default=None,
        help="SSSP on a graph without weights: draw integer weights uniformly from "
        "[LO, HI] (seeded by --seed; the benchmarks use 1 255); without it every "
        "edge weighs 1. A weighted graph keeps its own",
    )

    b = sub.add_parser(
        "bench",
        help="time every method (and peers) on the same sources",
        description="Time every registered method of an algorithm on the same "
        "random non-isolated sources, check every result against the first "
        "method's, and report ms per source, Graph500 GTEPS, levels or "
        "iterations and each method's peak memory (measured in untimed calls, "
        "against the graph's stored bytes). " + bench.GTEPS_NOTE,
    )
    b.add_argument(
        "graphs",
        nargs="*",
        metavar="GRAPH",
        help=GRAPH_HELP + "; default: dataset:power_grid and rmat:16 (GPU) or rmat:12 (CPU)",
    )
    b.add_argument(
        "--algo",
        choices=methods.ALGORITHMS,
        default="bfs",
        help="the algorithm whose methods run (default bfs)",
    )
    b.add_argument(
        "--methods",
        default="all",
        help="'all' (every registered method; those that cannot run here are "
        "listed as skipped) or names joined by commas (SSSP: 'auto' too, the method gbla.sssp "
        "picks itself, named in the row's note); the first is the reference",
    )
    b.add_argument("--sources", type=_positive, default=16, help="timed sources (default 16)")
    b.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seeds the sources, generated graphs and weights (default 0)",
    )
    b.add_argument(
        "--peers",
        action="store_true",
        help="also time SciPy (csgraph) and, when installed, python-graphblas on the "
        "host, checked against the first method too",
    )
    b.add_argument(
        "--peer-libs",
        metavar="LIBS",
        default=None,
        help="the peers, joined by commas: scipy, graphblas (implies --peers)",
    )
    b.add_argument(
        "--peer-sources",
        type=_positive,
        default=None,
        metavar="K",
        help="run peers on the first K sources only",
    )
    b.add_argument("--device", **device)
    b.add_argument("--weights", **weights)
    b.add_argument(
        "--memory-budget",
        type=_budget,
        default=None,
        metavar="BYTES",
        help="run the out-of-core methods (out_of_core_bfs, out_of_core_sssp) with "
        "this device budget, bytes or a fraction of the GPU's free memory, on a "
        "host copy of each graph; their notes give the bytes sent (skipped "
        "without)",
    )
    b.add_argument(
        "--json",
        metavar="PATH",
        help="write the machine, command and every number (per-source times included) as JSON",
    )
    b.add_argument(
        "--plot",
        metavar="PNG",
        help="grouped bar chart of ms per method and "
        "graph (log scale); needs matplotlib (pip install gbla[plot])",
    )
    b.add_argument(
        "--first-call",
        action="store_true",
        help="also time each method's first call in two new processes, with an empty kernel "
        "cache and with the cache it filled (the call and the whole process)",
    )
    b.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar on stderr (none when stderr is not a terminal)",
    )

    for algo, what in (
        ("bfs", "predecessors (a BFS tree: the vertex each was reached from)"),
        ("sssp", "predecessors (a shortest-path tree)"),
    ):
        extra = "--predecessors"
        s = sub.add_parser(
            algo,
            help=f"one {algo.upper()} from a source: a summary, the result saved with --save",
            description=f"Run one {algo.upper()} and print a summary.",
        )
        s.add_argument("graph", metavar="GRAPH", help=GRAPH_HELP)
        s.add_argument("--source", type=int, required=True, help="the source vertex (0-based)")
        s.add_argument(
            "--method",
            default="algebraic" if algo == "bfs" else "auto",
            help=f"a name from 'gbla methods --algo {algo}'"
            + ("" if algo == "bfs" else " or auto (the default)"),
        )
        aliases = ("--parents",) if algo == "bfs" else ()  # bfs's former name
        s.add_argument(
            extra,
            *aliases,
            dest="predecessors",
            action="store_true",
            help=f"also compute the {what}",
        )
        s.add_argument("--device", **device)
        if algo == "sssp":
            s.add_argument("--weights", **weights)
        s.add_argument("--seed", type=int, default=0, help="seeds generated graphs and weights")
        s.add_argument(
            "--save",
            metavar="PATH",
            help=f"save the {algo} result with numpy: "
            f".npy, or .npz holding both arrays with {extra}",
        )

    r = sub.add_parser(
        "pagerank",
        help="PageRank of every vertex: a summary, the ranks saved with --save",
        description="Run PageRank (networkx's power iteration) "
        "and print a summary: the top vertices, iterations and time.",
    )
    r.add_argument("graph", metavar="GRAPH", help=GRAPH_HELP)
    r.add_argument("--alpha", type=float, default=0.85, help="the damping factor (default 0.85)")
    r.add_argument(
        "--tol",
        type=float,
        default=1e-6,
        help="converged when the L1 change is below n * tol (default 1e-6)",
    )
    r.add_argument("--max-iter", type=int, default=100, help="iterations at most (default 100)")
    r.add_argument(
        "--weighted",
        action="store_true",
        help="weigh edges by the graph's values (default: every edge 1)",
    )
    r.add_argument("--top", type=_positive, default=5, help="vertices to list (default 5)")
    r.add_argument("--device", **device)
    r.add_argument("--seed", type=int, default=0, help="seeds generated graphs")
    r.add_argument("--save", metavar="PATH", help="save the ranks with numpy (.npy)")

    m = sub.add_parser(
        "methods",
        help="list the registered methods",
        description="List the registered methods and whether they run here.",
    )
    m.add_argument(
        "--algo",
        choices=methods.ALGORITHMS,
        default=None,
        help="only the methods of this algorithm (default: every algorithm)",
    )
    w = sub.add_parser(
        "warmup",
        help="compile the built-in kernels now, so that a first call loads them",
        description="Run every registered method of the algorithms once on small graphs (BFS "
        "on a pattern, SSSP on each weight dtype), in several processes at once, so that their "
        "kernels are compiled into CuPy's kernel cache (CUPY_CACHE_DIR, default "
        "~/.cupy/kernel_cache) that every later process reads: run it once after installing. "
        "A kernel only a larger graph takes, or a semiring of one's own, still compiles on "
        "first use.",
    )
    w.add_argument(
        "--algo",
        default="bfs,sssp",
        metavar="ALGOS",
        help="the algorithms whose methods run, joined by commas (default bfs,sssp)",
    )
    w.add_argument(
        "--methods", default=None, help="only these methods, joined by commas (default: all)"
    )
    w.add_argument(
        "--weights",
        default=",".join(_warmup.WEIGHTS),
        metavar="DTYPES",
        help=f"SSSP's weight dtypes, joined by commas (default {','.join(_warmup.WEIGHTS)})",
    )
    w.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes at once (default: one a CPU core, at most one a job; 0: this one)",
    )
    w.add_argument("--device", **device)
    return p


def main(argv=None):
    """Run the ``gbla`` command with ``argv`` (default: sys.argv[1:]); returns the exit
    status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:  # run bare: what it can do, not an error
        _parser().print_help()
        return 0
    try:
        args = _parser().parse_args(argv)
        return _COMMANDS[args.command](args, argv)
    except SystemExit as e:  # --help
        return e.code or 0
    except (_UsageError, GblaError, OSError, ImportError) as e:
        print(f"gbla: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ngbla: interrupted", file=sys.stderr)
        return 130


# ------------------------------------------------------------------ bench
class _Progress:
    """A one-line bar on stderr, redrawn in place at most ten times a second, shown only
    after the first half second so quick runs print nothing."""

    def __init__(self, stream):
        self.stream = stream
        self.start = time.perf_counter()
        self.last = 0.0
        self.shown = False

    def __call__(self, done, total, label):
        now = time.perf_counter()
        if now - self.start < 0.5 or (now - self.last < 0.1 and done < total):
            return
        self.last, self.shown = now, True
        width = 30
        filled = int(width * done / max(total, 1))
        line = f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label}"
        self.stream.write("\r" + line[:100].ljust(100))
        self.stream.flush()

    def clear(self):
        if self.shown:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()
            self.shown = False


def _peers(args):
    """The peer libraries asked for: --peer-libs exactly, or with --peers alone SciPy and
    python-graphblas when it imports."""
    if args.peer_libs is not None:
        peers = [p.strip() for p in args.peer_libs.split(",") if p.strip()]
        for p in peers:
            if p not in bench.PEERS:
                raise _UsageError(
                    f"--peer-libs must name libraries from {list(bench.PEERS)}; got {p!r}"
                )
        return peers
    if not args.peers:
        return []
    try:
        import graphblas  # noqa: F401
    except ImportError:
        print("python-graphblas is not installed: the graphblas peer is left out.")
        return ["scipy"]
    return list(bench.PEERS)


def _bench(args, argv):
    device = B.resolve_device(args.device)
    peers = _peers(args)
    if args.plot:
        try:
            import matplotlib  # noqa: F401  (checked now, not after the runs)
        except ImportError:
            raise _UsageError("--plot needs matplotlib: pip install gbla[plot]") from None
    graphs = args.graphs or bench.default_graphs(device)
    if not args.graphs and not peers and device == "cpu":
        peers = ["scipy"]  # one method on the CPU: SciPy gives a comparison at once
        print("No GRAPH: the default graphs, with SciPy as a peer (--peers) on this CPU.")
    specs = [bench.parse_graph_spec(g) for g in graphs]
    chosen = bench.resolve_methods(args.algo, args.methods)
    if not B.gpu_available():
        gpu_only = [m.name for m in chosen if "cpu" not in m.devices]
        print(
            "GPU methods need a GPU, and none is here (CuPy or a CUDA device is missing)"
            + (f": {', '.join(gpu_only)} are listed as skipped." if gpu_only else ".")
        )
    print(bench.GTEPS_NOTE)
    print(bench.TIMING_NOTE)
    print(bench.MEMORY_NOTE)
    if args.first_call:
        print(bench.FIRST_CALL_NOTE)
    progress = None
    if not args.no_progress and sys.stderr.isatty():
        progress = _Progress(sys.stderr)

    def show(records):
        if progress is not None:
            progress.clear()
        print()
        print(bench.describe(records))
        print(bench.format_table(records))
        sys.stdout.flush()

    try:
        records = bench.run_bench(
            specs,
            algo=args.algo,
            methods=[m.name for m in chosen],
            sources=args.sources,
            seed=args.seed,
            peers=peers,
            peer_sources=args.peer_sources,
            device=device,
            weights=_weights(args),
            progress=progress,
            on_graph=show,
            memory_budget=args.memory_budget,
            first_call=args.first_call,
        )
    finally:
        if progress is not None:
            progress.clear()
    settings = dict(
        algo=args.algo,
        methods=args.methods,
        sources=args.sources,
        seed=args.seed,
        peers=peers,
        peer_sources=args.peer_sources,
        device=device,
        weights=args.weights,
        graphs=graphs,
        memory_budget=args.memory_budget,
        first_call=args.first_call,
        # kernels compiled ahead of time that the hook takes first (gbla/_prebuilt.py): a
        # first call "cold" then means empty caches, not NVRTC for every module
        prebuilt=_prebuilt.describe() if device != "cpu" else None,
    )
    if args.json:
        doc = bench.bench_document(records, command=bench.command_line(argv), settings=settings)
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
        print(f"\nwrote {args.json}")
    if args.plot:
        bench.plot(records, args.plot, machine=bench.machine_info())
        print(f"wrote {args.plot}")
    failed = [r for r in records if r["check"] not in ("ok", None)]
    for r in failed:
        print(
            f"gbla: {r['check']}: {r['method']} on {r['graph']} ({r['algo']}): {r['note']}",
            file=sys.stderr,
        )
    return 1 if failed else 0


def _weights(args):
    """--weights as (lo, hi), or None: no random weights unless asked for."""
    return None if getattr(args, "weights", None) is None else tuple(args.weights)


# ------------------------------------------------------------------ bfs / sssp
def _search(args, argv):
    spec = bench.parse_graph_spec(args.graph)
    A = bench.load_graph(spec, device=args.device, seed=args.seed)
    info = bench.graph_info(A)
    lines = [
        (
            "graph",
            f"{spec.text}: {info['n']:,} vertices, {info['nvals']:,} stored entries "
            f"({info['edges']:,} {'undirected edges' if info['symmetric'] else 'arcs'})",
        )
    ]
    stats = {}
    if args.command == "bfs":
        extra, call = (
            args.predecessors,
            lambda: bfs(A, args.source, method=args.method, return_predecessors=args.predecessors),
        )
    else:
        A, generated = bench.sssp_weights(A, _weights(args), args.seed)
        if generated:
            lines.append(
                (
                    "weights",
                    f"none in the graph: random integers in "
                    f"[{args.weights[0]}, {args.weights[1]}] (--weights; "
                    f"gbla.generators.with_weights, seed {args.seed})",
                )
            )
        elif A.dtype == np.bool_:
            lines.append(
                (
                    "weights",
                    "none in the graph: every edge weighs 1 (--weights LO HI draws random ones)",
                )
            )
        extra, call = (
            args.predecessors,
            lambda: sssp(
                A,
                args.source,
                method=args.method,
                return_predecessors=args.predecessors,
                stats=stats,
            ),
        )
    B.sync(A.device)  # sync: time the call alone
    t0 = time.perf_counter()
    result = call()
    B.sync(A.device)  # sync: the call's work is done
    ms = (time.perf_counter() - t0) * 1e3
    arrays = [B.to_host(a) for a in (result if extra else (result,))]
    main_array = arrays[0]
    method = stats.get("method", args.method)
    lines += [("method", f"{method} on {A.device}"), ("source", str(args.source))]
    if args.command == "bfs":
        reached = main_array >= 0
        depth = int(main_array.max())
        lines += [
            ("reached", f"{int(reached.sum()):,} vertices"),
            ("depth", f"{depth} ({depth + 1} levels, the source's included)"),
        ]
    else:
        reached = np.isfinite(main_array)
        lines += [
            ("reached", f"{int(reached.sum()):,} vertices"),
            ("max dist", f"{float(main_array[reached].max()):g} (the largest finite distance)"),
            ("iterations", str(stats.get("iterations", "-"))),
        ]
    lines.append(
        (
            "time",
            f"{ms:.3f} ms (one call; on the GPU, a method's first call includes "
            "compiling its kernels)",
        )
    )
    if args.save:
        lines.append(("saved", _save(args.save, args.command, arrays)))
    _print_summary(lines)
    return 0


def _print_summary(lines):
    """(key, value) lines, the values aligned."""
    width = max(len(k) for k, _ in lines)
    for key, value in lines:
        print(f"{key.ljust(width)}  {value}")


def _save(path, algo, arrays):
    names = {"bfs": ("levels", "parents"), "sssp": ("dist", "pred"), "pagerank": ("ranks",)}[algo]
    path = Path(path)
    if len(arrays) == 1:
        path = path if path.suffix == ".npy" else path.with_name(path.name + ".npy")
        np.save(path, arrays[0])
        return f"{path} ({names[0]})"
    path = path.with_suffix(".npz") if path.suffix == ".npy" else path
    path = path if path.suffix == ".npz" else path.with_name(path.name + ".npz")
    np.savez(path, **dict(zip(names, arrays)))
    return f"{path} ({' and '.join(names)})"


# ------------------------------------------------------------------ pagerank
def _pagerank(args, argv):
    spec = bench.parse_graph_spec(args.graph)
    A = bench.load_graph(spec, device=args.device, seed=args.seed)
    info = bench.graph_info(A)
    stats = {}
    B.sync(A.device)  # sync: time the call alone
    t0 = time.perf_counter()
    ranks = pagerank(
        A,
        alpha=args.alpha,
        tol=args.tol,
        max_iter=args.max_iter,
        weighted=args.weighted,
        stats=stats,
    )
    B.sync(A.device)  # sync: the call's work is done
    ms = (time.perf_counter() - t0) * 1e3
    ranks = B.to_host(ranks)
    top = np.argsort(-ranks, kind="stable")[: args.top]
    lines = [
        ("graph", f"{spec.text}: {info['n']:,} vertices, {info['nvals']:,} stored entries"),
        ("device", A.device),
        ("iterations", str(stats.get("iterations", "-"))),
        ("top", ", ".join(f"{int(v)} ({ranks[v]:.6g})" for v in top)),
        (
            "time",
            f"{ms:.3f} ms (one call; on the GPU the first includes compiling its "
            "kernels and recording its loop)",
        ),
    ]
    if args.save:
        lines.append(("saved", _save(args.save, "pagerank", [ranks])))
    _print_summary(lines)
    return 0


# ------------------------------------------------------------------ methods
def _methods(args, argv):
    rows = [("name", "algo", "kind", "devices", "runs here", "description")]
    for name in methods.names(args.algo):
        m = methods.get(name)
        here = "cpu" in m.devices or ("gpu" in m.devices and B.gpu_available())
        rows.append(
            (
                m.name,
                m.algorithm,
                "algebraic" if m.algebraic else "kernel",
                ",".join(m.devices),
                "yes" if here else "no: needs a GPU",
                m.description,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    return 0


def _warmup_cmd(args, argv):
    def progress(done, total, job, seconds, failure):
        algo, name, weight = job
        said = "failed" if failure else f"{seconds:.1f} s"
        print(f"[{done}/{total}] {algo} {name} {weight or 'pattern'}: {said}", flush=True)

    report = _warmup.warmup(
        args.algo,
        args.methods,
        weights=args.weights,
        workers=args.workers,
        device=args.device,
        on_job=progress,
    )
    done = report["jobs"] - len(report["failed"])
    where = f"{report['workers']} processes" if report["workers"] else "this process"
    print(
        f"ran {done} of {report['jobs']} jobs on the {report['device']} in "
        f"{report['seconds']:.1f} s ({where})"
    )
    if "cache" in report:
        m = report["modules"]
        print(
            f"kernel modules: {m['prebuilt']} compiled ahead of time, {m['compiled']} compiled "
            f"or read from the kernel cache {report['cache']} ({report['cache_files']} files)"
        )
    for line in report["skipped"]:
        print(f"skipped: {line}")
    for line in report["failed"]:
        print(f"failed: {line}", file=sys.stderr)
    return 1 if report["failed"] else 0


_COMMANDS = {
    "bench": _bench,
    "bfs": _search,
    "sssp": _search,
    "pagerank": _pagerank,
    "methods": _methods,
    "warmup": _warmup_cmd,
}
