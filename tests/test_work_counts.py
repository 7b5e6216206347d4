"""The edges a loop's products examine, counted where they run: gbla.iterate's
``stats["edges"]`` and the algebra's SSSP's ``stats["edges_relaxed"]``.

On the CPU, against reference simulations written here from the methods' definitions:
Bellman-Ford's rounds (the frontier: the vertices whose distance fell in the last round) and
delta-stepping's near-far rounds (the front: the pending vertices at or below the lowest
bucket's end); a push examines its frontier's out-edges, a pull every stored edge. On the GPU,
device mode (the recorded loop, its fused block included) against eager mode and the CPU.
"""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csgraph

import gbla
from gbla import cli
from gbla.semirings import binary, unary

from . import graphs as G
from .conftest import SKIP_NO_GPU, host


def on_gpu(test):
    return pytest.mark.gpu(SKIP_NO_GPU(test))


# ============================================================================== the references
def _relaxed(S, front, dist):
    """The distances one round offers: min over the edges (u, v) leaving ``front`` of
    dist[u] + w(u, v) (+inf where none arrives), every u read as the round starts."""
    offered = np.full(S.shape[0], np.inf)
    for u in front:
        lo, hi = S.indptr[u], S.indptr[u + 1]
        np.minimum.at(offered, S.indices[lo:hi], dist[u] + S.data[lo:hi])
    return offered


def bellman_ford_work(S, source):
    """(rounds, edges examined pushing) of Bellman-Ford from ``source``: each round relaxes
    the out-edges of the vertices whose distance fell in the last one (the source first), at
    most n rounds."""
    n = S.shape[0]
    degrees = np.diff(S.indptr)
    dist = np.full(n, np.inf)
    dist[source] = 0.0
    frontier = np.array([source])
    rounds = edges = 0
    while len(frontier) and rounds < n:
        rounds += 1
        edges += int(degrees[frontier].sum())
        offered = _relaxed(S, frontier, dist)
        frontier = np.flatnonzero(offered < dist)
        dist[frontier] = offered[frontier]
    return rounds, edges


def delta_stepping_work(S, source, width):
    """(rounds, edges examined pushing) of delta-stepping in the near-far form: each round
    takes the window's end (the least over the pending vertices of d + width), relaxes the
    pending vertices at or below it, and the vertices whose distance fell join the pending
    ones."""
    n = S.shape[0]
    degrees = np.diff(S.indptr)
    dist = np.full(n, np.inf)
    dist[source] = 0.0
    pending = np.zeros(n, bool)
    pending[source] = True
    rounds = edges = 0
    while pending.any():
        d = dist[pending]
        end = np.min(d + width)
        front = np.flatnonzero(pending & (dist <= end))
        pending[front] = False
        rounds += 1
        edges += int(degrees[front].sum())
        offered = _relaxed(S, front, dist)
        fell = offered < dist
        dist[fell] = offered[fell]
        pending |= fell
    return rounds, edges


# ============================================================================== graphs
def _path(n):
    #   0 -> 1 -> 2 -> ... -> n-1, weights 1, 2, 3, ...
    return G.csr(np.arange(n - 1), np.arange(1, n), np.arange(1.0, n), n)


def _grid(side, seed=0):
    """An undirected side x side grid, weights 0..3 (zero weights and ties)."""
    k = np.arange(side * side).reshape(side, side)
    src = np.r_[k[:, :-1].ravel(), k[:-1, :].ravel()]
    dst = np.r_[k[:, 1:].ravel(), k[1:, :].ravel()]
    w = np.random.default_rng(seed).integers(0, 4, len(src)).astype(np.float64)
    return G.csr(np.r_[src, dst], np.r_[dst, src], np.r_[w, w], side * side)


