"""mxv and vxm against a dense oracle of the GraphBLAS C API specification.

The oracle below is written from the specification with plain loops and shares nothing with
gbla but the op names: t(i) = add over the k where A(i, k) and u(k) are both present of
multiply(A(i, k), u(k)) (vxm: multiply(u(k), A(k, j)), the vector first), computed in
T = result_type(A.dtype, u.dtype); then out<mask, replace> accum= t.

Every builtin semiring is run against it for every mask kind, complement, accum and replace,
for mxv and vxm, in each direction (push, pull, auto), on small graphs holding the degenerate
cases: empty rows and columns, 0x0 / nx0 / 0xn, empty and full vectors, unsorted and duplicate
SciPy entries, explicit zeros, int64 indices, iso patterns. Values are small integers, so that
every sum and product is exact in every dtype and results must be exactly equal. Where the add
monoid is ``any`` and the product depends on values or positions, the result is not unique: the
structure must equal the oracle's and each value must be one of the candidate products.
"""

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbla
from gbla import semirings

from .conftest import GPU, host

SEMIRINGS = [semirings.get(name) for name in semirings.names()]
DIRECTIONS = ("push", "pull", "auto")


# ============================================================================== the oracle
# Ops on Python scalars (bool, int, float). Values are small integers, so Python arithmetic is
# exactly NumPy's in every dtype the tests use (no overflow, no rounding).
MULTIPLY = {
    "plus": lambda x, y: x + y,
    "minus": lambda x, y: x - y,
    "times": lambda x, y: x * y,
    "div": lambda x, y: float(np.divide(np.float64(x), np.float64(y))),  # C's x / y in floats
    "min": min,
    "max": max,
    "first": lambda x, y: x,
    "second": lambda x, y: y,
    "pair": lambda x, y: 1,
    "any": lambda x, y: x,
    "lor": lambda x, y: bool(x) or bool(y),
    "land": lambda x, y: bool(x) and bool(y),
    "lxor": lambda x, y: bool(x) != bool(y),
    "eq": lambda x, y: x == y,
    "ne": lambda x, y: x != y,
    "lt": lambda x, y: x < y,
    "le": lambda x, y: x <= y,
    "gt": lambda x, y: x > y,
    "ge": lambda x, y: x >= y,
    "bor": lambda x, y: x | y,  # Python's ints are two's complement to any width
    "band": lambda x, y: x & y,
    "bxor": lambda x, y: x ^ y,
    "bandnot": lambda x, y: x & ~y,
    "bucket_end": lambda x, y: _bucket_end(x, y),
}


def _bucket_end(x, y):
    # the end of x's bucket of width y, never below x, in C's floats (x / 0 and 0 / 0 included)
    x, y = np.float64(x), np.float64(y)
    with np.errstate(all="ignore"):
        return float(np.fmax((np.floor(x / y) + 1) * y, x))


BOOL_RESULT = {"eq", "ne", "lt", "le", "gt", "ge"}
# Monoids as folds over a non-empty list; ``any`` is not a fold (see oracle_product).
FOLD = {
    "plus": sum,
    "times": lambda xs: functools.reduce(lambda a, b: a * b, xs),
    "min": min,
    "max": max,
    "lor": any,
    "land": all,
    "lxor": lambda xs: sum(map(bool, xs)) % 2 == 1,
    "eq": lambda xs: functools.reduce(lambda a, b: a == b, xs),
    "bor": lambda xs: functools.reduce(lambda a, b: a | b, xs),
    "band": lambda xs: functools.reduce(lambda a, b: a & b, xs),
    "bxor": lambda xs: functools.reduce(lambda a, b: a ^ b, xs),
}


def cast(value, dtype):
    """A Python scalar converted to ``dtype`` as NumPy's astype does, back as a Python scalar."""
    return np.asarray(value).astype(dtype).item()


def op_result_dtype(op_name, dtype):
    if op_name in BOOL_RESULT:
        return np.dtype(bool)
    if op_name == "secondi":
        return np.dtype(np.int64)
    return np.dtype(dtype)


@dataclass(frozen=True)
class Expected:
    """The oracle's answer: the dtype, and per position None (no entry) or the tuple of values
    the entry may take (one value unless an ``any`` monoid chooses)."""

    dtype: np.dtype
    cands: tuple


