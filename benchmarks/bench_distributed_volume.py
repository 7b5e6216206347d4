"""What a distributed BFS and SSSP send, measured, and what that would cost on bigger machines,
on paper.

The volume is a property of the graph, the partition and the algorithm, not of the hardware, so
it is measured here on the CPU with ``gbla.distributed`` ranks as threads (the exchanges NCCL
would carry between GPUs): for R-MAT graphs (average degree 32, weights 1..255 for SSSP) and 1,
2, 4 and 8 ranks, the payload bytes every level sends (``stats["bytes"]``) and the collective
calls, for BFS and for SSSP as Bellman-Ford (the algebra's and push_sssp) and as
delta-stepping. The projection then prices
that volume on links whose bandwidth and latency are *assumptions* given on the command line
(defaults: NVLink 4 between the 8 H100s of one host, InfiniBand NDR between hosts), spread
evenly over the ranks: communication time = sum over levels of (bytes / ranks / bandwidth +
collectives x latency). It is a lower bound of the communication a run would wait for, not a
measurement.

Usage: python benchmarks/bench_distributed_volume.py [--scales 16 18 20] [--ranks 1 2 4 8]
       [--sources 2] [--algos bfs sssp sssp_delta sssp_push] [--json out.json]
"""

import argparse
import functools
import json
import platform
import time

import numpy as np

import gbla
from gbla import distributed as D

# (name, bytes/s each rank can send, seconds a collective costs): assumptions, not measured
LINKS = {
    "nvlink4_one_host": (300e9, 15e-6),  # ~450 GB/s a direction nominal; NCCL all-to-all less
    "ndr_between_hosts": (45e9, 30e-6),  # 400 Gb/s a GPU, less protocol overhead
}


def measure(S, algo, ranks, sources):
    """Per (ranks): levels, bytes_total, collectives (a rank's), seconds (CPU, threads)."""
    rows = []
    for size in ranks:
        for source in sources:

            def work(comm):
                A = D.DistMatrix.from_csr(
                    comm, S.indptr, S.indices, S.data if algo.startswith("sssp") else None
                )
                stats = {}
                SEARCHES[algo](A, int(source), stats=stats)
                return stats

            t0 = time.perf_counter()
            stats = D.run_threads(size, work)[0]
            rows.append(
                {
                    "ranks": size,
                    "source": int(source),
                    "levels": len(stats["bytes"]),
                    "bytes_total": stats["bytes_total"],
                    "bytes": stats["bytes"],
                    "collectives": int(sum(stats["collectives"])),
                    "directions": stats["directions"],
                    "cpu_seconds": time.perf_counter() - t0,
                }
            )
    return rows


# what each row's "algo" names: D.bfs, D.sssp's Bellman-Ford, its delta-stepping at the
# weights' default width, and D.push_sssp (Bellman-Ford, each remote vertex offered at most
# once a round and only below its last offer)
SEARCHES = {
    "bfs": D.bfs,
    "sssp": D.sssp,
    "sssp_delta": functools.partial(D.sssp, method="delta_stepping"),
    "sssp_push": D.push_sssp,
}


def graph(scale, k):
    """rmat(scale) of average degree 32, weights 1..255, as a SciPy CSR matrix, and k random
    sources with out-edges (seeded by the scale)."""
    A = gbla.generators.rmat(scale, 16, seed=scale, device="cpu", weights=(1, 255))
    S = A.to_scipy().tocsr()
    rng = np.random.default_rng(scale)
    return S, rng.choice(np.flatnonzero(np.diff(S.indptr)), k, replace=False)


def project(row, links=LINKS):
    """Communication seconds of one traversal on each assumed link, the volume spread evenly
    over the ranks."""
    out = {}
    for name, (bandwidth, latency) in links.items():  # one rank: no link, no wait
        calls = row["collectives"] if row["ranks"] > 1 else 0
        out[name] = sum(b / row["ranks"] / bandwidth for b in row["bytes"]) + calls * latency
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scales", type=int, nargs="+", default=[16, 18, 20])
    p.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4, 8])
    p.add_argument("--sources", type=int, default=2)
    p.add_argument("--algos", nargs="+", choices=sorted(SEARCHES), default=list(SEARCHES))
    p.add_argument("--json")
    args = p.parse_args(argv)
    results = []
    for scale in args.scales:
        S, sources = graph(scale, args.sources)
        undirected = S.nnz // 2
        for algo in args.algos:
            for row in measure(S, algo, args.ranks, sources):
                row.update(
                    scale=scale,
                    algo=algo,
                    vertices=S.shape[0],
                    undirected_edges=undirected,
                    bytes_per_edge=row["bytes_total"] / undirected,
                    comm_seconds=project(row),
                )
                results.append(row)
                print(
                    f"rmat({scale}) {algo:10s} {row['ranks']} ranks: {row['levels']:3d} levels "
                    f"{row['bytes_total'] / 2**20:10.1f} MiB sent "
                    f"({row['bytes_per_edge']:6.2f} B/edge), {row['collectives']:4d} "
                    f"collectives; comm >= "
                    + ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in row["comm_seconds"].items()),
                    flush=True,
                )
    if args.json:
        save(args.json, results)


def save(path, rows, **more):
    """The rows as JSON with the machine and the links they were priced on (``more``: further
    top-level keys, such as a schema)."""
    with open(path, "w") as f:
        json.dump(
            {
                **more,
                "machine": {
                    "python": platform.python_version(),
                    "gbla": gbla.__version__,
                    "numpy": np.__version__,
                },
                "links_assumed": {
                    k: {"bytes_per_s": b, "latency_s": lat} for k, (b, lat) in LINKS.items()
                },
                "rows": rows,
            },
            f,
            indent=1,
        )


if __name__ == "__main__":
    main()
