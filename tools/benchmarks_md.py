"""Regenerate BENCHMARKS.md, whole, from every JSON file in benchmarks/results/:

    python tools/benchmarks_md.py

The folder holds the runs behind the current tables only, named by what they measure (its
README.md lists them; older runs are in git history). BENCHMARKS.md opens with the summary
that the README shows (SUMMARY below), then gives each file a section: the command and the
machine that made it, then its tables (for ``gbla bench --json``: every method and peer with
mean/median ms per source, GTEPS, levels or iterations, peak device memory and the check
against the reference; the bench scripts' own tables for theirs), with the plot drawn beside
it (its name with .png) where there is one. Files are taken in ORDER of their name's prefix,
then by name. ``--plot`` also draws the summary's chart (matplotlib).
``python tools/benchmarks_md.py FILE.json ...`` prints the sections of those files only.
"""

import argparse
import glob
import json
import os
import re
import statistics
import sys

from gbla import bench
from gbla.bench.chart import label as _label

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = "benchmarks/results"
ORDER = (
    "bfs_",
    "sssp_",
    "multisource_",
    "pagerank_",
    "triangles_",
    "readers",
    "outofcore_",
    "distributed_",
)
PAGERANK = "pagerank"  # the "benchmark" benchmarks/bench_pagerank.py writes

MULTISOURCE = "gbla-multisource/1"  # the schema benchmarks/bench_multisource.py writes
OUTOFCORE = "gbla-outofcore/1"  # the schema benchmarks/bench_outofcore.py writes
ASYNC = "gbla-sssp-async/1"  # the schema benchmarks/bench_sssp_async.py writes
READERS = "gbla-readers/1"  # the schema benchmarks/bench_readers.py writes
PARTITION = "gbla-partition-volume/1"  # the schema benchmarks/bench_partition_volume.py writes


def _machine(m):
    host = f"{m['cpu']} ({m['cpu_count']} CPUs)"
    gpu = (
        f"{m['gpu']} ({m['gpu_memory_bytes'] / 2**30:.0f} GiB), CUDA runtime "
        f"{m['cuda_runtime']}, driver {m['cuda_driver']}, CuPy {m['cupy']}; "
        if m.get("gpu")
        else "no GPU; "
    )
    peers = f", python-graphblas {m['python_graphblas']}" if m.get("python_graphblas") else ""
    return (
        f"{gpu}{host}; Python {m['python']}, NumPy {m['numpy']}, SciPy {m['scipy']}"
        f"{peers}; gbla {m['gbla']}"
    )


def _ablation(doc, path, i):
    """The edge_bellman_ford ablation: median ms and edges relaxed per second for each scale
    and variant, and the plot beside the JSON when there is one."""
    rows = doc["rows"]
    methods = list(dict.fromkeys(r["method"] for r in rows))
    scales = sorted({r["scale"] for r in rows})
    by = {(r["scale"], r["method"]): r for r in rows}
    out = [
        "## edge_bellman_ford ablation, R-MAT average degree 32, weights 1..255",
        "",
        "Median ms of a whole call (CUDA events, after a warm-up) and, in brackets, "
        "G edges relaxed per second (rounds x stored edges / time).",
        "",
        "| scale | vertices | stored edges | " + " | ".join(f"`{m}`" for m in methods) + " |",
        "|---:|---:|---:|" + "---:|" * len(methods),
    ]
    for scale in scales:
        first = next(r for r in rows if r["scale"] == scale)
        cells = [
            f"{by[scale, m]['median_ms']:.2f} ({by[scale, m]['relaxed_per_s'] / 1e9:.1f})"
            if (scale, m) in by
            else "-"
            for m in methods
        ]
        out.append(
            f"| {scale} | {first['vertices']:,} | {first['stored_edges']:,} | "
            + " | ".join(cells)
            + " |"
        )
    png = _chart(path)
    if png:
        out += ["", f"![edge_bellman_ford ablation]({png})"]
    return out + [""]


def _chart(path):
    """The plot drawn beside a JSON (its name with .png for .json), or None when there is none."""
    png = path[: -len(".json")] + ".png" if path.endswith(".json") else None
    return png if png and os.path.exists(png) else None


def _built_by(doc):
    """How a run's graph was built: from each rank's whole part of the edges (runs before the
    piece-wise build recorded its stored bytes), or a piece at a time."""
    return (
        "DistMatrix.from_edge_pieces, a piece of edges at a time"
        if "stored_bytes" in doc
        else "DistMatrix.from_edges"
    )


def _distributed(doc, i):
    """A benchmarks/bench_distributed.py run: each search's time, GTEPS, levels and traffic."""
    out = [
        f"## rmat({doc['scale']}) over {doc['ranks']} rank(s) on the {doc['device'].upper()}",
        "",
        f"{doc['undirected_edges']:,} undirected edges; the build (generation of each "
        f"rank's part and {_built_by(doc)}) took {doc['build_seconds']:.1f} s"
        + (
            f", {doc['stored_bytes'] / 1e9:.1f} GB stored over the ranks"
            if "stored_bytes" in doc
            else ""
        )
        + ". Bytes: payload every rank together sent in the search."
        + (
            " single:ALGO:METHOD rows: that method of gbla.bfs / gbla.sssp on the whole graph on "
            "one device, the same sources."
            if any(r["algo"].startswith("single:") for r in doc["rows"])
            else ""
        ),
        "",
    ]
    base = doc.get("baseline")
    if base:  # the best one-device method of each algorithm, from a one-rank run
        out += [
            "x best one-device: the baseline's median ms over the row's ms, above 1 where the "
            "ranks win; the baseline is the fastest one-device method of a one-rank run "
            "(--baseline: its --single methods, and from 64ebb03 on its own rows too): "
            + "; ".join(
                f"{family} `{b['method']}` {b['seconds'] * 1e3:.2f} ms"
                for family, b in sorted(base.items())
            )
            + ".",
            "",
        ]
    # relaxations: push_sssp's edges relaxed over every rank per stored edge (its stats'
    # 'relaxed'), where the run recorded them
    work = any("relaxed_per_edge" in r for r in doc["rows"])
    extra = (" relaxations / edge |" if work else "") + (" x best one-device |" if base else "")
    out += [
        "| algorithm | source | ms | GTEPS | levels | bytes sent | collectives / rank |" + extra,
        "|---|---:|---:|---:|---:|---:|---:|" + "---:|" * (work + bool(base)),
    ]
    for r in doc["rows"]:
        relaxed = (
            (f" {r['relaxed_per_edge']:.2f} |" if "relaxed_per_edge" in r else " - |")
            if work
            else ""
        )
        against = (
            f" {r['vs_best_single']:.2f} |"
            if base and "vs_best_single" in r
            else (" - |" if base else "")
        )
        out.append(
            f"| {r['algo']} | {r['source']} | {r['seconds'] * 1e3:.2f} | "
            f"{r['gteps'] or 0:.3f} | {r['levels']} | {r['bytes_total']:,} | "
            f"{r['collectives']} |" + relaxed + against
        )
    return out + [""]


