"""gbla.io: every reader against an independent (SciPy / NumPy) reader on the real graphs in
../shared/data, FormatError for each kind of malformed file (file, line, reason), the .npz cache
and write_mtx round trips. CPU only."""

import gzip
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import gbla
from gbla.io import FormatError

from . import graphs as G
from .conftest import data_file


def assert_same(A, S, *, values=True):
    """A (a gbla.Matrix) has the structure of S (any scipy sparse array), and its values."""
    T = A.to_scipy()
    S = sp.csr_array(S)
    S.sum_duplicates()
    S.sort_indices()
    assert T.shape == S.shape
    np.testing.assert_array_equal(T.indptr, S.indptr)
    np.testing.assert_array_equal(T.indices, S.indices)
    if values:
        np.testing.assert_array_equal(T.data.astype(np.float64), S.data.astype(np.float64))


def mtx_oracle(relative):
    """SciPy's reader, repeated entries merged by min (gbla's rule; SciPy would sum them)."""
    path = data_file(relative)
    with gzip.open(path, "rb") if relative.endswith(".gz") else open(path, "rb") as f:
        C = sp.coo_array(scipy.io.mmread(f))
    assert C.shape[0] == C.shape[1]
    return G.csr(C.row, C.col, C.data, C.shape[0])


def read(path, **kwargs):
    return gbla.io.read(path, device="cpu", **kwargs)


def mtx_numpy(relative):
    """Matrix Market by np.loadtxt alone (independent of the SciPy reader gbla.io uses): the
    header's field and symmetry, then the size line and the entries as numbers."""
    path = data_file(relative)
    with gzip.open(path, "rt") if relative.endswith(".gz") else open(path) as f:
        field, symmetry = f.readline().lower().split()[3:5]
        size = next(line for line in f if line.strip() and not line.startswith("%"))
        rows = np.loadtxt(f, comments="%", ndmin=2)
    n, _, entries = (int(k) for k in size.split())
    assert len(rows) == entries
    src, dst = rows[:, 0].astype(np.int64) - 1, rows[:, 1].astype(np.int64) - 1
    w = np.ones(len(rows)) if field == "pattern" else rows[:, 2]
    if symmetry != "general":
        off = src != dst
        mirror = -w[off] if symmetry == "skew-symmetric" else w[off]
        src, dst, w = np.r_[src, dst[off]], np.r_[dst, src[off]], np.r_[w, mirror]
    return G.csr(src, dst, w, n)


# ============================================================================== real graphs
@pytest.mark.parametrize(
    "relative, field",
    [
        ("mtx/karate.mtx", "pattern"),
        ("mtx/chesapeake.mtx", "pattern"),
        ("mtx/jagmesh7.mtx", "pattern"),
        ("mtx/west0067.mtx", "real"),
        ("mtx/bips98_606.mtx", "real"),
        ("mtx/ldbc-directed-example.mtx", "real"),
        ("mtx/ldbc-undirected-example.mtx", "real"),
        ("road/USA-road-NY.mtx.gz", "pattern"),
        ("road/luxembourg_osm.mtx.gz", "pattern"),
        ("weighted/OL.mtx.gz", "real"),
        ("tiny/gapbs/4.mtx", "pattern"),
        ("tiny/gapbs/4w.mtx", "integer"),
    ],
)
def test_matrix_market_files_match_scipy(relative, field):
    A = read(data_file(relative))
    expected_dtype = {"pattern": np.bool_, "real": np.float64, "integer": np.int64}[field]
    assert A.dtype == expected_dtype and A.is_iso == (field == "pattern")
    assert_same(A, mtx_oracle(relative), values=field != "pattern")


@pytest.mark.parametrize(
    "relative",
    [
        "mtx/karate.mtx",
        "mtx/bips98_606.mtx",
        "mtx/west0067.mtx",
        "tiny/gapbs/4w.mtx",
        "road/USA-road-NY.mtx.gz",
        "road/luxembourg_osm.mtx.gz",
        "mesh/delaunay_n16.mtx.gz",
        "social/ego-Facebook-combined.mtx.gz",
        "social/as-caida20071105.mtx.gz",
        "social/email-Enron.mtx.gz",
        "social/soc-Slashdot0902.directed.mtx.gz",
        "weighted/OL.mtx.gz",
        "weighted/TG.mtx.gz",
    ],
)
def test_matrix_market_through_scipy_equals_an_independent_numpy_reader(relative):
    # the hand parser these replaced gave the same arrays on every shared graph
    A = read(data_file(relative))
    assert_same(A, mtx_numpy(relative), values=not A.is_iso)


def test_read_mtx_keeps_working_as_before():
    A = gbla.io.read_mtx(data_file("mtx/karate.mtx"), device="cpu")
    assert A.shape == (34, 34) and A.nvals == 156 and A.is_iso
    assert_same(A, mtx_oracle("mtx/karate.mtx"), values=False)


@pytest.mark.parametrize(
    "relative",
    [
        "social/p2p-Gnutella08.txt",
        "social/Wiki-Vote.txt.gz",
        "social/email-Eu-core.txt.gz",
        "tiny/gapbs/4.el",
    ],
)
def test_snap_edge_lists_match_numpy(relative):
    A = read(data_file(relative))
    assert A.is_iso
    assert_same(A, G.read_snap(relative), values=False)


