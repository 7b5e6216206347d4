"""Matrix construction, conversion and the cached transpose."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import gbla

from .conftest import GPU, SKIP_NO_GPU, host

FORMATS = ["csr", "csc", "coo", "lil", "dok", "bsr", "dia"]


def _example():
    # 3 x 4:  [[0, 2, 0, 0],
    #          [1, 0, 0, 3],
    #          [0, 0, 0, 0]]   (row 2 empty; an explicit zero at (2, 2) below in some tests)
    return sp.csr_matrix(np.array([[0, 2, 0, 0], [1, 0, 0, 3], [0, 0, 0, 0]], dtype=float))


@pytest.mark.parametrize("fmt", FORMATS)
def test_from_scipy_takes_every_format_and_round_trips(fmt, device):
    S = _example().asformat(fmt)
    A = gbla.Matrix.from_scipy(S, device=device)
    assert A.shape == (3, 4) and A.nvals == 3 and A.dtype == np.float64
    assert A.device == device
    np.testing.assert_array_equal(A.to_scipy().toarray(), S.toarray())


def test_nbytes_counts_the_stored_arrays(device):
    A = gbla.Matrix.from_scipy(_example(), device=device)
    index = np.dtype(A.index_dtype).itemsize
    assert A.nbytes == 4 * index + 3 * index + 3 * 8  # row pointers, column indices, values
    assert A.pattern().nbytes == 4 * index + 3 * index  # an iso matrix keeps no values


def test_from_scipy_takes_sparse_arrays_and_keeps_explicit_zeros(device):
    S = sp.csr_array((np.array([0.0, 5.0]), np.array([1, 0]), np.array([0, 1, 2])), shape=(2, 2))
    A = gbla.Matrix.from_scipy(S, device=device)
    assert A.nvals == 2  # the explicit zero at (0, 1) is an entry: a zero-weight edge
    R = A.to_scipy()
    assert R[0, 1] == 0 and R.nnz == 2


def test_from_scipy_merges_duplicates_sorts_indices_and_leaves_the_input_alone(device):
    # (0, 1) given twice: min(1, 2) = 1 by default, 1 + 2 = 3 with plus; row 0 unsorted.
    S = sp.csr_matrix(
        (np.array([1.0, 4.0, 2.0]), np.array([1, 0, 1]), np.array([0, 3, 3])), shape=(2, 2)
    )
    before = (S.data.copy(), S.indices.copy(), S.indptr.copy())
    A = gbla.Matrix.from_scipy(S, device=device)
    np.testing.assert_array_equal(A.to_scipy().toarray(), [[4.0, 1.0], [0.0, 0.0]])
    plus = gbla.Matrix.from_scipy(S, dup_op=gbla.semirings.binary.plus, device=device)
    np.testing.assert_array_equal(plus.to_scipy().toarray(), [[4.0, 3.0], [0.0, 0.0]])
    with pytest.raises(gbla.DuplicateIndex, match=r"entry \(0, 1\)"):
        gbla.Matrix.from_scipy(S, dup_op=None, device=device)
    for a, b in zip(before, (S.data, S.indices, S.indptr)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "dup_op, expected",
    [
        ("default", [0.0, 3.0, 4.0]),  # the lightest parallel edge: 1 -> 2 weighs 1
        ("plus", [0.0, 3.0, 9.0]),  # SciPy's sum: 1 -> 2 weighs 6
        ("max", [0.0, 3.0, 8.0]),
    ],
)
def test_every_entry_point_merges_parallel_edges_by_the_same_rule(
    device, tmp_path, dup_op, expected
):
    #   0 -(3)-> 1, then 1 -> 2 twice, weights 5 and 1
    src, dst, w = [0, 1, 1], [1, 2, 2], [3.0, 5.0, 1.0]
    kwargs = {} if dup_op == "default" else {"dup_op": getattr(gbla.semirings.binary, dup_op)}
    path = tmp_path / "g.txt"
    path.write_text("0 1 3\n1 2 5\n1 2 1\n")
    built = [
        gbla.Matrix.from_edges(src, dst, w, 3, device=device, **kwargs),
        gbla.Matrix.from_scipy(
            sp.coo_array((w, (src, dst)), shape=(3, 3)), device=device, **kwargs
        ),
        gbla.io.read(path, device=device, **kwargs),
    ]
    for A in built:
        np.testing.assert_allclose(np.asarray(gbla.sssp(A, 0).tolist()), expected)
    with pytest.raises(gbla.DuplicateIndex):
        gbla.Matrix.from_edges(src, dst, w, 3, dup_op=None, device=device)
    with pytest.raises(gbla.DuplicateIndex):
        gbla.Matrix.from_scipy(
            sp.coo_array((w, (src, dst)), shape=(3, 3)), dup_op=None, device=device
        )
    with pytest.raises(gbla.io.FormatError, match=r"edge \(2, 3\)"):
        gbla.io.read(path, dup_op=None, device=device)


def test_index_dtype_is_int32_by_default_and_int64_on_request(device):
    S = _example()
    assert gbla.Matrix.from_scipy(S, device=device).index_dtype == np.int32
    A = gbla.Matrix.from_scipy(S, device=device, index_dtype=np.int64)
    assert A.index_dtype == np.int64 and A.T.index_dtype == np.int64


def test_small_integer_dtypes_widen_losslessly(device):
    S = sp.csr_matrix(np.array([[0, -3], [7, 0]], dtype=np.int8))
    A = gbla.Matrix.from_scipy(S, device=device)
    assert A.dtype == np.int32
    np.testing.assert_array_equal(A.to_scipy().toarray(), [[0, -3], [7, 0]])


def test_transpose_is_built_once_cached_and_involutive(device):
    A = gbla.Matrix.from_scipy(_example(), device=device)
    T = A.T
    assert T is A.T and T.T is A
    assert T.shape == (4, 3)
    np.testing.assert_array_equal(T.to_scipy().toarray(), _example().toarray().T)
    assert not A.is_symmetric


def test_symmetric_matrix_shares_its_arrays_with_its_transpose(device):
    S = sp.csr_matrix(np.array([[0, 1, 2], [1, 0, 0], [2, 0, 0]], dtype=float))
    A = gbla.Matrix.from_scipy(S, device=device)
    assert A.is_symmetric
    assert A.T._indices is A._indices and A.T._values is A._values


def test_the_rows_of_a_range_of_entries_are_those_of_all_of_them():
    # what the GPU's symmetry search takes a chunk at a time: rows of entries start..stop,
    # empty rows among them
    from gbla import _storage

    S = sp.csr_matrix(np.array([[0, 1, 2], [0, 0, 0], [3, 0, 0], [0, 0, 0], [4, 5, 6]]))
    every = _storage.rows_of_entries(S.indptr, S.nnz, np)
    np.testing.assert_array_equal(every, [0, 0, 2, 4, 4, 4])
    for start, stop in [(0, 6), (1, 4), (3, 3), (2, 6)]:
        part = _storage.rows_of_entries(S.indptr, stop, np, start=start)
        np.testing.assert_array_equal(part, every[start:stop])


@SKIP_NO_GPU
@pytest.mark.gpu
@pytest.mark.parametrize("chunk", [2**26, 3])  # one search, and a search a few entries at once
def test_the_gpu_finds_symmetry_without_building_the_transpose(monkeypatch, chunk):
    # symmetric in structure and values, in structure only, in neither, a pattern, a self-loop
    # and empty rows: the search says what the transpose would, and a symmetric matrix's
    # transpose shares its arrays
    from gbla import _storage

    monkeypatch.setattr(_storage, "_MIRROR_CHUNK", chunk)
    rng = np.random.default_rng(5)
    U = sp.random(40, 40, density=0.1, format="csr", random_state=rng)
    U.data = rng.integers(1, 9, U.nnz).astype(float)
    cases = {
        "symmetric": sp.csr_matrix(U + U.T),
        "values differ": sp.csr_matrix(U + 2 * U.T),
        "structure differs": sp.csr_matrix(U),
        "pattern": sp.csr_matrix((U + U.T) != 0),
        "loop and empty rows": sp.csr_matrix(([3.0], ([7], [7])), shape=(40, 40)),
    }
    for name, S in cases.items():
        S.sort_indices()
        D = S.astype(float)
        expected = (abs(D - D.T) > 0).nnz == 0
        A = gbla.Matrix.from_scipy(S, device="gpu")
        assert A.is_symmetric == expected, name
        np.testing.assert_array_equal(A.T.to_scipy().toarray(), S.toarray().T, err_msg=name)
        assert (A.T._indices is A._indices) == expected, name
        B = gbla.Matrix.from_scipy(S, device="gpu")
        assert B.T.is_symmetric == expected and B.is_symmetric == expected, name


@SKIP_NO_GPU
@pytest.mark.gpu
@pytest.mark.parametrize("chunk", [2**26, 5])
def test_the_weights_numbers_are_the_same_on_both_devices(monkeypatch, chunk):
    # what sssp reads of weights: NaN, -inf, +inf, zeros, negatives, integers and bools, one
    # chunk or several
    import cupy

    from gbla import _weights

    monkeypatch.setattr(_weights, "_NUMBERS_CHUNK", chunk)
    rng = np.random.default_rng(2)
    cases = [
        np.array([2.0, -1.5, np.inf, 0.0, 7.25, np.inf]),
        np.array([2.0, np.nan, 1.0, -np.inf, 0.5, np.nan, -3.0]),
        np.array([np.inf, np.inf]),
        np.array([0.0, -0.0, -2.0], np.float32),
        rng.random(1000) * 100,
        np.array([3, 1, 4, 1, -5, 0], np.int64),
        np.array([7, 0, 2], np.int32),
        np.array([True, False, True]),
        np.array([], np.float64),
    ]
    for values in cases:
        cpu = _weights.numbers(values)
        gpu = _weights.numbers(cupy.asarray(values))
        np.testing.assert_allclose(gpu, cpu, rtol=1e-12, err_msg=repr(values))
        assert np.array_equal(np.isinf(gpu), np.isinf(cpu)), values


def _numbers_by_definition(values):
    """numbers()'s six figures as its docstring defines them, on the host, plainly."""
    v = np.asarray(values, np.float64)
    finite = v[np.isfinite(v)]
    positive = finite[finite > 0]
    return np.array(
        [
            finite.min() if len(finite) else np.inf,
            float(np.isposinf(v).any()),
            positive.sum(),
            positive.min() if len(positive) else np.inf,
            len(positive),
            int((np.isnan(v) | np.isneginf(v)).sum()),
        ]
    )


