"""gbla against SuiteSparse:GraphBLAS (through python-graphblas): masked mxv and vxm with accum
and replace, on random integer-valued operands (NaN among float ones), must give the same
structure and values.

The any monoid may pick any of a row's products, so for ``any_*`` semirings whose products differ
(any_secondi) the values are checked for validity instead: each is a product the row offers.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbla

from .conftest import host

gb = pytest.importorskip("graphblas")

BOOL, INT32, INT64, FP32, FP64 = (
    np.dtype(t) for t in (np.bool_, np.int32, np.int64, np.float32, np.float64)
)
NUMERIC = (INT32, INT64, FP32, FP64)
EVERY = (BOOL,) + NUMERIC

# gbla name -> (python-graphblas semiring, the dtypes compared). SECONDI gives k, the index of
# the vector entry, in both mxv(A, u) and vxm(u, A) (GraphBLAS C API: the row index of the
# second operand B(k, j), u being a column in mxv and A the second operand in vxm).
SEMIRINGS = {
    "min_plus": (gb.semiring.min_plus, NUMERIC),
    "max_plus": (gb.semiring.max_plus, NUMERIC),
    "plus_times": (gb.semiring.plus_times, NUMERIC),
    "plus_min": (gb.semiring.plus_min, NUMERIC),
    "min_max": (gb.semiring.min_max, NUMERIC),
    "max_min": (gb.semiring.max_min, NUMERIC),
    "min_times": (gb.semiring.min_times, NUMERIC),
    "min_minus": (gb.semiring.min_minus, NUMERIC),
    "min_first": (gb.semiring.min_first, EVERY),
    "min_second": (gb.semiring.min_second, EVERY),
    "max_first": (gb.semiring.max_first, EVERY),
    "plus_pair": (gb.semiring.plus_pair, NUMERIC),
    "any_pair": (gb.semiring.any_pair, EVERY),
    "lor_land": (gb.semiring.lor_land, (BOOL,)),
    "land_lor": (gb.semiring.land_lor, (BOOL,)),
    "lxor_land": (gb.semiring.lxor_land, (BOOL,)),
    "eq_eq": (gb.semiring.eq_eq, EVERY),
    "any_secondi": (gb.semiring.ss.any_secondi, EVERY),
    "min_secondi": (gb.semiring.ss.min_secondi, EVERY),
    "max_secondi": (gb.semiring.ss.max_secondi, EVERY),
    "plus_secondi": (gb.semiring.ss.plus_secondi, EVERY),
}
# Accumulators that keep integer-valued data exact, by output kind.
ACCUMS = {"b": [None, "lor", "land"], "n": [None, "plus", "min", "max", "times"]}

fixture_ok = settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


@st.composite
def cases(draw, name):
    """One random product: shapes, density, mask kind, accum, replace, and a seed for values."""
    dtype = draw(st.sampled_from(SEMIRINGS[name][1]))
    z = gbla.semirings.get(name).output_dtype(dtype)
    return dict(
        dtype=dtype,
        # 40: rows longer than a warp, which the GPU's pull gives a warp each
        nrows=draw(st.one_of(st.integers(1, 12), st.sampled_from([0, 40]))),
        ncols=draw(st.one_of(st.integers(1, 12), st.sampled_from([0, 40]))),
        density=draw(st.sampled_from([0.5, 0.2, 1.0, 0.0])),
        u_density=draw(st.sampled_from([0.7, 0.3, 1.0, 0.0])),
        mask=draw(st.sampled_from([None, "S", "V", "~S", "~V"])),
        accum=draw(st.sampled_from(ACCUMS["b" if z == BOOL else "n"])),
        replace=draw(st.booleans()),
        out=draw(st.booleans()),
        pattern=draw(st.booleans()),  # A an iso bool pattern (no values array in gbla)
        index_dtype=draw(st.sampled_from([None, np.int64])),
        # SuiteSparse's min and max ignore NaN (fmin, fmax), as gbla's do
        nan=dtype.kind == "f" and draw(st.booleans()),
        seed=draw(st.integers(0, 2**32 - 1)),
    )


def _values(rng, n, dtype, nan=False):
    """Small integers with zeros among them (explicit zeros are entries), or booleans with
    False among them; a few NaN if asked."""
    if dtype == BOOL:
        return rng.random(n) < 0.6
    v = rng.integers(-3, 6, n).astype(dtype)
    if nan:
        v[rng.random(n) < 0.15] = np.nan
    return v


def _sparse_vector(rng, size, density, dtype, nan=False):
    idx = np.flatnonzero(rng.random(size) < density)
    return idx, _values(rng, len(idx), dtype, nan)


class Operands:
    """The same random operands, built for both libraries."""

    def __init__(self, case, op, out_dtype):
        rng = np.random.default_rng(case["seed"])
        m, n, dtype = case["nrows"], case["ncols"], case["dtype"]
        present = rng.random((m, n)) < case["density"]
        self.rows, self.cols = np.nonzero(present)
        self.a = _values(rng, len(self.rows), dtype, case["nan"])
        if case["pattern"]:  # every value True; the product's dtype is the vector's
            self.a = np.ones(len(self.rows), bool)
        self.u_dtype = dtype
        self.shape = (m, n)
        self.u_size, self.out_size = (n, m) if op == "mxv" else (m, n)
        self.u = _sparse_vector(rng, self.u_size, case["u_density"], dtype, case["nan"])
        # the mask: int64 with zeros, so value and structural masks differ
        self.mask = _sparse_vector(rng, self.out_size, 0.6, INT64)
        self.old = _sparse_vector(rng, self.out_size, 0.5, out_dtype) if case["out"] else None
        self.out_dtype = out_dtype

    # ------------------------------------------------------------------ python-graphblas
    def gb_run(self, op, name, case):
        semiring = SEMIRINGS[name][0]
        # A pattern goes in as ones of the vector's dtype: the typecast the C API does anyway.
        # (SuiteSparse 9.4 returns garbage for w(accum=plus) << A.mxv(u, plus_times) when it
        # must typecast a bool A itself, in its "C in place" saxpy path.)
        A = gb.Matrix.from_coo(
            self.rows,
            self.cols,
            self.a.astype(self.u_dtype),
            nrows=self.shape[0],
            ncols=self.shape[1],
            dtype=self.u_dtype,
        )
        u = gb.Vector.from_coo(*self.u, size=self.u_size, dtype=self.u_dtype)
        w = (
            gb.Vector.from_coo(*self.old, size=self.out_size, dtype=self.out_dtype)
            if self.old is not None
            else gb.Vector(self.out_dtype, self.out_size)
        )
        m = gb.Vector.from_coo(*self.mask, size=self.out_size, dtype=np.int64)
        mask = {None: None, "S": m.S, "V": m.V, "~S": ~m.S, "~V": ~m.V}[case["mask"]]
        accum = None if case["accum"] is None else getattr(gb.binary, case["accum"])
        expr = A.mxv(u, semiring) if op == "mxv" else u.vxm(A, semiring)
        multiply = gbla.semirings.get(name).multiply
        if multiply.name != "pair" and not multiply.positional:
            # The same output dtype. (python-graphblas gives pair products int64, and positional
            # ones int32 for int32 operands, where gbla keeps the operands' dtype and gives
            # int64: a choice of type, not of value; w has gbla's dtype either way.)
            assert expr.dtype == self.out_dtype, f"{semiring.name}: {expr.dtype}"
        if self.u_size == 0:
            # SuiteSparse 9.4 at times fails GrB_mxv with an accum and an inner dimension of 0
            # (GrB_DIMENSION_MISMATCH, though the shapes agree); the product first, then the
            # masked accumulating write, is the same by the C API.
            expr = expr.new()
        # replace without a mask changes nothing (C API); python-graphblas refuses it
        w(mask=mask, accum=accum, replace=case["replace"] and mask is not None) << expr
        idx, vals = w.to_coo()
        return idx.astype(np.int64), vals

    # ------------------------------------------------------------------ gbla
    def gbla_run(self, op, name, case, device, direction):
        S = sp.coo_array((self.a, (self.rows, self.cols)), shape=self.shape)
        A = gbla.Matrix.from_scipy(S, device=device, index_dtype=case["index_dtype"])
        if case["pattern"]:
            A = A.pattern()
            assert A.is_iso
        u = gbla.Vector.from_coo(*self.u, self.u_size, dtype=self.u_dtype, device=device)
        out = None
        if self.old is not None:
            out = gbla.Vector.from_coo(
                *self.old, self.out_size, dtype=self.out_dtype, device=device
            )
        m = gbla.Vector.from_coo(*self.mask, self.out_size, dtype=np.int64, device=device)
        mask = {None: None, "S": m.S, "V": m.V, "~S": ~m.S, "~V": ~m.V}[case["mask"]]
        kwargs = dict(
            mask=mask, accum=case["accum"], replace=case["replace"], out=out, direction=direction
        )
        w = gbla.mxv(A, u, name, **kwargs) if op == "mxv" else gbla.vxm(u, A, name, **kwargs)
        assert out is None or w is out
        idx, vals = w.to_coo()
        return host(idx), host(vals)

    # ------------------------------------------------------------------ any: the valid values
    def any_secondi_choices(self, op, case):
        """For each output position, the values any_secondi may give there: each k the row
        offers, or accum(old value, k) where an accum meets an old value."""
        present = np.zeros(self.shape, bool)
        present[self.rows, self.cols] = True
        u_present = np.zeros(self.u_size, bool)
        u_present[self.u[0]] = True
        pairs = present & u_present[None, :] if op == "mxv" else present & u_present[:, None]
        ks = (
            [np.flatnonzero(pairs[i]) for i in range(self.out_size)]
            if op == "mxv"
            else [np.flatnonzero(pairs[:, j]) for j in range(self.out_size)]
        )
        old = dict(zip(*self.old)) if self.old is not None else {}
        accum = {None: None, "plus": np.add, "min": np.fmin, "max": np.fmax, "times": np.multiply}[
            case["accum"]
        ]
        return [
            [k if (accum is None or i not in old) else accum(old[i], k) for k in ks[i]]
            for i in range(self.out_size)
        ]


def _check(name, op, case, device):
    out_dtype = gbla.semirings.get(name).output_dtype(case["dtype"])
    ops = Operands(case, op, out_dtype)
    g_idx, g_vals = ops.gb_run(op, name, case)
    for direction in ("push", "pull"):
        idx, vals = ops.gbla_run(op, name, case, device, direction)
        where = f"{op} {name} on {case['dtype']} ({direction}), {case}"
        assert vals.dtype == g_vals.dtype, where
        assert idx.tolist() == g_idx.tolist(), f"structure differs: {where}"
        same = (vals == g_vals) | ((vals != vals) & (g_vals != g_vals))
        if name == "any_secondi":
            choices = ops.any_secondi_choices(op, case)
            for i, v, ok in zip(idx, vals, same):
                assert ok or v in choices[i], f"{v} at {i} is no product of the row: {where}"
        else:
            bad = np.flatnonzero(~same)
            assert not len(bad), (
                f"values differ at {idx[bad[0]]}: gbla {vals[bad[0]]!r}, "
                f"GraphBLAS {g_vals[bad[0]]!r}: {where}"
            )


@pytest.mark.parametrize("name", sorted(SEMIRINGS))
@fixture_ok
@given(data=st.data())
def test_masked_mxv_and_vxm_match_suitesparse(name, device, data):
    case = data.draw(cases(name), label="case")
    for op in ("mxv", "vxm"):
        _check(name, op, case, device)


# A (3 x 3)          u = [-, 10, 20]
#   [. 1 2]
#   [. . 3]
#   [4 . .]
EDGES = ([0, 0, 1, 2], [1, 2, 2, 0], [1, 2, 3, 4])


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_secondi_gives_the_index_of_the_vector_entry_in_mxv_and_in_vxm(device):
    rows, cols, vals = EDGES
    A = gbla.Matrix.from_edges(rows, cols, np.array(vals), n=3, device=device)
    u = gbla.Vector.from_coo([1, 2], np.array([10, 20]), 3, device=device)
    gA = gb.Matrix.from_coo(rows, cols, vals, nrows=3, ncols=3, dtype=np.int64)
    gu = gb.Vector.from_coo([1, 2], [10, 20], size=3, dtype=np.int64)
    # mxv: w(i) = min k over A(i, k) and u(k): w(0) = min(1, 2), w(1) = 2, w(2) has none
    # vxm: w(j) = min k over u(k) and A(k, j): w(0) = 2 (A(2, 0)), w(2) = min(1)
    for w, g, expected in [
        (gbla.mxv(A, u, "min_secondi"), gA.mxv(gu, gb.semiring.ss.min_secondi), ([0, 1], [1, 2])),
        (gbla.vxm(u, A, "min_secondi"), gu.vxm(gA, gb.semiring.ss.min_secondi), ([0, 2], [2, 1])),
    ]:
        idx, values = (host(a).tolist() for a in w.to_coo())
        g_idx, g_values = (a.tolist() for a in g.new().to_coo())
        assert (idx, values) == (g_idx, g_values) == expected


def test_min_and_max_ignore_nan_as_suitesparse_does(device):
    rows, cols, vals = EDGES
    a = np.array([1.0, 2.0, np.nan, 4.0])  # A(1, 2) is NaN
    x = np.array([np.nan, 10.0, 20.0])
    A = gbla.Matrix.from_edges(rows, cols, a, n=3, device=device)
    u = gbla.Vector.from_dense(x, device=device)
    gA = gb.Matrix.from_coo(rows, cols, a, nrows=3, ncols=3)
    gu = gb.Vector.from_coo([0, 1, 2], x, size=3)
    # min_plus row 0: min(1 + 10, 2 + 20) = 11; row 1: NaN + 20 = NaN; row 2: 4 + NaN = NaN
    # min_max row 0: min(10, 20) = 10; row 1: max(NaN, 20) = 20; row 2: max(4, NaN) = 4
    expected = {
        "min_plus": [11.0, np.nan, np.nan],
        "max_plus": [22.0, np.nan, np.nan],
        "min_max": [10.0, 20.0, 4.0],
        "max_min": [2.0, 20.0, 4.0],
    }
    for name, want in expected.items():
        for direction in ("push", "pull"):
            got = host(gbla.mxv(A, u, name, direction=direction).to_dense())
            g = gA.mxv(gu, getattr(gb.semiring, name)).new().to_dense()
            assert np.array_equal(got, want, equal_nan=True), (name, direction, got)
            assert np.array_equal(g, want, equal_nan=True), (name, g)