def oracle_product(A_values, A_present, u_values, u_present, add, multiply, vector_first=False):
    """t = A add.multiply u on dense arrays, by loops (``vector_first``: multiply(u(k), A(i, k)),
    which is vxm when given A's transpose)."""
    T = np.result_type(A_values.dtype, u_values.dtype)
    Z = op_result_dtype(multiply, T)
    a = A_values.astype(T).tolist()
    u = u_values.astype(T).tolist()
    cands = []
    for i in range(A_values.shape[0]):
        products = []
        for k in range(A_values.shape[1]):
            if A_present[i, k] and u_present[k]:
                if multiply == "secondi":
                    p = k
                elif vector_first:
                    p = MULTIPLY[multiply](u[k], a[i][k])
                else:
                    p = MULTIPLY[multiply](a[i][k], u[k])
                products.append(cast(p, Z))
        if not products:
            cands.append(None)
        elif add == "any":
            cands.append(tuple(sorted(set(products))))
        else:
            cands.append((cast(FOLD[add](products), Z),))
    return Expected(Z, tuple(cands))


def oracle_allowed(kind, values, present):
    """Positions a mask allows: kind in 'S', 'V', '~S', '~V' over the mask vector."""
    allowed = present.copy() if kind.endswith("S") else present & (values != 0)
    return ~allowed if kind.startswith("~") else allowed


def oracle_write(t, out, allowed, accum, replace):
    """out<allowed, replace> accum= t. ``out``: None or (values, present) of the old output;
    ``allowed``: None (no mask) or a bool array; ``accum``: None or an op name."""
    if out is None:
        out_dtype, old = t.dtype, [None] * len(t.cands)
    else:
        out_values, out_present = out
        out_dtype = out_values.dtype
        old = [(v,) if p else None for v, p in zip(out_values.tolist(), out_present.tolist())]
    if accum is None:
        z = t.cands
    else:
        W = np.result_type(out_dtype, t.dtype)
        R = op_result_dtype(accum, W)

        def combine(o, c):
            return cast(MULTIPLY[accum](cast(o, W), cast(c, W)), R)

        z = [
            tc if oc is None else oc if tc is None else tuple(combine(oc[0], c) for c in tc)
            for oc, tc in zip(old, t.cands)
        ]
    final = []
    for i, (zc, oc) in enumerate(zip(z, old)):
        if allowed is None or allowed[i]:
            final.append(zc)
        else:
            final.append(None if replace else oc)
    final = [None if c is None else tuple(sorted({cast(v, out_dtype) for v in c})) for c in final]
    return Expected(np.dtype(out_dtype), tuple(final))


def assert_matches(w, expected, where):
    """w has the oracle's dtype and structure, and every value is one the oracle allows."""
    idx, vals = (host(a) for a in w.to_coo())
    assert w.dtype == expected.dtype, f"{where}: dtype {w.dtype}, expected {expected.dtype}"
    assert idx.dtype == np.int64, where
    want = [i for i, c in enumerate(expected.cands) if c is not None]
    assert idx.tolist() == want, f"{where}: structure {idx.tolist()}, expected {want}"
    assert w.nvals == len(want), where
    for i, v in zip(want, vals.tolist()):
        allowed = expected.cands[i]
        # a NaN (0 / 0) matches a NaN the oracle allows
        ok = v in allowed if v == v else any(c != c for c in allowed)
        assert ok, f"{where}: w({i}) = {v!r}, expected {allowed}"


def unique_answer(semiring):
    """Whether the product has one right answer (``any`` chooses unless every product is 1)."""
    return semiring.add.name != "any" or semiring.multiply.name == "pair"


def test_oracle_on_a_drawn_example():
    # The oracle itself, on a case worked by hand. A (3x3, '.' = no entry) and u:
    #     [ 1 . 2 ]        u = [ 10  .  3 ]
    #     [ . 4 . ]
    #     [ 0 5 . ]        (the 0 is an explicit entry)
    # min_plus:  t = [ min(1+10, 2+3), -, 0+10 ] = [ 5, -, 10 ]
    # any_secondi: t(0) is 0 or 2, t(2) is 0
    A_values = np.array([[1, 0, 2], [0, 4, 0], [0, 5, 0]])
    A_present = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]], bool)
    u_values, u_present = np.array([10, 0, 3]), np.array([1, 0, 1], bool)
    t = oracle_product(A_values, A_present, u_values, u_present, "min", "plus")
    assert t == Expected(np.dtype(np.int64), ((5,), None, (10,)))
    t = oracle_product(A_values, A_present, u_values, u_present, "any", "secondi")
    assert t == Expected(np.dtype(np.int64), ((0, 2), None, (0,)))
    # out = [ 7, 1, - ], mask ~V of m = [ 0, -, 1 ] (allows 0 and 1), accum plus, replace:
    # out(0) = 7 + 5 = 12; out(1) = 1 (no t(1)); position 2 is not allowed: deleted.
    t = oracle_product(A_values, A_present, u_values, u_present, "min", "plus")
    allowed = oracle_allowed("~V", np.array([0, 0, 1]), np.array([1, 0, 1], bool))
    assert allowed.tolist() == [True, True, False]
    out = (np.array([7, 1, 0], np.int32), np.array([1, 1, 0], bool))
    got = oracle_write(t, out, allowed, "plus", replace=True)
    assert got == Expected(np.dtype(np.int32), ((12,), (1,), None))