def _random(n, m, seed, *, directed):
    """Random edges (self-loops and repeated pairs drawn too), weights from {0, 0, 1, 2, 2, 5}:
    zero-weight edges and ties."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.choice([0.0, 0.0, 1.0, 2.0, 2.0, 5.0], m)
    if not directed:
        src, dst, w = np.r_[src, dst], np.r_[dst, src], np.r_[w, w]
    return G.csr(src, dst, w, n)


def _hub(n):
    """A path whose middle vertex links to every vertex: one round of many edges among thin
    ones."""
    src = np.r_[np.arange(n - 1), np.full(n, n // 2)]
    dst = np.r_[np.arange(1, n), np.arange(n)]
    return G.csr(src, dst, np.ones(len(src)), n)


GRAPHS = {
    "path": lambda: _path(12),
    "grid": lambda: _grid(6),
    "random undirected": lambda: _random(40, 90, 1, directed=False),
    "random directed": lambda: _random(40, 120, 2, directed=True),
    # 0 -> 1 -> 2 -> 0 of weight 1 each, and 0 -> 2 of weight 3 (the long way round);
    # 3 -> 0 of weight 5, 3 unreached from 0; 4 isolated
    "directed": lambda: G.csr([0, 1, 2, 3, 0], [1, 2, 0, 0, 2], [1.0, 1.0, 1.0, 5.0, 3.0], 5),
}


def _sources(S):
    return sorted({0, S.shape[0] // 2, S.shape[0] - 1})


def _sssp_stats(S, source, device="cpu", **kwargs):
    stats = {}
    gbla.sssp(gbla.Matrix.from_scipy(S, device=device), source, stats=stats, **kwargs)
    return stats


# ============================================================================== on the CPU
@pytest.mark.parametrize("graph", sorted(GRAPHS))
def test_pushing_bellman_ford_relaxes_each_rounds_frontiers_out_edges(graph):
    S = GRAPHS[graph]()
    for source in _sources(S):
        stats = _sssp_stats(S, source, method="bellman_ford", direction="push")
        rounds, edges = bellman_ford_work(S, source)
        assert (stats["iterations"], stats["edges_relaxed"]) == (rounds, edges), source
        assert stats["edges"] == edges  # the loop's own count, which SSSP reports


@settings(G.FIXTURE_OK, max_examples=30)
@given(g=G.graphs(weights=st.sampled_from([0, 0, 1, 2, 2, 5])), data=st.data())
def test_pushing_bellman_ford_on_random_graphs_matches_the_reference(g, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    stats = _sssp_stats(g.scipy(), source, method="bellman_ford", direction="push")
    assert (stats["iterations"], stats["edges_relaxed"]) == bellman_ford_work(g.scipy(), source)


@pytest.mark.parametrize("width", [0.5, 2.0, 7.0])
@pytest.mark.parametrize("graph", sorted(GRAPHS))
def test_pushing_delta_stepping_relaxes_each_rounds_fronts_out_edges(graph, width):
    S = GRAPHS[graph]()
    for source in _sources(S):
        stats = _sssp_stats(S, source, method="delta_stepping", delta=width, direction="push")
        rounds, edges = delta_stepping_work(S, source, width)
        assert (stats["iterations"], stats["edges_relaxed"]) == (rounds, edges), source


@settings(G.FIXTURE_OK, max_examples=30)
@given(
    g=G.graphs(weights=st.sampled_from([0, 0, 1, 2, 2, 5])),
    width=st.sampled_from([0.5, 1.0, 3.0, 100.0]),
    data=st.data(),
)
def test_pushing_delta_stepping_on_random_graphs_matches_the_reference(g, width, data):
    source = data.draw(st.integers(0, g.n - 1), label="source")
    stats = _sssp_stats(g.scipy(), source, method="delta_stepping", delta=width, direction="push")
    expected = delta_stepping_work(g.scipy(), source, width)
    assert (stats["iterations"], stats["edges_relaxed"]) == expected


@pytest.mark.parametrize("method", ["bellman_ford", "delta_stepping"])
@pytest.mark.parametrize("graph", sorted(GRAPHS))
def test_a_pulling_round_examines_every_stored_edge(graph, method):
    S = GRAPHS[graph]()
    stats = _sssp_stats(S, 0, method=method, direction="pull")
    assert stats["edges_relaxed"] == stats["iterations"] * S.nnz


@pytest.mark.parametrize("method", ["bellman_ford", "delta_stepping"])
def test_any_direction_relaxes_at_least_the_reached_out_edges(method):
    # every reached vertex is relaxed at least once, whichever way each round goes
    S = _random(60, 200, 3, directed=True)
    reached = np.isfinite(csgraph.dijkstra(S, indices=0))
    floor = int(np.diff(S.indptr)[reached].sum())
    for direction in ("push", "pull", "auto", gbla.DirectionPolicy(alpha=1e9, beta=1.0)):
        stats = _sssp_stats(S, 0, method=method, direction=direction)
        assert floor <= stats["edges_relaxed"] <= stats["iterations"] * S.nnz, direction


def test_several_sources_sum_their_searches():
    S = _grid(5)
    sources = [0, 7, 24, 7]
    stats = {}
    gbla.sssp(gbla.Matrix.from_scipy(S, device="cpu"), sources, direction="push", stats=stats)
    assert stats["edges_relaxed"] == sum(bellman_ford_work(S, s)[1] for s in sources)


@pytest.mark.parametrize("method", ["bellman_ford", "delta_stepping"])
def test_the_predecessor_search_is_not_counted(method):
    S = _random(30, 80, 4, directed=False)
    plain = _sssp_stats(S, 0, method=method, direction="push")
    with_tree = _sssp_stats(S, 0, method=method, direction="push", return_predecessors=True)
    assert with_tree["edges_relaxed"] == plain["edges_relaxed"]


@pytest.mark.parametrize("method", ["bellman_ford", "delta_stepping"])
def test_a_partitioned_matrix_reports_no_count(method):
    # a HostMatrix's products run in its own engine, which counts nothing: no partial count
    S = _grid(4)
    stats = _sssp_stats(S, 0, method=method, memory_budget=10**6)
    assert stats["iterations"] >= 1
    assert "edges_relaxed" not in stats and "edges" not in stats


def _levels_loop(A, source, *, direction="push", mode="auto", start=True):
    """A user's BFS through gbla.iterate: (its levels, its stats)."""
    n = A.nrows
    q = gbla.Vector.from_coo([source] if start else [], True, n, device=A.device)
    levels = gbla.assign(gbla.Vector.new(n, np.int32, device=A.device), 0, mask=q.S)

    def level(s, depth):
        s.q = gbla.vxm(s.q, A, "any_pair", mask=~s.levels.S, direction=direction)
        gbla.assign(s.levels, depth, mask=s.q.S)

    stats = {}
    out = gbla.iterate(
        level, {"q": q, "levels": levels}, while_nonempty="q", mode=mode, stats=stats
    )
    return host(out["levels"].to_dense(-1)), stats