@given(
    st.lists(
        st.one_of(
            st.floats(-100, 100, width=32),
            st.sampled_from([0.0, np.inf, -np.inf, np.nan]),
        ),
        max_size=40,
    ),
    st.sampled_from([np.float64, np.float32]),
    st.sampled_from([2**18, 3, 1]),
    st.sampled_from([1, 2, 5]),
)
def test_the_weights_numbers_on_the_host_are_their_definition(values, dtype, chunk, threads):
    # the fast path (every weight of a chunk finite and positive) and the sorting one agree,
    # in one thread or in blocks of whole chunks over several
    from gbla import _backend, _weights

    original = _weights._HOST_CHUNK, _weights._PARALLEL_AT, _backend.host_threads
    _weights._HOST_CHUNK, _weights._PARALLEL_AT = chunk, 1
    _backend.host_threads = lambda: threads
    try:
        got = _weights.numbers(np.array(values, dtype))
    finally:
        _weights._HOST_CHUNK, _weights._PARALLEL_AT, _backend.host_threads = original
    expected = _numbers_by_definition(np.array(values, dtype))
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    whole = np.array(values, dtype)
    ints = whole[np.isfinite(whole)].astype(np.int64)  # integers: no specials
    np.testing.assert_allclose(_weights.numbers(ints), _numbers_by_definition(ints))


