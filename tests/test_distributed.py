"""gbla.distributed on the CPU: the communicators' exchanges, the row partition, the
distributed vxm against gbla.vxm for several semirings and masks, and BFS / SSSP against SciPy,
on 1 to 4 ranks run as threads of one process (the exchange logic NCCL runs between GPUs)."""

import shutil
import subprocess
import sys
import threading
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csgraph

import gbla
from gbla import distributed as D

from . import graphs as G
from .conftest import SKIP_FEWER_THAN_FOUR_GPUS, SKIP_NO_GPU, SKIP_ONE_GPU, host
from .test_sssp import potential_graphs

SIZES = [1, 2, 3, 4]


def on_ranks(size, work):
    return D.run_threads(size, work)


# ============================================================================== communicators
@pytest.mark.parametrize("size", SIZES)
def test_alltoallv_delivers_each_ranks_array_to_its_destination_in_rank_order(size):
    def work(comm):
        sends = [np.array([comm.rank * 10 + r] * (r + 1)) for r in range(comm.size)]
        got = comm.alltoallv(sends)
        return got, comm.allreduce_sum(comm.rank + 1), comm.allgather(np.array([comm.rank]))

    for rank, (got, total, gathered) in enumerate(on_ranks(size, work)):
        assert [g.tolist() for g in got] == [[r * 10 + rank] * (rank + 1) for r in range(size)]
        assert total == size * (size + 1) // 2
        assert [g.tolist() for g in gathered] == [[r] for r in range(size)]


