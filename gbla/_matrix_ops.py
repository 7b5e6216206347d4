"""Operations whose operands and result are matrices: the semiring product (mxm) and the
element-wise union, computed on entry keys (row * ncols + column, sorted as CSR stores them) with
array code that runs on either device.

mxm expands, for every entry A(i, k), row k of B (Gustavson's row-wise product, every product
formed once), drops the positions the mask excludes, and reduces the products of each (i, j)
with the add monoid, in blocks of A's rows whose products fit a budget (a share of the GPU's
free memory), so that the memory it holds is bounded whatever the products. The write phase,
C<M, replace> accum= T, merges keys the same way. On the GPU the reductions of min, max, plus,
lor, land and any run as scatter kernels; another monoid is reduced on the host (a sync, said so
below).
"""

import numpy as np

from . import _backend as B
from . import _storage
from . import _validation as V
from .mask import MatrixMask
from .matrix import Matrix

__all__ = [
    "product",
    "product_pull",
    "pull_is_cheaper",
    "union",
    "intersection",
    "write",
    "keys_of",
    "from_keys",
    "reduce_by_key",
    "validate_mask",
]


def keys_of(M):
    """(keys int64 sorted, values) of a Matrix's entries; an iso matrix's values are True."""
    return M._entry_keys(), M._values_or_ones()


def from_keys(keys, values, shape, dtype, device, *, iso=False):
    """A Matrix from sorted unique keys and their values (None with ``iso``)."""
    xp = B.xp_of(device)
    ncols = max(shape[1], 1)
    rows, cols = keys // ncols, keys % ncols
    idt = _storage.index_dtype(max(shape), len(keys), None)
    indptr = _storage.indptr_of_sorted_rows(rows.astype(idt), shape[0], idt, xp)
    return Matrix._wrap(
        indptr, cols.astype(idt), None if iso else values.astype(dtype), shape, dtype, device
    )


def _segments(keys, xp):
    """Start of each run of equal keys (keys sorted)."""
    if len(keys) == 0:
        return xp.zeros(0, np.int64)
    first = xp.ones(len(keys), bool)
    first[1:] = keys[1:] != keys[:-1]
    return xp.nonzero(first)[0]  # sync: the number of distinct keys


_SCATTER_DTYPES = tuple(
    np.dtype(t) for t in ("int32", "int64", "uint32", "uint64", "float32", "float64")
)  # what cupyx's scatters take


def reduce_by_key(keys, values, monoid, device):
    """(unique sorted keys, each run of values reduced with ``monoid``) for sorted ``keys``."""
    xp = B.xp_of(device)
    starts = _segments(keys, xp)
    if len(starts) == len(keys):
        return keys, values
    if device == "cpu":
        return keys[starts], monoid.reduceat(values, starts)
    if monoid.is_any:
        return keys[starts], values[starts]
    name = monoid.op.name if monoid.name == monoid.op.name else monoid.name
    segment = xp.cumsum(
        xp.concatenate([xp.zeros(1, np.int64), (keys[1:] != keys[:-1]).astype(np.int64)])
    )
    if name in ("lor", "land") and values.dtype == np.bool_:
        out = xp.full(len(starts), name == "land", np.int32)  # the scatters take no bool
        B.scatter_reduce("min" if name == "land" else "max", out, segment, values.astype(np.int32))
        return keys[starts], out.astype(bool)
    if name in B.SCATTER_OPS and values.dtype in _SCATTER_DTYPES:
        out = xp.full(len(starts), monoid.identity_for(values.dtype), values.dtype)
        B.scatter_reduce(name, out, segment, values)
        return keys[starts], out
    reduced = _storage._segment_reduce_op(monoid.op, values, starts, device)  # sync: host
    return keys[starts], reduced.astype(values.dtype, copy=False)


# How many products one block of a product forms at once. Each product holds, for a while, the
# B entry and A entry it comes from, its key, its value, the sort's order and the sorted copies:
# about _PRODUCT_BYTES on the GPU, and one block's products may take _DEVICE_SHARE of the free
# memory (the rest is for what the caller holds and the blocks' results). On the CPU a block is
# a fixed number of products (a few GB of working arrays).
_PRODUCT_BYTES = 128
_DEVICE_SHARE = 0.5
_CPU_PRODUCTS = 2**25
# Products a block may hold, for the tests to force tiny blocks; None: the sizes above.
_block_products = None


