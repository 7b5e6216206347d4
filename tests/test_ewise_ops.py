"""ewise_add, ewise_mult, apply, reduce and assign against the oracle of the GraphBLAS C API
write phase (out<mask, replace> accum= t, from test_mxv_oracle), with every mask kind, accum and
replace, on both devices; and the Vector basics they rest on.

The oracle of each operation's t is a loop over positions:
    ewise_add   op(u(i), v(i)) where both are present, the lone value where one is (cast to
                op's result dtype)
    ewise_mult  op(u(i), v(i)) where both are present
    apply       f(u(i)) (rowindex: i), op(u(i), s) with right=s, op(s, u(i)) with left=s
    assign      the scalar at every position, or the value vector's entries
computed in result_type of the operands' dtypes. Values are small integers: results are exact.
"""

import functools
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbla
from gbla import semirings
from gbla.semirings import binary, unary

from .conftest import host
from .test_mxv_oracle import (
    FOLD,
    MULTIPLY,
    Expected,
    assert_matches,
    cast,
    draw_values,
    make_mask,
    op_result_dtype,
    oracle_allowed,
    oracle_write,
    out_dtype_for,
    small_graphs,
)

BINARY_OPS = [op for op in vars(binary).values() if not op.positional]
UNARY_OPS = list(vars(unary).values())
MONOIDS = list(vars(semirings.monoid).values())

UNARY = {
    "identity": lambda x, i: x,
    "ainv": lambda x, i: -x,
    "abs": lambda x, i: abs(x),
    "lnot": lambda x, i: not x,
    "one": lambda x, i: 1,
    "floor": lambda x, i: np.floor(x),
    "rowindex": lambda x, i: i,
}


# ============================================================================== data
def vector_data(rng, size, dtype, kind):
    """(values, present) on the host: 'sparse' (explicit zero at 0), 'full' or 'empty'."""
    dtype = np.dtype(dtype)
    values = draw_values(rng, size, dtype)
    if kind == "full":
        return values, np.ones(size, bool)
    if kind == "empty":
        return np.zeros(size, dtype), np.zeros(size, bool)
    present = rng.random(size) < 0.55
    if size:
        present[0], values[0] = True, 0
    return np.where(present, values, np.zeros((), dtype)).astype(dtype), present


def to_gbla(data, device):
    """A Vector from (values, present): from_dense when full, else from COO in reverse order."""
    values, present = data
    if present.all():
        return gbla.Vector.from_dense(values, device=device)
    idx = np.flatnonzero(present)[::-1]
    return gbla.Vector.from_coo(idx, values[idx], len(values), dtype=values.dtype, device=device)


PAIRS = [
    ("sparse", "sparse"),
    ("full", "sparse"),
    ("sparse", "empty"),
    ("full", "full"),
    ("empty", "empty"),
]


@functools.lru_cache(maxsize=None)
def pair_data(u_dtype, v_dtype, which):
    """u, v, a mask and an old output pattern of one size (9; 0 when which % 7 == 6)."""
    rng = np.random.default_rng([which, len(u_dtype), len(v_dtype)])
    ukind, vkind = PAIRS[which % len(PAIRS)]
    size = 0 if which % 7 == 6 else 9
    u = vector_data(rng, size, u_dtype, ukind)
    v = vector_data(rng, size, v_dtype, vkind)
    mask_dtype = (np.bool_, np.int32, np.float64)[which % 3]
    mask = (rng.integers(0, 3, size).astype(mask_dtype), rng.random(size) < 0.6)
    out = (rng.integers(-1, 3, size), rng.random(size) < 0.5)
    return u, v, mask, out


# ============================================================================== the oracle of t
def t_ewise(op_name, u, v, union):
    (uv, up), (vv, vp) = u, v
    T = np.result_type(uv.dtype, vv.dtype)
    R = op_result_dtype(op_name, T)
    cands = []
    for i, (x, px, y, py) in enumerate(zip(uv.tolist(), up, vv.tolist(), vp)):
        if px and py:
            if op_name == "secondi":
                cands.append((i,))
            else:
                cands.append((cast(MULTIPLY[op_name](cast(x, T), cast(y, T)), R),))
        elif union and (px or py):
            cands.append((cast(x if px else y, R),))
        else:
            cands.append(None)
    return Expected(R, tuple(cands))


def t_apply_unary(op_name, u):
    uv, up = u
    R = np.dtype(np.int64) if op_name == "rowindex" else uv.dtype
    return Expected(
        R,
        tuple(
            (cast(UNARY[op_name](x, i), R),) if p else None
            for i, (x, p) in enumerate(zip(uv.tolist(), up))
        ),
    )


def t_apply_bound(op_name, u, scalar, side):
    uv, up = u
    T = np.result_type(uv.dtype, scalar.dtype)
    R = op_result_dtype(op_name, T)
    s = cast(scalar, T)
    cands = []
    for i, (x, p) in enumerate(zip(uv.tolist(), up)):
        if not p:
            cands.append(None)
        elif op_name == "secondi":
            cands.append((i,))
        else:
            args = (cast(x, T), s) if side == "right" else (s, cast(x, T))
            cands.append((cast(MULTIPLY[op_name](*args), R),))
    return Expected(R, tuple(cands))


def t_assign_scalar(scalar, out_dtype, size):
    return Expected(np.dtype(out_dtype), ((cast(scalar, out_dtype),),) * size)


def t_vector(v):
    vv, vp = v
    return Expected(vv.dtype, tuple((x,) if p else None for x, p in zip(vv.tolist(), vp)))


def scalar_for(dtype, choice):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.bool_(choice % 2 == 0)
    return dtype.type((-1, 0, 2)[choice % 3])


# ============================================================================== the cases
def _ewise_call(fn, op):
    return lambda u, v, **kw: fn(u, v, op, **kw)


def _apply_call(op, **bound):
    return lambda u, v, **kw: gbla.apply(u, op, **bound, **kw)


def _assign_vector_call(u, v, *, out, **kw):
    return gbla.assign(out, v, **kw)


def operation_cases(operation, choice):
    """(label, u dtype, v dtype, call(u, v, **kw), oracle of t(u, v)) for every op and dtype
    the operation takes; apply reads u alone, assign_vector assigns v into out."""
    if operation in ("ewise_add", "ewise_mult"):
        union = operation == "ewise_add"
        ops = BINARY_OPS + ([] if union else [binary.secondi])
        for op in ops:
            for dtype in op.dtypes:
                yield (
                    f"{op.name} {dtype}",
                    dtype.name,
                    dtype.name,
                    _ewise_call(getattr(gbla, operation), op),
                    functools.partial(lambda u, v, name: t_ewise(name, u, v, union), name=op.name),
                )
    elif operation == "apply_unary":
        for op in UNARY_OPS:
            for dtype in op.dtypes:
                yield (
                    f"{op.name} {dtype}",
                    dtype.name,
                    dtype.name,
                    _apply_call(op),
                    functools.partial(lambda u, v, name: t_apply_unary(name, u), name=op.name),
                )
    elif operation in ("apply_left", "apply_right"):
        side = operation.split("_")[1]
        for op in BINARY_OPS + [binary.secondi]:
            for di, dtype in enumerate(op.dtypes):
                s = scalar_for(dtype, choice + di)
                yield (
                    f"{op.name} {dtype} {side}={s!r}",
                    dtype.name,
                    dtype.name,
                    _apply_call(op, **{side: s}),
                    functools.partial(
                        lambda u, v, name, s: t_apply_bound(name, u, s, side), name=op.name, s=s
                    ),
                )
    elif operation == "assign_vector":
        for dtype in ("bool", "int32", "int64", "float32", "float64"):
            yield (f"a {dtype} vector", dtype, dtype, _assign_vector_call, lambda u, v: t_vector(v))
    else:
        raise AssertionError(operation)


def _all_finite(t):
    return all(np.isfinite(v) for c in t.cands if c is not None for v in c if isinstance(v, float))


