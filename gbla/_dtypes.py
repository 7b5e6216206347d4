"""The dtypes gbla computes in, their CUDA names, and exact CUDA literals of their values."""

import math

import numpy as np

BOOL, INT32, INT64, FP32, FP64 = (
    np.dtype(t) for t in (np.bool_, np.int32, np.int64, np.float32, np.float64)
)
DTYPES = (BOOL, INT32, INT64, FP32, FP64)
NUMERIC = (INT32, INT64, FP32, FP64)
INTEGER = (INT32, INT64)  # what the bitwise ops take: a word of bits, two's complement
CUDA_TYPES = {BOOL: "bool", INT32: "int", INT64: "long long", FP32: "float", FP64: "double"}

# Lossless widening of dtypes gbla does not compute in; anything else is refused.
_WIDEN = {
    np.dtype(t): w
    for t, w in [
        (np.int8, INT32),
        (np.int16, INT32),
        (np.uint8, INT32),
        (np.uint16, INT32),
        (np.uint32, INT64),
        (np.float16, FP32),
    ]
}


def storage_dtype(dtype):
    """The gbla dtype that holds ``dtype`` losslessly, or None when there is none."""
    dtype = np.dtype(dtype)
    if dtype in DTYPES:
        return dtype
    return _WIDEN.get(dtype)


def cuda_literal(value, dtype):
    """A CUDA C expression of exactly ``value`` in ``dtype``."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return "true" if bool(value) else "false"
    if dtype.kind == "i":
        v = int(value)
        info = np.iinfo(dtype)
        if dtype == INT64 and v == info.min:
            return "(-9223372036854775807LL - 1)"
        if dtype == INT32 and v == info.min:
            return "(-2147483647 - 1)"
        return f"{v}LL" if dtype == INT64 else str(v)
    v = float(value)
    if math.isnan(v):
        return (
            "__int_as_float(0x7fc00000)"
            if dtype == FP32
            else "__longlong_as_double(0x7ff8000000000000LL)"
        )
    if math.isinf(v):
        if dtype == FP32:
            return "__int_as_float(0x7f800000)" if v > 0 else "__int_as_float(0xff800000)"
        return (
            "__longlong_as_double(0x7ff0000000000000LL)"
            if v > 0
            else "__longlong_as_double((long long)0xfff0000000000000ULL)"
        )
    if dtype == FP32:
        return f"{float(np.float32(v)).hex()}f"
    return float(v).hex()
