"""A DistMatrix's parts built from edges no rank holds all of, in two passes over the pieces
each rank produces (read, generated, or slices of arrays it was given), so that a rank holds
its part of the graph and one piece at a time: never all its edges beside their sorted copies.

1. Count: each rank counts the out- and in-degrees of its pieces' edges over all n vertices.
   The out-degrees summed over blocks of vertices (one all-gather) cut the rows so that the
   ranks hold alike many edges, each rank receives the counts of its rows from every rank (one
   all-to-all each way) and allocates its rows and its transpose's rows at once.
2. Place: the pieces again, in lockstep over the ranks (a rank out of pieces sends nothing).
   Each edge goes to the rank owning its source, into the next free slot of its row, and to
   the one owning its destination, into its transpose's row (two all-to-alls a piece).
3. Tidy: a range of rows at a time (about ``_CHUNK`` entries), each row's entries sorted by
   column, repeats combined by ``dup_op`` in the order they came (piece by piece, ranks in
   order), the rows moved left over the slots the repeats leave.

Every check is summed over the ranks before anything raises, so that all raise together (a
rank raising alone would leave the others waiting in a collective)."""

import numpy as np

from .. import _backend as B
from .. import _validation as V
from .._storage import combine_duplicates, rows_of_entries
from ..exceptions import DuplicateIndex, GblaError, OutOfDeviceMemory
from ..outofcore.partition import balanced_bounds

__all__ = ["build", "slices"]

# Entries a rank sorts at once while it tidies its rows.
_CHUNK = 2**28
# Edges of a caller's arrays placed at a time (what ``slices`` cuts them into).
PIECE = 2**26
# Value dtypes the ranks agree on (each votes for its pieces' dtypes).
_DTYPES = [
    np.dtype(t)
    for t in (
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float16,
        np.float32,
        np.float64,
    )
]


def slices(src, dst, values, piece=None):
    """A pieces callable over arrays a rank holds: consecutive slices of ``piece`` edges (at
    least one piece, maybe empty)."""
    piece = piece or PIECE

    def pieces():
        for i in range(0, max(len(src), 1), piece):
            yield (
                src[i : i + piece],
                dst[i : i + piece],
                None if values is None else values[i : i + piece],
            )

    return pieces


def build(comm, pieces, n, dup_op, blocks, problem=None):
    """(bounds, (indptr, cols, values) of this rank's rows, the same of its transpose's rows,
    entries over every rank) of the n x n matrix whose edges ``pieces()`` yields on each
    rank, as (src, dst) or (src, dst, values). ``problem``: an error this rank already found,
    raised on every rank alike. Collective."""
    total_n, problems = comm.allreduce_sums([n, problem is not None])
    if total_n != n * comm.size:
        raise V.invalid_value("n", "be the same on every rank", n)
    if problems:
        raise problem or V.invalid_value(
            "src, dst, values", "be valid on every rank", "a problem on another rank"
        )
    counted = None
    try:
        counted = _count(comm, pieces, n)
        bounds, out_counts, in_counts, dtype = _cut(comm, counted, n, blocks)
        own, transpose, problem = _place(
            comm, pieces, bounds, out_counts, in_counts, dtype, n, counted["pieces"]
        )
        del out_counts, in_counts
        if comm.allreduce_sum(problem is not None):
            raise problem or V.invalid_value(
                "pieces",
                "yield the same edges each time it is called",
                "other edges on another rank",
            )
        own, problem = _tidy(comm, own, bounds, n, dup_op, transposed=False)
        if problem is None:
            transpose, problem = _tidy(comm, transpose, bounds, n, dup_op, transposed=True)
    except MemoryError as e:  # a device (or host) allocation of the build failed
        raise _out_of_memory(comm, counted, n) from e
    nvals, problems = comm.allreduce_sums([len(own[1]), problem is not None])
    if problems:
        raise problem or DuplicateIndex(
            V.message("src, dst", "hold each edge once, or give dup_op", "a repeat on another rank")
        )
    return bounds, own, transpose, nvals