def check(
    label,
    call,
    oracle_t,
    u_data,
    v_data,
    mask_data,
    out_pattern,
    *,
    mask_kind,
    accum,
    replace,
    with_out,
    choice,
    device,
):
    """One call against the oracle; returns nothing, asserts everything."""
    t = oracle_t(u_data, v_data)
    out_host = None
    if with_out:
        dt = out_dtype_for(t.dtype, accum, choice)
        if dt.kind in "iu" and not _all_finite(t):
            # inf or NaN (div by 0) into an integer is undefined in C, as in the GraphBLAS C
            # API: NumPy gives INT_MIN, CUDA INT_MAX. Such a t goes into a float output.
            dt = np.dtype(np.float64)
        out_host = (out_pattern[0].astype(dt), out_pattern[1])
    allowed = None if mask_kind is None else oracle_allowed(mask_kind, *mask_data)
    expected = oracle_write(t, out_host, allowed, accum, replace)
    where = f"{label} mask={mask_kind} accum={accum} replace={replace} out={with_out}"
    out = None if out_host is None else to_gbla(out_host, device)
    w = call(
        to_gbla(u_data, device),
        to_gbla(v_data, device),
        mask=make_mask(to_gbla(mask_data, device), mask_kind),
        accum=None if accum is None else getattr(binary, accum),
        replace=replace,
        out=out,
    )
    if with_out:
        assert w is out, where
    assert_matches(w, expected, where)


MASKS = [None, "S", "V", "~S", "~V"]
ACCUMS = [None, "plus", "min", "second"]
COMBOS = list(itertools.product(MASKS, ACCUMS, [False, True]))
OPERATIONS = [
    "ewise_add",
    "ewise_mult",
    "apply_unary",
    "apply_left",
    "apply_right",
    "assign_vector",
]


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize(
    "mask_kind, accum, replace",
    COMBOS,
    ids=[f"mask={m}-accum={a}-replace={r}" for m, a, r in COMBOS],
)
def test_elementwise_operations_match_the_oracle(operation, mask_kind, accum, replace, device):
    # Every op in every dtype it takes, on two (u, v) pairs rotating through empty, full,
    # sparse and size-0 vectors; with an old output (and, without accum or replace, without).
    p = COMBOS.index((mask_kind, accum, replace))
    for ci, (label, u_dt, v_dt, call, oracle_t) in enumerate(operation_cases(operation, p)):
        for j in range(2):
            choice = ci * 2 + j + p * 3
            u, v, mask, out = pair_data(u_dt, v_dt, choice % 14)
            kw = dict(
                mask_kind=mask_kind, accum=accum, replace=replace, choice=choice, device=device
            )
            check(f"{operation} {label}", call, oracle_t, u, v, mask, out, with_out=True, **kw)
            if accum is None and not replace and not operation.startswith("assign"):
                check(f"{operation} {label}", call, oracle_t, u, v, mask, out, with_out=False, **kw)


@pytest.mark.parametrize(
    "mask_kind, accum, replace",
    COMBOS,
    ids=[f"mask={m}-accum={a}-replace={r}" for m, a, r in COMBOS],
)
def test_assign_scalar_matches_the_oracle(mask_kind, accum, replace, device):
    p = COMBOS.index((mask_kind, accum, replace))
    for di, dtype in enumerate(["bool", "int32", "int64", "float32", "float64"]):
        for j in range(3):
            choice = di * 3 + j + p
            u, _, mask, out_pattern = pair_data(dtype, dtype, choice % 14)
            out_dtype = out_dtype_for(np.dtype(dtype), accum, choice)
            scalar = scalar_for(out_dtype, choice)
            out_host = (out_pattern[0].astype(out_dtype), out_pattern[1])
            t = t_assign_scalar(scalar, out_dtype, len(out_host[1]))
            allowed = None if mask_kind is None else oracle_allowed(mask_kind, *mask)
            expected = oracle_write(t, out_host, allowed, accum, replace)
            out = to_gbla(out_host, device)
            w = gbla.assign(
                out,
                scalar,
                mask=make_mask(to_gbla(mask, device), mask_kind),
                accum=None if accum is None else getattr(binary, accum),
                replace=replace,
            )
            assert w is out
            assert_matches(w, expected, f"assign {scalar!r} into {out_dtype} mask={mask_kind}")


MIXED = [("int32", "float64"), ("bool", "int32"), ("int64", "float32"), ("float32", "bool")]


@pytest.mark.parametrize("u_dtype, v_dtype", MIXED)
def test_ewise_of_mixed_dtypes_computes_in_the_promoted_dtype(u_dtype, v_dtype, device):
    # int32 (+) float64 computes in float64; a lone value is cast to the result dtype too.
    for which in range(5):
        u, v, _, _ = pair_data(u_dtype, v_dtype, which)
        for op in (binary.plus, binary.min, binary.eq, binary.second, binary.first):
            if np.result_type(u_dtype, v_dtype) not in op.dtypes:
                continue
            for operation, union in (("ewise_add", True), ("ewise_mult", False)):
                w = getattr(gbla, operation)(to_gbla(u, device), to_gbla(v, device), op)
                assert_matches(
                    w,
                    t_ewise(op.name, u, v, union),
                    f"{operation} {op.name} {u_dtype} {v_dtype} pair {which}",
                )


# ============================================================================== drawn examples
def test_ewise_add_is_the_union_and_ewise_mult_the_intersection(device):
    #        0    1    2    3    4
    # u = [  1    .    3    .   -2 ]
    # v = [ 10   20    .    .    5 ]
    u = gbla.Vector.from_coo([0, 2, 4], [1, 3, -2], 5, device=device)
    v = gbla.Vector.from_coo([0, 1, 4], [10, 20, 5], 5, device=device)
    # add:  [ 11  20   3   .   3 ]      mult (times): [ 10  .  .  .  -10 ]
    assert host(gbla.ewise_add(u, v, binary.plus).to_dense(0)).tolist() == [11, 20, 3, 0, 3]
    w = gbla.ewise_mult(u, v, binary.times)
    assert host(w.to_coo()[0]).tolist() == [0, 4]
    assert host(w.to_coo()[1]).tolist() == [10, -10]
    # minus is not commutative: u - v where both, the lone value elsewhere.
    w = gbla.ewise_add(u, v, "minus")
    assert host(w.to_dense(0)).tolist() == [-9, 20, 3, 0, -7]
    # A comparison gives bool; the lone values are cast to bool too.
    w = gbla.ewise_add(u, v, binary.lt)
    assert w.dtype == np.bool_
    assert host(w.to_dense(False)).tolist() == [True, True, True, False, True]


def test_ewise_with_mask_accum_and_replace_on_a_drawn_example(device):
    #          0   1   2   3
    # u    = [ 1   2   .   4 ]
    # v    = [ 1   .   3   . ]
    # out  = [ 5   .   7   9 ]
    # m    = [ 1   0   .   1 ]      value mask m.V allows 0 and 3
    # ewise_add plus: t = [ 2  2  3  4 ]; accum min into out where allowed:
    #   out(0) = min(5, 2) = 2, out(3) = min(9, 4) = 4; 1 and 2 not allowed:
    #   kept without replace (out(1) absent, out(2) = 7), deleted with replace.
    u = gbla.Vector.from_coo([0, 1, 3], [1, 2, 4], 4, device=device)
    v = gbla.Vector.from_coo([0, 2], [1, 3], 4, device=device)
    m = gbla.Vector.from_coo([0, 1, 3], [1, 0, 1], 4, device=device)
    out = gbla.Vector.from_coo([0, 2, 3], [5, 7, 9], 4, device=device)
    w = gbla.ewise_add(u, v, binary.plus, mask=m.V, accum=binary.min, out=out)
    assert w is out
    assert host(out.to_dense(-1)).tolist() == [2, -1, 7, 4]
    out = gbla.Vector.from_coo([0, 2, 3], [5, 7, 9], 4, device=device)
    gbla.ewise_add(u, v, binary.plus, mask=m.V, accum=binary.min, replace=True, out=out)
    assert host(out.to_dense(-1)).tolist() == [2, -1, -1, 4]
    # The structural mask m.S also allows 1 (present, value 0): out(1) = t(1) = 2.
    out = gbla.Vector.from_coo([0, 2, 3], [5, 7, 9], 4, device=device)
    gbla.ewise_add(u, v, binary.plus, mask=m.S, accum=binary.min, out=out)
    assert host(out.to_dense(-1)).tolist() == [2, 2, 7, 4]
    # A bare Vector as mask means its value mask.
    out = gbla.Vector.from_coo([0, 2, 3], [5, 7, 9], 4, device=device)
    gbla.ewise_add(u, v, binary.plus, mask=m, accum=binary.min, replace=True, out=out)
    assert host(out.to_dense(-1)).tolist() == [2, -1, -1, 4]


