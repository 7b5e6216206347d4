"""Generates the CUDA struct a kernel template is instantiated with, from a semiring's (or an
element-wise op's) CUDA expressions and the dtypes of one call, and whole translation units for
nvcc."""

import hashlib
import itertools
from dataclasses import dataclass

import numpy as np

from .._dtypes import BOOL, CUDA_TYPES, INT32, INT64, cuda_literal
from . import _launch

# The kernels an eager product needs, the one its pull adds over rows past HUGE_ROW, and those
# only a product inside a loop recorded on the device adds: compiled as three modules, so that a
# plain mxv never waits for the others.
EAGER_KERNELS = ("gbla_spmv_push", "gbla_spmv_pull", "gbla_spmv_pull_warp")
BLOCK_KERNELS = ("gbla_spmv_pull_block",)
DEVICE_KERNELS = ("gbla_spmv_device",)
SPMV_KERNELS = EAGER_KERNELS + BLOCK_KERNELS + DEVICE_KERNELS
INDEX_CTYPES = {INT32: "int", INT64: "long long"}


@dataclass(frozen=True)
class SpmvTypes:
    """What one mat-vec call instantiates: the semiring, the matrix values' dtype (None for an
    iso pattern), the vector values' dtype, the computation dtype, and vxm's operand order."""

    semiring: object
    a_dtype: object
    u_dtype: np.dtype
    dtype: np.dtype
    flip: bool

    @property
    def uses_a(self):
        op = self.semiring.multiply
        return op.uses_y if self.flip else op.uses_x

    @property
    def uses_u(self):
        op = self.semiring.multiply
        return op.uses_x if self.flip else op.uses_y


def _atomic(monoid, z):
    """The fastest correct atomic for this monoid and output dtype."""
    name = monoid.op.name if monoid.name == monoid.op.name else monoid.name
    if monoid.is_any:
        return "*p = v;"  # any value will do: the last plain store wins
    if name == "plus" and z in (INT32, np.dtype(np.float32), np.dtype(np.float64)):
        return "atomicAdd(p, v);"
    if name == "plus" and z == INT64:
        return "atomicAdd(reinterpret_cast<unsigned long long*>(p), (unsigned long long)v);"
    if name in ("min", "max") and z in (INT32, INT64):
        return f"atomic{name.capitalize()}(p, v);"
    if name == "lor" and z == BOOL:
        return "if (v) *p = true;"
    if name == "land" and z == BOOL:
        return "if (!v) *p = false;"
    if name in _BITWISE_ATOMICS and z == INT32:
        return f"{_BITWISE_ATOMICS[name]}(p, v);"
    if name in _BITWISE_ATOMICS and z == INT64:  # the 64-bit overloads take unsigned words
        return (
            f"{_BITWISE_ATOMICS[name]}(reinterpret_cast<unsigned long long*>(p), "
            "(unsigned long long)v);"
        )
    return "gbla_atomic_cas<Self>(p, v);"


_BITWISE_ATOMICS = {"bor": "atomicOr", "band": "atomicAnd", "bxor": "atomicXor"}


def struct(types):
    """(name, source) of the struct S for ``types``."""
    sr, t = types.semiring, np.dtype(types.dtype)
    z = sr.output_dtype(t)
    add, mul = sr.add, sr.multiply
    terminal = add.terminal_for(z)
    if terminal is None:
        term_expr, has_term = "false", "false"
    elif add.is_any:
        term_expr, has_term = "true", "true"
    else:
        term_expr, has_term = f"z == {cuda_literal(terminal, z)}", "true"
    a_ct = CUDA_TYPES[types.a_dtype] if (types.uses_a and types.a_dtype is not None) else "bool"
    u_ct = CUDA_TYPES[types.u_dtype] if types.uses_u else "bool"
    if not types.uses_a:
        load_a = "return T();"
    elif types.a_dtype is None:
        load_a = "return (T)1;"  # iso pattern: every value is True
    else:
        load_a = "return (T)p[e];"
    load_u = "return (T)p[k];" if types.uses_u else "return T();"
    if mul.positional:
        mult = "return (Z)(k);"
    else:
        x, y = ("u", "a") if types.flip else ("a", "u")
        mult = f"const T x = {x}; const T y = {y}; return (Z)({mul.cuda});"
    body = f"""
    typedef {a_ct} A;
    typedef {u_ct} U;
    typedef {CUDA_TYPES[t]} T;
    typedef {CUDA_TYPES[z]} Z;
    static constexpr bool HAS_TERMINAL = {has_term};
    static constexpr bool IDEMPOTENT = {"true" if add.idempotent else "false"};
    __device__ static __forceinline__ T load_a(const A* __restrict__ p, long long e) {{ {load_a} }}
    __device__ static __forceinline__ T load_u(const U* __restrict__ p, long long k) {{ {load_u} }}
    __device__ static __forceinline__ Z mult(T a, T u, long long k) {{ {mult} }}
    __device__ static __forceinline__ Z add(Z x, Z y) {{ return (Z)({add.op.cuda}); }}
    __device__ static __forceinline__ Z identity() {{
        return {cuda_literal(add.identity_for(z), z)}; }}
    __device__ static __forceinline__ bool is_terminal(Z z) {{ return {term_expr}; }}
    __device__ static __forceinline__ void atomic_combine(Z* p, Z v) {{ {_atomic(add, z)} }}
"""
    digest = hashlib.sha1(body.encode()).hexdigest()[:10]
    name = f"gbla_sr_{sr.name}_{t.name}_{digest}"
    src = (
        f"struct {name} {{\n    typedef {name} Self;{body}}};\n"
        "#pragma nv_diag_suppress 177\n"
    )  # unused x or y in a product that ignores them
    return name, src


