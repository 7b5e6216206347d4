"""The binary ``.npz`` cache that ``read(..., cache=True)`` writes beside a text file."""

import os
import tempfile
import warnings
import zlib

import numpy as np

from ..exceptions import GblaError
from ..matrix import Matrix
from ._errors import FormatError

_CACHE_VERSION = 1


def _write_cache(cache_path, A, unweighted, stat):
    S = A.to_scipy()
    arrays = dict(version=np.int64(_CACHE_VERSION), indptr=S.indptr, indices=S.indices,
                  shape=np.array(A.shape, np.int64), dtype=np.array(A.dtype.name),
                  iso=np.bool_(A.is_iso), unweighted=np.array(unweighted),
                  source_size=np.int64(stat.st_size), source_mtime_ns=np.int64(stat.st_mtime_ns))
    if not A.is_iso:
        arrays["values"] = S.data
    tmp = None
    try:
        # Written aside and renamed: a reader never sees half a cache.
        with tempfile.NamedTemporaryFile(dir=cache_path.parent, prefix=cache_path.name,
                                         suffix=".tmp", delete=False) as f:
            tmp = f.name
            np.savez(f, **arrays)
        os.replace(tmp, cache_path)
    except OSError as e:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        warnings.warn(f"gbla.io.read: could not write the cache {cache_path} ({e}); the graph "
                      "was read without it", RuntimeWarning, stacklevel=4)


def _load_cache(path, name, source=None):
    """A cached graph and why it has no weights; with ``source`` (the text file's stat), a
    cache recorded for another size or time raises FormatError."""
    import scipy.sparse as sp
    try:
        with np.load(path, allow_pickle=False) as z:
            f = {k: z[k] for k in z.files}
    except (OSError, ValueError, zlib.error) as e:
        raise FormatError(f"{name}: not a gbla graph cache ({e})") from None
    need = {"version", "indptr", "indices", "shape", "dtype", "iso", "unweighted", "source_size",
            "source_mtime_ns"}
    if need - set(f) or int(f["version"]) != _CACHE_VERSION:
        raise FormatError(f"{name}: not a gbla graph cache of version {_CACHE_VERSION}")
    if source is not None and (int(f["source_size"]) != source.st_size or
                               int(f["source_mtime_ns"]) != source.st_mtime_ns):
        raise FormatError(f"{name}: made from another version of the file")
    try:
        shape = tuple(int(x) for x in f["shape"])
        iso = bool(f["iso"])
        values = np.ones(len(f["indices"]), np.bool_) if iso else f["values"]
        S = sp.csr_array((values.astype(str(f["dtype"])), f["indices"], f["indptr"]),
                         shape=shape)
        A = Matrix.from_scipy(S, device="cpu")
    except (KeyError, TypeError, ValueError, GblaError) as e:
        raise FormatError(f"{name}: not a gbla graph cache ({e})") from None
    return (A.pattern() if iso else A), str(f["unweighted"])