def test_apply_unary_binary_bound_and_positional(device):
    # u = [ .  3  -2  .  0 ]   (the 0 is an entry)
    u = gbla.Vector.from_coo([1, 2, 4], np.array([3, -2, 0], np.int32), 5, device=device)
    assert host(gbla.apply(u, unary.ainv).to_dense(9)).tolist() == [9, -3, 2, 9, 0]
    assert host(gbla.apply(u, unary.abs).to_dense(9)).tolist() == [9, 3, 2, 9, 0]
    w = gbla.apply(u, unary.rowindex)
    assert w.dtype == np.int64
    assert host(w.to_coo()[1]).tolist() == [1, 2, 4]
    # right=s: u(i) - 1;  left=s: 1 - u(i)
    s = np.int32(1)
    assert host(gbla.apply(u, binary.minus, right=s).to_dense(9)).tolist() == [9, 2, -3, 9, -1]
    assert host(gbla.apply(u, binary.minus, left=s).to_dense(9)).tolist() == [9, -2, 3, 9, 1]
    w = gbla.apply(u, binary.gt, right=s)
    assert w.dtype == np.bool_
    assert host(w.to_coo()[1]).tolist() == [True, False, False]
    # A float scalar promotes: int32 and float64 compute in float64.
    w = gbla.apply(u, binary.times, right=0.5)
    assert w.dtype == np.float64
    assert host(w.to_coo()[1]).tolist() == [1.5, -1.0, 0.0]


def test_assign_scalar_and_vector_on_a_drawn_example(device):
    # out = [ 1  .  3  . ], m = [ T  T  .  F ] (bool)
    out = gbla.Vector.from_coo([0, 2], [1.0, 3.0], 4, device=device)
    m = gbla.Vector.from_coo([0, 1, 3], [True, True, False], 4, device=device)
    # out<m.V> = 7: positions 0 and 1 become 7; 2 stays 3; 3 stays absent.
    assert gbla.assign(out, 7, mask=m.V) is out
    assert host(out.to_dense(-1)).tolist() == [7.0, 7.0, 3.0, -1.0]
    # out<~m.S> plus= 10: only position 2 allowed: 3 + 10.
    gbla.assign(out, 10, mask=~m.S, accum=binary.plus)
    assert host(out.to_dense(-1)).tolist() == [7.0, 7.0, 13.0, -1.0]
    # No mask: every position gets the scalar.
    gbla.assign(out, 0)
    assert host(out.to_dense()).tolist() == [0.0, 0.0, 0.0, 0.0]
    # A Vector value [ .  5  .  . ] under m.S (allows 0, 1 and 3): out takes its entries and
    # loses the others there; position 2 is not allowed and keeps its 0.
    value = gbla.Vector.from_coo([1], [5.0], 4, device=device)
    gbla.assign(out, value, mask=m.S)
    assert host(out.to_dense(-1)).tolist() == [-1.0, 5.0, 0.0, -1.0]


def test_an_accum_that_does_not_take_the_dtypes_raises_and_leaves_out_alone(device):
    # plus takes no bool: bool out plus= bool t cannot be computed.
    out = gbla.Vector.from_coo([0], [True], 3, device=device)
    u = gbla.Vector.from_dense(np.array([True, False, True]), device=device)
    with pytest.raises(gbla.DomainMismatch):
        gbla.ewise_add(u, u, binary.lor, accum=binary.plus, out=out)
    assert host(out.to_dense(False)).tolist() == [True, False, False] and out.nvals == 1


# ============================================================================== reduce
IDENTITY = {  # per monoid and dtype kind: bool, int, float
    "plus": (None, 0, 0.0),
    "times": (None, 1, 1.0),
    "min": (True, "max", np.inf),
    "max": (False, "min", -np.inf),
    "any": (False, 0, 0.0),
    "lor": (False, None, None),
    "land": (True, None, None),
    "lxor": (False, None, None),
    "eq": (True, None, None),
    "bor": (None, 0, None),
    "band": (None, -1, None),
    "bxor": (None, 0, None),
}


def expected_identity(name, dtype):
    value = IDENTITY[name]["bif".index(dtype.kind)]
    if value in ("max", "min"):
        value = getattr(np.iinfo(dtype), value)
    return value


def test_reduce_matches_the_oracle_for_every_monoid_and_dtype(device):
    rng = np.random.default_rng(5)
    for monoid in MONOIDS:
        for dtype in monoid.dtypes:
            for kind in ("empty", "sparse", "full"):
                values, present = vector_data(rng, 9, dtype, kind)
                u = to_gbla((values, present), device)
                for by in (monoid, monoid.name):
                    r = gbla.reduce(u, by)
                    where = f"{monoid.name} {dtype} {kind}"
                    assert isinstance(r, np.generic) and r.dtype == dtype, where
                    present_values = values[present].tolist()
                    if not present_values:
                        want = expected_identity(monoid.name, dtype)
                    elif monoid.name == "any":
                        want = values[np.flatnonzero(present)[0]]
                    else:
                        want = cast(FOLD[monoid.name](present_values), dtype)
                    assert r.item() == want, f"{where}: {r!r}, expected {want!r}"


def test_reduce_on_a_drawn_example(device):
    # u = [ .  4  -1  .  2 ]
    u = gbla.Vector.from_coo([4, 1, 2], [2, 4, -1], 5, device=device)
    assert gbla.reduce(u, "plus") == 5
    assert gbla.reduce(u, semirings.monoid.min) == -1
    assert gbla.reduce(u, "max") == 4
    assert gbla.reduce(u, "times") == -8
    assert gbla.reduce(u, "any") == 4  # the lowest present index, 1
    empty = gbla.Vector.new(5, np.float32, device=device)
    assert gbla.reduce(empty, "min") == np.float32(np.inf)
    assert gbla.reduce(empty, "plus").dtype == np.float32


# ============================================================================== Vector basics
def test_to_dense_fills_missing_entries_and_requires_a_fill_when_some_are_missing(device):
    # u = [ .  5  .  0 ]   (size 4; the 0 is an entry)
    u = gbla.Vector.from_coo([3, 1], [0, 5], 4, device=device)
    assert u.nvals == 2
    assert host(u.to_dense(-1)).tolist() == [-1, 5, -1, 0]
    with pytest.raises(gbla.InvalidValue):
        u.to_dense()
    full = gbla.Vector.from_dense(np.array([1.5, 2.5]), device=device)
    assert host(full.to_dense()).tolist() == [1.5, 2.5]
    # Every entry present by COO: no fill needed either.
    assert host(gbla.Vector.from_coo([1, 0], [2, 1], 2, device=device).to_dense()).tolist() == [
        1,
        2,
    ]
    # A fill the dtype cannot hold widens the result instead.
    w = gbla.Vector.from_coo([0], np.array([3], np.int32), 2, device=device).to_dense(np.inf)
    assert w.dtype == np.float64 and host(w).tolist() == [3.0, np.inf]


