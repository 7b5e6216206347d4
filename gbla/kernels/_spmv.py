"""Launches the spmv templates of spmv.cu through CuPy: compiled by NVRTC once per generated
struct and index type, and cached in memory (and by CuPy on disk).

:func:`push` and :func:`pull` are the eager products (the host knows the frontier's size);
:func:`device_product` is the product of a loop recorded on the device, which asks the host
nothing: the frontier is binned on the device, the direction chosen there, and push and pull
both launched, the one not chosen returning at once."""

import functools

import numpy as np

from .._backend import _cupy
from . import _codegen, _launch
from ._codegen import INDEX_CTYPES, SpmvTypes
from ._frontier import SLOT
from ._launch import THREADS, grid, ptr, sm_count

PULL = 4  # info slot field: 1 when the product pulls (GBLA_INFO_PULL in spmv.cu)

# Rows with more in-edges than this take a warp each in pull; the rest a thread each. 32 keeps a
# warp's lanes busy on the long rows and the per-row loop short on the others.
LONG_ROW = 32


def kernels(types, index_dtype, *, device_loop=False):
    """The spmv kernels instantiated for ``types`` and the index dtype, on the current device:
    an eager product's set, or (``device_loop``) a device product's, with the gather."""
    name, src = _codegen.struct(types)
    index_ctype = INDEX_CTYPES[np.dtype(index_dtype)]
    kinds = _codegen.DEVICE_KERNELS if device_loop else _codegen.EAGER_KERNELS
    names = tuple(f"{k}<{name}, {index_ctype}>" for k in kinds)
    if device_loop:
        kinds += (_codegen.GATHER,)
        names += (f"{_codegen.GATHER}<{index_ctype}>",)
    return {k: _launch.function("spmv.cu", n, epilogue="\n" + src, name_expressions=names)
            for k, n in zip(kinds, names)}


def push(P, n_out, idx, u_values, offsets, total, types, mask, mask_mode):
    """Dense (values, present) of the push product; ``offsets`` are the frontier's degree prefix
    sums (length nf + 1) and ``total`` their last entry, already on the host."""
    cp = _cupy()
    indptr, indices, values = P
    sr = types.semiring
    z = sr.output_dtype(types.dtype)
    w = cp.full(n_out, sr.add.identity_for(z), dtype=z)
    present = cp.zeros(n_out, np.uint8)
    if total:
        k = kernels(types, indices.dtype)["gbla_spmv_push"]
        k(grid(total), (THREADS,),
          (idx, ptr(u_values if types.uses_u else None), np.int64(len(idx)), offsets, indptr,
           indices, ptr(values if types.uses_a else None), ptr(mask), np.int32(mask_mode), w,
           present))
    return w, present.view(bool)


def long_rows(Q_matrix):
    """Rows of the pull matrix longer than LONG_ROW, computed once per matrix."""
    cache = Q_matrix._cache
    if "long_rows" not in cache:
        cp = _cupy()
        # sync: the count of long rows (once per matrix)
        cache["long_rows"] = cp.nonzero(Q_matrix._degrees() > LONG_ROW)[0].astype(np.int64)
    return cache["long_rows"]


def pull(Q_matrix, u_values, u_present, types, mask, mask_mode):
    """Dense (values, present) of the pull product."""
    cp = _cupy()
    z = types.semiring.output_dtype(types.dtype)
    w = cp.empty(Q_matrix.nrows, dtype=z)
    present = cp.zeros(Q_matrix.nrows, np.uint8)
    _pull_into(Q_matrix, u_values, u_present, types, mask, mask_mode, w, present)
    return w, present.view(bool)


def _pull_into(Q_matrix, u_values, u_present, types, mask, mask_mode, w, present, info=None,
               blocks=None):
    """The pull kernels, writing the rows they find into w and present. ``info``: a device
    product's slot, whose field 4 lets them run (1) or return at once (0); ``blocks``: a fixed
    grid instead of one sized by the rows."""
    indptr, indices, values = Q_matrix._indptr, Q_matrix._indices, Q_matrix._values
    n_out = Q_matrix.nrows
    ks = kernels(types, indices.dtype, device_loop=info is not None)
    a = ptr(values if types.uses_a else None)
    u = ptr(u_values if types.uses_u else None)
    if n_out:
        ks["gbla_spmv_pull"](blocks or grid(n_out), (THREADS,),
                             (np.int64(n_out), indptr, indices, a, u, ptr(u_present), ptr(mask),
                              np.int32(mask_mode), np.int64(LONG_ROW), ptr(info), w, present))
    rows = long_rows(Q_matrix)
    if len(rows):
        ks["gbla_spmv_pull_warp"](blocks or grid(len(rows) * 32), (THREADS,),
                                  (rows, np.int64(len(rows)), indptr, indices, a, u,
                                   ptr(u_present), ptr(mask), np.int32(mask_mode), ptr(info), w,
                                   present))


def _device_blocks():
    """The fixed grid of a device product's kernels: they read their extent from device memory
    and stride over it, so the grid is sized for the GPU, not the frontier."""
    return (sm_count() * 8,)


@functools.lru_cache(maxsize=None)
def _start_kernel():
    return _cupy().ElementwiseKernel("Z identity", "Z w, uint8 present",
                                     "w = identity; present = 0;", name="gbla_spmv_start")


def device_product(P, Q, u_values, u_present, types, mask, mask_mode, *, push, pull,
                   decide=None):
    """Dense (values, present) of a product whose sizes and direction never reach the host.

    ``P``, ``Q``: the push and pull matrices (a Matrix; None when that direction is never
    taken); ``u_values``, ``u_present``: u dense (present None: every entry). ``push`` and
    ``pull`` say which directions may run; with both, ``decide(info)`` enqueues the kernel
    that chooses between them (it writes info[4]) from the slot the gather fills. Everything
    is enqueued on the current stream; nothing is read back."""
    cp = _cupy()
    sr = types.semiring
    z = sr.output_dtype(types.dtype)
    n_out = Q.nrows if pull else P.ncols
    w, present = cp.empty(n_out, z), cp.empty(n_out, np.uint8)
    if n_out:  # the launch contract: w the identity, present zeroed, in one pass
        _start_kernel()(z.type(sr.add.identity_for(z)), w, present)
    info = cp.zeros(SLOT, np.uint64)
    blocks = _device_blocks()
    if push:
        n_in = P.nrows
        ks = kernels(types, P._indices.dtype, device_loop=True)
        bins = cp.empty(3 * max(n_in, 1), P._indices.dtype)
        if n_in:
            ks[_codegen.GATHER](blocks, (THREADS,), (np.int64(n_in), ptr(u_present), P._indptr,
                                                     bins, info))
        if pull:
            decide(info)
        ks["gbla_spmv_push_binned"](
            blocks, (THREADS,),
            (bins, np.int64(n_in), info, ptr(u_values if types.uses_u else None),
             P._indptr, P._indices, ptr(P._values if types.uses_a else None), ptr(mask),
             np.int32(mask_mode), w, present))
    if pull:
        if not push:
            info[PULL] = 1
        _pull_into(Q, u_values, u_present, types, mask, mask_mode, w, present, info, blocks)
    return w, present.view(bool)


__all__ = ["SpmvTypes", "push", "pull", "kernels", "device_product", "LONG_ROW"]
