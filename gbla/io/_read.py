"""read and read_mtx: a graph file, its format chosen by extension, into a Matrix."""

import os

import numpy as np

from .. import _backend as B
from .. import _validation as V
from .. import _storage
from ..exceptions import DuplicateIndex
from ..matrix import DUP_OP, Matrix
from ._cache import _load_cache, _write_cache
from ._errors import FormatError
from ._formats import _PARSERS
from ._text import _Stream

# Text readers by extension (after any ".gz"); ".npz" is the binary cache.
_TEXT_KINDS = {".mtx": "mtx", ".txt": "edges", ".el": "edges", ".wel": "edges", ".gr": "dimacs",
               ".graph": "metis"}
_EXTENSIONS = tuple(_TEXT_KINDS) + (".npz",)


# ================================================================================ public API
def read(path, weighted=None, *, dup_op=DUP_OP, cache=False, device=None, directed=None):
    """Read a graph file into a Matrix; the format follows the extension (``.gz`` after it:
    gzip).

    - ``.mtx``: Matrix Market coordinate, 1-based; ``symmetric`` and ``skew-symmetric`` files
      give both directions.
    - ``.txt``, ``.el``, ``.wel``: SNAP edge list, ``u v`` or ``u v w`` per line, 0-based,
      ``#`` comment lines; n = largest id + 1; directed.
    - ``.gr``: DIMACS 9 shortest path, ``c`` comments, ``p sp n m``, then ``a u v w`` per arc
      (1-based, directed).
    - ``.graph``: METIS, header ``n m [fmt [ncon]]``, ``%`` comment lines, then line i lists
      vertex i's neighbours (1-based; each undirected edge on both ends' lines; fmt 1 or 001:
      ``v w`` pairs, 10: ncon vertex weights first, 11: both, 100: a vertex size first; vertex
      sizes and weights are skipped). Blank lines are vertices without neighbours; the last
      one may be left out.
    - ``.npz``: the cache written by ``cache=True``.

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
        An unwritable directory only warns (RuntimeWarning).
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
        arc endpoint beyond the ``p`` line's vertex count, fewer entries than declared).

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
        A, unweighted = _load_cache(path, str(path))
    else:
        A, unweighted = _read_text(path, kind, cache, dup_op)
    if weighted is False:
        A = A.pattern()
    elif weighted is True and A.is_iso:
        raise FormatError(f"{path}: {unweighted} (weighted=True needs weights)")
    if directed is False:
        if A.nrows != A.ncols:
            raise V.invalid_value("directed", f"be None or True for the {A.nrows} x {A.ncols} "
                                  f"matrix of {path}", directed)
        A = _symmetrized(A, dup_op)
    return A.to_device(device)


def read_mtx(path, *, device=None):
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
        raise V.invalid_value("path", f"end in one of {', '.join(_EXTENSIONS)} (text formats "
                              "optionally followed by .gz)", str(path))
    return kind


# ================================================================================ matrices
def _csr(src, dst, values, shape, dup_op=DUP_OP):
    """A canonical scipy CSR array of the arcs, repeated ones merged by ``dup_op``."""
    import scipy.sparse as sp
    rows, cols, values = _storage.merge_entries(src, dst, values, shape, dup_op, "cpu",
                                                arg="the file", what="edge", base=1)
    data = np.ones(len(rows), np.bool_) if values is None else values
    return sp.csr_array((data, (rows, cols)), shape=shape)


def _matrix(src, dst, values, shape, dup_op=DUP_OP):
    A = Matrix.from_scipy(_csr(src, dst, values, shape, dup_op), device="cpu")
    return A.pattern() if values is None else A


def _symmetrized(A, dup_op):
    """Both directions of every edge; the two weights of a pair combine by ``dup_op``."""
    C = A.to_device("cpu").to_scipy().tocoo()
    src, dst = np.r_[C.row, C.col].astype(np.int64), np.r_[C.col, C.row].astype(np.int64)
    try:
        return _matrix(src, dst, None if A.is_iso else np.r_[C.data, C.data], A.shape, dup_op)
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
    parsed = _PARSERS[kind](_Stream(path, str(path)))
    try:
        A = _matrix(parsed.src, parsed.dst, parsed.values, parsed.shape, dup_op)
    except DuplicateIndex as e:  # dup_op=None: the file's fault, said as FormatError
        raise FormatError(f"{path}: {e}") from None
    if cache:
        _write_cache(cache_path, A, parsed.unweighted, stat)
    return A, parsed.unweighted