def test_to_coo_gives_sorted_int64_indices_in_new_arrays(device):
    idx_in = np.array([7, 2, 5, 0], np.int32)
    val_in = np.array([70, 20, 50, 0], np.int16)
    u = gbla.Vector.from_coo(idx_in, val_in, 8, device=device)
    idx, vals = u.to_coo()
    assert host(idx).dtype == np.int64
    assert host(idx).tolist() == [0, 2, 5, 7]
    assert host(vals).tolist() == [0, 20, 50, 70]
    assert u.dtype == np.int32  # int16 widens losslessly
    idx[0] = 3  # the arrays are the caller's: the vector does not see this
    assert host(u.to_coo()[0]).tolist() == [0, 2, 5, 7]
    assert idx_in.tolist() == [7, 2, 5, 0] and val_in.tolist() == [70, 20, 50, 0]
    assert u.nvals == 4 and u.size == 8 and u.shape == (8,)


def test_from_coo_with_a_repeated_index_raises_unless_dup_op_combines(device):
    # indices [3, 1, 3], values [10, 20, 30]: index 3 twice.
    with pytest.raises(gbla.DuplicateIndex):
        gbla.Vector.from_coo([3, 1, 3], [10, 20, 30], 5, device=device)
    summed = gbla.Vector.from_coo([3, 1, 3], [10, 20, 30], 5, dup_op=binary.plus, device=device)
    assert host(summed.to_dense(0)).tolist() == [0, 20, 0, 40, 0]
    first = gbla.Vector.from_coo([3, 1, 3], [10, 20, 30], 5, dup_op=binary.first, device=device)
    assert host(first.to_dense(0)).tolist() == [0, 20, 0, 10, 0]
    second = gbla.Vector.from_coo([3, 1, 3], [10, 20, 30], 5, dup_op=binary.second, device=device)
    assert host(second.to_dense(0)).tolist() == [0, 20, 0, 30, 0]


def test_from_coo_with_a_scalar_value_and_new_give_the_dtype_asked_for(device):
    u = gbla.Vector.from_coo([2, 0], True, 3, device=device)
    assert u.dtype == np.bool_ and host(u.to_dense(False)).tolist() == [True, False, True]
    u = gbla.Vector.from_coo([1], 4, 3, dtype=np.float32, device=device)
    assert u.dtype == np.float32 and host(u.to_dense(0)).tolist() == [0.0, 4.0, 0.0]
    e = gbla.Vector.new(4, np.int64, device=device)
    assert e.nvals == 0 and e.dtype == np.int64 and e.size == 4
    assert host(e.to_dense(1)).tolist() == [1, 1, 1, 1]


def test_dup_is_equal_and_independent(device):
    u = gbla.Vector.from_coo([0, 2], [1.0, 2.0], 3, device=device)
    d = u.dup()
    assert d is not u and d.isequal(u)
    gbla.assign(d, 9.0, mask=u.S)
    assert host(d.to_dense(0)).tolist() == [9.0, 0.0, 9.0]
    assert host(u.to_dense(0)).tolist() == [1.0, 0.0, 2.0]


def test_isequal_compares_size_dtype_structure_and_values(device):
    u = gbla.Vector.from_coo([0, 2], [1, 2], 3, dtype=np.int32, device=device)
    assert u.isequal(gbla.Vector.from_coo([2, 0], [2, 1], 3, dtype=np.int32, device=device))
    assert not u.isequal(gbla.Vector.from_coo([0, 2], [1, 2], 3, dtype=np.int64, device=device))
    assert not u.isequal(gbla.Vector.from_coo([0, 2], [1, 3], 3, dtype=np.int32, device=device))
    assert not u.isequal(gbla.Vector.from_coo([0, 1], [1, 2], 3, dtype=np.int32, device=device))
    assert not u.isequal(gbla.Vector.from_coo([0, 2], [1, 2], 4, dtype=np.int32, device=device))
    assert not u.isequal(np.array([1, 0, 2]))
    # Dense and sparse storage of the same vector are equal.
    full = gbla.Vector.from_dense(np.array([1, 2], np.int32), device=device)
    assert full.isequal(gbla.Vector.from_coo([0, 1], [1, 2], 2, dtype=np.int32, device=device))
    nan = gbla.Vector.from_dense(np.array([np.nan, 1.0]), device=device)
    assert nan.isequal(gbla.Vector.from_dense(np.array([np.nan, 1.0]), device=device))


def test_to_device_cpu_gives_an_equal_host_vector(device):
    u = gbla.Vector.from_coo([3, 1], [6, 5], 4, device=device)
    c = u.to_device("cpu")
    assert c.device == "cpu" and c.size == 4 and c.dtype == u.dtype
    idx, vals = c.to_coo()
    assert isinstance(idx, np.ndarray) and isinstance(vals, np.ndarray)
    assert idx.tolist() == [1, 3] and vals.tolist() == [5, 6]
    assert c.isequal(u) and u.isequal(c)
    assert c.to_device(device).device == device
    assert c.to_device(device).isequal(u)


# ============================================================================== select by a vector
def _select_case(seed, x_dtype, t_dtype, sparse):
    rng = np.random.default_rng(seed)
    n = 50
    xi = np.sort(rng.choice(n, 30, replace=False))
    ti = np.sort(rng.choice(n, 35, replace=False))
    xv = rng.integers(-5, 6, len(xi)).astype(x_dtype)
    tv = rng.integers(-5, 6, len(ti)).astype(t_dtype)
    return n, xi, xv, ti, tv


@pytest.mark.parametrize("op", ["<", ">=", "==", binary.ne])
@pytest.mark.parametrize(
    "x_dtype, t_dtype", [(np.float64, np.float64), (np.int32, np.float64), (np.float32, np.int64)]
)
def test_select_against_a_vector_keeps_x_where_both_have_an_entry_and_op_holds(
    device, op, x_dtype, t_dtype
):
    n, xi, xv, ti, tv = _select_case(1, x_dtype, t_dtype, False)
    x = gbla.Vector.from_coo(xi, xv, n, device=device)
    t = gbla.Vector.from_coo(ti, tv, n, device=device)
    compare = {"<": np.less, ">=": np.greater_equal, "==": np.equal}.get(op, np.not_equal)
    dense_t = dict(zip(ti.tolist(), tv.tolist()))
    dt = np.result_type(x_dtype, t_dtype)
    keep = [
        k
        for k, i in enumerate(xi)
        if int(i) in dense_t and compare(dt.type(xv[k]), dt.type(dense_t[int(i)]))
    ]
    got = gbla.select(x, op, t)
    assert got.dtype == x.dtype and got.size == n
    i, v = got.to_coo()
    np.testing.assert_array_equal(host(i), xi[keep])
    np.testing.assert_array_equal(host(v), xv[keep])
    # the operands are left as they were
    np.testing.assert_array_equal(host(x.to_coo()[1]), xv)
    np.testing.assert_array_equal(host(t.to_coo()[0]), ti)


def _auto_equals_eager(body, start, names, **iterate):
    """The arrays (the to_coo of each of ``names``, in order) and the iterations of body's loop
    from start()'s state, recorded (on the device where the vectors are on the GPU) and run
    from Python, asserted equal."""
    runs = {}
    for mode in ("auto", "eager"):
        stats = {}
        out = gbla.iterate(body, start(), mode=mode, stats=stats, **iterate)
        runs[mode] = [host(a) for k in names for a in out[k].to_coo()]
        runs[mode].append(stats["iterations"])
    for a, b in zip(runs["auto"], runs["eager"]):
        np.testing.assert_array_equal(a, b)
    return runs["auto"][:-1], runs["auto"][-1]


def _three_rounds_over_x_equal_eagerly(body, n, xi, xv, device):
    """_auto_equals_eager for three rounds of body over the state x (the entries xi, xv),
    asserting something is left to compare."""
    arrays, _ = _auto_equals_eager(
        body,
        lambda: {"x": gbla.Vector.from_coo(xi, xv, n, device=device)},
        ("x",),
        while_nonempty="x",
        max_iterations=3,
    )
    assert len(arrays[0]) > 0