def test_snap_edge_list_with_directed_false_is_symmetrized():
    relative = "social/p2p-Gnutella08.txt"
    A = read(data_file(relative), directed=False)
    assert_same(A, G.symmetrized(G.read_snap(relative)), values=False)
    assert A.is_symmetric


@pytest.mark.parametrize(
    "relative",
    [
        "small/power.graph",
        "small/PGPgiantcompo.graph",
        "mesh/delaunay_n15.graph.gz",
        "mesh/rgg_n_2_15_s0.graph.gz",
    ],
)
def test_metis_graphs_match_the_reference_reader(relative):
    A = read(data_file(relative))
    assert A.is_iso and A.is_symmetric
    assert_same(A, G.read_metis(relative), values=False)


@pytest.mark.parametrize("relative", ["weighted/rome99.gr", "tiny/gapbs/4.gr"])
def test_dimacs_files_match_numpy_keeping_the_shortest_parallel_arc(relative):
    A = read(data_file(relative))
    src, dst, w, n = G.read_dimacs(relative)
    assert A.dtype == np.int64 and A.shape == (n, n)
    assert_same(A, G.csr(src, dst, w, n))
    assert A.nvals < len(src)  # both files hold parallel arcs


def test_weighted_edge_list_matches_numpy():
    A = read(data_file("tiny/gapbs/4.wel"))
    src, dst, w, n = G.read_weighted_edges("tiny/gapbs/4.wel")
    assert A.dtype == np.int64
    assert_same(A, G.csr(src, dst, w, n))


def test_the_gap_test_graph_is_the_same_in_every_format():
    # 4.el / 4.wel are 0-based, 4.gr / 4.mtx 1-based copies of one weighted graph
    el, mtx = read(data_file("tiny/gapbs/4.el")), read(data_file("tiny/gapbs/4.mtx"))
    wel, gr = read(data_file("tiny/gapbs/4.wel")), read(data_file("tiny/gapbs/4.gr"))
    assert_same(el, mtx.to_scipy(), values=False)
    assert_same(wel, gr.to_scipy())


def _first_arc_beyond_p_line(path):
    """(line number, endpoint, declared count) of the first arc past the p line's count."""
    with open(path) as f:
        for number, line in enumerate(f, 1):
            words = line.split()
            if words[:1] == ["p"]:
                n = int(words[2])
            elif words[:1] == ["a"] and max(int(words[1]), int(words[2])) > n:
                return number, max(int(words[1]), int(words[2])), n


@pytest.mark.parametrize("name", ["USA-road-d.NY.first50k.gr", "USA-road-d.BAY.first50k.gr"])
def test_first50k_files_declaring_too_few_nodes_raise_naming_the_line(name):
    path = data_file(f"weighted/{name}")
    number, endpoint, n = _first_arc_beyond_p_line(path)
    with pytest.raises(FormatError) as info:
        read(path)
    assert (
        f"{name}: line {number}: arc endpoint {endpoint} exceeds the declared vertex count {n}"
    ) in str(info.value)


def test_weighted_false_gives_the_pattern_and_true_keeps_the_weights():
    path = data_file("weighted/rome99.gr")
    P, W = read(path, weighted=False), read(path, weighted=True)
    assert P.is_iso and W.dtype == np.int64
    assert_same(P, W.to_scipy(), values=False)


@pytest.mark.parametrize(
    "relative, line, phrase",
    [
        ("mtx/karate.mtx", 1, "pattern matrix (no values)"),
        ("social/p2p-Gnutella08.txt", 5, "'u v' (no weights)"),
        ("small/power.graph", 1, "declares no edge weights"),
    ],
)
def test_weighted_true_on_an_unweighted_file_raises(relative, line, phrase):
    path = data_file(relative)
    with pytest.raises(FormatError, match=re.escape(f"{path.name}: line {line}: ")) as info:
        read(path, weighted=True)
    assert phrase in str(info.value)


# ============================================================================== formats in detail
def write(tmp_path, name, text):
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wb") as f:
            f.write(text.encode())
    else:
        path.write_bytes(text.encode())
    return path


def dense(A):
    return A.to_scipy().toarray()


def test_snap_tolerates_tabs_crlf_blank_and_comment_lines_and_no_final_newline(tmp_path):
    #   0 -> 1, 0 -> 2, 2 -> 0, 3 -> 3 (a self-loop), 0 -> 1 again
    text = "# c\r\n0\t1\r\n\r\n  0  2 \r\n# more\r\n2 0\r\n3\t3\r\n0 1"
    A = read(write(tmp_path, "g.txt", text))
    expected = np.zeros((4, 4), bool)
    expected[[0, 0, 2, 3], [1, 2, 0, 3]] = True
    assert A.is_iso and (dense(A) == expected).all()


def test_snap_weights_are_int64_when_integral_else_float64(tmp_path):
    A = read(write(tmp_path, "i.txt", "0 1 5\n1 2 -7\n0 1 3\n"))
    assert A.dtype == np.int64 and dense(A)[0, 1] == 3 and dense(A)[1, 2] == -7
    B = read(write(tmp_path, "f.el", "0 1 5\n1 2 2.5e-1\n"))
    assert B.dtype == np.float64 and dense(B)[1, 2] == 0.25 and dense(B)[0, 1] == 5