def _unpacked(piece, xp):
    """(src, dst, values or None) of a piece, on the communicator's array module."""
    if not isinstance(piece, (tuple, list)) or len(piece) not in (2, 3):
        raise V.invalid_value(
            "pieces",
            "yield (src, dst) or (src, dst, values) tuples",
            type(piece).__name__
            if not isinstance(piece, (tuple, list))
            else f"a tuple of {len(piece)}",
        )
    src, dst = xp.asarray(piece[0]), xp.asarray(piece[1])
    return src, dst, None if len(piece) == 2 or piece[2] is None else xp.asarray(piece[2])


def _checked(src, dst, values, n, xp):
    """(src, dst) as integer arrays (whole floats accepted, as Matrix.from_edges does; integer
    ids kept in their dtype), or the problem raised."""
    V.same_length(src, dst, "src", "dst")
    if values is not None:
        V.same_length(src, values, "src", "values")
        if np.dtype(values.dtype) not in _DTYPES:
            raise V.invalid_value(
                "values", "hold booleans, integers or real numbers", f"dtype {values.dtype}"
            )
    # two scalars read back each, not the ids; integer ids keep their dtype (no int64 copy)
    return tuple(
        V.indices_in_range(ids, xp, n, name)
        if ids.dtype.kind in "iu"
        else V.index_array(ids, xp, n, name)
        for ids, name in ((src, "src"), (dst, "dst"))
    )


def _count(comm, pieces, n):
    """Pass 1: this rank's out- and in-degrees over all n vertices (repeats counted), its
    pieces, and what its values are; then the problems, the value dtypes and the piece counts
    of every rank (one collective)."""
    xp = comm.xp
    out_deg, in_deg = xp.zeros(n, np.int64), xp.zeros(n, np.int64)
    votes = [0] * len(_DTYPES)
    count, with_values, without, problem = 0, 0, 0, None
    for piece in pieces():
        count += 1
        try:
            src, dst, values = _unpacked(piece, xp)
            src, dst = _checked(src, dst, values, n, xp)
        except GblaError as error:
            problem = problem or error
            continue
        if values is None:
            without += 1
        else:
            with_values += 1
            votes[_DTYPES.index(np.dtype(values.dtype))] = 1
        if len(src):
            out_deg += xp.bincount(src, minlength=n)
            in_deg += xp.bincount(dst, minlength=n)
    one_hot = [count if r == comm.rank else 0 for r in range(comm.size)]
    every = comm.allreduce_sums([problem is not None, with_values, without, *votes, *one_hot])
    problems, with_values, without = every[:3]
    if problems:
        raise problem or V.invalid_value(
            "src, dst, values", "be valid on every rank", "a problem on another rank"
        )
    if with_values and without:
        raise V.invalid_value(
            "values",
            "be given for every piece on every rank or for none",
            f"{with_values} pieces with values and {without} without",
        )
    dtypes = [t for t, v in zip(_DTYPES, every[3 : 3 + len(_DTYPES)]) if v]
    return {
        "out": out_deg,
        "in": in_deg,
        "pieces": every[3 + len(_DTYPES) :],
        "dtype": np.result_type(*dtypes) if dtypes else None,
        "edges": int(out_deg.sum()) if n else 0,
    }  # sync: the message on running out