def test_from_edges_builds_an_iso_pattern_and_merges_repeated_unweighted_edges(device):
    # edges 0->1, 1->2, 1->2 (repeated), 2->0
    A = gbla.Matrix.from_edges([0, 1, 1, 2], [1, 2, 2, 0], device=device)
    assert A.is_iso and A.dtype == np.bool_ and A.nvals == 3 and A.shape == (3, 3)
    np.testing.assert_array_equal(A.to_scipy().toarray(), [[0, 1, 0], [0, 0, 1], [1, 0, 0]])


def test_from_edges_combines_repeated_weighted_edges_with_dup_op(device):
    src, dst, w = [0, 0, 1], [1, 1, 0], [5.0, 2.0, 7.0]
    A = gbla.Matrix.from_edges(src, dst, w, n=3, dup_op=gbla.semirings.binary.min, device=device)
    np.testing.assert_array_equal(A.to_scipy().toarray(), [[0, 2, 0], [7, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(
        gbla.Matrix.from_edges(src, dst, w, n=3, device=device).to_scipy().toarray(),
        A.to_scipy().toarray(),
    )  # the default
    with pytest.raises(gbla.DuplicateIndex, match=r"\(0, 1\)"):
        gbla.Matrix.from_edges(src, dst, w, n=3, dup_op=None, device=device)


def test_from_edges_with_no_edges_and_with_isolated_vertices(device):
    A = gbla.Matrix.from_edges([], [], n=4, device=device)
    assert A.shape == (4, 4) and A.nvals == 0
    B = gbla.Matrix.from_edges(np.array([], np.int64), np.array([], np.int64), device=device)
    assert B.shape == (0, 0)


def test_astype_and_pattern_share_structure(device):
    A = gbla.Matrix.from_scipy(_example(), device=device)
    P = A.pattern()
    assert P.is_iso and P._indices is A._indices
    B = A.astype(np.int64)
    assert B.dtype == np.int64 and B._indices is A._indices
    np.testing.assert_array_equal(B.to_scipy().toarray(), _example().toarray().astype(np.int64))


@SKIP_NO_GPU
@pytest.mark.gpu
def test_from_cupy_shares_canonical_csr_arrays_and_converts_the_rest():
    import cupy as cp
    import cupyx.scipy.sparse as csp

    C = csp.csr_matrix(cp.asarray(_example().toarray()))
    C.sum_duplicates()
    A = gbla.Matrix.from_cupy(C)
    assert A.device == "gpu" and A._values is C.data  # no copy
    np.testing.assert_array_equal(A.to_scipy().toarray(), _example().toarray())
    A2 = gbla.Matrix.from_cupy(csp.coo_matrix(C))
    np.testing.assert_array_equal(A2.to_scipy().toarray(), _example().toarray())


@SKIP_NO_GPU
@pytest.mark.gpu
def test_to_device_moves_a_matrix_and_keeps_its_values():
    A = gbla.Matrix.from_scipy(_example(), device="cpu")
    G = A.to_device("gpu")
    assert G.device == "gpu"
    np.testing.assert_array_equal(G.to_scipy().toarray(), _example().toarray())
    assert G.to_device("cpu").device == "cpu"


def test_default_device_is_the_gpu_exactly_when_one_is_available():
    A = gbla.Matrix.from_scipy(_example())
    assert A.device == ("gpu" if GPU else "cpu") == gbla.default_device()


def test_mixing_devices_raises_when_a_gpu_is_present():
    if not GPU:
        pytest.skip("needs CuPy and a CUDA device")
    A = gbla.Matrix.from_scipy(_example(), device="gpu")
    u = gbla.Vector.from_dense(np.ones(4), device="cpu")
    with pytest.raises(gbla.DeviceMismatch, match="A on gpu, u on cpu"):
        gbla.mxv(A, u, "plus_times")


@pytest.mark.parametrize(
    "indices, values, dtype",
    [
        ([], 1.5, None),
        ([3], True, None),
        ([3], 7, np.int32),
        ([4, 0, 2], [1.0, 2.0, 3.0], None),
        (np.array([2, 0, 2], np.int16), np.array([5, 6, 7], np.int8), None),
    ],
    ids=["empty", "one-bool", "one-int32", "three", "repeat"],
)
def test_vector_from_coo_gives_the_same_entries_on_every_device(device, indices, values, dtype):
    # host inputs are checked and combined on the host, then moved in one piece
    u = gbla.Vector.from_coo(
        indices, values, 5, dtype=dtype, dup_op=gbla.semirings.binary.plus, device=device
    )
    idx = np.asarray(indices, np.int64)
    vals = np.broadcast_to(np.asarray(values, dtype), idx.shape)
    expected = {}
    for i, v in zip(idx.tolist(), vals.tolist()):
        expected[i] = expected[i] + v if i in expected else v
    got_idx, got_vals = (host(a) for a in u.to_coo())
    np.testing.assert_array_equal(got_idx, sorted(expected))
    np.testing.assert_array_equal(got_vals, [expected[i] for i in sorted(expected)])
    assert u.dtype == (
        np.dtype(dtype)
        if dtype is not None
        else gbla.Vector.from_dense(np.asarray(vals), device="cpu").dtype
    )


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("count", [1, 3, 64, 65])
def test_a_gpu_vector_kept_on_the_host_until_used_acts_as_one_made_on_the_device(count):
    # up to STAGED_MAX host entries stay on the host until an op asks for them; 65 are moved
    # at once. Either way every read and op sees what a vector from device arrays holds.
    import cupy as cp

    rng = np.random.default_rng(count)
    idx = rng.choice(200, count, replace=False)
    vals = rng.integers(-9, 9, count).astype(np.int64)
    given = (idx.copy(), vals.copy())
    staged = gbla.Vector.from_coo(*given, 200, device="gpu")
    given[0][:], given[1][:] = 0, 0  # the caller's arrays are not kept
    made = gbla.Vector.from_coo(cp.asarray(idx), cp.asarray(vals), 200, device="gpu")
    assert staged._staged == (count <= 64) and not made._staged
    assert staged.nvals == count and staged.dtype == made.dtype
    dup = staged.dup()
    on_cpu = staged.to_device("cpu")
    assert staged.isequal(made) and dup.isequal(made)
    np.testing.assert_array_equal(host(staged.to_dense(0)), host(made.to_dense(0)))
    np.testing.assert_array_equal(on_cpu.to_dense(0), host(made.to_dense(0)))
    other = gbla.Vector.from_coo(cp.arange(0, 200, 7), 1, 200, device="gpu")
    for op in (
        lambda u: gbla.ewise_add(u, other, "plus"),
        lambda u: gbla.assign(gbla.Vector.new(200, np.int64, device="gpu"), 5, mask=u.S),
        lambda u: gbla.apply(u, gbla.semirings.unary.ainv),
    ):
        assert op(staged).isequal(op(made))
    assert not staged._staged  # moved by the first op that asked


@pytest.mark.parametrize("fill", [None, np.inf, -2.5])
def test_a_vector_of_a_fill_but_a_few_host_entries_holds_them_on_every_device(device, fill):
    # what a search starts from (0 at the source, +inf elsewhere), kept on the host until used
    u = gbla.Vector._from_host_entries([1, 3], np.array([0.0, 7.0]), 5, fill, device)
    expected = np.full(5, np.nan if fill is None else fill)
    expected[[1, 3]] = [0.0, 7.0]
    assert u.nvals == (2 if fill is None else 5)
    w = u.dup()
    np.testing.assert_array_equal(host(u.to_dense(np.nan)), expected)
    np.testing.assert_array_equal(host(w.to_dense(np.nan)), expected)
    np.testing.assert_array_equal(u.to_device("cpu").to_dense(np.nan), expected)
    doubled = gbla.ewise_add(w, w, "plus")
    np.testing.assert_array_equal(host(doubled.to_dense(np.nan)), 2 * expected)


def test_vector_from_dense_copies_its_input(device):
    a = np.array([1.0, 2.0, 3.0])
    u = gbla.Vector.from_dense(a, device=device)
    a[0] = 99
    np.testing.assert_array_equal(host(u.to_dense()), [1.0, 2.0, 3.0])


def test_repr_names_shape_dtype_and_device(device):
    A = gbla.Matrix.from_scipy(_example(), device=device)
    assert repr(A) == f"<gbla.Matrix 3x4 nvals=3 dtype=float64 device={device}>"


def test_matrix_is_not_built_by_its_constructor():
    with pytest.raises(TypeError, match="from_scipy"):
        gbla.Matrix()


def test_dup_op_sees_repeated_edges_in_the_order_given(device):
    # 2000 edges over 3 x 3 pairs, interleaved; weight t is the position given, so first must
    # keep each pair's first position and second its last (an unstable sort breaks this).
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 3, 2000), rng.integers(0, 3, 2000)
    w = np.arange(2000.0)
    key = src * 3 + dst
    firsts = {k: int(np.flatnonzero(key == k)[0]) for k in np.unique(key)}
    lasts = {k: int(np.flatnonzero(key == k)[-1]) for k in np.unique(key)}
    for op, expected in (
        (gbla.semirings.binary.first, firsts),
        (gbla.semirings.binary.second, lasts),
    ):
        R = gbla.Matrix.from_edges(src, dst, w, n=3, dup_op=op, device=device).to_scipy()
        assert R.nnz == len(expected)
        for k, t in expected.items():
            assert R[k // 3, k % 3] == t, (op.name, k)


# ============================================================================== networkx
nx = pytest.importorskip("networkx")


@pytest.mark.parametrize(
    "device", ["cpu", pytest.param("gpu", marks=[SKIP_NO_GPU, pytest.mark.gpu])]
)
def test_a_networkx_graph_becomes_its_adjacency_matrix_and_back(device):
    #   "a" -(2)- "b" -(w missing: 1)- "c"      "d" alone
    G = nx.Graph()
    G.add_nodes_from(["a", "b", "c", "d"])
    G.add_edge("a", "b", weight=2.0)
    G.add_edge("b", "c")
    A = gbla.Matrix.from_networkx(G, device=device)
    assert A.device == device
    np.testing.assert_array_equal(
        A.to_scipy().toarray(), [[0, 2, 0, 0], [2, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0]]
    )
    P = gbla.Matrix.from_networkx(G, weight=None, nodelist=["d", "c", "b", "a"], device=device)
    assert P.is_iso and P.to_scipy().toarray()[2, 3]
    back = A.to_networkx(directed=False)
    assert sorted(back.edges(data="weight")) == [(0, 1, 2.0), (1, 2, 1.0)]
    assert back.number_of_nodes() == 4


def test_parallel_edges_keep_the_lightest_and_directions_stay():
    G = nx.MultiDiGraph([(0, 1, {"weight": 3}), (0, 1, {"weight": 1}), (2, 0, {"weight": 5})])
    A = gbla.Matrix.from_networkx(G, device="cpu")
    np.testing.assert_array_equal(A.to_scipy().toarray(), [[0, 1, 0], [0, 0, 0], [5, 0, 0]])
    assert sorted(A.to_networkx().edges(data="weight")) == [(0, 1, 1.0), (2, 0, 5.0)]
    # the SSSP of the matrix is networkx's
    assert list(gbla.sssp(A, 2)) == [
        nx.single_source_dijkstra_path_length(G, 2)[v] for v in range(3)
    ]


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: gbla.Matrix.from_networkx([(0, 1)]), gbla.DomainMismatch, "G must be a networkx"),
        (
            lambda: gbla.Matrix.from_networkx(nx.path_graph(3), nodelist=[0, 1]),
            gbla.InvalidValue,
            "nodelist",
        ),
        (
            lambda: gbla.Matrix.from_networkx(nx.path_graph(3), nodelist=[0, 1, 1]),
            gbla.InvalidValue,
            "nodelist",
        ),
        (
            lambda: gbla.Matrix.from_networkx(nx.Graph([(0, 1, {"weight": "x"})])),
            gbla.InvalidValue,
            "numeric 'weight'",
        ),
    ],
)
def test_a_bad_networkx_input_is_rejected_by_name(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_isequal_compares_shape_dtype_structure_and_values(device):
    # [[0, 1.5], [nan, 0]]
    A = gbla.Matrix.from_edges([0, 1], [1, 0], [1.5, np.nan], n=2, device=device)
    same = gbla.Matrix.from_edges(
        [1, 0], [0, 1], [np.nan, 1.5], n=2, device=device, index_dtype=np.int64
    )
    assert A.isequal(same) and same.isequal(A) and A.isequal(A.T.T)
    assert not A.isequal(A.T)  # the structure
    assert not A.isequal(
        gbla.Matrix.from_edges([0, 1], [1, 0], [1.5, 0.0], n=2, device=device)
    )  # a value
    assert not A.isequal(A.astype(np.float32))  # the dtype
    assert not A.isequal(
        gbla.Matrix.from_edges([0, 1], [1, 0], [1.5, np.nan], n=3, device=device)
    )  # the shape
    assert not A.isequal(A.to_scipy())
    P = A.pattern()  # iso: every entry True
    assert P.isequal(gbla.Matrix.from_edges([0, 1], [1, 0], [True, True], n=2, device=device))


@pytest.mark.parametrize(
    "weights", [[2.0, -1.5, np.inf, 0.0], [2.0, np.nan, 1.0, -np.inf], [3, 1, 4, 1]]
)
def test_a_matrixs_weights_are_the_facts_a_partitioned_one_gathers(device, weights):
    # what gbla.sssp reads of a Matrix, found once, is what a matrix cut over ranks or kept in
    # host memory reports of the same CSR
    from gbla._weights import weight_facts

    S = sp.csr_array((np.array(weights), ([0, 0, 1, 2], [1, 2, 2, 0])), shape=(3, 3))
    A = gbla.Matrix.from_scipy(S, device=device)
    assert A.weights == weight_facts(S.indptr, S.indices, S.data)
    assert A.weights is A.weights
    assert (
        A.pattern().weights.lowest == 1.0
        and gbla.Matrix.from_edges([], [], [], n=2, device=device).weights.positive_count == 0
    )


@pytest.mark.parametrize("thunk", [-1.0, 1.5, 10.0])  # every entry, some, none
def test_select_and_scale_keep_the_right_entries_and_leave_the_matrix_alone(device, thunk):
    # a selection keeping every entry shares the structure, one keeping some makes its own and
    # remembers its entries' rows: products and selections of the result read both
    S = sp.random(9, 7, density=0.4, format="csr", random_state=3) * 4
    A = gbla.Matrix.from_scipy(S, device=device)
    before = A.to_scipy().toarray()
    kept = gbla.select(A, ">", thunk)
    dense = S.toarray()
    np.testing.assert_array_equal(kept.to_scipy().toarray(), np.where(dense > thunk, dense, 0))
    assert kept.nvals == int((S.data > thunk).sum())
    v = gbla.Vector.from_coo(np.arange(0, 9, 2), np.arange(0, 9, 2) + 1.0, 9, device=device)
    full = gbla.Vector.from_dense(np.arange(7) + 1.0, device=device)
    left = gbla.scale(kept, v, "times", side="left").to_scipy().toarray()
    factor = np.where(np.arange(9) % 2 == 0, np.arange(9) + 1.0, 0)[:, None]
    np.testing.assert_array_equal(left, np.where(dense > thunk, dense, 0) * factor)
    right = gbla.scale(kept, full, "times", side="right")
    np.testing.assert_array_equal(
        right.to_scipy().toarray(), np.where(dense > thunk, dense, 0) * (np.arange(7) + 1.0)
    )
    assert right.nvals == kept.nvals
    again = gbla.select(gbla.scale(kept, v, "plus", side="left"), "<", 6.0)
    expected = (
        (dense != 0) & (dense > thunk) & (np.arange(9) % 2 == 0)[:, None] & (dense + factor < 6)
    )
    np.testing.assert_array_equal(host(again.to_scipy().toarray()) != 0, expected)
    np.testing.assert_array_equal(A.to_scipy().toarray(), before)


def test_compress_keeps_each_arrays_entries_in_order():
    from gbla._backend import compress

    keep = np.array([True, False, True, True, False])
    a, b, none = compress(keep, np.arange(5), np.arange(5.0) * 2, None)
    np.testing.assert_array_equal(a, [0, 2, 3])
    np.testing.assert_array_equal(b, [0.0, 4.0, 6.0])
    assert none is None
    assert [len(x) for x in compress(np.zeros(3, bool), np.arange(3))] == [0]
