"""Several sources in one search: gbla.bfs(A, [s0, s1, ...]) runs a bit-parallel search (a
source a bit of an int64 word, 64 sources a batch) whose levels must equal one gbla.bfs per
source and SciPy's, and whose parents must be valid BFS trees; the pieces it is built from (the
bitwise ops, monoids and semirings, gbla.assign_bits); and gbla.mxm's blocks of rows, which keep
the products a multi-source Bellman-Ford holds bounded."""

import contextlib

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.sparse import csgraph

import gbla
from gbla import _matrix_ops, semirings

from . import graphs as G
from .conftest import SKIP_NO_GPU, host

FLIPPING = gbla.DirectionPolicy(alpha=1e9, beta=1.0)  # push and pull by turns, as test_bfs's


def expected_levels(S, sources, limit=None):
    d = csgraph.shortest_path(S, unweighted=True, indices=sources)
    levels = np.where(np.isinf(d), -1, d).astype(np.int64).reshape(len(sources), S.shape[0])
    if limit is not None:
        levels[levels > limit] = -1
    return levels


def check_parents(S, sources, levels, parents):
    """Each reached v but the source has a parent one level nearer along an edge (Graph500's
    tree-edge rule, which holds under a depth limit too); the source is its own parent; -1
    exactly where unreached."""
    C = sp.coo_array(S)  # explicit zeros are edges too
    edge = np.zeros(S.shape, bool)
    edge[C.row, C.col] = True
    for row, s in enumerate(sources):
        lv, par = levels[row], parents[row]
        np.testing.assert_array_equal(par < 0, lv < 0)
        assert par[s] == s
        v = np.flatnonzero(lv > 0)
        assert (lv[par[v]] == lv[v] - 1).all()
        assert edge[par[v], v].all(), "a parent link that is not an edge"