# ============================================================================== test data
@dataclass(frozen=True)
class Graph:
    label: str
    values: np.ndarray  # dense values, the Matrix's dtype
    present: np.ndarray  # dense bool presence
    build: Callable  # device -> gbla.Matrix


@dataclass(frozen=True)
class Vec:
    label: str
    values: np.ndarray
    present: np.ndarray
    build: Callable  # device -> gbla.Vector


def draw_values(rng, shape, dtype):
    """Small integers, -1..2: every product of up to 12 of them and their sums stay exact and
    within int32 and float32 (a times monoid over a full row of 12 products is at most 4**12)."""
    if np.dtype(dtype) == np.bool_:
        return rng.random(shape) < 0.5
    return rng.integers(-1, 3, shape).astype(dtype)


def draw_dense(rng, shape, dtype, density):
    present = rng.random(shape) < density
    values = np.where(present, draw_values(rng, shape, dtype), np.zeros((), dtype))
    return values.astype(dtype), present


def csr_parts(values, present):
    rows, cols = np.nonzero(present)
    indptr = np.concatenate([[0], np.cumsum(present.sum(axis=1))]).astype(np.int32)
    return indptr, cols.astype(np.int32), values[rows, cols]


def scipy_graph(label, values, present, index_dtype=None):
    indptr, indices, data = csr_parts(values, present)
    S = sp.csr_matrix((data, indices, indptr), shape=values.shape)
    return Graph(
        label,
        values,
        present,
        lambda device: gbla.Matrix.from_scipy(S, device=device, index_dtype=index_dtype),
    )


def unsorted_graph(rng, dtype):
    values, present = draw_dense(rng, (8, 10), dtype, 0.45)
    indptr, indices, data = csr_parts(values, present)
    for r in range(len(indptr) - 1):  # each row's columns in descending order
        seg = slice(indptr[r], indptr[r + 1])
        indices[seg], data[seg] = indices[seg][::-1].copy(), data[seg][::-1].copy()
    S = sp.csr_matrix((data, indices, indptr), shape=values.shape)
    S.has_sorted_indices = False
    assert any((np.diff(indices[indptr[r] : indptr[r + 1]]) < 0).any() for r in range(8))
    return Graph(
        "unsorted scipy indices",
        values,
        present,
        lambda device: gbla.Matrix.from_scipy(S, device=device),
    )


def split_duplicates(rng, values, present):
    """COO triples in which about half the entries come as two pieces that SciPy sums back."""
    rows, cols, data = [], [], []
    for i, j in zip(*np.nonzero(present)):
        v = values[i, j]
        if rng.random() < 0.5:
            if values.dtype == np.bool_:
                pieces = [v, v and rng.random() < 0.5]  # or-ed back together
            else:
                x = values.dtype.type(rng.integers(-1, 3))
                pieces = [v - x, x]
        else:
            pieces = [v]
        rows += [i] * len(pieces)
        cols += [j] * len(pieces)
        data += pieces
    order = rng.permutation(len(rows))
    return (
        np.array(rows, np.int64)[order],
        np.array(cols, np.int64)[order],
        np.array(data, values.dtype)[order],
    )


def duplicate_graphs(rng, dtype):
    values, present = draw_dense(rng, (9, 7), dtype, 0.5)
    rows, cols, data = split_duplicates(rng, values, present)
    C = sp.coo_matrix((data, (rows, cols)), shape=values.shape)
    # The same triples as a CSR with duplicate (and unsorted) column indices in a row.
    order = np.argsort(rows, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=9))])
    S = sp.csr_matrix((data[order], cols[order], indptr), shape=values.shape)
    S.has_sorted_indices = False
    plus = gbla.semirings.binary.plus  # the pieces sum to the value: SciPy's rule
    return [
        Graph(
            "duplicate coo entries",
            values,
            present,
            lambda device: gbla.Matrix.from_scipy(C, dup_op=plus, device=device),
        ),
        Graph(
            "duplicate csr entries",
            values,
            present,
            lambda device: gbla.Matrix.from_scipy(S, dup_op=plus, device=device),
        ),
    ]


