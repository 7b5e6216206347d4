"""The built-in kernels compiled before a user needs them.

The package ships the built-in methods' kernel modules compiled ahead of time
(:mod:`gbla._prebuilt`), so that on a GPU they need no compiling. What is not among them (a
CuPy other than the one they were built for, a GPU older than sm_80, a kernel a method takes
only on graphs unlike the ones they were recorded on) compiles with NVRTC on first use, seconds
a method on an H100 (4 to 17 s when nothing was prebuilt; BENCHMARKS.md, "First calls").
:func:`warmup` pays those compiles once,
up front: it runs every registered method of the algorithms asked for (BFS on a pattern, SSSP
on each weight dtype asked for, with and without predecessors) on two small graphs, a power-law
one and a grid, and then as the ``gbla bfs|sssp FILE`` command runs it (reading a graph file,
printing a summary), so that their kernels land in CuPy's on-disk cache (``CUPY_CACHE_DIR``, by
default ``~/.cupy/kernel_cache``), which every later process reads. The jobs run in ``workers``
processes at once (NVRTC compiles in one process one at a time), each method in one of them;
``workers=0`` runs them in this process instead, which also leaves the modules loaded here, for
a service that wants its first request fast. ``gbla warmup`` is the command.

A kernel a method takes only on a graph larger than these (the grid-wide pull of a huge
row, say) still compiles on its first use, as does a user's own semiring or op.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

import numpy as np

from . import _backend as B
from . import _prebuilt, generators, io
from . import _validation as V
from . import methods as methods_
from .algorithms import bfs, sssp
from .matrix import Matrix

__all__ = ["warmup", "jobs", "command", "WEIGHTS"]

ALGORITHMS = ("bfs", "sssp")
# SSSP's weights: the generators' integers, and the two float widths a distance takes
WEIGHTS = ("int32", "float32", "float64")
_TIMEOUT = 900  # seconds a job's command may take (a cold machine's compiles included)


def jobs(
    algorithms: Any = ALGORITHMS, method_names: Any = None, weights: Any = WEIGHTS
) -> list[tuple[str, str, str | None]]:
    """The (algorithm, method, weight dtype or None) triples :func:`warmup` runs: every
    registered method of each algorithm (or those named), SSSP's once per weight dtype, BFS's
    on the pattern (None).

    Examples
    --------
    >>> from gbla._warmup import jobs
    >>> jobs(["sssp"], ["bellman_ford"], ["float32"])
    [('sssp', 'bellman_ford', 'float32')]
    """
    algorithms = _names(algorithms, "algorithms")
    for algo in algorithms:
        V.one_of(algo, ALGORITHMS, "algorithms")
    weights = _names(weights, "weights")
    for w in weights:
        V.one_of(w, WEIGHTS, "weights")
    known = {algo: methods_.names(algo) for algo in algorithms}
    if method_names is not None:
        method_names = _names(method_names, "methods")
        every = [name for algo in algorithms for name in known[algo]]
        for name in method_names:
            if name not in every:
                raise V.invalid_value(
                    "methods", f"name methods of {', '.join(algorithms)} ({', '.join(every)})", name
                )
    out = []
    for algo in algorithms:
        for name in known[algo]:
            if method_names is not None and name not in method_names:
                continue
            for w in weights if algo == "sssp" else (None,):
                out.append((algo, name, w))
    return out


def warmup(
    algorithms: Any = ("bfs", "sssp"),
    methods: Any = None,
    *,
    weights: Any = ("int32", "float32", "float64"),
    workers: int | None = None,
    device: str | None = None,
    on_job: Any = None,
) -> dict:
    """Compile (and load) the kernels of the built-in methods by running each once on small
    graphs.

    Modules the package ships compiled ahead of time are loaded (and counted in ``modules``);
    the others land in CuPy's on-disk kernel cache (``CUPY_CACHE_DIR``, by default
    ``~/.cupy/kernel_cache``), so that every later process's first call loads them instead of
    compiling them. The ``gbla warmup`` command runs it; run it once after installing, or at a
    service's start (``workers=0`` keeps the modules loaded in this process).

    Parameters
    ----------
    algorithms : sequence of 'bfs', 'sssp'
        Whose methods run (default both).
    methods : sequence of str or None
        Only these registered methods (default every one of those algorithms).
    weights : sequence of 'int32', 'float32', 'float64'
        SSSP's weight dtypes (default all three).
    workers : int or None
        Processes that run the jobs at once, sharing the kernel cache; None: one a CPU core, at
        most one a job; 0: in this process, which then holds the modules loaded.
    device : 'gpu', 'cpu' or None
        Where the methods run (None: the GPU when CuPy sees one). On the CPU nothing compiles:
        the jobs still run (``workers=0`` checks that every method runs), which a test uses.
    on_job : callable or None
        Called as each job ends, in the order they end, with (jobs ended, jobs, the job's
        (algorithm, method, weight dtype or None), its seconds, None or the line saying why it
        failed): the command's progress.

    Returns
    -------
    dict
        ``jobs`` (how many ran), ``skipped`` (a line for each method that cannot run on this
        device), ``seconds`` (the wall time), ``workers``, ``device``,
        ``cache`` (the kernel cache folder, on the GPU), ``cache_files`` (files it holds after),
        ``failed`` (a list of ``"algo method dtype: error"`` lines; empty when all ran) and
        ``modules``: how many kernel modules the jobs' processes loaded compiled ahead of time
        (``prebuilt``, gbla._prebuilt) and how many CuPy compiled or found in its cache
        (``compiled``), the commands' own processes aside.

    Examples
    --------
    >>> import gbla
    >>> report = gbla.warmup(["bfs"], ["algebraic"], workers=0, device="cpu")
    >>> report["jobs"], report["failed"]
    (1, [])
    """
    device = B.resolve_device(device)
    todo: list[tuple[str, str, str | None]] = []
    skipped: list[tuple[str, str, str | None]] = []
    for job in jobs(algorithms, methods, weights):
        (todo if _runs_on(job[1], device) else skipped).append(job)
    if workers is not None:
        workers = V.size(workers, "workers")
    else:
        workers = min(len(todo), os.cpu_count() or 1)
    if on_job is not None:
        V.is_callable(on_job, "on_job")
    start = time.perf_counter()
    outcomes = []

    modules = {"prebuilt": 0, "compiled": 0}

    def ended(job, outcome):
        outcomes.append(outcome[0])
        for k in modules:
            modules[k] += outcome[2][k]
        if on_job is not None:
            on_job(len(outcomes), len(todo), job, outcome[1], outcome[0])

    if workers == 0 or not todo:
        for job in todo:
            ended(job, _timed(job, device))
    else:
        # spawned, not forked: a forked child cannot use the parent's CUDA context
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            running = {pool.submit(_timed, job, device): job for job in todo}
            for future in as_completed(running):
                ended(running[future], future.result())
    report = {
        "jobs": len(todo),
        "skipped": [
            f"{algo} {name}: runs on the {' or '.join(methods_.get(name).devices)} only"
            for algo, name in dict.fromkeys((a, n) for a, n, _ in skipped)
        ],
        "seconds": time.perf_counter() - start,
        "workers": workers,
        "device": device,
        "failed": [line for line in outcomes if line],
        "modules": modules,
    }
    if device == "gpu":
        cache = kernel_cache()
        report["cache"] = cache
        report["cache_files"] = len(os.listdir(cache)) if os.path.isdir(cache) else 0
    return report


def kernel_cache():
    """The folder CuPy keeps compiled kernels in: ``CUPY_CACHE_DIR``, by default
    ``~/.cupy/kernel_cache`` (CuPy's documented default)."""
    return os.environ.get("CUPY_CACHE_DIR") or os.path.expanduser("~/.cupy/kernel_cache")


def _names(value, name):
    if isinstance(value, str):
        value = [s for s in value.split(",") if s]
    try:
        out = list(value)
    except TypeError:
        raise V.domain(name, "be a sequence of names", type(value).__name__) from None
    if not out or not all(isinstance(s, str) for s in out):
        raise V.invalid_value(name, "name at least one, as strings", value)
    return out


def _graphs(device, weight):
    """The two graphs a job runs on: an R-MAT graph (hubs and a shallow search: the pulls and
    the hub paths) and a grid (small frontiers and many levels: the one-block paths). The
    weighted grid comes through SciPy, as a user's own matrix does: its symmetry unknown, so
    that the search for it over the values is among what the warm-up loads."""
    power = generators.rmat(10, 8, seed=1, device=device)
    grid = generators.grid2d(24, 24, device=device)
    if weight is None:
        return power, grid
    out = []
    for A in (power, grid):
        W = generators.with_weights(A, 1, 255, seed=1)
        if weight != "int32":
            W = W.astype(np.dtype(weight))
        out.append(W)
    out[1] = Matrix.from_scipy(out[1].to_scipy(), device=device)
    return out


def _sources(A):
    """Vertex 0, the vertex of most out-edges (a hub's first level: the pulls, the block-wide
    paths) and a vertex without out-edges where there is one (a search that ends at once):
    each can take kernels of its own."""
    degrees = B.to_host(A._degrees())
    out = [0, int(np.argmax(degrees))]
    isolated = np.flatnonzero(degrees == 0)
    if len(isolated):
        out.append(int(isolated[0]))
    return list(dict.fromkeys(out))


def _timed(job, device):
    """(:func:`_run`'s outcome, the job's seconds, the modules its process loaded prebuilt
    and those CuPy compiled or took from its cache meanwhile: gbla._prebuilt.counts())."""
    start, before = time.perf_counter(), _prebuilt.counts()
    outcome = _run(job, device)
    after = _prebuilt.counts()
    modules = {k: after[k] - before[k] for k in after}
    return outcome, time.perf_counter() - start, modules


def _run(job, device):
    """One job: the method on each graph from each of :func:`_sources`, without and with
    predecessors, then as the command runs it. Returns None, or the line that says why it
    failed."""
    algo, name, weight = job
    try:
        method = methods_.get(name, algo)
        for A in _graphs(device, weight):
            options = {}
            if "memory_budget" in method.options:  # out of core: the graph in host memory
                A = A.to_device("cpu")
                # half the graph's bytes beside its vertex arrays: the edges stream
                options["memory_budget"] = A.nbytes // 2 + 32 * A.nrows
            elif not method.supports(A):
                continue
            search = bfs if algo == "bfs" else sssp
            for source in _sources(A):
                for predecessors in (False, True):
                    search(A, source, method=name, return_predecessors=predecessors, **options)
        B.synchronize(device)
        if "memory_budget" not in method.options and weight != "float32":
            _command(algo, name, weight, device)
    except Exception as e:  # a job's failure is reported, the others still run
        return f"{algo} {name} {weight or 'pattern'}: {type(e).__name__}: {e}"
    return None


def _command(algo, name, weight, device):
    """The method as ``gbla ALGO FILE --method NAME`` runs it, in a new process: the file read
    into host memory and moved to the device, the summary it prints (kernels of their own, which
    a user's first command would otherwise compile). A pattern file, given weights 1..255 for
    SSSP's int32 job (``--weights``, as the benchmarks run); a real one (read as float64) for
    its float64 job."""
    A = generators.grid2d(12, 12, device="cpu")
    if weight == "float64":
        A = generators.with_weights(A, 1, 255, seed=1).astype(np.float64)
    with tempfile.TemporaryDirectory(prefix="gbla-warmup-") as folder:
        path = os.path.join(folder, "graph.mtx")
        io.write_mtx(path, A)
        args = [algo, path, "--source", "0", "--method", name, "--device", device]
        args += ["--predecessors"] + (["--weights", "1", "255"] if weight == "int32" else [])
        command(args, timeout=_TIMEOUT)


def command(args, *, env=None, timeout=None):
    """Run ``gbla ARGS`` in a new process (``env``: its environment, None: this one's); returns
    (what it printed, its wall ms). RuntimeError naming the command and its last line of error
    output when it fails."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "gbla", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"gbla {' '.join(args)} failed: {said}")
    return done.stdout, (time.perf_counter() - start) * 1e3


def _runs_on(name, device):
    """Whether method ``name`` runs here: on ``device``, or (out of core) from host memory
    with the GPU as its device."""
    method = methods_.get(name)
    if "memory_budget" in method.options:
        return device == "gpu" or "cpu" in method.devices
    return device in method.devices
