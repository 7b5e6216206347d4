"""read and read_mtx: a graph file, its format chosen by extension, into a Matrix."""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from .. import _backend as B
from .. import _storage
from .. import _validation as V
from ..exceptions import DuplicateIndex
from ..matrix import DUP_OP, Matrix
from ._cache import _holds_scipy_matrix, _load_cache, _load_npz, _write_cache
from ._errors import FormatError
from ._formats import _PARSERS
from ._mtx import _read_mtx
from ._text import _Stream

# Text readers by extension (after any ".gz"); ".npz" is binary (SciPy's or gbla's cache).
_TEXT_KINDS = {
    ".mtx": "mtx",
    ".txt": "edges",
    ".el": "edges",
    ".wel": "edges",
    ".gr": "dimacs",
    ".graph": "metis",
}
_EXTENSIONS = tuple(_TEXT_KINDS) + (".npz",)


# ================================================================================ public API
def read(
    path: str | os.PathLike,
    weighted: bool | None = None,
    *,
    dup_op: Any = DUP_OP,
    cache: bool = False,
    device: str | None = None,
    directed: bool | None = None,
) -> Matrix:
    """Read a graph file into a Matrix; the format follows the extension (``.gz`` after it:
    gzip).

    - ``.mtx``: Matrix Market coordinate, 1-based, read by ``scipy.io.mmread``
      (fast_matrix_market); ``symmetric``, ``skew-symmetric`` and (real) ``hermitian`` files
      give both directions. As SciPy does, what follows a line's last field is ignored, and
      comments are allowed in the header only.
    - ``.txt``, ``.el``, ``.wel``: SNAP edge list, ``u v`` or ``u v w`` per line, 0-based,
      ``#`` comment lines; n = largest id + 1; directed.
    - ``.gr``: DIMACS 9 shortest path, ``c`` comments, ``p sp n m``, then ``a u v w`` per arc
      (1-based, directed).
    - ``.graph``: METIS, header ``n m [fmt [ncon]]``, ``%`` comment lines, then line i lists
      vertex i's neighbours (1-based; each undirected edge on both ends' lines; fmt 1 or 001:
      ``v w`` pairs, 10: ncon vertex weights first, 11: both, 100: a vertex size first; vertex
      sizes and weights are skipped). Blank lines are vertices without neighbours; the last
      one may be left out.
    - ``.npz``: a square sparse matrix written by ``scipy.sparse.save_npz`` (any format; a
      bool matrix is a pattern: every stored entry is an edge), or the cache written by
      ``cache=True``; the arrays inside tell which.

    Parameters
    ----------
    path : str or os.PathLike
    weighted : {None, True, False}
        None: the values the file has (int64 when its weights are integers, as in DIMACS, METIS
        and integer Matrix Market; float64 for real ones; an iso bool pattern when it has none).
        False: the pattern only. True: the weights, raising FormatError if the file has none.
    cache : bool
        Write ``<path>.npz`` beside a text file after parsing it, and load that instead while
        its recorded size and modification time match the text file. The cache holds the graph
        as the file states it, so one cache serves every ``weighted`` and ``directed`` choice.
        An unwritable directory only warns (RuntimeWarning), as does a ``<path>.npz`` that
        holds a SciPy matrix: a user's file is never replaced.
    device : {'cpu', 'gpu', None}
        Where the Matrix lives; None: the GPU when CuPy sees one, else the CPU.
    directed : {None, True, False}
        False: make the graph undirected (both directions of every edge). None or True: the
        arcs as the file gives them (undirected formats give both directions already).

    dup_op : BinaryOp or None, default semirings.binary.min
        How parallel edges of a weighted graph combine, in file order: the smallest weight by
        default (the edge a shortest path takes, as in every entry point of gbla);
        ``binary.plus`` sums them (SciPy's rule); None raises FormatError naming the first
        repeated edge. An unweighted pattern keeps one. The cache holds the default's graph: a
        call with another dup_op parses the text.

    Returns
    -------
    Matrix
        n x n (rows x columns for a rectangular Matrix Market file); entry (u, v) is the edge
        u -> v.

    Raises
    ------
    InvalidValue
        ``path`` does not exist or has no known extension (the message lists them), or an
        argument is not one of its allowed values.
    FormatError
        The file is malformed; the message names the file, the line and the reason (e.g. an
        arc endpoint beyond the ``p`` line's vertex count, fewer entries than declared). Also
        a graph larger than this machine's memory, said before it is allocated, with the GiB it
        needs: a declared size (a header, a ``.npz`` shape) or a vertex id (an edge list's n is
        its largest id + 1).

    Examples
    --------
    >>> A = gbla.io.read("rome99.gr", device="cpu")            # doctest: +SKIP
    >>> A.dtype, A.nvals  # 8870 arcs, 11 of them parallel     # doctest: +SKIP
    (dtype('int64'), 8859)
    >>> U = gbla.io.read("p2p-Gnutella08.txt", directed=False, cache=True)  # doctest: +SKIP
    """
    V.optional_flag(weighted, "weighted")
    V.optional_flag(directed, "directed")
    cache = V.flag(cache, "cache")
    device = B.resolve_device(device)
    kind = _kind(V.path_like(path))
    path = _existing(path)
    if kind == "npz":
        A, unweighted = _load_npz(path, str(path), dup_op)
    else:
        A, unweighted = _read_text(path, kind, cache, dup_op)
    if weighted is False:
        A = A.pattern()
    elif weighted is True and A.is_iso:
        raise FormatError(f"{path}: {unweighted} (weighted=True needs weights)")
    if directed is False:
        if A.nrows != A.ncols:
            raise V.invalid_value(
                "directed",
                f"be None or True for the {A.nrows} x {A.ncols} matrix of {path}",
                directed,
            )
        A = _symmetrized(A, dup_op)
    return A.to_device(device)


