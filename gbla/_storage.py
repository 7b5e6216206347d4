"""CSR storage on arrays, below Matrix and Vector: index dtypes, the row of every entry, the
transpose, row pointers from sorted rows, the one stable merge of repeated keys, and the
comparison of two stores.

Every function takes the array module ``xp`` (numpy or cupy) or works on the arrays' own
device; none of them knows Matrix or Vector, which call them.
"""

import functools

import numpy as np

from . import _backend as B
from . import _validation as V
from ._dtypes import INT32, INT64
from .exceptions import DuplicateIndex
from .semirings import BinaryOp
from .semirings._core import _tree_reduceat

__all__ = [
    "index_dtype",
    "rows_of_entries",
    "indptr_of_sorted_rows",
    "transpose_csr",
    "mirrored",
    "combine_duplicates",
    "same_entries",
]


def index_dtype(n_max, nnz, requested):
    """int32 when every id and offset fits, else int64; ``requested`` (int32 or int64) forces
    one and raises when int32 cannot hold the matrix."""
    fits32 = max(n_max, nnz) < 2**31 - 1
    if requested is None:
        return INT32 if fits32 else INT64
    requested = np.dtype(requested)
    if requested not in (INT32, INT64):
        raise V.domain("index_dtype", "be int32, int64 or None", requested.name)
    if requested == INT32 and not fits32:
        raise V.invalid_value("index_dtype", "be int64 for a matrix this large", "int32")
    return requested


def rows_of_entries(indptr, nnz, xp, start=0):
    """The row of every stored entry (COO rows), in indptr's dtype, of entries ``start`` to
    ``nnz`` (all by default): the one way gbla computes it. Matrix caches it
    (``Matrix._entry_rows``); call this directly only where caching an array of nnz rows on
    the matrix would cost memory a caller did not ask for."""
    entries = xp.arange(start, nnz, dtype=indptr.dtype)
    rows = xp.searchsorted(indptr, entries, side="right") - 1
    return rows.astype(indptr.dtype, copy=False)


def expand_rows(indptr, rows, xp=np, owners=True):
    """(edge positions of ``rows`` in a CSR's row pointers, each edge's row as a position in
    ``rows``, or None when ``owners`` is False), on any array module: the gather a push, a pull
    or a partitioned traversal starts from. ``rows`` int64; the edges of each row in CSR
    order."""
    starts = indptr[rows].astype(np.int64)  # int64 sums whatever the index dtype
    counts = indptr[rows + 1].astype(np.int64) - starts
    offsets = xp.cumsum(counts)
    if xp is np:  # a repeat is a single pass on the CPU: an edge = its row's start + its place
        edge = np.repeat(starts - (offsets - counts), counts)  # among them - the row's first
        edge += np.arange(len(edge))
        return edge, (np.repeat(np.arange(len(rows)), counts) if owners else None)
    total = int(offsets[-1]) if len(offsets) else 0  # sync: the edges to expand
    position = xp.arange(total, dtype=np.int64)
    owner = xp.searchsorted(offsets, position, side="right")  # CuPy repeats only scalars
    return starts[owner] + position - (offsets[owner] - counts[owner]), owner


def submatrix_entries(indptr, indices, rows, cols, n_cols, xp):
    """The entries of A(rows, cols) (GrB_extract) for a CSR's ``indptr`` and ``indices``, on any
    array module: (keys, positions), keys = new row * max(len(cols), 1) + new column (int64,
    sorted), positions the entries of A they hold. ``rows`` and ``cols`` are int64 index lists
    (repeats allowed: a row or column taken twice is there twice), or None for all of A's
    ``n_cols`` columns; a row's entries come from its CSR range, a column's new places from
    the sorted list of ``cols``, through the same expansion."""
    edge, new_row = expand_rows(indptr, rows, xp)
    if cols is None:
        return new_row.astype(np.int64) * max(n_cols, 1) + indices[edge].astype(np.int64), edge
    order = xp.argsort(cols, kind="stable")
    # each old column's places among the sorted cols, as row pointers over the columns: an
    # entry of column j becomes one entry for each new column that takes j
    places = xp.searchsorted(cols[order], xp.arange(n_cols + 1, dtype=np.int64), side="left")
    at, owner = expand_rows(places, indices[edge].astype(np.int64), xp)
    keys = new_row[owner].astype(np.int64) * max(len(cols), 1) + order[at].astype(np.int64)
    sort = xp.argsort(keys)  # distinct keys: any sort is stable
    return keys[sort], edge[owner][sort]


def find_sorted(keys, queries, xp):
    """(at, hit): where each of ``queries`` is among the sorted ``keys`` and whether it is
    there (``at`` means something only where ``hit``; all False when there are no keys)."""
    if len(keys) == 0:
        return xp.zeros(len(queries), np.int64), xp.zeros(len(queries), bool)
    at = xp.minimum(xp.searchsorted(keys, queries), len(keys) - 1)
    return at, keys[at] == queries


def indptr_of_sorted_rows(rows, n, dtype, xp):
    """Row pointers (length n + 1) of entries whose rows are sorted ascending. A search, not a
    bincount: CuPy's bincount reads the largest row back to the host to size its output."""
    return xp.searchsorted(rows, xp.arange(n + 1, dtype=rows.dtype), side="left").astype(
        dtype, copy=False
    )


