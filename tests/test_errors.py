"""Every bad input raises a gbla exception whose message reads "<arg> must <condition>; got
<value>", naming the argument and the bad value; a failing call leaves its inputs untouched."""

import re

import numpy as np
import pytest
import scipy.sparse as sp

import gbla
from gbla import Matrix, Vector, semirings

from .conftest import SKIP_NO_GPU, host


def raises(exc, arg, got):
    """pytest.raises(exc) for the message "<arg> must ...; got <got>", both spelled exactly."""
    return pytest.raises(exc, match=rf"^{re.escape(arg)} must .+; got {re.escape(got)}$")


# A: the 3 x 3 path 0 -> 1 -> 2 with weights 1, 2; u, v: dense vectors of size 3
@pytest.fixture
def A(device):
    return Matrix.from_edges([0, 1], [1, 2], [1.0, 2.0], n=3, device=device)


@pytest.fixture
def u(device):
    return Vector.from_dense(np.array([0.0, 1.0, 2.0]), device=device)


@pytest.fixture
def u4(device):
    return Vector.from_dense(np.arange(4.0), device=device)


# ------------------------------------------------------------------ shapes
def test_mxv_with_u_of_the_wrong_size_raises_dimension_mismatch(A, u4):
    with raises(gbla.DimensionMismatch, "u.size", "4"):
        gbla.mxv(A, u4, "min_plus")


def test_vxm_with_u_of_the_wrong_size_raises_dimension_mismatch(A, u4):
    with raises(gbla.DimensionMismatch, "u.size", "4"):
        gbla.vxm(u4, A, "min_plus")


def test_mxv_and_vxm_check_the_size_against_the_right_dimension(device):
    # 2 x 3: mxv takes a vector of size 3, vxm one of size 2
    A = Matrix.from_scipy(sp.csr_array(np.ones((2, 3))), device=device)
    u2 = Vector.from_dense(np.ones(2), device=device)
    u3 = Vector.from_dense(np.ones(3), device=device)
    with pytest.raises(gbla.DimensionMismatch, match=r"^u\.size must equal A\.ncols = 3; got 2$"):
        gbla.mxv(A, u2, "plus_times")
    with pytest.raises(gbla.DimensionMismatch, match=r"^u\.size must equal A\.nrows = 2; got 3$"):
        gbla.vxm(u3, A, "plus_times")


@pytest.mark.parametrize("operation", [gbla.ewise_add, gbla.ewise_mult])
def test_ewise_of_vectors_of_different_sizes_raises_dimension_mismatch(operation, u, u4):
    with raises(gbla.DimensionMismatch, "v.size", "4"):
        operation(u, u4, "plus")


@pytest.mark.parametrize(
    "make_mask",
    [lambda m: m.S, lambda m: ~m.V, lambda m: m],
    ids=["structural", "complemented value", "bare vector"],
)
def test_mask_of_the_wrong_size_raises_dimension_mismatch(A, u, u4, make_mask):
    with raises(gbla.DimensionMismatch, "mask.size", "4"):
        gbla.mxv(A, u, "min_plus", mask=make_mask(u4))
    with raises(gbla.DimensionMismatch, "mask.size", "4"):
        gbla.ewise_add(u, u, "plus", mask=make_mask(u4))


def test_out_of_the_wrong_size_raises_dimension_mismatch(A, u, u4):
    with raises(gbla.DimensionMismatch, "out.size", "4"):
        gbla.mxv(A, u, "min_plus", out=u4)
    with raises(gbla.DimensionMismatch, "out.size", "4"):
        gbla.apply(u, semirings.unary.ainv, out=u4)


def test_edge_lists_of_different_lengths_raise_dimension_mismatch():
    with pytest.raises(
        gbla.DimensionMismatch,
        match=r"^len\(dst\) must equal len\(src\) = 2; "
        r"got 1$",
    ):
        Matrix.from_edges([0, 1], [1], n=3, device="cpu")
    with pytest.raises(gbla.DimensionMismatch, match=r"^len\(values\) must .+; got 1$"):
        Vector.from_coo([0, 1], [1.0], 3, device="cpu")


