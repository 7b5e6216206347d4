"""rmat: Graph500's Kronecker generator, deterministic, symmetric, simple."""

import numpy as np
import pytest

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
        row = S.indices[S.indptr[i]:S.indptr[i + 1]]
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


@pytest.mark.parametrize("kwargs", [dict(scale=0), dict(scale=33), dict(scale=4, seed=-1),
                                    dict(scale=4, a=0.9, b=0.2)])
def test_rmat_rejects_bad_parameters(kwargs):
    with pytest.raises(gbla.InvalidValue):
        gbla.generators.rmat(device="cpu", **kwargs)
