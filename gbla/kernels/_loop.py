"""Launchers of loop.cu: the test that ends a loop recorded on the device, and the push/pull
rule of a DirectionPolicy run on the device for one product."""

import numpy as np

from .. import direction as _direction
from . import _launch
from ._launch import THREADS, ptr

__all__ = ["CONTROL", "DONE", "MAX", "GO", "ITERATION", "test", "decide"]

# control[] fields (loop.cu's GBLA_* defines) and its length
DONE, MAX, GO, ITERATION = 0, 1, 4, 6
CONTROL = 8


def test(present, n, control, *, counts, handle=None):
    """Enqueue the loop's test of ``present`` (the condition vector's presence, n bytes) into
    ``control``; with ``handle`` (a CUDA graph conditional handle) it also sets the WHILE
    node's condition. ``counts``: the test follows an iteration (1) or precedes the first."""
    kernel = _launch.function("loop.cu", "gbla_loop_test", prelude=_prelude())
    blocks = max(1, min(-(-n // THREADS), _launch.sm_count() * 4))
    kernel((blocks,), (THREADS,), (ptr(present), np.int64(n), control, np.int32(counts),
                                   np.int32(handle is not None), np.uint64(handle or 0)))


def decide(policy, info, state, n, edges, early_exit):
    """Enqueue the choice of one product's direction by ``policy``: reads the frontier's size
    and edges from ``info`` and the traversal's state (last choice, unexplored edges) from
    ``state`` (int64[2], [0, -1] at the start; None for a product of its own), writes the
    choice to info[4] and the new state."""
    kernel = _launch.function("loop.cu", "gbla_direction_decide", prelude=_prelude(policy))
    kernel((1,), (32,), (info, ptr(state), np.int64(n), np.int64(edges), np.int32(early_exit)))


def _prelude(policy=None):
    """loop.cu is compiled behind a policy's rule (the test kernel takes the default's)."""
    return (policy or _direction.DEFAULT_POLICY).cuda_source()
