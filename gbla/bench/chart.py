"""The chart of a benchmark: mean time per source of every method, as a PNG."""

from .report import group


def plot(records, path):
    """A PNG chart of the mean time per source of every method (grouped bars per graph and
    algorithm, log-scale ms) at ``path``. Needs matplotlib (``pip install gbla[plot]``)."""
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
    fig = Figure(figsize=(max(6.0, 1.2 + 1.1 * len(groups) * max(len(names), 1) ** 0.5), 4.5),
                 layout="constrained")
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
    ax.set_xticks(range(len(groups)), [f"{g}\n{a}" for g, a in groups])
    ax.set_ylabel("mean ms per source (log scale)")
    ax.set_title("gbla bench: time per source, lower is better")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.savefig(path, dpi=120)
    return path