def _multisource(doc, i):
    """A benchmarks/bench_multisource.py run: a table per graph and algorithm (one source, then
    each batch of k sources in one call), and the networkx all-pairs line."""
    out = []
    for run in doc["runs"]:
        g = run["graph_info"]
        count = "levels" if run["algo"] == "bfs" else "rounds"
        weights = f"; weights: {run['weights']}" if run.get("weights") else ""
        out += [
            f"## {run['graph']}, {run['algo']} from many sources at once",
            "",
            f"{g['n']:,} vertices, {g['nvals']:,} stored entries; {g['device']}{weights}. "
            f"one: the median of a call from each of the {len(run['sources'])} sources "
            "alone; k: one call from the first k of them (median of "
            f"{doc['settings']['repeats']}, after a warm-up); x one: ms per call over "
            "one source's ms; check: each row equal to (BFS) or close to (SSSP) the "
            "single-source result.",
            "",
            f"| k | method | ms per call | ms per source | x one source | {count} | check |",
            "|---:|---|---:|---:|---:|---:|---|",
        ]
        for r in run["rows"]:
            k = r["k"] if r["batch"] else "one"
            if r["ms"] is None:  # the batch raised (out of memory, most often)
                out.append(f"| {k} | - | - | - | - | - | {r['check']}: {r['note']} |")
                continue
            out.append(
                f"| {k} | {r['method']} | {r['ms']:.2f} | {r['ms_per_source']:.3f} | "
                f"{r['ratio']:.2f} | {r['count']} | {r['check']} |"
            )
        out.append("")
    p = doc.get("all_pairs")
    if p:
        out += ["## networkx all_pairs_shortest_path_length", "", _all_pairs_line(p), ""]
    return out