def read_mtx(path: str | os.PathLike, *, device: str | None = None) -> Matrix:
    """Read a Matrix Market file (``.mtx`` or ``.mtx.gz``, whatever its name): ``read`` with the
    Matrix Market reader and its defaults.

    Parameters
    ----------
    path : str or os.PathLike
    device : {'cpu', 'gpu', None}

    Returns
    -------
    Matrix
        Both triangles of a symmetric file; an iso bool Matrix for a ``pattern`` file.

    Raises
    ------
    InvalidValue
        ``path`` does not exist.
    FormatError
        The file is malformed.
    """
    path = _existing(path)
    device = B.resolve_device(device)
    A, _ = _read_text(path, "mtx", False, DUP_OP)
    return A.to_device(device)


# ================================================================================ arguments
def _existing(path):
    path = V.path_like(path)
    if not path.is_file():
        raise V.invalid_value("path", "name an existing file", str(path))
    return path


def _kind(path):
    name = path.name.lower()
    if name.endswith(".npz"):
        return "npz"
    base = name[:-3] if name.endswith(".gz") else name
    kind = _TEXT_KINDS.get(os.path.splitext(base)[1])
    if kind is None:
        raise V.invalid_value(
            "path",
            f"end in one of {', '.join(_EXTENSIONS)} (text formats optionally followed by .gz)",
            str(path),
        )
    return kind


# ================================================================================ matrices
def _csr(src, dst, values, shape, dup_op=DUP_OP):
    """A canonical scipy CSR array of the arcs, repeated ones merged by ``dup_op``."""
    import scipy.sparse as sp

    data = np.ones(len(src), np.bool_) if values is None else values
    # SciPy's conversion (a counting sort by row, then each row sorted) is several times
    # faster than a sort of all the keys, but it sums repeats: kept when there were none (or
    # they are a pattern's, where a sum is the one True), else merged again by dup_op.
    S = sp.csr_array((data, (src, dst)), shape=shape)
    if values is None or S.nnz == len(src):
        return S
    rows, cols, values = _storage.merge_entries(
        src, dst, values, shape, dup_op, "cpu", arg="the file", what="edge", base=1
    )
    return sp.csr_array((values, (rows, cols)), shape=shape)


def _matrix(src, dst, values, shape, dup_op=DUP_OP):
    A = Matrix.from_scipy(_csr(src, dst, values, shape, dup_op), device="cpu")
    return A.pattern() if values is None else A


def _symmetrized(A, dup_op):
    """Both directions of every edge; the two weights of a pair combine by ``dup_op``."""
    S = A.to_device("cpu").to_scipy()
    if A.is_iso:  # a pattern has no weights to combine: SciPy's S + S.T (a bool OR) is it
        return Matrix.from_scipy(S + S.T, device="cpu").pattern()
    C = S.tocoo()
    src, dst = np.r_[C.row, C.col].astype(np.int64), np.r_[C.col, C.row].astype(np.int64)
    try:
        return _matrix(src, dst, np.r_[C.data, C.data], A.shape, dup_op)
    except DuplicateIndex as e:
        raise FormatError(f"directed=False: {e}") from None


def _read_text(path, kind, cache, dup_op):
    """The graph of a text file as it states it (on the CPU) and why it has no weights; through
    the cache when asked (which holds the default dup_op's graph)."""
    cache_path = path.with_name(path.name + ".npz")
    stat = path.stat()
    cache = cache and dup_op is DUP_OP
    if cache and cache_path.is_file():
        try:
            A, unweighted = _load_cache(cache_path, str(cache_path), source=stat)
            return A, unweighted
        except (OSError, ValueError):
            pass  # stale or damaged (FormatError is a ValueError): parse again and rewrite it
    if kind == "mtx":
        parsed = _read_mtx(path, str(path))
    else:
        parsed = _PARSERS[kind](_Stream(path, str(path)))
    try:
        A = _matrix(parsed.src, parsed.dst, parsed.values, parsed.shape, dup_op)
    except DuplicateIndex as e:  # dup_op=None: the file's fault, said as FormatError
        raise FormatError(f"{path}: {e}") from None
    if cache and cache_path.is_file() and _holds_scipy_matrix(cache_path):
        warnings.warn(
            f"gbla.io.read: {cache_path} holds a SciPy sparse matrix, not a gbla "
            "cache; it is left as it is and the graph was read without a cache",
            RuntimeWarning,
            stacklevel=3,
        )
    elif cache:
        _write_cache(cache_path, A, parsed.unweighted, stat)
    return A, parsed.unweighted
