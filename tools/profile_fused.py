"""Where an iteration of the fused block goes (gbla/kernels/fused.cu): each step's time in clock
cycles, read by one thread of the block after the barrier that ends the step, summed over
every iteration the block runs, then per iteration in microseconds at the GPU's clock.

    python tools/profile_fused.py GRAPH [GRAPH ...] [--algo bfs|bellman_ford|delta_stepping]
        [--sources K]

GRAPH is a file gbla.io reads. The block's translation unit is rebuilt with the counters (a
tool's copy: the library's is untouched, and the counters add a read of the clock and a store
after each barrier); step 0 includes the size test and the walks' bound at the loop's top.
Used for the per-step figures in the README ("The fused block")."""

import argparse
import os
import sys
import time

COUNTERS = 64
TOP = 63  # the counter of loop tops (iterations run, and the last test that hands over)


def instrument(source):
    """The block's unit with a clock read after each step's barrier (counters 0, 1, ...) and at
    the loop's top."""
    head, rest = source.split("struct gbla_fused_steps {", 1)
    body, tail = rest.split('extern "C" __global__', 1)
    parts = body.split("__syncthreads();")

    def tick(k):
        return (
            f"__syncthreads(); if (threadIdx.x == 0) {{ long long t = clock64(); "
            f"gbla_prof[{k}] += t - gbla_t0; gbla_t0 = t; }}"
        )

    steps = parts[0]
    for k, part in enumerate(parts[1:]):
        steps += tick(k) + part
    steps = steps.rstrip()
    last = steps.rfind(";\n", 0, steps.rfind("}"))  # after the last step's call
    steps = steps[: last + 1] + "\n        " + tick(len(parts) - 1) + "\n    }\n};\n\n"
    top = "__syncthreads();  // the test's control words seen by every thread"
    if top not in head:
        raise SystemExit("fused.cu's loop changed: update tools/profile_fused.py")
    head = head.replace(
        top,
        f"__syncthreads(); if (threadIdx.x == 0) {{ gbla_t0 = clock64(); gbla_prof[{TOP}] += 1; }}",
        1,
    )
    head = head.replace(
        "#undef __global__",
        f"__device__ unsigned long long gbla_prof[{COUNTERS}];"
        "\n__device__ long long gbla_t0;\n#undef __global__",
        1,
    )
    return head + "struct gbla_fused_steps {" + steps + 'extern "C" __global__' + tail


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graphs", nargs="+")
    parser.add_argument("--algo", choices=("bfs", "bellman_ford", "delta_stepping"), default="bfs")
    parser.add_argument("--sources", type=int, default=16)
    args = parser.parse_args(argv)

    import cupy as cp
    import numpy as np

    import gbla
    from gbla.kernels import _fused

    modules, programs = {}, {}  # unit text: its module; unit text: a program made of it
    plain_source = _fused.Program._source

    def source(self):
        text = instrument(plain_source(self))
        programs.setdefault(text, self)
        return text

    def compiled(device, text):
        if text not in modules:
            modules[text] = cp.RawModule(code=text, options=("-std=c++17",))
        return modules[text].get_function("gbla_fused")

    _fused.Program._source = source
    _fused._compiled = compiled
    clock_khz = cp.cuda.runtime.getDeviceProperties(0)["clockRate"]
    for path in args.graphs:
        S = gbla.io.read(path, device="cpu").to_scipy().tocsr()
        if args.algo != "bfs":  # lengths: the values' magnitudes, 1 where none
            S.data = np.abs(S.data).astype(np.float64)
            S.data[S.data == 0] = 1
        A = gbla.Matrix.from_scipy(S, device="gpu")
        n = A.nrows

        def run(s):
            if args.algo == "bfs":
                return gbla.bfs(A, s)
            return gbla.sssp(A, s, method=args.algo)

        programs.clear()
        run(0)  # records (and compiles the counted unit)
        counters = {
            text: cp.ndarray((COUNTERS,), cp.uint64, modules[text].get_global("gbla_prof"))
            for text in programs
            if text in modules
        }
        for c in counters.values():
            c.fill(0)
        sources = np.random.default_rng(1).integers(0, n, args.sources).tolist()
        times = []
        for s in sources:
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
            run(s)
            cp.cuda.Device().synchronize()
            times.append(time.perf_counter() - t0)
        print(
            f"{os.path.basename(path)} {args.algo}: {np.median(times) * 1e6:.0f} us a call "
            f"(median of {args.sources} sources, the counters' cost included)"
        )
        if not counters:
            print("  the loop did not fuse")
        for text, c in counters.items():
            program = programs[text]
            counts = c.get()
            runs = int(counts[TOP])
            if not runs:
                continue
            names = [
                "+".join(launch.kernel.split("<")[0] for launch in step)
                for step in program._steps()
            ]
            per = counts[: len(names)] / runs / clock_khz * 1e3
            print(f"  {runs} loop tops, {per.sum():.2f} us an iteration:")
            for k, (name, us) in enumerate(zip(names, per)):
                note = " (with the size test and the walks)" if k == 0 else ""
                print(f"    {us:6.2f}  {name}{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