# ------------------------------------------------------------------ names
def test_unknown_semiring_name_raises_unknown_name_listing_the_valid_names(A, u):
    with raises(gbla.UnknownName, "semiring", "'min_plux'") as info:
        gbla.mxv(A, u, "min_plux")
    assert isinstance(info.value, KeyError)
    assert all(f"'{name}'" in str(info.value) for name in semirings.names())
    with raises(gbla.UnknownName, "semiring", "'no_such'"):
        semirings.get("no_such")


def test_unknown_monoid_and_op_names_raise_unknown_name(A, u):
    with raises(gbla.UnknownName, "monoid", "'plux'") as info:
        gbla.reduce(u, "plux")
    assert "'plus'" in str(info.value) and "'lor'" in str(info.value)
    with raises(gbla.UnknownName, "op", "'plux'") as info:
        gbla.ewise_add(u, u, "plux")
    assert "'secondi'" in str(info.value)
    with raises(gbla.UnknownName, "accum", "'plux'"):
        gbla.mxv(A, u, "min_plus", accum="plux")


def test_a_semiring_that_is_neither_a_name_nor_a_semiring_raises_domain_mismatch(A, u):
    with raises(gbla.DomainMismatch, "semiring", "42"):
        gbla.mxv(A, u, 42)
    with raises(gbla.DomainMismatch, "accum", "3"):
        gbla.mxv(A, u, "min_plus", accum=3)


# ------------------------------------------------------------------ dtypes
def test_a_dtype_the_semiring_cannot_take_raises_domain_mismatch(A, u, device):
    with raises(gbla.DomainMismatch, "A.dtype and u.dtype", "'float64 and float64 -> float64'"):
        gbla.mxv(A, u, "lor_land")
    P = Matrix.from_edges([0, 1], [1, 2], n=3, device=device)  # bool pattern
    b = Vector.from_dense(np.ones(3, bool), device=device)
    with raises(gbla.DomainMismatch, "A.dtype and u.dtype", "'bool and bool -> bool'") as info:
        gbla.vxm(b, P, "min_plus")
    assert "int32, int64, float32, float64" in str(info.value)


def test_a_dtype_the_op_or_monoid_cannot_take_raises_domain_mismatch(u):
    with raises(gbla.DomainMismatch, "op", "'float64'"):
        gbla.ewise_add(u, u, "lor")
    with raises(gbla.DomainMismatch, "u.dtype", "'float64'"):
        gbla.reduce(u, "land")


def test_unsupported_dtypes_raise_domain_mismatch(device):
    with raises(gbla.DomainMismatch, "S", "'complex128'"):
        Matrix.from_scipy(sp.csr_array(np.eye(3, dtype=np.complex128)), device=device)
    with raises(gbla.DomainMismatch, "array", "'complex128'"):
        Vector.from_dense(np.ones(3, np.complex128), device=device)
    with raises(gbla.DomainMismatch, "dtype", "'complex128'"):
        Vector.new(3, np.complex128, device=device)


def test_a_scipy_matrix_where_a_gbla_matrix_is_required_raises_domain_mismatch(u):
    S = sp.csr_array(np.eye(3))
    with raises(gbla.DomainMismatch, "A", "'csr_array'"):
        gbla.mxv(S, u, "min_plus")
    with raises(gbla.DomainMismatch, "A", "'csr_array'"):
        gbla.vxm(u, S, "min_plus")
    with raises(gbla.DomainMismatch, "u", "'ndarray'"):
        gbla.reduce(np.arange(3.0), "plus")


