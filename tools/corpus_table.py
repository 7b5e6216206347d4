"""The README's "every graph of the data set against SciPy" table, from the JSON of
``bash tools/device_run.sh corpus bfs`` and ``corpus sssp`` (``gbla bench --json``):

    python tools/corpus_table.py corpus_bfs.json corpus_sssp.json

A row a graph (in the BFS run's order): its vertices, the levels its sources reached, the
algebra's median ms, the fastest hand-written kernel's and SciPy's, for BFS and, where the
SSSP run has the graph, for SSSP (the algebra: ``bellman_ford``). Bold: the algebra beats
SciPy. A method whose results failed the check never counts as the fastest. The last lines
count the graphs where each side beats SciPy.
"""

import argparse
import json
import sys

ALGEBRA = {"bfs": "algebraic", "sssp": "bellman_ford"}
SUFFIXES = (".mtx.gz", ".graph.gz", ".txt.gz", ".mtx", ".graph", ".txt", ".gr")


def _runs(path):
    """{graph: {method: record}} of one document, records whose check passed, in file order."""
    with open(path) as f:
        doc = json.load(f)
    out = {}
    for r in doc["records"]:
        if r.get("status") == "ok" and r.get("check") == "ok":
            out.setdefault(r["graph"], {})[r["method"]] = r
    return out


def _name(graph):
    name = graph.rsplit("/", 1)[-1]
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _ms(value):
    return f"{value:.3g}"


def _cells(records, algo, wins):
    """The algebra's, the fastest kernel's and SciPy's cells of one algorithm; counts its wins
    into ``wins`` (algebra, kernels)."""
    if records is None or "scipy" not in records or ALGEBRA[algo] not in records:
        return ["-", "-", "-"]
    scipy = records["scipy"]["median_ms"]
    algebra = records[ALGEBRA[algo]]["median_ms"]
    kernels = {m: r["median_ms"] for m, r in records.items() if r.get("kind") == "kernel"}
    cells = [f"**{_ms(algebra)}**" if algebra < scipy else _ms(algebra)]
    wins[0] += algebra < scipy
    if kernels:
        best = min(kernels, key=kernels.get)
        cells.append(f"{_ms(kernels[best])} `{best}`")
        wins[1] += kernels[best] < scipy
    else:
        cells.append("-")
    return cells + [_ms(scipy)]


def table(bfs, sssp):
    """The table's lines and the summary's, from the two documents' {graph: {method: record}}."""
    lines = [
        "| graph | n | BFS levels | BFS algebraic | best BFS kernel | SciPy BFS | "
        "Bellman-Ford (algebra) | best SSSP kernel | SciPy Dijkstra |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    wins = {"bfs": [0, 0], "sssp": [0, 0]}
    for graph, records in bfs.items():
        first = records.get(ALGEBRA["bfs"]) or next(iter(records.values()))
        levels = first.get("counts") or []
        span = f"{min(levels)}-{max(levels)}" if levels else "-"
        row = [_name(graph), f"{first['graph_info']['n']:,}", span]
        row += _cells(records, "bfs", wins["bfs"]) + _cells(sssp.get(graph), "sssp", wins["sssp"])
        lines.append("| " + " | ".join(row) + " |")
    counts = {"bfs": len(bfs), "sssp": sum(graph in sssp for graph in bfs)}
    summary = [
        f"{algo.upper()}: the algebra beats SciPy on {w[0]} of {counts[algo]} graphs, "
        f"the kernels on {w[1]}"
        for algo, w in wins.items()
    ]
    return lines, summary


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bfs", help="JSON of the BFS corpus run")
    parser.add_argument("sssp", help="JSON of the SSSP corpus run")
    args = parser.parse_args(argv)
    lines, summary = table(_runs(args.bfs), _runs(args.sssp))
    print("\n".join(lines + [""] + summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
