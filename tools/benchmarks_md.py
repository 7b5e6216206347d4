"""Regenerate BENCHMARKS.md, whole, from the JSON files of ``gbla bench --json``:

    python tools/benchmarks_md.py bfs_rmat22.json sssp_road.json > BENCHMARKS.md

A header gives the exact commands and the machines they ran on, then one table per run,
graph and algorithm: every method and peer with mean/median ms per source, GTEPS, levels or
iterations, peak device memory and the check against the reference.
"""

import argparse
import json
import os
import sys

from gbla import bench

MULTISOURCE = "gbla-multisource/1"  # the schema benchmarks/bench_multisource.py writes
OUTOFCORE = "gbla-outofcore/1"  # the schema benchmarks/bench_outofcore.py writes
ASYNC = "gbla-sssp-async/1"  # the schema benchmarks/bench_sssp_async.py writes


def _machine(m):
    host = f"{m['cpu']} ({m['cpu_count']} CPUs)"
    gpu = (f"{m['gpu']} ({m['gpu_memory_bytes'] / 2**30:.0f} GiB), CUDA runtime "
           f"{m['cuda_runtime']}, driver {m['cuda_driver']}, CuPy {m['cupy']}; "
           if m.get("gpu") else "no GPU; ")
    peers = f", python-graphblas {m['python_graphblas']}" if m.get("python_graphblas") else ""
    return (f"{gpu}{host}; Python {m['python']}, NumPy {m['numpy']}, SciPy {m['scipy']}"
            f"{peers}; gbla {m['gbla']}")


def _ablation(doc, path, i):
    """The edge_bellman_ford ablation: median ms and edges relaxed per second for each scale
    and variant, and the plot beside the JSON when there is one."""
    rows = doc["rows"]
    methods = list(dict.fromkeys(r["method"] for r in rows))
    scales = sorted({r["scale"] for r in rows})
    by = {(r["scale"], r["method"]): r for r in rows}
    out = [f"## edge_bellman_ford ablation, R-MAT average degree 32, weights 1..255 (run {i})",
           "", "Median ms of a whole call (CUDA events, after a warm-up) and, in brackets, "
           "G edges relaxed per second (rounds x stored edges / time).", "",
           "| scale | vertices | stored edges | " + " | ".join(f"`{m}`" for m in methods) + " |",
           "|---:|---:|---:|" + "---:|" * len(methods)]
    for scale in scales:
        first = next(r for r in rows if r["scale"] == scale)
        cells = [f"{by[scale, m]['median_ms']:.2f} ({by[scale, m]['relaxed_per_s'] / 1e9:.1f})"
                 if (scale, m) in by else "-" for m in methods]
        out.append(f"| {scale} | {first['vertices']:,} | {first['stored_edges']:,} | "
                   + " | ".join(cells) + " |")
    png = _chart(path)
    if png:
        out += ["", f"![edge_bellman_ford ablation]({png})"]
    return out + [""]


def _chart(path):
    """The plot drawn beside a JSON (its name with .png for .json), or None when there is none."""
    png = path[:-len(".json")] + ".png" if path.endswith(".json") else None
    return png if png and os.path.exists(png) else None


def _built_by(doc):
    """How a run's graph was built: from each rank's whole part of the edges (runs before the
    piece-wise build recorded its stored bytes), or a piece at a time."""
    return "DistMatrix.from_edge_pieces, a piece of edges at a time" if "stored_bytes" in doc \
        else "DistMatrix.from_edges"