def test_select_against_a_vector_in_a_loop_equals_it_eagerly(device):
    # the recorded op (over x's entry list, the thunk's value read at each entry) against the
    # same body run from Python
    n, xi, xv, ti, tv = _select_case(2, np.float64, np.float64, False)
    t = gbla.Vector.from_coo(ti, tv, n, device=device)

    def body(s, _):
        s.x = gbla.select(s.x, "<", t)
        s.x = gbla.apply(s.x, binary.minus, right=1.0)

    _three_rounds_over_x_equal_eagerly(body, n, xi, xv, device)


def test_select_against_a_vector_refuses_a_wrong_size_a_nonzero_and_a_non_comparison(device):
    x = gbla.Vector.from_coo([0, 1], [1.0, 2.0], 4, device=device)
    with pytest.raises(gbla.DimensionMismatch, match="thunk.size"):
        gbla.select(x, "<", gbla.Vector.new(3, device=device))
    with pytest.raises(gbla.InvalidValue, match="nonzero"):
        gbla.select(x, "nonzero", x)
    with pytest.raises(gbla.DomainMismatch, match="comparison"):
        gbla.select(x, binary.plus, x)


# ============================================================================== split
def _entries_of(v):
    i, x = v.to_coo()
    return dict(zip(host(i).tolist(), host(x).tolist()))


@pytest.mark.parametrize("thunk", ["number", "scalar", "vector", "nonzero"])
@pytest.mark.parametrize("dense", [False, True], ids=["sparse", "dense"])
def test_split_is_select_and_the_rest_of_x(device, thunk, dense):
    n, xi, xv, ti, tv = _select_case(3, np.float64, np.float64, False)
    x = gbla.Vector.from_coo(xi, xv, n, device=device)
    if dense:  # every position an entry, the CPU's dense path
        x = gbla.Vector.from_dense(host(x.to_dense(0.0)), device=device)
    op, arg = {
        "number": ("<=", 1.0),
        "scalar": (">", gbla.Scalar.from_value(-1.0, device=device)),
        "vector": ("<", gbla.Vector.from_coo(ti, tv, n, device=device)),
        "nonzero": ("nonzero", None),
    }[thunk]
    kept, rest = gbla.split(x, op, arg)
    assert kept.isequal(gbla.select(x, op, arg))
    assert (rest.dtype, rest.size, rest.device) == (x.dtype, n, device)
    mine, theirs, all_ = _entries_of(kept), _entries_of(rest), _entries_of(x)
    assert not set(mine) & set(theirs) and {**mine, **theirs} == all_
    assert mine and theirs  # both sides hold something: the case tells them apart


def test_split_of_a_matrix_keeps_each_entry_on_one_side(device):
    A = gbla.Matrix.from_edges([0, 1, 2, 2], [1, 0, 0, 2], [1.0, 5.0, -2.0, 7.0], device=device)
    for op, arg in (("tril", None), (">", 1.0)):
        kept, rest = gbla.split(A, op, arg)
        assert kept.isequal(gbla.select(A, op, arg))
        both = host(kept.to_scipy().toarray()) + host(rest.to_scipy().toarray())
        np.testing.assert_array_equal(both, host(A.to_scipy().toarray()))
        assert kept.nvals + rest.nvals == A.nvals


def test_split_in_a_loop_equals_it_eagerly(device):
    # delta-stepping's window: the front out of the pending set, the rest left pending, in
    # one op (one kernel over the list where the loop runs on the device)
    n, xi, xv, ti, tv = _select_case(4, np.float64, np.float64, False)

    def body(s, _):
        front, s.x = gbla.split(s.x, "<=", 0.0)
        s.x = gbla.ewise_add(s.x, gbla.apply(front, binary.plus, right=2.0), binary.min)

    _three_rounds_over_x_equal_eagerly(body, n, xi, xv, device)


# ============================================================================== improve
def _improve_oracle(oi, ov, ti, tv, n, better, out_dtype):
    """(out's entries after, the entries written) of improve, entry by entry."""
    out = dict(zip(oi.tolist(), ov.tolist()))
    dt = np.result_type(tv.dtype, out_dtype)
    written = []
    for i, v in zip(ti.tolist(), tv.tolist()):
        if i not in out or better(dt.type(v), dt.type(out[i])):
            out[i] = out_dtype.type(v)
            written.append((i, v))
    return out, written


@pytest.mark.parametrize("better", ["<", ">=", binary.ne])
@pytest.mark.parametrize(
    "t_dtype, out_dtype, out_full",
    [
        (np.float64, np.float64, True),
        (np.float64, np.float64, False),
        (np.int32, np.float64, False),
        (np.float64, np.float32, True),
        (np.int64, np.int32, False),
    ],
)
def test_improve_writes_the_better_values_and_returns_them(
    device, better, t_dtype, out_dtype, out_full
):
    rng = np.random.default_rng(3)
    n = 60
    ti = np.sort(rng.choice(n, 40, replace=False))
    tv = rng.integers(-6, 7, len(ti)).astype(t_dtype)
    oi = np.arange(n) if out_full else np.sort(rng.choice(n, 30, replace=False))
    ov = rng.integers(-6, 7, len(oi)).astype(out_dtype)
    if np.dtype(t_dtype).kind == "f":
        tv[:3] = np.nan  # never better, but taken where out has no entry
    if np.dtype(out_dtype).kind == "f":
        ov[5:7] = np.nan
    compare = {"<": np.less, ">=": np.greater_equal}.get(better, np.not_equal)
    want, written = _improve_oracle(oi, ov, ti, tv, n, compare, np.dtype(out_dtype))
    out = gbla.Vector.from_coo(oi, ov, n, device=device)
    t = gbla.Vector.from_coo(ti, tv, n, device=device)
    got = gbla.improve(out, t, better)
    assert got.dtype == t.dtype and got.size == n and out.dtype == np.dtype(out_dtype)
    i, v = (host(a) for a in got.to_coo())
    np.testing.assert_array_equal(i, [k for k, _ in written])
    np.testing.assert_array_equal(v, np.array([x for _, x in written], t_dtype))
    i, v = (host(a) for a in out.to_coo())
    np.testing.assert_array_equal(i, sorted(want))
    np.testing.assert_array_equal(v, np.array([want[k] for k in sorted(want)], out_dtype))
    np.testing.assert_array_equal(host(t.to_coo()[1]), tv)  # t left as it was


@pytest.mark.parametrize("out_full", [True, False])
def test_improve_on_a_loops_state_equals_it_eagerly(device, out_full):
    # recorded on the GPU: one kernel over t's list writing the state d in place; against the
    # same body run from Python
    rng = np.random.default_rng(4)
    n = 80
    gi = np.sort(rng.choice(n, 25, replace=False))
    g = gbla.Vector.from_coo(gi, rng.uniform(0, 10, len(gi)), n, device=device)

    def body(s, _):
        t = gbla.ewise_add(gbla.apply(s.f, binary.minus, right=1.5), g, binary.min)
        s.f = gbla.improve(s.d, t, "<")

    di = np.arange(n) if out_full else np.sort(rng.choice(n, 30, replace=False))

    def start():
        return {
            "d": gbla.Vector.from_coo(di, np.full(len(di), 5.0), n, device=device),
            "f": gbla.Vector.from_coo([0, 1, 2], [9.0, 3.0, 1.0], n, device=device),
        }

    arrays, _ = _auto_equals_eager(body, start, ("d", "f"), while_nonempty="f", max_iterations=4)
    assert len(arrays[2]) > 0  # the last round still improved something


def _relax_graph(device, dtype, seed, n=70, nan=False):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, 4 * n), rng.integers(0, n, 4 * n)
    w = rng.integers(0, 9, 4 * n).astype(dtype)  # zero weights and ties too
    if nan:
        w[::17] = np.nan
    return gbla.Matrix.from_edges(src, dst, w, n, device=device), rng


