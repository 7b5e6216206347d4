"""rmat: Graph500's Kronecker generator, deterministic, symmetric, simple."""

import numpy as np
import pytest
import scipy.sparse as sp

import gbla

from .conftest import host


def test_rmat_is_symmetric_simple_and_of_the_requested_size(device):
    A = gbla.generators.rmat(9, edge_factor=8, seed=3, device=device)
    S = A.to_scipy()
    assert A.shape == (512, 512) and A.is_iso and A.dtype == np.bool_
    assert (S != S.T).nnz == 0
    assert S.diagonal().sum() == 0
    # no duplicates: sorted unique column indices in every row
    for i in range(0, 512, 37):
        row = S.indices[S.indptr[i] : S.indptr[i + 1]]
        assert np.all(np.diff(row) > 0)
    # edge_factor * n generated edges, at most twice that stored (both directions)
    assert 0 < A.nvals <= 2 * 8 * 512
    assert A.T is A


def test_rmat_is_deterministic_for_a_seed_and_differs_across_seeds():
    a = gbla.generators.rmat(8, seed=1, device="cpu").to_scipy()
    b = gbla.generators.rmat(8, seed=1, device="cpu").to_scipy()
    c = gbla.generators.rmat(8, seed=2, device="cpu").to_scipy()
    assert (a != b).nnz == 0
    assert (a != c).nnz > 0


def test_rmat_degrees_are_skewed_like_a_power_law():
    # Graph500 parameters concentrate edges: the top 1% of vertices hold far more than 1%.
    A = gbla.generators.rmat(12, seed=0, device="cpu")
    deg = np.sort(host(A._degrees()))[::-1]
    assert deg[: len(deg) // 100].sum() > 0.1 * deg.sum()


@pytest.mark.parametrize(
    "kwargs", [dict(scale=0), dict(scale=33), dict(scale=4, seed=-1), dict(scale=4, a=0.9, b=0.2)]
)
def test_rmat_rejects_bad_parameters(kwargs):
    with pytest.raises(gbla.InvalidValue):
        gbla.generators.rmat(device="cpu", **kwargs)


def test_rmat_weights_are_int32_in_range_and_symmetric(device):
    A = gbla.generators.rmat(8, seed=4, device=device, weights=(3, 9))
    S = A.to_scipy()
    assert A.dtype == np.int32 and not A.is_iso and A.T is A
    assert S.data.min() >= 3 and S.data.max() <= 9
    assert abs(S - S.T).nnz == 0
    assert len(np.unique(S.data)) == 7  # every value of [3, 9] drawn among ~3000 edges


# ============================================================================== rgg
def _brute_force_rgg(scale, seed, radius):
    """Every pair of rgg's points closer than radius, by comparing all n**2 of them."""
    from gbla.generators import _rgg_points  # the points themselves are not public

    x, y = _rgg_points(2**scale, seed, np)
    d2 = (x[:, None] - x[None, :]) ** 2 + (y[:, None] - y[None, :]) ** 2
    near = d2 < radius * radius
    np.fill_diagonal(near, False)
    return near


@pytest.mark.parametrize("scale, parts", [(1, 1), (7, 1), (9, 3), (10, 7), (6, 64)])
def test_rmat_host_csr_is_rmat_built_a_part_at_a_time(device, scale, parts):
    indptr, indices = gbla.generators.rmat_host_csr(scale, 8, seed=4, parts=parts, device=device)
    A = gbla.generators.rmat(scale, 8, seed=4, device="cpu")
    assert indptr.dtype == np.int64 and indices.dtype == np.int32
    np.testing.assert_array_equal(indptr, A._indptr)
    np.testing.assert_array_equal(indices, A._indices)


@pytest.mark.parametrize("rows_at_once", [1, 7, 2**18])
@pytest.mark.parametrize("dtype", [None, np.float32, np.float64])
def test_host_csr_weights_are_with_weights_a_block_of_rows_at_a_time(rows_at_once, dtype):
    # the weights an out-of-core SSSP of a graph built on the host reads: with_weights's,
    # whatever the blocks (threads fill them in any order), into a given array or a new one
    indptr, indices = gbla.generators.rmat_host_csr(9, 8, seed=4, parts=3, device="cpu")
    A = gbla.generators.rmat(9, 8, seed=4, device="cpu")
    expected = gbla.generators.with_weights(A, 3, 900, seed=5)._values
    out = None if dtype is None else np.full(len(indices), -1, dtype)
    w = gbla.generators.host_csr_weights(
        indptr, indices, 3, 900, seed=5, out=out, rows_at_once=rows_at_once
    )
    assert w is out if out is not None else w.dtype == np.int32
    np.testing.assert_array_equal(w, expected)
    # the same for (i, j) and (j, i): an undirected graph stays undirected
    S = sp.csr_matrix((w, indices, indptr))
    assert (S != S.T).nnz == 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(lo=5, hi=4), "^lo, hi must satisfy"),
        (dict(out=np.zeros(3)), "^out must be a NumPy array of shape"),
        (dict(rows_at_once=0), "^rows_at_once must be at least 1; got 0"),
    ],
)
def test_host_csr_weights_rejects_bad_arguments(kwargs, match):
    args = dict(lo=1, hi=9) | kwargs
    with pytest.raises(gbla.InvalidValue, match=match):
        gbla.generators.host_csr_weights([0, 1, 2], [1, 0], **args)


