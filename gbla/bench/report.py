"""The report of a benchmark: a table per (graph, algorithm), a line describing the graph, the
machine, and the JSON document of a run."""

import datetime
import os
import platform
import shlex
import statistics

import numpy as np
import scipy

from .. import _backend as B
from .. import _validation as V
from .._version import __version__

SCHEMA = "gbla-bench/1"
GTEPS_NOTE = (
    "GTEPS counts each undirected edge of the reached component once (a self-loop "
    "once, an arc of a directed graph once); harmonic mean over sources, as Graph500."
)
TIMING_NOTE = (
    "Times are whole calls, device synchronized before and after, after one untimed "
    "warm-up source per method; every method runs on the same random sources. In "
    'the runs marked "sources back to back" a method\'s sources run one after '
    "the other and their results are checked after the last; the earlier runs "
    "checked each result between two timed calls, which left the GPU idle "
    "meanwhile (an H100 idle for 20 ms runs its next kernels several times slower "
    "for a while: benchmarks/results/ab/fused_block_bounds_and_idle_gpu.log) and "
    'the CPU\'s caches cold for SciPy. In the runs marked "GPU warmed" the warm-up '
    "call is repeated on a GPU until 25 ms have passed: the first call after the GPU "
    "sat idle (while the graph loaded, or the last method's results were checked) "
    "ran up to 2x slower on sub-millisecond searches; such rows still differ by up "
    "to 2x between runs (benchmarks/results/ab/bench_warmed_gpu.log)."
)
MEMORY_NOTE = (
    "Peak MiB: the most memory a method held at once in a call, above what was in "
    "use before its first call (the graph itself not counted; what the method "
    "builds and keeps on it, such as a transpose, an int32 copy, a recorded loop or "
    "a worklist, counted), the largest over its warm-up and every source, each "
    "measured in an untimed call of its own after the timed ones, on a view of the "
    "graph without what earlier methods cached: CuPy's pool bytes in use on the "
    "GPU, tracemalloc's traced bytes on the CPU (NumPy's buffers). peak/graph: "
    "that over the graph's stored bytes (row pointers, column indices, values); "
    "the aim is at most 4 plus O(n) vectors, a method above it says why in its "
    "description. Rows without peak/graph come from runs before it: their peak "
    "MiB is the device memory in use in CuPy's pool at the peak of the method's "
    "runs, the graph and what earlier methods cached on it included (GPU only)."
)
FIRST_CALL_NOTE = (
    "first ms cold/warm/warmed (gbla bench --first-call): the method's first call from the "
    "warm-up source in a new process running `gbla bfs|sssp GRAPH --method M`, as that "
    "command prints it, with empty kernel caches (CUPY_CACHE_DIR and GBLA_CACHE_DIR new "
    "folders, as on a fresh machine: the package's prebuilt modules unpacked, every other "
    "kernel compiled), then again with the caches that run filled (the median of 3 new "
    "processes; rows before 2026-11-28: one), then with new caches "
    "that `gbla warmup --methods M` filled from its own small graphs; "
    "process ms: the whole process (start, import, the graph's load, the call)."
)
# What a document's peak_bytes mean ("memory"; documents without it: the pool's bytes in use,
# the graph included).
PER_METHOD = "per method, above the graph"
_MIB = 2.0**20


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


def us_per_level(times_ms, counts):
    """The mean over sources of microseconds per level (or iteration), None without counts."""
    per_level = [t * 1e3 / c for t, c in zip(times_ms, counts) if c]
    return statistics.fmean(per_level) if per_level else None


def _h2d(r):
    """[H2D GB a source, H2D / graph bytes (medians over sources), the most device bytes a
    search held over its budget] of an out-of-core record, dashes for the others."""
    if not r.get("h2d_bytes"):
        return ["-", "-", "-"]
    moved = statistics.median(r["h2d_bytes"])
    held = f"{max(r['held_of_budget']):.2f}" if r.get("held_of_budget") else "-"
    return [f"{moved / 1e9:.3g}", f"{moved / r['graph_bytes']:.2f}", held]


def _first(r):
    """[the first call's ms, cold/warm, the whole process's] (FIRST_CALL_NOTE), dashes for a
    record without them."""
    if r.get("first_cold_ms") is None:
        return ["-", "-"]
    return [
        "/".join(_ms(r.get(f"first_{state}_ms")) for state in ("cold", "warm", "warmed")),
        "/".join(_ms(r.get(f"process_{state}_ms")) for state in ("cold", "warm", "warmed")),
    ]


def _row(r):
    us = r.get("us_per_level")
    if "us_per_level" not in r and r.get("kind") != "peer":  # a record older than the column
        us = us_per_level(r["times_ms"], r["counts"])
    return [
        r["method"],
        r["device"],
        _ms(r["mean_ms"]),
        _ms(r["median_ms"]),
        "-" if r["gteps"] is None else f"{r['gteps']:.3g}",
        _counts(r["counts"]),
        "-" if us is None else f"{us:.1f}",
        "-" if r["peak_bytes"] is None else f"{r['peak_bytes'] / _MIB:.1f}",
        "-" if r.get("peak_ratio") is None else f"{r['peak_ratio']:.2f}",
        r["check"] or r["status"],
        r["note"] or "",
    ]


def _relaxed(r):
    x = r.get("relaxed_per_edge")
    return "-" if x is None else f"{x:.2f}"


