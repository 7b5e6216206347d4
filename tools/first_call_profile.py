"""Where a method's first call goes in this process (GPU machine): the call timed three ways
(the first, the second, the mean of three more) and every kernel module the first call took,
with its time: loaded compiled ahead of time (gbla._prebuilt's hook: its cubin's size, and the
gbla line that asked for it) or left to CuPy (compiled with NVRTC when CUPY_CACHE_DIR is
empty, read from disk when it is warm).

    CUPY_CACHE_DIR=$(mktemp -d) python tools/first_call_profile.py bfs algebraic GRAPH
    python tools/first_call_profile.py sssp bellman_ford GRAPH --profile   # weights 1..255

``--profile`` adds cProfile's costliest functions of the first call (by own and by
cumulative time); ``--all`` lists every module (by default those of 20 KB or more, or 1 ms or
more). Issue 41's figures:
benchmarks/results/ab/first_call_profile.log, benchmarks/results/ab/module_load_cost_h100.log.
"""

import argparse
import cProfile
import io
import pstats
import time
import traceback

t_start = time.perf_counter()
import cupy as cp  # noqa: E402
from cupy.cuda import compiler  # noqa: E402

import gbla  # noqa: E402
from gbla import _prebuilt  # noqa: E402
from gbla.generators import with_weights  # noqa: E402


def _asker():
    """The innermost gbla line below the compile (not the loader's own)."""
    skip = ("_prebuilt.py", "_launch.py", "_backend.py", "first_call_profile.py")
    frames = [
        f
        for f in traceback.extract_stack()[:-3]
        if "/gbla/" in f.filename and not f.filename.endswith(skip)
    ]
    if not frames:
        return "?"
    f = frames[-1]
    return f"{f.filename.split('/gbla/')[-1]}:{f.lineno} {f.name}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("algo", choices=("bfs", "sssp"))
    p.add_argument("method")
    p.add_argument("graph")
    p.add_argument("--profile", action="store_true", help="cProfile of the first call")
    p.add_argument("--all", action="store_true", help="list every module the first call took")
    args = p.parse_args(argv)
    t_import = time.perf_counter() - t_start
    taken = []  # (how, bytes, ms, first name expression, asker) of each module, in order
    recording = [False]

    load = _prebuilt._load  # the hook calls the module's _load: a prebuilt module

    def timed_load(comp, module_key, arch, names):
        t = time.perf_counter()
        module = load(comp, module_key, arch, names)
        if recording[0] and module is not None:
            found = _prebuilt.find(module_key, str(arch or comp._get_arch()))
            size = found.path.stat().st_size if found else -1
            taken.append(("prebuilt", size, (time.perf_counter() - t) * 1e3, names, _asker()))
        return module

    _prebuilt._load = timed_load
    inner = compiler._compile_with_cache_cuda  # CuPy's way to a module it compiles or caches

    def timed_compile(source, *a, **k):
        t = time.perf_counter()
        try:
            return inner(source, *a, **k)
        finally:
            if recording[0]:
                ms = (time.perf_counter() - t) * 1e3
                taken.append(("compiled", -1, ms, k.get("name_expressions"), _asker()))

    compiler._compile_with_cache_cuda = timed_compile
    A = gbla.io.read(args.graph)
    if args.algo == "sssp":
        A = with_weights(A, 1, 255, seed=0)
    A = A.to_device("gpu")
    search = gbla.bfs if args.algo == "bfs" else gbla.sssp
    cp.cuda.Device().synchronize()
    profile = cProfile.Profile()
    times = []
    for i in range(2):
        recording[0] = i == 0
        t = time.perf_counter()
        if i == 0 and args.profile:
            profile.enable()
        search(A, 0, method=args.method)
        cp.cuda.Device().synchronize()
        profile.disable()
        times.append(time.perf_counter() - t)
    recording[0] = False
    t = time.perf_counter()
    for _ in range(3):
        search(A, 0, method=args.method)
    cp.cuda.Device().synchronize()
    steady = (time.perf_counter() - t) / 3
    kinds = {how: [m for m in taken if m[0] == how] for how in ("prebuilt", "compiled")}
    print(
        f"{args.algo} {args.method}: import {t_import * 1e3:.0f} ms, first {times[0] * 1e3:.1f} "
        f"ms, second {times[1] * 1e3:.1f}, steady {steady * 1e3:.1f}; modules the first call "
        + ", ".join(
            f"{how} {len(ms)} in {sum(m[2] for m in ms):.1f} ms" for how, ms in kinds.items()
        )
    )
    for how, size, ms, names, asker in taken:
        if args.all or size >= 20_000 or ms >= 1 or how == "compiled":
            name = (names or ["-"])[0][:44]
            kb = f"{size // 1024:5d} KB" if size >= 0 else "      - "
            print(f"  {how:8s} {kb} {ms:7.2f} ms  {name:44s} {asker}")
    if args.profile:
        for order, count in (("tottime", 20), ("cumulative", 40)):
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats(order).print_stats(count)
            print(f"-- by {order}")
            print("\n".join(line for line in out.getvalue().splitlines()[6:] if line.strip()))


if __name__ == "__main__":
    main()