def edge_graphs(rng, dtype):
    n = 8
    values, present = draw_dense(rng, (n, n), dtype, 0.35)
    present[[1, 4], [1, 4]] = True  # self-loops
    src, dst = np.nonzero(present)
    order = rng.permutation(len(src))
    src, dst, w = src[order], dst[order], values[src[order], dst[order]]
    weighted = Graph(
        "from_edges weighted",
        values,
        present,
        lambda device: gbla.Matrix.from_edges(src, dst, w, n, device=device),
    )
    # Unweighted: a bool pattern, every value True; repeated edges merge.
    pattern = rng.random((n, n)) < 0.3
    pattern[:, 6] = False  # an empty column
    s, d = np.nonzero(pattern)
    s, d = np.concatenate([s, s[:3]]), np.concatenate([d, d[:3]])
    iso = Graph(
        "from_edges iso pattern",
        pattern.copy(),
        pattern,
        lambda device: gbla.Matrix.from_edges(s, d, None, n, device=device),
    )
    return [weighted, iso]


def long_row_graph(rng, dtype):
    """40x40 with a full row and a full column: rows longer than a warp on the GPU's pull.
    Paired only with vectors of at most 10 entries, so no output reduces more than 10 products."""
    values, present = draw_dense(rng, (40, 40), dtype, 0.05)
    present[3, :] = present[:, 5] = True
    values[3, :] = draw_values(rng, 40, dtype)
    values[:, 5] = draw_values(rng, 40, dtype)
    return scipy_graph("40x40 with a full row and column", values, present)


def graphs(dtype, rng):
    values, present = draw_dense(rng, (7, 9), dtype, 0.4)
    present[2, :] = False  # an empty row
    present[:, 4] = False  # an empty column
    present[0, 0], values[0, 0] = True, 0  # an explicit zero: an entry
    square, square_present = draw_dense(rng, (9, 9), dtype, 0.4)
    square_present[5, :] = False
    empty = np.zeros((6, 6), dtype)
    return [
        scipy_graph("7x9 empty row and column, explicit zero", values, present),
        scipy_graph("9x9 int64 indices", square, square_present, index_dtype=np.int64),
        unsorted_graph(rng, dtype),
        *duplicate_graphs(rng, dtype),
        *edge_graphs(rng, dtype),
        scipy_graph("6x6 without entries", empty, np.zeros((6, 6), bool)),
        scipy_graph("0x0", np.zeros((0, 0), dtype), np.zeros((0, 0), bool)),
        scipy_graph("5x0", np.zeros((5, 0), dtype), np.zeros((5, 0), bool)),
        scipy_graph("0x5", np.zeros((0, 5), dtype), np.zeros((0, 5), bool)),
        long_row_graph(rng, dtype),
    ]


def vectors(size, dtype, rng, at_most=None):
    """An empty, a full and a sparse vector (shuffled COO input, explicit zeros) of ``size``."""
    dtype = np.dtype(dtype)
    if at_most is not None:
        idx = rng.permutation(size)[:at_most]
        present = np.zeros(size, bool)
        present[idx] = True
        values = np.where(present, draw_values(rng, size, dtype), np.zeros((), dtype))
        values = values.astype(dtype)
        return [
            Vec(
                f"{at_most} entries",
                values,
                present,
                lambda device: gbla.Vector.from_coo(idx, values[idx], size, device=device),
            )
        ]
    full = draw_values(rng, size, dtype)
    values, present = draw_dense(rng, size, dtype, 0.5)
    if size:
        present[0], values[0] = True, 0
    idx = rng.permutation(np.flatnonzero(present))
    return [
        Vec(
            "no entries",
            np.zeros(size, dtype),
            np.zeros(size, bool),
            lambda device: gbla.Vector.new(size, dtype, device=device),
        ),
        Vec(
            "full",
            full,
            np.ones(size, bool),
            lambda device: gbla.Vector.from_dense(full, device=device),
        ),
        Vec(
            "sparse",
            values,
            present,
            lambda device: gbla.Vector.from_coo(idx, values[idx], size, device=device),
        ),
    ]


@dataclass(frozen=True)
class Scenario:
    """A graph, a vector for it, a mask vector and an old output pattern for the result."""

    graph: Graph
    vector: Vec
    mask: Vec
    out_values: np.ndarray  # int64 -1..2, cast to the output dtype when used
    out_present: np.ndarray

    @property
    def label(self):
        return f"{self.graph.label} / u {self.vector.label}"