def test_integers_of_every_length_parse_exactly(tmp_path):
    # 1 to 19 digits exercise the 8-digit words, their high half and the long-token path
    rng = np.random.default_rng(7)
    weights = [int(w) for w in rng.integers(-(10**17), 10**17, 40)] + [2**63 - 1, -(2**63 - 1)]
    weights += [10**k - 1 for k in range(1, 19)] + [-(10**k) for k in range(18)] + [0, 7]
    text = "".join(f"{k} {k + 1} {w}\n" for k, w in enumerate(weights))
    S = read(write(tmp_path, "long.wel", text)).to_scipy().tocoo()
    assert S.data.tolist() == weights and S.row.tolist() == list(range(len(weights)))
    with pytest.raises(
        FormatError, match="arc endpoint 123456789012 exceeds the declared vertex count 3"
    ):
        read(write(tmp_path, "long.gr", "p sp 3 1\na 1 123456789012 5\n"))
    with pytest.raises(
        FormatError, match="long.txt: line 2: vertex id 99999999999999999999 does not fit in int64"
    ):
        read(write(tmp_path, "long.txt", "0 1\n99999999999999999999 1\n"))


def test_an_integer_mtx_value_that_is_not_whole_is_named_not_truncated(tmp_path):
    # SciPy's reader turns 1.5 in an integer file into 1; gbla reads the values as written
    head = "%%MatrixMarket matrix coordinate integer general\n% c\n3 3 3\n"
    for suffix, body in (
        (".mtx", "1 2 4\n2 3 1.5\n3 1 7\n"),
        (".mtx.gz", "1 2 4\n2 3 -0.25\n3 1 7\n"),
    ):
        path = tmp_path / f"frac{suffix}"
        opener = gzip.open if suffix.endswith(".gz") else open
        with opener(path, "wt") as f:
            f.write(head + body)
        bad = "1.5" if suffix == ".mtx" else "-0.25"
        line = 5
        with pytest.raises(
            FormatError,
            match=f"frac{re.escape(suffix)}: line {line}: value must be an integer; got '{bad}'",
        ):
            read(path)
    # whole values past 2**53 (where doubles skip integers) stay exact
    big = [2**53 + 1, -(2**63 - 1), 3]
    path = write(
        tmp_path,
        "big.mtx",
        head + "".join(f"{k + 1} {(k + 1) % 3 + 1} {w}\n" for k, w in enumerate(big)),
    )
    A = read(path)
    assert A.dtype == np.int64 and sorted(A.to_scipy().data.tolist()) == sorted(big)


def test_mtx_symmetric_and_skew_symmetric_give_both_triangles(tmp_path):
    #   symmetric: 1 - 0 (weight 2), 2 - 2 (4);  skew: (1, 0) = 3, so (0, 1) = -3
    sym = read(
        write(
            tmp_path,
            "s.mtx",
            "%%MatrixMarket matrix coordinate integer symmetric\n"
            "% a comment\n3 3 2\n2 1 2\n3 3 4\n",
        )
    )
    assert sym.dtype == np.int64
    assert (dense(sym) == [[0, 2, 0], [2, 0, 0], [0, 0, 4]]).all()
    skew = read(
        write(
            tmp_path,
            "k.mtx",
            "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 3.5\n",
        )
    )
    assert (dense(skew) == [[0, -3.5], [3.5, 0]]).all()


def test_mtx_hermitian_real_values_give_both_triangles(tmp_path):
    #   (2, 1) = 5 in a real hermitian file: (1, 2) = 5 too
    A = read(
        write(
            tmp_path,
            "h.mtx",
            "%%MatrixMarket matrix coordinate real hermitian\n2 2 2\n2 1 5\n1 1 -1\n",
        )
    )
    assert (dense(A) == [[-1, 5], [5, 0]]).all()


def test_mtx_ignores_what_follows_the_fields_of_a_line_as_scipy_does(tmp_path):
    # a pattern file whose lines carry values (as some converters write them) is the pattern
    A = read(write(tmp_path, "p.mtx", MTX + "3 3 2\n1 2 7\n3 1 9.5\n"))
    assert A.is_iso and (dense(A) == [[0, 1, 0], [0, 0, 0], [1, 0, 0]]).all()


def test_mtx_gzip_with_an_upper_case_suffix_is_read(tmp_path):
    path = write(tmp_path, "g.mtx.gz", MTX + "2 2 1\n1 2\n")
    upper = path.rename(tmp_path / "G.MTX.GZ")
    assert (dense(read(upper)) == [[0, 1], [0, 0]]).all()


def test_mtx_rectangular_and_repeated_entries_keep_the_smallest(tmp_path):
    A = read(
        write(
            tmp_path,
            "r.mtx",
            "%%MatrixMarket matrix coordinate real general\n2 3 3\n1 3 5.0\n1 3 -1.5\n2 1 1e3\n",
        )
    )
    assert A.shape == (2, 3)
    assert (dense(A) == [[0, 0, -1.5], [1000, 0, 0]]).all()


def test_mtx_directed_false_of_a_rectangular_matrix_is_refused(tmp_path):
    path = write(
        tmp_path, "r.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 3 1\n1 3\n"
    )
    with pytest.raises(gbla.InvalidValue, match="directed must be None or True"):
        read(path, directed=False)