def _outofcore(doc, path, i):
    """A benchmarks/bench_outofcore.py run: a table per graph and algorithm, every strategy
    side by side (and the chart of their traffic that tools/plot_outofcore.py draws beside
    the JSON), and the search of a graph larger than the GPU's free memory."""
    out = []
    chart = _chart(path)
    if chart and doc["results"]:
        out += [
            f"![bytes moved, time against the bus bound and the in-memory search, {i}]({chart})",
            "",
            f"(`python tools/plot_outofcore.py {path} {chart}`)",
            "",
        ]
    for r in doc["results"]:
        g = r["graph_info"]
        out += [
            f"## {r['graph']}, {r['algo']} out of core, every strategy",
            "",
            f"{g['n']:,} vertices, {g['nvals']:,} stored entries; the graph as the device "
            f"holds it {r['graph_bytes'] / 1e9:.3g} GB; budget {r['budget'] / 1e9:.3g} GB "
            f"(the vertex arrays, {r['vertex_bytes'] / 1e9:.3g} GB, + {r['fraction']} of "
            f"the graph); in memory (gbla's default method, the graph on the GPU) "
            f"{r['in_memory_ms']:.2f} ms. Medians over {len(r['sources'])} sources. "
            + (
                f"The graph made ready once, kept for every search (pinned on a GPU, weights "
                f"in the distances' dtype): {r['setup_ms']:.0f} ms; first ms: a strategy's "
                "first search, untimed in the medians (compiles, plans). "
                if "setup_ms" in r
                else ""
            )
            + "Peak / budget: the most device bytes the search held (its vertex arrays, "
            "resident subgraphs and staging) over its budget. "
            f"Bus ms: the bytes moved (H2D and zero-copy) at {doc['pinned_gbps']} GB/s, the "
            "measured pinned bandwidth; x bus: ms over bus ms; copy ms: the copy "
            "stream's busy time; D2H GB: what `managed` prefetched back to the host."
            + next(
                (
                    f" `algebraic`: `gbla.bfs(method='algebraic')` / `gbla.sssp(method="
                    f"'delta_stepping')` on a `gbla.outofcore.HostMatrix` (the algebra's "
                    f"products streaming, differential schedule), budget "
                    f"{row['budget'] / 1e9:.3g} GB: its vectors at 96 bytes a vertex + "
                    f"{r['fraction']} of the graph."
                    for row in r["rows"]
                    if row["strategy"] == "algebraic" and "budget" in row
                ),
                "",
            ),
            "",
            "| strategy | ms | first ms | H2D GB | H2D / graph | zero-copy GB | D2H GB | copy ms "
            "| bus ms | x bus | iterations | peak / budget | check |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        swept = any(row.get("width") is not None for row in r["rows"])
        for row in r["rows"]:
            # --widths: SSSP's bucket width as a multiple of in-memory delta-stepping's default,
            # or the out-of-core 'auto' width
            label = row["strategy"] + (
                f" (width x{row['width']:g})"
                if row.get("width") is not None
                else " (auto width)"
                if swept and row["strategy"] != "algebraic"
                else ""
            )
            if "error" in row:
                out.append(
                    f"| {label} | - | - | - | - | - | - | - | - | - | - | - | "
                    f"ERROR: {row['error']} |"
                )
                continue
            first = f"{row['first_ms']:.1f}" if "first_ms" in row else "-"
            held = (
                f"{row['peak_bytes'] / row['budget']:.2f}"
                if row.get("peak_bytes") and row.get("budget")
                else "-"
            )
            out.append(
                f"| {label} | {row['ms']:.1f} | {first} | {row['h2d_bytes'] / 1e9:.3f} | "
                f"{row['h2d_ratio']:.2f} | {row['zerocopy_bytes'] / 1e9:.3f} | "
                f"{row.get('d2h_bytes', 0) / 1e9:.3f} | "
                f"{row['transfer_ms']:.1f} | {row['bus_bound_ms']:.2f} | "
                f"{row['ratio_to_bound']:.1f} | {row['iterations']:.0f} | {held} | "
                f"{row['check']} |"
            )
        out.append("")
    beyond = doc.get("beyond") or []
    for b in [beyond] if isinstance(beyond, dict) else beyond:  # one search before session 42
        st = b["stats"]
        algo = b.get("algo", "bfs")
        weighted = f", weighted in {b['weights_s']:.0f} s" if b.get("weights_s") else ""
        on_cpu = b.get("device") == "cpu"
        out += [
            f"## rmat({b['scale']}), "
            + (
                "built on the host, NumPy as the device"
                if on_cpu
                else "larger than the GPU's free memory"
            )
            + f": {algo.upper()}",
            "",
            f"{b['n']:,} vertices, {b['stored_edges']:,} stored edges, "
            f"{b['host_bytes'] / 1e9:.1f} GB in {'' if on_cpu else 'pinned '}host memory, built a "
            "part at a time "
            f"(`gbla.generators.rmat_host_csr`, {b['generate_s']:.0f} s{weighted}). "
            + (
                "NumPy played the device (the schedule's bytes; its times mean nothing)"
                if on_cpu
                else f"The GPU ({b['card_bytes'] / 1e9:.0f} GB) had "
                f"{b['free_bytes'] / 1e9:.1f} GB free"
                + (
                    f" (a ballast allocation took the rest of its "
                    f"{b['free_bytes_before_ballast'] / 1e9:.1f} GB free)"
                    if b["ballast"]
                    else ""
                )
            )
            + f"; budget {b['budget'] / 1e9:.1f} GB. {algo.upper()} from vertex {b['source']}: "
            f"**{b['ms']:.0f} ms**, {st['iterations']} "
            + ("levels" if algo == "bfs" else "rounds")
            + f", {b['reached']:,} vertices reached, {st['h2d_bytes'] / 1e9:.2f} GB host to "
            f"device ({st['h2d_bytes'] / st['graph_bytes']:.2f}x the graph) in "
            f"{st['transfers']} transfers ({st['whole_transfers']} whole subgraphs of "
            f"{st['subgraphs']})"
            + (f", copies {st['transfer_ms']:.0f} ms" if "transfer_ms" in st else "")
            + "; "
            + ("levels" if algo == "bfs" else "distances")
            + f" checked exactly on the host: {b['check']}.",
            "",
        ]
    return out


def _all_pairs_line(p):
    """The all-pairs paragraph: the time to produce the rows and, where the run measured it
    (from the runs that return lazy rows on), the time to read every entry after it."""
    head = (
        "`dict(nx.all_pairs_shortest_path_length(G))` on "
        f"`nx.gnm_random_graph({p['n']}, {p['edges']}, seed={p['seed']})` "
        f"({p['entries']:,} entries), networkx {p['networkx']}: "
    )
    if "gbla_read_s" not in p:
        return (
            head + f'plain networkx {p["networkx_s"]:.3g} s, `backend="gbla"` '
            f"{p['gbla_s']:.3g} s on the {p['device'].upper()} (conversion included), "
            f"**{p['speedup']:.1f}x**; the dicts "
            f"{'equal' if p['check'] == 'ok' else 'DIFFER'}."
        )
    rows = (
        "dicts"
        if p["gbla_row_type"] == "dict"
        else f"`{p['gbla_row_type']}` mappings, whose entries become Python objects only as "
        "they are read"
    )
    return (
        head + f"produced by plain networkx in {p['networkx_s']:.3g} s, by "
        f'`backend="gbla"` in {p["gbla_s"]:.3g} s on the {p["device"].upper()} '
        f"(conversion included), **{p['speedup']:.1f}x**; then every entry read "
        f"(`sum(len(d))` and a whole `d.items()` pass): {p['networkx_read_s']:.3g} s and "
        f"{p['gbla_read_s']:.3g} s; produce + read **{p['speedup_with_read']:.1f}x**. "
        f"gbla's rows are {rows}; the results "
        f"{'equal' if p['check'] == 'ok' else 'DIFFER'}."
    )


def _async(doc, i):
    """The asynchronous SSSP ablation: per graph, median ms and edges relaxed per stored edge
    of each method and plan."""
    out = [
        f"## Asynchronous delta-stepping: ablation and plans, weights "
        f"{doc['weights'][0]}..{doc['weights'][1]}",
        "",
        "Median ms of a whole call over the sources (CUDA events, after a warm-up) and the "
        "median edges relaxed per stored edge; `async k=v` rows are async_delta_stepping "
        "with one setting of its plan changed (gbla.kernels._sssp.AsyncPlan).",
        "",
        "| graph | method | median ms | relaxed / edge | check |",
        "|---|---|---:|---:|---|",
    ]
    for r in doc["rows"]:
        work = "-" if r["relaxed_per_edge"] is None else f"{r['relaxed_per_edge']:.2f}"
        out.append(
            f"| {r['graph']} | {r['method']} | {r['median_ms']:.2f} | {work} | {r['check']} |"
        )
    return out + [""]


# The README's table: gbla against SciPy and a GPU peer, from the current JSON. Each row: the
# algorithm, the file and the graph's label in it (gbla.bench.chart.label), the name shown.
SUMMARY = (
    ("bfs", "bfs_usa_road_ne_fla_ego_twitter_h100.json", "USA-road-NE", "USA-road-NE"),
    ("bfs", "bfs_usa_road_ne_fla_ego_twitter_h100.json", "USA-road-FLA", "USA-road-FLA"),
    ("bfs", "bfs_usa_road_ne_fla_ego_twitter_h100.json", "ego-Twitter.undirected", "ego-Twitter"),
    ("bfs", "bfs_rmat22_rmat24_h100.json", "rmat:22", "rmat(22)"),
    ("bfs", "bfs_rmat22_rmat24_h100.json", "rmat:24", "rmat(24)"),
    ("sssp", "sssp_methods_weights_1_255_h100.json", "USA-road-NE", "USA-road-NE"),
    ("sssp", "sssp_methods_weights_1_255_h100.json", "USA-road-FLA", "USA-road-FLA"),
    ("sssp", "sssp_methods_weights_1_255_h100.json", "ego-Twitter.undirected", "ego-Twitter"),
    ("sssp", "sssp_methods_weights_1_255_h100.json", "rmat:22", "rmat(22)"),
)
ALGEBRA = {"bfs": "algebraic", "sssp": "bellman_ford"}
# GPU peers on the same H100, median ms per source, measured by the project with their own
# builds (Gunrock essentials; Gardenia's sssp_linear_lb): no command in this repository makes
# them, so they are quoted, not regenerated.
GPU_PEERS = {
    ("bfs", "USA-road-NE"): (350, "Gunrock"),
    ("bfs", "USA-road-FLA"): (293, "Gunrock"),
    ("bfs", "ego-Twitter"): (2.56, "Gunrock"),
    ("sssp", "USA-road-NE"): (36, "Gardenia `sssp_linear_lb`"),
    ("sssp", "ego-Twitter"): (1980, "Gunrock"),
}
SUMMARY_PNG = "gbla_vs_scipy_and_gpu_peers_h100.png"
# The several-GPU summary: bench_distributed.py runs on 1, 2, 4 ... ranks made in one call,
# named STEM_{P}x{GPU}.json, the one-rank file with the --single rows (issue 37's table).
SCALING = (
    ("distributed_rmat25_bitmap_bfs_sssp_push", "h200"),
    ("distributed_rmat26_bitmap_bfs_sssp_push", "h200"),
)
# What a JSON does not record about itself: the command that made it and where it ran.
NOTES = {
    "pagerank_tol1e-10_h200.json": "`python benchmarks/bench_pagerank.py --tol 1e-10 --rmat 22 "
    "GRAPH...` on ego-Twitter, soc-Slashdot0902, web-Stanford and USA-road-NE (the JSON keeps "
    "the tolerance and the GPU, not the command line)",
    "pagerank_tol1e-6_h200.json": "`python benchmarks/bench_pagerank.py --rmat 22 GRAPH...` on "
    "the same graphs at networkx's tol 1e-6 (the JSON keeps the tolerance and the GPU, not the "
    "command line)",
    "triangles_h200.json": "not recorded (`gbla.triangles` against `networkx.triangles`, median "
    "of 5 after a warm-up, on one NVIDIA H200; no script in benchmarks/ makes it yet)",
    "partition_volume_rmat_cpu.json": "`python benchmarks/bench_partition_volume.py --json "
    "...` (frontiers counted on the CPU; bytes do not depend on the device, the seconds are "
    "priced on the links assumed)",
    "distributed_volume_cpu.json": "`python benchmarks/bench_distributed_volume.py` (thread "
    "ranks on the CPU; bytes do not depend on the device, the seconds are priced on the links "
    "assumed)",
}


def _pagerank(doc, i):
    """A benchmarks/bench_pagerank.py run: gbla.pagerank against SciPy's power iteration (and
    nx.pagerank where timed), every rank checked against SciPy's."""
    rows = doc["rows"]
    nx = any("networkx_ms" in r for r in rows)
    out = [
        f"## PageRank, tol {doc['tol']:g}, on the {doc['device']}",
        "",
        "Unweighted, alpha 0.85; gbla's call by CUDA events after a warm-up, SciPy (networkx's "
        "power iteration on a CSR built beforehand) by perf_counter on the same host; "
        "medians. max diff: the largest difference from SciPy's ranks.",
        "",
        "| graph | n | stored edges | iterations | gbla ms | us an iteration | SciPy ms | "
        "x SciPy |" + (" nx.pagerank ms |" if nx else "") + " max diff |",
        "|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if nx else "") + "---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['graph']} | {r['n']:,} | {r['nnz']:,} | {r['iterations']} | "
            f"{r['gbla_gpu_ms']:.3g} | {r['gpu_us_per_iteration']:.0f} | "
            f"{_ms(r['scipy_ms'])} | {r['speedup_vs_scipy']:.1f} |"
            + (f" {r['networkx_ms']:.0f} |" if r.get("networkx_ms") else (" - |" if nx else ""))
            + f" {r['max_abs_diff']:.1e} |"
        )
    return out + [""]


