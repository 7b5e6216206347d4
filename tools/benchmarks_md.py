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
    png = path[:-len(".json")] + ".png" if path.endswith(".json") else None
    if png and os.path.exists(png):
        out += ["", f"![edge_bellman_ford ablation]({png})"]
    return out + [""]


def _distributed(doc, i):
    """A benchmarks/bench_distributed.py run: each search's time, GTEPS, levels and traffic."""
    out = [f"## rmat({doc['scale']}) over {doc['ranks']} rank(s) on the {doc['device'].upper()} "
           f"(run {i})", "",
           f"{doc['undirected_edges']:,} undirected edges; the build (generation of each "
           f"rank's part and DistMatrix.from_edges) took {doc['build_seconds']:.1f} s. Bytes: "
           "payload every rank together sent in the search.", "",
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
                "`dict(nx.all_pairs_shortest_path_length(G))` on "
                f"`nx.gnm_random_graph({p['n']}, {p['edges']}, seed={p['seed']})` "
                f"({p['entries']:,} entries), networkx {p['networkx']}: plain networkx "
                f"{p['networkx_s']:.3g} s, `backend=\"gbla\"` {p['gbla_s']:.3g} s on the "
                f"{p['device'].upper()} (conversion included), **{p['speedup']:.1f}x**; the "
                f"dicts {'equal' if p['check'] == 'ok' else 'DIFFER'}.", ""]
    return out


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
        if "ranks" in doc:  # benchmarks/bench_distributed.py
            out += [f"{i}. `python -m gbla.distributed.launch -n {doc['ranks']} "
                    f"benchmarks/bench_distributed.py --scale {doc['scale']}` ({doc['device']})",
                    "", f"   {doc.get('machine', 'see the README')}; Python {doc['python']}; "
                    f"gbla {doc['gbla']}", ""]
            continue
        if "rows" in doc:  # benchmarks/bench_sssp_ablation.py
            m = doc["machine"]
            out += [f"{i}. `python benchmarks/bench_sssp_ablation.py` ({doc.get('runs', '')})",
                    "", f"   {m['gpu']}, CuPy {m['cupy']}, Python {m['python']}; gbla "
                    f"{m['gbla']}", ""]
            continue
        out += [f"{i}. `{doc['command']}` ({doc['created']})", "",
                f"   {_machine(doc['machine'])}", ""]
    for i, doc in enumerate(documents, 1):
        if doc.get("schema") == MULTISOURCE:
            out += _multisource(doc, i)
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