def test_metis_formats_weights_blank_lines_and_comments(tmp_path):
    #   0 - 1 (weight 7), 1 - 2 (weight 9); vertex 3 isolated (blank line); fmt 11: one vertex
    #   weight per line first, skipped; '%' lines are not vertices
    text = "% header comment\n4 2 11\n5 2 7\n% between\n6 1 7 3 9\n8 2 9\n\n"
    A = read(write(tmp_path, "w.graph", text))
    assert A.dtype == np.int64 and A.shape == (4, 4)
    assert (dense(A) == [[0, 7, 0, 0], [7, 0, 9, 0], [0, 9, 0, 0], [0, 0, 0, 0]]).all()
    # fmt 100 with ncon ignored: a vertex size first; fmt 10 with ncon 2: two weights first
    B = read(write(tmp_path, "s.graph", "3 1 100\n1 2\n1 1\n1\n"))
    C = read(write(tmp_path, "v.graph", "3 1 10 2\n0 0 2\n0 0 1\n0 0\n"))
    for M in (B, C):
        assert M.is_iso and (dense(M) == [[0, 1, 0], [1, 0, 0], [0, 0, 0]]).all()


def test_metis_may_leave_out_the_blank_line_of_an_isolated_last_vertex(tmp_path):
    #   0 - 1, vertex 2 isolated: "3 1\n2\n1\n\n" in full, "3 1\n2\n1\n" when lines were
    #   joined with newlines
    for text in ("3 1\n2\n1\n\n", "3 1\n2\n1\n"):
        A = read(write(tmp_path, "g.graph", text))
        assert A.shape == (3, 3) and (dense(A) == [[0, 1, 0], [1, 0, 0], [0, 0, 0]]).all()
    with pytest.raises(FormatError, match="g.graph: line 3: the file ends after 2 vertex lines"):
        read(write(tmp_path, "g.graph", "3 1\n2\n1"))  # no final newline: nothing lost


def test_a_file_of_many_chunks_matches_numpy_and_reports_late_lines_exactly(tmp_path):
    # ~4 MB, so it is parsed as several chunks in parallel; comments and float weights only
    # appear in some chunks
    rng = np.random.default_rng(3)
    m = 250_000
    src, dst = rng.integers(0, 10**6, m), rng.integers(0, 10**6, m)
    w = rng.integers(0, 1000, m).astype(np.float64)
    lines = [f"{u}\t{v}\t{int(x)}" for u, v, x in zip(src.tolist(), dst.tolist(), w.tolist())]
    lines[200_000] = f"{src[200_000]} {dst[200_000]} 0.5"
    w[200_000] = 0.5
    lines.insert(100_000, "# a comment in the middle")
    path = write(tmp_path, "big.txt", "\n".join(lines) + "\n")
    A = read(path)
    assert A.dtype == np.float64
    n = int(max(src.max(), dst.max())) + 1
    assert_same(A, G.csr(src, dst, w, n))
    lines[230_000] = "12 x13 4"  # line 230001 of the file
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        FormatError, match="big.txt: line 230001: vertex id must be an integer; got 'x13'"
    ):
        read(path)


# ============================================================================== malformed files
MTX = "%%MatrixMarket matrix coordinate pattern general\n"
MTXR = "%%MatrixMarket matrix coordinate real general\n"

