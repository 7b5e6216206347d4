"""What a kernel node costs inside a recorded loop: microseconds per iteration of a CUDA graph
WHILE node whose body holds K kernels of B blocks that do (almost) nothing, against the same K
kernels in a plain graph of 64 iterations launched whole. The figure that bounds a level of the
algebra from below: a level of gbla.iterate is a WHILE iteration of a few such kernels.

    python tools/probe_graph_nodes.py [--kernels 1 2 4 8] [--blocks 1 132 1056]
"""

import argparse
import statistics

import numpy as np

CODE = r"""
typedef unsigned long long u64;
typedef u64 cudaGraphConditionalHandle;
extern "C" __device__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle,
                                                   unsigned int value);
extern "C" __global__ void touch(int* x) {
    if (blockIdx.x == 0 && threadIdx.x == 0) x[0] += 1;
}
extern "C" __global__ void step(long long* c, long long n, cudaGraphConditionalHandle h) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        c[0] += 1;
        cudaGraphSetConditional(h, c[0] < n ? 1u : 0u);
    }
}
"""


def main(argv=None):
    import cupy as cp

    from gbla.runtime.capture import _capture, conditional_graphs

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernels", type=int, nargs="+", default=[1, 2, 4, 8])
    p.add_argument("--blocks", type=int, nargs="+", default=[1, 132, 1056])
    p.add_argument("--iterations", type=int, default=2000)
    args = p.parse_args(argv)
    rt = conditional_graphs()
    mod = cp.RawModule(code=CODE)
    touch, step = mod.get_function("touch"), mod.get_function("step")
    x = cp.zeros(1, np.int32)
    c = cp.zeros(1, np.int64)
    stream = cp.cuda.Stream(non_blocking=True)
    n = args.iterations
    print(f"{'kernels':>7s} {'blocks':>6s} {'while us/iter':>13s} {'plain us/iter':>13s}")
    for blocks in args.blocks:
        for k in args.kernels:
            # a WHILE node: K kernels, then the step that sets the condition
            graph = rt.graph()
            handle = rt.conditional_handle(graph, default=1)  # the body runs at least once
            _, body = rt.add_while(graph, [], handle)

            def record():
                for _ in range(k):
                    touch((blocks,), (256,), (x,))
                step((1,), (32,), (c, np.int64(n), np.uint64(int(handle))))

            with stream:
                _capture(rt, stream.ptr, body, record)
            exe = rt.instantiate(graph)
            # a plain graph: 64 iterations of the K kernels, launched n / 64 times
            with stream:
                stream.begin_capture()
                for _ in range(64):
                    for _ in range(k):
                        touch((blocks,), (256,), (x,))
                plain = stream.end_capture()
            times = {"while": [], "plain": []}
            for _ in range(5):
                for kind in ("while", "plain"):
                    c.fill(0)
                    start, stop = cp.cuda.Event(), cp.cuda.Event()
                    with stream:
                        start.record(stream)
                        if kind == "while":
                            rt.launch(exe, stream.ptr)
                        else:
                            for _ in range(n // 64):
                                plain.launch(stream)
                        stop.record(stream)
                    stop.synchronize()
                    times[kind].append(cp.cuda.get_elapsed_time(start, stop) * 1e3 / n)
            print(
                f"{k:7d} {blocks:6d} {statistics.median(times['while'][1:]):13.2f} "
                f"{statistics.median(times['plain'][1:]):13.2f}",
                flush=True,
            )
            rt.destroy_exec(exe)
            rt.destroy(graph)


if __name__ == "__main__":
    main()
