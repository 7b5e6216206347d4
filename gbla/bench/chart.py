"""The chart of a benchmark: mean time per source of every method, as a PNG."""

from pathlib import PurePath

from .report import group


def label(graph):
    """A graph's name on the chart: a file's name without directories and extensions."""
    if ":" in graph and not PurePath(graph).suffix:  # rmat:22, dataset:power_grid
        return graph
    name = PurePath(graph).name
    for suffix in (".gz", ".mtx", ".txt", ".el", ".wel", ".gr", ".graph", ".npz"):
        name = name[: -len(suffix)] if name.endswith(suffix) else name
    return name


def plot(records, path, machine=None):
    """A PNG chart of the mean time per source of every method (grouped bars per graph and
    algorithm, log-scale ms) at ``path``, graphs labelled by file name (not path), the machine
    (``bench.machine_info()``) in the title. Needs matplotlib (``pip install gbla[plot]``)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("--plot needs matplotlib: pip install gbla[plot]") from None
    groups = group(records)
    names = []
    for r in records:
        if r["mean_ms"] is not None and r["method"] not in names:
            names.append(r["method"])
    width = 0.8 / max(len(names), 1)
    fig = Figure(
        figsize=(max(6.0, 1.2 + 1.1 * len(groups) * max(len(names), 1) ** 0.5), 4.5),
        layout="constrained",
    )
    ax = fig.subplots()
    # tab20: one distinct colour a method up to 20 (tab10 repeats after 10, and there are 12)
    from matplotlib import colormaps

    colors = colormaps["tab20"]
    for j, name in enumerate(names):
        xs, ys = [], []
        for g, rs in enumerate(groups.values()):
            r = next((r for r in rs if r["method"] == name and r["mean_ms"] is not None), None)
            if r is not None:
                xs.append(g - 0.4 + width * (j + 0.5))
                ys.append(r["mean_ms"])
        ax.bar(xs, ys, width, label=name, color=colors(j % 20))
    ax.set_yscale("log")
    ax.set_xticks(
        range(len(groups)),
        [f"{label(g)}\n{a}" for g, a in groups],
        rotation=30 if len(groups) > 4 else 0,
        ha="right" if len(groups) > 4 else "center",
    )
    ax.set_ylabel("mean ms per source (log scale)")
    title = "gbla bench: time per source, lower is better"
    if machine:
        where = machine.get("gpu") or f"{machine.get('cpu')} ({machine.get('cpu_count')} cores)"
        title += f"\n{where}; gbla {machine.get('gbla')}"
    ax.set_title(title, fontsize="medium")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.savefig(path, dpi=120)
    return path
