"""Launchers of loop.cu: the test that ends a loop recorded on the device, the gather of a
device product's input with the push/pull rule of a DirectionPolicy applied on the device, and
a run's start (staged state vectors loaded) and end (a state vector as a dense array)."""

import functools
from dataclasses import dataclass

import numpy as np

from .. import _dtypes
from .. import direction as _direction
from . import _launch
from ._launch import THREADS, ptr

__all__ = [
    "CONTROL",
    "DONE",
    "MAX",
    "GO",
    "ITERATION",
    "EDGES",
    "FUSED",
    "STAGE_HEAD",
    "test",
    "load_staged",
    "dense",
    "Choice",
    "gather",
]

# control[] fields (loop.cu's GBLA_* defines) and its length
DONE, MAX, GO, ITERATION = 0, 1, 4, 6
EDGES = 5  # the edges the loop's products examined (spmv.cu's gbla_spmv_device, fused.cu)
FUSED = 7  # the iterations the fused block ran (fused.cu)
CONTROL = 8
# words before a staged vector's ids in the start block (loop.cu's GBLA_STAGE_HEAD)
STAGE_HEAD = 4


def test(present, n, control, *, counts, handle=None, count=None, sites=None):
    """Enqueue the loop's test of ``present`` (the condition vector's presence, n bytes) into
    ``control``; with ``handle`` (a CUDA graph conditional handle) it also sets the WHILE
    node's condition. ``counts``: the test follows an iteration (1) or precedes the first.
    ``count``: the vector's entry-list count (_entries), read instead of ``present`` when
    known. ``sites``: (table, k, largest n, arrived) of the iteration's op sites, emptied in the
    same launch (_entries.site_table; ``arrived`` one uint64 word, zero, left zero)."""
    kernel = _launch.function("loop.cu", "gbla_loop_test", prelude=_prelude())
    table, k, largest, arrived = sites if sites is not None else (None, 0, 0, None)
    # with a count, the scan runs only where it is unknown (the first iteration of a run); the
    # sites' pass takes two blocks an SM, as the ops' passes do
    wide = _launch.sm_count() * (1 if count is not None else 4)
    blocks = max(1, min(-(-n // THREADS), wide))
    if k:
        blocks = max(blocks, min(-(-largest // THREADS), _launch.sm_count() * 2))
    kernel(
        (blocks,),
        (THREADS,),
        (
            ptr(present),
            np.int64(n),
            ptr(count),
            control,
            np.int32(counts),
            np.int32(handle is not None),
            np.uint64(handle or 0),
            ptr(table),
            np.int32(k),
            ptr(arrived),
        ),
    )


@functools.lru_cache(maxsize=None)
def _run_edges():
    """The kernels of a run's start and end, every dtype (pair) in one module."""
    types = tuple(_dtypes.CUDA_TYPES.values())
    return tuple(
        f"gbla_load_staged_{step}<{c}>" for step in ("clear", "scatter") for c in types
    ) + tuple(f"gbla_dense<{t}, {o}>" for t in types for o in types)


def load_staged(block, at, values, present, cap, entries=None):
    """Enqueue the load of a state vector staged on the host: its part of the start ``block``
    (int64 words from ``at``: [staged?, count, filled?, the fill], ``cap`` ids, ``cap`` values)
    written into its buffers ``values`` and ``present``; nothing where it is not staged. With
    ``entries`` (the (ids, count) list its buffers keep), the list is made too: the staged
    entries, or unknown (not staged, or filled)."""
    ctype = _dtypes.CUDA_TYPES[np.dtype(values.dtype)]
    clear, scatter = (
        _launch.function(
            "loop.cu",
            f"gbla_load_staged_{step}<{ctype}>",
            prelude=_prelude(),
            name_expressions=_run_edges(),
        )
        for step in ("clear", "scatter")
    )
    n = values.size
    # a fixed grid: a vector that is not staged costs a flag read a thread, whatever its size
    clear(_launch.grid(n), (THREADS,), (block, np.int64(at), values, present, np.int64(n)))
    ids, count = (None, None) if entries is None else entries
    scatter(
        (-(-cap // THREADS),),
        (THREADS,),
        (
            block,
            np.int64(at),
            np.int32(cap),
            values,
            present,
            ptr(ids),
            np.int32(ids is not None and ids.dtype.itemsize == 8),
            ptr(count),
        ),
    )


def dense(values, present, fill, out):
    """Enqueue ``out[i] = values[i] if present[i] else fill`` (``out``'s dtype, which ``fill``
    fits): a loop's result as a dense array, in one pass."""
    n = out.size
    _dense_kernel(_launch.device_id(), values.dtype, out.dtype)(
        _launch.grid(n), (THREADS,), (values, present, out.dtype.type(fill), out, np.int64(n))
    )


@functools.lru_cache(maxsize=None)
def _dense_kernel(device, values_dtype, out_dtype):
    """gbla_dense for one dtype pair, looked up once: a run's end asks on every call, and the
    module's key (every kernel name of a run's start and end) costs microseconds to hash."""
    c = _dtypes.CUDA_TYPES
    name = f"gbla_dense<{c[np.dtype(values_dtype)]}, {c[np.dtype(out_dtype)]}>"
    return _launch.function("loop.cu", name, prelude=_prelude(), name_expressions=_run_edges())


@dataclass(frozen=True)
class Choice:
    """What a device product's direction is chosen from: ``policy``'s rule, the traversal's
    ``state`` (int64[2]: last choice, unexplored edges; [0, -1] at the start; None for a
    product of its own), the output size ``n``, the pull matrix's ``edges`` and whether the
    semiring's monoid can stop early."""

    policy: object
    state: object
    n: int
    edges: int
    early_exit: bool


def gather(
    n_in, present, indptr, bins, info, blocks, choice=None, entries=None, window=None, direct=0
):
    """Enqueue the binning of u's entries (``present``: n_in bytes, None for all; ``entries``:
    u's entry list, read instead where its count is known) by out-degree in ``indptr`` into
    ``bins`` and ``info`` (zeroed), and with ``choice`` the direction's choice into info[4],
    made by the last block to finish. ``window``: (u's values, t, shift, kind) of gbla.relax's
    window (_spmv.device_product): only the entries it expands are binned. ``direct``: the
    matrix's largest out-degree where the product may walk a listed u itself (loop.cu's direct
    push: nothing binned where it can only push; read only where u's list is), 0 where it may
    not."""
    index = {4: "int", 8: "long long"}[np.dtype(bins.dtype).itemsize]
    names = tuple(f"gbla_gather_decide<{c}>" for c in ("int", "long long"))
    policy = None if choice is None else choice.policy
    kernel = _launch.function(
        "loop.cu", f"gbla_gather_decide<{index}>", prelude=_prelude(policy), name_expressions=names
    )
    c = choice or Choice(None, None, 0, 0, False)
    if entries is not None and entries[0].dtype != bins.dtype:
        entries = None  # listed with ids of another width: read the presence instead
    ids, count = entries or (None, None)
    kernel(
        blocks,
        (THREADS,),
        (
            np.int64(n_in),
            ptr(present),
            ptr(ids),
            ptr(count),
            indptr,
            bins,
            info,
            np.int32(choice is not None),
            ptr(c.state),
            np.int64(c.n),
            np.int64(c.edges),
            np.int32(c.early_exit),
            ptr(None if window is None else window[0]),
            ptr(None if window is None else window[1]),
            ptr(None if window is None else window[2]),
            np.int32(0 if window is None else window[3]),
            np.int64(direct),
        ),
    )


def _prelude(policy=None):
    """loop.cu is compiled behind a policy's rule (the test kernel takes the default's)."""
    return (policy or _direction.DEFAULT_POLICY).cuda_source()