def draw_mask(rng, size, choice):
    """Mask vectors: sparse with zero values (value and structure differ), full with zeros,
    or without entries; stored as bool, int32 or float64."""
    dtype = (np.bool_, np.int32, np.float64)[choice % 3]
    kind = choice % 4
    if kind == 3:
        return Vec(
            "empty mask",
            np.zeros(size, dtype),
            np.zeros(size, bool),
            lambda device: gbla.Vector.new(size, dtype, device=device),
        )
    values = rng.integers(0, 3, size).astype(dtype)
    if kind == 2:
        return Vec(
            "full mask",
            values,
            np.ones(size, bool),
            lambda device: gbla.Vector.from_dense(values, device=device),
        )
    present = rng.random(size) < 0.6
    idx = np.flatnonzero(present)
    return Vec(
        "sparse mask",
        np.where(present, values, 0).astype(dtype),
        present,
        lambda device: gbla.Vector.from_coo(idx, values[idx], size, device=device),
    )


@functools.lru_cache(maxsize=None)
def scenarios(dtype_name, kind):
    """Every (graph, vector) pair of one dtype, for mxv or vxm (the vector's size differs)."""
    rng = np.random.default_rng([ord(c) for c in dtype_name + kind])
    out = []
    for g in graphs(np.dtype(dtype_name), rng):
        n_in, n_out = g.values.shape[::-1] if kind == "mxv" else g.values.shape
        long = g.values.shape[0] > 12
        for v in vectors(n_in, dtype_name, rng, at_most=10 if long else None):
            mask = draw_mask(rng, n_out, len(out))
            out_present = rng.random(n_out) < 0.5
            out.append(Scenario(g, v, mask, rng.integers(-1, 3, n_out), out_present))
    return tuple(out)


@functools.lru_cache(maxsize=None)
def built(dtype_name, kind, device):
    """The scenarios' gbla objects on ``device`` (built once: nothing writes them in place)."""
    return tuple(
        (s, s.graph.build(device), s.vector.build(device), s.mask.build(device))
        for s in scenarios(dtype_name, kind)
    )


# ============================================================================== running a case
def make_mask(mask_vector, kind):
    if kind is None:
        return None
    m = mask_vector.S if kind.endswith("S") else mask_vector.V
    return ~m if kind.startswith("~") else m


def expected_result(s, semiring, kind, mask_kind, accum, replace, out):
    """The oracle's answer for one scenario; ``out`` is None or (values, present) on the host."""
    A_values, A_present = s.graph.values, s.graph.present
    if kind == "vxm":
        A_values, A_present = A_values.T, A_present.T
    t = oracle_product(
        A_values,
        A_present,
        s.vector.values,
        s.vector.present,
        semiring.add.name,
        semiring.multiply.name,
        vector_first=kind == "vxm",
    )
    allowed = (
        None if mask_kind is None else oracle_allowed(mask_kind, s.mask.values, s.mask.present)
    )
    return oracle_write(t, out, allowed, accum, replace)


def call(kind, A, u, semiring, **kw):
    return gbla.mxv(A, u, semiring, **kw) if kind == "mxv" else gbla.vxm(u, A, semiring, **kw)


def out_dtype_for(product_dtype, accum, choice):
    """The old output's dtype: the product's, float64 or int32 (rotating), one the accum takes
    together with the product's dtype."""
    options = [product_dtype, np.dtype(np.float64), np.dtype(np.int32)]
    options = options[choice % 3 :] + options[: choice % 3]
    for d in options:
        if (
            accum is None
            or np.result_type(d, product_dtype) in getattr(semirings.binary, accum).dtypes
        ):
            return d
    raise AssertionError(f"no output dtype for accum {accum} and {product_dtype}")


def run_case(
    s, A, u, mask_vector, semiring, kind, *, mask_kind, accum, replace, with_out, choice, device
):
    """One scenario in every direction: each result matches the oracle; with a unique answer
    push, pull and auto agree exactly. Returns the push result."""
    T = np.result_type(A.dtype, u.dtype)
    product_dtype = semiring.output_dtype(T)
    out_host = None
    if with_out:
        out_dtype = out_dtype_for(product_dtype, accum, choice)
        out_host = (s.out_values.astype(out_dtype), s.out_present)
    expected = expected_result(s, semiring, kind, mask_kind, accum, replace, out_host)
    results = []
    for direction in DIRECTIONS:
        where = (
            f"{kind} {semiring.name} {T.name} [{s.label}] mask={mask_kind} accum={accum} "
            f"replace={replace} out={with_out} direction={direction} on {device}"
        )
        out = None
        if with_out:
            idx = np.flatnonzero(out_host[1])
            out = gbla.Vector.from_coo(idx, out_host[0][idx], len(out_host[1]), device=device)
        w = call(
            kind,
            A,
            u,
            semiring,
            mask=make_mask(mask_vector, mask_kind),
            accum=None if accum is None else getattr(semirings.binary, accum),
            replace=replace,
            out=out,
            direction=direction,
        )
        if with_out:
            assert w is out, where
        assert_matches(w, expected, where)
        results.append(w)
    if unique_answer(semiring):
        push, pull, auto = results
        assert push.isequal(pull) and push.isequal(auto), where
    return results[0]