MALFORMED = [
    # name, text, line, reason
    ("nohead.mtx", "3 3 1\n1 2\n", 1, "expected the header '%%MatrixMarket"),
    ("array.mtx", "%%MatrixMarket matrix array real general\n2 2\n", 1, "'coordinate'"),
    (
        "complex.mtx",
        "%%MatrixMarket matrix coordinate complex general\n2 2 0\n",
        1,
        "field must be pattern, integer or real; got 'complex'",
    ),
    (
        "headonly.mtx",
        "%%MatrixMarket matrix coordinate real general\n",
        1,
        "the file ends before the size line",
    ),
    ("nosize.mtx", MTX + "% only comments\n", 2, "the file ends before the size line"),
    ("badsize.mtx", MTX + "3 3\n", 2, "expected the size line 'rows columns entries'"),
    ("width.mtx", MTXR + "3 3 2\n1 2 1\n2 3\n", 4, "expected 3 tokens ('row column value'); got 2"),
    (
        "square.mtx",
        "%%MatrixMarket matrix coordinate real symmetric\n% c\n2 3 1\n1 1 1\n",
        3,
        "a symmetric matrix must be square; got 2 x 3",
    ),
    (
        "remark.mtx",
        MTX + "3 3 2\n1 2\n% between\n2 3\n",
        4,
        "a '%' comment among the entries (comments belong to the header)",
    ),
    (
        "int.mtx",
        "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 99999999999999999999\n",
        3,
        "value 99999999999999999999 does not fit in int64",
    ),
    ("word.mtx", MTXR + "3 3 2\n1 2 0.5\n2 3 abc\n", 4, "value must be a number; got 'abc'"),
    ("zero.mtx", MTX + "3 3 2\n1 2\n0 3\n", 4, "row index 0 is below 1 (ids are 1-based)"),
    (
        "beyond.mtx",
        MTX + "3 3 2\n1 2\n2 4\n",
        4,
        "column index 4 exceeds the declared column count 3",
    ),
    (
        "fewer.mtx",
        MTX + "% c\n3 3 3\n1 2\n2 3\n",
        5,
        "the file ends after 2 entries; line 3 declares 3",
    ),
    ("more.mtx", MTX + "3 3 2\n1 2\n2 3\n3 1\n", 5, "more entries than the 2 declared on line 2"),
    ("nop.gr", "c comment\nc another\n", 2, "no problem line 'p sp <nodes> <arcs>'"),
    ("arcfirst.gr", "c comment\na 1 2 3\np sp 2 1\n", 2, "an arc before the problem line"),
    ("pmax.gr", "p max 3 2\n", 1, "expected the problem line 'p sp <nodes> <arcs>'"),
    ("width.gr", "p sp 3 2\na 1 2 3\na 2 3\n", 3, "expected 4 tokens (an arc 'a u v w'); got 3"),
    ("kind.gr", "p sp 3 2\na 1 2 3\ne 2 3 1\n", 3, "expected an arc 'a u v w' or a 'c' comment"),
    ("weight.gr", "p sp 3 2\na 1 2 3\na 2 3 1.5\n", 3, "arc weight must be an integer; got '1.5'"),
    ("zero.gr", "p sp 3 2\na 1 2 3\na 0 3 1\n", 3, "arc endpoint 0 is below 1"),
    (
        "beyond.gr",
        "p sp 3 2\na 1 2 3\na 2 4 1\n",
        3,
        "arc endpoint 4 exceeds the declared vertex count 3",
    ),
    (
        "fewer.gr",
        "p sp 3 3\na 1 2 3\na 2 3 1\nc end\n",
        4,
        "the file ends after 2 arcs; line 1 declares 3",
    ),
    (
        "more.gr",
        "c x\np sp 3 1\na 1 2 3\nc between\na 2 3 1\n",
        5,
        "more arcs than the 1 declared on line 2",
    ),
    ("width.txt", "# x\n0 1\n1 2 3\n", 3, "expected 2 tokens ('u v' like line 2); got 3"),
    ("four.txt", "0 1 2 3\n", 1, "expected 2 or 3 tokens ('u v' or 'u v w'); got 4"),
    ("word.txt", "0 1\n1 two\n", 2, "vertex id must be an integer; got 'two'"),
    ("negative.el", "0 1\n-1 2\n", 2, "vertex id -1 is below 0 (ids are 0-based)"),
    ("weight.wel", "0 1 1\n1 2 x\n", 2, "weight must be a number; got 'x'"),
    ("header.graph", "% c\n3\n", 2, "expected the header 'n m [fmt [ncon]]'"),
    ("fmt.graph", "3 1 2\n", 1, "fmt must be up to three 0/1 digits"),
    ("zero.graph", "3 1\n2\n0\n\n", 3, "neighbour 0 is below 1 (ids are 1-based)"),
    ("beyond.graph", "3 1\n2\n1 4\n\n", 3, "neighbour 4 exceeds the declared vertex count 3"),
    ("pairs.graph", "3 1 1\n2 5\n1 5 3\n\n", 3, "expected 'neighbour weight' pairs; got 3 tokens"),
    ("word.graph", "2 1\n2\nx\n", 3, "neighbour must be an integer; got 'x'"),
    ("fewer.graph", "4 1\n2\n1\n", 3, "the file ends after 2 vertex lines; line 1 declares 4"),
    ("more.graph", "2 1\n2\n1\n1\n", 4, "vertex line 3 exceeds the 2 vertices declared on line 1"),
    (
        "edges.graph",
        "% c\n3 2\n2\n1\n\n",
        2,
        "the header declares 2 edges but the lists hold 2 entries (4 expected",
    ),
]


@pytest.mark.parametrize("name, text, line, reason", MALFORMED, ids=[case[0] for case in MALFORMED])
def test_malformed_files_raise_format_error_naming_file_line_and_reason(
    tmp_path, name, text, line, reason
):
    path = write(tmp_path, name, text)
    with pytest.raises(FormatError) as info:
        read(path)
    message = str(info.value)
    assert f"{name}: line {line}: " in message
    assert reason in message
    assert isinstance(info.value, ValueError) and isinstance(info.value, gbla.GblaError)


def test_malformed_gzip_files_raise_format_error_with_line_numbers_of_the_text(tmp_path):
    path = write(tmp_path, "bad.txt.gz", "0 1\n1 2\n2 x\n")
    with pytest.raises(FormatError, match=r"bad.txt.gz: line 3: .*got 'x'"):
        read(path)
    garbage = tmp_path / "garbage.mtx.gz"
    garbage.write_bytes(b"this is not gzip data at all")
    with pytest.raises(FormatError, match="garbage.mtx.gz: not valid gzip data"):
        read(garbage)


@pytest.mark.parametrize(
    "text, line",
    [
        ("0 1\n0 1 2\n1 x\n", 2),  # a bad token count before a bad token
        ("0 1\n1 x\n0 1 2\n", 2),  # a bad token before a bad token count
    ],
)
def test_the_first_bad_line_is_reported_whichever_rule_it_breaks(tmp_path, text, line):
    with pytest.raises(FormatError, match=f"g.txt: line {line}: "):
        read(write(tmp_path, "g.txt", text))


def test_the_first_bad_endpoint_is_reported_whichever_column_it_is_in(tmp_path):
    path = write(tmp_path, "g.gr", "p sp 3 3\na 1 2 1\na 1 5 1\na 4 1 1\n")
    with pytest.raises(FormatError, match="g.gr: line 3: arc endpoint 5 exceeds"):
        read(path)


# ============================================================================== the cache
GR = "c rome-like\np sp 4 4\na 1 2 5\na 2 3 7\na 3 1 2\na 1 2 4\n"


def test_cache_is_written_beside_the_file_and_read_back(tmp_path):
    path = write(tmp_path, "g.gr.gz", GR)
    first = read(path, cache=True)
    cache = tmp_path / "g.gr.gz.npz"
    assert cache.is_file()
    assert (dense(read(path, cache=True)) == dense(first)).all()
    direct = read(cache)
    assert direct.dtype == np.int64 and (dense(direct) == dense(first)).all()
    assert dense(first)[0, 1] == 4  # the shorter of the two 1 -> 2 arcs


