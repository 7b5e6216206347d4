"""Graphs shared by the BFS, SSSP and validator tests: random graphs drawn with hypothesis, and
readers of the real graphs in ../shared/data (formats in its MANIFEST.md), each returning a
canonical scipy CSR array (sorted, no duplicates; explicit zeros kept as zero-weight edges).
"""

import gzip
import tarfile
from dataclasses import dataclass

import numpy as np
import scipy.io
import scipy.sparse as sp
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import gbla

from .conftest import data_file

# The ``device`` fixture is a plain string that no example changes.
FIXTURE_OK = settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


def to_networkx(g, directed, weighted, order=None):
    """g as a networkx DiGraph (or Graph), its nodes added in ``order`` (default 0..n-1) and
    each edge weighted by g.w when ``weighted``."""
    import networkx as nx

    H = nx.DiGraph() if directed else nx.Graph()
    H.add_nodes_from(range(g.n) if order is None else order)
    for u, v, w in zip(g.src.tolist(), g.dst.tolist(), g.w.tolist()):
        H.add_edge(u, v, **({"weight": w} if weighted else {}))
    return H


# LDBC Graphalytics writes the largest int64 for a vertex BFS did not reach.
LDBC_UNREACHED = 9223372036854775807


# Sources every algorithm must reject, with the exception each raises (on a 4-vertex graph).
BAD_SOURCES = [
    (1.0, gbla.InvalidValue),
    (np.float64(1.0), gbla.InvalidValue),
    (True, gbla.InvalidValue),
    (np.bool_(False), gbla.InvalidValue),
    ("0", gbla.InvalidValue),
    (None, gbla.InvalidValue),
    ([[0]], gbla.InvalidValue),
    ([0, 7], gbla.InvalidIndex),
    (-1, gbla.InvalidIndex),
    (4, gbla.InvalidIndex),
    (2**70, gbla.InvalidIndex),
]  # a list is several sources; a list inside one is not a vertex


# ============================================================================== random graphs
@dataclass(frozen=True)
class Graph:
    """Edges src[t] -> dst[t] of weight w[t], each (src, dst) pair once."""

    n: int
    src: np.ndarray
    dst: np.ndarray
    w: np.ndarray

    def scipy(self):
        return csr(self.src, self.dst, self.w, self.n)

    def matrix(self, device, *, index_dtype=None, via="edges"):
        """The gbla.Matrix, built from the edge arrays or from a scipy matrix."""
        if via == "scipy":
            return gbla.Matrix.from_scipy(self.scipy(), device=device, index_dtype=index_dtype)
        return gbla.Matrix.from_edges(
            self.src, self.dst, self.w, self.n, device=device, index_dtype=index_dtype
        )


