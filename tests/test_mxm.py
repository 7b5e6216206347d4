"""gbla.mxm and the matrix ewise_add against a dense reference over (value, present) pairs,
with every mask kind, accum and replace; several-source BFS against SciPy."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given
from hypothesis import strategies as st
from scipy.sparse import csgraph

import gbla
from gbla import semirings

from . import graphs as G
from .conftest import host


def dense(M):
    """(values, present) of a Matrix on the host."""
    S = M.to_scipy().tocoo()
    values = np.zeros(M.shape, S.data.dtype)
    present = np.zeros(M.shape, bool)
    values[S.row, S.col] = S.data
    present[S.row, S.col] = True
    return values, present


def reference_product(A, B, semiring):
    (a, pa), (b, pb) = dense(A), dense(B)
    m, n = a.shape[0], b.shape[1]
    dtype = np.result_type(A.dtype, B.dtype)
    out = np.zeros((m, n), semiring.output_dtype(dtype))
    present = np.zeros((m, n), bool)
    for i in range(m):
        for j in range(n):
            ks = [k for k in range(a.shape[1]) if pa[i, k] and pb[k, j]]
            if not ks:
                continue
            if semiring.multiply.positional:
                products = np.array(ks, out.dtype)
            else:
                products = semiring.multiply.apply_numpy(
                    a[i, ks].astype(dtype), b[ks, j].astype(dtype)
                ).astype(out.dtype)
            out[i, j] = semiring.add.reduceat(products, np.zeros(1, np.int64))[0]
            present[i, j] = True
    return out, present


def reference_write(t, out, mask, accum, replace):
    tv, tp = t
    if out is None:
        allowed = np.ones(tp.shape, bool) if mask is None else mask
        return tv, tp & allowed
    ov, op = out
    if accum is not None:
        both = tp & op
        merged = np.where(tp, tv, ov).astype(np.result_type(tv, ov))
        merged[both] = accum.apply_numpy(ov[both], tv[both])
        tv, tp = merged, tp | op
    if mask is None:
        return tv, tp
    values = np.where(mask, tv, ov)
    present = np.where(mask, tp, False if replace else op)
    return values, present


@st.composite
def matrices(draw, shape, dtype=np.float64):
    m, n = shape
    cells = draw(
        st.lists(
            st.tuples(st.integers(0, m - 1), st.integers(0, n - 1), st.integers(0, 9)),
            max_size=m * n,
            unique_by=lambda c: c[:2],
        )
    )
    rows = [c[0] for c in cells]
    cols = [c[1] for c in cells]
    vals = np.array([c[2] for c in cells], dtype)
    return sp.csr_array((vals, (rows, cols)), shape=shape)


SEMIRINGS = [
    semirings.plus_times,
    semirings.min_plus,
    semirings.max_first,
    semirings.any_pair,
    semirings.min_secondi,
    semirings.lor_land,
]


@G.FIXTURE_OK
@given(
    data=st.data(),
    dims=st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6)),
    semiring=st.sampled_from(SEMIRINGS),
    mask_kind=st.sampled_from([None, "S", "V", "~S", "~V"]),
    accum=st.sampled_from([None, "plus", "min"]),
    replace=st.booleans(),
    with_out=st.booleans(),
)
def test_mxm_equals_the_dense_reference(
    device, data, dims, semiring, mask_kind, accum, replace, with_out
):
    m, k, n = dims
    as_bool = semiring.add.name in ("lor",)
    dtype = np.bool_ if as_bool else np.float64
    SA, SB = data.draw(matrices((m, k), dtype)), data.draw(matrices((k, n), dtype))
    A = gbla.Matrix.from_scipy(SA, device=device)
    B = gbla.Matrix.from_scipy(SB, device=device)
    mask = out = None
    mask_bool = None
    if mask_kind is not None:
        SM = data.draw(matrices((m, n)))
        M = gbla.Matrix.from_scipy(SM, device=device)
        mv, mp = dense(M)
        mask = {"S": M.S, "V": M.V, "~S": ~M.S, "~V": ~M.V}[mask_kind]
        mask_bool = {"S": mp, "V": mp & (mv != 0), "~S": ~mp, "~V": ~(mp & (mv != 0))}[mask_kind]
    if with_out:
        out = gbla.Matrix.from_scipy(data.draw(matrices((m, n), np.float64)), device=device)
    accum_op = None if accum is None else getattr(semirings.binary, accum)
    if as_bool and accum is not None:
        accum_op = semirings.binary.lor
    t = reference_product(A, B, semiring)
    ev, ep = reference_write(
        t,
        None if out is None else dense(out),
        mask_bool,
        accum_op if out is not None else None,
        replace,
    )
    directions = ["auto", "push"] + (["pull"] if mask_kind in ("S", "V") else [])
    for direction in directions:
        C = gbla.mxm(
            A, B, semiring, mask=mask, accum=accum_op, replace=replace, out=out, direction=direction
        )
        cv, cp = dense(C)
        np.testing.assert_array_equal(cp, ep, err_msg=direction)
        np.testing.assert_allclose(cv[cp].astype(float), ev[ep].astype(float), err_msg=direction)


@given(st.lists(st.floats(allow_nan=False), min_size=2, max_size=40))
@example([-0.0, 0.0, -1e-300, 1e-300, -np.inf, np.inf, 4292.987891, 4292.98779296875])
def test_float64_scatters_compare_words_that_order_as_the_values(values):
    # what keeps gbla's float64 min and max scatters exact on the GPU (CuPy's own round
    # through float32): int64 words of the same order, the mapping its own inverse
    from gbla._backend import _ordered_words, scatter_reduce

    x = np.array(values, np.float64)
    words = _ordered_words(x)
    for i in range(len(x) - 1):
        if x[i] == x[i + 1] == 0:
            continue  # -0.0 and 0.0: the words put -0.0 first
        assert (x[i] < x[i + 1]) == (words[i] < words[i + 1])
        assert (x[i] == x[i + 1]) == (words[i] == words[i + 1])
    np.testing.assert_array_equal(_ordered_words(words).view(np.float64), x)
    for name, ufunc in (("min", np.minimum), ("max", np.maximum), ("plus", np.add)):
        out, expected = np.zeros(3), np.zeros(3)
        at = np.arange(len(x)) % 3
        scatter_reduce(name, out, at, x)
        ufunc.at(expected, at, x)
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("name", ["min_plus", "max_plus", "min_times", "max_first"])
def test_a_float64_min_or_max_product_keeps_every_bit(device, name):
    # values with more digits than a float32 holds, several products meeting at most entries
    # (CuPy's float64 scatter_min and scatter_max round through float32)
    SA = sp.random(12, 9, density=0.6, random_state=1, format="csr")
    SA.data = SA.data * 1e3 - 300.0
    SB = sp.random(9, 10, density=0.6, random_state=2, format="csr") / 7.0
    A, B = (gbla.Matrix.from_scipy(S, device=device) for S in (SA, SB))
    semiring = semirings.get(name)
    ev, ep = reference_product(A, B, semiring)
    for direction in ("push", "pull"):
        mask = gbla.Matrix.from_scipy(sp.csr_array(np.ones((12, 10))), device=device).S
        cv, cp = dense(gbla.mxm(A, B, semiring, mask=mask, direction=direction))
        np.testing.assert_array_equal(cp, ep)
        np.testing.assert_array_equal(cv[cp], ev[ep], err_msg=direction)


@G.FIXTURE_OK
@given(
    data=st.data(),
    shape=st.tuples(st.integers(1, 6), st.integers(1, 6)),
    op=st.sampled_from(["plus", "min", "first", "second"]),
)
def test_matrix_ewise_add_is_the_union(device, data, shape, op):
    SU, SV = data.draw(matrices(shape)), data.draw(matrices(shape))
    U, W = (gbla.Matrix.from_scipy(S, device=device) for S in (SU, SV))
    C = gbla.ewise_add(U, W, op)
    (u, pu), (w, pw) = dense(U), dense(W)
    f = getattr(semirings.binary, op)
    expected = np.where(pu & pw, f.apply_numpy(u, w), np.where(pu, u, w))
    cv, cp = dense(C)
    np.testing.assert_array_equal(cp, pu | pw)
    np.testing.assert_allclose(cv[cp], expected[cp])


def test_mxm_rejects_bad_operands_by_name():
    A = gbla.Matrix.from_edges([0], [1], n=2, device="cpu")
    R = gbla.Matrix.from_edges([0], [2], n=2, ncols=3, device="cpu")
    with pytest.raises(gbla.DimensionMismatch, match="B.nrows"):
        gbla.mxm(A, gbla.Matrix.from_edges([0], [1], n=3, device="cpu"), "any_pair")
    with pytest.raises(gbla.DimensionMismatch, match="mask.shape"):
        gbla.mxm(A, A, "any_pair", mask=R.S)
    with pytest.raises(gbla.DomainMismatch, match="mask"):
        gbla.mxm(A, A, "any_pair", mask="S")
    u = gbla.Vector.from_coo([0], True, 2, device="cpu")
    with pytest.raises(gbla.DomainMismatch, match="matrix mask"):
        gbla.mxm(A, A, "any_pair", mask=u.S)  # a vector's mask on a matrix product
    with pytest.raises(gbla.DomainMismatch, match=r"mask must be a mask \(u.S"):
        gbla.vxm(u, A, "any_pair", mask=A.S)  # and the other way round
    with pytest.raises(gbla.DomainMismatch, match="B must be a gbla.Matrix"):
        gbla.mxm(A, np.eye(2), "any_pair")
    with pytest.raises(gbla.InvalidValue, match="direction"):
        gbla.mxm(A, A, "any_pair", mask=~A.S, direction="pull")
    with pytest.raises(gbla.InvalidValue, match="direction"):
        gbla.mxm(A, A, "any_pair", direction="sideways")
    assert gbla.mxm(A, R, "any_pair").shape == (2, 3)


@G.FIXTURE_OK
@given(g=G.graphs(max_n=25), data=st.data())
def test_several_sources_search_at_once_with_scipys_levels(device, g, data):
    S = g.scipy()
    A = g.matrix(device)
    sources = data.draw(st.lists(st.integers(0, g.n - 1), min_size=1, max_size=5))
    limit = data.draw(st.none() | st.integers(0, 4))
    levels, parents = gbla.bfs(A, sources, return_predecessors=True, depth_limit=limit)
    d = csgraph.shortest_path(S, unweighted=True, indices=sources)
    expected = np.where(np.isinf(d), -1, d)
    if limit is not None:
        expected[expected > limit] = -1
    assert host(levels).shape == (len(sources), g.n)
    np.testing.assert_array_equal(host(levels), expected)
    if limit is None:
        for row, s in enumerate(sources):
            gbla.verify.bfs(A, s, levels[row], parents[row])


def test_several_sources_take_the_algebra_only():
    A = gbla.Matrix.from_edges([0], [1], n=2, device="cpu")
    with pytest.raises(gbla.InvalidValue, match="method"):
        gbla.bfs(A, [0, 1], method="edge_centric")
    with pytest.raises(gbla.InvalidIndex, match="source"):
        gbla.bfs(A, [0, 2])


@G.FIXTURE_OK
@given(g=G.graphs(max_n=20, weights=st.integers(-3, 9), directed=True), data=st.data())
def test_several_sources_find_scipys_distances_or_the_negative_cycle(device, g, data):
    S = g.scipy()
    A = g.matrix(device)
    sources = data.draw(st.lists(st.integers(0, g.n - 1), min_size=1, max_size=4))
    try:
        expected = csgraph.bellman_ford(S, indices=sources)
    except csgraph.NegativeCycleError:
        with pytest.raises(gbla.NegativeCycleError):
            gbla.sssp(A, sources)
        return
    stats = {}
    dist, pred = gbla.sssp(A, sources, return_predecessors=True, stats=stats)
    assert host(dist).shape == (len(sources), g.n)
    np.testing.assert_allclose(host(dist), expected)
    assert stats["method"] == "bellman_ford" and stats["iterations"] <= g.n
    for row, s in enumerate(sources):
        gbla.verify.sssp(A, s, dist[row], pred[row])


def test_several_sources_give_each_sources_own_distances_bit_for_bit(device):
    # weights with more digits than a float32 holds, several paths into most vertices
    S = sp.random(40, 40, density=0.15, random_state=3, format="csr")
    S.data = S.data * 100 + 0.123456789
    A = gbla.Matrix.from_scipy(S, device=device)
    sources = [0, 7, 7, 39]
    dist, pred = gbla.sssp(A, sources, return_predecessors=True)
    for row, s in enumerate(sources):
        np.testing.assert_array_equal(host(dist)[row], host(gbla.sssp(A, s)))
        np.testing.assert_array_equal(host(dist)[row], csgraph.dijkstra(S, indices=s))
        gbla.verify.sssp(A, s, dist[row], pred[row])


def test_several_sources_take_bellman_ford_only():
    A = gbla.Matrix.from_edges([0], [1], [1.0], n=2, device="cpu")
    with pytest.raises(gbla.InvalidValue, match="method"):
        gbla.sssp(A, [0, 1], method="delta_stepping")
    with pytest.raises(gbla.InvalidValue, match="delta"):
        gbla.sssp(A, [0, 1], delta=2.0)
    np.testing.assert_array_equal(gbla.sssp(A, [1, 0]), [[np.inf, 0.0], [0.0, 1.0]])