# ------------------------------------------------------------------ devices
@SKIP_NO_GPU
def test_operands_on_different_devices_raise_device_mismatch():
    A = Matrix.from_edges([0, 1], [1, 2], [1.0, 2.0], n=3, device="cpu")
    u_gpu = Vector.from_dense(np.arange(3.0), device="gpu")
    u_cpu = Vector.from_dense(np.arange(3.0), device="cpu")
    with raises(gbla.DeviceMismatch, "the operands", "'A on cpu, u on gpu'"):
        gbla.mxv(A, u_gpu, "min_plus")
    with raises(gbla.DeviceMismatch, "the operands", "'u on cpu, v on gpu'"):
        gbla.ewise_add(u_cpu, u_gpu, "plus")
    with pytest.raises(gbla.DeviceMismatch, match=r"mask on gpu"):
        gbla.mxv(A, u_cpu, "min_plus", mask=u_gpu.S)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Vector.from_dense(np.ones(3), device="tpu"),
        lambda: Vector.new(3, device="tpu"),
        lambda: Vector.from_coo([0], 1.0, 3, device="tpu"),
        lambda: Matrix.from_edges([0], [1], device="tpu"),
        lambda: Matrix.from_scipy(sp.csr_array(np.eye(2)), device="tpu"),
        lambda: gbla.generators.rmat(3, device="tpu"),
    ],
    ids=["from_dense", "new", "from_coo", "from_edges", "from_scipy", "rmat"],
)
def test_an_unknown_device_raises_device_mismatch(make):
    with raises(gbla.DeviceMismatch, "device", "'tpu'"):
        make()


def test_asking_for_the_gpu_without_one_raises_device_mismatch():
    if gbla.gpu_available():
        pytest.skip("a GPU is present")
    with raises(gbla.DeviceMismatch, "device", "'gpu'"):
        Vector.from_dense(np.ones(3), device="gpu")
    with raises(gbla.DeviceMismatch, "device", "'gpu'"):
        Matrix.from_edges([0], [1], device="gpu")


# ------------------------------------------------------------------ indices
@pytest.mark.parametrize(
    "src, dst, arg, got",
    [
        ([-1, 1], [1, 2], "src", "-1"),
        ([0, 1], [1, -3], "dst", "-3"),
        ([0, 3], [1, 2], "src", "3"),
        ([0, 1], [1, 7], "dst", "7"),
    ],
)
def test_negative_or_out_of_range_edge_endpoints_raise_invalid_index(device, src, dst, arg, got):
    with raises(gbla.InvalidIndex, arg, got):
        Matrix.from_edges(src, dst, n=3, device=device)


def test_negative_endpoints_raise_invalid_index_when_n_is_inferred(device):
    with raises(gbla.InvalidIndex, "dst", "-2"):
        Matrix.from_edges([0, 1], [-2, -1], device=device)


@pytest.mark.parametrize("indices, got", [([0, -1], "-1"), ([5, 1], "5"), ([3], "3")])
def test_negative_or_out_of_range_vector_indices_raise_invalid_index(device, indices, got):
    with raises(gbla.InvalidIndex, "indices", got):
        Vector.from_coo(np.array(indices), 1.0, 3, device=device)


def test_fractional_or_non_finite_indices_raise_invalid_value(device):
    with raises(gbla.InvalidValue, "src", "0.5"):
        Matrix.from_edges([0.0, 0.5], [1.0, 2.0], n=3, device=device)
    with raises(gbla.InvalidValue, "dst", "1.25"):
        Matrix.from_edges([0.0, 1.0], [1.25, 2.0], n=3, device=device)
    with raises(gbla.InvalidValue, "indices", "1.5"):
        Vector.from_coo([0.0, 1.5], 1.0, 3, device=device)
    with raises(gbla.InvalidValue, "indices", "nan"):
        Vector.from_coo([np.nan], 1.0, 3, device=device)
    # without n the vertex count comes from the endpoints, which must be integers first
    with raises(gbla.InvalidValue, "src", "nan"):
        Matrix.from_edges([np.nan, 1.0], [1.0, 2.0], device=device)
    with raises(gbla.InvalidValue, "src", "inf"):
        Matrix.from_edges([np.inf, 1.0], [1.0, 2.0], device=device)


def test_integral_float_indices_are_accepted(device):
    # the contrast to the fractional case: 2.0 is an index (as read from a text file)
    u = Vector.from_coo([2.0, 0.0], [5, 7], 3, device=device)
    idx, vals = u.to_coo()
    assert host(idx).tolist() == [0, 2] and host(vals).tolist() == [7, 5]


def test_duplicate_weighted_edges_with_dup_op_none_raise_duplicate_index(device):
    with raises(gbla.DuplicateIndex, "src, dst", "'edge (0, 1) repeated'"):
        Matrix.from_edges([1, 0, 0], [2, 1, 1], [5.0, 1.0, 2.0], n=3, dup_op=None, device=device)
    with raises(gbla.DuplicateIndex, "indices", "'1 repeated'"):
        Vector.from_coo([1, 2, 1], [1.0, 2.0, 3.0], 3, device=device)
    # a pattern (no values) merges duplicates: nothing to combine
    assert Matrix.from_edges([0, 0], [1, 1], n=3, device=device).nvals == 1


