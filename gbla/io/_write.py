"""write_mtx: a Matrix as a Matrix Market file."""

from __future__ import annotations

import gzip
import os

import numpy as np

from .. import _validation as V
from ..matrix import Matrix


def write_mtx(path: str | os.PathLike, A: Matrix, *, comment: str | None = None) -> None:
    """Write A as a Matrix Market coordinate ``general`` file, gzip-compressed when ``path``
    ends in ``.gz``; ``read`` gives A back (integers as int64, floats as float64).

    Parameters
    ----------
    path : str or os.PathLike
    A : Matrix
        Field ``pattern`` when every value is True (an iso matrix included), ``integer`` for
        integer values (and for a bool matrix holding some False: 0 / 1), ``real`` for floats
        (written with the shortest repr that reads back exactly; ``nan`` / ``inf`` kept).
    comment : str or None
        Written after the header, every line of it behind ``%``.

    Raises
    ------
    InvalidValue
        ``path`` is not a path or ``comment`` not a string.
    DomainMismatch
        ``A`` is not a gbla Matrix.

    Examples
    --------
    >>> gbla.io.write_mtx("graph.mtx.gz", A, comment="made by gbla")  # doctest: +SKIP
    """
    V.path_like(path)
    if not isinstance(A, Matrix):
        raise V.domain("A", "be a gbla Matrix", type(A).__name__)
    if comment is not None and not isinstance(comment, str):
        raise V.invalid_value("comment", "be a str or None", comment)
    C = A.to_scipy().tocoo()
    rows, cols = C.row.astype(np.int64) + 1, C.col.astype(np.int64) + 1
    values = None if A.is_iso else C.data
    if values is not None and values.dtype == np.bool_:
        values = None if values.all() else values.astype(np.int64)
    if values is None:
        field, fmt = "pattern", "%d %d\n"
    elif values.dtype.kind in "iu":
        field, fmt = "integer", "%d %d %d\n"
    else:  # %r of a Python float is its shortest exact repr
        field, fmt = "real", "%d %d %r\n"
    lines = [f"%%MatrixMarket matrix coordinate {field} general\n"]
    if comment is not None:
        lines += [f"%{' ' if line else ''}{line}\n" for line in comment.split("\n")]
    lines.append(f"{A.nrows} {A.ncols} {len(rows)}\n")
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write("".join(lines).encode())
        # One %-format per block of rows: C-speed formatting without a Python loop per line.
        block = 1 << 18
        for lo in range(0, len(rows), block):
            parts = [rows[lo : lo + block], cols[lo : lo + block]]
            if values is not None:
                parts.append(values[lo : lo + block])
            flat = [None] * (len(parts[0]) * len(parts))
            for j, part in enumerate(parts):
                flat[j :: len(parts)] = part.tolist()
            f.write(((fmt * len(parts[0])) % tuple(flat)).encode())
