"""BFS and SSSP time per source, gbla against SciPy on the same graph and the same sources: the
former ad-hoc benchmark, now a thin wrapper over ``gbla bench`` (gbla/bench.py).

    python benchmarks/bench_algorithms.py GRAPH --algo bfs|sssp [--sources 16]
        [--scipy-sources K] [--weights LO HI] [--device gpu] [--json out.json]

runs ``gbla bench GRAPH --algo ALGO --sources N --peer-libs scipy [--peer-sources K] ...``:
every registered method of ALGO and SciPy (csgraph breadth_first_order / dijkstra, on the first K
sources), each result checked against the first method's. GRAPH is any gbla GRAPH (a file,
``rmat:SCALE``, ``grid:RxC``, ...). The exit status is nonzero on a mismatch.
"""

import argparse
import sys

from gbla import cli


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("graph")
    p.add_argument("--algo", choices=["bfs", "sssp"], default="bfs")
    p.add_argument("--sources", type=int, default=16)
    p.add_argument("--scipy-sources", type=int, default=None)
    p.add_argument("--weights", type=int, nargs=2, default=(1, 255))
    p.add_argument("--device", choices=["cpu", "gpu"], default=None)
    p.add_argument("--json")
    args = p.parse_args(argv)
    bench_argv = [args.graph, "--algo", args.algo, "--sources", str(args.sources),
                  "--peer-libs", "scipy", "--weights", *map(str, args.weights), "--no-progress"]
    if args.scipy_sources is not None:
        bench_argv += ["--peer-sources", str(args.scipy_sources)]
    if args.device:
        bench_argv += ["--device", args.device]
    if args.json:
        bench_argv += ["--json", args.json]
    return cli.main(["bench", *bench_argv])


if __name__ == "__main__":
    sys.exit(main())