def test_cache_is_used_while_size_and_mtime_match_and_replaced_when_they_change(tmp_path):
    path = write(tmp_path, "g.gr", GR)
    read(path, cache=True)
    stat = path.stat()
    # same size and time, other content: the cache answers (proof that it is read)
    path.write_text(GR.replace("a 2 3 7", "a 2 3 8"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert dense(read(path, cache=True))[1, 2] == 7
    assert dense(read(path))[1, 2] == 8  # without cache=True the text is parsed
    # a new modification time: parsed again, and the cache rewritten
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert dense(read(path, cache=True))[1, 2] == 8
    assert dense(read(tmp_path / "g.gr.npz"))[1, 2] == 8


def test_one_cache_serves_every_weighted_and_directed_choice(tmp_path):
    path = write(tmp_path, "g.wel", "0 1 5\n1 2 7\n2 0 2\n")
    read(path, cache=True)
    P = read(path, cache=True, weighted=False)
    U = read(path, cache=True, directed=False)
    W = read(path, cache=True, weighted=True)
    assert P.is_iso and P.nvals == 3
    assert U.is_symmetric and U.nvals == 6 and dense(U)[1, 0] == 5
    assert W.dtype == np.int64 and dense(W)[1, 2] == 7


def test_a_damaged_cache_is_replaced_and_a_damaged_npz_raises(tmp_path):
    path = write(tmp_path, "g.gr", GR)
    cache = tmp_path / "g.gr.npz"
    cache.write_bytes(b"not an npz")
    assert dense(read(path, cache=True))[0, 1] == 4
    assert dense(read(cache))[0, 1] == 4
    bad = tmp_path / "other.npz"
    np.savez(bad, something=np.arange(3))
    with pytest.raises(
        FormatError,
        match="other.npz: holds neither a sparse matrix of "
        r"scipy.sparse.save_npz nor a gbla graph cache \("
        "arrays: something\\)",
    ):
        read(bad)


def test_a_cache_that_cannot_be_written_warns_and_the_graph_is_still_read(tmp_path):
    path = write(tmp_path, "g.gr", GR)
    (tmp_path / "g.gr.npz").mkdir()  # something that is not a file stands in the way
    with pytest.warns(RuntimeWarning, match="could not write the cache"):
        A = read(path, cache=True)
    assert dense(A)[0, 1] == 4


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0, reason="root writes into read-only directories"
)
def test_a_read_only_directory_warns_and_the_graph_is_still_read(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = write(folder, "g.gr", GR)
    folder.chmod(0o555)
    try:
        with pytest.warns(RuntimeWarning, match="could not write the cache"):
            A = read(path, cache=True)
    finally:
        folder.chmod(0o755)
    assert dense(A)[0, 1] == 4


def test_a_real_data_file_round_trips_through_its_cache(tmp_path):
    path = tmp_path / "power.graph"
    shutil.copy(data_file("small/power.graph"), path)
    A = read(path, cache=True)
    B = read(path, cache=True)
    assert B.is_iso and (A.to_scipy() != B.to_scipy()).nnz == 0


# ============================================================================== SciPy .npz
#   the fixture: 0 -> 1 (2.5), 1 -> 2 (-1), 2 -> 0 (4), vertex 3 isolated
FIXTURE = np.array([[0, 2.5, 0, 0], [0, 0, -1, 0], [4, 0, 0, 0], [0, 0, 0, 0]])


@pytest.mark.parametrize("layout", ["csr", "csc", "coo", "bsr", "dia"])
@pytest.mark.parametrize("container", [sp.csr_array, sp.csr_matrix])
def test_a_scipy_save_npz_file_is_read_in_every_format(tmp_path, layout, container):
    path = tmp_path / "g.npz"
    sp.save_npz(path, container(FIXTURE).asformat(layout))
    A = read(path)
    assert A.shape == (4, 4) and A.dtype == np.float64 and not A.is_iso
    assert (dense(A) == FIXTURE).all()
    U = read(path, directed=False)
    assert U.is_symmetric and dense(U)[1, 0] == 2.5


def test_a_scipy_npz_keeps_integer_values_and_reads_bool_as_the_pattern(tmp_path):
    sp.save_npz(tmp_path / "i.npz", sp.csr_array(FIXTURE.astype(np.int64)))
    A = read(tmp_path / "i.npz")
    assert A.dtype == np.int64 and dense(A)[2, 0] == 4
    sp.save_npz(tmp_path / "b.npz", sp.csr_array(FIXTURE != 0))
    P = read(tmp_path / "b.npz")
    assert P.is_iso and P.nvals == 3 and (dense(P) == (FIXTURE != 0)).all()
    with pytest.raises(FormatError, match=r"b.npz: the matrix holds bool values \(no weights\)"):
        read(tmp_path / "b.npz", weighted=True)


def test_repeated_entries_of_a_scipy_coo_npz_follow_dup_op(tmp_path):
    #   (0, 1) three times: 5, 2, 7
    S = sp.coo_array(([5.0, 2.0, 7.0], ([0, 0, 0], [1, 1, 1])), shape=(2, 2))
    path = tmp_path / "dup.npz"
    sp.save_npz(path, S)
    assert dense(read(path))[0, 1] == 2
    assert dense(read(path, dup_op=gbla.semirings.binary.plus))[0, 1] == 14
    with pytest.raises(FormatError, match="dup.npz: .*repeated"):
        read(path, dup_op=None)


@pytest.mark.parametrize(
    "S, reason",
    [
        (
            sp.csr_array(np.ones((2, 3))),
            r"a graph's matrix must be square \(n x n\); got shape 2 x 3",
        ),
        (
            sp.csr_array(np.eye(2, dtype=np.complex128)),
            "values must be bool, integer or real; got complex128",
        ),
    ],
    ids=["rectangular", "complex"],
)
def test_a_scipy_npz_that_is_no_graph_raises_format_error(tmp_path, S, reason):
    path = tmp_path / "m.npz"
    sp.save_npz(path, S)
    with pytest.raises(FormatError, match=f"m.npz: {reason}"):
        read(path)


def test_reading_a_scipy_npz_leaves_the_file_as_it_was(tmp_path):
    path = tmp_path / "g.npz"
    sp.save_npz(path, sp.csr_array(FIXTURE))
    before, stat = path.read_bytes(), path.stat()
    read(path)
    read(path, directed=False, weighted=False)
    assert path.read_bytes() == before and path.stat().st_mtime_ns == stat.st_mtime_ns
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.npz"]


def test_a_scipy_npz_where_the_cache_would_go_is_never_replaced(tmp_path):
    text = write(tmp_path, "g.txt", "0 1\n1 2\n")
    mine = tmp_path / "g.txt.npz"  # the user's own file, not a cache
    sp.save_npz(mine, sp.csr_array(FIXTURE))
    before = mine.read_bytes()
    with pytest.warns(RuntimeWarning, match="holds a SciPy sparse matrix, not a gbla cache"):
        A = read(text, cache=True)
    assert A.shape == (3, 3) and mine.read_bytes() == before


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "{path}", "--algo", "bfs", "--sources", "2", "--device", "cpu", "--no-progress"],
        ["bfs", "{path}", "--source", "0", "--device", "cpu"],
        ["sssp", "{path}", "--source", "0", "--device", "cpu"],
    ],
    ids=["bench", "bfs", "sssp"],
)
def test_the_command_line_takes_a_scipy_npz_as_its_graph(tmp_path, capsys, argv):
    from gbla import cli

    path = tmp_path / "ring.npz"
    #   a directed ring 0 -> 1 -> ... -> 7 -> 0 with weights 1..8
    n = 8
    sp.save_npz(
        path,
        sp.coo_array((np.arange(1.0, n + 1), (np.arange(n), (np.arange(n) + 1) % n)), shape=(n, n)),
    )
    status = cli.main([a.format(path=path) for a in argv])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "ring.npz" in out