def sparse_graph(n, m, seed, directed=True):
    """n vertices, m random edges (the last vertex isolated), directed or both ways."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n - 1, m), rng.integers(0, n - 1, m)
    if not directed:
        src, dst = np.r_[src, dst], np.r_[dst, src]
    return G.csr(src, dst, np.ones(len(src)), n)


# ============================================================================== levels
@pytest.mark.parametrize("directed", [True, False], ids=["directed", "undirected"])
@pytest.mark.parametrize("k", [1, 63, 64, 65, 130])
def test_levels_equal_one_search_per_source_and_scipys(device, k, directed):
    # 150 vertices, 200 edges: components of every size, unreached vertices, the last vertex
    # isolated and a source; sources repeat (130 of 150 vertices drawn; 5 and 0 the same)
    S = sparse_graph(150, 200, seed=k, directed=directed)
    sources = np.random.default_rng(k).integers(0, 150, k)
    sources[-1] = 149
    if k > 5:
        sources[5] = sources[0]
    A = gbla.Matrix.from_scipy(S, device=device)
    stats = {}
    levels, parents = gbla.bfs(A, list(sources), return_predecessors=True, stats=stats)
    assert levels.shape == parents.shape == (k, 150)
    assert host(levels).dtype == host(parents).dtype == np.int32
    expected = expected_levels(S, sources)
    np.testing.assert_array_equal(host(levels), expected)
    for row, s in enumerate(sources):
        np.testing.assert_array_equal(host(levels[row]), host(gbla.bfs(A, int(s))))
        gbla.verify.bfs(A, int(s), levels[row], parents[row])
    assert stats["levels"] == expected.max() + 1
    assert stats["products"] >= expected.max()  # a product a level, each batch


@G.FIXTURE_OK
@given(g=G.graphs(max_n=24), data=st.data())
def test_random_graphs_give_scipys_levels_for_any_sources_and_direction(device, g, data):
    sources = data.draw(st.lists(st.integers(0, g.n - 1), min_size=1, max_size=70), label="sources")
    limit = data.draw(st.none() | st.integers(0, 4), label="depth_limit")
    direction = data.draw(st.sampled_from(["auto", "push", "pull", FLIPPING]), label="direction")
    A = g.matrix(device)
    levels, parents = gbla.bfs(
        A, sources, return_predecessors=True, depth_limit=limit, direction=direction
    )
    expected = expected_levels(g.scipy(), sources, limit)
    np.testing.assert_array_equal(host(levels), expected)
    check_parents(g.scipy(), sources, host(levels), host(parents))


@pytest.mark.parametrize("limit", [0, 1, 3])
def test_depth_limit_cuts_every_source_at_that_level(device, limit):
    S = sparse_graph(120, 240, seed=7)
    sources = list(range(0, 120, 2)) + [5, 5, 119]  # 63 sources, two of them the same
    A = gbla.Matrix.from_scipy(S, device=device)
    levels, parents = gbla.bfs(A, sources, return_predecessors=True, depth_limit=limit)
    np.testing.assert_array_equal(host(levels), expected_levels(S, sources, limit))
    check_parents(S, sources, host(levels), host(parents))
    if limit == 0:
        np.testing.assert_array_equal(
            host(parents), np.where(host(levels) == 0, np.array(sources)[:, None], -1)
        )


def test_a_graph_without_edges_reaches_only_the_sources(device):
    # 5 isolated vertices, sources 4, 0, 4: each row is its source at level 0, nothing else
    A = gbla.Matrix.from_edges([], [], n=5, device=device)
    levels, parents = gbla.bfs(A, [4, 0, 4], return_predecessors=True)
    expected = np.full((3, 5), -1)
    expected[[0, 1, 2], [4, 0, 4]] = 0
    np.testing.assert_array_equal(host(levels), expected)
    np.testing.assert_array_equal(host(parents), np.where(expected == 0, [[4], [0], [4]], -1))


def test_no_sources_give_no_rows(device):
    A = gbla.Matrix.from_edges([0], [1], n=3, device=device)
    levels, parents = gbla.bfs(A, [], return_predecessors=True)
    assert levels.shape == parents.shape == (0, 3)
    empty = gbla.Matrix.from_edges([], [], n=0, device=device)
    assert gbla.bfs(empty, np.zeros(0, np.int64)).shape == (0, 0)


def test_batches_of_other_sizes_reuse_the_matrix_and_stay_exact(device):
    # on the GPU the recordings kept with the matrix serve every batch of a width (1, 2, 4,
    # ... 64 sources): a batch of 3 after one of 4 must not see the other's sources
    S = sparse_graph(90, 200, seed=3, directed=False)
    A = gbla.Matrix.from_scipy(S, device=device)
    rng = np.random.default_rng(0)
    for k in (4, 3, 4, 1, 64, 33, 3):
        sources = rng.integers(0, 90, k).tolist()
        np.testing.assert_array_equal(host(gbla.bfs(A, sources)), expected_levels(S, sources))


def test_a_path_deeper_than_a_word_has_bits():
    # 0 -> 1 -> ... -> 99: levels up to 99 from source 0, and 1 from 98 (levels are not bits)
    A = gbla.Matrix.from_edges(np.arange(99), np.arange(1, 100), n=100, device="cpu")
    levels = gbla.bfs(A, [0, 98])
    np.testing.assert_array_equal(levels[0], np.arange(100))
    np.testing.assert_array_equal(levels[1], [-1] * 98 + [0, 1])


# ============================================================================== assign_bits
def reference_bits(out_values, out_present, words, present, width, value, word_bits):
    """out(b, i) = value for each bit b < width of each present words(i), on a dense copy."""
    values, pres = out_values.copy(), out_present.copy()
    for i in np.flatnonzero(present):
        w = int(words[i]) % (1 << word_bits)  # two's complement: the sign bit is bit 31 or 63
        for b in range(width):
            if w >> b & 1:
                values[b * len(words) + i], pres[b * len(words) + i] = value, True
    return values, pres


@pytest.mark.parametrize("dtype, widths", [(np.int32, (1, 5, 32)), (np.int64, (1, 7, 64))])
def test_assign_bits_writes_the_value_at_every_set_bit_and_keeps_the_rest(device, dtype, widths):
    rng = np.random.default_rng(1)
    word_bits = np.dtype(dtype).itemsize * 8
    n = 9
    words = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, n, dtype=dtype, endpoint=True)
    words[:3] = [-1, np.iinfo(dtype).min, 0]  # every bit; the sign bit alone; none
    present = rng.random(n) < 0.7
    present[:3] = True
    bits = gbla.Vector.from_coo(np.flatnonzero(present), words[present], n, device=device)
    for width in widths:
        old_present = rng.random(n * width) < 0.3
        old = rng.integers(-5, 5, n * width).astype(np.int32)
        out = gbla.Vector.from_coo(
            np.flatnonzero(old_present), old[old_present], n * width, device=device
        )
        assert gbla.assign_bits(out, 42, bits) is out
        values, pres = reference_bits(old, old_present, words, present, width, 42, word_bits)
        np.testing.assert_array_equal(
            host(out.to_dense(-99)), np.where(pres, values, -99), err_msg=f"width {width}"
        )


@pytest.mark.parametrize(
    "mode", ["eager", pytest.param("device", marks=[SKIP_NO_GPU, pytest.mark.gpu])]
)
def test_assign_bits_in_a_loop_writes_each_bits_rank(mode):
    # Each iteration writes the iteration at the lowest set bit of every word and clears it
    # (rest = q & (q - 1), lowest = q & ~rest): out(i, b) = the rank of bit b among words(i)'s
    # set bits.
    device = "gpu" if mode == "device" else "cpu"
    rng = np.random.default_rng(2)
    n, width = 50, 40
    words = rng.integers(0, 2**40, n)
    words[7] = 0  # no bit: no entry left after the first iteration
    out = gbla.Vector.new(n * width, np.int32, device=device)
    q = gbla.Vector.from_dense(words, device=device)

    def body(s, it):
        rest = gbla.select(
            gbla.ewise_mult(s.q, gbla.apply(s.q, "minus", right=1), "band"), "nonzero"
        )
        # ewise_add: where rest has no entry, the word's one bit is its lowest
        gbla.assign_bits(s.out, it, gbla.ewise_add(s.q, rest, "bandnot"))
        s.q = rest

    got = gbla.iterate(body, {"q": q, "out": out}, while_nonempty="q", mode=mode)
    expected = np.full((n, width), -1)
    for i, w in enumerate(words):
        set_bits = [b for b in range(width) if int(w) >> b & 1]
        expected[i, set_bits] = np.arange(1, len(set_bits) + 1)
    np.testing.assert_array_equal(host(got["out"].to_dense(-1)).reshape(width, n), expected.T)


def test_assign_bits_takes_a_scalar_on_the_device_of_out(device):
    bits = gbla.Vector.from_coo([1], np.array([0b11]), 2, device=device)
    out = gbla.Vector.new(4, np.int64, device=device)
    gbla.assign_bits(out, gbla.Scalar.from_value(5, device=device), bits)
    np.testing.assert_array_equal(host(out.to_dense(-1)), [-1, 5, -1, 5])


def test_assign_bits_rejects_bad_arguments_by_name():
    bits = gbla.Vector.from_coo([0], np.array([1]), 3, device="cpu")
    out = gbla.Vector.new(6, np.int32, device="cpu")
    with pytest.raises(gbla.DomainMismatch, match="bits.dtype must be int32 or int64"):
        gbla.assign_bits(out, 1, gbla.Vector.from_coo([0], 1.0, 3, device="cpu"))
    with pytest.raises(gbla.DomainMismatch, match="out must be a gbla.Vector"):
        gbla.assign_bits(np.zeros(6), 1, bits)
    with pytest.raises(gbla.DimensionMismatch, match=r"out.size must be bits.size = 3 times"):
        gbla.assign_bits(gbla.Vector.new(7, np.int32, device="cpu"), 1, bits)
    with pytest.raises(gbla.DimensionMismatch, match=r"in \[1, 64\].*; got 195"):
        gbla.assign_bits(gbla.Vector.new(3 * 65, np.int32, device="cpu"), 1, bits)
    with pytest.raises(gbla.DimensionMismatch, match=r"in \[1, 32\].*; got 99"):
        gbla.assign_bits(
            gbla.Vector.new(99, np.int32, device="cpu"),
            1,
            gbla.Vector.new(3, np.int32, device="cpu"),
        )
    with pytest.raises(gbla.InvalidValue, match="value must be an integer"):
        gbla.assign_bits(out, 1.5, bits)
    with pytest.raises(gbla.DimensionMismatch, match="out.size must equal bits.size = 0"):
        gbla.assign_bits(out, 1, gbla.Vector.new(0, np.int64, device="cpu"))
    empty = gbla.Vector.new(0, np.int32, device="cpu")
    assert gbla.assign_bits(empty, 1, gbla.Vector.new(0, np.int64, device="cpu")) is empty


# ============================================================================== bitwise algebra
BITWISE = {
    "bor": np.bitwise_or,
    "band": np.bitwise_and,
    "bxor": np.bitwise_xor,
    "bandnot": lambda x, y: x & ~y,
}


def words(rng, n, dtype):
    """Random words over the whole range, the extremes and -1 among them."""
    info = np.iinfo(dtype)
    w = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    w[:4] = [info.min, info.max, -1, 0]
    return w


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("name", sorted(BITWISE))
def test_bitwise_ops_compute_what_numpy_computes(device, name, dtype):
    rng = np.random.default_rng(5)
    x, y = words(rng, 40, dtype), words(rng, 40, dtype)[::-1].copy()
    ux, uy = (gbla.Vector.from_dense(a, device=device) for a in (x, y))
    f = BITWISE[name]
    np.testing.assert_array_equal(host(gbla.ewise_mult(ux, uy, name).to_dense()), f(x, y))
    np.testing.assert_array_equal(host(gbla.ewise_add(ux, uy, name).to_dense()), f(x, y))
    s = dtype(-6)
    np.testing.assert_array_equal(host(gbla.apply(ux, name, right=s).to_dense()), f(x, s))
    np.testing.assert_array_equal(host(gbla.apply(ux, name, left=s).to_dense()), f(s, x))
    assert getattr(semirings.binary, name).numpy(x, y).dtype == np.dtype(dtype)


def test_the_bitwise_ops_take_integers_only():
    u = gbla.Vector.from_dense(np.ones(3), device="cpu")
    with pytest.raises(gbla.DomainMismatch, match="bor takes"):
        gbla.ewise_mult(u, u, "bor")
    assert semirings.bor_first.dtypes == (np.dtype(np.int32), np.dtype(np.int64))


def reference_vxm(S, u_values, u_present, add, multiply):
    """w(j) = add over present u(k) with an edge k -> j of multiply(u(k), 1) (an iso matrix's
    value is 1)."""
    n = S.shape[1]
    C = S.tocsc()
    out, present = np.zeros(n, u_values.dtype), np.zeros(n, bool)
    for j in range(n):
        ks = [k for k in C.indices[C.indptr[j] : C.indptr[j + 1]] if u_present[k]]
        if ks:
            products = [multiply(u_values[k], u_values.dtype.type(1)) for k in ks]
            out[j] = add.reduce(np.array(products, u_values.dtype))
            present[j] = True
    return out, present


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize(
    "semiring, multiply",
    [
        ("bor_first", lambda x, y: x),
        ("band_first", lambda x, y: x),
        ("bxor_first", lambda x, y: x),
        ("bor_band", np.bitwise_and),
    ],
)
def test_bitwise_vxm_pushes_and_pulls_the_same_words(device, semiring, multiply, dtype):
    # the words' every bit counts: an atomic that dropped a bit, or a pull that stopped early
    # at a wrong terminal, would show
    S = sparse_graph(200, 1500, seed=11)
    A = gbla.Matrix.from_scipy(S, device=device).pattern()
    rng = np.random.default_rng(6)
    x = words(rng, 200, dtype)
    present = rng.random(200) < 0.5
    u = gbla.Vector.from_coo(np.flatnonzero(present), x[present], 200, device=device)
    add = getattr(
        np,
        {"bor": "bitwise_or", "band": "bitwise_and", "bxor": "bitwise_xor"}[semiring.split("_")[0]],
    )
    values, where = reference_vxm(S, x, present, add, multiply)
    m = gbla.Vector.from_coo(np.arange(0, 200, 3), True, 200, device=device)
    for direction in ("push", "pull", "auto"):
        w = gbla.vxm(u, A, semiring, direction=direction)
        np.testing.assert_array_equal(
            host(w.to_dense(0)), np.where(where, values, 0), err_msg=direction
        )
        np.testing.assert_array_equal(
            host(w.to_coo()[0]), np.flatnonzero(where), err_msg=direction
        )  # a word of 0 is an entry too
        masked = gbla.vxm(u, A, semiring, mask=~m.S, direction=direction)
        allow = np.ones(200, bool)
        allow[::3] = False
        np.testing.assert_array_equal(
            host(masked.to_dense(0)), np.where(where & allow, values, 0), err_msg=direction
        )


# ============================================================================== mxm in blocks
@contextlib.contextmanager
def blocks_of(products):
    """mxm's blocks of rows hold at most ``products`` products (a row alone may hold more);
    yields the list of how many blocks each product took."""
    taken = []
    blocks = _matrix_ops._blocks

    def spy(counts, budget, xp):
        out = blocks(counts, budget, xp)
        taken.append(len(out))
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_matrix_ops, "_block_products", products)
        mp.setattr(_matrix_ops, "_blocks", spy)
        yield taken


MXM_SEMIRINGS = ["plus_times", "min_plus", "any_pair", "plus_pair", "min_secondi", "bor_first"]


@G.FIXTURE_OK
@given(
    data=st.data(),
    dims=st.tuples(st.integers(1, 9), st.integers(1, 9), st.integers(1, 9)),
    semiring=st.sampled_from(MXM_SEMIRINGS),
    mask_kind=st.sampled_from([None, "S", "~S"]),
    budget=st.integers(1, 12),
)
def test_mxm_in_small_blocks_equals_mxm_in_one(device, data, dims, semiring, mask_kind, budget):
    m, k, n = dims
    dtype = np.int64 if semiring == "bor_first" else np.float64
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))

    def draw(shape):  # explicit zeros among the entries
        present = rng.random(shape) < 0.45
        values = rng.integers(-9, 10, shape).astype(dtype)
        return gbla.Matrix.from_scipy(
            sp.csr_array((values[present], np.nonzero(present)), shape=shape), device=device
        )

    A, B = draw((m, k)), draw((k, n))
    M = draw((m, n))
    mask = {None: None, "S": M.S, "~S": ~M.S}[mask_kind]
    directions = ["push"] + (["pull"] if mask_kind == "S" else [])
    for direction in directions:
        whole = gbla.mxm(A, B, semiring, mask=mask, direction=direction).to_scipy()
        with blocks_of(budget) as taken:
            parts = gbla.mxm(A, B, semiring, mask=mask, direction=direction).to_scipy()
        assert taken
        if semiring.startswith("any"):  # any may choose another product: the structure
            whole.data[:] = 1
            parts.data[:] = 1
        assert (whole != parts).nnz == 0 and whole.dtype == parts.dtype, direction


def test_small_blocks_do_split_a_product():
    # 4 rows of A, each reaching 3 rows of B of 2 entries: 6 products a row, 24 in all
    A = gbla.Matrix.from_scipy(sp.csr_array(np.ones((4, 3))), device="cpu")
    B = gbla.Matrix.from_scipy(sp.csr_array(np.ones((3, 2))), device="cpu")
    with blocks_of(12) as taken:
        C = gbla.mxm(A, B, "plus_times")
    assert taken == [2]
    np.testing.assert_array_equal(C.to_scipy().toarray(), np.full((4, 2), 3.0))
    with blocks_of(1) as taken:  # a row is never cut: one block a row
        C = gbla.mxm(A, B, "plus_times")
    assert taken == [4]
    np.testing.assert_array_equal(C.to_scipy().toarray(), np.full((4, 2), 3.0))


def test_a_min_plus_product_of_several_rows_in_small_blocks_is_exact(device):
    # row i of F: 0 at sources[i], 0.5 at others[i]; so (F min.+ A)(i, j) is
    # min(A(sources[i], j), 0.5 + A(others[i], j)) over the entries each has
    S = sparse_graph(60, 240, seed=9)
    S.data = np.random.default_rng(9).integers(1, 9, S.nnz) + np.pi / 10
    A = gbla.Matrix.from_scipy(S, device=device)
    sources, others = [0, 17, 17, 59, 33], [5, 5, 40, 0, 33]
    F = gbla.Matrix.from_edges(
        list(range(5)) * 2, sources + others, [0.0] * 5 + [0.5] * 5, 5, ncols=60, device=device
    )
    with blocks_of(12) as taken:  # about 40 products in all
        T = gbla.mxm(F, A, "min_plus")
    assert max(taken) > 1
    dense = np.where(S.toarray() != 0, S.toarray(), np.inf)
    expected = np.minimum(dense[sources], 0.5 + dense[others])
    got = np.full((5, 60), np.inf)
    C = T.to_scipy().tocoo()
    got[C.row, C.col] = C.data
    np.testing.assert_array_equal(got, expected)
