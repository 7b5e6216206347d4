"""gbla.io.read against SciPy's own path to the same CSR matrix, on the road and social Matrix
Market graphs of ../shared/data (issue 38's aim: gbla.io.read no slower than 1.1x SciPy's
path on USA-road-NE).

    python benchmarks/bench_readers.py   # writes benchmarks/results/readers_road_social_cpu.json
    python benchmarks/bench_readers.py --graphs road/USA-road-NY.mtx.gz --repeats 3 --json -

Per graph, three cases, each timed as a whole call (wall clock, the file read from the page
cache: every reader reads each file once untimed first), median of --repeats; gbla's and
SciPy's calls alternate, the first of a pair switching every repeat, so that a machine's load
falls on both alike:

- 'as stored': ``gbla.io.read(path)`` against ``scipy.io.mmread(path).tocsr()`` (mmread
  expands a symmetric file's mirror, as gbla does).
- 'undirected': ``gbla.io.read(path, directed=False)`` against the same plus ``S + S.T``.
- 'npz': the graph saved by ``scipy.sparse.save_npz`` (uncompressed), ``gbla.io.read`` of that
  file against ``scipy.sparse.load_npz``.

Each case checks gbla's matrix against SciPy's: the same structure (and values, where the
file has any).
"""

import argparse
import datetime
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

import gbla
from gbla import bench

SCHEMA = "gbla-readers/1"
ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("GBLA_DATA", ROOT.parent / "shared" / "data"))
GRAPHS = [
    "road/USA-road-NY.mtx.gz",
    "road/USA-road-BAY.mtx.gz",
    "road/USA-road-COL.mtx.gz",
    "road/USA-road-FLA.mtx.gz",
    "road/USA-road-NW.mtx.gz",
    "road/USA-road-NE.mtx.gz",
    "social/email-Enron.mtx.gz",
    "social/cit-HepPh.mtx.gz",
    "social/soc-Slashdot0902.directed.mtx.gz",
    "social/ego-Twitter.undirected.mtx.gz",
    "social/web-Stanford.relabeled.mtx.gz",
]
AIM = ("road/USA-road-NE.mtx.gz", "as stored", 1.1)  # graph, case, the largest ratio allowed


def _scipy_as_stored(path):
    return scipy.io.mmread(path, spmatrix=False).tocsr()


def _scipy_undirected(path):
    S = _scipy_as_stored(path)
    return (S + S.T).tocsr()


def _same(A, S, values):
    """Whether gbla's A holds S's structure (and values): S sums a repeated entry where gbla
    keeps the smallest, so values are compared only where the file has no repeats."""
    T = A.to_scipy()
    S = sp.csr_array(S)
    S.sort_indices()
    same = (
        T.shape == S.shape
        and np.array_equal(T.indptr, S.indptr)
        and np.array_equal(T.indices, S.indices)
    )
    return same and (
        not values or np.array_equal(T.data.astype(np.float64), S.data.astype(np.float64))
    )


def _pair(ours, theirs, repeats):
    """Median seconds of gbla's and SciPy's call, alternated; and their last results."""
    ours_s, theirs_s = [], []
    A = S = None
    for k in range(repeats):
        order = ((ours, ours_s), (theirs, theirs_s))
        for fn, into in order if k % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            result = fn()
            into.append(time.perf_counter() - start)
            if fn is ours:
                A = result
            else:
                S = result
    return ours_s, theirs_s, A, S


def _row(graph, case, ours, theirs, repeats, values):
    ours(), theirs()  # untimed: the file into the page cache, imports and first-call costs
    ours_s, theirs_s, A, S = _pair(ours, theirs, repeats)
    g, s = statistics.median(ours_s), statistics.median(theirs_s)
    row = dict(
        graph=graph,
        case=case,
        n=A.nrows,
        nvals=A.nvals,
        gbla_s=g,
        scipy_s=s,
        ratio=g / s,
        gbla_all=ours_s,
        scipy_all=theirs_s,
        check="ok" if _same(A, S, values) else "DIFFERS",
    )
    print(
        f"{graph:42s} {case:10s} gbla {g:7.3f} s  scipy {s:7.3f} s  x{g / s:5.2f}  {row['check']}",
        flush=True,
    )
    return row


def run(graphs, repeats):
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for graph in graphs:
            path = DATA / graph
            if not path.is_file():
                print(f"{graph}: not found under {DATA}, skipped", file=sys.stderr)
                continue
            field = scipy.io.mminfo(str(path))[4]
            values = field != "pattern"
            rows.append(
                _row(
                    graph,
                    "as stored",
                    lambda: gbla.io.read(path, device="cpu"),
                    lambda: _scipy_as_stored(str(path)),
                    repeats,
                    values,
                )
            )
            rows.append(
                _row(
                    graph,
                    "undirected",
                    lambda: gbla.io.read(path, device="cpu", directed=False),
                    lambda: _scipy_undirected(str(path)),
                    repeats,
                    False,
                )
            )
            npz = Path(folder) / (path.name.split(".")[0] + ".npz")
            sp.save_npz(npz, _scipy_as_stored(str(path)), compressed=False)
            rows.append(
                _row(
                    graph,
                    "npz",
                    lambda: gbla.io.read(npz, device="cpu"),
                    lambda: sp.load_npz(npz),
                    repeats,
                    values,
                )
            )
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--graphs",
        default=",".join(GRAPHS),
        help="paths under the data folder ($GBLA_DATA or ../shared/data), joined by commas",
    )
    p.add_argument("--repeats", type=int, default=7, help="timed calls of each (default 7)")
    p.add_argument(
        "--json",
        default=str(ROOT / "benchmarks" / "results" / "readers_road_social_cpu.json"),
        help="where the results go ('-': standard output)",
    )
    args = p.parse_args(argv)
    rows = run(args.graphs.split(","), args.repeats)
    graph, case, limit = AIM
    aim = next(
        (
            dict(graph=graph, case=case, max_ratio=limit, ratio=r["ratio"], met=r["ratio"] <= limit)
            for r in rows
            if r["graph"] == graph and r["case"] == case
        ),
        None,
    )
    doc = dict(
        schema=SCHEMA,
        command="python " + shlex.join(["benchmarks/bench_readers.py", *(argv or sys.argv[1:])]),
        created=datetime.datetime.now().isoformat(timespec="seconds"),
        machine=bench.machine_info(),
        load_average=list(os.getloadavg()),
        settings=dict(repeats=args.repeats),
        aim=aim,
        rows=rows,
    )
    text = json.dumps(doc, indent=1)
    if args.json == "-":
        print(text)
    else:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
