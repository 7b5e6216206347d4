"""Launches the spmv templates of spmv.cu through CuPy: compiled by NVRTC once per generated
struct and index type, and cached in memory (and by CuPy on disk)."""

import numpy as np

from .._backend import _cupy
from . import _codegen, _launch
from ._codegen import INDEX_CTYPES, SpmvTypes
from ._launch import THREADS, grid, ptr

# Rows with more in-edges than this take a warp each in pull; the rest a thread each. 32 keeps a
# warp's lanes busy on the long rows and the per-row loop short on the others.
LONG_ROW = 32


def kernels(types, index_dtype):
    """The spmv kernels instantiated for ``types`` and the index dtype, on the current device."""
    name, src = _codegen.struct(types)
    index_ctype = INDEX_CTYPES[np.dtype(index_dtype)]
    names = tuple(f"{k}<{name}, {index_ctype}>" for k in _codegen.SPMV_KERNELS)
    return {k: _launch.function("spmv.cu", n, epilogue="\n" + src, name_expressions=names)
            for k, n in zip(_codegen.SPMV_KERNELS, names)}


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
    cp = _cupy()
    indptr, indices, values = Q_matrix._indptr, Q_matrix._indices, Q_matrix._values
    n_out = Q_matrix.nrows
    z = types.semiring.output_dtype(types.dtype)
    w = cp.empty(n_out, dtype=z)
    present = cp.zeros(n_out, np.uint8)
    ks = kernels(types, indices.dtype)
    a = ptr(values if types.uses_a else None)
    u = ptr(u_values if types.uses_u else None)
    if n_out:
        ks["gbla_spmv_pull"](grid(n_out), (THREADS,),
                             (np.int64(n_out), indptr, indices, a, u, ptr(u_present), ptr(mask),
                              np.int32(mask_mode), np.int64(LONG_ROW), w, present))
    rows = long_rows(Q_matrix)
    if len(rows):
        ks["gbla_spmv_pull_warp"](grid(len(rows) * 32), (THREADS,),
                                  (rows, np.int64(len(rows)), indptr, indices, a, u,
                                   ptr(u_present), ptr(mask), np.int32(mask_mode), w, present))
    return w, present.view(bool)


__all__ = ["SpmvTypes", "push", "pull", "kernels", "LONG_ROW"]
