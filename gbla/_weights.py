"""What gbla.sssp reads of a matrix's weights (every matrix's ``weights``), known alike wherever
they are read: a Matrix's (its one array reduced), a matrix cut over ranks (gbla.distributed,
gathered from every rank's part) or kept in host memory (gbla.outofcore.HostMatrix)."""

import functools
from dataclasses import dataclass

import numpy as np

from . import _backend as B

__all__ = ["WeightFacts", "ISO_FACTS", "NO_FACTS", "numbers", "facts", "weight_facts"]


@dataclass(frozen=True)
class WeightFacts:
    """What gbla.sssp reads of a matrix's weights, over every rank: the smallest finite weight,
    whether one is +inf, the first NaN or -inf described (or None), and the mean, smallest
    and count of the positive ones (delta-stepping's default width)."""

    lowest: float
    infinite: bool
    bad: object
    positive_mean: float
    positive_min: float
    positive_count: int

    def climbs(self, farthest, dtype):
        """Whether d + w > d in floating point of ``dtype`` for every weight w and distance
        0 <= d <= ``farthest``: the weights positive and more than twice d's rounding unit.
        Then every tight edge (d(u) + w(u, v) == d(v)) climbs, so they form no cycle and any
        tight in-edge of a reached vertex is a shortest-path tree's edge; an edge lighter than
        that adds nothing to a long path, and with a zero weight tight edges can close a cycle
        off the source's tree."""
        return self.lowest > 0 and self.lowest > 2 * np.finfo(dtype).eps * farthest

    def bucket_width(self, stored, n):
        """Delta-stepping's default bucket width for a matrix of ``stored`` entries and ``n``
        rows with these weights: 32 x the mean positive weight / the average out-degree, the
        GPU choice of Davidson et al. (IPDPS 2014: a warp's worth of edges a bucket), but at
        least the smallest positive weight, so that a bucket can hold an edge; 1 where no
        weight is positive."""
        if stored == 0 or self.positive_count == 0:
            return 1.0
        avg_degree = stored / max(n, 1)
        return max(32.0 * self.positive_mean / max(avg_degree, 1.0), self.positive_min)


ISO_FACTS = WeightFacts(1.0, False, None, 1.0, 1.0, 1)
NO_FACTS = WeightFacts(0.0, False, None, 1.0, 1.0, 0)  # a matrix without entries


# Weights reduced at once by numbers(): its temporaries stay a few of these, whatever the size.
_NUMBERS_CHUNK = 2**26
# on the host, a chunk the CPU's cache holds, so that its passes after the first read the cache
# (67 M float32 weights: 118 -> 66 ms on a 2-core host)
_HOST_CHUNK = 2**18


# host weights from this many on are reduced by several threads, a block each (NumPy's
# reductions let go of the GIL): 537 M float32 weights took about 0.55 s in one thread
_PARALLEL_AT = 2**23