def transpose_csr(indptr, indices, values, n_rows, n_cols, xp):
    """CSR of the transpose: entries ordered by column, rows ascending within a column."""
    nnz = len(indices)
    rows = rows_of_entries(indptr, nnz, xp).astype(indices.dtype, copy=False)
    key = indices.astype(np.int64) * max(n_rows, 1) + rows  # unique keys: any sort is stable
    order = xp.argsort(key)
    t_indptr = indptr_of_sorted_rows(indices[order], n_cols, indptr.dtype, xp)
    return t_indptr, rows[order], (None if values is None else values[order])


# Entries a launch of mirrored()'s search takes: its temporaries (each entry's row) stay this
# size whatever the matrix's.
_MIRROR_CHUNK = 2**26

_MIRROR = r"""
long long lo = indptr[c], end = indptr[c + 1], hi = end;
while (lo < hi) {  // the first entry of row c whose column is not below r
    long long mid = (lo + hi) >> 1;
    if (indices[mid] < r) lo = mid + 1; else hi = mid;
}
if (!(lo < end && indices[lo] == r VALUES)) atomicAdd(&missing[0], 1ULL);
"""


@functools.lru_cache(maxsize=None)
def _mirror_kernel(weighted):
    cp = B._cupy()
    values = ", raw V values, V v" if weighted else ""
    return cp.ElementwiseKernel(
        f"I r, I c, raw P indptr, raw I indices{values}",
        "raw uint64 missing",
        _MIRROR.replace("VALUES", "&& values[lo] == v" if weighted else ""),
        name=f"gbla_mirrored{'_values' if weighted else ''}",
    )


def mirrored(indptr, indices, values):
    """Whether the square CSR matrix on the GPU (canonical: rows sorted, no repeats) is
    symmetric, its values included (None: a pattern): every entry (r, c, v) finds (c, r, v) by
    a binary search in row c, in one pass, without building the transpose (whose sort, a
    first call's largest step on a road network: 35-45 ms on an H100, most of it CuPy loading
    its sort). One read back."""
    cp = B._cupy()
    weighted = values is not None
    missing = cp.zeros(1, np.uint64)
    nnz = len(indices)
    for at in range(0, nnz, _MIRROR_CHUNK):
        end = min(at + _MIRROR_CHUNK, nnz)
        rows = rows_of_entries(indptr, end, cp, start=at).astype(indices.dtype, copy=False)
        args = (rows, indices[at:end], indptr, indices)
        args += (values, values[at:end]) if weighted else ()
        _mirror_kernel(weighted)(*args, missing)
    return int(missing[0]) == 0  # sync


def _segment_reduce_op(op, values, starts, device):
    """Combine each run values[starts[s]:starts[s+1]] with ``op`` (for dup_op; on the host)."""
    h, s = B.to_host(values), B.to_host(starts)  # sync: dup_op runs on the host
    if isinstance(op.numpy, np.ufunc):
        r = op.numpy.reduceat(h, s).astype(op.result_dtype(h.dtype))
    else:
        r = _tree_reduceat(op, h, s)
    return B.to_device(r, device)


def combine_duplicates(keys, values, dup_op, device, *, arg, what, show):
    """Sort ``keys`` stably (so ``dup_op`` sees repeats in input order) and merge repeats: with
    ``values`` None silently, else with ``dup_op``, else raise DuplicateIndex naming the first
    repeat (``show(key)`` spells it). Returns (unique sorted keys, their values)."""
    xp = B.xp_of(device)
    order = xp.argsort(keys, kind="stable")
    keys = keys[order]
    values = None if values is None else values[order]
    if len(keys) < 2:
        return keys, values
    first = xp.ones(len(keys), bool)
    first[1:] = keys[1:] != keys[:-1]
    starts = xp.nonzero(first)[0]  # sync: the number of distinct keys
    if len(starts) == len(keys):
        return keys, values
    if values is not None:
        if dup_op is None:
            repeat = int(keys[int(xp.nonzero(~first)[0][0])])  # sync: the error names it
            raise DuplicateIndex(
                V.message(arg, f"hold each {what} once, or give dup_op", f"{show(repeat)} repeated")
            )
        if not isinstance(dup_op, BinaryOp):
            raise V.domain("dup_op", "be a gbla BinaryOp", dup_op)
        values = _segment_reduce_op(dup_op, values, starts, device)
    return keys[starts], values


def merge_entries(rows, cols, values, shape, dup_op, device, *, arg, what="entry", base=0):
    """(rows, cols, values) of a COO list sorted by (row, column), each position once: repeats
    combined by ``dup_op`` in input order (values None: kept once), or DuplicateIndex naming
    the first repeat as ``what (row, col)`` counted from ``base``."""
    width = max(shape[1], 1)
    keys = rows.astype(np.int64) * width + cols
    keys, values = combine_duplicates(
        keys,
        values,
        dup_op,
        device,
        arg=arg,
        what=what,
        show=lambda k: (
            f"{what} ({k // width + base}, {k % width + base})" + (" (1-based)" if base else "")
        ),
    )
    return keys // width, keys % width, values


def same_entries(mine, theirs):
    """Whether two canonical stores hold the same entries: ``mine`` and ``theirs`` are lists of
    arrays on either device, index arrays (any integer type) then the values, compared on the
    host, a NaN value equal to a NaN."""
    mine, theirs = ([B.to_host(a) for a in arrays] for arrays in (mine, theirs))  # sync
    values = mine[-1]
    return all(np.array_equal(a, b) for a, b in zip(mine[:-1], theirs[:-1])) and np.array_equal(
        values, theirs[-1], equal_nan=values.dtype.kind == "f"
    )
