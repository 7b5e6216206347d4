"""The semiring laws over the whole registry, for every dtype each semiring takes.

Each law is checked three ways: on the ops' NumPy references, and through the public
element-wise operations (ewise_add / ewise_mult / reduce) on each device, so that the CUDA
expression of every op is checked too where a GPU is present. Values are small integers (exact in
every dtype) plus the dtype's extremes (+-inf, or the integer limits where no arithmetic can
overflow); NaN is never drawn.
"""

import functools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import gbla
from gbla import semirings
from gbla.semirings import ANY_VALUE, BinaryOp, Monoid, Semiring

from .conftest import DEVICES, SKIP_NO_GPU, host

BOOL, INT32, INT64, FP32, FP64 = (
    np.dtype(t) for t in (np.bool_, np.int32, np.int64, np.float32, np.float64)
)
INF = np.inf
REGISTRY = [semirings.get(name) for name in semirings.names()]
ARITHMETIC = {"plus", "minus", "times"}  # ops that overflow integers and mix infinities to NaN

# inf - inf and 0 * inf are NaN on both sides of a law; NumPy warns about them.
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")

# The device fixture is a plain string, so sharing it across hypothesis examples is safe.
fixture_ok = settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


def _monoid_cases():
    """(monoid, dtype) for every add monoid of the registry and every dtype it reduces in."""
    seen, cases = set(), []
    for sr in REGISTRY:
        for d in sr.dtypes:
            z = sr.output_dtype(d)
            if (id(sr.add), z) not in seen:
                seen.add((id(sr.add), z))
                cases.append((sr.add, z))
    return cases


MONOID_CASES = _monoid_cases()
DISTRIBUTIVE_CASES = [(sr, d) for sr in REGISTRY if sr.distributive for d in sr.dtypes]

# Three rows of operands per example, codes in [-12, 12]; see values().
CODES = arrays(np.int8, (3, 24), elements=st.integers(-12, 12))


def values(codes, dtype, extremes=True, infinities=(-INF, INF)):
    """The codes as values of ``dtype``: bool takes their parity; otherwise +-12 become the
    dtype's extremes (the given infinities; the integer limits only with ``extremes``, so that
    arithmetic on three terms cannot overflow) and the rest stay small integers."""
    if dtype == BOOL:
        return (codes % 2).astype(bool)
    out = codes.astype(dtype)
    if dtype.kind == "i":
        if extremes:
            info = np.iinfo(dtype)
            out[codes == 12], out[codes == -12] = info.max, info.min
        return out
    for code, inf in ((-12, -INF), (12, INF)):
        if inf in infinities:
            out[codes == code] = inf
    return out


@pytest.fixture(params=["numpy"] + DEVICES)
def via(request):
    """Where the ops are evaluated: their NumPy references, or the library on a device."""
    return request.param


def _vector(x, via):
    return gbla.Vector.from_dense(x, device=via)


def add(monoid, x, y, via):
    if via == "numpy":
        return monoid.op.apply_numpy(x, y)
    return host(gbla.ewise_add(_vector(x, via), _vector(y, via), monoid).to_dense())


def mult(op, x, y, via):
    if via == "numpy":
        return op.apply_numpy(x, y)
    return host(gbla.ewise_mult(_vector(x, via), _vector(y, via), op).to_dense())


