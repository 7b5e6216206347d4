"""Launches the spmv templates of spmv.cu through CuPy: compiled by NVRTC once per generated
struct and index type, and cached in memory (and by CuPy on disk)."""

import functools

import numpy as np

from .._backend import _cupy
from . import _codegen
from ._codegen import INDEX_CTYPES, SpmvTypes

THREADS = 256
# Rows with more in-edges than this take a warp each in pull; the rest a thread each. 32 keeps a
# warp's lanes busy on the long rows and the per-row loop short on the others.
LONG_ROW = 32


@functools.lru_cache(maxsize=None)
def _device_limits():
    cp = _cupy()
    return cp.cuda.Device().attributes["MultiProcessorCount"]


@functools.lru_cache(maxsize=None)
def _module(struct_name, struct_src, index_ctype):
    cp = _cupy()
    names = [f"{k}<{struct_name}, {index_ctype}>" for k in _codegen.SPMV_KERNELS]
    code = _codegen.source("spmv.cu") + "\n" + struct_src
    module = cp.RawModule(code=code, options=("-std=c++17",), name_expressions=names)
    return {k: module.get_function(n) for k, n in zip(_codegen.SPMV_KERNELS, names)}


def kernels(types, index_dtype):
    name, src = _codegen.struct(types)
    return _module(name, src, INDEX_CTYPES[np.dtype(index_dtype)])


def _grid(work, per_block=THREADS):
    return (int(max(1, min(-(-work // per_block), _device_limits() * 32))),)


def _ptr(a):
    return np.uint64(0) if a is None else a


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
        k(_grid(total), (THREADS,),
          (idx, _ptr(u_values if types.uses_u else None), np.int64(len(idx)), offsets, indptr,
           indices, _ptr(values if types.uses_a else None), _ptr(mask), np.int32(mask_mode), w,
           present))
    return w, present.view(bool)


def long_rows(Q_matrix):
    """Rows of the pull matrix longer than LONG_ROW, computed once per matrix."""
    cache = Q_matrix._cache
    if "long_rows" not in cache:
        cp = _cupy()
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
    a = _ptr(values if types.uses_a else None)
    u = _ptr(u_values if types.uses_u else None)
    if n_out:
        ks["gbla_spmv_pull"](_grid(n_out), (THREADS,),
                             (np.int64(n_out), indptr, indices, a, u, _ptr(u_present), _ptr(mask),
                              np.int32(mask_mode), np.int64(LONG_ROW), w, present))
    rows = long_rows(Q_matrix)
    if len(rows):
        ks["gbla_spmv_pull_warp"](_grid(len(rows) * 32), (THREADS,),
                                  (rows, np.int64(len(rows)), indptr, indices, a, u,
                                   _ptr(u_present), _ptr(mask), np.int32(mask_mode), w, present))
    return w, present.view(bool)


__all__ = ["SpmvTypes", "push", "pull", "kernels", "LONG_ROW"]