def _triangles(doc, i):
    """The triangle counts: gbla.triangles by direction against networkx.triangles."""
    out = [
        "## Triangles, gbla.triangles against networkx",
        "",
        "ms of a whole call; equal: every vertex's count equals networkx's.",
        "",
        "| graph | n | stored edges | triangles | gbla auto | push | pull | networkx | equal |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in doc:
        out.append(
            f"| {r['graph']} | {r['n']:,} | {r['nnz']:,} | {r['triangles']:,} | "
            f"{r['gpu auto ms']:.3g} | {r['gpu push ms']:.3g} | {r['gpu pull ms']:.3g} | "
            f"{r['networkx ms']:.4g} | {r['equal']} |"
        )
    return out + [""]


def _links(links):
    """The assumed links of a volume document, as words."""
    return "; ".join(
        f"{k}: {v['bytes_per_s'] / 1e9:.0f} GB/s a GPU, {v['latency_s'] * 1e6:.0f} us a collective"
        for k, v in links.items()
    )


def _partition(doc, i):
    """benchmarks/bench_partition_volume.py: a row cut (1D) against a checkerboard (2D) of the
    same graph, the bytes each would send for the same searches, and that priced on links."""
    links = doc["links_assumed"]
    names = list(links)
    groups = {}
    for r in doc["rows"]:
        groups.setdefault((r["algo"], r["scale"], r["ranks"], r["layout"]), []).append(r)
    out = [
        "## A row cut (1D) against a checkerboard (2D): what each sends (R-MAT, degree 32)",
        "",
        "For the same searches (the frontiers of each level, counted on the CPU; every push "
        "combined per target at its sender), the bytes all ranks together send per undirected "
        "edge, the busiest rank's bytes over the search, a bitmap frontier's bytes a rank and "
        "level, and the busiest rank's bytes of each level priced on assumed links with the "
        "latency of each collective (1D two a level, 2D three: "
        + _links(links)
        + "); medians over the sources.",
        "",
        "| algorithm | graph | ranks | layout | bytes / edge | busiest rank MiB | "
        "bitmap KiB a rank and level | " + " | ".join(f"ms, {k}" for k in names) + " |",
        "|---|---|---:|---|---:|---:|---:|" + "---:|" * len(names),
    ]
    for (algo, scale, ranks, layout), rs in sorted(groups.items()):
        r, c = rs[0]["grid"]
        per_edge = statistics.median(x["bytes_total"] / x["undirected_edges"] for x in rs)
        busiest = statistics.median(sum(x["bytes_max_rank"]) for x in rs) / 2**20
        ms = [statistics.median(x["comm_seconds"][k] for x in rs) * 1e3 for k in names]
        out.append(
            f"| {algo} | rmat({scale}), {rs[0]['undirected_edges']:,} edges | {ranks} | "
            f"{'1D' if layout == '1d' else f'2D {r}x{c}'} | {per_edge:.3f} | {busiest:.2f} | "
            f"{rs[0]['bitmap_bytes_per_rank_level'] / 2**10:.1f} | "
            + " | ".join(f"{v:.2f}" for v in ms)
            + " |"
        )
    return out + [""]


def _volume(doc, i):
    """benchmarks/bench_distributed_volume.py: the bytes a search over p ranks sends, per
    undirected edge, the collectives a rank makes, and that traffic priced on assumed links."""
    links = doc["links_assumed"]
    names = list(links)
    groups = {}
    for r in doc["rows"]:
        groups.setdefault((r["algo"], r["scale"], r["ranks"]), []).append(r)
    out = [
        "## Communication volume over ranks (R-MAT, average degree 32)",
        "",
        "Bytes every rank together sent over a whole search, per undirected edge, and the "
        "collectives a rank made (range over the sources); ms: that traffic priced on each "
        "assumed link (" + _links(links) + "), the slowest source.",
        "",
        "| algorithm | graph | ranks | bytes / edge | collectives | "
        + " | ".join(f"ms, {k}" for k in names)
        + " |",
        "|---|---|---:|---:|---:|" + "---:|" * len(names),
    ]

    def span(values, fmt):
        lo, hi = min(values), max(values)
        return format(lo, fmt) if lo == hi else f"{format(lo, fmt)}-{format(hi, fmt)}"

    for (algo, scale, ranks), rs in sorted(groups.items()):
        out.append(
            f"| {algo} | rmat({scale}), {rs[0]['undirected_edges']:,} edges | {ranks} | "
            f"{span([r['bytes_per_edge'] for r in rs], '.3f')} | "
            f"{span([r['collectives'] for r in rs], 'd')} | "
            + " | ".join(f"{max(r['comm_seconds'][k] for r in rs) * 1e3:.2f}" for k in names)
            + " |"
        )
    return out + [""]


def _readers(doc, name):
    """benchmarks/bench_readers.py: gbla.io.read against SciPy's own path to the same CSR
    matrix, per graph and case, and the aim it was held to."""
    aim = doc.get("aim")
    held = (
        f" Aim: gbla.io.read on {aim['graph']} ({aim['case']}) at most {aim['max_ratio']}x "
        f"SciPy's time: **{aim['ratio']:.2f}x**, {'met' if aim['met'] else 'NOT met'}."
        if aim
        else ""
    )
    load = ", ".join(f"{x:.1f}" for x in doc.get("load_average", []))
    out = [
        "## Readers: gbla.io.read against SciPy",
        "",
        f"Median seconds of a whole call over {doc['settings']['repeats']} (wall clock, the "
        "file in the page cache; gbla's and SciPy's calls alternate). as stored: "
        "`scipy.io.mmread(path).tocsr()`; undirected: that plus `S + S.T` (gbla: "
        "`directed=False`); npz: `scipy.sparse.load_npz` of the graph `save_npz` wrote. "
        "x SciPy: gbla's time over SciPy's (below 1: gbla faster); check: the same matrix."
        + (f" Load average at the end: {load}." if load else "")
        + held,
        "",
        "| graph | n | stored entries | case | gbla s | SciPy s | x SciPy | check |",
        "|---|---:|---:|---|---:|---:|---:|---|",
    ]
    for r in doc["rows"]:
        out.append(
            f"| {r['graph']} | {r['n']:,} | {r['nvals']:,} | {r['case']} | "
            f"{r['gbla_s']:.3f} | {r['scipy_s']:.3f} | {r['ratio']:.2f} | {r['check']} |"
        )
    return out + [""]


def _kind(doc):
    """Which benchmark wrote a document."""
    if isinstance(doc, list):  # the triangles run: a list of graphs
        return "triangles"
    if doc.get("schema") in (MULTISOURCE, OUTOFCORE, ASYNC, READERS, PARTITION):
        return doc["schema"]
    if doc.get("benchmark") == PAGERANK:
        return PAGERANK
    if "ranks" in doc:  # benchmarks/bench_distributed.py
        return "distributed"
    if "links_assumed" in doc:  # benchmarks/bench_distributed_volume.py
        return "volume"
    if "rows" in doc:  # benchmarks/bench_sssp_ablation.py
        return "ablation"
    if "records" in doc:  # gbla bench --json
        return "bench"
    raise ValueError(f"no table for this document (keys {sorted(doc)[:6]})")


# benchmarks/bench_distributed.py's rows when no --algos is given (its DEFAULT_ALGOS)
DISTRIBUTED_ALGOS = ["bfs", "bfs_bitmap", "sssp", "sssp_delta", "sssp_push"]


def _about(doc, kind, path):
    """The lines that say which command made a document and on which machine."""
    note = NOTES.get(os.path.basename(path))
    if kind in ("bench", MULTISOURCE, OUTOFCORE, READERS):
        timing = {
            bench.BACK_TO_BACK: ", sources back to back",
            bench.WARMED: ", sources back to back, GPU warmed",
        }.get(doc.get("timing"), "")
        prebuilt = (doc.get("settings") or {}).get("prebuilt")
        if prebuilt:  # cold: empty caches, modules compiled ahead of time found
            timing += f", kernels compiled ahead of time: {prebuilt}"
        return [
            f"Command: `{doc['command']}` ({doc.get('created') or doc.get('date')}{timing})",
            "",
            f"Machine: {_machine(doc['machine'])}",
        ]
    if kind in (ASYNC, "ablation"):
        m = doc["machine"]
        command = (
            f"`{doc['command']}`"
            if "command" in doc
            else f"`python benchmarks/bench_sssp_ablation.py` ({doc.get('runs', '')})"
        )
        return [
            f"Command: {command}",
            "",
            f"Machine: {m['gpu']}, CuPy {m['cupy']}, Python {m['python']}; gbla {m['gbla']}",
        ]
    if kind == "distributed":
        names = list(dict.fromkeys(r["algo"] for r in doc["rows"]))
        algos = [a for a in names if not a.startswith("single:")]
        singles = [a.split(":", 1)[1] for a in names if a.startswith("single:")]
        return [
            f"Command: `python -m gbla.distributed.launch -n {doc['ranks']} "
            f"benchmarks/bench_distributed.py --scale {doc['scale']}"
            + (f" --edge-factor {doc['edge_factor']}" if doc.get("edge_factor", 16) != 16 else "")
            + ("" if algos == DISTRIBUTED_ALGOS else " --algos " + " ".join(algos))
            + (" --single " + " ".join(singles) if singles else "")
            + (" --baseline ONE_RANK.json" if doc.get("baseline") else "")
            + "`",
            "",
            f"Machine: {doc.get('machine', 'not recorded')}; Python {doc['python']}; "
            f"gbla {doc['gbla']}",
        ]
    if kind == PAGERANK:
        return [f"Command: {note or 'not recorded'}", "", f"Machine: one {doc['device']}"]
    if kind in ("volume", PARTITION):
        m = doc["machine"]
        return [
            f"Command: {note}",
            "",
            f"Machine: the CPU; Python {m['python']}, NumPy {m['numpy']}; gbla {m['gbla']}",
        ]
    return [f"Command: {note or doc.get('command', 'not recorded')}"]


def _tables(doc, kind, path, name):
    """A document's tables, their headings one level below its section's."""
    if kind == MULTISOURCE:
        lines = _multisource(doc, name)
    elif kind == OUTOFCORE:
        lines = _outofcore(doc, path, name)
    elif kind == ASYNC:
        lines = _async(doc, name)
    elif kind == READERS:
        lines = _readers(doc, name)
    elif kind == "distributed":
        lines = _distributed(doc, name)
    elif kind == "ablation":
        lines = _ablation(doc, path, name)
    elif kind == PAGERANK:
        lines = _pagerank(doc, name)
    elif kind == "triangles":
        lines = _triangles(doc, name)
    elif kind == "volume":
        lines = _volume(doc, name)
    elif kind == PARTITION:
        lines = _partition(doc, name)
    else:
        lines = []
        for (graph, algo), records in bench.group(doc["records"]).items():
            lines += [
                f"## {graph}, {algo}",
                "",
                bench.describe(records).replace("\n  ", "; "),
                "",
                bench.format_table(records, style="markdown"),
                "",
            ]
    return ["#" + line if line.startswith("## ") else line for line in lines]


def _summary_rows(documents, paths):
    """The SUMMARY's rows: (algorithm, graph, algebra ms, fastest kernel ms and name, SciPy ms,
    GPU peer) from the documents loaded, medians of records whose check passed."""
    by_name = {os.path.basename(p): d for p, d in zip(paths, documents)}
    rows = []
    for algo, file, label, shown in SUMMARY:
        doc = by_name.get(file)
        if doc is None:
            continue
        records = [
            r
            for r in doc["records"]
            if _label(r["graph"]) == label
            and r["algo"] == algo
            and r["status"] == "ok"
            and r["check"] == "ok"
        ]
        algebra = next(r for r in records if r["method"] == ALGEBRA[algo])
        kernels = [
            r
            for r in records
            if r["kind"] == "kernel"
            and r["method"] != "auto"  # method='auto' runs one of them (its note says which)
            and not r["method"].startswith("out_of_core")
        ]
        best = min(kernels, key=lambda r: r["median_ms"])
        scipy = next(r for r in records if r["method"] == "scipy")
        rows.append(
            (
                algo,
                shown,
                algebra["median_ms"],
                best["median_ms"],
                best["method"],
                scipy["median_ms"],
                GPU_PEERS.get((algo, shown)),
                file,
            )
        )
    return rows


def _ms(x):
    """Three significant digits, without an exponent."""
    return f"{x:.3g}" if x < 1000 else f"{x:,.0f}"


def _summary(documents, paths):
    """The README's table, from SUMMARY's files."""
    rows = _summary_rows(documents, paths)
    if not rows:
        return []
    files = list(dict.fromkeys(row[-1] for row in rows))
    out = [
        "## Summary: gbla against SciPy and GPU peers",
        "",
        "Median ms per source, one NVIDIA H100 80GB HBM3 (SciPy on its host's CPU), every gbla "
        "and SciPy result checked; x SciPy: SciPy's time over gbla's faster column. From "
        + ", ".join(f"[{f}](#{f[: -len('.json')]})" for f in files)
        + "; SSSP with weights "
        "1..255. GPU peers: measured on the same H100 with their own builds and quoted here "
        "(" + ", ".join(sorted({p[1] for p in GPU_PEERS.values()})) + "); no command in "
        "this repository remakes them.",
        "",
        "| algorithm | graph | gbla, algebra | gbla, fastest kernel | SciPy | x SciPy | GPU peer |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for algo, graph, algebra, best, method, scipy, peer, _ in rows:
        name = "BFS" if algo == "bfs" else "SSSP"
        peer_cell = f"{_ms(peer[0])} ({peer[1]})" if peer else ""
        speedup = scipy / min(algebra, best)
        times = f"{speedup:.1f}x" if speedup < 10 else f"{speedup:,.0f}x"
        out.append(
            f"| {name} | {graph} | {_ms(algebra)} (`{ALGEBRA[algo]}`) | {_ms(best)} "
            f"(`{method}`) | {_ms(scipy)} | {times} | {peer_cell} |"
        )
    if os.path.exists(os.path.join(RESULTS, SUMMARY_PNG)):
        out += [
            "",
            f"![gbla against SciPy and GPU peers]({RESULTS}/{SUMMARY_PNG})",
            "",
            "(`python tools/benchmarks_md.py --plot` draws it.)",
        ]
    return out + [""]


def _median_and_gteps(rows):
    """(median seconds, harmonic-mean GTEPS) of a search's rows."""
    median = statistics.median(r["seconds"] for r in rows)
    gteps = [r["gteps"] for r in rows if r["gteps"]]
    return median, (len(gteps) / sum(1 / g for g in gteps) if gteps else 0.0)


def _family(algo):
    """'bfs' or 'sssp' of a bench_distributed.py row's algorithm (single:FAMILY:METHOD too)."""
    name = algo.split(":")[1] if algo.startswith("single:") else algo
    return "sssp" if name.startswith("sssp") else "bfs"


def _scaling(documents, paths):
    """SCALING's runs as one table: each search's median ms (GTEPS) per GPU count, against the
    fastest one-GPU row of the one-rank run (its --single methods and its own rows)."""
    by_name = {os.path.basename(p): d for p, d in zip(paths, documents)}
    groups = []
    for stem, gpu in SCALING:
        runs = {}
        for name, doc in by_name.items():
            m = re.fullmatch(re.escape(stem) + r"_(\d+)x" + re.escape(gpu) + r"\.json", name)
            if m:
                runs[int(m.group(1))] = (doc, name)
        if 1 in runs and len(runs) > 1:
            groups.append(runs)
    if not groups:
        return []
    counts = sorted({p for runs in groups for p in runs})
    out = [
        "## Several GPUs against one",
        "",
        "Median ms per source (harmonic-mean GTEPS) of benchmarks/bench_distributed.py's "
        "searches on 1 to "
        f"{counts[-1]} GPUs of one host, each graph's runs made in one call; x: the best "
        "one-GPU row of the one-rank run (a --single method on the whole graph, or one rank "
        "of the distributed code) over the row's ms, above 1 where the GPUs win. From "
        + ", ".join(
            f"[{name[: -len('.json')]}](#{name[: -len('.json')]})"
            for runs in groups
            for _, (_, name) in sorted(runs.items())
        )
        + ".",
        "",
        "| graph | search | best one GPU | "
        + " | ".join(f"{p} GPU{'s' * (p > 1)}" for p in counts)
        + " |",
        "|---|---|---:|" + "---:|" * len(counts),
    ]
    for runs in groups:
        one = runs[1][0]
        best = {}
        for algo in dict.fromkeys(r["algo"] for r in one["rows"]):
            median, gteps = _median_and_gteps([r for r in one["rows"] if r["algo"] == algo])
            family = _family(algo)
            if family not in best or median < best[family][0]:
                shown = algo.split(":")[2] if algo.startswith("single:") else f"{algo}, one rank"
                best[family] = (median, gteps, shown)
        for algo in dict.fromkeys(r["algo"] for r in one["rows"]):
            if algo.startswith("single:"):
                continue
            b = best[_family(algo)]
            cells = []
            for p in counts:
                rows = [r for r in runs[p][0]["rows"] if r["algo"] == algo] if p in runs else []
                if not rows:
                    cells.append("")
                    continue
                median, gteps = _median_and_gteps(rows)
                cells.append(f"{_ms(median * 1e3)} ({gteps:.1f}): {b[0] / median:.2f}x")
            out.append(
                f"| rmat({one['scale']}) | {algo} | {_ms(b[0] * 1e3)} ({b[1]:.1f}): `{b[2]}` | "
                + " | ".join(cells)
                + " |"
            )
    return out + [""]


# issue 40's table: its graphs' bench_outofcore.py runs (one file a graph and machine)
OUTOFCORE_SUMMARY = ("outofcore_rmat21", "outofcore_rmat24", "outofcore_usa_road_ne")


def _aims(result, row):
    """Issue 40's aims for ``row`` (a differential row of ``result``) as a cell: each aim the
    chart draws (tools/plot_outofcore.py's ``aim``), the figure, and met or missed by how
    much."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "plot_outofcore",
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "plot_outofcore.py"),
    )
    chart = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(chart)
    figures = (
        ("bytes", "bytes / graph", row["h2d_ratio"]),
        ("bus", "x bus", row["ratio_to_bound"]),
        ("memory", "time / in memory", row["ms"] / result["in_memory_ms"]),
    )
    cells = []
    for key, what, value in figures:
        bound = chart.aim(key, result)
        if bound is not None:
            verdict = "met" if value <= bound else f"missed by {value / bound:.2f}x"
            cells.append(f"{what} <= {bound:g}: {value:.2f}, {verdict}")
    return "; ".join(cells)


def _outofcore_summary(documents, paths):
    """Issue 40's table from OUTOFCORE_SUMMARY's files: per graph, search and machine the
    differential strategy at the run's budget beside the in-memory search, against the aims."""
    found = []
    for path, doc in zip(paths, documents):
        name = os.path.basename(path)[: -len(".json")]
        stem, _, machine = name.rpartition("_")
        if stem in OUTOFCORE_SUMMARY and doc.get("schema") == OUTOFCORE:
            found.append((OUTOFCORE_SUMMARY.index(stem), machine, name, doc))
    if not found:
        return []
    out = [
        "## Out of core: issue 40's table",
        "",
        "The graph in pinned host memory, the GPU held to the search's vertex arrays plus half "
        "the graph's bytes; the differential strategy, median ms per source (first call in "
        "brackets; the graph made ready once before it), the bytes it sent over the bus against "
        "the graph's, its time over what those bytes take at the pinned bandwidth measured in "
        "the run (x bus), and the in-memory search on the same GPU. Aims (issue 40, on an "
        "H100): BFS within 2x the bus bound (3x the in-memory search on the roads); SSSP at "
        "most 1.5x the graph's bytes and within 3x the bus bound. In memory x bus: the "
        "in-memory search's time over the same bus bound; where it is far above 1 (the roads' "
        "thousands of levels and rounds), the search's steps, not the bus, bound it, in memory "
        "or not. From " + ", ".join(f"[{n}](#{n})" for _, _, n, _ in sorted(found)) + ".",
        "",
        "| graph | search | GPU (run) | ms (first) | bytes / graph | x bus | in memory ms "
        "| in memory x bus | time / in memory | aims |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for _, machine, _name, doc in sorted(found):
        gpu = doc["machine"].get("gpu") or machine
        for r in doc["results"]:
            row = next(
                (x for x in r["rows"] if x["strategy"] == "differential" and "error" not in x),
                None,
            )
            if row is None:
                continue
            graph = _label(r["graph"])
            first = f" ({row['first_ms']:.0f})" if "first_ms" in row else ""
            out.append(
                f"| {graph} | {r['algo'].upper()} | {gpu} ({doc['date'][:10]}) | "
                f"{_ms(row['ms'])}{first} | {row['h2d_ratio']:.2f} | "
                f"{row['ratio_to_bound']:.2f} | {_ms(r['in_memory_ms'])} | "
                f"{r['in_memory_ms'] / row['bus_bound_ms']:.2f} | "
                f"{row['ms'] / r['in_memory_ms']:.1f} | "
                f"{_aims(r, row)} |"
            )
    return out + [""]


def plot_summary(documents, paths, png):
    """The summary as a grouped bar chart (log-scale ms) at ``png``; needs matplotlib."""
    from matplotlib.figure import Figure

    rows = _summary_rows(documents, paths)
    series = [
        ("gbla, algebra", 2, "tab:blue"),
        ("gbla, fastest kernel", 3, "tab:cyan"),
        ("SciPy (CPU)", 5, "tab:gray"),
        ("GPU peer (Gunrock; Gardenia: SSSP on NE)", 6, "tab:orange"),
    ]
    fig = Figure(figsize=(9.0, 4.2), layout="constrained")
    ax = fig.subplots()
    width = 0.2
    for j, (label, col, color) in enumerate(series):
        xs, ys = [], []
        for g, row in enumerate(rows):
            value = row[col][0] if col == 6 and row[col] else row[col] if col != 6 else None
            if value is not None:
                xs.append(g - 0.3 + width * j)
                ys.append(value)
        ax.bar(xs, ys, width, label=label, color=color)
    ax.set_yscale("log")
    ax.set_xticks(
        range(len(rows)),
        [f"{'BFS' if r[0] == 'bfs' else 'SSSP'}\n{r[1]}" for r in rows],
        fontsize="small",
    )
    ax.set_ylabel("median ms per source (log scale)")
    ax.set_title(
        "gbla on one H100 against SciPy and GPU peers (lower is better)", fontsize="medium"
    )
    ax.legend(fontsize="small")
    fig.savefig(png, dpi=110, metadata={"Software": None})
    return png


def _order(path):
    name = os.path.basename(path)
    rank = next((k for k, prefix in enumerate(ORDER) if name.startswith(prefix)), len(ORDER))
    return rank, name


def render(documents, paths, summary=True):
    """BENCHMARKS.md as a string from the loaded JSON ``documents`` (read from ``paths``)."""
    names = [os.path.basename(p)[: -len(".json")] for p in paths]
    out = [
        "# Benchmarks",
        "",
        "Generated by `python tools/benchmarks_md.py` from every JSON file in "
        f"[{RESULTS}/]({RESULTS}/) (what each is: [its README]({RESULTS}/README.md)); do not "
        "edit by hand. Each section names the command that made its file and the machine it "
        "ran on. Older runs are in git history; the A/B logs that the docs cite are in "
        f"[{RESULTS}/ab/]({RESULTS}/ab/).",
        "",
        bench.TIMING_NOTE + " " + bench.GTEPS_NOTE + " " + bench.MEMORY_NOTE + " check: the "
        "first method's result is checked by `gbla.verify`, every other result equal to "
        "it. " + bench.FIRST_CALL_NOTE,
        "",
    ]
    if summary:
        out += _summary(documents, paths) + _scaling(documents, paths)
        out += _outofcore_summary(documents, paths)
    out += ["## Files", ""] + [f"- [{n}](#{n})" for n in names] + [""]
    for doc, path, name in zip(documents, paths, names):
        kind = _kind(doc)
        out += [f"## {name}", ""] + _about(doc, kind, path) + [""]
        out += _tables(doc, kind, path, name)
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("json", nargs="*", help="render these files only, to standard output")
    p.add_argument(
        "--plot",
        action="store_true",
        help=f"also draw the summary's chart, {RESULTS}/{SUMMARY_PNG}",
    )
    args = p.parse_args(argv)
    paths = args.json
    if not paths:  # the whole folder, from the checkout's root
        os.chdir(ROOT)
        paths = sorted(glob.glob(f"{RESULTS}/*.json"), key=_order)
    documents = []
    for path in paths:
        with open(path) as f:
            documents.append(json.load(f))
    if args.plot:
        plot_summary(documents, paths, os.path.join(ROOT, RESULTS, SUMMARY_PNG))
    text = render(documents, paths, summary=not args.json)
    if args.json:
        sys.stdout.write(text)
    else:
        with open("BENCHMARKS.md", "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
