"""The asynchronous delta-stepping kernel against the bulk-synchronous SSSP kernels, in the shape
of the ADDS article's tables: per graph, the median ms per source and the edges relaxed per
stored edge (work efficiency) of each method, and its ablation: asynchrony alone
(``async_fifo``: one FIFO worklist), with the bucketed worklist (``async_delta_stepping_fixed``)
and with the dynamic width (``async_delta_stepping``), beside near-far, the bulk-synchronous
work-efficient method the article measures against. ``--tune`` also runs the kernel under
other plans (blocks an SM, ids a warp takes, width as a multiple of delta, buckets, ids a block
keeps for itself); ``--plan k=v,k=v`` runs the kernel under a plan of one's own (repeatable).

Every method's distances are checked against SciPy's Dijkstra on the first source and against
the first method on every source. Timing: CUDA events around each whole call (the
predecessors not asked for), after one untimed call, the same sources for every method.

Usage: python benchmarks/bench_sssp_async.py GRAPH [GRAPH ...] [--sources 8]
       [--weights 1 255] [--methods a,b] [--tune] [--plan local=64,scale=0.5]
       [--json out.json]
GRAPH as ``gbla bench`` takes it (a file, rmat:22, grid:1200x1200 ...).
"""

import argparse
import json
import platform
import shlex
import statistics
import sys

import numpy as np
from scipy.sparse import csgraph

import gbla
from gbla.algorithms.sssp import _weights as sssp_weights_of
from gbla.algorithms.sssp import default_delta
from gbla.bench import graphs
from gbla.kernels import _sssp

SCHEMA = "gbla-sssp-async/1"  # what tools/benchmarks_md.py renders
METHODS = [
    "near_far",
    "persistent_delta_stepping",
    "persistent_bellman_ford",
    "edge_bellman_ford",
    "async_fifo",
    "async_delta_stepping_fixed",
    "async_delta_stepping",
]
# plans tried with --tune: each changes one thing from the registered default
TUNE = [
    dict(buckets=4),
    dict(buckets=16),
    dict(take=128),
    dict(blocks_per_sm=1),
    dict(scale=0.25),
    dict(scale=4.0),
    dict(local=0),
    dict(local=32),
    dict(keep_below=2),
    dict(precheck=True),
    dict(hold=True),
    dict(hold=True, dynamic=False, scale=8.0),
]


def _timed(cp, call):
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    cp.cuda.Device().synchronize()
    start.record()
    out = call()
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop), out


def measure(cp, A, warmup, sources, call):
    """Times and stats of ``call(source, stats)`` on every source after one untimed call."""
    call(warmup, {})
    rows = []
    for s in sources:
        stats = {}
        ms, dist = _timed(cp, lambda: call(s, stats))
        rows.append((ms, cp.asnumpy(dist), stats))
    return rows


def summarize(graph, label, rows, nnz, reference, expected):
    times = [r[0] for r in rows]
    ok = np.allclose(rows[0][1], expected, rtol=1e-9, atol=0)
    ok = ok and all(np.allclose(r[1], ref, rtol=1e-9, atol=0) for r, ref in zip(rows, reference))
    relaxed = [r[2].get("edges_relaxed") for r in rows]
    per_edge = [x / nnz for x in relaxed if x is not None]
    out = dict(
        graph=graph,
        method=label,
        median_ms=statistics.median(times),
        times_ms=times,
        relaxed_per_edge=statistics.median(per_edge) if per_edge else None,
        relaxed_per_edge_each=per_edge,
        check="ok" if ok else "MISMATCH",
        stats=[{k: v for k, v in r[2].items() if isinstance(v, (int, float, str))} for r in rows],
    )
    work = f"{out['relaxed_per_edge']:6.2f}" if per_edge else "     -"
    print(
        f"{graph:28s} {label:44s} {out['median_ms']:9.3f} ms  relaxed/edge {work}  {out['check']}",
        flush=True,
    )
    return out


def parse_plan(text):
    """``"local=64,scale=0.5"`` as the changes to AsyncPlan's defaults it names, each value
    of its field's type."""
    fields = _sssp.AsyncPlan._field_defaults
    change = {}
    for item in text.split(","):
        name, _, value = item.partition("=")
        if name not in fields:
            raise SystemExit(f"--plan: {name!r} is not one of {', '.join(fields)}")
        kind = type(fields[name])
        change[name] = value.lower() in ("1", "true") if kind is bool else kind(value)
    return change


def run_graph(cp, spec, n_sources, weights, methods, plans):
    A = graphs.load_graph(spec, device="gpu")
    W, _ = graphs.sssp_weights(A, weights)
    warmup, sources = graphs.pick_sources(W, n_sources)
    S = W.to_scipy()
    expected = csgraph.dijkstra(S, indices=sources[0])
    name = spec.split("/")[-1]
    results, reference = [], None
    for method in methods:
        rows = measure(
            cp, W, warmup, sources, lambda s, st, m=method: gbla.sssp(W, s, method=m, stats=st)
        )
        if reference is None:
            reference = [r[1] for r in rows]
        results.append(summarize(name, method, rows, W.nvals, reference, expected))
    if plans:
        G, dtype, _ = sssp_weights_of(W)
        delta = default_delta(G)
        for change in plans:
            plan = _sssp.AsyncPlan()._replace(**change)
            rows = measure(
                cp,
                G,
                warmup,
                sources,
                lambda s, st, p=plan: _sssp.async_delta_stepping(G, s, dtype, delta, p, st),
            )
            label = "async " + " ".join(f"{k}={v}" for k, v in change.items())
            results.append(summarize(name, label, rows, W.nvals, reference, expected))
    info = graphs.graph_info(W)
    for r in results:
        r["graph_info"] = info
    A = W = None  # their memory freed below (not del: the timed closures use them)
    cp.get_default_memory_pool().free_all_blocks()
    return results


def main():
    import cupy as cp

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("graphs", nargs="+")
    p.add_argument("--sources", type=int, default=8)
    p.add_argument(
        "--weights",
        type=int,
        nargs=2,
        default=(1, 255),
        help="integer weights drawn for a graph without its own (default 1 255)",
    )
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--tune", action="store_true", help="also run the kernel's other plans")
    p.add_argument(
        "--plan",
        action="append",
        default=[],
        help="also run the kernel under this plan: AsyncPlan's fields changed, k=v,k=v",
    )
    p.add_argument("--json")
    args = p.parse_args()
    plans = (TUNE if args.tune else []) + [parse_plan(text) for text in args.plan]
    rows = []
    for spec in args.graphs:
        rows += run_graph(
            cp, spec, args.sources, tuple(args.weights), args.methods.split(","), plans
        )
    props = cp.cuda.runtime.getDeviceProperties(0)
    machine = {
        "gpu": props["name"].decode(),
        "cupy": cp.__version__,
        "python": platform.python_version(),
        "gbla": gbla.__version__,
    }
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "schema": SCHEMA,
                    "command": shlex.join(["python"] + sys.argv),
                    "machine": machine,
                    "weights": args.weights,
                    "rows": rows,
                },
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()