def format_table(records, style="text"):
    """The records of one (graph, algo) as a table: method, device, mean and median ms per
    source, GTEPS (harmonic mean), levels or iterations (range over sources), microseconds per
    level or iteration (gbla's level-synchronous methods; mean over sources), for SSSP the
    edges relaxed per stored edge (median over sources; '-' where a method does not count
    them), peak MiB and peak / the graph's stored bytes (see MEMORY_NOTE), check, note.
    ``style`` 'text' aligns plain columns; 'markdown' writes a pipe table."""
    count_name = next((r["count_name"] for r in records if r.get("count_name")), "levels")
    levels = "levels" if count_name == "levels" else "iters"
    header = [
        "method",
        "device",
        "mean ms",
        "median ms",
        "GTEPS",
        levels,
        "us/level" if levels == "levels" else "us/iter",
        "peak MiB",
        "peak/graph",
        "check",
        "note",
    ]
    rows = [_row(r) for r in records]
    numeric = 9  # the right-aligned columns end here
    if count_name != "levels":  # SSSP: the work beside the time
        header[7:7] = ["relaxed/edge"]
        rows = [row[:7] + [_relaxed(r)] + row[7:] for row, r in zip(rows, records)]
        numeric += 1
    if any(r.get("h2d_bytes") for r in records):  # out of core: its traffic, before check
        header[numeric:numeric] = ["H2D GB", "H2D / graph", "held / budget"]
        rows = [row[:numeric] + _h2d(r) + row[numeric:] for row, r in zip(rows, records)]
        numeric += 3
    if any(r.get("first_cold_ms") is not None for r in records):  # gbla bench --first-call
        header[numeric:numeric] = ["first ms cold/warm/warmed", "process ms cold/warm/warmed"]
        rows = [row[:numeric] + _first(r) + row[numeric:] for row, r in zip(rows, records)]
        numeric += 2
    if style == "markdown":
        right = set(range(2, numeric))
        lines = [
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|",
        ]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        return "\n".join(lines)
    V.one_of(style, ("text", "markdown"), "style")
    widths = [max(len(str(row[i])) for row in [header] + rows) for i in range(len(header))]
    lines = []
    for row in [header] + rows:
        cells = [
            c.rjust(w) if 2 <= i < numeric else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths))
        ]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def describe(records):
    """One line about the graph of these records (one graph, one algo)."""
    r = records[0]
    g = r["graph_info"]
    if g is None:  # the graph could not be read
        return f"{r['algo']} on {r['graph']}: could not be read ({r['note']})"
    shape = (
        f"symmetric, {g['edges']:,} undirected edges"
        if g["symmetric"]
        else f"directed, {g['edges']:,} arcs"
    )
    loops = f", {g['self_loops']:,} self-loops" if g["self_loops"] else ""
    stored = f", {g['stored_bytes'] / _MIB:.1f} MiB stored" if g.get("stored_bytes") else ""
    line = (
        f"{r['algo']} on {r['graph']}: {g['n']:,} vertices, {g['nvals']:,} stored entries "
        f"({shape}{loops}{stored}); {g['device']}, {len(r['sources'])} sources + 1 "
        "warm-up"
    )
    w = g.get("weights")
    if r["algo"] == "sssp" and w is not None:
        line += (
            "\n  weights: the graph has none; random integers drawn uniformly from "
            f"[{w['lo']}, {w['hi']}] as --weights asked (gbla.generators.with_weights, "
            f"seed {w['seed']})"
            if w["source"] == "generated"
            else "\n  weights: the graph has none; every edge weighs 1"
            if w["source"] == "unit"
            else f"\n  weights: the graph's ({w['dtype']})"
        )
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
    info = dict(
        gbla=__version__,
        python=platform.python_version(),
        numpy=np.__version__,
        scipy=scipy.__version__,
        platform=platform.platform(),
        cpu=_cpu_model(),
        cpu_count=os.cpu_count(),
        gpu=None,
    )
    try:
        import graphblas

        info["python_graphblas"] = graphblas.__version__
    except ImportError:
        info["python_graphblas"] = None
    if B.gpu_available():
        cp = B._cupy()
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        name = props["name"]
        info.update(
            gpu=name.decode() if isinstance(name, bytes) else str(name),
            gpu_memory_bytes=int(props["totalGlobalMem"]),
            cuda_runtime=_cuda_version(cp.cuda.runtime.runtimeGetVersion()),
            cuda_driver=_cuda_version(cp.cuda.runtime.driverGetVersion()),
            cupy=cp.__version__,
        )
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


# How run_method times a method's sources (a document's "timing"; documents without it checked
# each result between two timed calls): back to back, and since WARMED after a warm-up
# repeated on a GPU for WARM_MS.
BACK_TO_BACK = "back to back"
WARMED = "back to back, GPU warmed"
WARM_MS = 25.0


def bench_document(records, *, command, settings):
    """The JSON document of a run: schema, command line, time, machine, settings, timing,
    memory, records."""
    return dict(
        schema=SCHEMA,
        command=command,
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        machine=machine_info(),
        settings=settings,
        timing=WARMED,
        memory=PER_METHOD,
        records=records,
    )


def command_line(argv, prog="gbla"):
    """The command as one shell-quoted line."""
    return shlex.join([prog] + [str(a) for a in argv])