def csr(src, dst, w, n):
    """A canonical CSR array of the edges; a repeated (src, dst) pair keeps its smallest weight
    (SciPy would sum it)."""
    src, dst, w = (np.asarray(a) for a in (src, dst, w))
    key = src.astype(np.int64) * max(n, 1) + dst
    order = np.lexsort((w, key))  # by key, then weight: the first of each run is the minimum
    key, w = key[order], w[order]
    first = np.ones(len(key), bool)
    first[1:] = key[1:] != key[:-1]
    key, w = key[first], w[first]
    return sp.coo_array((w, (key // max(n, 1), key % max(n, 1))), shape=(n, n)).tocsr()


# frontier.cuh's GBLA_HUGE: a push spreads the edges of a vertex of at least this many
# out-edges over the whole grid (the device product's and the persistent BFS's spread bin)
HUGE = 4096


def hubs(count, seed=0):
    """0 -> hubs 1..count, each hub -> about HUGE leaves of a shared pool (so that the hubs'
    edges race for the same leaves), weights 1..5: a frontier of hubs, more than a batch of the
    spread bin (256) where count is, the first at HUGE itself, the second just under it."""
    rng = np.random.default_rng(seed)
    first = 1 + count
    pool = 40 * count
    degrees = rng.integers(HUGE - 200, HUGE + 2000, count)
    degrees[:2] = HUGE, HUGE - 1
    src = [np.zeros(count, np.int64)]
    dst = [np.arange(1, first)]
    for hub, degree in enumerate(degrees, start=1):
        src.append(np.full(degree, hub))
        dst.append(first + rng.choice(pool, degree, replace=False))
    src, dst = np.concatenate(src), np.concatenate(dst)
    return csr(src, dst, rng.integers(1, 6, len(src)).astype(np.float64), first + pool)


@st.composite
def graphs(draw, *, max_n=24, weights=st.integers(0, 20), directed=None, min_n=1):
    """A random graph: n vertices, up to 3n edges (self-loops included) with drawn weights;
    undirected (each edge stored both ways with one weight) when ``directed`` is False, either
    when None."""
    n = draw(st.integers(min_n, max_n))
    edges = draw(
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), weights),
            max_size=3 * n,
            unique_by=lambda e: e[:2],
        )
    )
    if directed is None:
        directed = draw(st.booleans())
    if not directed:
        both = {}
        for u, v, w in edges:
            both.setdefault((min(u, v), max(u, v)), w)
        edges = [e for (u, v), w in both.items() for e in {(u, v, w), (v, u, w)}]
    src = np.array([e[0] for e in edges], np.int64)
    dst = np.array([e[1] for e in edges], np.int64)
    w = np.array([e[2] for e in edges], dtype=np.float64)
    return Graph(n, src, dst, w)


@st.composite
def medium_graphs(draw, *, max_weight=100):
    """A random graph of 50 to 400 vertices and average out-degree 1 to 8 (directed or made
    undirected), drawn through a seed: large enough for frontiers that make 'auto' pull."""
    n = draw(st.integers(50, 400), label="n")
    degree = draw(st.floats(1.0, 8.0), label="average degree")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
    m = int(n * degree)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.integers(0, max_weight + 1, m).astype(np.float64)
    if not draw(st.booleans(), label="directed"):
        src, dst, w = np.r_[src, dst], np.r_[dst, src], np.r_[w, w]
    S = csr(src, dst, w, n)  # one weight per pair: the smaller, the same both ways
    rows = np.repeat(np.arange(n), np.diff(S.indptr))
    return Graph(n, rows, S.indices.astype(np.int64), S.data)


# ============================================================================== file readers
def _open(path):
    return gzip.open(path, "rt") if str(path).endswith(".gz") else open(path)


def read_mtx(relative):
    """Matrix Market (gzip or not; a symmetric file gives both directions)."""
    path = data_file(relative)
    with gzip.open(path, "rb") if str(path).endswith(".gz") else open(path, "rb") as f:
        S = sp.csr_array(scipy.io.mmread(f))
    S.sum_duplicates()
    return S


def read_snap(relative):
    """SNAP edge list: '#' comments, 'u v' per line, 0-based; a repeated edge counts once."""
    e = np.loadtxt(data_file(relative), comments="#", dtype=np.int64, ndmin=2)
    n = int(e.max()) + 1
    return csr(e[:, 0], e[:, 1], np.ones(len(e)), n)


def read_metis(relative):
    """METIS .graph, unweighted: header 'n m [fmt]', then line i lists vertex i's neighbours
    (1-based); each undirected edge appears on both endpoints' lines."""
    with _open(data_file(relative)) as f:
        lines = [line for line in f.read().split("\n") if not line.startswith("%")]
    n, m = (int(x) for x in lines[0].split()[:2])
    rows = (lines[1 : n + 1] + [""] * n)[:n]  # a trailing isolated vertex may lose its line
    counts = np.array([len(r.split()) for r in rows])
    cols = np.array(" ".join(rows).split(), dtype=np.int64) - 1
    assert len(cols) == 2 * m, f"{relative}: {len(cols)} adjacency entries for m = {m}"
    return csr(np.repeat(np.arange(n), counts), cols, np.ones(len(cols)), n)


