"""Times one push and one pull ``vxm(any_pair)`` on rmat(scale) for frontiers of given fractions
of the vertices, on the GPU, with CUDA events after warm-up (median of repeats).

Also reports the copy bandwidth measured on the same GPU and, for each run, a lower bound on
the bytes the kernel must move, so the time can be read against the memory system:
  push: the frontier (8 B/entry), its offsets and row pointers (24 B/entry), the column
        indices of its edges (4 B/edge), one output flag and value per edge (2 B/edge);
  pull: row pointers (8 B/vertex), outputs (2 B/vertex), and at least one in-edge index and
        one frontier flag per vertex with an edge (5 B).
Usage: python benchmarks/bench_mxv.py [--scale 22] [--fractions 0.01 0.3] [--json out.json]
"""

import argparse
import json
import time

import numpy as np

import gbla


def copy_bandwidth(cp, nbytes=2 << 30, repeats=10):
    a = cp.ones(nbytes // 4, dtype=cp.float32)
    b = cp.empty_like(a)
    for _ in range(3):
        cp.copyto(b, a)
    times = []
    for _ in range(repeats):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        cp.copyto(b, a)
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
    return 2 * nbytes / np.median(times) / 1e9  # read + write


def time_call(cp, fn, warmup=3, repeats=15):
    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return float(np.median(times)), float(np.min(times)), float(np.max(times))


def main():
    import cupy as cp

    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, default=22)
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.01, 0.3])
    parser.add_argument("--json")
    args = parser.parse_args()

    props = cp.cuda.runtime.getDeviceProperties(0)
    bw = copy_bandwidth(cp)
    t0 = time.perf_counter()
    A = gbla.generators.rmat(args.scale, device="gpu")
    cp.cuda.Device().synchronize()
    gen_s = time.perf_counter() - t0
    n, nnz = A.nrows, A.nvals
    deg = A._degrees()
    print(f"device: {props['name'].decode()}, copy bandwidth {bw:.0f} GB/s")
    print(
        f"rmat({args.scale}): n={n} nnz={nnz} (stored, both directions) generated in {gen_s:.2f} s"
    )
    rows = []
    rng = np.random.default_rng(0)
    for frac in args.fractions:
        nf = max(1, int(round(frac * n)))
        idx = np.sort(rng.choice(n, nf, replace=False))
        u = gbla.Vector.from_coo(cp.asarray(idx), True, n, device="gpu")
        frontier_edges = int(deg[cp.asarray(idx)].sum())
        results = {}
        for direction in ("push", "pull"):
            w = gbla.vxm(u, A, "any_pair", direction=direction)
            results[direction] = w
            med, lo, hi = time_call(cp, lambda: gbla.vxm(u, A, "any_pair", direction=direction))
            if direction == "push":
                nbytes = 32 * nf + 6 * frontier_edges
            else:
                nbytes = 15 * n
            rows.append(
                dict(
                    scale=args.scale,
                    fraction=frac,
                    frontier=nf,
                    frontier_edges=frontier_edges,
                    direction=direction,
                    ms=med,
                    ms_min=lo,
                    ms_max=hi,
                    min_bytes=nbytes,
                    gbps_of_min_bytes=nbytes / (med / 1e3) / 1e9,
                    device=props["name"].decode(),
                    copy_gbps=bw,
                )
            )
        same = results["push"].isequal(results["pull"])
        print(
            f"frontier {frac:.0%} ({nf} vertices, {frontier_edges} edges): push and pull "
            f"results equal: {same}"
        )
        assert same, "push and pull disagree"
    print(
        f"\n{'frontier':>9} {'direction':>9} {'ms (median)':>12} {'min..max':>16} "
        f"{'min bytes':>11} {'GB/s':>7} {'% of copy':>9}"
    )
    for r in rows:
        print(
            f"{r['fraction']:>9.0%} {r['direction']:>9} {r['ms']:>12.3f} "
            f"{r['ms_min']:>7.3f}..{r['ms_max']:<7.3f} {r['min_bytes'] / 1e6:>9.1f}MB "
            f"{r['gbps_of_min_bytes']:>7.0f} {100 * r['gbps_of_min_bytes'] / bw:>8.1f}%"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(rows=rows, n=n, nnz=nnz, copy_gbps=bw), f, indent=1)


if __name__ == "__main__":
    main()