def _budget(device):
    """Products one block may form on ``device``."""
    if _block_products is not None:
        return _block_products
    if device == "cpu":
        return _CPU_PRODUCTS
    return max(1, int(B.free_device_bytes() * _DEVICE_SHARE) // _PRODUCT_BYTES)


def _blocks(counts, budget, xp):
    """[(start, stop)]: consecutive ranges of the items whose ``counts`` (int64) sum to at most
    ``budget`` each; an item above the budget alone is a block of its own (a row's products
    are reduced together)."""
    m = len(counts)
    if m == 0:
        return []
    ends = xp.cumsum(counts)
    if int(ends[-1]) <= budget:  # sync: the products to form
        return [(0, m)]
    ends = B.to_host(ends)  # sync: where the blocks end
    out, start = [], 0
    while start < m:
        before = int(ends[start - 1]) if start else 0
        stop = max(int(np.searchsorted(ends, before + budget, side="right")), start + 1)
        out.append((start, stop))
        start = stop
    return out


def _row_products(A, Bm, xp):
    """The products each row of A forms with Bm (int64 per row): the lengths of the rows of Bm
    its entries point at."""
    lengths = xp.zeros(A.nvals + 1, np.int64)
    if A.nvals:
        xp.cumsum(Bm._degrees()[A._indices], dtype=np.int64, out=lengths[1:])
    return lengths[A._indptr[1:]] - lengths[A._indptr[:-1]]


def _entry_ranges(A, row_blocks):
    """[(first entry, end entry)] of A for each (start row, stop row)."""
    if len(row_blocks) == 1:
        return [(0, A.nvals)]
    indptr = B.to_host(A._indptr)  # sync: where the blocks' entries start
    return [(int(indptr[r0]), int(indptr[r1])) for r0, r1 in row_blocks]


def _joined(parts, z_dtype, xp):
    """(keys, values) of blocks of consecutive rows, keys ascending across them."""
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return xp.zeros(0, np.int64), xp.zeros(0, z_dtype)
    return (
        xp.concatenate([k for k, _ in parts]),
        xp.concatenate([v.astype(z_dtype, copy=False) for _, v in parts]),
    )


def product(A, Bm, semiring, dtype, mask):
    """The keys and values of A (+).(x) Bm with only the positions ``mask`` allows, formed in
    blocks of A's rows whose products fit the budget of :func:`_budget`: a frontier of many
    sources times a large graph would otherwise hold every product at once."""
    device = A.device
    xp = B.xp_of(device)
    z_dtype = semiring.output_dtype(dtype)
    row_blocks = _blocks(_row_products(A, Bm, xp), _budget(device), xp)
    if (
        device == "cpu"
        and semiring.multiply.name == "pair"
        and (semiring.add.idempotent or semiring.add.name == "plus")
    ):
        import scipy.sparse as sp

        ones = [
            sp.csr_array((np.ones(M.nvals, np.int64), M._indices, M._indptr), shape=M.shape)
            for M in (A, Bm)
        ]
        parts = [
            _structural_product(ones[0][r0:r1], ones[1], r0, semiring, dtype, mask)
            for r0, r1 in row_blocks
        ]
        return _joined(parts, z_dtype, xp)
    a_rows = A._entry_rows()
    a_values = None if semiring.multiply.positional else A._values_or_ones()
    parts = [
        _product_entries(A, Bm, semiring, dtype, mask, a_rows, a_values, e0, e1)
        for e0, e1 in _entry_ranges(A, row_blocks)
    ]
    return _joined(parts, z_dtype, xp)


def _product_entries(A, Bm, semiring, dtype, mask, a_rows, a_values, e0, e1):
    """The product of A's entries e0:e1 (whole rows) with Bm: (keys, values), keys sorted."""
    device = A.device
    xp = B.xp_of(device)
    ncols = Bm.ncols
    a_rows = a_rows[e0:e1].astype(np.int64)
    a_cols = A._indices[e0:e1].astype(np.int64)
    z_dtype = semiring.output_dtype(dtype)
    # each product: the B entry it reads and the A entry (owner) it starts from
    b_entry, owner = _storage.expand_rows(Bm._indptr, a_cols, xp)
    if len(b_entry) == 0:
        return xp.zeros(0, np.int64), xp.zeros(0, z_dtype)
    keys = a_rows[owner] * max(ncols, 1) + Bm._indices[b_entry].astype(np.int64)
    if mask is not None:
        keep = mask.allows(keys)
        owner, b_entry, keys = B.compress(keep, owner, b_entry, keys)
    mult = semiring.multiply
    if mult.positional:
        z = a_cols[owner].astype(z_dtype)
    else:
        x = a_values[e0:e1][owner].astype(dtype, copy=False)
        y = Bm._values_or_ones()[b_entry].astype(dtype, copy=False)
        z = _apply_binary(mult, x, y, dtype, device).astype(z_dtype, copy=False)
    order = xp.argsort(keys, kind="stable")
    return reduce_by_key(keys[order], z[order], semiring.add, device)


def _structural_product(a_rows, b, r0, semiring, dtype, mask):
    """A (+).pair Bm on the CPU for A's rows from r0 (``a_rows``, ``b``: SciPy CSRs of their
    patterns, int64 ones) by SciPy's sparse product (compiled, a dense accumulator a row, no
    sort): each position holds the number of k where both A(i, k) and Bm(k, j) exist, which is
    the result under plus and 1 under an idempotent monoid."""
    C = a_rows @ b  # one entry a position, in no order within a row
    rows = np.repeat(np.arange(r0, r0 + C.shape[0], dtype=np.int64), np.diff(C.indptr))
    keys = rows * max(b.shape[1], 1) + C.indices.astype(np.int64)
    counts = C.data
    if mask is not None:  # before the sort: a traversal's mask leaves few
        keep = mask.allows(keys)
        keys, counts = keys[keep], counts[keep]
    order = np.argsort(keys)  # keys are distinct: any sort is stable
    keys, counts = keys[order], counts[order]
    z_dtype = semiring.output_dtype(dtype)
    if semiring.add.name == "plus":
        return keys, counts.astype(z_dtype)
    return keys, np.ones(len(keys), z_dtype)


def product_pull(A, Bm, semiring, dtype, mask):
    """The same product by dot products, for the positions a mask names (not complemented): for
    each (i, j) there, the products A(i, k) B(k, j) over row i of A where B(k, j) exists (found
    by a search among B's keys). Its cost is the mask's rows' entries, not the expansion's; the
    positions are taken in blocks whose tries fit :func:`_budget`, as :func:`product` does."""
    device = A.device
    xp = B.xp_of(device)
    ncols = max(Bm.ncols, 1)
    named = mask.keys()
    z_dtype = semiring.output_dtype(dtype)
    rows = named // ncols
    tries = (A._indptr[rows + 1] - A._indptr[rows]).astype(np.int64)
    b_keys, b_values = keys_of(Bm)
    parts = [
        _pull_positions(A, semiring, dtype, named[s0:s1], b_keys, b_values, ncols)
        for s0, s1 in _blocks(tries, _budget(device), xp)
    ]
    return _joined(parts, z_dtype, xp)


def _pull_positions(A, semiring, dtype, named, b_keys, b_values, ncols):
    """(keys, values) of the dot products at the sorted positions ``named``."""
    device = A.device
    xp = B.xp_of(device)
    z_dtype = semiring.output_dtype(dtype)
    # each try: the A entry it reads and the mask entry (owner) it is for
    a_entry, owner = _storage.expand_rows(A._indptr, named // ncols, xp)
    if len(a_entry) == 0 or len(b_keys) == 0:
        return xp.zeros(0, np.int64), xp.zeros(0, z_dtype)
    k = A._indices[a_entry].astype(np.int64)
    wanted = k * ncols + named[owner] % ncols
    at, hit = _storage.find_sorted(b_keys, wanted, xp)
    owner, a_entry, k, at = owner[hit], a_entry[hit], k[hit], at[hit]
    if semiring.multiply.positional:
        z = k.astype(z_dtype)
    else:
        x = A._values_or_ones()[a_entry].astype(dtype, copy=False)
        y = b_values[at].astype(dtype, copy=False)
        z = _apply_binary(semiring.multiply, x, y, dtype, device).astype(z_dtype, copy=False)
    # mask entries ascending, k ascending within each: the keys come sorted, products in k order
    return reduce_by_key(named[owner], z, semiring.add, device)


def pull_is_cheaper(A, Bm, mask):
    """Whether dot products over the mask's positions read fewer entries than the row-wise
    expansion: the mask rows' entries of A against the products the expansion forms."""
    xp = B.xp_of(A.device)
    named = mask.keys()
    rows = named // max(Bm.ncols, 1)
    dots = int(xp.sum(A._indptr[rows + 1] - A._indptr[rows]))  # sync: two totals
    a_cols = A._indices
    expand = int(xp.sum(Bm._indptr[a_cols + 1] - Bm._indptr[a_cols]))
    return dots * 4 < expand  # a dot product pays a search per try


def _apply_binary(op, x, y, dtype, device):
    if device == "gpu":
        from .kernels import _elementwise

        return _elementwise.binary(op, x, y, dtype)
    return op.apply_numpy(x, y)


def union(left, right, op, device):
    """The union of two (keys, values) with ``op`` (a BinaryOp) where both have a key."""
    xp = B.xp_of(device)
    (kl, vl), (kr, vr) = left, right
    dtype = np.result_type(vl.dtype, vr.dtype)
    keys = xp.concatenate([kl, kr])
    values = xp.concatenate([vl.astype(dtype), vr.astype(dtype)])
    order = xp.argsort(keys, kind="stable")  # left before right within a key
    keys, values = keys[order], values[order]
    if len(keys) < 2:
        return keys, values
    both = xp.zeros(len(keys), bool)
    both[:-1] = keys[:-1] == keys[1:]
    first = xp.nonzero(both)[0]  # sync: where both have the key
    combined = values.copy()
    if len(first):
        combined[first] = _apply_binary(op, values[first], values[first + 1], dtype, device).astype(
            dtype, copy=False
        )
    keep = xp.ones(len(keys), bool)
    keep[first + 1] = False
    return B.compress(keep, keys, combined)


def intersection(left, right, op, device):
    """The keys both (keys, values) have, with op(left, right)."""
    xp = B.xp_of(device)
    (kl, vl), (kr, vr) = left, right
    dtype = np.result_type(vl.dtype, vr.dtype)
    if len(kl) == 0 or len(kr) == 0:
        return kl[:0], xp.zeros(0, op.result_dtype(dtype))
    at, both = _storage.find_sorted(kr, kl, xp)
    keys, x, y = kl[both], vl[both].astype(dtype), vr[at[both]].astype(dtype)
    return keys, _apply_binary(op, x, y, dtype, device)


def write(out, t, shape, *, mask, accum, replace, dtype, device):
    """C<mask, replace> accum= T for matrices, T given as (keys, values); a new Matrix."""
    xp = B.xp_of(device)
    if out is None:
        keys, values = t
        return from_keys(keys, values, shape, dtype, device)
    o_keys, o_values = keys_of(out)
    t_keys, t_values = t
    if accum is not None:
        t_keys, t_values = union((o_keys, o_values), (t_keys, t_values), accum, device)
    if mask is None:
        return from_keys(t_keys, t_values, shape, out.dtype, device)
    t_keep = mask.allows(t_keys)
    t_keys, t_values = t_keys[t_keep], t_values[t_keep]
    if replace:
        o_keys, o_values = o_keys[:0], o_values[:0]
    else:
        o_keep = ~mask.allows(o_keys)
        o_keys, o_values = o_keys[o_keep], o_values[o_keep]
    keys = xp.concatenate([o_keys, t_keys])
    values = xp.concatenate([o_values.astype(out.dtype), t_values.astype(out.dtype)])
    order = xp.argsort(keys)
    return from_keys(keys[order], values[order], shape, out.dtype, device)


def validate_mask(mask, shape):
    """A MatrixMask for an output of ``shape`` (a bare Matrix is its value mask), or None."""
    if mask is None:
        return None
    if isinstance(mask, Matrix):
        mask = MatrixMask(mask, structural=False)
    if not isinstance(mask, MatrixMask):
        raise V.domain("mask", "be a matrix mask (M.S, M.V, ~M.S, ~M.V), a Matrix or None", mask)
    V.dimension(mask.matrix.shape, shape, "mask.shape", "the output shape")
    return mask
