"""What gbla.sssp reads of a matrix's weights (every matrix's ``weights``), known alike wherever
they are read: a Matrix's (its one array reduced), a matrix cut over ranks (gbla.distributed,
gathered from every rank's part) or kept in host memory (gbla.outofcore.HostMatrix)."""

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


def numbers(values):
    """[smallest finite, +inf present, positive sum, smallest positive, positives, NaN or
    -inf count] of one part's weights, +inf standing for "none": reduced where the weights
    are, a chunk at a time, six numbers to the host."""
    xp = B.xp_of(B.array_device(values))
    kind_f = values.dtype.kind == "f"
    lowest = smallest_positive = np.inf
    inf_present, total, positives, bad = 0.0, 0.0, 0, 0
    for at in range(0, len(values), _NUMBERS_CHUNK):
        chunk = values[at : at + _NUMBERS_CHUNK]
        chunk_bad = int((xp.isnan(chunk) | (chunk == -np.inf)).sum()) if kind_f else 0  # sync
        finite = chunk[xp.isfinite(chunk)] if kind_f else chunk
        positive = finite[finite > 0]
        if len(finite):  # sync: a few scalars a chunk
            lowest = min(lowest, float(finite.min()))
        if len(finite) + chunk_bad < len(chunk):
            inf_present = 1.0
        if len(positive):
            total += float(positive.sum(dtype=np.float64))
            smallest_positive = min(smallest_positive, float(positive.min()))
        positives += len(positive)
        bad += chunk_bad
    return np.array([lowest, inf_present, total, smallest_positive, positives, bad], np.float64)


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
