"""Reading graphs from files. For now Matrix Market (``.mtx``, gzip transparent)."""

import gzip
from pathlib import Path

from . import _validation as V
from .exceptions import GblaError
from .matrix import Matrix

__all__ = ["read_mtx", "FormatError"]


class FormatError(GblaError, ValueError):
    """A malformed graph file; the message names the file and the reason."""


def read_mtx(path, *, device=None):
    """A Matrix from a Matrix Market file (``.mtx`` or ``.mtx.gz``); a ``symmetric`` file gives
    both triangles, a ``pattern`` file an unweighted (iso bool) matrix."""
    import scipy.io
    path = Path(path)
    if not path.exists():
        raise V.invalid_value("path", "name an existing file", str(path))
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        header = f.readline().decode("ascii", "replace").lower()
    if not header.startswith("%%matrixmarket"):
        raise FormatError(f"{path}: line 1: expected a %%MatrixMarket header; got "
                          f"{header.strip()[:60]!r}")
    try:
        with opener(path, "rb") as f:
            S = scipy.io.mmread(f)
    except ValueError as e:
        raise FormatError(f"{path}: {e}") from None
    A = Matrix.from_scipy(S, device=device)
    return A.pattern() if "pattern" in header else A