# ============================================================================== huge sizes
def _skip_if_memory_holds(gib):
    have = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if have > gib * 2**30:
        pytest.skip(f"this machine has more than {gib} GiB of memory")


@pytest.mark.parametrize(
    "name, text, line",
    [
        ("huge.txt", "# the issue's file\n0 1\n1 100000000000\n2 0\n", 3),
        ("huge.wel", "0 1 5\n100000000000 2 7\n", 2),
        ("huge.el.gz", "0 1\n1 2\n100000000000 0\n", 3),
    ],
)
def test_an_edge_list_id_too_large_for_memory_raises_format_error_naming_the_gib(
    tmp_path, name, text, line
):
    # n is the largest id + 1: 100000000001 row pointers alone are 745.1 GiB
    _skip_if_memory_holds(745)
    with pytest.raises(
        FormatError,
        match=rf"{re.escape(name)}: line {line}: vertex id "
        r"100000000000 \(a graph of 100000000001 vertices\) "
        r"needs 745.1 GiB to read; this machine has [\d,.]+ GiB",
    ):
        read(write(tmp_path, name, text))


def test_a_huge_id_deep_in_a_file_of_many_chunks_is_named_at_its_line(tmp_path):
    # ~4 MB: the id is found in a chunk parsed by a worker thread, its line counted from there
    _skip_if_memory_holds(745)
    lines = [f"{k} {k + 1}" for k in range(300_000)]
    lines[250_000] = "250000 100000000000"  # line 250001
    with pytest.raises(FormatError, match=r"big.txt: line 250001: vertex id 100000000000 "):
        read(write(tmp_path, "big.txt", "\n".join(lines) + "\n"))


def test_a_scipy_npz_shape_too_large_for_memory_raises_format_error_naming_the_gib(tmp_path):
    _skip_if_memory_holds(7450)
    path = tmp_path / "huge.npz"
    sp.save_npz(path, sp.coo_array(([1.0], ([0], [1])), shape=(10**12, 10**12)))
    with pytest.raises(
        FormatError,
        match=r"huge.npz: a 1000000000000 x 1000000000000 matrix "
        r"needs 7,450.6 GiB to read; this machine has",
    ):
        read(path)


# ============================================================================== write_mtx
def matrix(rows, cols, values, n, dtype=None):
    values = None if values is None else np.asarray(values, dtype=dtype)
    return gbla.Matrix.from_edges(np.array(rows), np.array(cols), values, n, device="cpu")


