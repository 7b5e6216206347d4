"""The GPU kernels against the CPU path, case by case over the code paths a kernel can take:
each atomic (plain store, atomicAdd, atomicMin/Max, compare-and-swap on 1, 4 and 8 bytes), the
thread-, warp- and block-per-row pull, iso patterns, int64 indices, masks and vxm's operand
order. Skipped without a GPU."""

import numpy as np
import pytest
import scipy.sparse as sp

import gbla
from gbla.kernels._spmv import HUGE_ROW, LONG_ROW

from .conftest import GPU, host

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not GPU, reason="needs CuPy and a CUDA device")]

# (semiring, dtype): one case per atomic and per struct shape the generator emits.
CASES = [
    ("any_pair", "bool"),
    ("any_pair", "float64"),  # plain store
    ("plus_times", "int32"),
    ("plus_times", "int64"),  # atomicAdd (int, via u64)
    ("plus_times", "float32"),
    ("plus_times", "float64"),  # atomicAdd (float, double)
    ("min_plus", "int32"),
    ("max_plus", "int64"),  # atomicMin / atomicMax
    ("min_plus", "float32"),
    ("min_plus", "float64"),  # CAS 4 and 8 bytes, idempotent
    ("times_times", "int32"),
    ("times_plus", "int64"),  # CAS, not idempotent
    ("times_times", "float64"),  # values 1, 2: products are powers of two, exact in any order
    ("lor_land", "bool"),
    ("land_lor", "bool"),  # conditional stores
    ("lxor_land", "bool"),
    ("eq_lor", "bool"),  # CAS on one byte
    ("plus_pair", "int64"),
    ("min_secondi", "float32"),  # products that read no value
    ("max_minus", "int32"),
    ("min_first", "int64"),
    ("plus_second", "float64"),
]


def _hub_graph(dtype, seed=0, n=1200, hubs=4):
    """Random sparse graph plus ``hubs`` vertices joined to every vertex both ways, so that
    rows longer than HUGE_ROW (the block path), longer than LONG_ROW (the warp path) and short
    rows (the thread path) all occur."""
    rng = np.random.default_rng(seed)
    S = sp.random(n, n, density=0.02, random_state=seed, format="lil")
    S[:hubs, :] = 1
    S[:, :hubs] = 1
    S = sp.csr_matrix(S)
    S.data = rng.integers(1, 3, S.nnz).astype(dtype) if dtype != "bool" else rng.random(S.nnz) < 0.7
    degrees = np.diff(S.indptr)
    assert (degrees > HUGE_ROW).sum() == hubs and (degrees > LONG_ROW).sum() > hubs
    assert (degrees <= LONG_ROW).any()
    return S


def _vector(n, dtype, fraction, seed, device):
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(n, max(1, int(fraction * n)), replace=False))
    vals = (
        rng.integers(1, 3, len(idx)).astype(dtype)
        if dtype != "bool"
        else rng.random(len(idx)) < 0.8
    )
    return gbla.Vector.from_coo(idx, vals, n, device=device)


def _assert_same(a, b, any_monoid):
    ia, va = (host(x) for x in a.to_coo())
    ib, vb = (host(x) for x in b.to_coo())
    np.testing.assert_array_equal(ia, ib)
    if not any_monoid:
        np.testing.assert_array_equal(va, vb)


@pytest.mark.parametrize("name,dtype", CASES)
@pytest.mark.parametrize("op", ["mxv", "vxm"])
@pytest.mark.parametrize("fraction", [0.05, 0.6])
def test_gpu_push_and_pull_equal_cpu_on_every_atomic_path(name, dtype, op, fraction):
    S = _hub_graph(dtype)
    sr = gbla.semirings.get(name)
    results = []
    for device in ("cpu", "gpu"):
        A = gbla.Matrix.from_scipy(S, device=device)
        u = _vector(S.shape[0], dtype, fraction, 1, device)
        for direction in ("push", "pull"):
            fn = gbla.mxv if op == "mxv" else (lambda A_, u_, *a, **k: gbla.vxm(u_, A_, *a, **k))
            results.append(fn(A, u, sr, direction=direction))
    for r in results[1:]:
        _assert_same(results[0], r, sr.add.is_any and name != "any_pair")


@pytest.mark.parametrize("mask_kind", ["S", "V", "~S", "~V"])
@pytest.mark.parametrize("direction", ["push", "pull"])
def test_gpu_masked_product_equals_cpu_with_int64_indices(mask_kind, direction):
    S = _hub_graph("float64", seed=3)
    out = []
    for device in ("cpu", "gpu"):
        A = gbla.Matrix.from_scipy(S, device=device, index_dtype=np.int64)
        u = _vector(S.shape[0], "float64", 0.2, 4, device)
        m = _vector(S.shape[0], "float64", 0.5, 5, device)
        mask = {"S": m.S, "V": m.V, "~S": ~m.S, "~V": ~m.V}[mask_kind]
        out.append(gbla.mxv(A, u, "min_plus", mask=mask, direction=direction))
    _assert_same(out[0], out[1], False)


@pytest.mark.parametrize("direction", ["push", "pull"])
def test_gpu_iso_pattern_bfs_step_equals_cpu(direction):
    # path 0 -> 1 -> 2 plus a hub 3 <-> every other vertex: from {0, 3}, one step reaches all
    # the rest; 2 only through the hub, 1 through 0 or the hub.
    others = [v for v in range(41) if v != 3]
    src = [0, 1] + [3] * 40 + others
    dst = [1, 2] + others + [3] * 40
    out = []
    for device in ("cpu", "gpu"):
        A = gbla.Matrix.from_edges(src, dst, n=41, device=device)
        q = gbla.Vector.from_coo([0, 3], True, 41, device=device)
        out.append(gbla.vxm(q, A, "any_secondi", mask=~q.S, direction=direction))
    i_cpu, p_cpu = (host(x) for x in out[0].to_coo())
    i_gpu, p_gpu = (host(x) for x in out[1].to_coo())
    np.testing.assert_array_equal(i_cpu, i_gpu)
    assert set(i_gpu) == set(range(41)) - {0, 3}
    assert p_gpu[list(i_gpu).index(2)] == 3  # 2 is reached only from the hub here
    for i, p in zip(i_gpu, p_gpu):
        assert p in (0, 3) and ((p == 0 and i == 1) or p == 3)


def test_gpu_rmat_equals_cpu_rmat_for_the_same_seed():
    a = gbla.generators.rmat(10, seed=7, device="gpu").to_scipy()
    b = gbla.generators.rmat(10, seed=7, device="cpu").to_scipy()
    assert (a != b).nnz == 0 and a.nnz == b.nnz
