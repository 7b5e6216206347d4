"""The out-of-core strategies' traffic as a chart: for each (graph, algorithm) of a
benchmarks/bench_outofcore.py JSON, the host-to-device bytes of every strategy it ran over the
graph's bytes (zero-copy: the bytes its kernels read over the bus; managed: the pages it
prefetched and the bytes it read in place, not the evicted pages moved back, which the
table's D2H column shows), on a log scale, a bar per strategy in the order the JSON lists
them. Drawn beside the JSON under its name with .png, tools/benchmarks_md.py shows it with the
run.

    python tools/plot_outofcore.py benchmarks/results/outofcore_rmat24_h100.json \
        benchmarks/results/outofcore_rmat24_h100.png
"""

import argparse
import json

import numpy as np


def plot(doc, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = doc["results"]
    strategies = [r["strategy"] for r in results[0]["rows"]]
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(strategies)
    x = np.arange(len(results))
    for k, strategy in enumerate(strategies):
        ratios = []
        for r in results:
            row = next(row for row in r["rows"] if row["strategy"] == strategy)
            moved = row.get("h2d_bytes", 0) + row.get("zerocopy_bytes", 0)
            ratios.append(moved / r["graph_bytes"] if "error" not in row else np.nan)
        ax.bar(x + (k - (len(strategies) - 1) / 2) * width, ratios, width, label=strategy)
    ax.axhline(1.2, color="k", linestyle="--", linewidth=0.8, label="aim: 1.2x")
    ax.set_yscale("log")
    ax.set_xticks(x, [f"{r['graph'].split('/')[-1].split('.')[0]}\n{r['algo']}" for r in results])
    ax.set_ylabel("bytes over the bus / graph bytes")
    ax.set_title(
        f"Out of core at {results[0]['fraction']} of the graph's bytes "
        f"({doc['machine'].get('gpu', 'GPU')})",
        fontsize=10,
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("json")
    p.add_argument("png")
    args = p.parse_args(argv)
    with open(args.json) as f:
        plot(json.load(f), args.png)


if __name__ == "__main__":
    main()