def numbers(values):
    """[smallest finite, +inf present, positive sum, smallest positive, positives, NaN or
    -inf count] of one part's weights, +inf standing for "none": reduced where the weights
    are, a chunk at a time, six numbers to the host."""
    if B.array_device(values) == "gpu":
        return _numbers_gpu(values)
    threads = B.host_threads()
    if len(values) < _PARALLEL_AT or threads < 2:
        return _numbers_host(values)
    step = -(-len(values) // threads)
    step = -(-step // _HOST_CHUNK) * _HOST_CHUNK  # blocks of whole chunks
    blocks = [values[at : at + step] for at in range(0, len(values), step)]
    return _combine(B.host_map(_numbers_host, blocks))


def _combine(rows):
    """One :func:`numbers` row from the rows of a part's blocks."""
    rows = np.asarray(rows, np.float64).reshape(-1, 6)
    return np.array(
        [
            rows[:, 0].min(),
            rows[:, 1].max(),
            rows[:, 2].sum(),
            rows[:, 3].min(),
            rows[:, 4].sum(),
            rows[:, 5].sum(),
        ]
    )


def _numbers_host(values):
    lowest = smallest_positive = np.inf
    inf_present, total, positives, bad = 0.0, 0.0, 0, 0
    kind_f = values.dtype.kind == "f"
    for at in range(0, len(values), _HOST_CHUNK):
        chunk = finite = values[at : at + _HOST_CHUNK]
        chunk_lowest = chunk.min()
        # finite bounds (a NaN makes the minimum NaN) say every weight is finite: no mask
        if kind_f and not (np.isfinite(chunk_lowest) and np.isfinite(chunk.max())):
            ok = np.isfinite(chunk)
            chunk_bad = int((np.isnan(chunk) | (chunk == -np.inf)).sum())
            finite = chunk[ok]
            if len(finite) + chunk_bad < len(chunk):
                inf_present = 1.0
            bad += chunk_bad
            if not len(finite):
                continue
            chunk_lowest = finite.min()
        chunk_lowest = float(chunk_lowest)
        lowest = min(lowest, chunk_lowest)
        if chunk_lowest > 0:  # every weight positive (the usual case): no compaction
            total += float(finite.sum(dtype=np.float64))
            smallest_positive = min(smallest_positive, chunk_lowest)
            positives += len(finite)
            continue
        positive = finite[finite > 0]
        if len(positive):
            total += float(positive.sum(dtype=np.float64))
            smallest_positive = min(smallest_positive, float(positive.min()))
        positives += len(positive)
    return np.array([lowest, inf_present, total, smallest_positive, positives, bad], np.float64)


# numbers() on the GPU: one ReductionKernel a number, each mapping a weight to float64 (a
# count's 1 or 0; +inf stands for "none" in a minimum), read back together, once a chunk. Not
# CuPy's min and sum, nor a compaction of the finite weights (which reads its count back):
# CuPy runs a reduction of one array into one through CUB's block reduction, whose modules
# (two a reduction, about 178 KB each, CUB's symbols) took 6-8 ms each to load on an H100
# against about 0.1 ms for its plain reduction's (benchmarks/results/ab/
# module_load_cost_h100.log). These take a second input, a scalar they do not read, which
# CuPy (14) never hands to CUB.
_FINITE = "(x == x && (double)x != GBLA_INF && (double)x != -GBLA_INF)"
_POSITIVE = f"({_FINITE} && x > 0)"
_GPU_NUMBERS = (  # (name, map, reduce, identity), in numbers()'s order
    ("lowest", f"{_FINITE} ? (double)x : GBLA_INF", "fmin(a, b)", "GBLA_INF"),
    ("infinite", "(double)x == GBLA_INF ? 1.0 : 0.0", "fmax(a, b)", "0.0"),
    ("total", f"{_POSITIVE} ? (double)x : 0.0", "a + b", "0.0"),
    ("least_positive", f"{_POSITIVE} ? (double)x : GBLA_INF", "fmin(a, b)", "GBLA_INF"),
    ("positives", f"{_POSITIVE} ? 1.0 : 0.0", "a + b", "0.0"),
    ("bad", "(x != x || (double)x == -GBLA_INF) ? 1.0 : 0.0", "a + b", "0.0"),
)
_INF = "#define GBLA_INF __longlong_as_double(0x7ff0000000000000LL)\n"


@functools.lru_cache(maxsize=None)
def _gpu_reductions():
    cp = B._cupy()
    return tuple(
        cp.ReductionKernel(
            "T x, int32 plain",
            "float64 y",
            expr,
            reduce,
            "y = a",
            identity,
            f"gbla_weights_{name}",
            preamble=_INF,
        )
        for name, expr, reduce, identity in _GPU_NUMBERS
    )


def _numbers_gpu(values):
    cp = B._cupy()
    rows = [np.array([np.inf, 0.0, 0.0, np.inf, 0.0, 0.0])]
    for at in range(0, len(values), _NUMBERS_CHUNK):
        chunk = values[at : at + _NUMBERS_CHUNK]
        rows.append(cp.stack([reduce(chunk, 0) for reduce in _gpu_reductions()]).get())  # sync
    return _combine(rows)


def facts(rows, described):
    """WeightFacts from the :func:`numbers` of every part."""
    rows = np.atleast_2d(rows)
    count, bad = int(rows[:, 4].sum()), int(rows[:, 5].sum())
    lowest = float(rows[:, 0].min())
    if bad and described is None:
        described = f"{bad} weights NaN or -inf"
    return WeightFacts(
        lowest if np.isfinite(lowest) else 0.0,
        bool(rows[:, 1].any()),
        described if bad else None,
        float(rows[:, 2].sum() / count) if count else 1.0,
        float(rows[:, 3].min()) if count else 1.0,
        count,
    )


def weight_facts(indptr, indices, values):
    """The WeightFacts of a whole host CSR (what every rank has in DistMatrix.from_csr)."""
    if values is None:
        return ISO_FACTS if len(indices) else NO_FACTS
    values = np.asarray(values)
    described = None
    if values.dtype.kind == "f":
        bad = np.flatnonzero(np.isnan(values) | (values == -np.inf))
        if len(bad):
            e = int(bad[0])
            row = int(np.searchsorted(indptr, e, side="right") - 1)
            described = f"{float(values[e])} at ({row}, {int(indices[e])})"
    return facts(numbers(values), described)
