"""What a row cut (1D, gbla.distributed's) and a checkerboard (2D) of the same graph send, level
by level, for the same searches: the volume that decides which partition scales (issue 37).

The volume is a property of the graph, the partition and the frontiers, not of the hardware, so
it is counted here on the CPU from the real frontiers of each search (BFS levels; the rounds of
Bellman-Ford, the vertices whose distance fell), for every push a level makes, with each
sender combining what it sends per target, as gbla.distributed's products do:

- 1D, p ranks (rank of vertex x: its block of n/p): the owner of u relaxes u's out-edges and
  sends each target v it does not own, once per (sender, v).
- 2D, an r x c grid (p = r c; Buluc and Madduri, SC'11): edge u -> v is kept by rank
  (row block of v, column block of u); the vertex x is owned by one rank of its row block's
  processor row (the x's c-th part of it). Expand: each frontier vertex goes to the r ranks of
  its column block's processor column (but its owner, when it is one of them); fold: each rank
  sends each target v it found to v's owner, once per (rank, v).

An entry is 4 bytes for BFS (a vertex id) and 12 for SSSP (an id and a float64 distance).
Bitmap frontiers (gbla.distributed.bitmap_bfs) need no count: a 1D level moves n / 8 bytes
in and out of each rank (x (p - 1) / p), a 2D one n / 8 x ((r - 1) / r / c + (c - 1) / c / r).
The seconds price the busiest rank's bytes of each level on assumed links, with the latency of
each collective (1D: one all-to-all a level; 2D: an all-gather and an all-to-all; both: the one
sum that ends a level): a lower bound of the communication, not a measurement.

Usage: python benchmarks/bench_partition_volume.py [--scales 18 20] [--ranks 4 8 16]
       [--sources 4] [--algos bfs sssp] [--json out.json]
"""

import argparse

import numpy as np
from bench_distributed_volume import LINKS, graph, save  # the same graphs, links and file

import gbla

SCHEMA = "gbla-partition-volume/1"
ENTRY = {"bfs": 4, "sssp": 12}


def bfs_frontiers(S, source):
    """The frontier of each level of a BFS from ``source`` (each expands once)."""
    levels = np.asarray(gbla.bfs(S, int(source)))
    return [np.flatnonzero(levels == d) for d in range(int(levels.max()) + 1)]


def _edges(S, frontier):
    """(u, v) of every out-edge of the frontier's vertices."""
    counts = np.diff(S.indptr)[frontier]
    u = np.repeat(frontier, counts)
    starts = np.repeat(S.indptr[frontier] - np.cumsum(counts) + counts, counts)
    return u, S.indices[np.arange(counts.sum()) + starts].astype(np.int64)


def bellman_ford_frontiers(S, source):
    """The frontier of each round of a Bellman-Ford from ``source``: the vertices whose
    distance fell in the round before."""
    n = S.shape[0]
    dist = np.full(n, np.inf)
    dist[source] = 0.0
    frontier, out = np.array([source]), []
    while len(frontier):
        out.append(frontier)
        u, v = _edges(S, frontier)
        counts = np.diff(S.indptr)[frontier]
        starts = np.repeat(S.indptr[frontier] - np.cumsum(counts) + counts, counts)
        w = S.data[np.arange(counts.sum()) + starts]
        best = np.full(n, np.inf)
        np.minimum.at(best, v, dist[u] + w)
        frontier = np.flatnonzero(best < dist)
        dist[frontier] = best[frontier]
    return out


def _block(x, n, parts):
    """Each id's block of ``parts`` nearly equal blocks of [0, n)."""
    return x * parts // n


