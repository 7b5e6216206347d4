"""The out-of-core strategies' traffic and time as a chart: for each (graph, algorithm) of a
benchmarks/bench_outofcore.py JSON, the host-to-device bytes of every strategy it ran over the
graph's bytes (zero-copy: the bytes its kernels read over the bus; managed: the pages it
prefetched and the bytes it read in place, not the evicted pages moved back, which the
table's D2H column shows), beside them its time over the bus bound for those bytes, and its
time over the in-memory search's (the graph on the GPU), on log scales, a bar per strategy in
the order the JSON lists them, with issue 40's aims. Drawn
beside the JSON under its name with .png, tools/benchmarks_md.py shows it with the run.

    python tools/plot_outofcore.py benchmarks/results/outofcore_rmat24_h100.json \
        benchmarks/results/outofcore_rmat24_h100.png
"""

import argparse
import json

import numpy as np

# issue 40's aims at half the graph: bytes over the bus / the graph's (SSSP), and time over the
# bus bound for those bytes (BFS: on Kronecker graphs; a road network's BFS is aimed at 3x the
# in-memory search instead, its levels bounding it more than the bus)
AIMS = {"bytes": {"sssp": 1.5}, "bus": {"bfs": 2.0, "sssp": 3.0}, "memory": {"bfs": 3.0}}


# the labelled values of the log axes: a short axis (1.5 only under 8x), a long one (past 100x)
TICKS = [0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000]
LONG_TICKS = [0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000, 3000, 10000]


def aim(key, result):
    """Issue 40's aim for panel ``key`` of ``result`` (a graph and algorithm of the JSON), or
    None where the panel has none (tools/benchmarks_md.py's table reads them here too)."""
    road_bfs = result["algo"] == "bfs" and not result["graph"].startswith("rmat")
    if key == "bus" and road_bfs or key == "memory" and not road_bfs:
        return None
    return AIMS[key].get(result["algo"])


def plot(doc, path):
    """Draw ``doc`` (a bench_outofcore.py JSON) into ``path``; the figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FormatStrFormatter, NullFormatter

    results = doc["results"]
    strategies = [r["strategy"] for r in results[0]["rows"]]
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    width = 0.8 / len(strategies)
    x = np.arange(len(results))
    labels = [f"{r['graph'].split('/')[-1].split('.')[0]}\n{r['algo']}" for r in results]
    panels = (
        ("bytes", "bytes over the bus / graph bytes", _moved),
        ("bus", "time / the bus bound for those bytes", lambda r, row: row["ratio_to_bound"]),
        ("memory", "time / the in-memory search", lambda r, row: row["ms"] / r["in_memory_ms"]),
    )
    for ax, (key, ylabel, value) in zip(axes, panels):
        for k, strategy in enumerate(strategies):
            ys = []
            for r in results:
                row = next(row for row in r["rows"] if row["strategy"] == strategy)
                ys.append(np.nan if "error" in row else value(r, row))
            ax.bar(x + (k - (len(strategies) - 1) / 2) * width, ys, width, label=strategy)
        aimed = False
        for i, r in enumerate(results):
            bound = aim(key, r)
            if bound is not None:
                ax.hlines(
                    bound,
                    i - 0.45,
                    i + 0.45,
                    colors="k",
                    linestyles="--",
                    linewidth=1,
                    label=None if aimed else "aim (issue 40)",
                )
                aimed = True
        ax.set_yscale("log")
        # 1 (the graph once, the bound, the in-memory time) shown, and every aim
        low, high = ax.get_ylim()
        aims = [a for a in (aim(key, r) for r in results) if a is not None]
        ax.set_ylim(min(low, 0.9), max([high] + [1.15 * a for a in aims]))
        low, high = ax.get_ylim()
        ticks = LONG_TICKS if high / low > 100 else TICKS
        wide = high / low > 8
        ax.set_yticks([t for t in ticks if low <= t <= high and not (wide and t == 1.5)])
        ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xticks(x, labels)
        ax.set_ylabel(ylabel)
    legend = {}
    for ax in axes:  # the aim may be drawn on one panel only
        for handle, name in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(name, handle)
    handles, names = list(legend.values()), list(legend)
    fig.legend(handles, names, loc="lower center", ncol=len(names), fontsize=8, frameon=False)
    fig.suptitle(
        f"Out of core at {results[0]['fraction']} of the graph's bytes "
        f"({doc['machine'].get('gpu', 'GPU')}; lower is better)",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=120)
    return fig


def _moved(r, row):
    return (row.get("h2d_bytes", 0) + row.get("zerocopy_bytes", 0)) / r["graph_bytes"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("json")
    p.add_argument("png")
    args = p.parse_args(argv)
    with open(args.json) as f:
        plot(json.load(f), args.png)


if __name__ == "__main__":
    main()