def _from_0_and_7(n, dtype, full, device, frontier, semiring="min_plus"):
    """A relaxation loop's start: distances d, 0 at the sources 0 and 7 and at every other
    entry the far end of dtype (full=True), no other entry (False), or only the even entries,
    with NaNs among them ("nan"); and ``frontier``, the two sources at 0."""
    far = np.iinfo(dtype).max // 4 if np.dtype(dtype).kind == "i" else np.inf
    values = np.full(n, -far if semiring == "max_plus" else far, dtype)
    values[[0, 7]] = 0
    if full == "nan":  # NaN distances (never beaten)
        values[5:40:3] = np.nan
        keep = np.arange(0, n, 2)
        d = gbla.Vector.from_coo(keep, values[keep], n, device=device)
    elif full:
        d = gbla.Vector.from_dense(values, device=device)
    else:  # only the two sources: every other entry is made by the rounds
        d = gbla.Vector.from_coo([0, 7], np.zeros(2, dtype), n, device=device)
    sources = gbla.Vector.from_coo([0, 7], np.zeros(2, dtype), n, device=device)
    return {"d": d, frontier: sources}


@pytest.mark.parametrize(
    "semiring, better, dtype, out_full",
    [
        ("min_plus", "<", np.float64, True),
        ("min_plus", "<", np.float32, False),
        ("min_plus", "<=", np.int64, True),
        ("max_plus", ">", np.int32, True),
        ("min_plus", ">", np.float64, True),
    ],
)
def test_relax_equals_improve_of_the_product(device, semiring, better, dtype, out_full):
    A, rng = _relax_graph(device, dtype, 5)
    n = A.nrows
    ui = np.sort(rng.choice(n, 20, replace=False))
    uv = rng.integers(0, 30, len(ui)).astype(dtype)
    oi = np.arange(n) if out_full else np.sort(rng.choice(n, 40, replace=False))
    ov = rng.integers(0, 40, len(oi)).astype(dtype)
    out = gbla.Vector.from_coo(oi, ov, n, device=device)
    want = gbla.Vector.from_coo(oi, ov, n, device=device)
    u = gbla.Vector.from_coo(ui, uv, n, device=device)
    got = gbla.relax(out, u, A, semiring, better)
    expect = gbla.improve(want, gbla.vxm(u, A, semiring), better)
    for a, b in zip(got.to_coo() + out.to_coo(), expect.to_coo() + want.to_coo()):
        np.testing.assert_array_equal(host(a), host(b))
    assert got.nvals > 0 and got.dtype == expect.dtype
    np.testing.assert_array_equal(host(u.to_coo()[1]), uv)  # u left as it was


@pytest.mark.parametrize(
    "semiring, better, dtype, direction, full",
    [
        ("min_plus", "<", np.float64, "push", True),
        ("min_plus", "<", np.float32, "pull", True),
        ("min_plus", "<", np.int32, "auto", True),
        ("min_plus", "<", np.int64, "push", True),
        ("max_plus", ">", np.float64, "auto", True),
        ("min_plus", "<", np.float64, "push", False),
        ("min_plus", "<", np.int32, "pull", False),
        ("min_plus", "<", np.float32, "auto", False),
        ("min_plus", "<=", np.float64, "push", True),  # not the add's own test: composed
        ("min_plus", "<", np.float64, "push", "nan"),
        ("min_plus", "<", np.float64, "pull", "nan"),
    ],
)
def test_relax_on_a_loops_state_equals_it_eagerly(device, semiring, better, dtype, direction, full):
    # recorded on the GPU: the product tests and writes the state d itself (a push or a pull,
    # in the graph's iteration or the fused block; an entry d lacks taken by the first edge
    # that reaches it); against the same rounds run from Python
    A, _ = _relax_graph(device, dtype, 6, n=300, nan=full == "nan")
    n = A.nrows
    if semiring == "max_plus":  # weights of no more than 0: the longest paths are finite
        A = gbla.apply(A, unary.ainv)

    def body(s, _):
        s.f = gbla.relax(s.d, s.f, A, semiring, better, direction=direction)

    # with "nan", NaN distances (never beaten) and NaN weights (never better)
    arrays, rounds = _auto_equals_eager(
        body,
        lambda: _from_0_and_7(n, dtype, full, device, "f", semiring),
        ("d", "f"),
        while_nonempty="f",
        max_iterations=3 * n,
    )
    assert rounds > 2 and len(arrays[2]) == 0  # the rounds ran until nothing improved
    if full == "nan":
        assert np.isnan(arrays[1]).sum() >= 5  # the NaN distances kept


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(
    case=small_graphs(),
    semiring=st.sampled_from(["min_plus", "max_plus"]),
    better=st.sampled_from(["<", ">", "<="]),
    kept=st.lists(st.integers(0, 9), max_size=10, unique=True),
    window=st.one_of(st.none(), st.integers(-2, 12)),
)
def test_relax_against_its_oracle_entry_by_entry(case, semiring, better, kept, window, device):
    # t(i) = add over the edges k -> i with u(k) of u(k) + w(k, i); then out(i) = t(i) where
    # out has no entry i or better(t(i), out(i)), and those entries returned; with a window,
    # only the u(k) within it (<= window for min, >= for max) count, and the others are
    # returned too (add-combined with what was written)
    n, edges, frontier = case
    if n == 0:
        return
    src, dst, w = (np.array([e[j] for e in edges], np.int64) for j in range(3))
    A = gbla.Matrix.from_edges(src, dst, w, n, device=device)
    u = dict(frontier)
    oi = np.array(sorted(k for k in kept if k < n), np.int64)
    ov = (oi * 3 - 4).astype(np.int64)
    add = min if semiring == "min_plus" else max
    within = {
        k: window is None or (x <= window if add is min else x >= window) for k, x in u.items()
    }
    t = {}
    for k, i, x in zip(src.tolist(), dst.tolist(), w.tolist()):
        if k in u and within[k]:
            t[i] = add(t[i], u[k] + x) if i in t else u[k] + x
    compare = {"<": np.less, ">": np.greater, "<=": np.less_equal}[better]
    ti = np.array(sorted(t), np.int64)
    tv = np.array([t[i] for i in ti.tolist()], np.int64)
    want, written = _improve_oracle(oi, ov, ti, tv, n, compare, np.dtype(np.int64))
    returned = dict(written)
    for k, x in u.items():
        if not within[k]:  # carried as it is
            returned[k] = add(returned[k], x) if k in returned else x
    out = gbla.Vector.from_coo(oi, ov, n, device=device)
    uv = gbla.Vector.from_coo(list(u), np.array(list(u.values()), np.int64), n, device=device)
    got = gbla.relax(out, uv, A, semiring, better, window=window)
    i, v = (host(a).tolist() for a in got.to_coo())
    assert list(zip(i, v)) == sorted(returned.items())
    i, v = (host(a).tolist() for a in out.to_coo())
    assert dict(zip(i, v)) == want


@pytest.mark.parametrize("also_dtype", [None, "same", np.float32])
def test_relax_joins_also_s_entries_as_ewise_add_would(device, also_dtype):
    A, rng = _relax_graph(device, np.float64, 9)
    n = A.nrows
    ui = np.sort(rng.choice(n, 20, replace=False))
    u = gbla.Vector.from_coo(ui, rng.integers(0, 30, len(ui)).astype(np.float64), n, device=device)
    oi = np.sort(rng.choice(n, 40, replace=False))
    ov = rng.integers(0, 40, len(oi)).astype(np.float64)
    ai = np.sort(rng.choice(n, 25, replace=False))
    dt = np.float64 if also_dtype in (None, "same") else also_dtype
    also = None
    if also_dtype is not None:
        also = gbla.Vector.from_coo(ai, rng.integers(0, 50, len(ai)).astype(dt), n, device=device)
    out, want = (gbla.Vector.from_coo(oi, ov, n, device=device) for _ in range(2))
    got = gbla.relax(out, u, A, also=also)
    expect = gbla.improve(want, gbla.vxm(u, A, "min_plus"), "<")
    if also is not None:
        expect = gbla.ewise_add(also, expect, "min")
    for a, b in zip(got.to_coo() + out.to_coo(), expect.to_coo() + want.to_coo()):
        np.testing.assert_array_equal(host(a), host(b))
    assert got.dtype == expect.dtype


