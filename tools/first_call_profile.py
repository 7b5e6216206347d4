"""Where a method's first call goes in this process (GPU machine): the call timed three ways
(the first, the second, the mean of three more) and the kernel modules it took through CuPy's
compile cache, with the time spent there: compiled with NVRTC when CUPY_CACHE_DIR is empty,
loaded from disk when it is warm.

    CUPY_CACHE_DIR=$(mktemp -d) python tools/first_call_profile.py bfs algebraic GRAPH
    python tools/first_call_profile.py sssp bellman_ford GRAPH     # weights 1..255

"gbla" counts the modules whose source names a gbla_ kernel; "cupy" the rest (CuPy's own
kernels, and gbla's element-wise kernels, which CuPy generates). Issue 41's figures:
benchmarks/results/ab/first_call_profile.log.
"""

import collections
import sys
import time

t_start = time.perf_counter()
import cupy as cp  # noqa: E402
from cupy.cuda import compiler  # noqa: E402

import gbla  # noqa: E402
from gbla.generators import with_weights  # noqa: E402


def main(algo, method, path):
    t_import = time.perf_counter() - t_start
    modules = collections.Counter()
    inner = compiler._compile_with_cache_cuda  # CuPy's one way to a module, cached or not

    def counted(source, *args, **kwargs):
        t = time.perf_counter()
        try:
            return inner(source, *args, **kwargs)
        finally:
            kind = "gbla" if "gbla_" in source else "cupy"
            modules[kind] += 1
            modules["s_" + kind] += time.perf_counter() - t

    compiler._compile_with_cache_cuda = counted
    A = gbla.io.read(path)
    if algo == "sssp":
        A = with_weights(A, 1, 255, seed=0)
    A = A.to_device("gpu")
    search = gbla.bfs if algo == "bfs" else gbla.sssp
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(2):
        t = time.perf_counter()
        search(A, 0, method=method)
        cp.cuda.Device().synchronize()
        times.append(time.perf_counter() - t)
    t = time.perf_counter()
    for _ in range(3):
        search(A, 0, method=method)
    cp.cuda.Device().synchronize()
    steady = (time.perf_counter() - t) / 3
    print(
        f"{algo} {method}: import {t_import * 1e3:.0f} ms, first {times[0] * 1e3:.0f} ms, "
        f"second {times[1] * 1e3:.1f}, steady {steady * 1e3:.1f}; modules: gbla "
        f"{modules['gbla']} in {modules['s_gbla'] * 1e3:.0f} ms, cupy {modules['cupy']} in "
        f"{modules['s_cupy'] * 1e3:.0f} ms"
    )


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