def assert_equal(actual, expected, what, *operands):
    """Same dtype and values, NaN equal to NaN (+inf + -inf is NaN on both sides of a law)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    same = (actual == expected) | ((actual != actual) & (expected != expected))
    bad = np.flatnonzero(~same)
    assert not len(bad), (
        f"{what}: at {bad[0]}, operands {[o[bad[0]] for o in operands]}: "
        f"{actual[bad[0]]!r} != {expected[bad[0]]!r}"
    )


def assert_one_of(actual, choices, what):
    """Element-wise, ``actual`` equals one of the arrays in ``choices`` (the law of ``any``)."""
    ok = np.zeros(len(actual), bool)
    for c in choices:
        ok |= np.asarray(actual) == np.asarray(c)
    assert ok.all(), f"{what}: {actual[~ok][0]!r} is none of its operands"


# ------------------------------------------------------------------ the add monoid
@fixture_ok
@given(codes=CODES)
def test_add_is_associative_and_commutative(via, codes):
    for monoid, dtype in MONOID_CASES:
        a, b, c = (values(row, dtype, extremes=monoid.op.name not in ARITHMETIC) for row in codes)
        left = add(monoid, add(monoid, a, b, via), c, via)
        right = add(monoid, a, add(monoid, b, c, via), via)
        ab, ba = add(monoid, a, b, via), add(monoid, b, a, via)
        what = f"{monoid.name} on {dtype}"
        if monoid.is_any:  # any(x, y) may be either operand
            assert_one_of(left, (a, b, c), what)
            assert_one_of(right, (a, b, c), what)
            assert_one_of(ab, (a, b), what)
            assert_one_of(ba, (a, b), what)
        else:
            assert_equal(left, right, f"{what}: (a+b)+c == a+(b+c)", a, b, c)
            assert_equal(ab, ba, f"{what}: a+b == b+a", a, b)


@fixture_ok
@given(codes=CODES)
def test_identity_is_an_identity_on_both_sides(via, codes):
    for monoid, dtype in MONOID_CASES:
        x = values(codes[0], dtype, extremes=monoid.op.name not in ARITHMETIC)
        e = np.full(len(x), monoid.identity_for(dtype), dtype=dtype)
        what = f"{monoid.name} on {dtype}"
        if monoid.is_any:  # any has no true identity; its placeholder is never combined
            assert_one_of(add(monoid, e, x, via), (e, x), what)
            continue
        assert_equal(add(monoid, e, x, via), x, f"{what}: identity + x == x", x)
        assert_equal(add(monoid, x, e, via), x, f"{what}: x + identity == x", x)


@fixture_ok
@given(codes=CODES)
def test_terminal_value_absorbs_every_value(via, codes):
    checked = 0
    for monoid, dtype in MONOID_CASES:
        terminal = monoid.terminal_for(dtype)
        if terminal is None:
            continue
        x = values(codes[0], dtype, extremes=monoid.op.name not in ARITHMETIC)
        what = f"{monoid.name} on {dtype}"
        if terminal is ANY_VALUE:  # every value is terminal: the op returns one of its operands
            y = values(codes[1], dtype)
            assert_one_of(add(monoid, x, y, via), (x, y), what)
        else:
            z = np.full(len(x), terminal, dtype=dtype)
            assert_equal(add(monoid, z, x, via), z, f"{what}: terminal + x == terminal", x)
            assert_equal(add(monoid, x, z, via), z, f"{what}: x + terminal == terminal", x)
        checked += 1
    assert checked >= 10  # min, max, lor, land, times (ints) and any at least


@fixture_ok
@given(codes=CODES)
def test_monoids_claimed_idempotent_satisfy_x_plus_x_equals_x(via, codes):
    for monoid, dtype in MONOID_CASES:
        if monoid.idempotent:
            x = values(codes[0], dtype)
            assert_equal(add(monoid, x, x, via), x, f"{monoid.name} on {dtype}: x + x == x", x)


# ------------------------------------------------------------------ distributivity
def _distributive_values(codes, sr, dtype):
    """Operands for which the law is meaningful: with an arithmetic multiply the only infinity
    is the add's identity, the semiring's zero (min_plus: +inf; plus_times: none), since
    +inf + -inf and 0 * inf are NaN."""
    if sr.multiply.name not in ARITHMETIC:
        return [values(row, dtype) for row in codes]
    e = sr.add.identity_for(dtype)
    infinities = (float(e),) if dtype.kind == "f" and np.isinf(e) else ()
    return [values(row, dtype, extremes=False, infinities=infinities) for row in codes]


@fixture_ok
@given(codes=CODES)
def test_multiply_distributes_over_add_on_both_sides_where_claimed(via, codes):
    assert len(DISTRIBUTIVE_CASES) > 50  # the registry claims it for many semirings
    for sr, dtype in DISTRIBUTIVE_CASES:
        a, b, c = _distributive_values(codes, sr, dtype)
        m, plus = sr.multiply, sr.add
        ab, ac, ba, ca = (mult(m, x, y, via) for x, y in ((a, b), (a, c), (b, a), (c, a)))
        left = mult(m, a, add(plus, b, c, via), via)
        right = mult(m, add(plus, b, c, via), a, via)
        what = f"{sr.name} on {dtype}"
        if plus.is_any:  # each side is one of the candidate products
            for side, (p, q) in ((left, (ab, ac)), (right, (ba, ca))):
                assert_one_of(side, (p, q), what)
                assert_one_of(add(plus, p, q, via), (p, q), what)
            continue
        assert_equal(left, add(plus, ab, ac, via), f"{what}: a*(b+c) == a*b + a*c", a, b, c)
        assert_equal(right, add(plus, ba, ca, via), f"{what}: (b+c)*a == b*a + c*a", a, b, c)


def test_min_and_max_ignore_nan_like_fmin_and_fmax(via):
    # SuiteSparse's semantics, the same on the CPU and in the CUDA expressions.
    for dtype in (FP32, FP64):
        x = np.array([np.nan, 1.0, np.nan, -INF], dtype)
        y = np.array([2.0, np.nan, np.nan, np.nan], dtype)
        lo, hi = semirings.monoid.min, semirings.monoid.max
        assert_equal(add(lo, x, y, via), np.array([2.0, 1.0, np.nan, -INF], dtype), "min", x, y)
        assert_equal(add(hi, x, y, via), np.array([2.0, 1.0, np.nan, -INF], dtype), "max", x, y)
        assert_equal(add(hi, y, x, via), np.array([2.0, 1.0, np.nan, -INF], dtype), "max", y, x)


@SKIP_NO_GPU
@pytest.mark.gpu
@fixture_ok
@given(codes=CODES)
def test_every_cuda_expression_computes_what_its_numpy_reference_computes(codes):
    # The laws above hold for a wrong but lawful expression too (lor in place of lxor).
    ops = {}
    for sr in REGISTRY:
        for op in (sr.add.op, sr.multiply):
            ops.setdefault(id(op), (op, set()))[1].update(
                sr.dtypes if op is sr.multiply else map(sr.output_dtype, sr.dtypes)
            )
    for op, dtypes in ops.values():
        for dtype in sorted(dtypes, key=str):
            # no integer overflow: that is undefined behaviour in C
            x, y = (values(row, dtype, extremes=op.name not in ARITHMETIC) for row in codes[:2])
            got = host(gbla.ewise_mult(_vector(x, "gpu"), _vector(y, "gpu"), op).to_dense())
            expected = op.apply_numpy(x, y, np.arange(len(x)))
            if op.name == "any":
                assert_one_of(got, (x, y), f"any on {dtype}")
            else:
                assert_equal(got, expected, f"{op.name} on {dtype}", x, y)


# ------------------------------------------------------------------ reduce on each device
@fixture_ok
@given(codes=CODES, present=arrays(np.bool_, 24))
def test_reduce_equals_a_left_fold_of_the_present_values(device, codes, present):
    # The absent entries must not count: on the GPU they read as the identity, so a wrong
    # identity (or its CUDA literal) shows up here.
    for monoid, dtype in MONOID_CASES:
        x = values(codes[0], dtype, extremes=monoid.op.name not in ARITHMETIC)
        if monoid.op.name == "times" and dtype.kind == "f":
            # powers of two: a floating product is then exact in any order (3**24 is not)
            x = (np.sign(x) * np.exp2(np.abs(x) % 4)).astype(dtype)
        idx = np.flatnonzero(present)
        u = gbla.Vector.from_coo(idx, x[idx], len(x), device=device)
        got = gbla.reduce(u, monoid)
        what = f"reduce({monoid.name}) on {dtype}"
        assert np.asarray(got).dtype == dtype, what
        if not len(idx):
            continue  # the identity: test_reduce_of_an_empty_vector_is_the_identity
        if monoid.is_any:
            assert got in x[idx], what
            continue
        expected = functools.reduce(lambda s, v: monoid.op.apply_numpy(s, v), x[idx[1:]], x[idx[0]])
        assert_equal(np.atleast_1d(got), np.atleast_1d(expected), what, x[idx])


# ------------------------------------------------------------------ identities and terminals
ANYTHING = object()  # any value of the dtype will do (the any monoid's placeholder identity)

# Spelled out, so that a wrong entry in the builtin table cannot go unnoticed (GraphBLAST once
# shipped wrong identities for land and max).
IDENTITY = {
    "plus": {INT32: 0, INT64: 0, FP32: 0.0, FP64: 0.0},
    "times": {INT32: 1, INT64: 1, FP32: 1.0, FP64: 1.0},
    "min": {BOOL: True, INT32: 2**31 - 1, INT64: 2**63 - 1, FP32: INF, FP64: INF},
    "max": {BOOL: False, INT32: -(2**31), INT64: -(2**63), FP32: -INF, FP64: -INF},
    "any": {BOOL: ANYTHING, INT32: ANYTHING, INT64: ANYTHING, FP32: ANYTHING, FP64: ANYTHING},
    "lor": {BOOL: False},
    "land": {BOOL: True},
    "lxor": {BOOL: False},
    "eq": {BOOL: True},
    "bor": {INT32: 0, INT64: 0},
    "band": {INT32: -1, INT64: -1},  # every bit set
    "bxor": {INT32: 0, INT64: 0},
}
TERMINAL = {
    "plus": {INT32: None, INT64: None, FP32: None, FP64: None},
    "times": {INT32: 0, INT64: 0, FP32: None, FP64: None},  # 0 * inf is NaN: no float terminal
    "min": {BOOL: False, INT32: -(2**31), INT64: -(2**63), FP32: -INF, FP64: -INF},
    "max": {BOOL: True, INT32: 2**31 - 1, INT64: 2**63 - 1, FP32: INF, FP64: INF},
    "any": {d: ANY_VALUE for d in (BOOL, INT32, INT64, FP32, FP64)},
    "lor": {BOOL: True},
    "land": {BOOL: False},
    "lxor": {BOOL: None},
    "eq": {BOOL: None},
    "bor": {INT32: -1, INT64: -1},
    "band": {INT32: 0, INT64: 0},
    "bxor": {INT32: None, INT64: None},
}
MONOIDS = vars(semirings.monoid)


def test_the_identity_and_terminal_tables_cover_every_monoid_of_the_registry():
    assert set(MONOIDS) == set(IDENTITY) == set(TERMINAL)
    assert {sr.add.name for sr in REGISTRY} <= set(IDENTITY)


@pytest.mark.parametrize("name", sorted(IDENTITY))
def test_monoid_identity_is_the_expected_value_in_each_dtype(name):
    monoid = MONOIDS[name]
    assert set(monoid.dtypes) == set(IDENTITY[name])
    for dtype, expected in IDENTITY[name].items():
        e = monoid.identity_for(dtype)
        assert np.asarray(e).dtype == dtype
        if expected is not ANYTHING:
            assert e == expected and type(e.item()) is type(np.asarray(expected, dtype).item()), (
                f"identity of {name} on {dtype} is {e!r}, expected {expected!r}"
            )


@pytest.mark.parametrize("name", sorted(TERMINAL))
def test_monoid_terminal_is_the_expected_value_in_each_dtype(name):
    monoid = MONOIDS[name]
    assert set(monoid.dtypes) == set(TERMINAL[name])
    assert monoid.is_any == (name == "any")
    for dtype, expected in TERMINAL[name].items():
        t = monoid.terminal_for(dtype)
        if expected is None or expected is ANY_VALUE:
            assert t is expected, f"terminal of {name} on {dtype} is {t!r}"
        else:
            assert np.asarray(t).dtype == dtype and t == expected, (
                f"terminal of {name} on {dtype} is {t!r}, expected {expected!r}"
            )


@pytest.mark.parametrize("name", sorted(IDENTITY))
def test_reduce_of_an_empty_vector_is_the_identity(device, name):
    monoid = MONOIDS[name]
    for dtype, expected in IDENTITY[name].items():
        got = gbla.reduce(gbla.Vector.new(5, dtype, device=device), monoid)
        assert np.asarray(got).dtype == dtype
        if expected is not ANYTHING:
            assert got == expected, f"reduce({name}) of no entries on {dtype}: {got!r}"


# ------------------------------------------------------------------ a user-defined semiring
def succ_plus_times():
    """add(x, y) = x + y + 1 (associative, commutative, identity -1), multiply = x * y."""
    succ = BinaryOp(
        "laws_succ", "(x + y + 1)", lambda x, y: x + y + 1, dtypes=(np.int64,), commutative=True
    )
    times = BinaryOp(
        "laws_times", "(x * y)", lambda x, y: x * y, dtypes=(np.int64,), commutative=True
    )
    return Semiring(Monoid(succ, identity={np.int64: -1}, terminal=None), times)


@pytest.fixture
def scratch_registry(monkeypatch):
    """The registry is module state: whatever a test registers is gone after it."""
    monkeypatch.setattr(semirings, "_REGISTRY", dict(semirings._REGISTRY))


def _dense_succ_plus_times(A, a_present, u, u_present):
    """w(i) = sum_k A(i,k) u(k) + (terms - 1) over the k where both are present."""
    both = a_present & u_present[None, :]
    terms = both.sum(axis=1)
    w = np.where(both, A * u[None, :], 0).sum(axis=1) + terms - 1
    return w, terms > 0


@pytest.mark.usefixtures("scratch_registry")
@pytest.mark.parametrize("direction", ["push", "pull"])
def test_user_defined_semiring_works_in_mxv_and_vxm(device, direction):
    sr = semirings.register(succ_plus_times())
    assert sr.name == "laws_succ_laws_times" and semirings.get(sr.name) is sr
    assert sr.name in semirings.names()
    # A (3 x 4)             u = [2, -, 5, 1]     (u(1) absent)
    #   [1 . 3  .]          w(0) = 1*2 + 3*5 + 1           = 18
    #   [. 4 .  .]          w(1): only u(1), absent        -> no entry
    #   [2 7 1 -1]          w(2) = 2*2 + 1*5 + -1*1 + 2    = 10
    rows, cols = [0, 0, 1, 2, 2, 2, 2], [0, 2, 1, 0, 1, 2, 3]
    S = sp.coo_array((np.array([1, 3, 4, 2, 7, 1, -1]), (rows, cols)), shape=(3, 4))
    A = gbla.Matrix.from_scipy(S, device=device)
    u = gbla.Vector.from_coo([0, 2, 3], np.array([2, 5, 1]), 4, device=device)
    w = gbla.mxv(A, u, sr.name, direction=direction)
    idx, vals = w.to_coo()
    assert host(idx).tolist() == [0, 2] and host(vals).tolist() == [18, 10]

    rng = np.random.default_rng(7)
    dense = rng.integers(-5, 6, (40, 30))
    a_present = rng.random((40, 30)) < 0.3
    x, x_present = rng.integers(-5, 6, 40), rng.random(40) < 0.7
    A = gbla.Matrix.from_scipy(
        sp.coo_array((dense[a_present], np.nonzero(a_present)), shape=(40, 30)), device=device
    )
    ux = gbla.Vector.from_coo(np.flatnonzero(x_present), x[x_present], 40, device=device)
    w = gbla.vxm(ux, A, sr, direction=direction)
    expected, present = _dense_succ_plus_times(dense.T, a_present.T, x, x_present)
    idx, vals = w.to_coo()
    assert host(idx).tolist() == np.flatnonzero(present).tolist()
    assert host(vals).tolist() == expected[present].tolist()


@pytest.mark.usefixtures("scratch_registry")
def test_registering_a_taken_name_raises_unless_replace():
    first = semirings.register(succ_plus_times())
    second = succ_plus_times()
    taken = r"semiring\.name must not be registered already.*laws_succ_laws_times"
    with pytest.raises(gbla.InvalidValue, match=taken):
        semirings.register(second)
    assert semirings.get("laws_succ_laws_times") is first
    assert semirings.register(second, replace=True) is second
    assert semirings.get("laws_succ_laws_times") is second
    with pytest.raises(gbla.InvalidValue, match="semiring.name.*'min_plus'"):
        semirings.register(Semiring(semirings.monoid.min, semirings.binary.plus))