@pytest.mark.parametrize(
    "name, A, dtype",
    [
        ("pattern.mtx", matrix([0, 1, 3], [1, 2, 0], None, 4), np.bool_),
        ("int.mtx", matrix([0, 1, 3], [1, 2, 0], [5, -2, 2**40], 4, np.int64), np.int64),
        ("int32.mtx", matrix([0, 2], [1, 2], [7, 0], 3, np.int32), np.int64),
        (
            "float.mtx",
            matrix([0, 1, 2, 3], [1, 2, 3, 0], [0.1, -1e-300, np.inf, np.nan], 4),
            np.float64,
        ),
        ("float32.mtx", matrix([0, 1], [1, 0], [0.1, 3.5], 2, np.float32), np.float64),
        ("symmetric.mtx", matrix([0, 1, 1, 2], [1, 0, 2, 1], [1.5, 1.5, 2.0, 2.0], 3), np.float64),
        ("empty.mtx", matrix([], [], None, 5), np.bool_),
        ("zero.mtx", matrix([], [], None, 0), np.bool_),
        ("compressed.mtx.gz", matrix([0, 4], [4, 0], [3, 9], 5, np.int64), np.int64),
    ],
)
def test_write_mtx_round_trips_through_read(tmp_path, name, A, dtype):
    path = tmp_path / name
    gbla.io.write_mtx(path, A, comment="written by\ngbla's tests")
    B = read(path)
    assert B.shape == A.shape and B.dtype == dtype and B.is_iso == A.is_iso
    assert_same(B, A.to_scipy(), values=not A.is_iso)
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt") as f:
        head = [f.readline() for _ in range(3)]
    assert head[1:] == ["% written by\n", "% gbla's tests\n"]


def test_write_mtx_writes_a_bool_matrix_with_false_values_as_integers(tmp_path):
    A = matrix([0, 1], [1, 0], [True, False], 2)
    gbla.io.write_mtx(tmp_path / "b.mtx", A)
    B = read(tmp_path / "b.mtx")
    assert B.dtype == np.int64 and (dense(B) == [[0, 1], [0, 0]]).all() and B.nvals == 2


def test_write_mtx_rejects_bad_arguments(tmp_path):
    A = matrix([0], [1], None, 2)
    with pytest.raises(gbla.DomainMismatch, match="A must be a gbla Matrix"):
        gbla.io.write_mtx(tmp_path / "x.mtx", A.to_scipy())
    with pytest.raises(gbla.InvalidValue, match="comment must be a str or None"):
        gbla.io.write_mtx(tmp_path / "x.mtx", A, comment=3)
    with pytest.raises(gbla.InvalidValue, match="path must be a str or os.PathLike"):
        gbla.io.write_mtx(3, A)


# ============================================================================== bad arguments
def test_an_unknown_extension_names_the_path_and_lists_the_known_ones(tmp_path):
    path = write(tmp_path, "graph.csv", "0 1\n")
    with pytest.raises(gbla.InvalidValue) as info:
        read(path)
    message = str(info.value)
    assert message.startswith("path must end in one of") and "graph.csv" in message
    for ext in (".mtx", ".txt", ".el", ".gr", ".graph", ".npz"):
        assert ext in message


def test_a_missing_file_names_the_path(tmp_path):
    with pytest.raises(gbla.InvalidValue, match="path must name an existing file; got .*nope.gr"):
        read(tmp_path / "nope.gr")


@pytest.mark.parametrize(
    "kwargs, arg",
    [
        (dict(weighted=1), "weighted"),
        (dict(weighted=0), "weighted"),
        (dict(weighted="yes"), "weighted"),
        (dict(directed=0), "directed"),
        (dict(cache=1), "cache"),
    ],
)
def test_bad_choices_raise_invalid_value(tmp_path, kwargs, arg):
    path = write(tmp_path, "g.txt", "0 1\n")
    with pytest.raises(gbla.InvalidValue, match=f"{arg} must be"):
        read(path, **kwargs)


@pytest.mark.parametrize(
    "text, declared",
    [
        (
            "%%MatrixMarket matrix coordinate real general\n"
            "1000000000000 1000000000000 3\n1 1 1.0\n",
            "a 1000000000000 x 1000000000000 matrix of 3 entries",
        ),
        (
            "%%MatrixMarket matrix coordinate pattern symmetric\n5 5 999999999999\n1 1\n",
            "a 5 x 5 matrix of 999999999999 entries",
        ),
        ("p sp 1000000000000 2\na 1 2 3\n", "a graph of 1000000000000 nodes and 2 arcs"),
        ("1000000000000 1\n2\n1\n", "a graph of 1000000000000 vertices and 1 edges"),
    ],
    ids=["mtx rows", "mtx entries", "dimacs", "metis"],
)
def test_a_header_larger_than_memory_raises_a_format_error_naming_the_size(
    tmp_path, text, declared
):
    suffix = ".mtx" if text.startswith("%%") else (".gr" if text.startswith("p") else ".graph")
    path = tmp_path / f"huge{suffix}"
    path.write_text(text)
    with pytest.raises(
        FormatError,
        match=rf"line \d: {declared} needs [\d,.]+ GiB to read; "
        r"this machine has [\d,.]+ GiB",
    ):
        gbla.io.read(path)


def test_the_test_summary_says_how_many_skipped_for_want_of_data(tmp_path):
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, GBLA_DATA=str(tmp_path))  # an empty folder: every data test skips
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",
            "tests/test_io.py",
            "-k",
            "real or snap",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    found = re.search(r"(\d+) tests skipped: graph files not found under (\S+)", result.stdout)
    assert found and int(found.group(1)) > 0 and found.group(2) == str(tmp_path), result.stdout[
        -2000:
    ]