@pytest.mark.parametrize("size", SIZES)
def test_allreduce_sums_takes_a_list_or_an_array_and_leaves_the_array_alone(size):
    # a search's tally comes as an array (on the device: NCCL sums it where it lies)
    def work(comm):
        mine = np.array([comm.rank + 1, 2**40 + comm.rank], np.uint64)
        return comm.allreduce_sums(mine), comm.allreduce_sums([comm.rank, 1]), mine.tolist()

    for rank, (sums, listed, mine) in enumerate(on_ranks(size, work)):
        assert sums == [size * (size + 1) // 2, size * 2**40 + size * (size - 1) // 2]
        assert all(type(v) is int for v in sums)
        assert listed == [size * (size - 1) // 2, size]
        assert mine == [rank + 1, 2**40 + rank]


@pytest.mark.parametrize("failing", [None, 0, 1])
def test_the_ranks_choose_the_device_loop_together(monkeypatch, failing):
    # one GPU rank whose graph is refused (its driver, its memory) keeps every rank on the
    # host's loop: the ranks' collectives must match; the choice is made once and kept
    from gbla.distributed import bitmap

    made = object()

    def graphed(A, parents, direction, edges):
        if A.comm.rank == failing:
            raise RuntimeError("CUDA: cuGraphInstantiateWithFlags failed")
        return made

    monkeypatch.setattr(bitmap, "_Graphed", graphed)
    monkeypatch.setattr(bitmap._graphs, "driver", lambda: object())

    class GpuRanks:  # capturable, not NumPy's: the sums are thread ranks'
        capturable, xp = True, object()

        def __init__(self, comm):
            self.comm, self.rank, self.size, self.sums = comm, comm.rank, comm.size, 0

        def allreduce_sum(self, value):
            self.sums += 1
            return self.comm.allreduce_sum(value)

    def work(comm):
        A = mock.Mock(comm=GpuRanks(comm), _cache={})
        key = ("bitmap_bfs_loop", False, "push")

        def make():
            return bitmap._Graphed(A, False, "push", 10)

        first = bitmap._device_loop(A, key, make, None)
        again = bitmap._device_loop(A, key, make, None)
        refused = None
        try:
            bitmap._device_loop(A, key, make, True)
        except gbla.InvalidValue as e:
            refused = str(e)
        return first, again, refused, A.comm.sums

    for rank, (first, again, refused, sums) in enumerate(D.run_threads(2, work)):
        assert sums == 1  # once, at the first search
        if failing is None:
            assert first is again is made and refused is None
            continue
        assert first is None and again is None
        reason = "the graph was refused" if rank == failing else "1 of the 2 ranks could not"
        assert refused.startswith(f"device_loop must be None or False here ({reason}")


def test_a_dist_matrix_names_the_rank_owning_each_vertex():
    # bounds with an empty rank between two others: a vertex belongs to the range holding it
    # (owner reads the bounds only: one communicator of one rank carries them)
    S = G.csr([0, 1, 2, 3], [1, 2, 3, 4], np.ones(4), 6)
    A = D.DistMatrix(D.SelfComm(), [0, 2, 2, 6], S.indptr, S.indices, S.data, 6)
    got = [A.owner(v) for v in range(6)]
    assert got == [0, 0, 2, 2, 2, 2] and all(type(r) is int for r in got)
    assert A.owner(np.int64(2)) == 2
    np.testing.assert_array_equal(A.owner(np.arange(6)), got)


def test_only_device_communicators_say_a_graph_can_hold_them():
    # one rank exchanges nothing: a device SelfComm is capturable, a NumPy one and threads not
    comm = D.Counted(D.SelfComm())
    assert comm.capturable is False and D.SelfComm(np).capturable is False
    assert not hasattr(D.ThreadComm.group(2)[0], "capturable")


@SKIP_NO_GPU
@pytest.mark.gpu
@pytest.mark.parametrize("collective", ["alltoallv", "allgather"])
def test_thread_ranks_on_streams_of_their_own_exchange_what_was_written(collective):
    # two GPU ranks as threads, each on a stream of its own: rank 0's array is written by a
    # kernel that first waits 4e7 cycles (~20 ms), then shown; rank 1 reads what it got at
    # once (the write done before the exchange), and again after rank 0 has overwritten its
    # array (what rank 1 got is its own)
    import time

    import cupy

    late_fill = cupy.RawKernel(
        r"""extern "C" __global__ void late_fill(float* a, int n, long long cycles, float v) {
            const long long t0 = clock64();
            while (clock64() - t0 < cycles) {}
            for (int i = threadIdx.x; i < n; i += blockDim.x) a[i] = v;
        }""",
        "late_fill",
    )

    def work(comm):
        with cupy.cuda.Stream(non_blocking=True):
            a = cupy.zeros(1000, np.float32)
            if comm.rank == 0:
                late_fill((1,), (256,), (a, np.int32(1000), np.int64(4 * 10**7), np.float32(7)))
            if collective == "alltoallv":
                got = comm.alltoallv([a, a])[0]
            else:
                got = comm.allgather(a)[0]
            now = cupy.asnumpy(got)
            if comm.rank == 0:
                a.fill(-1)
            cupy.cuda.get_current_stream().synchronize()
            time.sleep(0.05)
            return now, cupy.asnumpy(got)

    _, (now, later) = D.run_threads(2, work, xp=cupy)
    assert (now == 7).all() and (later == 7).all()


@pytest.mark.parametrize("size", SIZES)
def test_alltoallv_and_allgather_refuse_lengths_that_are_not_what_was_sent(size):
    # NCCL receives as many elements as lengths says: every communicator checks them
    def work(comm):
        sends = [np.arange(r + 1) for r in range(comm.size)]
        right = [comm.rank + 1] * comm.size
        got = comm.alltoallv(sends, right)
        gathered = comm.allgather(np.arange(comm.rank + 2), [r + 2 for r in range(comm.size)])
        try:
            comm.alltoallv(sends, [k + 1 for k in right])
        except ValueError as e:
            refused = str(e)
        return [len(g) for g in got], [len(g) for g in gathered], refused

    for rank, (got, gathered, refused) in enumerate(on_ranks(size, work)):
        assert got == [rank + 1] * size and gathered == [r + 2 for r in range(size)]
        assert "lengths must be what each rank sends" in refused


def test_a_failing_rank_raises_instead_of_hanging_the_others():
    def work(comm):
        if comm.rank == 1:
            raise ValueError("rank 1 failed")
        return comm.allreduce_sum(1)

    with pytest.raises(ValueError, match="rank 1 failed"):
        on_ranks(3, work)
    assert threading.active_count() < 20  # every rank's thread ended


def test_a_communicator_of_one():
    comm = D.SelfComm()
    assert (comm.rank, comm.size, comm.allreduce_sum(5)) == (0, 1, 5)
    assert comm.alltoallv([np.arange(3)])[0].tolist() == [0, 1, 2]


# ============================================================================== the partition
@pytest.mark.parametrize("size", SIZES)
def test_every_row_on_exactly_one_rank_with_its_edges(size):
    S = sp.random_array((50, 50), density=0.1, random_state=1, format="csr")

    def work(comm):
        A = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
        return A.lo, A.hi, A.indptr.copy(), A.indices.copy()

    parts = on_ranks(size, work)
    assert parts[0][0] == 0 and parts[-1][1] == 50
    assert all(parts[r][1] == parts[r + 1][0] for r in range(size - 1))
    for lo, hi, indptr, indices in parts:
        np.testing.assert_array_equal(indptr, S.indptr[lo : hi + 1] - S.indptr[lo])
        np.testing.assert_array_equal(indices, S.indices[S.indptr[lo] : S.indptr[hi]])


# ============================================================================== the product
@pytest.mark.parametrize("expand", [None, 3], ids=["whole", "edges_in_chunks_of_3"])
@pytest.mark.parametrize("direction", ["push", "pull"])
@pytest.mark.parametrize(
    "semiring", ["plus_times", "min_plus", "max_second", "any_pair", "lor_land", "any_secondi"]
)
@settings(max_examples=25, deadline=None)
@given(g=G.graphs(max_n=30), data=st.data())
def test_vxm_equals_gbla_vxm_on_any_number_of_ranks(semiring, direction, expand, g, data):
    # expand: the edges a rank expands at once (a product of more goes a run of rows at a
    # time, so that its memory stays bounded on a large graph)
    sr = gbla.semirings.get(semiring)
    dtype = sr.dtypes[-1] if np.dtype(np.float64) not in sr.dtypes else np.dtype(np.float64)
    S = g.scipy().astype(dtype)
    A = gbla.Matrix.from_scipy(S, device="cpu")
    k = data.draw(st.lists(st.integers(0, g.n - 1), unique=True, max_size=g.n), label="u")
    idx = np.array(sorted(k), np.int64)
    vals = np.array(
        data.draw(
            st.lists(st.integers(0, 9), min_size=len(idx), max_size=len(idx)), label="values"
        ),
        dtype,
    )
    allow = np.array(
        data.draw(st.lists(st.booleans(), min_size=g.n, max_size=g.n), label="mask"), bool
    )
    u = gbla.Vector.from_coo(idx, vals, g.n, dtype=dtype, device="cpu")
    mask = gbla.Vector.from_dense(allow, device="cpu")
    expected = gbla.vxm(u, A, sr, mask=mask.V, direction="push")
    e_idx, e_vals = expected.to_coo()
    size = data.draw(st.sampled_from(SIZES), label="ranks")

    def work(comm):
        Ad = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
        mine = (idx >= Ad.lo) & (idx < Ad.hi)
        w = D.vxm(
            Ad.vector(idx[mine], vals[mine]),
            Ad,
            sr,
            allow=allow[Ad.lo : Ad.hi],
            direction=direction,
        )
        return w.indices, w.values

    with mock.patch.object(D.matrix, "_EXPAND", expand or D.matrix._EXPAND):
        got = on_ranks(size, work)
    np.testing.assert_array_equal(np.concatenate([i for i, _ in got]), e_idx)
    got_vals = np.concatenate([v for _, v in got])
    if sr.add.is_any and not sr.multiply.positional and sr.multiply.name != "pair":
        return  # any: one of the products, which may differ
    np.testing.assert_array_equal(got_vals, e_vals)


# ============================================================================== traversals
# flips push and pull at nearly every level (see test_bfs.py)
FLIPPING = gbla.DirectionPolicy(alpha=1e9, beta=1.0)


@pytest.mark.parametrize("direction", ["auto", "push", "pull", FLIPPING], ids=str)
@pytest.mark.parametrize("size", SIZES)
@settings(max_examples=15, deadline=None)
@given(g=G.medium_graphs(), data=st.data())
def test_bfs_gives_scipys_levels_and_a_valid_tree_on_every_rank(size, direction, g, data):
    S = g.scipy()
    source = data.draw(st.integers(0, g.n - 1), label="source")
    d = csgraph.shortest_path(S, unweighted=True, indices=source)
    expected = np.where(np.isinf(d), -1, d)

    def work(comm):
        A = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
        return D.bfs(A, source, return_predecessors=True, direction=direction)

    A = gbla.Matrix.from_scipy(S, device="cpu")
    for levels, parents in on_ranks(size, work):
        np.testing.assert_array_equal(levels, expected)
        gbla.verify.bfs(A, source, levels, parents)


@pytest.mark.parametrize("size", [1, 2, 3])
@pytest.mark.parametrize("direction", ["push", "pull", "auto"])
def test_searches_whose_products_expand_their_edges_in_chunks_give_scipys_results(
    size, direction, monkeypatch
):
    rng = np.random.default_rng(8)
    n, m = 300, 3000
    S = sp.coo_array(
        (rng.integers(1, 20, m).astype(np.float64), (rng.integers(0, n, m), rng.integers(0, n, m))),
        shape=(n, n),
    ).tocsr()
    S.sum_duplicates()
    monkeypatch.setattr(D.matrix, "_EXPAND", 7)  # a few rows a chunk

    def work(comm):
        A = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
        return (
            D.bfs(A, 0, return_predecessors=True, direction=direction),
            D.sssp(A, 0, direction=direction),
        )

    d = csgraph.shortest_path(S, unweighted=True, indices=0)
    A = gbla.Matrix.from_scipy(S, device="cpu")
    for (levels, parents), dist in on_ranks(size, work):
        np.testing.assert_array_equal(levels, np.where(np.isinf(d), -1, d))
        gbla.verify.bfs(A, 0, levels, parents)
        np.testing.assert_array_equal(dist, csgraph.dijkstra(S, indices=0))


@pytest.mark.parametrize("size", [1, 3])
def test_bfs_depth_limit(size):
    S = sp.csr_array((np.ones(5), (np.arange(5), np.arange(1, 6))), shape=(6, 6))

    def work(comm):
        return D.bfs(D.DistMatrix.from_csr(comm, S.indptr, S.indices), 0, depth_limit=2)

    for levels in on_ranks(size, work):
        assert levels.tolist() == [0, 1, 2, -1, -1, -1]


# ============================================================================== traffic
@pytest.mark.parametrize("size", SIZES)
def test_a_counted_communicator_counts_the_payload_each_rank_sends(size):
    def work(comm):
        c = D.Counted(comm)
        sends = [np.zeros(3 * r + comm.rank, np.int64) for r in range(size)]
        c.alltoallv(sends)
        after_all_to_all = c.bytes_sent
        c.allgather(np.zeros(5, np.float32))
        one = c.allreduce_sum(7)
        two = c.allreduce_sums([1, comm.rank])
        return after_all_to_all, c.bytes_sent, c.collectives, c.rank, c.size, one, two

    for rank, (a2a, total, calls, r, n, one, two) in enumerate(on_ranks(size, work)):
        to_others = sum(8 * (3 * dest + rank) for dest in range(size) if dest != rank)
        assert (a2a, r, n, calls) == (to_others, rank, size, 4)
        assert total == to_others + 20 * (size - 1) + 8 * (size - 1) + 16 * (size - 1)
        assert (one, two) == (7 * size, [size, size * (size - 1) // 2])


def _levels_of(S, source):
    d = csgraph.shortest_path(S, unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(int)


def _shared(stats):
    """A traversal's report but each rank's own wall times: what every rank reports alike."""
    return {k: v for k, v in stats.items() if k != "seconds"}


@pytest.mark.parametrize("parents", [True, False], ids=["parents", "levels"])
@pytest.mark.parametrize("direction", ["push", "pull"])
@pytest.mark.parametrize("size", SIZES)
@settings(max_examples=10, deadline=None)
@given(g=G.medium_graphs(), data=st.data())
def test_bfs_reports_the_bytes_each_level_sends(size, direction, parents, g, data):
    # push: the products of a target another rank owns, combined into one on the sending
    # rank, travel as an int32 offset and an int64 parent (levels alone: the offset;
    # any.pair's product is 1 wherever it is);
    # pull: every rank sends which of its vertices are in the frontier to every other, as a
    # header byte and int32 offsets or a bitmap of its range, whichever is shorter (neither
    # any.pair nor any.secondi reads a value of the frontier); each level ends with one sum
    # over the ranks of the new frontier's size and out-edges (16 bytes to each other rank,
    # from each rank), the first level with the source's too
    S = g.scipy()
    source = data.draw(st.integers(0, g.n - 1), label="source")
    levels = _levels_of(S, source)

    def work(comm):
        A = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
        stats = {}
        D.bfs(A, source, return_predecessors=parents, direction=direction, stats=stats)
        return stats, A.bounds

    (stats, bounds), *others = on_ranks(size, work)
    assert all(_shared(o[0]) == _shared(stats) for o in others)  # every rank reports the same
    owner = np.searchsorted(bounds, np.arange(g.n), side="right") - 1
    rows = np.repeat(np.arange(g.n), np.diff(S.indptr))
    sums = 16 * (size - 1) * size  # a frontier's size and out-edges, from every rank
    expected = []
    for depth in range(1, len(stats["bytes"]) + 1):
        frontier = levels == depth - 1
        if direction == "push":  # one product per (sending rank, target) pair
            crossing = frontier[rows] & (owner[rows] != owner[S.indices])
            pairs = {(owner[u], v) for u, v in zip(rows[crossing], S.indices[crossing])}
            expected.append((12 if parents else 4) * len(pairs) + sums)
        else:
            sent = 0
            for r in range(size):
                mine = int(frontier[bounds[r] : bounds[r + 1]].sum())
                bitmap = (int(bounds[r + 1] - bounds[r]) + 7) // 8
                sent += (size - 1) * (1 + (bitmap if bitmap < 4 * mine else 4 * mine))
            expected.append(sent + sums)
    expected[0] += sums  # the source's counts
    assert stats["bytes"] == expected
    assert stats["bytes_total"] == sum(expected)
    assert stats["directions"] == [direction] * len(expected)
    assert stats["found"] == [int((levels == d).sum()) for d in range(1, len(expected) + 1)]
    # one all-to-all (offsets, with the parents packed in) or one all-gather (presence), and
    # the sum
    assert stats["found"][-1] == 0
    assert stats["collectives"] == [3] + [2] * (len(expected) - 1)
    assert len(stats["seconds"]) == len(expected) and min(stats["seconds"]) > 0


def test_sssp_reports_its_rounds_traffic_and_one_rank_sends_nothing():
    S = sp.csr_array((np.ones(5), (np.arange(5), np.arange(1, 6))), shape=(6, 6))

    def work(comm):
        stats = {}
        D.sssp(D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data), 0, stats=stats)
        return stats

    (one,) = on_ranks(1, work)  # rounds 1-5 lower vertices 1-5, round 6 nothing
    assert one["bytes"] == [0] * 6 and one["found"] == [1, 1, 1, 1, 1, 0]
    two = on_ranks(2, work)[0]
    assert two["found"] == one["found"] and two["bytes_total"] == sum(two["bytes"]) > 0


@pytest.mark.parametrize("method", ["bellman_ford", "delta_stepping"])
@pytest.mark.parametrize("direction", ["auto", "push", "pull"])
@pytest.mark.parametrize("size", SIZES)
@settings(max_examples=12, deadline=None)
@given(g=G.medium_graphs(), data=st.data())
def test_sssp_gives_dijkstras_distances_and_a_tree_on_every_rank(size, direction, method, g, data):
    # zero weights and ties among the drawn ones; delta-stepping's window the default (the
    # weights' bucket width) or drawn, narrower than an edge or wider than every path (1e300:
    # an end that overflows float32, every pending vertex in it)
    S = g.scipy()
    source = data.draw(st.integers(0, g.n - 1), label="source")
    delta = None
    if method == "delta_stepping":
        delta = data.draw(
            st.one_of(st.none(), st.sampled_from([0.5, 3.0, 40.0, 1e9, 1e300])), label="delta"
        )
    dtype = data.draw(st.sampled_from([np.float64, np.float32]), label="dtype")

    def work(comm):
        M = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
        stats = {}
        dist, pred = D.sssp(
            M,
            source,
            method=method,
            delta=delta,
            direction=direction,
            dtype=dtype,
            return_predecessors=True,
            stats=stats,
        )
        return dist, pred, stats

    expected = csgraph.dijkstra(S, indices=source).astype(dtype)
    for dist, pred, stats in on_ranks(size, work):
        assert dist.dtype == dtype and pred.dtype == np.int64
        np.testing.assert_array_equal(dist, expected)
        gbla.verify.sssp(S, source, dist, pred)  # zero-weight edges: a tree all the same
        # a round lowers something until the last, which finds nothing more
        assert stats["found"][-1] == 0
        assert sum(stats["found"]) >= int(np.isfinite(expected).sum()) - 1


def test_delta_stepping_over_ranks_lowers_fewer_distances_than_bellman_ford_in_more_rounds():
    # R-MAT, weights 1..255: with half the default window a vertex more often pushes once its
    # distance is final
    A = gbla.generators.rmat(12, 16, seed=12, device="cpu", weights=(1, 255))
    S = A.to_scipy().tocsr().astype(np.float64)
    source = int(np.argmax(np.diff(S.indptr)))

    def work(comm):
        M = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
        width = M.weights.bucket_width(M.nvals, M.n) / 2
        bf, ds, auto = {}, {}, {}
        out = (
            D.sssp(M, source, direction="push", stats=bf),
            D.sssp(M, source, method="delta_stepping", delta=width, direction="push", stats=ds),
            D.sssp(M, source, method="delta_stepping", delta=width, stats=auto),
            D.sssp(M, source, method="delta_stepping", dtype=np.float32),
            D.sssp(M, source, dtype=np.float32),
        )
        return out, bf, ds, auto

    expected = csgraph.dijkstra(S, indices=source)
    (bf_dist, ds_dist, auto_dist, ds32, bf32), bf, ds, auto = on_ranks(3, work)[0]
    np.testing.assert_array_equal(bf_dist, expected)
    np.testing.assert_array_equal(ds_dist, expected)
    np.testing.assert_array_equal(auto_dist, expected)
    assert ds32.dtype == np.float32
    np.testing.assert_array_equal(ds32, bf32)
    assert len(ds["bytes"]) > len(bf["bytes"])
    assert sum(ds["found"]) < 0.97 * sum(bf["found"])
    # an all-gather (the window, the end and the front's size) and the product's all-to-all
    # a round, whether it pushes or a policy chooses; one more all-gather finds nothing
    # pending
    assert ds["collectives"] == [3] + [2] * (len(ds["collectives"]) - 1)
    assert auto["collectives"] == [3] + [2] * (len(auto["collectives"]) - 1)
    assert "pull" in auto["directions"] and "push" in auto["directions"]


def test_delta_stepping_over_ranks_refuses_bad_input():
    S = G.csr([0, 1], [1, 2], [1.0, -2.0], 3)
    P = G.csr([0, 1], [1, 2], [1.0, 2.0], 3)

    def search(S, **kw):
        return on_ranks(
            2,
            lambda comm: D.sssp(D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data), 0, **kw),
        )

    with pytest.raises(gbla.InvalidValue, match="^A must hold no negative weight") as e:
        search(S, method="delta_stepping")
    assert "-2.0" in str(e.value)
    for bad in (0, -1.0, np.nan, np.inf, True, "1"):
        with pytest.raises(gbla.InvalidValue, match="^delta must be a positive finite number"):
            search(P, method="delta_stepping", delta=bad)
    with pytest.raises(gbla.InvalidValue, match="^delta must be None with method='bellman_ford'"):
        search(P, delta=1.0)
    with pytest.raises(gbla.InvalidValue, match="^method must be one of"):
        search(P, method="dijkstra")
    with pytest.raises(gbla.InvalidValue, match="^return_predecessors must be True or False"):
        search(P, return_predecessors="yes")


@settings(max_examples=20, deadline=None)
@given(gp=potential_graphs(), data=st.data(), size=st.sampled_from(SIZES))
def test_sssp_takes_negative_weights_and_raises_on_a_negative_cycle(gp, data, size):
    # D.sssp (each rank its range) and gbla.sssp on the same DistMatrix ('auto': Bellman-Ford,
    # as on one device)
    g, p = gp
    source = data.draw(st.integers(0, g.n - 1), label="source")
    w = g.w + p[g.src] - p[g.dst]
    S = G.csr(g.src, g.dst, w, g.n)

    def work(comm):
        M = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
        stats = {}
        own = D.sssp(M, source, return_predecessors=True)
        return own, gbla.sssp(M, source, stats=stats), stats["method"]

    expected = csgraph.dijkstra(g.scipy(), indices=source) + p[source] - p
    for (own, pred), dist, method in on_ranks(size, work):
        np.testing.assert_array_equal(own, expected)
        gbla.verify.sssp(S, source, own, pred)
        np.testing.assert_array_equal(dist, expected)
        assert method == "bellman_ford"
    C = G.csr([0, 1, 2], [1, 2, 1], [1.0, 2.0, -3.0], 3)
    for search in (D.sssp, gbla.sssp):
        with pytest.raises(gbla.NegativeCycleError, match="^A must have no negative cycle"):
            on_ranks(
                size,
                lambda comm: search(D.DistMatrix.from_csr(comm, C.indptr, C.indices, C.data), 0),
            )


def test_a_gbla_matrix_cut_over_ranks():
    A = gbla.generators.rmat(8, seed=2, device="cpu")
    expected = gbla.bfs(A, 3)

    def work(comm):
        return D.bfs(D.DistMatrix.of(comm, A), 3)

    for levels in on_ranks(2, work):
        np.testing.assert_array_equal(levels, expected)


# ============================================================================== gbla itself
# gbla.bfs, gbla.sssp and gbla.vxm take a DistMatrix: the algorithms of gbla/algorithms as they
# are written, every vector whole on every rank, the products split by rows
@pytest.mark.parametrize("direction", ["auto", "push", "pull"])
@pytest.mark.parametrize("size", SIZES)
@settings(max_examples=10, deadline=None)
@given(g=G.medium_graphs(), data=st.data())
def test_gbla_bfs_and_sssp_run_unchanged_on_a_distributed_matrix(size, direction, g, data):
    S = g.scipy()
    source = data.draw(st.integers(0, g.n - 1), label="source")
    A = gbla.Matrix.from_scipy(S, device="cpu")

    def work(comm):
        M = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
        stats = {}
        levels, parents = gbla.bfs(
            M, source, return_predecessors=True, direction=direction, stats=stats
        )
        dists = [
            gbla.sssp(
                M, source, direction=direction, method=method, return_predecessors=True, **options
            )
            for method, options in (
                ("auto", {}),
                ("bellman_ford", {}),
                ("delta_stepping", {"delta": 7.0}),
            )
        ]
        return levels, parents, dists, stats

    expected = csgraph.dijkstra(S, indices=source)
    for levels, parents, dists, stats in on_ranks(size, work):
        np.testing.assert_array_equal(levels, host(gbla.bfs(A, source)))
        gbla.verify.bfs(A, source, levels, parents)
        for dist, pred in dists:
            np.testing.assert_array_equal(dist, expected)
            gbla.verify.sssp(A, source, dist, pred)
        assert stats["mode"] == "eager" and stats["levels"] == levels.max() + 1


@pytest.mark.parametrize("size", [1, 2, 3])
@settings(max_examples=8, deadline=None)
@given(g=G.medium_graphs(), data=st.data())
def test_several_sources_at_once_on_a_distributed_matrix(size, g, data):
    # BFS: one product a level for all of them (bit-parallel); SSSP: one Bellman-Ford each
    S = g.scipy()
    sources = data.draw(st.lists(st.integers(0, g.n - 1), min_size=1, max_size=5), label="sources")
    A = gbla.Matrix.from_scipy(S, device="cpu")

    def work(comm):
        M = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
        return (
            gbla.bfs(M, sources, return_predecessors=True),
            gbla.sssp(M, sources, return_predecessors=True),
        )

    expected = host(gbla.bfs(A, sources))
    for (levels, parents), (dist, pred) in on_ranks(size, work):
        np.testing.assert_array_equal(levels, expected)
        np.testing.assert_array_equal(dist, csgraph.dijkstra(S, indices=sources))
        for i, s in enumerate(sources):
            gbla.verify.bfs(A, s, levels[i], parents[i])
            gbla.verify.sssp(A, s, dist[i], pred[i])


@pytest.mark.parametrize("semiring", ["plus_times", "min_plus", "any_pair", "any_secondi"])
@pytest.mark.parametrize("size", [1, 3])
def test_gbla_vxm_on_a_distributed_matrix_with_mask_accum_and_replace(semiring, size):
    S = gbla.generators.rmat(7, 4, seed=2, device="cpu", weights=(1, 9)).to_scipy()
    A = gbla.Matrix.from_scipy(S, device="cpu")
    n = S.shape[0]
    rng = np.random.default_rng(4)
    u = gbla.Vector.from_coo(
        np.sort(rng.choice(n, 20, replace=False)),
        rng.integers(1, 9, 20),
        n,
        dtype=np.float64,
        device="cpu",
    )
    old = gbla.Vector.from_coo(
        np.sort(rng.choice(n, 40, replace=False)),
        rng.integers(1, 9, 40),
        n,
        dtype=np.float64,
        device="cpu",
    )
    mask = gbla.Vector.from_dense(rng.random(n) < 0.5, device="cpu")
    kinds = [
        dict(),
        dict(mask=mask.V),
        dict(mask=~mask.S, accum="plus"),
        dict(mask=mask.V, replace=True),
    ]

    def product(M, kw):
        out = None if not kw else gbla.Vector.from_coo(*old.to_coo(), n, device="cpu")
        return gbla.vxm(u, M, semiring, out=out, **kw).to_coo()

    def work(comm):
        M = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
        return [product(M, kw) for kw in kinds]

    expected = [product(A, kw) for kw in kinds]
    for got in on_ranks(size, work):
        for (gi, gv), (ei, ev) in zip(got, expected):
            np.testing.assert_array_equal(gi, ei)
            if semiring != "any_secondi":  # any: one of the candidate products
                np.testing.assert_array_equal(gv, ev)


@pytest.mark.parametrize("size", [1, 3])
def test_select_on_a_distributed_matrix_keeps_both_parts_and_the_weights_facts(size):
    from gbla.algorithms.sssp import default_delta

    S = gbla.generators.rmat(8, 4, seed=3, device="cpu", weights=(1, 9)).to_scipy()
    heavy = S.copy()
    heavy.data[heavy.data <= 4] = 0
    heavy.eliminate_zeros()
    source = int(np.argmax(np.diff(S.indptr)))

    def work(comm):
        M = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
        H = gbla.select(M, ">", 4)
        # a comparison with a number is kept with the matrix (delta-stepping's split, once)
        assert gbla.select(M, ">", 4) is H and gbla.select(M, ">", 5) is not H
        with pytest.raises(gbla.InvalidValue, match="be a comparison on a DistMatrix"):
            gbla.select(M, "tril")
        return (
            H.nvals,
            H.weights,
            default_delta(M),
            default_delta(H),
            gbla.sssp(H, source, direction="pull"),
            gbla.sssp(H, source, direction="push"),
        )

    one = gbla.Matrix.from_scipy(S, device="cpu")
    for nvals, facts, delta, heavy_delta, pulled, pushed in on_ranks(size, work):
        assert nvals == heavy.nnz and facts.lowest == heavy.data.min() == 5
        assert facts.positive_count == heavy.nnz and not facts.infinite and facts.bad is None
        assert delta == pytest.approx(default_delta(one))
        assert heavy_delta == pytest.approx(
            default_delta(gbla.Matrix.from_scipy(heavy, device="cpu"))
        )
        np.testing.assert_array_equal(pulled, csgraph.dijkstra(heavy, indices=source))
        np.testing.assert_array_equal(pushed, pulled)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("size", [1, 3])
def test_scale_on_a_distributed_matrix_scales_both_parts(size, side):
    # checked through products that read each part: push the rows, pull the transpose's
    S = gbla.generators.rmat(7, 4, seed=5, device="cpu", weights=(1, 9)).to_scipy()
    n = S.shape[0]
    rng = np.random.default_rng(6)
    v = gbla.Vector.from_coo(
        np.sort(rng.choice(n, n // 2, replace=False)),
        rng.integers(1, 5, n // 2),
        n,
        dtype=np.float64,
        device="cpu",
    )
    u = gbla.Vector.from_coo(
        np.sort(rng.choice(n, 30, replace=False)),
        rng.integers(1, 5, 30),
        n,
        dtype=np.float64,
        device="cpu",
    )

    def products(M):
        T = gbla.scale(M, v, "times", side=side)
        return [gbla.vxm(u, T, "plus_times", direction=d).to_coo() for d in ("push", "pull")]

    expected = products(gbla.Matrix.from_scipy(S, device="cpu"))[0]
    for got in on_ranks(
        size, lambda comm: products(D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data))
    ):
        for idx, vals in got:
            np.testing.assert_array_equal(idx, expected[0])
            np.testing.assert_allclose(vals, expected[1])


@pytest.mark.parametrize("size", [1, 2, 3])
def test_a_nan_weight_is_refused_and_an_infinite_one_dropped_alike_on_every_rank(size):
    # 0 -> 1 (1), 1 -> 2 (+inf: connects nothing), 0 -> 2 (2), 2 -> 3 (5)
    nan = G.csr([0, 1], [1, 2], [1.0, np.nan], 3)
    inf = G.csr([0, 1, 0, 2], [1, 2, 2, 3], [1.0, np.inf, 2.0, 5.0], 4)

    def work(comm):
        with pytest.raises(gbla.InvalidValue) as info:
            gbla.sssp(D.DistMatrix.from_csr(comm, nan.indptr, nan.indices, nan.data), 0)
        M = D.DistMatrix.from_csr(comm, inf.indptr, inf.indices, inf.data)
        return str(info.value), gbla.sssp(M, 0, return_predecessors=True)

    for nan_error, (dist, pred) in on_ranks(size, work):
        assert "hold no NaN or -inf weight" in nan_error and "nan at (1, 2)" in nan_error
        np.testing.assert_array_equal(dist, [0.0, 1.0, 2.0, 7.0])
        np.testing.assert_array_equal(pred, [0, 0, 0, 2])


@pytest.mark.parametrize("size", [1, 2, 4])
@settings(max_examples=8, deadline=None)
@given(g=G.medium_graphs(), data=st.data())
def test_a_matrix_built_from_each_ranks_share_of_the_edges(size, g, data):
    # no rank ever holds the whole graph: each passes the edges it drew, any of them
    S = g.scipy().tocoo()
    who = np.array(
        data.draw(
            st.lists(st.integers(0, size - 1), min_size=S.nnz, max_size=S.nnz), label="ranks"
        ),
        np.int64,
    )
    blocks = data.draw(st.sampled_from([1, 7, 65536]), label="blocks")
    source = data.draw(st.integers(0, g.n - 1), label="source")
    A = gbla.Matrix.from_scipy(S.tocsr(), device="cpu")

    def work(comm):
        k = who == comm.rank
        M = D.DistMatrix.from_edges(comm, S.row[k], S.col[k], S.data[k], n=g.n, blocks=blocks)
        assert M.indices.dtype == M.transpose[1].dtype == np.int32  # ids that fit: 4 bytes
        return (
            M.nvals,
            gbla.bfs(M, source, return_predecessors=True),
            gbla.sssp(M, source),
            D.bfs(M, source, direction="pull"),
        )

    for nvals, (levels, parents), dist, pulled in on_ranks(size, work):
        assert nvals == S.nnz
        np.testing.assert_array_equal(levels, host(gbla.bfs(A, source)))
        np.testing.assert_array_equal(pulled, levels)
        gbla.verify.bfs(A, source, levels, parents)
        np.testing.assert_array_equal(dist, csgraph.dijkstra(S.tocsr(), indices=source))


@pytest.mark.parametrize("size", [1, 2, 3])
@pytest.mark.parametrize("chunk", [1, 37, 2**28])
def test_a_build_in_row_ranges_gives_the_one_built_at_once(size, chunk, monkeypatch):
    # a rank sorts a range of its rows at a time (to hold less): the same part, repeats
    # combined alike, a repeat without dup_op still named
    rng = np.random.default_rng(3)
    n, m = 120, 900
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.integers(1, 50, m).astype(np.float64)
    who = rng.integers(0, size, m)
    S = sp.coo_array((w, (src, dst)), shape=(n, n))
    expected = sp.csr_array(
        (np.minimum.reduceat(*_sorted_by_edge(src, dst, w)), _unique_edges(src, dst, n)),
        shape=(n, n),
    )
    monkeypatch.setattr(D.build, "_CHUNK", chunk)

    def work(comm):
        k = who == comm.rank
        M = D.DistMatrix.from_edges(comm, src[k], dst[k], w[k], n=n)
        try:
            D.DistMatrix.from_edges(comm, src[k], dst[k], w[k], n=n, dup_op=None)
        except gbla.DuplicateIndex as e:
            repeat = str(e)
        return M.lo, M.hi, M.indptr, M.indices, M.values, M.transpose, repeat

    parts = on_ranks(size, work)
    T = expected.T.tocsr()
    for lo, hi, indptr, indices, values, (t_ptr, t_idx, t_val), repeat in parts:
        rows = expected[lo:hi]
        np.testing.assert_array_equal(indptr, rows.indptr)
        np.testing.assert_array_equal(indices, rows.indices)
        np.testing.assert_array_equal(values, rows.data)
        np.testing.assert_array_equal(t_ptr, T[lo:hi].indptr)
        np.testing.assert_array_equal(t_idx, T[lo:hi].indices)
        np.testing.assert_array_equal(t_val, T[lo:hi].data)
        assert "repeated" in repeat
    assert S.nnz == m


def _sorted_by_edge(src, dst, w):
    """(weights ordered by edge, the start of each edge's run): for np.minimum.reduceat."""
    order = np.lexsort((dst, src))
    key = src[order] * 10**6 + dst[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    return w[order], starts


def _unique_edges(src, dst, n):
    key = np.unique(src * n + dst)
    return key // n, key % n


@pytest.mark.parametrize("size", [1, 2, 3])
def test_rmat_generated_in_parts_on_the_ranks_is_rmat(size):
    # each rank generates its part of the edges; repeats (within a part or across) merge
    A = gbla.generators.rmat(8, 8, seed=3, device="cpu")
    sources = [0, 17, 200]

    def work(comm):
        src, dst = gbla.generators.rmat_edges(
            8, 8, seed=3, part=comm.rank, parts=comm.size, device="cpu"
        )
        M = D.DistMatrix.from_edges(comm, src, dst, n=256)
        return M.nvals, gbla.bfs(M, sources)

    for nvals, levels in on_ranks(size, work):
        assert nvals == A.nvals
        np.testing.assert_array_equal(levels, host(gbla.bfs(A, sources)))


@pytest.mark.parametrize(
    "dup_op, weight",
    [(None, 5.0), (gbla.semirings.binary.max, 7.0), (gbla.semirings.binary.plus, 18.0)],
)
def test_an_edge_given_by_several_ranks_combines_its_weights(dup_op, weight):
    # ranks 0, 1, 2 each give 0 -> 1 with weight 5, 6, 7; the default keeps the lightest
    def work(comm):
        options = {} if dup_op is None else {"dup_op": dup_op}
        M = D.DistMatrix.from_edges(comm, [0], [1], [5.0 + comm.rank], n=2, **options)
        return gbla.sssp(M, 0)

    for dist in on_ranks(3, work):
        assert dist.tolist() == [0.0, weight]


def test_rmat_edges_checks_its_part():
    with pytest.raises(gbla.InvalidIndex, match="part must satisfy 0 <= part < 4; got 4"):
        gbla.generators.rmat_edges(5, part=4, parts=4, device="cpu")
    with pytest.raises(gbla.InvalidValue, match="parts must be at least 1"):
        gbla.generators.rmat_edges(5, parts=0, device="cpu")
    whole = gbla.generators.rmat_edges(5, seed=2, device="cpu")
    parts = [gbla.generators.rmat_edges(5, seed=2, part=p, parts=3, device="cpu") for p in range(3)]
    # the parts hold the whole's edges (each part both ways), repeats as often
    assert sorted(zip(*whole)) == sorted(e for part in parts for e in zip(*part))


def _parts(M):
    return (M.lo, M.hi, M.indptr, M.indices, M.values) + tuple(M.transpose)


def _assert_same_parts(a, b):
    for x, y in zip(_parts(a), _parts(b)):
        if x is None or y is None:
            assert x is None and y is None
        else:
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("size", [1, 2, 3])
@pytest.mark.parametrize("weighted", [True, False])
def test_a_matrix_built_from_pieces_equals_the_one_built_from_the_whole_arrays(size, weighted):
    # each rank cuts its share into pieces of its own size (a rank may have none at all);
    # repeats, within a piece or across pieces and ranks, combine by plus in the order given
    rng = np.random.default_rng(11)
    n, m = 150, 2000
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.integers(1, 9, m).astype(np.float64) if weighted else None
    who = rng.integers(0, max(size - 1, 1), m)  # the last of several ranks gives nothing
    plus = gbla.semirings.binary.plus

    def work(comm):
        k = who == comm.rank
        s, d = src[k], dst[k]
        v = None if w is None else w[k]
        piece = 1 + 37 * comm.rank

        def pieces():
            for i in range(0, len(s), piece):
                yield (s[i : i + piece], d[i : i + piece]) + (
                    () if v is None else (v[i : i + piece],)
                )

        whole = D.DistMatrix.from_edges(comm, s, d, v, n=n, dup_op=plus)
        return whole, D.DistMatrix.from_edge_pieces(comm, pieces, n=n, dup_op=plus)

    expected = sp.coo_array((np.ones(m) if w is None else w, (src, dst)), shape=(n, n)).tocsr()
    for whole, built in on_ranks(size, work):
        _assert_same_parts(whole, built)
        rows = expected[built.lo : built.hi]
        np.testing.assert_array_equal(built.indptr, rows.indptr)
        np.testing.assert_array_equal(built.indices, rows.indices)
        if weighted:
            np.testing.assert_array_equal(built.values, rows.data)  # the repeats' sums
        else:
            assert built.values is None
        assert built.nvals == expected.nnz


@pytest.mark.parametrize("size", [1, 2])
@pytest.mark.parametrize("piece", [1, 7, 2**26])
def test_from_edges_places_its_arrays_a_slice_at_a_time(size, piece, monkeypatch):
    rng = np.random.default_rng(5)
    n, m = 60, 500
    src, dst, w = rng.integers(0, n, m), rng.integers(0, n, m), rng.random(m)
    whole = on_ranks(size, lambda comm: D.DistMatrix.from_edges(comm, src, dst, w, n=n))
    monkeypatch.setattr(D.build, "PIECE", piece)
    for a, b in zip(
        whole, on_ranks(size, lambda comm: D.DistMatrix.from_edges(comm, src, dst, w, n=n))
    ):
        _assert_same_parts(a, b)


@pytest.mark.parametrize("size", [1, 2, 3])
def test_rmat_generated_a_piece_at_a_time_is_rmat(size):
    A = gbla.generators.rmat(9, 8, seed=4, device="cpu")

    def work(comm):
        pieces = gbla.generators.rmat_edge_pieces(
            9, 8, seed=4, part=comm.rank, parts=comm.size, piece_edges=333, device="cpu"
        )
        mine = gbla.generators.rmat_edges(
            9, 8, seed=4, part=comm.rank, parts=comm.size, device="cpu"
        )
        # the pieces hold the part's edges, repeats as often, ids in 4 bytes
        got = [(s, d) for s, d in pieces()]
        assert all(s.dtype == d.dtype == np.int32 for s, d in got)
        assert sorted(zip(*mine)) == sorted(e for s, d in got for e in zip(s.tolist(), d.tolist()))
        M = D.DistMatrix.from_edge_pieces(comm, pieces, n=512)
        return M.nvals, gbla.bfs(M, [0, 100])

    for nvals, levels in on_ranks(size, work):
        assert nvals == A.nvals
        np.testing.assert_array_equal(levels, host(gbla.bfs(A, [0, 100])))


def test_a_build_from_pieces_holds_its_part_and_a_piece_not_every_edge(monkeypatch):
    # 400,000 generated edges (7.2 MB as int64 ids and float64 weights, both ways) make a
    # part of 4.8 MB (int32 ids, float64 weights, rows and transpose's rows); built from
    # pieces of 4,000 edges the build's peak stays near the part, where a build holding its
    # edges (or concatenating them) would need at least twice it
    import tracemalloc

    n, m, piece = 4000, 200_000, 2000
    monkeypatch.setattr(D.build, "_CHUNK", 50_000)  # the sorts and the weights' facts a
    monkeypatch.setattr(gbla._weights, "_NUMBERS_CHUNK", 50_000)  # chunk at a time, as at scale

    def pieces():
        for first in range(0, m, piece):
            rng = np.random.default_rng(first)
            s, d = rng.integers(0, n, piece), rng.integers(0, n, piece)
            yield np.concatenate([s, d]), np.concatenate([d, s]), np.ones(2 * piece)

    tracemalloc.start()
    try:
        M = D.DistMatrix.from_edge_pieces(D.SelfComm(), pieces, n=n)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    stored = sum(x.nbytes for x in _parts(M)[2:])
    assert M.nvals > 0.95 * 2 * m  # few repeats: the part is about as large as the edges
    assert peak < 1.5 * stored + 2e6, (peak, stored)


def test_whole_float_ids_are_taken_as_matrix_from_edges_takes_them():
    # ids read from a text file may come as floats: whole ones are ids, others refused
    src, dst, w = np.array([0.0, 1.0, 2.0]), np.array([1.0, 2.0, 0.0]), np.array([3.0, 4.0, 5.0])
    M = D.DistMatrix.from_edges(D.SelfComm(), src, dst, w, n=3)
    np.testing.assert_array_equal(M.indices, [1, 2, 0])
    np.testing.assert_array_equal(gbla.sssp(M, 0), [0.0, 3.0, 7.0])
    with pytest.raises(gbla.InvalidValue, match="src must hold integers; got 0.5"):
        D.DistMatrix.from_edges(D.SelfComm(), [0.5], [1.0], n=3)


@pytest.mark.parametrize("size", [1, 3])
def test_pieces_that_are_wrong_make_every_rank_raise_naming_them(size):
    def build(make, on=0, n=10):
        def work(comm):
            mine = comm.rank == on
            return D.DistMatrix.from_edge_pieces(
                comm, make(comm) if mine else (lambda: iter(())), n=n
            )

        return on_ranks(size, work)

    calls = []

    def changing(comm):  # other edges the second time it is called
        def pieces():
            calls.append(1)
            yield np.array([0, 1]), np.array([1, len(calls) % 2 + 2])

        return pieces

    with pytest.raises(gbla.InvalidValue, match="pieces must yield the same edges"):
        build(changing)
    with pytest.raises(gbla.InvalidValue, match="pieces must yield .* tuples; got 'a tuple of 1'"):
        build(lambda comm: lambda: iter([(np.array([0]),)]))
    with pytest.raises(gbla.InvalidIndex, match="dst must hold indices < 10; got 12"):
        build(lambda comm: lambda: iter([([0], [1]), ([2], [12])]))
    with pytest.raises(gbla.InvalidValue, match="values must be given for every piece"):
        build(lambda comm: lambda: iter([([0], [1], [1.0]), ([2], [3])]))
    with pytest.raises(gbla.InvalidValue, match="pieces must be a callable"):
        D.DistMatrix.from_edge_pieces(D.SelfComm(), [([0], [1])], n=3)
    if size > 1:  # the others raise too, whichever rank is wrong
        with pytest.raises(gbla.GblaError):
            build(lambda comm: lambda: iter([([0], [12])]), on=size - 1)


@pytest.mark.parametrize("size", [1, 3])
def test_bad_edges_from_one_rank_make_every_rank_raise(size):
    def build(src, dst, values=None, n=4, on=0, **options):
        def work(comm):
            mine = comm.rank == on
            return D.DistMatrix.from_edges(
                comm,
                src if mine else [],
                dst if mine else [],
                (values if mine else []) if values is not None else None,
                n=n,
                **options,
            )

        return on_ranks(size, work)

    with pytest.raises(gbla.DuplicateIndex, match=r"edge \(0, 1\) repeated"):
        build([0, 0, 1, 1], [1, 1, 2, 2], [1.0, 2.0, 3.0, 4.0], dup_op=None)
    with pytest.raises(gbla.InvalidIndex, match="dst must hold indices < 4; got 9"):
        build([0, 1], [1, 9])
    with pytest.raises(gbla.DimensionMismatch, match=r"len\(values\) must equal len\(src\)"):
        build([0, 1], [1, 2], [1.0])
    if size > 1:  # the other ranks raise too, not knowing which index
        with pytest.raises(gbla.GblaError):
            build([0, 1], [1, 9], on=size - 1)
        with pytest.raises(gbla.InvalidValue, match="n must be the same on every rank"):
            on_ranks(size, lambda comm: D.DistMatrix.from_edges(comm, [], [], n=4 + comm.rank))


@pytest.mark.parametrize(
    "indptr, indices, values, error, match",
    [
        ([0, 1, 2], [1, 0], [1.0], gbla.DimensionMismatch, r"len\(values\) must equal len"),
        ([0, 1, 3], [1, 0], None, gbla.InvalidValue, r"indptr must run from 0 to len\(indices\)"),
        ([0, 2, 1, 2], [1, 0], None, gbla.InvalidValue, "indptr must never fall"),
        ([0, 1, 2], [1, 5], None, gbla.InvalidIndex, r"indices must hold indices < 2; got 5"),
        ([0, 1, 2], [1, -1], None, gbla.InvalidIndex, "indices must hold no negative index"),
        ([[0, 1]], [1], None, gbla.InvalidValue, "indptr must be a 1-D array"),
    ],
)
def test_a_malformed_csr_is_refused_naming_the_argument(indptr, indices, values, error, match):
    with pytest.raises(error, match=match):
        D.DistMatrix.from_csr(D.SelfComm(), indptr, indices, values)


def test_what_does_not_run_on_a_distributed_matrix_says_so():
    S = G.csr([0, 1], [1, 2], [1.0, 2.0], 3)

    def work(comm):
        M = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
        errors = []
        for call in (
            lambda: gbla.bfs(M, 0, method="frontier_queue"),
            lambda: gbla.sssp(M, 0, method="near_far"),
            lambda: gbla.mxm(M, M, "plus_times"),  # B only
            lambda: gbla.mxv(M, gbla.Vector.new(3, device="cpu"), "min_plus"),
            lambda: gbla.iterate(
                lambda s, i: None,
                {"q": gbla.Vector.new(3, device="cpu")},
                while_nonempty="q",
                cache=M,
                mode="device",
            ),
        ):
            with pytest.raises(gbla.GblaError) as info:
                call()
            errors.append(str(info.value))
        return errors

    for errors in on_ranks(2, work):
        assert "does not run on a DistMatrix" in errors[0]
        assert "algebraic" in errors[0]
        assert "does not run on a DistMatrix" in errors[1]
        assert (
            "bellman_ford, delta_stepping" in errors[1]
            or "delta_stepping, bellman_ford" in errors[1]
        )
        assert "only vxm, mxm (as B), select and scale take a DistMatrix" in errors[2]
        assert "only vxm, mxm (as B), select and scale take a DistMatrix" in errors[3]
        assert errors[4].startswith("mode must be 'auto' or 'eager'")  # never recorded


# ============================================================================== bitmap BFS
# D.bitmap_bfs (gbla.bfs method "distributed_bitmap"): frontiers as bitmaps of 32-bit words,
# a push's bits all-to-all to their owners, a pull's frontier all-gathered; on CPU ranks the
# NumPy steps, the exchanges, the word slicing, the direction and the levels as on the GPU
def cut(comm, S, bounds, index_dtype=np.int32):
    """This rank's part of the SciPy CSR ``S`` over the row ``bounds`` given (from_csr cuts by
    edges instead), its transpose's rows with it."""
    lo, hi = bounds[comm.rank], bounds[comm.rank + 1]
    T = S.T.tocsr()
    T.sort_indices()
    xp = comm.xp

    def rows(M):
        e0, e1 = M.indptr[lo], M.indptr[hi]
        return (
            xp.asarray((M.indptr[lo : hi + 1] - e0).astype(np.int64)),
            xp.asarray(M.indices[e0:e1].astype(index_dtype)),
            None,
        )

    return D.DistMatrix(comm, bounds, *rows(S), S.shape[0], transpose=rows(T), nvals=S.nnz)


def odd_bounds(n, size):
    """Row bounds over ``size`` ranks that split 32-bit words: 37 | 1, 33 | 31, an empty rank,
    n - 5 (n >= 70)."""
    return [0, *{1: [], 2: [37], 3: [1, 33], 4: [31, 31, n - 5]}[size], n]


def bitmap_graphs():
    """name -> SciPy CSR: a directed graph whose vertices 80..99 are isolated, and an
    undirected R-MAT graph whose frontier grows large enough for the policy to pull."""
    rng = np.random.default_rng(11)
    src, dst = rng.integers(0, 80, 240), rng.integers(0, 80, 240)
    directed = G.csr(src[src != dst], dst[src != dst], np.ones(int((src != dst).sum())), 100)
    rmat = gbla.generators.rmat(9, 8, seed=7, device="cpu").to_scipy()
    return {"directed": directed, "rmat": rmat}


BITMAP_GRAPHS = bitmap_graphs()


def check_bitmap_search(S, source, levels, parents, depth_limit=None):
    expected = _levels_of(S, source)
    if depth_limit is not None:
        expected = np.where(expected <= depth_limit, expected, -1)
    assert host(levels).dtype == np.int32
    np.testing.assert_array_equal(host(levels), expected)
    if depth_limit is None:
        gbla.verify.bfs(
            gbla.Matrix.from_scipy(S, device="cpu"), source, host(levels), host(parents)
        )
        return
    p, lv = host(parents), host(levels)  # a cut search: each parent one level up, an edge
    assert p[source] == source and (p[lv < 0] == -1).all()
    for v in np.flatnonzero(lv > 0):
        assert lv[p[v]] == lv[v] - 1 and v in S.indices[S.indptr[p[v]] : S.indptr[p[v] + 1]]


@pytest.mark.parametrize("direction", ["auto", "push", "pull", FLIPPING], ids=str)
@pytest.mark.parametrize("size", SIZES)
@settings(max_examples=15, deadline=None)
@given(g=G.medium_graphs(), data=st.data())
def test_bitmap_bfs_gives_scipys_levels_and_a_valid_tree_on_every_rank(size, direction, g, data):
    S = g.scipy()
    source = data.draw(st.integers(0, g.n - 1), label="source")

    def work(comm):
        A = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
        return D.bitmap_bfs(A, source, return_predecessors=True, direction=direction)

    for levels, parents in on_ranks(size, work):
        check_bitmap_search(S, source, levels, parents)


@pytest.mark.parametrize("direction", ["auto", "push", "pull", FLIPPING], ids=str)
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("graph", sorted(BITMAP_GRAPHS))
def test_bitmap_bfs_on_bounds_that_split_words_from_a_source_on_every_rank(graph, size, direction):
    S = BITMAP_GRAPHS[graph]
    bounds = odd_bounds(S.shape[0], size)
    # each rank's first and last vertex (rank 3 of the directed graph's: isolated ones)
    sources = sorted({v for lo, hi in zip(bounds, bounds[1:]) if hi > lo for v in (lo, hi - 1)})

    def work(comm):
        A = cut(comm, S, bounds)
        return [
            (
                D.bitmap_bfs(A, s, return_predecessors=True, direction=direction),
                D.bitmap_bfs(A, s, direction=direction),
                # gather=False: this rank's vertices' results, whole again by A.gather
                (A.lo, A.hi),
                D.bitmap_bfs(A, s, return_predecessors=True, direction=direction, gather=False),
            )
            for s in sources
        ]

    for per_rank in on_ranks(size, work):
        for s, ((levels, parents), alone, (lo, hi), local) in zip(sources, per_rank):
            check_bitmap_search(S, s, levels, parents)
            np.testing.assert_array_equal(alone, levels)
            np.testing.assert_array_equal(local[0], levels[lo:hi])
            assert len(local[1]) == hi - lo  # a valid tree, maybe another one


@pytest.mark.parametrize("size", SIZES)
def test_bitmap_bfs_pulls_while_the_frontier_is_large_and_pushes_at_both_ends(size):
    S = BITMAP_GRAPHS["rmat"]
    source = int(np.argmax(np.diff(S.indptr)))

    def work(comm):
        stats = {}
        out = D.bitmap_bfs(
            cut(comm, S, odd_bounds(S.shape[0], size)),
            source,
            return_predecessors=True,
            stats=stats,
        )
        return out, stats

    for (levels, parents), stats in on_ranks(size, work):
        check_bitmap_search(S, source, levels, parents)
        ways = stats["directions"]
        assert ways[0] == "push" and "pull" in ways and ways[-1] == "push", ways


@pytest.mark.parametrize("size", [1, 2, 3])
@pytest.mark.parametrize("direction", ["push", "pull"])
def test_bitmap_bfs_depth_limit(size, direction):
    # 0 -> 1 -> 2 -> ... -> 69 (a path, so that three ranks' bounds split it)
    S = G.csr(np.arange(69), np.arange(1, 70), np.ones(69), 70)

    def work(comm):
        A = cut(comm, S, odd_bounds(70, size))
        return [
            D.bitmap_bfs(A, 0, return_predecessors=True, depth_limit=limit, direction=direction)
            for limit in (0, 1, 2, 40)
        ]

    for per_rank in on_ranks(size, work):
        for limit, (levels, parents) in zip((0, 1, 2, 40), per_rank):
            assert levels.tolist() == [d if d <= limit else -1 for d in range(70)]
            check_bitmap_search(S, 0, levels, parents, depth_limit=limit)


def _words(bounds):
    """The 32-bit words each rank's range spans."""
    return [(hi + 31) // 32 - lo // 32 if hi > lo else 0 for lo, hi in zip(bounds, bounds[1:])]


@pytest.mark.parametrize("parents", [True, False], ids=["parents", "levels"])
@pytest.mark.parametrize("direction", ["push", "pull", FLIPPING], ids=str)
@pytest.mark.parametrize("size", SIZES)
def test_bitmap_bfs_reports_the_words_each_level_sends(size, direction, parents):
    # push: every rank sends every other rank s the words of s's range of its bitmap (with
    # parents, its own frontier words after them); pull: every rank sends its frontier words
    # to every other; each level then sums the new frontier's size and out-edges over the
    # ranks (16 bytes to each other rank, from each), the first level the source's too
    S = BITMAP_GRAPHS["rmat"]
    bounds = odd_bounds(S.shape[0], size)
    source = 3

    def work(comm):
        stats = {}
        D.bitmap_bfs(
            cut(comm, S, bounds),
            source,
            return_predecessors=parents,
            direction=direction,
            stats=stats,
        )
        return stats

    stats, *others = on_ranks(size, work)
    assert all(_shared(o) == _shared(stats) for o in others)
    words = _words(bounds)
    sums = 16 * (size - 1) * size
    expected = []
    for way in stats["directions"]:
        if way == "push":
            sent = sum(
                4 * (words[s] + (words[r] if parents else 0))
                for r in range(size)
                for s in range(size)
                if s != r
            )
        else:
            sent = sum(4 * words[r] * (size - 1) for r in range(size))
        expected.append(sent + sums)
    expected[0] += sums
    levels = _levels_of(S, source)
    assert stats["bytes"] == expected and stats["bytes_total"] == sum(expected)
    assert stats["found"] == [int((levels == d).sum()) for d in range(1, len(expected) + 1)]
    assert stats["found"][-1] == 0
    assert stats["collectives"] == [3] + [2] * (len(expected) - 1)
    assert len(stats["seconds"]) == len(expected) and min(stats["seconds"]) > 0
    if isinstance(direction, str):
        assert stats["directions"] == [direction] * len(expected)
    else:
        assert {"push", "pull"} <= set(stats["directions"])


@pytest.mark.parametrize("size", [1, 3])
def test_gbla_bfs_runs_the_bitmap_method_on_a_distributed_matrix_and_on_a_matrix(size):
    S = BITMAP_GRAPHS["directed"]
    A = gbla.Matrix.from_scipy(S, device="cpu")
    expected = gbla.bfs(A, 7)

    def work(comm):
        M = cut(comm, S, odd_bounds(100, size))
        stats = {}
        return gbla.bfs(
            M,
            7,
            method="distributed_bitmap",
            return_predecessors=True,
            direction=FLIPPING,
            stats=stats,
        ), stats

    for (levels, parents), stats in on_ranks(size, work):
        assert levels.dtype == parents.dtype == np.int32  # gbla.bfs's dtypes
        np.testing.assert_array_equal(levels, expected)
        gbla.verify.bfs(A, 7, levels, parents)
        assert stats["levels"] == levels.max() + 1 == len(stats["directions"])
    stats = {}
    levels, parents = gbla.bfs(
        A, 7, method="distributed_bitmap", return_predecessors=True, stats=stats
    )  # a Matrix: one rank over its own arrays
    assert levels.dtype == parents.dtype == np.int32 and stats["bytes_total"] == 0
    np.testing.assert_array_equal(levels, expected)
    gbla.verify.bfs(A, 7, levels, parents)
    entry = gbla.methods.get("distributed_bitmap")
    assert (entry.algorithm, entry.devices, entry.directions, entry.algebraic) == (
        "bfs",
        ("cpu", "gpu"),
        True,
        False,
    )


@pytest.mark.parametrize("search", [D.bfs, D.bitmap_bfs], ids=lambda f: f.__name__)
@pytest.mark.parametrize("size", SIZES)
def test_a_search_left_on_its_ranks_is_each_ranks_part_of_the_whole(size, search):
    S = BITMAP_GRAPHS[sorted(BITMAP_GRAPHS)[0]]
    bounds = odd_bounds(S.shape[0], size)

    def work(comm):
        A = cut(comm, S, bounds)
        local = search(A, 0, gather=False)
        whole = A.gather(local)
        assert local.tolist() == whole[A.lo : A.hi].tolist()
        # the caller's part is read, not changed; a part of another length is refused
        assert local.tolist() == search(A, 0, gather=False).tolist()
        with pytest.raises(gbla.InvalidValue, match="^local must hold this rank's"):
            A.gather(np.zeros(A.hi - A.lo + 1, np.int32))
        with pytest.raises(gbla.InvalidValue, match="^gather must be True or False; got 1"):
            search(A, 0, gather=1)
        return whole

    d = csgraph.shortest_path(S, unweighted=True, indices=0)
    for whole in on_ranks(size, work):
        np.testing.assert_array_equal(whole, np.where(np.isinf(d), -1, d))


def test_bitmap_bfs_refuses_what_it_cannot_search():
    S = G.csr([0, 1], [1, 2], [1.0, 1.0], 3)
    A = gbla.Matrix.from_scipy(S, device="cpu")
    with pytest.raises(gbla.DomainMismatch, match="^A must be a gbla.distributed.DistMatrix"):
        D.bitmap_bfs(A, 0)
    M = D.DistMatrix.from_csr(D.SelfComm(), S.indptr, S.indices)
    with pytest.raises(gbla.InvalidIndex, match="^source must satisfy 0 <= source < 3; got 3"):
        D.bitmap_bfs(M, 3)
    with pytest.raises(gbla.InvalidValue, match="^depth_limit must be a non-negative"):
        D.bitmap_bfs(M, 0, depth_limit=-1)
    # without the transpose's rows: a push gives levels, a pull or parents cannot be had
    bare = D.DistMatrix(D.SelfComm(), [0, 3], M.indptr, M.indices, None, 3, nvals=2)
    assert D.bitmap_bfs(bare, 0, direction="push").tolist() == [0, 1, 2]
    for kwargs in ({"direction": "pull"}, {"direction": "push", "return_predecessors": True}):
        with pytest.raises(gbla.InvalidValue, match="^A must hold its transpose's rows"):
            D.bitmap_bfs(bare, 0, **kwargs)
    # the level loop on the device: CPU ranks have none
    with pytest.raises(
        gbla.InvalidValue,
        match="^device_loop must be None or False here .the ranks' arrays are NumPy's.; got True",
    ):
        D.bitmap_bfs(M, 0, device_loop=True)
    with pytest.raises(gbla.InvalidValue, match="^device_loop must be None, True or False; got 1"):
        D.bitmap_bfs(M, 0, device_loop=1)
    stats = {}
    assert D.bitmap_bfs(M, 0, stats=stats).tolist() == [0, 1, 2]
    assert stats["loop"] == "host"
    with pytest.raises(
        gbla.InvalidValue, match="^memory_budget must be None with method='distributed_bitmap'"
    ):
        gbla.bfs(A, 0, method="distributed_bitmap", memory_budget=10**6)
    with pytest.raises(
        gbla.UnsupportedMethod,
        match="'distributed_bitmap' does not run on a HostMatrix; those that do: algebraic",
    ):
        gbla.bfs(gbla.outofcore.HostMatrix(A, 10**6), 0, method="distributed_bitmap")


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")
def test_the_bitmap_kernels_compile_for_every_instantiation_the_launcher_uses(tmp_path):
    # templates are only parsed until instantiated: take the address of each one
    from gbla.direction import DEFAULT_POLICY
    from gbla.kernels import _distributed, _launch

    unit = tmp_path / "distributed_all.cu"
    unit.write_text(
        DEFAULT_POLICY.cuda_source()  # the level loop's choice, as the launcher compiles it
        + _launch.source("distributed.cu")
        + "\nvoid* gbla_all[] = {"
        + ", ".join(f"(void*)&{name}" for name in _distributed.NAME_EXPRESSIONS)
        + "};\n"
    )
    result = subprocess.run(
        [
            shutil.which("nvcc"),
            "-std=c++17",
            "-arch=sm_90",
            "-c",
            str(unit),
            "-o",
            str(tmp_path / "distributed_all.o"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-4000:]


# ============================================================================== GPU ranks
@SKIP_NO_GPU
@pytest.mark.gpu
@pytest.mark.parametrize("direction", ["auto", "pull", FLIPPING], ids=str)
@pytest.mark.parametrize("size", [1, 2, 3])
def test_bitmap_bfs_on_gpu_ranks_whose_bounds_split_words(size, direction):
    # distributed.cu's kernels: a pull sets a warp's bits with at most two atomics a bitmap,
    # its 32 vertices spanning two words where a rank's first vertex is not a word's
    import cupy

    for name in sorted(BITMAP_GRAPHS):
        S = BITMAP_GRAPHS[name]
        bounds = odd_bounds(S.shape[0], size)
        sources = [int(np.argmax(np.diff(S.indptr))), bounds[-2]]

        def work(comm, S=S, bounds=bounds, sources=sources):
            A = cut(comm, S, bounds)
            return [
                (
                    D.bitmap_bfs(A, s, return_predecessors=True, direction=direction),
                    (A.lo, A.hi),
                    D.bitmap_bfs(A, s, direction=direction, gather=False),
                )
                for s in sources
            ]

        for per_rank in D.run_threads(size, work, xp=cupy):
            for s, ((levels, parents), (lo, hi), local) in zip(sources, per_rank):
                assert isinstance(levels, cupy.ndarray)
                check_bitmap_search(S, s, host(levels), host(parents))
                np.testing.assert_array_equal(host(local), host(levels)[lo:hi])


@SKIP_NO_GPU
@pytest.mark.gpu
@pytest.mark.parametrize("direction", ["auto", "push", "pull", FLIPPING], ids=str)
@pytest.mark.parametrize("parents", [False, True])
def test_bitmap_bfs_level_loop_on_the_device_gives_what_the_hosts_gives(direction, parents):
    # one GPU rank (SelfComm): the levels in one CUDA graph, its IF nodes choosing push or pull;
    # a path of 150 levels outruns the log a launch keeps (64 levels), so the host relaunches
    import cupy

    path = G.csr(np.arange(149), np.arange(1, 150), np.ones(149), 150)
    graphs = dict(BITMAP_GRAPHS, path=(path + path.T).tocsr())
    for name in sorted(graphs):
        S = graphs[name]
        A = D.DistMatrix.from_csr(D.SelfComm(cupy), S.indptr, S.indices)
        for source, limit in ((0, None), (int(np.argmax(np.diff(S.indptr))), None), (0, 3)):
            got, want = {}, {}
            kwargs = dict(return_predecessors=parents, direction=direction, depth_limit=limit)
            on_device = D.bitmap_bfs(A, source, device_loop=True, stats=got, **kwargs)
            on_host = D.bitmap_bfs(A, source, device_loop=False, stats=want, **kwargs)
            assert got.pop("loop") == "device" and want.pop("loop") == "host"
            seconds = got.pop("seconds")
            assert len(want.pop("seconds")) == len(seconds) and all(0 < t < 1 for t in seconds)
            assert got == want, name
            if not parents:
                on_device, on_host = (on_device, None), (on_host, None)
            np.testing.assert_array_equal(host(on_device[0]), host(on_host[0]))
            if parents:
                check_bitmap_search(S, source, on_device[0], on_device[1], limit)
            else:
                expected = _levels_of(S, source)
                if limit is not None:
                    expected = np.where(expected <= limit, expected, -1)
                np.testing.assert_array_equal(host(on_device[0]), expected)


@SKIP_NO_GPU
@pytest.mark.gpu
@pytest.mark.parametrize("direction", ["auto", "push", "pull", FLIPPING], ids=str)
def test_gbla_bfs_distributed_bitmap_on_a_gpu_matrix_runs_its_levels_on_the_device(direction):
    from .test_bfs_kernels import check_kernel

    for name in sorted(BITMAP_GRAPHS):
        S = BITMAP_GRAPHS[name]
        A = gbla.Matrix.from_scipy(S, device="gpu")
        for source in (0, int(np.argmax(np.diff(S.indptr)))):
            for limit in (None, 2):
                check_kernel(
                    "distributed_bitmap", A, S, source, depth_limit=limit, direction=direction
                )
        stats = {}
        gbla.bfs(A, 0, method="distributed_bitmap", direction=direction, stats=stats)
        assert stats["loop"] == "device"


@SKIP_NO_GPU
@pytest.mark.gpu
def test_bitmap_bfs_level_loop_keeps_its_graph_and_returns_its_memory():
    # the graph and its buffers are made once, kept with the matrix; each search's results are
    # copies, which the caller frees: 300 searches do not grow the pool
    import cupy

    S = gbla.generators.rmat(10, 8, seed=3, device="cpu").to_scipy()
    A = D.DistMatrix.from_csr(D.SelfComm(cupy), S.indptr, S.indices)
    first = D.bitmap_bfs(A, 1, return_predecessors=True)
    pool = cupy.get_default_memory_pool()
    used = pool.used_bytes()
    for source in range(300):
        levels, parents = D.bitmap_bfs(A, source % 50, return_predecessors=True)
    del levels, parents
    assert pool.used_bytes() == used
    np.testing.assert_array_equal(host(first[0]), _levels_of(S, 1))
    assert host(first[0]).tolist() == host(D.bitmap_bfs(A, 1)).tolist()  # the first untouched


@SKIP_NO_GPU
@pytest.mark.gpu
@pytest.mark.parametrize("size", [1, 2, 3])
def test_ranks_on_the_gpu_give_what_cpu_ranks_give(size):
    # the same exchanges with CuPy arrays (ranks as threads on one GPU): offsets, packed
    # messages, bitmaps, the replicated product under gbla.bfs / gbla.sssp / gbla.vxm
    import cupy

    S = gbla.generators.rmat(9, 8, seed=7, device="cpu", weights=(1, 20)).to_scipy()
    source = int(np.argmax(np.diff(S.indptr)))
    A = gbla.Matrix.from_scipy(S, device="cpu")
    n = S.shape[0]
    mask = gbla.Vector.from_dense(np.arange(n) % 3 == 0, device="gpu")
    u = gbla.Vector.from_coo(np.arange(0, n, 7), 1.0, n, device="gpu")

    def work(comm):
        M = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
        stats = {}
        own = (D.bfs(M, source, return_predecessors=True, stats=stats), D.sssp(M, source))
        levels, parents = gbla.bfs(M, source, return_predecessors=True)
        dist, pred = gbla.sssp(M, source, return_predecessors=True)
        w = gbla.vxm(u, M, "min_plus", mask=~mask.S).to_coo()
        return own, levels, parents, dist, pred, w, stats

    expected_dist = csgraph.dijkstra(S, indices=source)
    expected_w = gbla.vxm(
        gbla.Vector.from_coo(np.arange(0, n, 7), 1.0, n, device="cpu"),
        A,
        "min_plus",
        mask=~gbla.Vector.from_dense(np.arange(n) % 3 == 0, device="cpu").S,
    ).to_coo()
    for own, levels, parents, dist, pred, w, stats in D.run_threads(size, work, xp=cupy):
        (own_levels, own_parents), own_dist = own
        for lv, par in ((own_levels, own_parents), (levels, parents)):
            assert isinstance(lv, cupy.ndarray)
            np.testing.assert_array_equal(host(lv), host(gbla.bfs(A, source)))
            gbla.verify.bfs(A, source, host(lv), host(par))
        for d in (own_dist, dist):
            np.testing.assert_array_equal(host(d), expected_dist)
        gbla.verify.sssp(A, source, host(dist), host(pred))
        np.testing.assert_array_equal(host(w[0]), expected_w[0])
        np.testing.assert_array_equal(host(w[1]), expected_w[1])
        assert stats["bytes_total"] == sum(stats["bytes"]) and (size == 1) == (
            stats["bytes_total"] == 0
        )


@SKIP_NO_GPU
@pytest.mark.gpu
@pytest.mark.parametrize("size", [1, 2, 3])
@pytest.mark.parametrize("direction", ["push", "pull"])
@pytest.mark.parametrize(
    "semiring", ["plus_times", "min_plus", "max_second", "any_pair", "lor_land", "any_secondi"]
)
def test_the_products_on_gpu_ranks_run_one_gpus_kernels_and_equal_gbla_vxm(
    semiring, direction, size
):
    # on the GPU a rank's push and pull are gbla's spmv kernels over its rows (int64 row
    # pointers beside int32 ids; rows read at global ids, which any.secondi gives); vertices 7
    # and 1100 have an in-edge from every vertex, so the pull takes a block for each (rows
    # over HUGE_ROW), a warp for the rows over LONG_ROW and a thread for the rest
    import cupy

    from gbla.kernels._spmv import HUGE_ROW, LONG_ROW

    sr = gbla.semirings.get(semiring)
    dtype = sr.dtypes[-1] if np.dtype(np.float64) not in sr.dtypes else np.dtype(np.float64)
    rng = np.random.default_rng(len(semiring) + size)
    n, m = 1200, 40000
    hubs = np.repeat([7, 1100], n)
    src = np.concatenate([rng.integers(0, n, m), np.tile(np.arange(n), 2)])
    dst = np.concatenate([rng.integers(0, n, m), hubs])
    S = sp.coo_array((rng.integers(1, 9, len(src)), (src, dst)), shape=(n, n)).tocsr()
    S.sum_duplicates()
    S = S.astype(dtype)
    in_degrees = np.diff(S.tocsc().indptr)
    assert (in_degrees > HUGE_ROW).sum() == 2 and (in_degrees > LONG_ROW).sum() > 2
    S.indices = S.indices.astype(np.int32)  # as a DistMatrix's build keeps them
    idx = np.sort(rng.choice(n, 240, replace=False)).astype(np.int64)
    vals = rng.integers(0, 9, len(idx)).astype(dtype)
    allow = rng.random(n) < 0.7
    allow[[7, 1100]] = True
    u = gbla.Vector.from_coo(idx, vals, n, dtype=dtype, device="cpu")
    expected = gbla.vxm(
        u,
        gbla.Matrix.from_scipy(S, device="cpu"),
        sr,
        mask=gbla.Vector.from_dense(allow, device="cpu").V,
        direction="push",
    )
    e_idx, e_vals = expected.to_coo()

    def work(comm):
        Ad = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
        assert Ad.indptr.dtype == np.int64 and Ad.indices.dtype == np.int32
        mine = (idx >= Ad.lo) & (idx < Ad.hi)
        w = D.vxm(
            Ad.vector(idx[mine], vals[mine]),
            Ad,
            sr,
            allow=cupy.asarray(allow[Ad.lo : Ad.hi]),
            direction=direction,
        )
        return host(w.indices), host(w.values)

    got = D.run_threads(size, work, xp=cupy)
    np.testing.assert_array_equal(np.concatenate([i for i, _ in got]), e_idx)
    got_vals = np.concatenate([v for _, v in got])
    if sr.multiply.positional:  # any.secondi: some in-neighbour in u, not always the same
        S_csc = S.tocsc()
        for j, parent in zip(e_idx, got_vals):
            assert parent in idx and S_csc[parent, j] != 0
    elif not (sr.add.is_any and sr.multiply.name != "pair"):
        np.testing.assert_array_equal(got_vals, e_vals)


@SKIP_NO_GPU
@pytest.mark.gpu
@pytest.mark.parametrize("size", [1, 2, 3])
def test_a_build_from_pieces_on_gpu_ranks_gives_the_cpu_ranks_parts(size):
    # each rank generates its part of rmat on the GPU a piece at a time; the parts (rows,
    # transpose, weights combined) equal those CPU ranks build, and the searches run on them
    import cupy

    scale, piece = 10, 700

    def work_on(xp, device):
        def work(comm):
            generated = gbla.generators.rmat_edge_pieces(
                scale, 8, seed=5, part=comm.rank, parts=comm.size, piece_edges=piece, device=device
            )

            def pieces():
                for src, dst in generated():
                    yield src, dst, ((src * 7 + dst * 3) % 11 + 1).astype(np.float64)

            M = D.DistMatrix.from_edge_pieces(
                comm, pieces, n=2**scale, dup_op=gbla.semirings.binary.max
            )
            return (
                [host(a) for a in _parts(M)[2:]],
                M.nvals,
                host(D.bitmap_bfs(M, 3)),
                host(D.sssp(M, 3)),
            )

        return D.run_threads(size, work, xp=xp)

    for gpu, cpu in zip(work_on(cupy, "gpu"), work_on(np, "cpu")):
        for a, b in zip(gpu[0], cpu[0]):
            np.testing.assert_array_equal(a, b)
        assert gpu[1] == cpu[1]
        np.testing.assert_array_equal(gpu[2], cpu[2])
        np.testing.assert_array_equal(gpu[3], cpu[3])


@SKIP_NO_GPU
@pytest.mark.gpu
@pytest.mark.parametrize("hub_edges", [None, 2], ids=["warp_rows", "grid_rows"])
@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_bitmap_bfs_ranks_on_the_gpu_give_what_cpu_ranks_give(size, hub_edges, monkeypatch):
    # the kernels of distributed.cu (both id widths) under the same driver as the NumPy steps:
    # levels, valid parents, and the same directions, counts and bytes level by level; with
    # HUB_EDGES 2, a push gives the whole grid every row past max(2, the hub list's bound: about
    # the average degree on these graphs), the hubs and many more
    import cupy

    from gbla.kernels import _distributed

    if hub_edges is not None:
        monkeypatch.setattr(_distributed, "HUB_EDGES", hub_edges)
    runs = [
        (name, S, int(np.argmax(np.diff(S.indptr))), dtype)
        for name, S in sorted(BITMAP_GRAPHS.items())
        for dtype in (np.int32, np.int64)
    ]

    def work(comm):
        out = []
        for _, S, source, dtype in runs:
            A = cut(comm, S, odd_bounds(S.shape[0], size), dtype)
            for direction in ("auto", "push", "pull", FLIPPING):
                stats = {}
                found = D.bitmap_bfs(
                    A, source, return_predecessors=True, direction=direction, stats=stats
                )
                out.append((found, D.bitmap_bfs(A, source, direction=direction), stats))
        return out

    cpu = on_ranks(size, work)
    gpu = D.run_threads(size, work, xp=cupy)
    directions = ("auto", "push", "pull", FLIPPING)
    for on_cpu, on_gpu in zip(cpu, gpu):
        cases = [(run, d) for run in runs for d in directions]
        for ((name, S, source, _), d), cpu_run, gpu_run in zip(cases, on_cpu, on_gpu):
            (levels, parents), alone, stats = gpu_run
            assert isinstance(levels, cupy.ndarray) and isinstance(parents, cupy.ndarray)
            check_bitmap_search(S, source, levels, parents)
            np.testing.assert_array_equal(host(alone), host(levels))
            assert _shared(stats) == _shared(cpu_run[2]), (name, d)
    for _, S, source, _ in runs[::2]:  # gbla.bfs on a GPU Matrix: one rank, its arrays
        A = gbla.Matrix.from_scipy(S, device="gpu")
        levels, parents = gbla.bfs(A, source, method="distributed_bitmap", return_predecessors=True)
        assert levels.dtype == parents.dtype == np.int32
        check_bitmap_search(S, source, levels, parents)


# ============================================================================== processes
RANK_SCRIPT = """
import sys
import numpy as np
import gbla
from gbla import distributed
from gbla.distributed import launch

comm = launch.init()
A = gbla.generators.rmat(8, seed=4, device="cpu", weights=(1, 9))
M = distributed.DistMatrix.of(comm, A)
levels, parents = distributed.bfs(M, 5, return_predecessors=True)
dist = distributed.sssp(M, 5)
np.savez(f"{sys.argv[1]}/rank{comm.rank}.npz", levels=levels, parents=parents, dist=dist,
         span=[M.lo, M.hi])
comm.close()
"""


@pytest.mark.parametrize("ranks", [1, 3])
def test_the_launcher_runs_a_process_per_rank_over_sockets(tmp_path, ranks):
    from gbla.distributed import launch

    script = tmp_path / "rank.py"
    script.write_text(RANK_SCRIPT)
    status = launch.main(["-n", str(ranks), "--backend", "socket", str(script), str(tmp_path)])
    assert status == 0
    A = gbla.generators.rmat(8, seed=4, device="cpu", weights=(1, 9))
    S = A.to_scipy().astype(np.float64)
    d = csgraph.shortest_path(S, unweighted=True, indices=5)
    spans = []
    for r in range(ranks):
        got = np.load(tmp_path / f"rank{r}.npz")
        np.testing.assert_array_equal(got["levels"], np.where(np.isinf(d), -1, d))
        gbla.verify.bfs(A, 5, got["levels"], got["parents"])
        np.testing.assert_array_equal(got["dist"], csgraph.dijkstra(S, indices=5))
        spans.append(tuple(got["span"]))
    assert spans[0][0] == 0 and spans[-1][1] == A.nrows  # the ranks cover every vertex


def test_the_distributed_benchmark_runs_under_the_launcher(tmp_path):
    # what a multi-GPU machine runs (tools/device_run.sh distributed), here over sockets; it
    # checks every search against one rank's on a graph this small, and fails if one differs
    import json
    from pathlib import Path

    from gbla.distributed import launch

    bench = Path(__file__).parents[1] / "benchmarks" / "bench_distributed.py"
    out = tmp_path / "bench.json"
    status = launch.main(
        [
            "-n",
            "2",
            "--backend",
            "socket",
            str(bench),
            "--scale",
            "8",
            "--sources",
            "2",
            "--json",
            str(out),
        ]
    )
    assert status == 0
    doc = json.loads(out.read_text())
    assert doc["ranks"] == 2 and doc["device"] == "cpu" and doc["scale"] == 8
    assert sorted(r["algo"] for r in doc["rows"]) == [
        "bfs",
        "bfs",
        "bfs_bitmap",
        "bfs_bitmap",
        "sssp",
        "sssp",
        "sssp_delta",
        "sssp_delta",
        "sssp_push",
        "sssp_push",
    ]
    assert all(r["gteps"] > 0 and r["levels"] >= 1 and r["bytes_total"] > 0 for r in doc["rows"])


def test_the_volume_benchmark_counts_every_search_on_thread_ranks(tmp_path, capsys):
    # benchmarks/bench_distributed_volume.py (BENCHMARKS.md's distributed_volume_cpu): BFS,
    # Bellman-Ford (the algebra's and push_sssp) and delta-stepping, what they send over 1 and 2
    # ranks
    import importlib.util
    import json
    from pathlib import Path

    path = Path(__file__).parents[1] / "benchmarks" / "bench_distributed_volume.py"
    spec = importlib.util.spec_from_file_location("bench_distributed_volume", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "volume.json"
    bench.main(["--scales", "8", "--ranks", "1", "2", "--sources", "1", "--json", str(out)])
    rows = json.loads(out.read_text())["rows"]
    assert sorted((r["algo"], r["ranks"]) for r in rows) == [
        (a, k) for a in ("bfs", "sssp", "sssp_delta", "sssp_push") for k in (1, 2)
    ]
    for r in rows:
        assert (r["bytes_total"] > 0) == (r["ranks"] == 2) and r["levels"] >= 1
        if r["algo"] == "sssp_delta":  # an all-gather and an all-to-all a round, one more
            assert r["collectives"] == 2 * r["levels"] + 1  # all-gather that ends it
        if r["algo"] == "sssp_push":  # a sum a round, and an all-to-all where the round
            # before offered another rank anything (one rank never does; nor the first round)
            most = r["levels"] if r["ranks"] == 1 else 2 * r["levels"] - 1
            assert r["levels"] + (r["ranks"] > 1) <= r["collectives"] <= most
    assert "rmat(8) sssp_delta 2 ranks" in capsys.readouterr().out


def test_the_distributed_benchmark_reports_rows_against_the_best_single_device_method(tmp_path):
    # issue 37: one rank times the single-device methods on the whole graph (--single), and a
    # run over two ranks reports each row against the fastest of them (--baseline)
    import json
    from pathlib import Path

    from gbla.distributed import launch

    bench = str(Path(__file__).parents[1] / "benchmarks" / "bench_distributed.py")
    common = ["--backend", "socket", bench, "--scale", "7", "--sources", "2"]
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    singles = ["--single", "bfs:algebraic", "sssp:auto", "sssp:delta_stepping"]
    assert launch.main(["-n", "1", *common, *singles, "--json", str(one)]) == 0
    rows = json.loads(one.read_text())["rows"]
    for name in ("single:bfs:algebraic", "single:sssp:auto", "single:sssp:delta_stepping"):
        mine = [r for r in rows if r["algo"] == name]
        assert len(mine) == 2 and all(r["gteps"] > 0 and r["levels"] >= 1 for r in mine)
    assert launch.main(["-n", "2", *common, "--baseline", str(one), "--json", str(two)]) == 0
    doc = json.loads(two.read_text())
    # the fastest of the one-rank run's rows, its own (one rank: one device too) and the
    # single-device methods'
    for family in ("bfs", "sssp"):
        medians = {
            name: np.median([r["seconds"] for r in rows if r["algo"] == name])
            for name in {r["algo"] for r in rows}
            if (name.split(":")[1] if name.startswith("single:") else name).startswith(family)
        }
        fastest = min(medians, key=medians.get)
        named = fastest.split(":")[2] if fastest.startswith("single:") else f"{fastest} on one rank"
        assert doc["baseline"][family]["method"] == named
        assert doc["baseline"][family]["seconds"] == pytest.approx(medians[fastest])
    for r in doc["rows"]:
        family = "sssp" if r["algo"].startswith("sssp") else "bfs"
        assert r["vs_best_single"] == pytest.approx(
            doc["baseline"][family]["seconds"] / r["seconds"]
        )
    # a --single run needs one rank, and its methods must exist; a baseline is a one-rank run
    assert launch.main(["-n", "2", *common, "--single", "bfs:algebraic"]) != 0
    assert launch.main(["-n", "2", *common, "--baseline", str(two)]) != 0
    assert launch.main(["-n", "1", *common, "--single", "bfs:no_such_method"]) != 0


def test_a_failing_rank_makes_the_launcher_fail(tmp_path):
    from gbla.distributed import launch

    script = tmp_path / "fail.py"
    script.write_text("import os, sys\nsys.exit(3 if os.environ['GBLA_RANK'] == '1' else 0)\n")
    assert launch.main(["-n", "2", "--backend", "socket", str(script)]) == 3


def test_a_rank_dying_before_the_others_meet_it_ends_the_launch(tmp_path):
    # rank 0 waits in the rendezvous for a rank 1 that never comes: the launcher ends it
    import threading

    from gbla.distributed import launch

    script = tmp_path / "die.py"
    script.write_text(
        "import os, sys\nif os.environ['GBLA_RANK'] == '1':\n    sys.exit(4)\n"
        "from gbla.distributed import launch\nlaunch.init(timeout=600)\n"
    )
    got = []
    t = threading.Thread(
        target=lambda: got.append(launch.main(["-n", "2", "--backend", "socket", str(script)])),
        daemon=True,
    )
    t.start()
    t.join(120)
    assert got == [4]


# ============================================================================== Dask
def _dask_rank(comm):
    A = gbla.generators.rmat(8, seed=4, device="cpu", weights=(1, 9))
    M = D.DistMatrix.of(comm, A)
    return comm.rank, D.bfs(M, 5), D.sssp(M, 5)


def test_the_ranks_run_as_tasks_of_a_dask_cluster():
    distributed = pytest.importorskip("distributed")  # the dask extra
    import cloudpickle

    from gbla.distributed.on_dask import run_dask

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers need not import tests
    with (
        distributed.LocalCluster(
            n_workers=3, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        results = run_dask(client, _dask_rank, backend="socket")
        with pytest.raises(gbla.InvalidValue, match="^size must be between 1 and"):
            run_dask(client, _dask_rank, size=4, backend="socket")
        # the ranks met through the scheduler (no shared folder), and their rendezvous went
        # with the run: no variable of it is left there
        left = client.run_on_scheduler(
            lambda dask_scheduler: sorted(dask_scheduler.extensions["variables"].variables)
        )
        assert not [name for name in left if name.startswith("gbla-")]
    A = gbla.generators.rmat(8, seed=4, device="cpu", weights=(1, 9))
    S = A.to_scipy().astype(np.float64)
    d = csgraph.shortest_path(S, unweighted=True, indices=5)
    assert [r[0] for r in results] == [0, 1, 2]
    for _, levels, dist in results:
        np.testing.assert_array_equal(levels, np.where(np.isinf(d), -1, d))
        np.testing.assert_array_equal(dist, csgraph.dijkstra(S, indices=5))


# ============================================================================== several GPUs
# A process (or Dask worker) per GPU, NCCL between them: each search gives what one GPU gives.
NCCL_SCRIPT = """
import sys
import numpy as np
import cupy
import gbla
from gbla import distributed as D
from gbla.distributed import launch
sys.path.insert(0, sys.argv[2])
from tests.test_distributed import multi_gpu_graphs, searches_on_ranks

comm = launch.init()
out = {}
for name, S, source in multi_gpu_graphs():
    for key, value in searches_on_ranks(comm, S, source).items():
        out[f"{name}.{key}"] = value
np.savez(f"{sys.argv[1]}/rank{comm.rank}.npz", **out)
"""


def multi_gpu_graphs():
    """(name, SciPy CSR, source): an undirected weighted R-MAT graph, and a directed graph with
    isolated vertices and weights that fall along longer paths."""
    S = gbla.generators.rmat(10, 8, seed=3, device="cpu", weights=(1, 20)).to_scipy()
    rng = np.random.default_rng(5)
    n = 700
    src, dst = rng.integers(0, 600, 3000), rng.integers(0, 600, 3000)  # 600..699 isolated
    keep = src != dst
    T = sp.csr_matrix(
        (rng.integers(1, 9, keep.sum()).astype(np.float64), (src[keep], dst[keep])), shape=(n, n)
    )
    T.sum_duplicates()
    return [("rmat", S, int(np.argmax(np.diff(S.indptr)))), ("directed", T, 7)]


def searches_on_ranks(comm, S, source):
    """Every search of a DistMatrix on this rank's GPU, as host arrays, with the GPU it ran on."""
    import cupy

    M = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
    levels, parents = D.bfs(M, source, return_predecessors=True)
    algebra_levels, algebra_parents = gbla.bfs(M, source, return_predecessors=True)
    bitmap_stats, host_stats = {}, {}
    bitmap_levels, bitmap_parents = D.bitmap_bfs(
        M, source, return_predecessors=True, stats=bitmap_stats
    )
    # the level loop on the device (NCCL in its graph), against the host's loop
    host_levels = D.bitmap_bfs(M, source, device_loop=False, stats=host_stats)
    assert bitmap_stats.pop("loop") == "device" and host_stats.pop("loop") == "host"
    host_stats.pop("seconds"), bitmap_stats.pop("seconds")
    assert bitmap_stats["directions"] == host_stats["directions"]
    assert bitmap_stats["found"] == host_stats["found"]
    assert not (host(host_levels) != host(bitmap_levels)).any()
    pulled = D.bitmap_bfs(M, source, direction="pull", depth_limit=2, device_loop=True)
    dist, pred = gbla.sssp(M, source, return_predecessors=True)
    delta_dist, delta_pred = D.sssp(M, source, method="delta_stepping", return_predecessors=True)
    push_stats, push_host_stats, small_stats, window_stats = {}, {}, {}, {}
    push_dist, push_pred = D.push_sssp(M, source, return_predecessors=True, stats=push_stats)
    push_host = D.push_sssp(M, source, device_loop=False, stats=push_host_stats)
    assert push_stats["loop"] == "device" and push_host_stats["loop"] == "host"
    assert push_stats["device_rounds"] == len(push_stats["found"])  # each round's offers fit
    assert push_host_stats["device_rounds"] == 0
    # messages of 2 offers: the rounds with more run on the host, which hands back the others
    from gbla.distributed import relax

    small = D.DistMatrix.from_csr(comm, S.indptr, S.indices, S.data)
    saved, relax.LOOP_OFFERS = relax.LOOP_OFFERS, 2
    try:
        push_small = D.push_sssp(small, source, stats=small_stats, device_loop=True)
    finally:
        relax.LOOP_OFFERS = saved
    assert 0 < small_stats["device_rounds"] < len(small_stats["found"])
    # windows of 1 (rounds that only move it on), in messages of 2 offers too
    push_window = D.push_sssp(M, source, delta=1.0, device_loop=True, stats=window_stats)
    assert 0 in window_stats["found"][:-1]
    saved, relax.LOOP_OFFERS = relax.LOOP_OFFERS, 2
    try:
        push_small_window = D.push_sssp(small, source, delta=1.0, device_loop=True)
    finally:
        relax.LOOP_OFFERS = saved
    found = {
        "levels": levels,
        "parents": parents,
        "algebra_levels": algebra_levels,
        "algebra_parents": algebra_parents,
        "bitmap_levels": bitmap_levels,
        "bitmap_parents": bitmap_parents,
        "bitmap_pulled": pulled,
        "dist": D.sssp(M, source),
        "algebra_dist": dist,
        "algebra_pred": pred,
        "delta_dist": delta_dist,
        "delta_pred": delta_pred,
        "push_dist": push_dist,
        "push_pred": push_pred,
        "push_host_dist": push_host,
        "push_small_dist": push_small,
        "push_window_dist": push_window,
        "push_small_window_dist": push_small_window,
    }
    here = cupy.cuda.Device().id
    assert all(
        isinstance(x, cupy.ndarray) and x.device.id == here for x in found.values()
    )  # on the rank's own GPU
    out = {k: cupy.asnumpy(x) for k, x in found.items()}
    out["gpu"] = np.array([here, M.indptr.device.id])
    out["bus"] = np.array(cupy.cuda.Device().pci_bus_id)  # the physical GPU, whatever it is
    out["span"] = np.array([M.lo, M.hi])
    return out


def check_against_one_gpu(results, devices=(0, 1)):
    """Each rank's results (dicts as searches_on_ranks gives), each on its own physical GPU
    (device number ``devices[rank]`` as its process sees them), against one GPU's gbla.bfs and
    gbla.sssp and SciPy's."""
    for name, S, source in multi_gpu_graphs():
        A = gbla.Matrix.from_scipy(S, device="gpu")
        one_levels = host(gbla.bfs(A, source))
        one_dist = host(gbla.sssp(A, source))
        np.testing.assert_array_equal(one_dist, csgraph.dijkstra(S, indices=source))
        A_host = gbla.Matrix.from_scipy(S, device="cpu")
        for rank, got in enumerate(results):
            assert got[f"{name}.gpu"].tolist() == [devices[rank]] * 2
            for lv, par in (
                ("levels", "parents"),
                ("algebra_levels", "algebra_parents"),
                ("bitmap_levels", "bitmap_parents"),
            ):
                np.testing.assert_array_equal(got[f"{name}.{lv}"], one_levels)
                gbla.verify.bfs(A_host, source, got[f"{name}.{lv}"], got[f"{name}.{par}"])
            np.testing.assert_array_equal(
                got[f"{name}.bitmap_pulled"], np.where(one_levels <= 2, one_levels, -1)
            )
            np.testing.assert_array_equal(got[f"{name}.dist"], one_dist)
            np.testing.assert_array_equal(got[f"{name}.algebra_dist"], one_dist)
            np.testing.assert_array_equal(got[f"{name}.delta_dist"], one_dist)
            for how in (
                "push",
                "push_host",
                "push_small",
                "push_window",
                "push_small_window",
            ):
                np.testing.assert_array_equal(got[f"{name}.{how}_dist"], one_dist)
            for how in ("algebra", "delta", "push"):
                gbla.verify.sssp(
                    A_host, source, got[f"{name}.{how}_dist"], got[f"{name}.{how}_pred"]
                )
        assert len({str(r[f"{name}.bus"]) for r in results}) == len(results)
        spans = [tuple(r[f"{name}.span"]) for r in results]
        assert spans[0][0] == 0 and spans[-1][1] == S.shape[0]
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


@pytest.mark.gpu
@pytest.mark.parametrize(
    "ranks",
    [
        # one rank's communicator exchanges nothing (no NCCL call)
        pytest.param(1, marks=SKIP_NO_GPU),
        pytest.param(2, marks=SKIP_ONE_GPU),
        pytest.param(4, marks=SKIP_FEWER_THAN_FOUR_GPUS),
    ],
)
def test_the_launcher_runs_a_process_per_gpu_over_nccl(tmp_path, ranks):
    from pathlib import Path

    from gbla.distributed import launch

    script = tmp_path / "rank.py"
    script.write_text(NCCL_SCRIPT)
    root = Path(__file__).resolve().parents[1]
    args = ["-n", str(ranks), "--backend", "nccl", str(script), str(tmp_path), str(root)]
    assert launch.main(args) == 0
    check_against_one_gpu(
        [dict(np.load(tmp_path / f"rank{r}.npz")) for r in range(ranks)], devices=range(ranks)
    )


def _dask_gpu_rank(comm):
    out = {}
    for name, S, source in multi_gpu_graphs():
        for key, value in searches_on_ranks(comm, S, source).items():
            out[f"{name}.{key}"] = value
    return out


@SKIP_ONE_GPU
@pytest.mark.gpu
def test_the_ranks_run_on_a_gpu_each_as_tasks_of_a_dask_cluster():
    distributed = pytest.importorskip("distributed")  # the dask extra
    import cloudpickle

    from gbla.distributed.on_dask import run_dask

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        results = run_dask(client, _dask_gpu_rank, backend="nccl")
    check_against_one_gpu(results)


@SKIP_ONE_GPU
@pytest.mark.gpu
def test_the_ranks_run_on_a_gpu_each_in_a_dask_cuda_cluster():
    # dask-cuda pins each worker's GPU as its device 0 (CUDA_VISIBLE_DEVICES rotated): every
    # rank must use its own worker's GPU, not GPU `rank` of the list that worker sees
    dask_cuda = pytest.importorskip("dask_cuda")
    distributed = pytest.importorskip("distributed")
    import cloudpickle

    from gbla.distributed.on_dask import run_dask

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with (
        dask_cuda.LocalCUDACluster(CUDA_VISIBLE_DEVICES="0,1", dashboard_address=":0") as cluster,
        distributed.Client(cluster) as client,
    ):
        results = run_dask(client, _dask_gpu_rank, backend="nccl")
    check_against_one_gpu(results, devices=(0, 0))


@pytest.mark.parametrize(
    "visible, devices",
    [
        ([None, None], [0, 1]),  # a plain cluster: every worker sees every GPU
        (["0,1", "0,1"], [0, 1]),  # the same list everywhere
        (["0,1", "1,0"], [0, 0]),  # dask-cuda: each worker's own GPU first
        (["2, 3", "3,2"], [0, 0]),
        (["1", None], [0, 1]),  # some pinned, some not: by rank
        ([None], [0]),
    ],
)
def test_each_dask_worker_uses_its_own_gpu(visible, devices):
    from gbla.distributed.on_dask import worker_gpus

    assert worker_gpus(visible) == devices


@pytest.mark.parametrize(
    "xp_name", ["numpy", pytest.param("cupy", marks=[SKIP_NO_GPU, pytest.mark.gpu])]
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_, np.int16])
def test_a_packed_message_of_offsets_and_values_reads_back_in_place(xp_name, dtype):
    # one byte message for one collective: 4 bytes an offset and the values' own, at most 3
    # more where the values are narrower than the offsets; both read back as views of it,
    # each aligned to its own size (a GPU faults on a misaligned double)
    from gbla.distributed.matrix import _pack, _unpack

    xp = np if xp_name == "numpy" else pytest.importorskip("cupy")
    width = np.dtype(dtype).itemsize
    for count in (0, 1, 3, 8, 13):
        offsets = xp.arange(count, dtype=np.int32) * 7 - 2
        values = (xp.arange(count) % 5).astype(dtype)
        message = _pack(offsets, values, xp)
        assert message.dtype == np.uint8
        assert 0 <= len(message) - (4 + width) * count <= 3
        got_offsets, got_values = _unpack(message, dtype)
        assert got_offsets.dtype == np.int32 and got_values.dtype == dtype
        np.testing.assert_array_equal(host(got_offsets), host(offsets))
        np.testing.assert_array_equal(host(got_values), host(values))
        if count:
            base = int(message.data.ptr) if xp_name == "cupy" else message.ctypes.data
            at = (
                int(got_offsets.data.ptr) if xp_name == "cupy" else got_offsets.ctypes.data
            ) - base
            assert at % 4 == 0 and at >= width * count  # the offsets after the values
            message[:] = 0  # views, not copies
            assert not host(got_values).any() and not host(got_offsets).any()