def dtype_for(semiring, choice):
    return semiring.dtypes[choice % len(semiring.dtypes)].name


# ============================================================================== the product
MASKS = [None, "S", "V", "~S", "~V"]
ACCUMS = [None, "plus", "min", "second"]
COMBOS = list(itertools.product(MASKS, ACCUMS, [False, True]))


@pytest.mark.parametrize("kind", ["mxv", "vxm"])
@pytest.mark.parametrize(
    "mask_kind, accum, replace",
    COMBOS,
    ids=[f"mask={m}-accum={a}-replace={r}" for m, a, r in COMBOS],
)
def test_every_semiring_matches_the_oracle_in_every_direction(
    kind, mask_kind, accum, replace, device
):
    # Per semiring one dtype and four scenarios, rotating with the combination, so that across
    # the parametrization every semiring meets every dtype, graph, vector and mask vector.
    p = COMBOS.index((mask_kind, accum, replace))
    for si, semiring in enumerate(SEMIRINGS):
        dtype_name = dtype_for(semiring, si + p)
        cases = built(dtype_name, kind, device)
        for j in range(4):
            choice = (si * 4 + j) * 7 + p * 5
            s, A, u, m = cases[choice % len(cases)]
            run_case(
                s,
                A,
                u,
                m,
                semiring,
                kind,
                mask_kind=mask_kind,
                accum=accum,
                replace=replace,
                with_out=True,
                choice=choice,
                device=device,
            )
            if accum is None and not replace:  # a new output: nothing to accumulate into
                run_case(
                    s,
                    A,
                    u,
                    m,
                    semiring,
                    kind,
                    mask_kind=mask_kind,
                    accum=None,
                    replace=False,
                    with_out=False,
                    choice=choice,
                    device=device,
                )


@pytest.mark.parametrize("kind", ["mxv", "vxm"])
def test_every_semiring_in_every_dtype_matches_the_oracle(kind, device):
    for si, semiring in enumerate(SEMIRINGS):
        for di, dtype in enumerate(semiring.dtypes):
            cases = built(dtype.name, kind, device)
            for j in range(2):
                choice = si * 3 + di * 5 + j * 11
                s, A, u, m = cases[choice % len(cases)]
                run_case(
                    s,
                    A,
                    u,
                    m,
                    semiring,
                    kind,
                    mask_kind=MASKS[choice % len(MASKS)],
                    accum=None,
                    replace=False,
                    with_out=False,
                    choice=choice,
                    device=device,
                )


MIXED = [
    ("int32", "float64"),
    ("float32", "int64"),
    ("int64", "int32"),
    ("int32", "bool"),
    ("bool", "float32"),
    ("float64", "float32"),
]
# One semiring per add monoid, their multiplies reading A, u, both, neither or the position.
MIXED_SEMIRINGS = [
    "min_plus",
    "max_minus",
    "plus_times",
    "times_first",
    "any_second",
    "lor_eq",
    "land_eq",
    "lxor_eq",
    "eq_eq",
    "plus_pair",
    "any_secondi",
]


@pytest.mark.parametrize("A_dtype, u_dtype", MIXED)
@pytest.mark.parametrize("kind", ["mxv", "vxm"])
def test_mixed_dtypes_compute_in_the_promoted_dtype(A_dtype, u_dtype, kind, device):
    # A of one dtype and u of another: the product is computed in result_type(A, u), and the
    # GPU kernels load each operand in its own dtype.
    T = np.result_type(A_dtype, u_dtype)
    rng = np.random.default_rng(7)
    values, present = draw_dense(rng, (7, 6), np.dtype(A_dtype), 0.5)
    g = scipy_graph("7x6", values, present)
    A = g.build(device)
    size = 6 if kind == "mxv" else 7
    checked = 0
    for vi, v in enumerate(vectors(size, u_dtype, rng)):
        u = v.build(device)
        mask = draw_mask(rng, 7 if kind == "mxv" else 6, vi)
        s = Scenario(
            g, v, mask, rng.integers(-1, 3, mask.values.size), rng.random(mask.values.size) < 0.5
        )
        for semiring in map(semirings.get, MIXED_SEMIRINGS):
            if T not in semiring.dtypes:
                continue
            run_case(
                s,
                A,
                u,
                mask.build(device),
                semiring,
                kind,
                mask_kind="~V",
                accum="second",
                replace=False,
                with_out=True,
                choice=vi,
                device=device,
            )
            checked += 1
    assert checked > 0