def read_dimacs(relative):
    """DIMACS 9 shortest-path .gr: 'p sp n m', 'a u v w' (1-based) as the 0-based arcs as given
    (parallel arcs included) and the declared n: (src, dst, w, n)."""
    path = data_file(relative)
    with _open(path) as f:
        n = next(int(line.split()[2]) for line in f if line.startswith("p"))
    a = np.loadtxt(path, comments=("c", "p"), usecols=(1, 2, 3), dtype=np.int64, ndmin=2)
    return a[:, 0] - 1, a[:, 1] - 1, a[:, 2].astype(np.float64), n


def read_weighted_edges(relative):
    """'u v w' per line, 0-based (cuGraph's CSV, GAP's .wel); returns the raw arrays and n."""
    e = np.loadtxt(data_file(relative), ndmin=2)
    src, dst = e[:, 0].astype(np.int64), e[:, 1].astype(np.int64)
    return src, dst, e[:, 2], int(max(src.max(), dst.max())) + 1


def symmetrized(S):
    """The undirected graph of S: both directions of every edge, the smaller weight kept."""
    C = S.tocoo()
    return csr(np.r_[C.row, C.col], np.r_[C.col, C.row], np.r_[C.data, C.data], S.shape[0])


# ---------------------------------------------------------------- LDBC Graphalytics validation
def ldbc_vertices(relative):
    """The vertex ids of a '.v' file (one per line); vertex k of the graph is ids[k]."""
    return np.loadtxt(data_file(relative), dtype=np.int64, ndmin=1)


def ldbc_edges(relative, ids, *, directed):
    """A '.e' file ('u v [w]' per line, LDBC ids) as a CSR array over the ids' positions;
    unweighted edges get weight 1."""
    e = np.loadtxt(data_file(relative), ndmin=2)
    src = np.searchsorted(ids, e[:, 0].astype(np.int64))
    dst = np.searchsorted(ids, e[:, 1].astype(np.int64))
    w = e[:, 2] if e.shape[1] > 2 else np.ones(len(e))
    S = csr(src, dst, w, len(ids))
    return S if directed else symmetrized(S)


def ldbc_adjacency(relative, ids, *, directed):
    """An adjacency-list input ('v n1 n2 ...' per line, LDBC ids) as an unweighted CSR array."""
    src, dst = [], []
    with open(data_file(relative)) as f:
        for line in f:
            v, *nbrs = (int(x) for x in line.split())
            src += [v] * len(nbrs)
            dst += nbrs
    S = csr(np.searchsorted(ids, src), np.searchsorted(ids, dst), np.ones(len(src)), len(ids))
    return S if directed else symmetrized(S)


def ldbc_output(relative):
    """An expected output ('id value' per line) as (ids, values): BFS levels as int64 with -1
    for unreached, SSSP distances as float64 with inf ('Infinity' / 'infinity')."""
    with open(data_file(relative)) as f:
        pairs = [line.split() for line in f if line.strip()]
    ids = np.array([int(p[0]) for p in pairs], np.int64)
    raw = [p[1] for p in pairs]
    if all(r.lstrip("-").isdigit() for r in raw):
        values = np.array([int(r) for r in raw], np.int64)
        return ids, np.where(values == LDBC_UNREACHED, -1, values)
    return ids, np.array([float(r) for r in raw])


# ---------------------------------------------------------------- cuGraph's NetworkX results
def cugraph_results(algo):
    """NetworkX results for the tiny/cugraph graphs from resultsets.tar.gz: a list of
    (arguments as a dict of strings, {vertex: value}) for one algorithm."""
    path = data_file("tiny/cugraph/resultsets.tar.gz")
    with tarfile.open(path) as tar:
        index = tar.extractfile("./traversal_mappings.csv").read().decode().splitlines()
        found = []
        for line in index[1:]:
            uuid, *rest = line.split()
            args = dict(zip(rest[::2], rest[1::2]))
            if args.get("algo") != algo:
                continue
            rows = tar.extractfile(f"./{uuid}.csv").read().decode().splitlines()[1:]
            values = {int(r.split(",")[0]): float(r.split(",")[1]) for r in rows}
            found.append((args, values))
    return found