@pytest.mark.parametrize(
    "dtype, direction, full",
    [
        (np.float64, "push", True),
        (np.float32, "pull", True),
        (np.int32, "auto", False),
        (np.float64, "auto", False),
    ],
)
def test_delta_stepping_s_round_on_a_loops_state_equals_it_eagerly(device, dtype, direction, full):
    # a window of the pending set split off, relaxed, and the rest joined to what fell by the
    # product (recorded on the GPU: one kernel for the relaxation and the join)
    A, _ = _relax_graph(device, dtype, 10, n=300)
    n = A.nrows

    def body(s, _):
        gbla.reduce(s.pending, "min", out=low)
        front, rest = gbla.split(s.pending, "<=", low + dtype(3))
        s.pending = gbla.relax(s.d, front, A, direction=direction, also=rest)

    low = gbla.Scalar.new(dtype, device=device)
    _, rounds = _auto_equals_eager(
        body,
        lambda: _from_0_and_7(n, dtype, full, device, "pending"),
        ("d", "pending"),
        while_nonempty="pending",
        max_iterations=3 * n,
    )
    assert rounds > 3


@pytest.mark.parametrize(
    "semiring, dtype, window, also",
    [
        ("min_plus", np.float64, "scalar", False),
        ("min_plus", np.float64, "shifted", True),
        ("min_plus", np.int32, 12, False),
        ("max_plus", np.int64, "shifted", False),
        ("min_plus", np.float32, "nan", False),
    ],
)
def test_relax_with_a_window_equals_a_split_then_relax(device, semiring, dtype, window, also):
    # only u's entries within the window (<= t for min, >= t for max) are expanded; the others
    # join the result as also's do
    A, rng = _relax_graph(device, dtype, 11)
    n = A.nrows
    ui = np.sort(rng.choice(n, 30, replace=False))
    uv = rng.integers(0, 30, len(ui)).astype(dtype)
    if window == "nan":
        uv[::4] = np.nan  # never within, so carried
    u = gbla.Vector.from_coo(ui, uv, n, device=device)
    oi = np.sort(rng.choice(n, 40, replace=False))
    ov = rng.integers(0, 40, len(oi)).astype(dtype)
    out, want = (gbla.Vector.from_coo(oi, ov, n, device=device) for _ in range(2))
    low = gbla.Scalar.from_value(dtype(14), device=device)
    t = {"scalar": low, "shifted": low + 3, "nan": low}.get(window, window)
    extra = None
    if also:
        extra = gbla.Vector.from_coo([1, 2, 3], np.array([5, 6, 7], dtype), n, device=device)
    better = "<" if semiring == "min_plus" else ">"
    got = gbla.relax(out, u, A, semiring, better, also=extra, window=t)
    front, rest = gbla.split(u, "<=" if semiring == "min_plus" else ">=", t)
    add = "min" if semiring == "min_plus" else "max"
    joined = rest if extra is None else gbla.ewise_add(extra, rest, add)
    expect = gbla.ewise_add(joined, gbla.improve(want, gbla.vxm(front, A, semiring), better), add)
    for a, b in zip(got.to_coo() + out.to_coo(), expect.to_coo() + want.to_coo()):
        np.testing.assert_array_equal(host(a), host(b))
    assert 0 < front.nvals < u.nvals  # the window took some of u and left some
    np.testing.assert_array_equal(host(u.to_coo()[1]), uv)  # u left as it was


def test_relax_refuses_a_window_without_a_min_or_max_add(device):
    A = gbla.Matrix.from_edges([0], [1], [1.0], 4, device=device)
    d = gbla.Vector.from_coo([0], [0.0], 4, device=device)
    with pytest.raises(gbla.InvalidValue, match="window"):
        gbla.relax(d, d, A, "plus_times", window=1.0)
    rect = gbla.Matrix.from_scipy(sp.csr_matrix(([1.0], ([0], [1])), shape=(4, 5)), device=device)
    with pytest.raises(gbla.DimensionMismatch, match="u.size"):
        gbla.relax(gbla.Vector.new(5, device=device), d, rect, window=1.0)


def _windowed_rounds(device, semiring, dtype, direction, seed):
    """Delta-stepping's round in two ops over a random graph of 300 vertices (direction "nan":
    NaN weights too, and 'auto'): (n, body_of), body_of(hops, window=True) the loop's body,
    which relaxes the pending set's entries within 3 of its best one (the window's end a
    Scalar plus a number, picked by the product's gather on the GPU); without the window,
    Bellman-Ford's round (every pending entry)."""
    A, _ = _relax_graph(device, dtype, seed, n=300, nan=direction == "nan")
    direction = "auto" if direction == "nan" else direction
    if semiring == "max_plus":
        A = gbla.apply(A, unary.ainv)
    reduce, width = ("min", dtype(3)) if semiring == "min_plus" else ("max", dtype(-3))
    better = "<" if semiring == "min_plus" else ">"
    low = gbla.Scalar.new(dtype, device=device)

    def body_of(hops, window=True):
        def body(s, _):
            if window:
                gbla.reduce(s.pending, reduce, out=low)
            s.pending = gbla.relax(
                s.d,
                s.pending,
                A,
                semiring,
                better,
                direction=direction,
                window=low + width if window else None,
                hops=hops,
            )

        return body

    return A.nrows, body_of


# (semiring, dtype, direction, full) of a windowed relaxation's loop: a push, a pull, a policy
# choosing; distances full, or made by the rounds; NaN distances and weights ("nan")
_WINDOWED = [
    ("min_plus", np.float64, "push", True),
    ("min_plus", np.float32, "pull", True),
    ("min_plus", np.int32, "auto", False),
    ("min_plus", np.int64, "push", False),
    ("max_plus", np.float64, "auto", True),
    ("min_plus", np.float64, "nan", True),
    ("min_plus", np.float32, "push", True),
]


@pytest.mark.parametrize("semiring, dtype, direction, full", _WINDOWED)
def test_a_windowed_relax_on_a_loops_state_equals_it_eagerly(
    device, semiring, dtype, direction, full
):
    n, body_of = _windowed_rounds(device, semiring, dtype, direction, 12)
    _, rounds = _auto_equals_eager(
        body_of(1),
        lambda: _from_0_and_7(n, dtype, full, device, "pending", semiring),
        ("d", "pending"),
        while_nonempty="pending",
        max_iterations=3 * n,
    )
    assert rounds > 3


@pytest.mark.parametrize("semiring, dtype, direction, full", _WINDOWED)
@pytest.mark.parametrize("hops", [2, 8])
@pytest.mark.parametrize("window", [True, False], ids=["window", "no_window"])
def test_a_relax_of_several_hops_ends_where_single_hops_do(
    device, semiring, dtype, direction, full, hops, window
):
    # on the GPU the direct push (out-degrees of at most _spmv.DIRECT_DEGREE, a listed input)
    # relaxes up to `hops` edges deep (inside the window, with one) in one launch: the loop
    # ends with the distances of one hop a round (eager mode, any device: the composed ops),
    # nothing pending
    n, rounds_of = _windowed_rounds(device, semiring, dtype, direction, 13)
    runs = {}
    for h, mode in ((hops, "auto"), (1, "eager")):
        stats = {}
        start = _from_0_and_7(n, dtype, full, device, "pending", semiring)
        out = gbla.iterate(
            rounds_of(h, window),
            start,
            mode=mode,
            stats=stats,
            while_nonempty="pending",
            max_iterations=3 * n,
        )
        runs[h] = [host(a) for a in out["d"].to_coo()], out["pending"].nvals, stats
    for a, b in zip(runs[hops][0], runs[1][0]):
        np.testing.assert_array_equal(a, b)
    assert runs[hops][1] == runs[1][1] == 0
    assert runs[1][2]["iterations"] > 3
    assert runs[hops][2]["mode"] == ("device" if device == "gpu" else "eager")