# ============================================================================== invariants
def test_inputs_are_never_modified_and_out_is_returned(device):
    # A: 3x4 SciPy CSR with unsorted columns and a duplicate (row 0: cols 3, 1, 3):
    #     [ .  2  .  1+1 ]
    #     [ .  .  .  .   ]
    #     [ 5  .  0  .   ]      (the 0 is an explicit entry)
    data = np.array([1, 2, 1, 0, 5], np.int64)
    indices = np.array([3, 1, 3, 2, 0], np.int32)
    indptr = np.array([0, 3, 3, 5], np.int32)
    S = sp.csr_matrix((data, indices, indptr), shape=(3, 4))
    S.has_sorted_indices = False
    saved = [a.copy() for a in (S.data, S.indices, S.indptr)]
    dense = np.array([1, 0, 3, 4], np.int64)
    coo_idx, coo_val = np.array([2, 0]), np.array([7, 1], np.int64)
    arrays = [dense, coo_idx, coo_val]
    arrays_saved = [a.copy() for a in arrays]

    A = gbla.Matrix.from_scipy(S, dup_op=gbla.semirings.binary.plus, device=device)
    u_full = gbla.Vector.from_dense(dense, device=device)
    u_sparse = gbla.Vector.from_coo(coo_idx, coo_val, 3, device=device)
    m = gbla.Vector.from_coo([0, 2], [1, 0], 3, device=device)
    operands = [u_full, u_sparse, m]
    before = [tuple(host(a).copy() for a in x.to_coo()) for x in operands]
    A_before = A.to_scipy()

    # t = A min.plus u_full = [ min(2+0, 2+4), -, min(5+1, 0+3) ] = [ 2, -, 3 ];
    # out<~m.V> = out with t where m is missing or 0: positions 1 and 2.
    out = gbla.Vector.from_coo([0, 1], [9, 9], 3, device=device)
    for direction in DIRECTIONS:
        w = gbla.mxv(A, u_full, "min_plus", mask=~m.V, out=out, direction=direction)
        assert w is out
        assert host(out.to_dense(-1)).tolist() == [9, -1, 3]
        out = gbla.Vector.from_coo([0, 1], [9, 9], 3, device=device)
    # vxm: u_sparse(0) = 1, u_sparse(2) = 7 along rows 0 and 2:
    # w = [ 7+5, 1+2, 7+0, 1+2 ] = [ 12, 3, 7, 3 ]
    w4 = gbla.Vector.new(4, np.int64, device=device)
    assert gbla.vxm(u_sparse, A, "min_plus", out=w4) is w4
    assert host(w4.to_dense()).tolist() == [12, 3, 7, 3]

    for a, b in zip((S.data, S.indices, S.indptr), saved):
        np.testing.assert_array_equal(a, b)
    assert not S.has_sorted_indices
    for a, b in zip(arrays, arrays_saved):
        np.testing.assert_array_equal(a, b)
    for x, b in zip(operands, before):
        for got, want in zip(x.to_coo(), b):
            np.testing.assert_array_equal(host(got), want)
    assert (A.to_scipy() != A_before).nnz == 0
    assert A.to_scipy().nnz == A_before.nnz == 4


def test_vxm_equals_mxv_on_the_explicit_transpose(device):
    # For a commutative multiply vxm(u, A) = mxv(A.T, u); and first/second swap places:
    # vxm(u, A, add_first) = mxv(A.T, u, add_second).
    rng = np.random.default_rng(11)
    checked = 0
    for semiring in SEMIRINGS:
        mult = semiring.multiply.name
        if mult == "first":
            partner = semirings.get(semiring.add.name + "_second")
        elif semiring.multiply.commutative:
            partner = semiring
        else:
            continue
        if not unique_answer(semiring):
            continue
        for dtype in semiring.dtypes:
            values, present = draw_dense(rng, (6, 9), dtype, 0.4)
            indptr, indices, data = csr_parts(values, present)
            S = sp.csr_matrix((data, indices, indptr), shape=values.shape)
            A = gbla.Matrix.from_scipy(S, device=device)
            AT = gbla.Matrix.from_scipy(S.T.tocsr(), device=device)
            u_values, u_present = draw_dense(rng, 6, dtype, 0.6)
            idx = np.flatnonzero(u_present)
            u = gbla.Vector.from_coo(idx, u_values[idx], 6, device=device)
            for direction in DIRECTIONS:
                w1 = gbla.vxm(u, A, semiring, direction=direction)
                w2 = gbla.mxv(AT, u, partner, direction=direction)
                assert w1.isequal(w2), f"{semiring.name} {dtype} {direction}"
            checked += 1
    assert checked > 100