def test_a_dup_op_that_is_not_a_binary_op_raises_domain_mismatch(device):
    with raises(gbla.DomainMismatch, "dup_op", "'plus'"):
        Matrix.from_edges([0, 0], [1, 1], [1.0, 2.0], n=3, dup_op="plus", device=device)


# ------------------------------------------------------------------ values
@pytest.mark.parametrize("bad, got", [(np.nan, "nan"), (np.inf, "inf"), (-np.inf, "-inf")])
def test_a_non_finite_value_into_an_integer_vector_raises_invalid_value(device, bad, got):
    w = Vector.from_dense(np.arange(3), device=device)
    with raises(gbla.InvalidValue, "value", got) as info:
        gbla.assign(w, bad)
    assert "int64" in str(info.value)
    with raises(gbla.InvalidValue, "values", got):
        Vector.from_coo([0, 2], bad, 3, dtype=np.int32, device=device)


def test_a_value_that_does_not_fit_the_dtype_raises_invalid_value(device):
    w = Vector.from_dense(np.arange(3, dtype=np.int32), device=device)
    with raises(gbla.InvalidValue, "value", "1.5"):
        gbla.assign(w, 1.5)
    with raises(gbla.InvalidValue, "value", str(2**40)):
        gbla.assign(w, 2**40)
    with raises(gbla.InvalidValue, "value", "'a'"):
        gbla.assign(w, "a")


def test_a_bad_direction_raises_invalid_value(A, u):
    with raises(gbla.InvalidValue, "direction", "'sideways'"):
        gbla.mxv(A, u, "min_plus", direction="sideways")
    with raises(gbla.InvalidValue, "direction", "'Push'"):
        gbla.vxm(u, A, "min_plus", direction="Push")


@pytest.mark.parametrize("bad, got", [(1, "1"), ("yes", "'yes'"), (None, "None")])
def test_replace_that_is_not_a_bool_raises_invalid_value(A, u, bad, got):
    with raises(gbla.InvalidValue, "replace", got):
        gbla.mxv(A, u, "min_plus", mask=u.S, replace=bad)
    with raises(gbla.InvalidValue, "replace", got):
        gbla.ewise_add(u, u, "plus", replace=bad)
    with raises(gbla.InvalidValue, "replace", got):
        gbla.assign(u.dup(), 1.0, replace=bad)


def test_apply_with_both_or_neither_scalar_raises_invalid_value(u):
    plus = semirings.binary.plus
    with raises(gbla.InvalidValue, "left, right", "(1.0, 2.0)"):
        gbla.apply(u, plus, left=1.0, right=2.0)
    with raises(gbla.InvalidValue, "left, right", "(None, None)"):
        gbla.apply(u, plus)
    with raises(gbla.InvalidValue, "left, right", "(1.0, None)"):
        gbla.apply(u, semirings.unary.ainv, left=1.0)


def test_from_dense_with_a_two_dimensional_array_raises_invalid_value(device):
    with raises(gbla.InvalidValue, "array", "'shape (2, 2)'"):
        Vector.from_dense(np.ones((2, 2)), device=device)
    with raises(gbla.InvalidValue, "src", "'shape (1, 2)'"):
        Matrix.from_edges(np.zeros((1, 2), int), np.zeros((1, 2), int), n=3, device=device)


def test_negative_sizes_raise_invalid_value():
    with raises(gbla.InvalidValue, "n", "-1"):
        Matrix.from_edges([0], [1], n=-1, device="cpu")
    with raises(gbla.InvalidValue, "size", "-1"):
        Vector.from_coo([0], 1.0, -1, device="cpu")
    with raises(gbla.InvalidValue, "size", "2.5"):
        Vector.new(2.5, device="cpu")


