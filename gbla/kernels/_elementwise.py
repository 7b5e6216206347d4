"""Element-wise evaluation of ops on the GPU: CuPy ElementwiseKernels generated from each op's
CUDA expression (so GPU results follow the same C semantics the spmv kernels use)."""

import functools

import numpy as np

from .._backend import _cupy
from .._dtypes import CUDA_TYPES, cuda_literal


@functools.lru_cache(maxsize=None)
def _binary_kernel(name, cuda, positional):
    cp = _cupy()
    body = f"const long long k = i; z = (Z)({cuda});" if positional else f"z = (Z)({cuda});"
    return cp.ElementwiseKernel(
        "T x, T y", "Z z", body, name=f"gbla_ewise_{name}", options=("-std=c++17",)
    )


@functools.lru_cache(maxsize=None)
def _unary_kernel(name, cuda):
    cp = _cupy()
    return cp.ElementwiseKernel(
        "T x", "Z z", f"z = (Z)({cuda});", name=f"gbla_apply_{name}", options=("-std=c++17",)
    )


def binary(op, x, y, dtype):
    """op(x, y) with both operands cast to ``dtype``; the output has op's result dtype."""
    cp = _cupy()
    x = x.astype(dtype, copy=False)
    y = y.astype(dtype, copy=False)
    out = cp.empty(max(x.size, y.size), dtype=op.result_dtype(dtype))
    _binary_kernel(op.name, op.cuda, op.positional)(x, y, out)
    return out


def unary(op, x, dtype):
    cp = _cupy()
    x = x.astype(dtype, copy=False)
    out = cp.empty(x.size, dtype=op.result_dtype(dtype))
    _unary_kernel(op.name, op.cuda)(x, out)
    return out


@functools.lru_cache(maxsize=None)
def _reduce_kernel(name, cuda, ctype, identity):
    cp = _cupy()
    preamble = (
        f"template <typename Z> __device__ __forceinline__ Z gbla_monoid_{name}(Z x, Z y)"
        f" {{ return (Z)({cuda}); }}"
    )
    return cp.ReductionKernel(
        "T x, bool p",
        "T y",
        f"(p ? x : (T)({identity}))",
        f"gbla_monoid_{name}(a, b)",
        "y = a",
        identity,
        name=f"gbla_reduce_{name}",
        preamble=preamble,
        options=("-std=c++17",),
    )


def reduce(monoid, values, present):
    """The monoid's reduction of the present values (all when ``present`` is None)."""
    cp = _cupy()
    dtype = values.dtype
    if present is None:
        present = cp.ones(values.size, bool)
    lit = cuda_literal(monoid.identity_for(dtype), dtype)
    return _reduce_kernel(monoid.name, monoid.op.cuda, CUDA_TYPES[dtype], lit)(values, present)


@functools.lru_cache(maxsize=None)
def _masked_write_kernel():
    cp = _cupy()
    return cp.ElementwiseKernel(
        "T tv, bool tp, O ov, bool op, bool m, int32 mode, bool replace",
        "O nv, bool npres",
        """
        const bool allow = (mode == 0) || (m == (mode == 1));
        if (allow) { nv = (O)tv; npres = tp; } else { nv = ov; npres = replace ? false : op; }
        """,
        name="gbla_masked_write",
    )


@functools.lru_cache(maxsize=None)
def _masked_update_kernel():
    """masked_write in place: only the positions the mask allows (and, with replace, those it
    does not) are touched, so a traversal's sparse level costs a pass over the mask, not a read
    and a write of the whole output."""
    cp = _cupy()
    return cp.ElementwiseKernel(
        "T tv, bool tp, bool m, int32 mode, bool replace",
        "O ov, bool op",
        """
        const bool allow = (mode == 0) || (m == (mode == 1));
        if (allow) { if (tp) ov = (O)tv; op = tp; } else if (replace) { op = false; }
        """,
        name="gbla_masked_update",
    )


def masked_write(t_values, t_present, o_values, o_present, m, mode, replace, dtype, into=None):
    """The write phase out<m, replace> = t in one pass: (values, present) of the new output,
    new arrays or ``into`` (which may be o_values and o_present themselves: each element reads
    only its own position, and then only the allowed ones are written). ``t_values`` may be a
    scalar (a 0-d CuPy array too); a None presence means every entry is present."""
    cp = _cupy()
    n = o_values.size
    if np.ndim(t_values) == 0:  # a scalar (an assign) broadcasts as a 0-d array of its dtype
        t_values = cp.asarray(t_values)
    t_present = True if t_present is None else t_present
    m = False if m is None else m
    if into is not None and into[0] is o_values and into[1] is o_present and o_present is not None:
        _masked_update_kernel()(t_values, t_present, m, mode, replace, o_values, o_present)
        return o_values, o_present
    if into is None:
        into = (cp.empty(n, dtype=dtype), cp.empty(n, dtype=bool))
    values, present = into
    _masked_write_kernel()(
        t_values,
        t_present,
        o_values,
        True if o_present is None else o_present,
        m,
        mode,
        replace,
        values,
        present,
    )
    return values, present


__all__ = ["binary", "unary", "reduce", "masked_write"]