# ============================================================================== properties
@st.composite
def small_graphs(draw):
    n = draw(st.integers(0, 10))
    if n == 0:
        return 0, [], []
    edges = draw(
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(-3, 9)),
            max_size=40,
            unique_by=lambda e: (e[0], e[1]),
        )
    )
    frontier = draw(
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, 9)),
            max_size=n,
            unique_by=lambda e: e[0],
        )
    )
    return n, edges, frontier


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    case=small_graphs(),
    dtype=st.sampled_from(["int64", "float64", "int32"]),
    kind=st.sampled_from(["mxv", "vxm"]),
)
def test_push_equals_pull_for_min_plus_and_any_secondi_is_valid(case, dtype, kind, device):
    n, edges, frontier = case
    src = np.array([e[0] for e in edges], np.int64)
    dst = np.array([e[1] for e in edges], np.int64)
    w = np.array([e[2] for e in edges], dtype)
    A = gbla.Matrix.from_edges(src, dst, w, n, device=device)
    fidx = np.array([f[0] for f in frontier], np.int64)
    u = gbla.Vector.from_coo(fidx, np.array([f[1] for f in frontier], dtype), n, device=device)

    push = call(kind, A, u, "min_plus", direction="push")
    pull = call(kind, A, u, "min_plus", direction="pull")
    assert push.isequal(pull)

    # any_secondi: w(i) present iff some frontier k has the edge k -> i (vxm) or i -> k (mxv);
    # its value is one such k.
    reach, in_frontier = {}, set(fidx.tolist())
    for s, d in zip(src.tolist(), dst.tolist()):
        k, i = (s, d) if kind == "vxm" else (d, s)
        if k in in_frontier:
            reach.setdefault(i, set()).add(k)
    for direction in DIRECTIONS:
        r = call(kind, A, u, "any_secondi", direction=direction)
        idx, vals = (host(a) for a in r.to_coo())
        assert r.dtype == np.int64
        assert idx.tolist() == sorted(reach)
        for i, k in zip(idx.tolist(), vals.tolist()):
            assert k in reach[i]


# ============================================================================== GPU == CPU
@pytest.mark.gpu
@pytest.mark.skipif(not GPU, reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("kind", ["mxv", "vxm"])
@pytest.mark.parametrize("si", range(len(SEMIRINGS)), ids=[s.name for s in SEMIRINGS])
def test_gpu_equals_cpu_on_every_case(kind, si):
    # Every semiring (one test each, so that parallel workers share the kernel compiles) in
    # every dtype on every scenario, with masks and accums rotating: the GPU's answer is the
    # CPU's (or, for an any monoid that chooses, both are valid by the oracle).
    semiring = SEMIRINGS[si]
    for dtype in semiring.dtypes:
        cpu_cases = built(dtype.name, kind, "cpu")
        gpu_cases = built(dtype.name, kind, "gpu")
        for ci, ((s, A, u, m), (_, Ag, ug, mg)) in enumerate(zip(cpu_cases, gpu_cases)):
            mask_kind = MASKS[(si + ci) % len(MASKS)]
            accum = ACCUMS[(si + ci) % len(ACCUMS)]
            kw = dict(
                mask_kind=mask_kind, accum=accum, replace=bool(ci % 2), with_out=True, choice=ci
            )
            w_cpu = run_case(s, A, u, m, semiring, kind, device="cpu", **kw)
            w_gpu = run_case(s, Ag, ug, mg, semiring, kind, device="gpu", **kw)
            assert w_gpu.device == "gpu"
            if unique_answer(semiring):
                assert w_gpu.to_device("cpu").isequal(w_cpu), (
                    f"{kind} {semiring.name} {dtype} [{s.label}]"
                )


@given(
    keys=st.lists(st.integers(0, 2**31 - 1) | st.integers(0, 5), max_size=300),
    wide=st.booleans(),
)
def test_the_cpu_push_sorts_its_destinations_as_a_stable_argsort_does(keys, wide):
    # packed with their positions where they fit (ids below 2**31), NumPy's stable argsort
    # elsewhere: either way equal destinations keep their order, so a push reduces each
    # output's products in the order a pull does
    from gbla._cpu import stable_sort

    keys = np.array(keys + ([2**40, -3] if wide else []), np.int64)
    got, order = stable_sort(keys)
    want = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(order, want)
    np.testing.assert_array_equal(got, keys[want])