@dataclass(frozen=True)
class MapTypes:
    """What an element-wise op over entry lists (entries.cu) instantiates: the op (UnaryOp,
    BinaryOp, or a monoid's op), the stored dtypes of its operands a and b (b None: no second
    operand, as for a unary op), the dtype it computes in and the one it gives, whether a
    stands for the op's second operand (apply's ``left=``), and a monoid's identity (only a
    reduction's)."""

    op: object
    a_dtype: np.dtype
    b_dtype: object
    dtype: np.dtype
    z_dtype: np.dtype
    flip: bool = False
    identity: object = None


def map_struct(types):
    """(name, source) of the struct F for ``types``: f(a, b, i) evaluates the op's expression in
    x and y (a and b, swapped with ``flip``) computed in T, with i (a unary op's position) and k
    (a binary op's) the entry's position, cast to Z as the element-wise kernels cast it."""
    op, t = types.op, np.dtype(types.dtype)
    if types.b_dtype is None:
        uses_a, uses_b = not op.positional, False
    else:
        uses_a, uses_b = (op.uses_y, op.uses_x) if types.flip else (op.uses_x, op.uses_y)
    x, y = ("b", "a") if types.flip else ("a", "b")
    b_ct = "bool" if types.b_dtype is None else CUDA_TYPES[np.dtype(types.b_dtype)]
    z = np.dtype(types.z_dtype)
    body = f"""
    typedef {CUDA_TYPES[np.dtype(types.a_dtype)]} A;
    typedef {b_ct} B;
    typedef {CUDA_TYPES[t]} T;
    typedef {CUDA_TYPES[z]} Z;
    static constexpr bool USES_A = {"true" if uses_a else "false"};
    static constexpr bool USES_B = {"true" if uses_b else "false"};
    __device__ static __forceinline__ Z f(T a, T b, long long i) {{
        const T x = {x}; const T y = {y}; const long long k = i; return (Z)({op.cuda}); }}
"""
    if types.identity is not None:
        body += (
            f"    __device__ static __forceinline__ Z identity() "
            f"{{ return {cuda_literal(types.identity, z)}; }}\n"
        )
    digest = hashlib.sha1(body.encode()).hexdigest()[:10]
    name = f"gbla_map_{op.name}_{digest}"
    # x, y or k unused by most expressions
    return name, f"#pragma nv_diag_suppress 177\nstruct {name} {{{body}}};\n"


def spmv_translation_unit(type_list, index_dtypes=(INT32, INT64)):
    """One .cu translation unit instantiating every spmv kernel for each SpmvTypes given:
    what CI compiles with nvcc, the same code NVRTC compiles at run time."""
    parts = [_launch.source("spmv.cu")]
    seen = set()
    for types in type_list:
        name, src = struct(types)
        if name in seen:
            continue
        seen.add(name)
        parts.append(src)
        # Taking each kernel's address instantiates it without spelling out its signature.
        uses = ", ".join(
            f"(void*)&{kernel}<{name}, {INDEX_CTYPES[idx]}>"
            for kernel, idx in itertools.product(SPMV_KERNELS, index_dtypes)
        )
        # int32 ids with int64 row pointers (a DistMatrix's rows): the eager kernels
        uses += "".join(
            f", (void*)&{kernel}<{name}, int, long long>"
            for kernel in EAGER_KERNELS + BLOCK_KERNELS
        )
        parts.append(f"void* const {name}_kernels[] = {{{uses}}};")
    return "\n".join(parts) + "\n"


def registry_types(semiring_list):
    """Every (semiring, dtype) the registry offers, in both operand orders where it matters."""
    out = []
    for sr in semiring_list:
        flips = (False,) if sr.multiply.commutative else (False, True)
        for dtype, flip in itertools.product(sr.dtypes, flips):
            out.append(SpmvTypes(sr, dtype, dtype, dtype, flip))
        out.append(SpmvTypes(sr, None, sr.dtypes[0], sr.dtypes[0], False))  # iso pattern
    return out
