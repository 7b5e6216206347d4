"""The binary ``.npz`` graphs: the cache that ``read(..., cache=True)`` writes beside a text
file, and a sparse matrix that ``scipy.sparse.save_npz`` wrote. The arrays they hold tell them
apart: the cache's ``version``, SciPy's ``format``."""

import os
import tempfile
import warnings
import zlib

import numpy as np

from ..exceptions import GblaError
from ..matrix import DUP_OP, Matrix
from ._errors import FormatError, _too_large

_CACHE_VERSION = 1
_NPZ_ERRORS = (OSError, ValueError, EOFError, zlib.error)  # what np.load raises on a bad file


def _write_cache(cache_path, A, unweighted, stat):
    S = A.to_scipy()
    arrays = dict(
        version=np.int64(_CACHE_VERSION),
        indptr=S.indptr,
        indices=S.indices,
        shape=np.array(A.shape, np.int64),
        dtype=np.array(A.dtype.name),
        iso=np.bool_(A.is_iso),
        unweighted=np.array(unweighted),
        source_size=np.int64(stat.st_size),
        source_mtime_ns=np.int64(stat.st_mtime_ns),
    )
    if not A.is_iso:
        arrays["values"] = S.data
    tmp = None
    try:
        # Written aside and renamed: a reader never sees half a cache.
        with tempfile.NamedTemporaryFile(
            dir=cache_path.parent, prefix=cache_path.name, suffix=".tmp", delete=False
        ) as f:
            tmp = f.name
            np.savez(f, **arrays)
        os.replace(tmp, cache_path)
    except OSError as e:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        warnings.warn(
            f"gbla.io.read: could not write the cache {cache_path} ({e}); the graph "
            "was read without it",
            RuntimeWarning,
            stacklevel=4,
        )


def _load_npz(path, name, dup_op=DUP_OP):
    """The graph of a ``.npz`` file, whichever of the two wrote it, and why it has no
    weights."""
    try:
        with np.load(path, allow_pickle=False) as z:
            names = set(z.files)
            shape = z["shape"] if "format" in names and "version" not in names else None
    except _NPZ_ERRORS as e:
        raise FormatError(f"{name}: not a readable .npz file ({e})") from None
    if shape is not None:
        return _load_scipy(path, name, shape, dup_op)
    if "version" not in names:
        raise FormatError(
            f"{name}: holds neither a sparse matrix of scipy.sparse.save_npz nor "
            f"a gbla graph cache (arrays: {', '.join(sorted(names)) or 'none'})"
        )
    return _load_cache(path, name)


def _holds_scipy_matrix(path):
    """Whether ``path`` is a .npz of scipy.sparse.save_npz (a user's file, never a cache to
    replace)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return "format" in z.files and "version" not in z.files
    except _NPZ_ERRORS:
        return False


def _load_scipy(path, name, shape, dup_op):
    import scipy.sparse as sp

    dims = tuple(int(k) for k in np.ravel(shape)) if shape.dtype.kind in "iu" else ()
    if len(dims) != 2 or dims[0] != dims[1]:
        raise FormatError(
            f"{name}: a graph's matrix must be square (n x n); got shape "
            f"{' x '.join(map(str, dims)) or repr(shape)}"
        )
    n = dims[0]
    too_large = _too_large(f"a {n} x {n} matrix", n, 0, False)  # before the arrays are read
    if too_large is not None:
        raise FormatError(f"{name}: {too_large}")
    try:
        S = sp.load_npz(path)
    except (*_NPZ_ERRORS, KeyError, NotImplementedError) as e:
        raise FormatError(f"{name}: not a readable scipy.sparse matrix ({e})") from None
    if S.dtype.kind not in "biuf":
        raise FormatError(f"{name}: values must be bool, integer or real; got {S.dtype}")
    too_large = _too_large(f"a {n} x {n} matrix of {S.nnz} entries", n, S.nnz, S.dtype != np.bool_)
    if too_large is not None:
        raise FormatError(f"{name}: {too_large}")
    try:
        A = Matrix._from_scipy(S, dup_op, "cpu", None, copy=False)  # S is this call's
    except GblaError as e:  # a repeat with dup_op=None, or a dtype gbla does not compute in
        raise FormatError(f"{name}: {e}") from None
    if S.dtype == np.bool_:  # every stored entry is an edge, as in a pattern file
        return A.pattern(), "the matrix holds bool values (no weights)"
    return A, ""


def _load_cache(path, name, source=None):
    """A cached graph and why it has no weights; with ``source`` (the text file's stat), a
    cache recorded for another size or time raises FormatError."""
    import scipy.sparse as sp

    try:
        with np.load(path, allow_pickle=False) as z:
            f = {k: z[k] for k in z.files}
    except _NPZ_ERRORS as e:
        raise FormatError(f"{name}: not a gbla graph cache ({e})") from None
    need = {
        "version",
        "indptr",
        "indices",
        "shape",
        "dtype",
        "iso",
        "unweighted",
        "source_size",
        "source_mtime_ns",
    }
    if need - set(f) or int(f["version"]) != _CACHE_VERSION:
        raise FormatError(f"{name}: not a gbla graph cache of version {_CACHE_VERSION}")
    if source is not None and (
        int(f["source_size"]) != source.st_size or int(f["source_mtime_ns"]) != source.st_mtime_ns
    ):
        raise FormatError(f"{name}: made from another version of the file")
    try:
        shape = tuple(int(x) for x in f["shape"])
        iso = bool(f["iso"])
        values = np.ones(len(f["indices"]), np.bool_) if iso else f["values"]
        S = sp.csr_array((values.astype(str(f["dtype"])), f["indices"], f["indptr"]), shape=shape)
        A = Matrix.from_scipy(S, device="cpu")
    except (KeyError, TypeError, ValueError, GblaError) as e:
        raise FormatError(f"{name}: not a gbla graph cache ({e})") from None
    return (A.pattern() if iso else A), str(f["unweighted"])
