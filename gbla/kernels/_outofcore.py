"""Launchers of outofcore.cu, the device steps of gbla.outofcore's GPU traversals: selecting the
frontier grouped by subgraph (counts and out-degree sums first, then the ids), the smallest
pending distance, and the BFS expansion / SSSP relaxation over one block of edges.

Every launch goes to the current stream; nothing here allocates device memory (the caller's
budget holds every array), and nothing synchronises."""

import numpy as np

from . import _launch
from ._launch import THREADS, grid, ptr

__all__ = [
    "Groups",
    "select",
    "pending_min",
    "expand",
    "NAME_EXPRESSIONS",
    "DIST_CTYPES",
    "INDEX_CTYPES",
]

DIST_CTYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
INDEX_CTYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
WARP = 32


def _name_expressions():
    names = [f"gbla_ooc_select_level<{f}>" for f in ("false", "true")]
    for t in DIST_CTYPES.values():
        names += [f"gbla_ooc_select_pending<{f}, {t}>" for f in ("false", "true")]
        names.append(f"gbla_ooc_pending_min<{t}>")
        names += [f"gbla_ooc_relax<{t}, {i}>" for i in INDEX_CTYPES.values()]
    names += [f"gbla_ooc_bfs_expand<{i}>" for i in INDEX_CTYPES.values()]
    return tuple(names)


NAME_EXPRESSIONS = _name_expressions()


def _kernel(expression):
    return _launch.function("outofcore.cu", expression, name_expressions=NAME_EXPRESSIONS)


class Groups:
    """The device arrays of a frontier grouped by subgraph: ``bounds`` (parts + 1 row bounds),
    per-subgraph ``count`` and ``value`` (u64, the two rows of ``tally``, which one copy
    brings back), ``offset`` (int64, where each group starts in ``ids``), ``cursor`` (u64) and
    ``ids`` (int32, n)."""

    def __init__(self, cp, bounds, n):
        parts = len(bounds) - 1
        self.parts = parts
        self.bounds = cp.asarray(np.asarray(bounds, np.int64))
        self.tally = cp.zeros((2, parts), np.uint64)
        self.count, self.value = self.tally[0], self.tally[1]  # contiguous rows
        self.offset = cp.zeros(parts + 1, np.int64)
        self.cursor = cp.zeros(parts, np.uint64)
        self.ids = cp.empty(max(n, 1), np.int32)

    @staticmethod
    def nbytes(n, parts):
        return 8 * (parts + 1) * 2 + 8 * parts * 3 + 4 * max(n, 1)


def select(groups, degrees, n, *, fill, levels=None, want=None, pending=None, dist=None, top=None):
    """Counts (``fill`` False: ``groups.count`` / ``value`` gain, zero ``tally`` first) or lists
    (``fill`` True: into ``groups.ids`` at ``groups.offset``, ``cursor`` zeroed first) the
    frontier: the vertices whose level is ``want``, or (SSSP) the pending ones whose distance is
    below ``top``, whose pending mark the listing clears."""
    f = "true" if fill else "false"
    tail = (
        np.int64(n),
        groups.bounds,
        np.int32(groups.parts),
        degrees,
        groups.count,
        groups.value,
        groups.offset,
        groups.cursor,
        groups.ids,
    )
    if levels is not None:
        head, name = (levels, np.int32(want)), f"gbla_ooc_select_level<{f}>"
    else:
        t = DIST_CTYPES[dist.dtype]
        head = (pending, dist, dist.dtype.type(top))
        name = f"gbla_ooc_select_pending<{f}, {t}>"
    _kernel(name)(grid(n), (THREADS,), head + tail)


def pending_min(pending, dist, out):
    """out[0] = min(out[0], the smallest distance of a pending vertex); ``out`` a 1-element
    array of dist's dtype."""
    name = f"gbla_ooc_pending_min<{DIST_CTYPES[dist.dtype]}>"
    _kernel(name)(grid(len(dist)), (THREADS,), (pending, dist, np.int64(len(dist)), out))


def expand(
    verts,
    offsets,
    base,
    targets,
    lo,
    by_position,
    *,
    levels=None,
    depth=None,
    parents=None,
    dist=None,
    weights=None,
    pending=None,
):
    """BFS (``levels``) or SSSP (``dist``) over the out-edges of ``verts`` (int32 device ids):
    vertex i's edges are ``offsets[r] - base`` to ``offsets[r + 1] - base`` of ``targets``
    (and ``weights``), r = i when ``by_position`` else verts[i] - lo."""
    nverts = len(verts)
    if nverts == 0:
        return
    blocks = grid(nverts * WARP)
    idx = INDEX_CTYPES[targets.dtype]
    common = (verts, np.int64(nverts), offsets, np.int64(base), targets)
    if levels is not None:
        _kernel(f"gbla_ooc_bfs_expand<{idx}>")(
            blocks,
            (THREADS,),
            common + (np.int64(lo), np.int32(by_position), levels, np.int32(depth), ptr(parents)),
        )
    else:
        t = DIST_CTYPES[dist.dtype]
        _kernel(f"gbla_ooc_relax<{t}, {idx}>")(
            blocks,
            (THREADS,),
            common + (ptr(weights), np.int64(lo), np.int32(by_position), dist, pending),
        )
