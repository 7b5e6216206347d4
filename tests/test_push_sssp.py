"""gbla.distributed.push_sssp against SciPy's Dijkstra and Bellman-Ford, on 1 to 4 ranks run as
threads of one process: NumPy ranks (HostRelax) everywhere, CuPy ranks (distributed.cu's
kernels) where a GPU is. The NCCL launcher's test (test_distributed.py) runs it a process a
GPU."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csgraph

import gbla
from gbla import distributed as D
from gbla.kernels._distributed import BINS

from . import graphs as G
from .conftest import DEVICES, SKIP_NO_GPU, host
from .test_distributed import SIZES
from .test_sssp import potential_graphs


def xp_of(device):
    if device == "cpu":
        return np
    import cupy

    return cupy


def on_ranks(size, work, device):
    return D.run_threads(size, work, xp=xp_of(device))


def dist_matrix(comm, S):
    return D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("size", SIZES)
@settings(max_examples=10, deadline=None)
@given(g=G.medium_graphs(), data=st.data())
def test_push_sssp_gives_dijkstras_distances_and_a_tree_on_every_rank(device, size, g, data):
    # zero weights and ties among the drawn ones (integers: exact in float32 too)
    S = g.scipy()
    source = data.draw(st.integers(0, g.n - 1), label="source")
    dtype = data.draw(st.sampled_from([np.float64, np.float32]), label="dtype")
    # no window (Bellman-Ford), windows of one, of 7.5 and of 1000 (all the drawn weights)
    delta = data.draw(st.sampled_from([None, 1, 7.5, 1000.0]), label="delta")

    def work(comm):
        M = dist_matrix(comm, S)
        stats = {}
        dist, pred = D.push_sssp(
            M, source, dtype=dtype, delta=delta, return_predecessors=True, stats=stats
        )
        own = D.push_sssp(M, source, dtype=dtype, delta=delta, gather=False)
        return host(dist), host(pred), host(own), (M.lo, M.hi), stats

    expected = csgraph.dijkstra(S, indices=source).astype(dtype)
    reached = np.isfinite(expected)
    for dist, pred, own, (lo, hi), stats in on_ranks(size, work, device):
        assert dist.dtype == dtype and pred.dtype == np.int64
        np.testing.assert_array_equal(dist, expected)
        np.testing.assert_array_equal(own, expected[lo:hi])
        gbla.verify.sssp(S, source, dist, pred)
        assert stats["delta"] == delta
        # every reached vertex relaxes its out-edges at least once
        assert stats["relaxed"] >= np.diff(S.indptr)[reached].sum()
        # the last round finds nothing more; without a window every other round lowers
        # something (with one, a round may only move the window on)
        assert stats["found"][-1] == 0
        if delta is None:
            assert all(stats["found"][:-1])
        assert set(stats["directions"]) == {"push"}
        # a round's one sum of the offers' counts (a p x p table, and the bins past the
        # window), behind the all-to-all of the offers where another rank was offered any
        # (never in the first round)
        sums = size * 8 * (size * size + BINS) * (size - 1)  # bytes, every rank's
        sent = [b > sums for b in stats["bytes"]]
        assert stats["collectives"] == [1 + s for s in sent] and not sent[0]
        assert stats["bytes_total"] == sum(stats["bytes"])
        if size == 1:
            assert stats["bytes_total"] == 0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("size", [1, 2])
def test_push_sssp_s_window_relaxes_a_vertex_once_its_distance_is_final(device, size):
    # 0 -> 1 (10), 0 -> 2 (1), 2 -> 1 (1), 1 -> 3 (1). Without a window vertex 1 relaxes at
    # 10 and again at 2: 5 edges. With windows of 1 ([0, 1), [1, 2), ...) it waits until its
    # distance is 2: 4 edges (a round that only moves the window on finds 0)
    S = G.csr([0, 0, 2, 1], [1, 2, 1, 3], [10.0, 1.0, 1.0, 1.0], 4)

    def work(comm):
        M = dist_matrix(comm, S)
        out = []
        for delta in (None, 1):
            stats = {}
            out.append((host(D.push_sssp(M, 0, delta=delta, stats=stats)), stats))
        return out

    for (plain, bf), (windowed, ds) in on_ranks(size, work, device):
        np.testing.assert_array_equal(plain, [0, 2, 1, 3])
        np.testing.assert_array_equal(windowed, [0, 2, 1, 3])
        assert bf["relaxed"] == 5 and ds["relaxed"] == 4
        assert 0 in ds["found"][:-1] and 0 not in bf["found"][:-1]


@pytest.mark.parametrize("device", DEVICES)
def test_push_sssp_offers_a_remote_vertex_only_what_is_lower_than_its_last_offer(device):
    # ranks [0, 2) and [2, 4), source 1. Round 1: rank 0 lowers 0 to 10 (its own) and offers 2
    # at 1. Round 2: rank 1 offers 0 at 2 (lowering it) and lowers 3 to 2. Round 3: 3 -> 0
    # would offer 22, not lower than rank 1's last offer to 0 (2): never sent, nothing moves,
    # and that ends it. 12 bytes an offer (int32 offset, float64); each round ends in the sum
    # of a 2 x 2 table of counts and the window's bins
    S = G.csr([1, 1, 2, 2, 3], [0, 2, 0, 3, 0], [10.0, 1.0, 1.0, 1.0, 20.0], 4)

    def work(comm):
        M = dist_matrix(comm, S)
        stats = {}
        return [int(b) for b in M.bounds], host(D.push_sssp(M, 1, stats=stats)), stats

    for bounds, dist, stats in on_ranks(2, work, device):
        assert bounds == [0, 2, 4]
        np.testing.assert_array_equal(dist, [2, 0, 1, 2])
        assert stats["found"] == [2, 2, 0]
        # (the table: 2 x 2 counts and the window's bins, 8 bytes each, to the other rank)
        table = 2 * 8 * (4 + BINS)
        assert stats["bytes"] == [table, table + 12, table + 12]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("size", [1, 3])
@settings(max_examples=15, deadline=None)
@given(gp=potential_graphs(), data=st.data())
def test_push_sssp_takes_negative_weights_and_raises_on_a_negative_cycle(device, size, gp, data):
    g, p = gp
    source = data.draw(st.integers(0, g.n - 1), label="source")
    w = g.w + p[g.src] - p[g.dst]
    S = G.csr(g.src, g.dst, w, g.n)

    def work(comm):
        dist, pred = D.push_sssp(dist_matrix(comm, S), source, return_predecessors=True)
        return host(dist), host(pred)

    expected = csgraph.dijkstra(g.scipy(), indices=source) + p[source] - p
    for dist, pred in on_ranks(size, work, device):
        np.testing.assert_array_equal(dist, expected)
        gbla.verify.sssp(S, source, dist, pred)
    C = G.csr([0, 1, 2], [1, 2, 1], [1.0, 2.0, -3.0], 3)
    with pytest.raises(gbla.NegativeCycleError, match="^A must have no negative cycle"):
        on_ranks(size, lambda comm: D.push_sssp(dist_matrix(comm, C), 0), device)


@pytest.mark.parametrize("device", DEVICES)
def test_push_sssp_weighs_a_pattern_and_a_bool_matrix_one_an_edge(device):
    # an explicit False is an edge of weight 1, as gbla.sssp weighs it
    src, dst = np.array([0, 1, 2, 0, 4]), np.array([1, 2, 3, 3, 0])
    B = sp.csr_array((np.array([True, False, True, True, True]), (src, dst)), shape=(6, 6))
    expected = csgraph.dijkstra(G.csr(src, dst, np.ones(5), 6), indices=0)

    def work(comm):
        pattern = D.DistMatrix.from_csr(comm, B.indptr, B.indices)
        boolean = D.DistMatrix.from_csr(comm, B.indptr, B.indices, B.data)
        return host(D.push_sssp(pattern, 0)), host(D.push_sssp(boolean, 0, dtype=np.float32))

    for a, b in on_ranks(2, work, device):
        np.testing.assert_array_equal(a, expected)
        np.testing.assert_array_equal(b, expected.astype(np.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_push_sssp_sums_in_the_distances_dtype_and_leaves_the_callers_arrays(device):
    # float32 weights that do not sum exactly: the sums are float32's, as the one-GPU kernels'
    w = np.array([0.1, 0.2, 0.3, 0.7], np.float64)
    S = G.csr([0, 1, 2, 0], [1, 2, 3, 3], w, 4)
    before = S.data.copy()

    def work(comm):
        M = dist_matrix(comm, S)
        values = host(M.values).copy()
        dist, pred = D.push_sssp(M, 0, dtype=np.float32, return_predecessors=True)
        np.testing.assert_array_equal(host(M.values), values)
        return host(dist), host(pred)

    f = np.float32
    expected = [0, f(0.1), f(0.1) + f(0.2), min(f(0.1) + f(0.2) + f(0.3), f(0.7))]
    for dist, pred in on_ranks(3, work, device):
        np.testing.assert_array_equal(dist, np.array(expected, np.float32))
        assert pred[0] == 0 and pred[1] == 0 and pred[2] == 1 and pred[3] in (0, 2)
    np.testing.assert_array_equal(S.data, before)


def test_push_sssp_refuses_bad_input():
    S = G.csr([0, 1], [1, 2], [1.0, 2.0], 3)
    N = G.csr([0, 1], [1, 2], [1.0, np.nan], 3)

    def search(S, source=0, **kw):
        return on_ranks(2, lambda comm: D.push_sssp(dist_matrix(comm, S), source, **kw), "cpu")

    for bad in (np.int64, np.float16, "complex", "nope"):
        with pytest.raises(gbla.InvalidValue, match="^dtype must be float32 or float64"):
            search(S, dtype=bad)
    with pytest.raises(gbla.InvalidValue, match="^A must hold no NaN or -inf weight"):
        search(N)
    with pytest.raises(gbla.InvalidIndex, match="^source must satisfy 0 <= source < 3; got 3"):
        search(S, source=3)
    with pytest.raises(gbla.InvalidValue, match="^return_predecessors must be True or False"):
        search(S, return_predecessors="yes")
    with pytest.raises(gbla.InvalidValue, match="^gather must be True or False"):
        search(S, gather="no")
    with pytest.raises(gbla.InvalidValue, match="^device_loop must be None, True or False"):
        search(S, device_loop=1)
    for bad in (0, -1.0, np.nan, np.inf, "2", True):
        with pytest.raises(
            gbla.InvalidValue, match="^delta must be None or a positive finite number"
        ):
            search(S, delta=bad)
    # a window needs non-negative weights
    negative = G.csr([0, 1], [1, 2], [1.0, -2.0], 3)
    with pytest.raises(
        gbla.InvalidValue, match="^A must hold no negative weight with a delta; got -2"
    ):
        search(negative, delta=1)
    stats = {}
    dist = D.push_sssp(dist_matrix(D.SelfComm(np), negative), 0, stats=stats)
    np.testing.assert_array_equal(dist, [0, 1, -1])
    assert stats["delta"] is None
    with pytest.raises(
        gbla.InvalidValue,
        match="^device_loop must be None or False here .the ranks' arrays are NumPy's.; got True",
    ):
        D.push_sssp(dist_matrix(D.SelfComm(np), S), 0, device_loop=True)


@SKIP_NO_GPU
@pytest.mark.gpu
@pytest.mark.parametrize("offers", [2, 1 << 16])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_push_sssp_rounds_on_the_device_give_what_the_hosts_give(monkeypatch, offers, dtype):
    # one GPU rank (SelfComm): the rounds in one CUDA graph. Messages of 2 offers send most
    # rounds back to the host and take them again; a log of 8 rounds makes a path of 60
    # relaunch the graph; negative weights; a negative cycle raises from the device's rounds
    import cupy

    from gbla.distributed import relax

    monkeypatch.setattr(relax, "LOOP_OFFERS", offers)
    monkeypatch.setattr(relax, "LOG_ROUNDS", 8)
    rmat = gbla.generators.rmat(9, 8, seed=4, device="cpu", weights=(1, 20)).to_scipy()
    path = G.csr(np.arange(59), np.arange(1, 60), np.arange(59, 0, -1.0), 60)
    rng = np.random.default_rng(2)
    p = rng.integers(0, 30, rmat.shape[0]).astype(np.float64)
    coo = rmat.tocoo()
    shifted = G.csr(coo.row, coo.col, coo.data + p[coo.row] - p[coo.col], rmat.shape[0])
    for name, S in (("rmat", rmat), ("path", path), ("shifted", shifted)):
        A = dist_matrix(D.SelfComm(cupy), S)
        # no window, and windows of 3 (not with negative weights)
        deltas = (None,) if name == "shifted" else (None, 3.0)
        for source, delta in itertools.product((0, int(np.argmax(np.diff(S.indptr)))), deltas):
            got, want = {}, {}
            kw = {"dtype": dtype, "delta": delta}
            on_device = D.push_sssp(A, source, stats=got, device_loop=True, **kw)
            on_host = D.push_sssp(A, source, stats=want, device_loop=False, **kw)
            assert got["loop"] == "device" and want["loop"] == "host", name
            assert 0 < got["device_rounds"] <= len(got["found"]) and want["device_rounds"] == 0
            if offers > 2:  # every round's offers fit
                assert got["device_rounds"] == len(got["found"])
            assert got["delta"] == want["delta"] and got["relaxed"] >= S.indptr[1] - S.indptr[0]
            assert got["found"][-1] == 0, name
            if delta is None:
                assert all(got["found"][:-1]), name
            assert len(got["seconds"]) == len(got["found"]) and all(
                0 < t < 1 for t in got["seconds"]
            )
            expected = csgraph.dijkstra(S, indices=source).astype(dtype)
            if name == "shifted":
                expected = (csgraph.dijkstra(rmat, indices=source) + p[source] - p).astype(dtype)
            np.testing.assert_array_equal(host(on_device), expected)
            np.testing.assert_array_equal(host(on_host), expected)
    C = G.csr([0, 1, 2, 2], [1, 2, 1, 3], [1.0, 2.0, -3.0, 1.0], 4)
    with pytest.raises(gbla.NegativeCycleError, match="^A must have no negative cycle"):
        D.push_sssp(dist_matrix(D.SelfComm(cupy), C), 0, device_loop=True)


@SKIP_NO_GPU
@pytest.mark.gpu
@pytest.mark.parametrize("size", [1, 2, 3])
@pytest.mark.parametrize("hub_edges", [4, 40])
def test_push_sssp_spreads_a_hubs_edges_over_the_grid(size, hub_edges, monkeypatch):
    # every row past 4 (40) edges goes to the whole grid, their edges one range spread over its
    # warps (1024 a warp: a hub's edges over several warps, a warp's over several hubs): the
    # hubs' kernel against SciPy
    from gbla.kernels import _distributed

    monkeypatch.setattr(_distributed, "HUB_EDGES", hub_edges)
    monkeypatch.setattr(_distributed, "HUB_EDGES_FEW_ROWS", hub_edges)
    S = gbla.generators.rmat(9, 16, seed=4, device="cpu", weights=(1, 50)).to_scipy()
    source = int(np.argmax(np.diff(S.indptr)))

    def work(comm):
        return host(D.push_sssp(dist_matrix(comm, S), source))

    expected = csgraph.dijkstra(S, indices=source)
    for dist in on_ranks(size, work, "gpu"):
        np.testing.assert_array_equal(dist, expected)


@SKIP_NO_GPU
@pytest.mark.gpu
def test_push_sssp_gives_its_memory_back():
    import cupy

    S = gbla.generators.rmat(10, 8, seed=3, device="cpu", weights=(1, 20)).to_scipy()
    M = D.DistMatrix.from_csr(D.SelfComm(cupy), S.indptr, S.indices, S.data)
    pool = cupy.get_default_memory_pool()
    first = D.push_sssp(M, 0, dtype=np.float32)  # the weights' float32 copy, kept with M
    cupy.cuda.Device().synchronize()
    used = pool.used_bytes()
    for _ in range(1000):
        D.push_sssp(M, 0, dtype=np.float32)
    cupy.cuda.Device().synchronize()
    assert pool.used_bytes() == used
    np.testing.assert_array_equal(host(first), csgraph.dijkstra(S, indices=0).astype(np.float32))


@SKIP_NO_GPU
@pytest.mark.gpu
def test_a_relax_of_few_rows_gives_the_grid_shorter_rows():
    # a frontier too small to fill the GPU's blocks leaves its long rows to the grid's kernel
    from gbla.kernels import _distributed as K

    hubs = K._HubRows(0, 10**6, 10**8)
    assert hubs.bound() == K.HUB_EDGES and hubs.bound(few=True) == K.HUB_EDGES_FEW_ROWS
    assert (
        len(hubs.rows) == 10**8 // K.HUB_EDGES_FEW_ROWS + 1
        and len(hubs.first) == len(hubs.rows) + 1
    )
    # never more hub rows than the list holds: 100 rows of 10**8 edges, a row past 10**6 a hub
    assert K._HubRows(0, 100, 10**8).bound(few=True) == 10**6


def test_a_gpu_rank_of_2_to_the_31_vertices_is_refused_before_anything_is_made():
    # the BFS's and the SSSP's device steps queue int32 offsets (checked before CuPy is touched)
    from gbla.kernels import _distributed

    with pytest.raises(gbla.InvalidValue, match=r"^A must give each rank fewer than 2\*\*31"):
        _distributed._HubRows(5, 5 + 2**31, 10)