def test_iterate_counts_the_out_edges_of_every_pushed_frontier():
    # a BFS pushes from each level once, the last one's product finding nothing new
    #   0 -> 1 -> 2 -> 3,  0 -> 2,  3 -> 3,  4 -> 0 (not reached from 0)
    S = G.csr([0, 1, 2, 3, 0, 3, 4], [1, 2, 3, 3, 2, 3, 0], np.ones(7), 5)
    levels, stats = _levels_loop(gbla.Matrix.from_scipy(S, device="cpu").pattern(), 0)
    np.testing.assert_array_equal(levels, [0, 1, 1, 2, -1])
    assert stats["edges"] == 2 + 1 + 1 + 1  # out-degrees of 0, 1, 2, 3


def test_iterate_counts_nothing_for_a_loop_that_does_not_start():
    S = _path(5)
    _, stats = _levels_loop(gbla.Matrix.from_scipy(S, device="cpu").pattern(), 0, start=False)
    assert stats["iterations"] == 0 and stats["edges"] == 0


def test_a_loop_inside_anothers_body_counts_in_both():
    S = _path(6)
    A = gbla.Matrix.from_scipy(S, device="cpu").pattern()
    inner = []

    def twice(s, _):
        _, stats = _levels_loop(A, 0)
        inner.append(stats["edges"])
        s.k = gbla.select(gbla.apply(s.k, binary.minus, right=1.0), ">", 0.0)  # two rounds

    stats = {}
    k = gbla.Vector.from_coo([0], [2.0], 1, device="cpu")
    gbla.iterate(twice, {"k": k}, while_nonempty="k", stats=stats)
    assert inner == [5, 5]  # the path's five edges, each pushed once
    assert stats["edges"] == sum(inner)


def test_bench_shows_the_algebras_relaxations_per_edge(capsys, tmp_path):
    path = tmp_path / "out.json"
    status = cli.main(
        [
            "bench",
            "grid:6x6",
            "--algo",
            "sssp",
            "--methods",
            "bellman_ford,delta_stepping",
            "--device",
            "cpu",
            "--sources",
            "2",
            "--no-progress",
            "--json",
            str(path),
        ]
    )
    out = capsys.readouterr().out
    assert status == 0
    records = json.loads(path.read_text())["records"]
    assert {r["method"] for r in records} == {"bellman_ford", "delta_stepping"}
    for r in records:
        assert r["relaxed_per_edge"] is not None and r["relaxed_per_edge"] >= 1.0, r["method"]
        row = next(line for line in out.splitlines() if line.startswith(r["method"] + " "))
        assert f"{r['relaxed_per_edge']:.2f}" in row


