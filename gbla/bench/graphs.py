"""The graphs of a benchmark: GRAPH arguments parsed and loaded, their size as Graph500 counts
it, SSSP weights for graphs without any, and the random sources every method searches from."""

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import _backend as B
from .. import _validation as V
from .. import datasets, generators, io
from .._storage import rows_of_entries
from ..exceptions import InvalidValue

SPEC_FORMS = "a graph file, rmat:SCALE[:EDGE_FACTOR], grid:ROWSxCOLS, rgg:SCALE or dataset:NAME"
DEFAULT_WEIGHTS = (1, 255)  # what --weights the SSSP benchmarks ask for


@dataclass(frozen=True)
class GraphSpec:
    """A parsed GRAPH argument: ``kind`` is 'file', 'rmat', 'grid', 'rgg' or 'dataset';
    ``args`` its parameters ((path,), (scale, edge_factor), (rows, cols), (scale,), (name,));
    ``text`` the argument as given, which labels the graph in every output."""

    text: str
    kind: str
    args: tuple


_SPEC_PATTERNS = {
    "rmat": re.compile(r"rmat:(\d+)(?::(\d+))?"),
    "grid": re.compile(r"grid:(\d+)x(\d+)"),
    "rgg": re.compile(r"rgg:(\d+)"),
    "dataset": re.compile(r"dataset:(\w+)"),
}


def _bad_spec(text, condition=f"be {SPEC_FORMS}"):
    return InvalidValue(V.message("GRAPH", condition, text))


def parse_graph_spec(text):
    """The GraphSpec of a GRAPH argument.

    Parameters
    ----------
    text : str
        A file gbla.io reads (``.mtx``, SNAP ``.txt``/``.el``, DIMACS ``.gr``, METIS
        ``.graph``, ``.npz``; gzip allowed), or ``rmat:SCALE``, ``rmat:SCALE:EDGE_FACTOR``,
        ``grid:ROWSxCOLS``, ``rgg:SCALE``, ``dataset:NAME`` (a graph of ``gbla.datasets``).

    Returns
    -------
    GraphSpec

    Raises
    ------
    InvalidValue
        A malformed spec, a file that does not exist, an unknown dataset name.

    Examples
    --------
    >>> from gbla.bench import parse_graph_spec
    >>> parse_graph_spec("rmat:10:8")
    GraphSpec(text='rmat:10:8', kind='rmat', args=(10, 8))
    """
    if not isinstance(text, str) or not text:
        raise _bad_spec(text)
    prefix = text.split(":", 1)[0]
    if prefix in _SPEC_PATTERNS and not Path(text).is_file():
        match = _SPEC_PATTERNS[prefix].fullmatch(text)
        if match is None:
            raise _bad_spec(text)
        if prefix == "dataset":
            return GraphSpec(text, prefix, (_dataset_name(text, match.group(1)),))
        if prefix == "rmat":
            scale, edge_factor = match.groups()
            return GraphSpec(text, prefix, (int(scale), int(edge_factor or 16)))
        return GraphSpec(text, prefix, tuple(int(g) for g in match.groups()))
    if not Path(text).is_file():
        raise _bad_spec(text, f"name an existing file or be {SPEC_FORMS.split(', ', 1)[1]}")
    return GraphSpec(text, "file", (text,))


def _dataset_name(text, name):
    if name not in datasets.names():
        raise _bad_spec(text, f"name a dataset from {list(datasets.names())}")
    return name


def default_graphs(device):
    """The graphs of a bare ``gbla bench``: the embedded power-grid dataset (when shipped) and
    a generated Graph500 rmat, scale 16 on the GPU and 12 on the CPU."""
    specs = []
    if "power_grid" in datasets.names():
        specs.append("dataset:power_grid")
    specs.append("rmat:16" if B.resolve_device(device) == "gpu" else "rmat:12")
    return specs


def load_graph(spec, *, device=None, seed=0):
    """The Matrix that ``spec`` (a GraphSpec or its text) names, on ``device``; generated
    graphs use ``seed``. Weights are those of the file or dataset; generated graphs have none."""
    if not isinstance(spec, GraphSpec):
        spec = parse_graph_spec(spec)
    device = B.resolve_device(device)
    if spec.kind == "rmat":
        return generators.rmat(*spec.args, seed=seed, device=device)
    if spec.kind == "grid":
        return generators.grid2d(*spec.args, device=device)
    if spec.kind == "rgg":
        return generators.rgg(*spec.args, seed=seed, device=device)
    if spec.kind == "dataset":
        return datasets.load(spec.args[0], device=device)
    return io.read(spec.args[0], device=device)


def sssp_weights(A, weights=None, seed=0):
    """``(W, generated)``: A itself when it has weights or ``weights`` is None (an unweighted
    graph then weighs 1 an edge), else A's structure with symmetric integer weights drawn
    uniformly from ``weights = (lo, hi)`` by :func:`gbla.generators.with_weights`;
    ``generated`` says which."""
    if A.dtype != np.bool_ or weights is None:
        return A, False
    return generators.with_weights(A, *weights, seed=seed), True


def graph_info(A):
    """Size of the graph as a dict: n, stored entries, symmetric, self-loops, ``edges``,
    Graph500's count: one per undirected edge of a symmetric graph (a self-loop, stored once,
    counts once), one per stored arc otherwise, and ``stored_bytes``: its row pointers, column
    indices and values (none for an unweighted graph), what a method's peak memory is measured
    against."""
    symmetric = bool(A.is_symmetric)
    loops = _loops_per_vertex(A)
    n_loops = int(loops.sum())
    edges = (A.nvals + n_loops) // 2 if symmetric else A.nvals
    return dict(
        n=A.nrows,
        nvals=A.nvals,
        symmetric=symmetric,
        self_loops=n_loops,
        edges=edges,
        dtype=A.dtype.name,
        device=A.device,
        stored_bytes=A.nbytes,
    )


def _loops_per_vertex(A):
    xp = B.xp_of(A.device)
    loops = xp.zeros(A.nrows, np.int64)
    # Not A._entry_rows(): it would cache an array of nvals rows on the matrix, device memory
    # every method would then carry.
    rows = rows_of_entries(A._indptr, A.nvals, xp)
    loops[A._indices[rows == A._indices]] = 1
    return B.to_host(loops)


def _edge_weights(A, symmetric):
    """Per vertex, what reaching it adds to the component's edge count (times 2 when
    symmetric: its stored entries, a self-loop counted twice so it totals one edge)."""
    deg = B.to_host(A._degrees()).astype(np.int64)
    return deg + _loops_per_vertex(A) if symmetric else deg


def pick_sources(A, count, seed=0):
    """``(warmup, sources)``: ``count`` + 1 vertices with an out-edge, drawn by
    ``numpy.random.default_rng(seed)``, distinct while the graph has enough of them (else drawn
    with repeats); the first is the untimed warm-up.

    Raises
    ------
    InvalidValue
        count < 1, or no vertex of A has an out-edge.
    """
    count = V.integer(count, "sources")
    if count < 1:
        raise V.invalid_value("sources", "be a positive integer", count)
    candidates = np.flatnonzero(B.to_host(A._degrees()))
    if candidates.size == 0:
        raise V.invalid_value(
            "A", "have a vertex with an out-edge to search from", f"{A.nvals} edges"
        )
    picks = np.random.default_rng(seed).choice(
        candidates, count + 1, replace=candidates.size < count + 1
    )
    return int(picks[0]), [int(s) for s in picks[1:]]
