"""A Matrix's rows and columns reduced to a Vector, apply over a Matrix, and extract (GrB_extract)
of a sub-vector or sub-matrix: each checked against SciPy or NumPy on the same inputs."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import gbla
from gbla import semirings
from gbla.exceptions import DimensionMismatch, DomainMismatch, InvalidIndex, InvalidValue

from .conftest import host


def _matrix(seed=0, shape=(9, 7), density=0.35):
    # values 1..9 (no zero: a dense copy tells entries apart), rows 2 and 5 empty
    S = sp.random(*shape, density=density, format="csr", random_state=seed)
    S.data = np.floor(S.data * 9) + 1
    S = S.tolil()
    S[2, :] = 0
    S[5, :] = 0
    return sp.csr_array(S.tocsr())


def _entries(v):
    i, x = v.to_coo()
    return host(i), host(x)


def _pattern(S):
    P = S.copy()
    P.data = np.ones(len(P.data), bool)
    return P.toarray()


@pytest.mark.parametrize(
    "name, ufunc",
    [("plus", np.add), ("min", np.minimum), ("max", np.maximum), ("times", np.multiply)],
)
def test_each_row_and_column_reduces_as_scipy_does(device, name, ufunc):
    S = _matrix()
    A = gbla.Matrix.from_scipy(S, device=device)
    dense, pattern = S.toarray(), _pattern(S)
    for along, M, P, got in (
        (1, dense, pattern, gbla.reduce_rowwise(A, name)),
        (0, dense.T, pattern.T, gbla.reduce_columnwise(A, name)),
    ):
        idx, vals = _entries(got)
        has = np.flatnonzero(P.any(axis=1))
        np.testing.assert_array_equal(idx, has, err_msg=f"axis {along}")
        expected = [ufunc.reduce(M[i][P[i]]) for i in has]
        np.testing.assert_array_equal(vals, expected)
        assert got.size == M.shape[0] and got.dtype == A.dtype


def test_row_reductions_of_a_pattern_and_of_integers(device):
    S = _matrix(1)
    P = gbla.Matrix.from_scipy(S, device=device).pattern()
    idx, vals = _entries(gbla.reduce_rowwise(P, "lor"))
    np.testing.assert_array_equal(idx, np.flatnonzero(np.diff(S.indptr)))
    assert vals.dtype == bool and vals.all()
    with pytest.raises(DomainMismatch, match="A.dtype"):
        gbla.reduce_rowwise(P, "plus")  # plus takes no bool
    degrees = gbla.Matrix.from_scipy(S.astype(bool).astype(np.int64), device=device)
    counts = gbla.reduce_rowwise(degrees, "plus")
    np.testing.assert_array_equal(host(counts.to_dense(0)), np.diff(S.indptr))  # out-degrees
    anyv = _entries(gbla.reduce_rowwise(gbla.Matrix.from_scipy(S, device=device), "any"))
    for i, x in zip(*anyv):  # any: one of the row's values
        assert x in S[[i]].data


def test_row_reduction_writes_through_mask_accum_and_replace(device):
    S = _matrix(2)
    A = gbla.Matrix.from_scipy(S, device=device)
    sums = S.sum(axis=1)
    old = gbla.Vector.from_coo([0, 1, 2, 3], [100.0, 200.0, 300.0, 400.0], 9, device=device)
    m = gbla.Vector.from_coo([0, 2, 4, 6], [True] * 4, 9, device=device)
    # plus-accumulated into old where the mask allows; old kept elsewhere
    w = gbla.reduce_rowwise(A, "plus", mask=m.S, accum="plus", out=old.dup())
    expected = {0: 100.0 + sums[0], 1: 200.0, 2: 300.0, 3: 400.0}
    for i in (4, 6):
        if S.indptr[i + 1] > S.indptr[i]:
            expected[i] = sums[i]
    idx, vals = _entries(w)
    assert dict(zip(idx.tolist(), vals.tolist())) == pytest.approx(expected)
    # replace: what the mask does not allow goes
    w = gbla.reduce_rowwise(A, "plus", mask=m.S, replace=True, out=old.dup())
    idx, _ = _entries(w)
    assert set(idx.tolist()) == {i for i in (0, 4, 6) if S.indptr[i + 1] > S.indptr[i]}
    np.testing.assert_array_equal(_entries(old)[1], [100.0, 200.0, 300.0, 400.0])  # never touched
    with pytest.raises(DimensionMismatch, match="mask.size"):
        gbla.reduce_columnwise(A, "plus", mask=m.S)  # 7 columns


def test_a_matrix_reduces_to_one_value(device):
    S = _matrix(3)
    A = gbla.Matrix.from_scipy(S, device=device)
    assert float(gbla.reduce(A, "plus")) == pytest.approx(S.sum())
    assert float(gbla.reduce(A, "min")) == S.data.min()
    assert float(gbla.reduce(A, "any")) == S.data[0]  # the first entry in row order
    empty = gbla.Matrix.from_edges([], [], n=3, device=device)
    assert bool(gbla.reduce(empty, "lor")) is False
    with pytest.raises(DomainMismatch, match="A.dtype"):
        gbla.reduce(A.pattern(), "plus")


def test_apply_on_a_matrix_keeps_its_structure_and_leaves_it_alone(device):
    S = _matrix(4)
    A = gbla.Matrix.from_scipy(S, device=device)
    before = A.to_scipy().toarray()
    neg = gbla.apply(A, semirings.unary.ainv)
    np.testing.assert_array_equal(neg.to_scipy().toarray(), -S.toarray())
    assert neg.nvals == A.nvals
    half = gbla.apply(A, "div", right=2.0)
    np.testing.assert_array_equal(half.to_scipy().toarray(), S.toarray() / 2)
    inv = gbla.apply(A, "minus", left=10)
    np.testing.assert_array_equal(
        inv.to_scipy().toarray(), np.where(_pattern(S), 10 - S.toarray(), 0)
    )
    rows = gbla.apply(A, semirings.unary.rowindex)
    np.testing.assert_array_equal(rows.to_scipy().data, np.repeat(np.arange(9), np.diff(S.indptr)))
    assert rows.dtype == np.int64
    np.testing.assert_array_equal(A.to_scipy().toarray(), before)
    # a matrix mask and an out: out's entries outside the mask stay; inside, A's entries
    # replace them and a position A has no entry at loses its entry (no accum)
    M = gbla.Matrix.from_edges([0, 1, 3], [0, 1, 3], [True] * 3, n=9, ncols=7, device=device)
    O = gbla.Matrix.from_scipy(sp.csr_array(np.full((9, 7), 7.0)), device=device)
    got = gbla.apply(A, semirings.unary.ainv, mask=M.S, out=O).to_scipy().toarray()
    expected = np.full((9, 7), 7.0)
    for i in (0, 1, 3):
        expected[i, i] = -S.toarray()[i, i]  # 0: deleted
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(O.to_scipy().toarray(), np.full((9, 7), 7.0))
    with pytest.raises(InvalidValue, match="left, right"):
        gbla.apply(A, "plus")


@pytest.mark.parametrize("I", [[3, 1, 3, 0], None, slice(1, 8, 2), np.array([], np.int64)])
def test_extract_of_a_vector_takes_the_entries_named(device, I):
    u = gbla.Vector.from_coo([0, 2, 3, 7], [1.0, 2.0, 3.0, 4.0], 9, device=device)
    dense, present = np.zeros(9), np.zeros(9, bool)
    dense[[0, 2, 3, 7]], present[[0, 2, 3, 7]] = [1.0, 2.0, 3.0, 4.0], True
    sel = (
        np.arange(9)
        if I is None
        else np.arange(9)[I]
        if isinstance(I, slice)
        else np.asarray(I, np.int64)
    )
    w = gbla.extract(u, I)
    assert w.size == len(sel)
    idx, vals = _entries(w)
    np.testing.assert_array_equal(idx, np.flatnonzero(present[sel]))
    np.testing.assert_array_equal(vals, dense[sel][present[sel]])


def test_extract_of_a_vector_through_a_mask_and_accum(device):
    u = gbla.Vector.from_dense(np.arange(6.0), device=device)
    out = gbla.Vector.from_dense(np.full(3, 10.0), device=device)
    m = gbla.Vector.from_coo([0, 2], [True, True], 3, device=device)
    w = gbla.extract(u, [5, 4, 3], mask=m.S, accum="plus", out=out.dup())
    np.testing.assert_array_equal(host(w.to_dense(0)), [15.0, 10.0, 13.0])
    np.testing.assert_array_equal(host(out.to_dense(0)), [10.0, 10.0, 10.0])


@given(
    st.lists(st.integers(0, 8), max_size=12),
    st.lists(st.integers(0, 6), max_size=10),
    st.integers(0, 3),
)
def test_extract_of_a_matrix_is_numpys_fancy_indexing(I, J, seed):
    S = _matrix(seed)
    A = gbla.Matrix.from_scipy(S, device="cpu")
    C = gbla.extract(A, I, J)
    assert C.shape == (len(I), len(J))
    dense, pattern = S.toarray(), _pattern(S)
    rows, cols = np.asarray(I, np.int64), np.asarray(J, np.int64)
    sub_p = pattern[rows][:, cols] if len(I) and len(J) else np.zeros((len(I), len(J)), bool)
    got = C.to_scipy()
    np.testing.assert_array_equal(_pattern(got) if got.nnz else np.zeros(C.shape, bool), sub_p)
    if len(I) and len(J):
        np.testing.assert_array_equal(got.toarray(), dense[rows][:, cols])


def test_extract_of_a_matrix_on_every_device(device):
    S = _matrix(5)
    A = gbla.Matrix.from_scipy(S, device=device)
    I, J = [8, 0, 8, 3, 5], [6, 1, 1, 0]
    C = gbla.extract(A, I, J)
    np.testing.assert_array_equal(C.to_scipy().toarray(), S.toarray()[I][:, J])
    np.testing.assert_array_equal(gbla.extract(A, None, J).to_scipy().toarray(), S.toarray()[:, J])
    np.testing.assert_array_equal(
        gbla.extract(A, slice(None, None, -1)).to_scipy().toarray(), S.toarray()[::-1]
    )
    # the induced subgraph of a pattern stays a pattern
    square = S.toarray()[:7, :7]
    P = gbla.Matrix.from_scipy(sp.csr_array(square + square.T), device=device).pattern()
    keep = [0, 3, 4, 6]
    sub = gbla.extract(P, keep, keep)
    assert sub.is_iso and sub.is_symmetric
    # a mask, an accumulator and an out read and never modified
    O = gbla.Matrix.from_scipy(sp.csr_array(np.ones((5, 4))), device=device)
    M = gbla.Matrix.from_scipy(sp.csr_array(np.eye(5, 4, dtype=bool)), device=device)
    got = gbla.extract(A, I, J, mask=M.S, accum="plus", out=O).to_scipy().toarray()
    expected = np.ones((5, 4))
    sub_d = S.toarray()[I][:, J]
    for k in range(4):
        expected[k, k] += sub_d[k, k]
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(O.to_scipy().toarray(), np.ones((5, 4)))


@pytest.mark.parametrize(
    "I, J, error, match",
    [
        ([0, -1], None, InvalidIndex, "I must hold no negative index"),
        ([0, 9], None, InvalidIndex, "I must hold indices < 9"),
        (None, [7], InvalidIndex, "J must hold indices < 7"),
        ([True, False], None, InvalidValue, "I must hold integers"),
        ([0.5], None, InvalidValue, "I must hold integers"),
        ([[0, 1]], None, InvalidValue, "I must be one-dimensional"),
        (3, None, InvalidValue, "I must be a sequence"),
    ],
)
def test_a_bad_index_list_is_named(device, I, J, error, match):
    A = gbla.Matrix.from_scipy(_matrix(), device=device)
    with pytest.raises(error, match=match):
        gbla.extract(A, I, J)


def test_extract_of_a_vector_takes_no_columns(device):
    u = gbla.Vector.from_dense(np.arange(3.0), device=device)
    with pytest.raises(InvalidValue, match="J must be None"):
        gbla.extract(u, [0], [1])
    with pytest.raises(InvalidIndex, match="I must hold indices < 3"):
        gbla.extract(u, [3])
