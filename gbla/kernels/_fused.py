"""One kernel for the small iterations of a loop recorded on the device (fused.cu): the kernels
one recorded iteration launches (as :func:`gbla.kernels._launch.collecting` saw them) compiled
into one translation unit as device functions, called by one block in their launch order with
the arguments the graph's nodes hold.

A :class:`Program` is made from an iteration's launches, or refused (:class:`NotFusible`, with
the reason) when one of them is not a kernel known to be right on a grid of one block, when two
kernels of one file were compiled behind different preludes (two direction policies), when the
iteration has no push product whose input tells the block how large the next iteration is, or
when its last launch is not the loop's test."""

import functools
import re

import numpy as np

from .._backend import _cupy
from . import _launch

__all__ = ["NotFusible", "Program", "THREADS", "MAX_VERTICES", "MAX_EDGES"]

# The block: its threads, and the largest iteration it runs (its first product's input: entries,
# and their out-edges); a larger one goes to the graph's iteration. Measured on an H100
# (benchmarks/results/ab/fused_block*.log): a thin BFS level costs the block about
# 6 us, the graph's iteration about 20. Past a block's entries the block takes them a block at
# a time, and each step of an iteration that walks a list waits on memory once a pass: a
# program of at most SHORT steps (a BFS level: start, push, assign the levels and the parents,
# store, test, which empties the op sites' outputs) runs up to MAX_VERTICES entries and
# MAX_EDGES edges in the block (USA-road-NY's BFS: 5.7 ms against 7.0 with half of each), a
# longer one (Bellman-Ford's round: seven) half as many (USA-road-FLA: 37.6 ms against 42.9
# with the BFS's bounds; TG: 15 ms with 4096 and 16384). 1024 threads rather than 256 for the
# road networks' levels of hundreds of vertices (USA-road-NY: 9.1 against 18.4 ms).
THREADS = 1024
MAX_VERTICES = 2048
MAX_EDGES = 4096
SHORT = 5

# The kernels that are right on a grid of one block (grid-stride, their last-block steps reading
# gridDim), by file.
FUSIBLE = {
    "loop.cu": {"gbla_loop_test", "gbla_gather_decide"},
    "spmv.cu": {"gbla_spmv_device"},
    "entries.cu": {
        "gbla_entries_map",
        "gbla_entries_select",
        "gbla_entries_improve",
        "gbla_entries_union",
        "gbla_entries_merge",
        "gbla_assign_entries",
        "gbla_assign_bits",
        "gbla_store",
        "gbla_entries_reduce",
    },
}
# What each kernel walks, as a C expression of its packed arguments (A(k): argument k's bits,
# C(k): the list count argument k points to, -1 where none or unknown; fused.cu): the entries
# its grid-stride loop visits, the lists' counts as they stand at the loop's top (an op's own
# output list still holding the last iteration's), n where it passes over every position. The
# block runs an iteration only where every step's walk is at most its max_edges: the first
# product's input is not the only list an iteration walks (delta-stepping's pending set, say,
# whose passes one block would take a pass of 1024 at a time). A product's push is
# bounded by its input's out-edges, which its gather's walk stands for; the first product's
# input is the size test's, and a walk of none is left out.
_WALKS = {
    "gbla_gather_decide": "gbla_fw_known(A(2) ? C(3) : -1, (long long)A(0))",
    # its push is its gather's walk. A relax's `also` list (gbla.relax), which the block walks
    # beside it, is not counted: right at any length, and in delta-stepping it is the rest of
    # the pending set its split walked
    "gbla_spmv_device": "0",
    "gbla_entries_map": "gbla_fw_shortest((long long)A(0), C(3), C(6), C(9))",
    "gbla_entries_select": "gbla_fw_known(C(3), (long long)A(0))",
    "gbla_entries_improve": "gbla_fw_known(C(3), (long long)A(0))",
    "gbla_entries_union": "gbla_fw_union((long long)A(0), C(3), C(6), C(9))",
    "gbla_entries_merge": "gbla_fw_both((long long)A(0), C(3), C(6))",
    "gbla_assign_entries": "gbla_fw_known(C(3), (long long)A(0))",
    "gbla_assign_bits": "gbla_fw_known(C(4), (long long)A(0))",
    "gbla_store": "C(2) >= 0 && C(8) >= 0 ? (C(2) > C(8) ? C(2) : C(8)) : (long long)A(0)",
    "gbla_entries_reduce": "gbla_fw_known(C(3), (long long)A(0))",
    # its pass over the op sites' outputs: the last iteration's, which that one bounded
    "gbla_loop_test": "C(2) >= 0 ? 0 : (long long)A(1)",
}
_TEST, _GATHER, _DEVICE = "gbla_loop_test", "gbla_gather_decide", "gbla_spmv_device"
# gbla_gather_decide's arguments: its input's list (ids, count), the matrix's row pointers, the
# bins and the info slot; gbla_spmv_device's bins, info slot and row pointers
_G_IDS, _G_COUNT, _G_INDPTR, _G_BINS, _G_INFO = 2, 3, 4, 5, 6
_D_BINS, _D_INFO, _D_INDPTR = 0, 2, 5
# Two launches one step runs (fused.cu): the first's kernel, the second's, the step's function,
# the pairs of argument positions (first's, second's) that must hold the same value, and
# whether the function's first argument is the layout flag (Program._laid_out).
_MERGED = (
    (
        _GATHER,
        _DEVICE,
        "gbla_fused_push",
        ((_G_BINS, _D_BINS), (_G_INFO, _D_INFO), (_G_INDPTR, _D_INDPTR)),
        True,
    ),
)
_MASK = (1 << 64) - 1