# ============================================================================== on the GPU
def _bellman_ford_loop(A, source, *, direction, mode):
    """Bellman-Ford written against gbla.iterate: (distances, stats)."""
    n = A.nrows
    dist = np.full(n, np.inf)
    dist[source] = 0.0
    state = {
        "dist": gbla.Vector.from_dense(dist, device=A.device),
        "frontier": gbla.Vector.from_coo([source], [0.0], n, device=A.device),
    }

    def round_(s, _):
        t = gbla.vxm(s.frontier, A, "min_plus", direction=direction)
        wins = gbla.ewise_mult(t, s.dist, binary.lt)
        s.frontier = gbla.apply(t, unary.identity, mask=wins.V)
        gbla.assign(s.dist, s.frontier, mask=s.frontier.S)

    stats = {}
    out = gbla.iterate(
        round_, state, while_nonempty="frontier", max_iterations=n, mode=mode, stats=stats
    )
    return host(out["dist"].to_dense(np.inf)), stats


# Large enough that some rounds leave the fused block to the graph's iteration (the hub's:
# more out-edges than the block takes), small enough for eager mode's rounds on the CPU.
GPU_GRAPHS = {
    "path": lambda: _path(1000),
    "grid": lambda: _grid(40),
    "hub": lambda: _hub(5000),
    "random": lambda: _random(3000, 12000, 1, directed=True),
}


@on_gpu
@pytest.mark.parametrize("direction", ["push", "pull"])
@pytest.mark.parametrize("graph", sorted(GPU_GRAPHS))
def test_device_mode_counts_what_eager_mode_counts(graph, direction):
    S = GPU_GRAPHS[graph]()
    on_cpu = gbla.Matrix.from_scipy(S, device="cpu")
    on_gpu = gbla.Matrix.from_scipy(S, device="gpu")
    expected, eager = _bellman_ford_loop(on_cpu, 0, direction=direction, mode="auto")
    _, eager_gpu = _bellman_ford_loop(on_gpu, 0, direction=direction, mode="eager")
    assert eager["mode"] == eager_gpu["mode"] == "eager"
    assert eager_gpu["edges"] == eager["edges"]
    if direction == "push":
        assert eager["edges"] == bellman_ford_work(S, 0)[1]
    # the first run records (its loop run again from the start in the graph), the second
    # replays the recording: each counts one run
    for _ in range(2):
        dist, device = _bellman_ford_loop(on_gpu, 0, direction=direction, mode="device")
        np.testing.assert_array_equal(dist, expected)
        assert device["mode"] == "device"
        assert (device["iterations"], device["edges"]) == (eager["iterations"], eager["edges"])
    if graph == "path" and direction == "push":  # a round of one vertex: the block runs it
        assert device.get("fused_iterations", 0) > 0, device.get("not_fused")


@on_gpu
@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("method", ["bellman_ford", "delta_stepping"])
@pytest.mark.parametrize("graph", sorted(GPU_GRAPHS))
def test_sssp_on_the_gpu_relaxes_what_the_cpu_relaxes(monkeypatch, graph, method, fuse):
    import importlib

    # the algorithms' own choice (no block: sssp.FUSE_ROUNDS) overridden both ways, before the
    # recording, made with the matrix
    monkeypatch.setattr(importlib.import_module("gbla.algorithms.sssp"), "FUSE_ROUNDS", fuse)
    # one hop a round: deeper ones are the GPU's direct push's alone (gbla.relax's hops)
    monkeypatch.setattr(importlib.import_module("gbla.algorithms.sssp"), "HOPS", 1)
    monkeypatch.setattr(importlib.import_module("gbla.algorithms.sssp"), "BELLMAN_FORD_HOPS", 1)
    S = GPU_GRAPHS[graph]()
    options = {"delta": 4.0} if method == "delta_stepping" else {}
    for source in (0, 7):
        cpu = _sssp_stats(S, source, method=method, direction="push", **options)
        gpu = _sssp_stats(S, source, "gpu", method=method, direction="push", **options)
        assert gpu["mode"] == "device"
        assert (gpu["iterations"], gpu["edges_relaxed"]) == (
            cpu["iterations"],
            cpu["edges_relaxed"],
        ), source
        if not fuse:
            assert not gpu["fused"]
        elif graph == "path":  # rounds of one vertex: the block runs them
            assert gpu.get("fused_iterations", 0) > 0, gpu.get("not_fused")


@on_gpu
def test_a_search_the_block_hands_over_and_takes_back_counts_every_level():
    # the hub's level is more than one block takes: the graph's iteration runs it, the block
    # the thin levels around it
    S = _hub(5000)
    A = gbla.Matrix.from_scipy(S, device="gpu").pattern()
    levels, device = _levels_loop(A, 0, mode="device")
    _, eager = _levels_loop(A, 0, mode="eager")
    assert 0 < device["fused_iterations"] < device["iterations"]
    reached = levels >= 0
    assert device["edges"] == eager["edges"] == int(np.diff(S.indptr)[reached].sum())