def volume_1d(S, frontier, p):
    """(entries every rank together sends, the busiest rank's) for one push of ``frontier``."""
    n = S.shape[0]
    u, v = _edges(S, frontier)
    su, sv = _block(u, n, p), _block(v, n, p)
    remote = su != sv
    pairs = np.unique(su[remote] * n + v[remote])
    per_rank = np.bincount(pairs // n, minlength=p)
    return int(per_rank.sum()), int(per_rank.max(initial=0))


def volume_2d(S, frontier, r, c):
    """(entries every rank together sends, the busiest rank's) for one push of ``frontier`` on
    an r x c grid: the expand and the fold."""
    n = S.shape[0]
    p = r * c
    owner = _block(np.arange(n), n, p)  # rank i * c + k: row block i, its k-th part
    owner_col = owner % c
    # expand: u to the r ranks (i', col block of u), its owner (if there) excepted; the owner
    # sends
    j_f = _block(frontier, n, c)
    local = owner_col[frontier] == j_f
    sent = np.bincount(owner[frontier], weights=r - local.astype(np.int64), minlength=p)
    # fold: rank (row block of v, col block of u) sends v to v's owner, once per (rank, v)
    u, v = _edges(S, frontier)
    i_v, j_u = _block(v, n, r), _block(u, n, c)
    holder = i_v * c + j_u
    remote = holder != owner[v]
    pairs = np.unique(holder[remote] * n + v[remote])
    sent += np.bincount(pairs // n, minlength=p)
    return int(sent.sum()), int(sent.max(initial=0))


def grids(p):
    """The r x c grids of p ranks with 1 < r <= c (2D), most square first."""
    return sorted(
        ((r, p // r) for r in range(2, p + 1) if p % r == 0 and r <= p // r),
        key=lambda g: g[1] - g[0],
    )


def measure(S, algo, source, ranks):
    """One search's rows: for each p, 1D and the most square 2D grid."""
    frontiers = bfs_frontiers(S, source) if algo == "bfs" else bellman_ford_frontiers(S, source)
    n, size = S.shape[0], ENTRY[algo]
    rows = []
    for p in ranks:
        layouts = [("1d", p, 1)] + [("2d", r, c) for r, c in grids(p)[:1]]
        for layout, r, c in layouts:
            per_level = [
                volume_1d(S, f, p) if layout == "1d" else volume_2d(S, f, r, c) for f in frontiers
            ]
            calls = 2 if layout == "1d" else 3  # + the sum that ends the level
            bitmap = n / 8 * ((p - 1) / p if layout == "1d" else (r - 1) / r / c + (c - 1) / c / r)
            rows.append(
                {
                    "algo": algo,
                    "source": int(source),
                    "ranks": p,
                    "layout": layout,
                    "grid": [r, c],
                    "levels": len(frontiers),
                    "frontier": [len(f) for f in frontiers],
                    "bytes": [size * total for total, _ in per_level],
                    "bytes_max_rank": [size * busiest for _, busiest in per_level],
                    "bytes_total": size * sum(t for t, _ in per_level),
                    "bitmap_bytes_per_rank_level": bitmap,
                    "comm_seconds": {
                        name: sum(size * b / bw + calls * lat for _, b in per_level)
                        for name, (bw, lat) in LINKS.items()
                    },
                }
            )
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scales", type=int, nargs="+", default=[18, 20])
    p.add_argument("--ranks", type=int, nargs="+", default=[4, 8, 16])
    p.add_argument("--sources", type=int, default=4)
    p.add_argument("--algos", nargs="+", choices=["bfs", "sssp"], default=["bfs", "sssp"])
    p.add_argument("--json")
    args = p.parse_args()
    rows = []
    for scale in args.scales:
        S, sources = graph(scale, args.sources)
        for algo in args.algos:
            for source in sources:
                for row in measure(S, algo, source, args.ranks):
                    row.update(scale=scale, vertices=S.shape[0], undirected_edges=S.nnz // 2)
                    rows.append(row)
            for q in args.ranks:
                mine = [r for r in rows if (r["scale"], r["algo"], r["ranks"]) == (scale, algo, q)]
                for layout in ("1d", "2d"):
                    rs = [r for r in mine if r["layout"] == layout]
                    if not rs:
                        continue
                    per_edge = np.median([r["bytes_total"] / r["undirected_edges"] for r in rs])
                    nv = np.median([r["comm_seconds"]["nvlink4_one_host"] for r in rs]) * 1e3
                    ib = np.median([r["comm_seconds"]["ndr_between_hosts"] for r in rs]) * 1e3
                    r0, c0 = rs[0]["grid"]
                    shape = "1D" if layout == "1d" else f"2D {r0}x{c0}"
                    print(
                        f"rmat({scale}) {algo:4s} p={q:2d} {shape:7s}: "
                        f"{per_edge:6.2f} B/edge, comm >= {nv:6.2f} ms NVLink, {ib:6.2f} ms NDR",
                        flush=True,
                    )
    if args.json:
        save(args.json, rows, schema=SCHEMA)


if __name__ == "__main__":
    main()