def _distributed(doc, i):
    """A benchmarks/bench_distributed.py run: each search's time, GTEPS, levels and traffic."""
    out = [f"## rmat({doc['scale']}) over {doc['ranks']} rank(s) on the {doc['device'].upper()} "
           f"(run {i})", "",
           f"{doc['undirected_edges']:,} undirected edges; the build (generation of each "
           f"rank's part and {_built_by(doc)}) took {doc['build_seconds']:.1f} s"
           + (f", {doc['stored_bytes'] / 1e9:.1f} GB stored over the ranks"
              if "stored_bytes" in doc else "")
           + ". Bytes: payload every rank together sent in the search.", "",
           "| algorithm | source | ms | GTEPS | levels | bytes sent | collectives / rank |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for r in doc["rows"]:
        out.append(f"| {r['algo']} | {r['source']} | {r['seconds'] * 1e3:.2f} | "
                   f"{r['gteps'] or 0:.3f} | {r['levels']} | {r['bytes_total']:,} | "
                   f"{r['collectives']} |")
    return out + [""]


def _multisource(doc, i):
    """A benchmarks/bench_multisource.py run: a table per graph and algorithm (one source, then
    each batch of k sources in one call), and the networkx all-pairs line."""
    out = []
    for run in doc["runs"]:
        g = run["graph_info"]
        count = "levels" if run["algo"] == "bfs" else "rounds"
        weights = f"; weights: {run['weights']}" if run.get("weights") else ""
        out += [f"## {run['graph']}, {run['algo']} from many sources at once (run {i})", "",
                f"{g['n']:,} vertices, {g['nvals']:,} stored entries; {g['device']}{weights}. "
                f"one: the median of a call from each of the {len(run['sources'])} sources "
                "alone; k: one call from the first k of them (median of "
                f"{doc['settings']['repeats']}, after a warm-up); x one: ms per call over "
                "one source's ms; check: each row equal to (BFS) or close to (SSSP) the "
                "single-source result.", "",
                f"| k | method | ms per call | ms per source | x one source | {count} | check |",
                "|---:|---|---:|---:|---:|---:|---|"]
        for r in run["rows"]:
            k = r["k"] if r["batch"] else "one"
            if r["ms"] is None:  # the batch raised (out of memory, most often)
                out.append(f"| {k} | - | - | - | - | - | {r['check']}: {r['note']} |")
                continue
            out.append(f"| {k} | {r['method']} | {r['ms']:.2f} | {r['ms_per_source']:.3f} | "
                       f"{r['ratio']:.2f} | {r['count']} | {r['check']} |")
        out.append("")
    p = doc.get("all_pairs")
    if p:
        out += [f"## networkx all_pairs_shortest_path_length (run {i})", "",
                _all_pairs_line(p), ""]
    return out


def _outofcore(doc, path, i):
    """A benchmarks/bench_outofcore.py run: a table per graph and algorithm, every strategy
    side by side (and the chart of their traffic that tools/plot_outofcore.py draws beside
    the JSON), and the search of a graph larger than the GPU's free memory."""
    out = []
    chart = _chart(path)
    if chart and doc["results"]:
        out += [f"![host-to-device bytes per strategy, run {i}]({chart})", "",
                f"(`python tools/plot_outofcore.py {path} {chart}`)", ""]
    for r in doc["results"]:
        g = r["graph_info"]
        out += [f"## {r['graph']}, {r['algo']} out of core, every strategy (run {i})", "",
                f"{g['n']:,} vertices, {g['nvals']:,} stored entries; the graph as the device "
                f"holds it {r['graph_bytes'] / 1e9:.3g} GB; budget {r['budget'] / 1e9:.3g} GB "
                f"(the vertex arrays, {r['vertex_bytes'] / 1e9:.3g} GB, + {r['fraction']} of "
                f"the graph); in memory (gbla's default method, the graph on the GPU) "
                f"{r['in_memory_ms']:.2f} ms. Medians over {len(r['sources'])} sources. "
                f"Bus ms: the bytes moved (H2D and zero-copy) at {doc['pinned_gbps']} GB/s, the "
                "measured pinned bandwidth; x bus: ms over bus ms; copy ms: the copy "
                "stream's busy time; D2H GB: what `managed` prefetched back to the host."
                + next((f" `algebraic`: `gbla.bfs(method='algebraic')` / `gbla.sssp(method="
                        f"'delta_stepping')` on a `gbla.outofcore.HostMatrix` (the algebra's "
                        f"products streaming, differential schedule), budget "
                        f"{row['budget'] / 1e9:.3g} GB: its vectors at 96 bytes a vertex + "
                        f"{r['fraction']} of the graph." for row in r["rows"]
                        if row["strategy"] == "algebraic" and "budget" in row), ""), "",
                "| strategy | ms | H2D GB | H2D / graph | zero-copy GB | D2H GB | copy ms | bus ms "
                "| x bus | iterations | check |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for row in r["rows"]:
            if "error" in row:
                out.append(f"| {row['strategy']} | - | - | - | - | - | - | - | - | - | "
                           f"ERROR: {row['error']} |")
                continue
            out.append(f"| {row['strategy']} | {row['ms']:.1f} | {row['h2d_bytes'] / 1e9:.3f} | "
                       f"{row['h2d_ratio']:.2f} | {row['zerocopy_bytes'] / 1e9:.3f} | "
                       f"{row.get('d2h_bytes', 0) / 1e9:.3f} | "
                       f"{row['transfer_ms']:.1f} | {row['bus_bound_ms']:.2f} | "
                       f"{row['ratio_to_bound']:.1f} | {row['iterations']:.0f} | "
                       f"{row['check']} |")
        out.append("")
    b = doc.get("beyond")
    if b:
        st = b["stats"]
        out += [f"## rmat({b['scale']}), larger than the GPU's free memory (run {i})", "",
                f"{b['n']:,} vertices, {b['stored_edges']:,} stored edges, "
                f"{b['host_bytes'] / 1e9:.1f} GB in pinned host memory, built a part at a time "
                f"(`gbla.generators.rmat_host_csr`, {b['generate_s']:.0f} s). The GPU "
                f"({b['card_bytes'] / 1e9:.0f} GB) had {b['free_bytes'] / 1e9:.1f} GB free"
                + (f" (a ballast allocation took the rest of its "
                   f"{b['free_bytes_before_ballast'] / 1e9:.1f} GB free)" if b["ballast"]
                   else "") +
                f"; budget {b['budget'] / 1e9:.1f} GB. BFS from vertex {b['source']}: "
                f"**{b['ms']:.0f} ms**, {st['levels']} levels, {b['reached']:,} vertices "
                f"reached, {st['h2d_bytes'] / 1e9:.2f} GB host to device "
                f"({st['h2d_bytes'] / st['graph_bytes']:.2f}x the graph) in "
                f"{st['transfers']} transfers ({st['whole_transfers']} whole subgraphs of "
                f"{st['subgraphs']}), copies {st['transfer_ms']:.0f} ms; levels checked "
                f"exactly on the host: {b['check']}.", ""]
    return out


def _all_pairs_line(p):
    """The all-pairs paragraph: the time to produce the rows and, where the run measured it
    (from the runs that return lazy rows on), the time to read every entry after it."""
    head = ("`dict(nx.all_pairs_shortest_path_length(G))` on "
            f"`nx.gnm_random_graph({p['n']}, {p['edges']}, seed={p['seed']})` "
            f"({p['entries']:,} entries), networkx {p['networkx']}: ")
    if "gbla_read_s" not in p:
        return (head + f"plain networkx {p['networkx_s']:.3g} s, `backend=\"gbla\"` "
                f"{p['gbla_s']:.3g} s on the {p['device'].upper()} (conversion included), "
                f"**{p['speedup']:.1f}x**; the dicts "
                f"{'equal' if p['check'] == 'ok' else 'DIFFER'}.")
    rows = ("dicts" if p["gbla_row_type"] == "dict" else
            f"`{p['gbla_row_type']}` mappings, whose entries become Python objects only as "
            "they are read")
    return (head + f"produced by plain networkx in {p['networkx_s']:.3g} s, by "
            f"`backend=\"gbla\"` in {p['gbla_s']:.3g} s on the {p['device'].upper()} "
            f"(conversion included), **{p['speedup']:.1f}x**; then every entry read "
            f"(`sum(len(d))` and a whole `d.items()` pass): {p['networkx_read_s']:.3g} s and "
            f"{p['gbla_read_s']:.3g} s; produce + read **{p['speedup_with_read']:.1f}x**. "
            f"gbla's rows are {rows}; the results "
            f"{'equal' if p['check'] == 'ok' else 'DIFFER'}.")


def _async(doc, i):
    """The asynchronous SSSP ablation: per graph, median ms and edges relaxed per stored edge
    of each method and plan."""
    out = [f"## Asynchronous delta-stepping: ablation and plans, weights "
           f"{doc['weights'][0]}..{doc['weights'][1]} (run {i})", "",
           "Median ms of a whole call over the sources (CUDA events, after a warm-up) and the "
           "median edges relaxed per stored edge; `async k=v` rows are async_delta_stepping "
           "with one setting of its plan changed (gbla.kernels._sssp.AsyncPlan).", "",
           "| graph | method | median ms | relaxed / edge | check |", "|---|---|---:|---:|---|"]
    for r in doc["rows"]:
        work = "-" if r["relaxed_per_edge"] is None else f"{r['relaxed_per_edge']:.2f}"
        out.append(f"| {r['graph']} | {r['method']} | {r['median_ms']:.2f} | {work} | "
                   f"{r['check']} |")
    return out + [""]


def render(documents, paths):
    """BENCHMARKS.md as a string from the loaded JSON ``documents`` (read from ``paths``)."""
    out = ["# Benchmarks", "",
           "Generated by `python tools/benchmarks_md.py " + " ".join(paths) + " > BENCHMARKS.md`"
           " from the JSON that `gbla bench --json` writes; do not edit by hand.", "",
           bench.TIMING_NOTE + " " + bench.GTEPS_NOTE + " " + bench.MEMORY_NOTE + " check: the "
           "first method's result is checked by `gbla.verify`, every other result equal to "
           "it.", "", "## Runs", ""]
    for i, doc in enumerate(documents, 1):
        if doc.get("schema") == MULTISOURCE:  # benchmarks/bench_multisource.py
            out += [f"{i}. `{doc['command']}` ({doc['created']})", "",
                    f"   {_machine(doc['machine'])}", ""]
            continue
        if doc.get("schema") == OUTOFCORE:  # benchmarks/bench_outofcore.py
            out += [f"{i}. `{doc['command']}` ({doc['date']})", "",
                    f"   {_machine(doc['machine'])}", ""]
            continue
        if doc.get("schema") == ASYNC:  # benchmarks/bench_sssp_async.py
            m = doc["machine"]
            out += [f"{i}. `{doc['command']}`", "", f"   {m['gpu']}, CuPy {m['cupy']}, "
                    f"Python {m['python']}; gbla {m['gbla']}", ""]
            continue
        if "ranks" in doc:  # benchmarks/bench_distributed.py
            out += [f"{i}. `python -m gbla.distributed.launch -n {doc['ranks']} "
                    f"benchmarks/bench_distributed.py --scale {doc['scale']}"
                    + (f" --edge-factor {doc['edge_factor']}" if doc.get("edge_factor", 16) != 16
                       else "") + f"` ({doc['device']})",
                    "", f"   {doc.get('machine', 'see the README')}; Python {doc['python']}; "
                    f"gbla {doc['gbla']}", ""]
            continue
        if "rows" in doc:  # benchmarks/bench_sssp_ablation.py
            m = doc["machine"]
            out += [f"{i}. `python benchmarks/bench_sssp_ablation.py` ({doc.get('runs', '')})",
                    "", f"   {m['gpu']}, CuPy {m['cupy']}, Python {m['python']}; gbla "
                    f"{m['gbla']}", ""]
            continue
        timing = ", sources back to back" if doc.get("timing") == bench.BACK_TO_BACK else ""
        out += [f"{i}. `{doc['command']}` ({doc['created']}{timing})", "",
                f"   {_machine(doc['machine'])}", ""]
    for i, doc in enumerate(documents, 1):
        if doc.get("schema") == MULTISOURCE:
            out += _multisource(doc, i)
            continue
        if doc.get("schema") == OUTOFCORE:
            out += _outofcore(doc, paths[i - 1], i)
            continue
        if doc.get("schema") == ASYNC:
            out += _async(doc, i)
            continue
        if "ranks" in doc:
            out += _distributed(doc, i)
            continue
        if "rows" in doc:
            out += _ablation(doc, paths[i - 1], i)
            continue
        for (graph, algo), records in bench.group(doc["records"]).items():
            out += [f"## {graph}, {algo} (run {i})", "",
                    bench.describe(records).replace("\n  ", "; "), "",
                    bench.format_table(records, style="markdown"), ""]
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("json", nargs="+", help="files written by gbla bench --json")
    args = p.parse_args(argv)
    documents = []
    for path in args.json:
        with open(path) as f:
            documents.append(json.load(f))
    sys.stdout.write(render(documents, args.json))
    return 0


if __name__ == "__main__":
    sys.exit(main())