@on_gpu
@pytest.mark.parametrize("graph", ["grid", "path", "random"])
def test_a_direct_push_examines_and_chooses_what_a_binned_one_does(monkeypatch, graph):
    # Out-degrees of at most _spmv.DIRECT_DEGREE: where a product can only push, its gather
    # bins nothing and the product walks its listed input itself (loop.cu's direct push); at 0,
    # every product bins. Both recordings give the same levels and distances, rounds and edges
    # examined, so the same choice of direction at every step: the edges a direct push examines
    # are spent off GAP's unexplored edges (the BFS's rule) as the binned push's choice spends
    # them. The BFS runs every level in the graph's iteration (no fused block, which pushes in
    # its own way), so that its thin levels take the direct push.
    import importlib

    from gbla.kernels import _loop, _spmv

    monkeypatch.setattr(importlib.import_module("gbla.runtime.capture"), "FUSE", False)
    # one hop a round: deeper ones are the direct push's alone (gbla.relax's hops)
    monkeypatch.setattr(importlib.import_module("gbla.algorithms.sssp"), "HOPS", 1)
    monkeypatch.setattr(importlib.import_module("gbla.algorithms.sssp"), "BELLMAN_FORD_HOPS", 1)
    direct = []  # the direct degree of each gather enqueued (0 where its input has no list)
    gather = _loop.gather

    def watched(n_in, present, indptr, bins, info, blocks, choice, entries, window, degree):
        direct.append(degree if entries is not None and entries[0].dtype == bins.dtype else 0)
        gather(n_in, present, indptr, bins, info, blocks, choice, entries, window, degree)

    monkeypatch.setattr(_loop, "gather", watched)
    S = GPU_GRAPHS[graph]()
    assert np.diff(S.indptr).max() <= _spmv.DIRECT_DEGREE
    found = {}
    for degree in (_spmv.DIRECT_DEGREE, 0):
        monkeypatch.setattr(_spmv, "DIRECT_DEGREE", degree)
        W = gbla.Matrix.from_scipy(S, device="gpu")  # a matrix of its own: its own recordings
        A = W.pattern()
        searches = {
            "bfs": lambda st: gbla.bfs(A, 0, method="algebraic", stats=st),
            "bellman_ford": lambda st: gbla.sssp(W, 0, method="bellman_ford", stats=st),
            "delta_stepping": lambda st: gbla.sssp(
                W, 0, method="delta_stepping", delta=2.0, stats=st
            ),
        }
        for name, search in searches.items():
            direct.clear()
            search({})  # the first call records
            assert direct and any(direct) == (degree > 0), name
            for _ in range(2):  # the recording replayed
                stats = {}
                out = host(search(stats))
                found.setdefault(name, []).append(
                    (out.tolist(), stats["iterations"], stats["edges"])
                )
    for name, runs in found.items():
        assert all(run == runs[0] for run in runs), name
    if graph == "random":  # some level of the BFS pulled, examining every stored edge
        assert found["bfs"][0][2] > S.nnz


@on_gpu
@pytest.mark.parametrize("direction", ["push", "auto"])
def test_a_push_spreads_the_largest_entries_edges_over_the_grid(direction):
    # A frontier of 300 hubs of about GBLA_HUGE out-edges each (two batches of the product's
    # spread bin, gbla_push_spread, beside the large bin's block an entry): levels, distances
    # and the edges examined as SciPy and eager mode give them.
    S = G.hubs(300)
    A = gbla.Matrix.from_scipy(S, device="gpu")
    P = A.pattern()
    levels, device = _levels_loop(P, 0, direction=direction, mode="device")
    expected = csgraph.shortest_path(S, unweighted=True, indices=0)
    np.testing.assert_array_equal(levels, np.where(np.isinf(expected), -1, expected))
    _, eager = _levels_loop(
        gbla.Matrix.from_scipy(S, device="cpu").pattern(), 0, direction=direction, mode="eager"
    )
    assert device["edges"] == eager["edges"]
    if direction == "push":  # every reached vertex's out-edges, once
        assert device["edges"] == int(np.diff(S.indptr).sum())
    bfs_levels = host(gbla.bfs(P, 0, method="algebraic", direction=direction))
    np.testing.assert_array_equal(bfs_levels, levels)
    reference = csgraph.dijkstra(S, indices=0)
    for method in ("bellman_ford", "delta_stepping"):
        dist = host(gbla.sssp(A, 0, method=method, direction=direction))
        np.testing.assert_array_equal(dist, reference, err_msg=method)