def _cut(comm, counted, n, blocks):
    """Rows cut by out-edges a block of vertices at a time (one all-gather), then the counts
    of this rank's rows and its transpose's rows summed over the ranks (one all-to-all
    each)."""
    xp = comm.xp
    size = max(1, -(-n // blocks))
    starts = xp.arange(0, n + size, size, dtype=np.int64)
    starts[-1] = n
    csum = xp.zeros(n + 1, np.int64)
    xp.cumsum(counted["out"], out=csum[1:])
    mine = csum[starts[1:]] - csum[starts[:-1]]
    del csum
    every = np.sum([B.to_host(x) for x in comm.allgather(mine)], axis=0)  # sync: the cut
    block_ptr = np.concatenate([[0], np.cumsum(every)]).astype(np.int64)
    bounds = np.minimum(balanced_bounds(block_ptr, comm.size) * size, n)
    lo, hi = int(bounds[comm.rank]), int(bounds[comm.rank + 1])

    def mine_summed(deg):
        got = comm.alltoallv([deg[int(bounds[r]) : int(bounds[r + 1])] for r in range(comm.size)])
        total = xp.zeros(hi - lo, np.int64)
        for part in got:
            total += part
        return total

    out_counts = mine_summed(counted.pop("out"))
    in_counts = mine_summed(counted.pop("in"))
    return bounds, out_counts, in_counts, counted["dtype"]


class _Rows:
    """A rank's rows being filled: row pointers from the counts, entries allocated at once,
    each row's next free slot."""

    def __init__(self, counts, n, dtype, xp):
        self.indptr = xp.zeros(len(counts) + 1, np.int64)
        xp.cumsum(counts, out=self.indptr[1:])
        total = int(self.indptr[-1])  # sync: the size to allocate
        self.cols = xp.empty(total, np.int32 if n < 2**31 else np.int64)  # 4 bytes where ids fit
        self.values = None if dtype is None else xp.empty(total, dtype)
        self.filled = xp.zeros(len(counts), np.int64)
        self.xp = xp

    def place(self, rows, cols, values):
        """Append each (row, col, value) to its row (rows local), in the order given; False if
        a row overflows what was counted."""
        xp = self.xp
        if not len(rows):
            return True
        order = xp.argsort(rows, kind="stable")
        rows = rows[order]
        within = xp.arange(len(rows), dtype=np.int64) - xp.searchsorted(rows, rows, side="left")
        at = self.indptr[rows] + self.filled[rows] + within
        self.filled += xp.bincount(rows, minlength=len(self.filled))
        if bool((self.filled > self.indptr[1:] - self.indptr[:-1]).any()):  # sync: the check
            return False
        self.cols[at] = cols[order]
        if self.values is not None:
            self.values[at] = values[order]
        return True

    def full(self):
        return bool((self.filled == self.indptr[1:] - self.indptr[:-1]).all())  # sync


def _place(comm, pieces, bounds, out_counts, in_counts, dtype, n, piece_counts):
    """Pass 2: every rank's pieces again, a piece a step, each edge sent to its source's owner
    and its destination's (two all-to-alls a step) and placed in its rows. Returns (own,
    transpose, problem): a problem if the pieces differ from the first pass."""
    xp = comm.xp
    own, transpose = _Rows(out_counts, n, dtype, xp), _Rows(in_counts, n, dtype, xp)
    lo = int(bounds[comm.rank])
    ok = True
    stream = iter(pieces())
    empty = xp.zeros(0, np.int64)
    for _ in range(max(piece_counts)):
        piece = next(stream, None)  # None: this rank's pieces have run out
        if ok and piece is not None:
            try:
                src, dst, values = _unpacked(piece, xp)
                src, dst = _checked(src, dst, values, n, xp)
                ok = (values is None) == (dtype is None)
            except GblaError:
                ok = False
        if not ok or piece is None:  # keep meeting the others, sending nothing
            src, dst, values = empty, empty, None
        values = (
            None
            if dtype is None
            else (xp.zeros(len(src), dtype) if values is None else values.astype(dtype, copy=False))
        )
        for rows, cols, part in ((src, dst, own), (dst, src, transpose)):
            rows, cols, vals = _to_owners(comm, bounds, rows, cols, values)
            ok = part.place(rows.astype(np.int64, copy=False) - lo, cols, vals) and ok
    ok = ok and next(stream, None) is None and own.full() and transpose.full()
    problem = (
        None
        if ok
        else V.invalid_value(
            "pieces", "yield the same edges each time it is called", "other edges the second time"
        )
    )
    return (
        (own.indptr, own.cols, own.values),
        (transpose.indptr, transpose.cols, transpose.values),
        problem,
    )


def _to_owners(comm, bounds, rows, cols, values):
    """(rows, cols, values) every rank sent this one: the triples whose row it owns."""
    if comm.size == 1:
        return rows, cols, values
    xp = comm.xp
    owner = xp.searchsorted(xp.asarray(bounds), rows, side="right") - 1
    order = xp.argsort(owner, kind="stable")
    cuts = B.to_host(xp.searchsorted(owner[order], xp.arange(comm.size + 1)))  # sync
    parts = [slice(int(cuts[r]), int(cuts[r + 1])) for r in range(comm.size)]

    def exchange(array):
        array = array[order]
        return xp.concatenate(comm.alltoallv([array[p] for p in parts]))

    return (exchange(rows), exchange(cols), None if values is None else exchange(values))


def _tidy(comm, part, bounds, n, dup_op, *, transposed):
    """Pass 3: each row sorted by column, repeats combined by ``dup_op`` in the order placed
    (None: the DuplicateIndex as the problem), the rows moved left over the freed slots, a
    range of rows of about _CHUNK entries at a time. Returns ((indptr, cols, values),
    problem)."""
    xp = comm.xp
    indptr, cols, values = part
    lo = int(bounds[comm.rank])
    rows = len(indptr) - 1
    width = max(n, 1)
    total = len(cols)
    cuts = [0]
    if rows:
        targets = xp.arange(1, -(-total // _CHUNK), dtype=np.int64) * _CHUNK
        cuts += [
            int(c)
            for c in B.to_host(  # sync: the ranges' rows
                xp.searchsorted(indptr, targets, side="left")
            )
        ]
    cuts = sorted(set(cuts + [rows]))
    starts = B.to_host(indptr[xp.asarray(cuts, np.int64)])  # sync: where each range begins
    counts = xp.zeros(rows, np.int64)
    written = 0
    for (r0, r1), (e0, e1) in zip(zip(cuts[:-1], cuts[1:]), zip(starts[:-1], starts[1:])):
        e0, e1 = int(e0), int(e1)
        if e0 == e1:
            continue

        def show(k, r0=r0):
            i, j = k // width + r0 + lo, k % width
            return f"edge ({j}, {i})" if transposed else f"edge ({i}, {j})"

        key = (
            rows_of_entries(indptr[r0 : r1 + 1] - e0, e1 - e0, xp).astype(np.int64) * width
            + cols[e0:e1]
        )
        try:
            key, kept = combine_duplicates(
                key,
                None if values is None else values[e0:e1],
                dup_op,
                B.array_device(key),
                arg="src, dst",
                what="edge",
                show=show,
            )
        except DuplicateIndex as error:
            return part, error
        # written <= e0: the range is read (into key) before anything is written over it
        counts[r0:r1] = xp.bincount(key // width, minlength=r1 - r0)
        cols[written : written + len(key)] = key % width
        if values is not None:
            values[written : written + len(key)] = kept
        written += len(key)
        del key, kept
    indptr = xp.zeros(rows + 1, np.int64)
    xp.cumsum(counts, out=indptr[1:])
    if written < 3 * total // 4:  # many repeats: give the slack back (a copy)
        cols = cols[:written].copy()
        values = None if values is None else values[:written].copy()
    return (indptr, cols[:written], None if values is None else values[:written]), None


def _out_of_memory(comm, counted, n):
    """OutOfDeviceMemory naming this rank's part of the build and the free device bytes."""
    import gc

    gc.collect()
    free = ""
    if comm.xp is not np:
        comm.xp.get_default_memory_pool().free_all_blocks()
        free = f"; the GPU has {comm.xp.cuda.runtime.memGetInfo()[0] / 1e9:.1f} GB free"
    edges = "" if not counted else f" ({counted['edges']} edges given on this rank)"
    return OutOfDeviceMemory(
        f"DistMatrix build: rank {comm.rank} of {comm.size} ran out of memory holding its "
        f"rows and its transpose's rows of an {n}-vertex graph{edges} beside a piece of them"
        f"{free}: spread the graph over more ranks, or give smaller pieces"
    )