class NotFusible(Exception):
    """An iteration one block cannot run; the message says why."""


def _base(kernel):
    return kernel.split("<", 1)[0].strip()


def _bits(value):
    """A launch argument as 8 bytes (an int): a device array's address, an integer's two's
    complement, a float's bits."""
    if hasattr(value, "__cuda_array_interface__"):
        return int(value.__cuda_array_interface__["data"][0])
    if isinstance(value, (bool, np.bool_, int, np.integer)):
        return int(value) & _MASK
    if isinstance(value, np.float32):
        return int(np.asarray(value).view(np.uint32))
    if isinstance(value, (float, np.floating)):
        return int(np.asarray(value, np.float64).view(np.uint64))
    raise NotFusible(f"a launch argument of type {type(value).__name__}")


class Program:
    """One recorded iteration as one block runs it: :attr:`source` (the translation unit),
    :meth:`pack` (the arguments, 8 bytes each, in order) and :meth:`launch`."""

    def __init__(self, launches):
        launches = list(launches)
        if not launches:
            raise NotFusible("the iteration launches nothing")
        preludes = {}
        for launch in launches:
            kinds = FUSIBLE.get(launch.file, ())
            if _base(launch.kernel) not in kinds:
                raise NotFusible(
                    f"{launch.kernel} of {launch.file} is not known to be right on one block"
                )
            if preludes.setdefault(launch.file, launch.prelude) != launch.prelude:
                raise NotFusible(f"two preludes of {launch.file} (two direction policies)")
        if _base(launches[-1].kernel) != _TEST:
            raise NotFusible("the iteration does not end with the loop's test")
        gathers = [k for k, launch in enumerate(launches) if _base(launch.kernel) == _GATHER]
        if not gathers:
            raise NotFusible("no push product, whose input would size the next iteration")
        self.launches, self.gathers = launches, gathers
        gather = launches[gathers[0]]
        if not _bits(gather.args[_G_IDS]) or not _bits(gather.args[_G_COUNT]):
            raise NotFusible("the first product's input keeps no entry list")
        self.index = gather.kernel[gather.kernel.index("<") + 1 : -1].strip()  # int, long long
        self.frontier = tuple(gather.args[k] for k in (_G_INDPTR, _G_IDS, _G_COUNT))
        self.preludes = preludes
        self.source = self._source()

    def _source(self):
        files = list(dict.fromkeys(launch.file for launch in self.launches))
        preludes = "".join(dict.fromkeys(self.preludes[f] for f in files))
        epilogues = "".join(dict.fromkeys(launch.epilogue for launch in self.launches))
        calls, at = [], 0
        laid_out = self._laid_out()
        for step in self._steps():
            count = sum(len(launch.args) for launch in step)
            args = ", ".join(f"gbla_arg{{a[{at + k}]}}" for k in range(count))
            if len(step) == 1:
                calls.append(f"        {step[0].kernel}({args});")
            else:
                first, second = step
                _, _, function, _, flagged = self._merged(first, second)
                kernel = function + second.kernel[second.kernel.index("<") :]
                flag = f"{int(first is laid_out)}, " if flagged else ""
                calls.append(f"        {kernel}({flag}{args});")
            at += count
        steps = "\n        __syncthreads();\n".join(calls)
        first = self.launches[self.gathers[0]]  # its input: the size test's
        walks = "\n".join(
            f"        w = max(w, (long long)({self._walk(launch, k)}));"
            for launch, k in self._offsets()
            if launch is not first and _WALKS[_base(launch.kernel)] != "0"
        )
        return f"""{preludes}
#undef __global__
#define __global__ __device__
#define __restrict__
#define __threadfence __threadfence_block
#define GBLA_FUSED 1
#define GBLA_FUSED_UNIT 1
#define GBLA_FUSED_THREADS {THREADS}
{_launch.sources(files)}
{epilogues}
#undef __threadfence
#undef __restrict__
#undef __global__
#define __global__ __attribute__((global))
{_launch.source("fused.cu")}
struct gbla_fused_steps {{
    // the longest walk of a step (_fused._WALKS), from the lists as they stand
    static __device__ __forceinline__ long long walk(const u64* a)
    {{
        long long w = 0;
{walks}
        return w;
    }}

    static __device__ __forceinline__ void run(const u64* a)
    {{
{steps}
    }}
}};

extern "C" __global__ void __launch_bounds__({THREADS}, 1)
gbla_fused(const u64* args, long long* control, const {self.index}* indptr,
           const {self.index}* ids, const u64* count, long long max_vertices,
           long long max_edges)
{{
    gbla_fused_loop<gbla_fused_steps, {self.index}>(args, control, indptr, ids, count,
                                                     max_vertices, max_edges);
}}
"""

    def _steps(self):
        """The launches as the block's steps, in order: a tuple of one launch, or of two that one
        step runs (:data:`_MERGED`: a product's gather and its push)."""
        steps, k = [], 0
        while k < len(self.launches):
            launch = self.launches[k]
            after = self.launches[k + 1] if k + 1 < len(self.launches) else None
            if after is not None and self._merged(launch, after):
                steps.append((launch, after))
                k += 2
                continue
            steps.append((launch,))
            k += 1
        return steps

    @staticmethod
    def _merged(first, second):
        """The :data:`_MERGED` row that runs ``first`` then ``second`` as one step, or None."""
        for row in _MERGED:
            one, two, _, same, _ = row
            if (
                _base(first.kernel) == one
                and _base(second.kernel) == two
                and all(_bits(first.args[f]) == _bits(second.args[s]) for f, s in same)
            ):
                return row
        return None

    def _laid_out(self):
        """The gather whose input the size test lays out for the block (fused.cu's gbla_s_*): the
        first, when no launch before it is passed the frontier's list (so none can have written
        it); else None."""
        ids, count = (_bits(a) for a in self.frontier[1:])
        for launch in self.launches:
            if _base(launch.kernel) == _GATHER:
                return launch
            if any(_bits(a) in (ids, count) for a in launch.args):
                return None
        return None

    def _offsets(self):
        """(launch, the position of its first argument in :meth:`pack`), in order."""
        at = 0
        for launch in self.launches:
            yield launch, at
            at += len(launch.args)

    @staticmethod
    def _walk(launch, at):
        """The C expression of _WALKS for ``launch``, its arguments from a[at]."""
        expression = _WALKS[_base(launch.kernel)]
        expression = re.sub(r"A\((\d+)\)", lambda m: f"a[{at + int(m.group(1))}]", expression)
        return re.sub(
            r"C\((\d+)\)", lambda m: f"gbla_fw_count(a[{at + int(m.group(1))}])", expression
        )

    def pack(self):
        """The launches' arguments, 8 bytes each in order (uint64)."""
        return np.array([_bits(a) for launch in self.launches for a in launch.args], np.uint64)

    def function(self):
        """The compiled kernel on the current device (compiled once per source)."""
        return _compiled(_launch.device_id(), self.source)

    def bounds(self):
        """(entries, edges): the largest iteration the block runs, by the program's length
        (:data:`SHORT`)."""
        if len(self._steps()) <= SHORT:
            return MAX_VERTICES, MAX_EDGES
        return MAX_VERTICES // 2, MAX_EDGES // 2

    def launch(self, args, control):
        """Enqueue the block: ``args`` the device copy of :meth:`pack`, ``control`` the loop's
        control words, the bounds :meth:`bounds`."""
        indptr, ids, count = self.frontier
        vertices, edges = self.bounds()
        self.function()(
            (1,),
            (THREADS,),
            (args, control, indptr, ids, count, np.int64(vertices), np.int64(edges)),
        )


@functools.lru_cache(maxsize=None)
def _compiled(device, source):
    module = _cupy().RawModule(code=source, options=("-std=c++17",))
    return module.get_function("gbla_fused")