def test_rmat_host_csr_rejects_a_bad_part_count():
    with pytest.raises(gbla.InvalidValue, match="^parts must be at least 1; got 0"):
        gbla.generators.rmat_host_csr(5, parts=0, device="cpu")


def test_rgg_holds_exactly_the_pairs_closer_than_the_radius(device):
    # 512 points, DIMACS10's radius 0.55 * sqrt(ln 512 / 512) ~ 0.0609; both directions of
    # every pair at distance < r, nothing else.
    for scale, seed, radius in ((9, 0, None), (9, 5, 0.1), (6, 2, 0.35), (5, 1, 1.5)):
        A = gbla.generators.rgg(scale, seed, device=device, radius=radius)
        r = 0.55 * np.sqrt(np.log(2**scale) / 2**scale) if radius is None else radius
        expected = _brute_force_rgg(scale, seed, r)
        assert np.array_equal(A.to_scipy().toarray(), expected), (scale, seed, radius)


def test_rgg_is_symmetric_simple_and_iso(device):
    A = gbla.generators.rgg(12, seed=3, device=device)
    S = A.to_scipy()
    assert A.shape == (4096, 4096) and A.is_iso and A.dtype == np.bool_ and A.T is A
    assert (S != S.T).nnz == 0
    assert S.diagonal().sum() == 0
    assert all(np.all(np.diff(S.indices[S.indptr[i] : S.indptr[i + 1]]) > 0) for i in range(4096))


def test_rgg_average_degree_is_pi_r_squared_n():
    # Boundary effects lower the degree of points near the square's edge by a few percent.
    n = 2**14
    r = 0.55 * np.sqrt(np.log(n) / n)
    A = gbla.generators.rgg(14, seed=0, device="cpu")
    assert abs(A.nvals / n - np.pi * r * r * n) < 0.2 * np.pi * r * r * n


def test_rgg_is_the_same_for_a_seed_on_each_device_and_differs_across_seeds(device):
    a = gbla.generators.rgg(10, seed=1, device=device).to_scipy()
    b = gbla.generators.rgg(10, seed=1, device="cpu").to_scipy()
    c = gbla.generators.rgg(10, seed=2, device=device).to_scipy()
    assert (a != b).nnz == 0
    assert (a != c).nnz > 0


def test_rgg_expands_candidates_in_chunks_without_losing_pairs(monkeypatch, device):
    whole = gbla.generators.rgg(9, seed=7, device=device).to_scipy()
    monkeypatch.setattr(gbla.generators, "_RGG_CHUNK", 37)
    chunked = gbla.generators.rgg(9, seed=7, device=device).to_scipy()
    assert (whole != chunked).nnz == 0 and whole.nnz > 0


def test_rgg_weights_are_int32_in_range_and_symmetric(device):
    A = gbla.generators.rgg(10, seed=2, device=device, weights=(1, 4))
    S = A.to_scipy()
    assert A.dtype == np.int32 and A.T is A
    assert S.data.min() >= 1 and S.data.max() <= 4
    assert abs(S - S.T).nnz == 0
    plain = gbla.generators.rgg(10, seed=2, device=device).to_scipy()
    assert (plain != (S != 0)).nnz == 0  # the same structure


@pytest.mark.parametrize(
    "kwargs, arg",
    [
        (dict(scale=0), "scale"),
        (dict(scale=31), "scale"),
        (dict(scale=2.0), "scale"),
        (dict(scale=4, seed=-1), "seed"),
        (dict(scale=4, seed=1.5), "seed"),
        (dict(scale=4, radius=0), "radius"),
        (dict(scale=4, radius=-0.1), "radius"),
        (dict(scale=4, radius=float("inf")), "radius"),
        (dict(scale=4, radius=float("nan")), "radius"),
        (dict(scale=4, radius="0.1"), "radius"),
        (dict(scale=4, radius=True), "radius"),
        (dict(scale=4, weights=(5, 1)), "lo, hi"),
    ],
)
def test_rgg_rejects_bad_parameters(kwargs, arg):
    with pytest.raises(gbla.InvalidValue, match=f"^{arg} must"):
        gbla.generators.rgg(device="cpu", **kwargs)


def test_rgg_has_the_edge_count_of_dimacs10_rgg_n_2_15():
    # DIMACS10's rgg_n_2_15_s0 (other points, same rule and radius) has 160240 edges; ours
    # differs only by the sampling noise of the points.
    from .graphs import read_metis

    dimacs = read_metis("mesh/rgg_n_2_15_s0.graph.gz").nnz
    ours = gbla.generators.rgg(15, seed=0, device="cpu").nvals
    assert abs(ours - dimacs) < 0.02 * dimacs