@pytest.mark.parametrize(
    "kwargs, arg, got",
    [
        ({"scale": 0}, "scale", "0"),
        ({"scale": 33}, "scale", "33"),
        ({"scale": 3, "seed": -1}, "seed", "-1"),
        ({"scale": 3, "edge_factor": -2}, "edge_factor", "-2"),
        ({"scale": 3, "a": 1.5}, "a", "1.5"),
    ],
)
def test_rmat_with_bad_parameters_raises_invalid_value(kwargs, arg, got):
    with raises(gbla.InvalidValue, arg, got):
        gbla.generators.rmat(device="cpu", **kwargs)


@pytest.mark.parametrize(
    "kwargs, arg, got",
    [
        ({"alpha": -1}, "alpha", "-1"),
        ({"alpha": 0}, "alpha", "0"),
        ({"beta": float("nan")}, "beta", "nan"),
        ({"alpha_no_exit": "2"}, "alpha_no_exit", "'2'"),
    ],
)
def test_direction_policy_with_a_non_positive_constant_raises_invalid_value(kwargs, arg, got):
    with raises(gbla.InvalidValue, arg, got):
        gbla.DirectionPolicy(**kwargs)


# ------------------------------------------------------------------ inputs stay untouched
def snapshot(v):
    """Host copies of a vector's entries (a copy, so that an in-place write would show)."""
    idx, vals = v.to_coo()
    return host(idx).copy(), host(vals).copy()


def test_failing_constructors_leave_the_callers_arrays_unchanged(device):
    # unsorted, with a repeated weighted edge (2, 0) and a repeated vector index 4
    src, dst = np.array([2, 0, 2, 1]), np.array([0, 1, 0, 2])
    weights = np.array([4.0, 1.0, 3.0, 2.0])
    indices, vals = np.array([4, 0, 4, 2], dtype=np.int32), np.array([1, 2, 3, 4])
    frac = np.array([0.0, 2.5])
    S = sp.csr_array(np.array([[0, 1j], [2, 0]]))
    saved = [a.copy() for a in (src, dst, weights, indices, vals, frac)]
    S_saved = S.copy()
    with pytest.raises(gbla.DuplicateIndex):
        Matrix.from_edges(src, dst, weights, n=3, dup_op=None, device=device)
    with pytest.raises(gbla.InvalidIndex):
        Matrix.from_edges(src, dst, weights, n=2, device=device)
    with pytest.raises(gbla.DuplicateIndex):
        Vector.from_coo(indices, vals, 5, device=device)
    with pytest.raises(gbla.InvalidIndex):
        Vector.from_coo(indices, vals, 4, device=device)
    with pytest.raises(gbla.InvalidValue):
        Vector.from_coo(frac, 1, 4, device=device)
    with pytest.raises(gbla.DomainMismatch):
        Matrix.from_scipy(S, device=device)
    for before, after in zip(saved, (src, dst, weights, indices, vals, frac)):
        assert after.dtype == before.dtype and np.array_equal(after, before)
    assert (S != S_saved).nnz == 0 and S.has_sorted_indices == S_saved.has_sorted_indices


def test_failing_operations_leave_out_and_the_operands_unchanged(A, u, device):
    # out = [7, -, 9]; every call below fails after its arguments were read
    out = Vector.from_coo([0, 2], np.array([7.0, 9.0]), 3, device=device)
    w_int = Vector.from_coo([1], np.array([5]), 3, device=device)
    before = [snapshot(v) for v in (u, out, w_int)]
    with raises(gbla.DomainMismatch, "accum", "'float64'"):
        gbla.mxv(A, u, "min_plus", out=out, accum="lor")
    with raises(gbla.InvalidValue, "direction", "'up'"):
        gbla.vxm(u, A, "min_plus", out=out, mask=out.S, direction="up")
    with raises(gbla.InvalidValue, "value", "nan"):
        gbla.assign(w_int, np.nan, mask=w_int.S)
    with raises(gbla.DomainMismatch, "op", "'float64'"):
        gbla.ewise_add(u, out, "lor", out=out)
    for v, (idx, vals) in zip((u, out, w_int), before):
        now_idx, now_vals = snapshot(v)
        assert np.array_equal(now_idx, idx) and np.array_equal(now_vals, vals)
    assert before[1][0].tolist() == [0, 2] and before[1][1].tolist() == [7.0, 9.0]