@pytest.mark.gpu
@pytest.mark.parametrize("hops", [2, 8])
@pytest.mark.parametrize("window", [True, False], ids=["window", "no_window"])
def test_a_path_is_relaxed_hops_edges_a_round(hops, window):
    # a path 0 - 1 - ... - n-1 of unit weights pushed from 0, under a window that holds every
    # distance or none: one hop a round takes n rounds; `hops` take one round each `hops`
    # edges, the last vertex of each reached pending for the next. The algebra's
    # delta-stepping and Bellman-Ford (sssp.HOPS, sssp.BELLMAN_FORD_HOPS) give SciPy's
    # distances in fewer rounds than eager mode's one hop a round.
    if not gbla.gpu_available():
        pytest.skip("needs a CUDA device")
    from scipy.sparse import csgraph

    n = 301
    S = sp.diags([np.ones(n - 1), np.ones(n - 1)], [-1, 1], format="csr")
    A = gbla.Matrix.from_scipy(S, device="gpu")
    low = gbla.Scalar.new(np.float64, device="gpu")

    def body(s, _):
        gbla.reduce(s.pending, "min", out=low)
        t = low + 1e6 if window else None
        s.pending = gbla.relax(s.d, s.pending, A, direction="push", window=t, hops=hops)

    start = {
        "d": gbla.Vector.from_coo([0], [0.0], n, device="gpu"),
        "pending": gbla.Vector.from_coo([0], [0.0], n, device="gpu"),
    }
    stats = {}
    out = gbla.iterate(body, start, stats=stats, while_nonempty="pending", fuse=False)
    assert stats["mode"] == "device"
    np.testing.assert_array_equal(host(out["d"].to_dense()), np.arange(n, dtype=np.float64))
    # a round takes the path `hops` edges on (the first, run before the loop is recorded, one
    # or `hops`), and the last vertex, where reached at a round's last hop, takes one more
    rounds = -(-(n - 1) // hops)
    assert rounds <= stats["iterations"] <= rounds + 2
    assert stats["edges"] == S.nnz  # each vertex's edges relaxed once, at whatever hop
    method = "delta_stepping" if window else "bellman_ford"
    eager, device = {}, {}
    dist = gbla.sssp(A, 0, method=method, stats=device)
    gbla.sssp(gbla.Matrix.from_scipy(S, device="cpu"), 0, method=method, stats=eager)
    np.testing.assert_array_equal(host(dist), csgraph.dijkstra(S, indices=0))
    assert device["iterations"] < eager["iterations"]


@pytest.mark.gpu
@pytest.mark.parametrize("room", [0, 3, 1024])
def test_a_full_queue_leaves_the_rest_pending_and_none_relaxes_one_hop(monkeypatch, room):
    # the direct push's queue a block (_spmv.CHASE_ROOM vertices): 3 fill at once on a grid,
    # and what finds them full waits pending for the next round; without a queue the rounds
    # are one hop's, as eager mode's
    if not gbla.gpu_available():
        pytest.skip("needs a CUDA device")
    from scipy.sparse import csgraph

    from gbla.kernels import _spmv

    monkeypatch.setattr(_spmv, "CHASE_ROOM", room)
    side = 40
    line = sp.diags([np.ones(side - 1), np.ones(side - 1)], [-1, 1])
    S = sp.csr_array(sp.kron(line, sp.identity(side)) + sp.kron(sp.identity(side), line))
    S.data = np.random.default_rng(3).integers(1, 10, S.nnz).astype(np.float64)
    S = sp.csr_array(S.maximum(S.T))
    runs = {}
    for mode, device in (("auto", "gpu"), ("eager", "cpu")):
        A = gbla.Matrix.from_scipy(S, device=device)  # a recording of its own
        low = gbla.Scalar.new(np.float64, device=device)

        def body(s, _):
            gbla.reduce(s.pending, "min", out=low)
            s.pending = gbla.relax(s.d, s.pending, A, direction="push", window=low + 20, hops=8)

        start = {k: gbla.Vector.from_coo([0], [0.0], S.shape[0], device=device) for k in "dp"}
        start["pending"] = start.pop("p")
        stats = {}
        out = gbla.iterate(body, start, mode=mode, stats=stats, while_nonempty="pending")
        runs[mode] = host(out["d"].to_dense()), stats["iterations"]
    np.testing.assert_array_equal(runs["auto"][0], csgraph.dijkstra(S, indices=0))
    np.testing.assert_array_equal(runs["eager"][0], runs["auto"][0])
    if room == 0:
        assert runs["auto"][1] == runs["eager"][1]


def test_relax_refuses_hops_that_are_not_a_count(device):
    A = gbla.Matrix.from_edges([0, 1], [1, 2], [1.0, 1.0], 4, device=device)
    d = gbla.Vector.from_coo([0], [0.0], 4, device=device)
    for bad in (0, 256, 2.5, True, "3", -1):
        with pytest.raises(gbla.InvalidValue, match="hops"):
            gbla.relax(d, d, A, window=1.0, hops=bad)
        with pytest.raises(gbla.InvalidValue, match="hops"):
            gbla.relax(d, d, A, hops=bad)
    for window in (1.0, None):  # off the device loop: one hop
        d = gbla.Vector.from_coo([0], [0.0], 4, device=device)
        got = gbla.relax(
            d, gbla.Vector.from_coo([0], [0.0], 4, device=device), A, window=window, hops=3
        )
        assert host(got.to_coo()[0]).tolist() == [1]
        assert host(d.to_coo()[0]).tolist() == [0, 1]


def test_a_relax_from_u_of_another_dtype_goes_one_hop():
    # a deeper hop expands out's values as u's: where u is of another dtype (an int32 u into
    # float64 distances would read 0.5 as 0), the product relaxes one hop
    from gbla import ops

    into = (np.zeros(3), None)
    for u_dtype, hops in ((np.int32, 1), (np.float64, 8)):
        u = gbla.Vector.from_coo([0], np.zeros(1, u_dtype), 3, device="cpu")
        relaxation = ops._relaxation(into, u, None, None, None, np.dtype(np.float64), 8)
        assert relaxation.hops == hops and relaxation.window is None


def test_relax_refuses_wrong_sizes_and_a_non_comparison(device):
    A = gbla.Matrix.from_edges([0], [1], [1.0], 4, device=device)
    d = gbla.Vector.from_coo([0], [0.0], 4, device=device)
    with pytest.raises(gbla.DimensionMismatch, match="u.size"):
        gbla.relax(d, gbla.Vector.new(3, device=device), A)
    with pytest.raises(gbla.DimensionMismatch, match="out.size"):
        gbla.relax(gbla.Vector.new(5, device=device), d, A)
    with pytest.raises(gbla.DomainMismatch, match="better"):
        gbla.relax(d, d, A, "min_plus", binary.plus)
    with pytest.raises(gbla.DimensionMismatch, match="also.size"):
        gbla.relax(d, d, A, also=gbla.Vector.new(3, device=device))
    other = "gpu" if device == "cpu" else "cpu"
    if other == "gpu" and not gbla.gpu_available():
        return
    u = gbla.Vector.from_coo([0], [0.0], 4, device=other)
    with pytest.raises(gbla.DeviceMismatch, match="u"):
        gbla.relax(d, u, A)


def test_improve_refuses_a_wrong_size_a_non_comparison_and_a_matrix(device):
    out = gbla.Vector.from_coo([0, 1], [1.0, 2.0], 4, device=device)
    with pytest.raises(gbla.DimensionMismatch, match="t.size"):
        gbla.improve(out, gbla.Vector.new(3, device=device))
    with pytest.raises(gbla.DomainMismatch, match="comparison"):
        gbla.improve(out, out, binary.plus)
    A = gbla.Matrix.from_edges([0], [1], [1.0], 4, device=device)
    with pytest.raises(gbla.DomainMismatch, match="out"):
        gbla.improve(A, out)
