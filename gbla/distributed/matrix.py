"""A matrix cut by rows over the ranks of a communicator, and the product on it in both
directions.

Rank r holds rows ``bounds[r]`` to ``bounds[r + 1]`` of A (a vertex range balanced by edges:
its out-edges, with global column ids), the same rows of A's transpose (its in-edges), and the
same range of every vector.

- Push: ``vxm`` expands the local entries of u along their rows, combines the products of each
  column with the semiring's add, sends each column's one product to the rank owning it (one
  all-to-all, ids and values packed together), and the owner keeps what its mask allows and
  reduces them in rank order (so every rank count gives the one-GPU result for an associative
  add).
- Pull: every rank gathers the whole frontier (an all-gather of its entries) and reduces the
  in-edges of its allowed vertices over the present ones, in ascending source order.
- A rank's local work: on the GPU, one GPU's spmv kernels (gbla/kernels/spmv.cu) over its rows
  (push: into dense output and presence arrays over all n, products combined by the add's
  atomic; pull: a thread a row, a warp a long row, stopping at the add's terminal value); on
  the CPU, whole-array operations a run of rows of about ``_EXPAND`` edges at a time.
- A :class:`~gbla.DirectionTracker` chooses per product from the frontier's size and edges
  summed over the ranks, so every rank takes the same direction.

What travels is kept small: a vertex id as an int32 offset into its owner's range; no value
where the product's value does not depend on it (``pair``: the owner knows it is 1; a pull
whose multiply ignores u's value, as any.pair and any.secondi do, needs only which vertices
are present); and such a presence sent as a bitmap of the rank's range when that is smaller
than the offsets (a large frontier, the pull's case).

:func:`replicated_vxm` is the product ``gbla.vxm`` runs on a DistMatrix: u whole on every
rank, w gathered whole."""

from dataclasses import dataclass

import numpy as np

from .. import _backend as B
from .. import _validation as V
from .. import direction as _direction
from .._matrix_ops import _apply_binary, reduce_by_key
from .._storage import expand_rows, indptr_of_sorted_rows, rows_of_entries
from .._weights import ISO_FACTS as _ISO_FACTS
from .._weights import facts as _facts
from .._weights import numbers as _numbers
from .._weights import weight_facts as _weight_facts
from ..exceptions import GblaError
from ..kernels import _spmv
from ..mask import MODE_NONE, MODE_TRUE
from ..matrix import DUP_OP
from ..outofcore.partition import balanced_bounds
from . import build as _build
from .comm import Counted

__all__ = ["DistMatrix", "DistVector", "vxm", "frontier_counts", "replicated_vxm", "replicated_mxm"]


@dataclass
class DistVector:
    """This rank's entries of a vector of ``size``: global ids in ``[lo, hi)``, sorted, and
    their values; ``counted``, once :func:`frontier_counts` has counted it against a matrix:
    (that matrix, the out-degree prefix sums of its entries' rows, their last one), which a
    push over the same matrix reuses instead of counting (and reading back) again."""

    indices: object
    values: object
    size: int
    lo: int
    hi: int
    counted: tuple | None = None


class DistMatrix:
    """This rank's rows of an n x n matrix: CSR rows ``lo`` to ``hi`` (row pointers from 0,
    global column ids, values or None for an iso pattern), the bounds of every rank, and the
    communicator, wrapped in :class:`~.comm.Counted` (``A.comm.bytes_sent`` and
    ``A.comm.collectives`` count this rank's traffic). Build every rank's part with
    :meth:`from_edges` from each rank's share of the edges (no rank holds the whole graph),
    :meth:`from_edge_pieces` from pieces of it (no rank holds even its share at once),
    :meth:`from_csr` from the whole host CSR on every rank, or :meth:`of` from a gbla Matrix.
    ``weights`` holds the :class:`WeightFacts` of the whole matrix."""

    # ops (vxm, mxm as B, select, scale), the method registry and gbla.iterate take their
    # partitioned paths for it (vxm_entries, mxm_entries, keep_entries, scaled), so gbla.bfs and
    # gbla.sssp run on it as they are written
    partitioned = True

    def __init__(
        self, comm, bounds, indptr, indices, values, n, transpose=None, nvals=None, weights=None
    ):
        # every collective of the products goes through A.comm, counted (Counted.bytes_sent)
        self.comm, self.bounds, self.n = Counted.of(comm), np.asarray(bounds, np.int64), int(n)
        self.lo, self.hi = int(self.bounds[comm.rank]), int(self.bounds[comm.rank + 1])
        self.indptr, self.indices, self.values = indptr, indices, values
        self.transpose = transpose  # (indptr, indices, values) of A.T's rows lo..hi, or None
        self.nvals = nvals  # A's entries over every rank
        self.device = "gpu" if comm.xp is not np else "cpu"
        # WeightFacts over the whole matrix: every rank decides the same from them
        self.weights = weights
        self._cache = {}

    @property
    def nrows(self):
        return self.n

    @property
    def ncols(self):
        return self.n

    @property
    def shape(self):
        return (self.n, self.n)

    @property
    def is_iso(self):
        return self.values is None

    @property
    def dtype(self):
        return np.dtype(bool) if self.values is None else np.dtype(self.values.dtype)

    def vxm_entries(self, u, semiring, dtype, mask, direction):
        """(keys, values) of u (+).(x) A on every rank for a gbla Vector u every rank holds
        whole, ``mask`` a gbla Mask or None (:func:`replicated_vxm`): what ``gbla.vxm`` runs on
        it. Collective."""
        idx, vals = u._sparse()
        allow = None if mask is None else mask.allowed()
        return replicated_vxm(idx, vals, self, semiring, allow=allow, direction=direction)

    def mxm_entries(self, F, semiring, dtype, mask):
        """(keys, values) of F (+).(x) A (:func:`replicated_mxm`): what ``gbla.mxm`` runs with
        it second. Collective."""
        return replicated_mxm(F, self, semiring, dtype, mask)

    def keep_entries(self, predicate, key=None):
        """The entries whose weight satisfies ``predicate`` (values -> bool array; weight 1
        where the matrix has none), in both parts, as a new DistMatrix: what ``gbla.select``
        runs on it. With a ``key`` naming the selection (a comparison with a number) the result
        is kept with this matrix, as a Matrix keeps its caches: a selection by a number is cut
        once per matrix and threshold, not at every search. Collective (the
        kept count and the weights' facts over every rank; every rank keeps alike)."""
        xp = self.comm.xp
        if key is not None and ("select", key) in self._cache:
            return self._cache[("select", key)]

        def part(indptr, indices, values, rows_are_rows):
            keep = predicate(xp.ones(len(indices), bool) if values is None else values)
            return _kept(indptr, indices, values, keep, xp)

        kept = self._with_parts(part)
        if key is not None:
            self._cache[("select", key)] = kept
        return kept

    def scaled(self, values, present, combine, side):
        """diag(v) A (``side`` 'left': combine(v(i), A(i, j))) or A diag(v) ('right':
        combine(A(i, j), v(j))) for a v whole on every rank (``values``, ``present`` or None
        for all), in both parts; entries whose row (left) or column (right) v lacks are
        dropped: what ``gbla.scale`` runs on it. Collective (the kept count)."""
        xp = self.comm.xp

        def part(indptr, indices, weights, rows_are_rows):
            # the vertex v is read at: the row on the left, the column on the right (in the
            # transpose's part the two swap)
            if (side == "left") == rows_are_rows:
                at = rows_of_entries(indptr, len(indices), xp).astype(np.int64) + self.lo
            else:
                at = indices.astype(np.int64)
            a = xp.ones(len(indices), bool) if weights is None else weights
            keep = xp.ones(len(indices), bool) if present is None else present[at]
            return _kept(indptr, indices, combine(values[at], a), keep, xp)

        return self._with_parts(part)

    def _with_parts(self, part):
        """A DistMatrix of ``part(indptr, indices, values, rows_are_rows)`` applied to this
        rank's rows (True) and its transpose's rows (False). Collective (the new entry count
        and weights' facts)."""
        own = part(self.indptr, self.indices, self.values, True)
        t = None if self.transpose is None else part(*self.transpose, False)
        nvals = self.comm.allreduce_sum(len(own[1]))
        return DistMatrix(
            self.comm,
            self.bounds,
            *own,
            self.n,
            transpose=t,
            nvals=nvals,
            weights=_facts_over_ranks(self.comm, own[2]),
        )

    def pattern(self):
        """The structure alone (no values; every weight 1), sharing the index arrays."""
        if self.values is None:
            return self
        if "pattern" not in self._cache:
            t = None if self.transpose is None else self.transpose[:2] + (None,)
            self._cache["pattern"] = DistMatrix(
                self.comm,
                self.bounds,
                self.indptr,
                self.indices,
                None,
                self.n,
                transpose=t,
                nvals=self.nvals,
                weights=_ISO_FACTS,
            )
        return self._cache["pattern"]

    @classmethod
    def from_csr(cls, comm, indptr, indices, values=None):
        """This rank's part of the host CSR (indptr, indices, values) of a square matrix, the
        rows cut by :func:`~gbla.outofcore.partition.balanced_bounds` over ``comm.size``
        ranks; on the communicator's array module."""
        import scipy.sparse as sp

        indptr, indices = _checked_csr(indptr, indices, values)
        n = len(indptr) - 1
        bounds = balanced_bounds(indptr, comm.size)
        lo, hi = int(bounds[comm.rank]), int(bounds[comm.rank + 1])
        xp = comm.xp

        def rows(ptr, ind, val):
            e0, e1 = int(ptr[lo]), int(ptr[hi])
            return (
                xp.asarray(ptr[lo : hi + 1] - e0),
                xp.asarray(np.asarray(ind)[e0:e1]),
                None if val is None else xp.asarray(np.asarray(val)[e0:e1]),
            )

        # the in-edges, by the same vertex ranges: the transpose's rows, sources ascending
        data = np.arange(len(indices)) if values is None else np.asarray(values)
        T = sp.csr_array((data, np.asarray(indices), indptr), shape=(n, n)).T.tocsr()
        T.sort_indices()
        t_values = None if values is None else T.data
        return cls(
            comm,
            bounds,
            *rows(indptr, indices, values),
            n,
            transpose=rows(T.indptr.astype(np.int64), T.indices, t_values),
            nvals=int(indptr[-1]),
            weights=_weight_facts(indptr, indices, values),
        )

    @classmethod
    def from_edges(cls, comm, src, dst, values=None, *, n, dup_op=DUP_OP, blocks=65536):
        """The DistMatrix of an n-vertex graph whose edges src[i] -> dst[i] (weights
        ``values``, or None for 1) are spread over the ranks in any way (each rank passes its
        own share: the part it read or generated), so that no rank ever holds the whole graph.
        Rows are cut by out-edges at the granularity of ``blocks`` vertex blocks, then each
        edge goes to the rank owning its source (its row) and to the one owning its
        destination (its transpose's row), a slice of the arrays at a time
        (:meth:`from_edge_pieces`, which this calls). An edge given more than once (by one
        rank or several) is kept once, its weights combined by ``dup_op`` in rank order (the
        lightest by default, as ``Matrix.from_edges`` does; None: DuplicateIndex); ids outside
        [0, n) raise InvalidIndex; on every rank alike. Collective: every rank calls it with
        the same ``n``."""
        xp = comm.xp
        src, dst = xp.asarray(src), xp.asarray(dst)
        values = None if values is None else xp.asarray(values)
        problem = None
        try:  # the whole arrays' lengths, named as given (the build checks each slice too)
            V.same_length(src, dst, "src", "dst")
            if values is not None:
                V.same_length(src, values, "src", "values")
        except GblaError as error:
            problem = error
        pieces = _build.slices(src, dst, values) if problem is None else (lambda: iter(()))
        return cls._built(Counted.of(comm), pieces, n, dup_op, blocks, problem)

    @classmethod
    def from_edge_pieces(cls, comm, pieces, *, n, dup_op=DUP_OP, blocks=65536):
        """The DistMatrix of an n-vertex graph whose edges each rank produces a piece at a
        time: ``pieces()`` (called twice: once to count the edges, once to place them, and
        yielding the same pieces both times) yields this rank's edges as (src, dst) or (src,
        dst, values) array tuples, on any device. A rank holds its rows, its transpose's rows
        and one piece at a time, never all its edges at once (with
        :func:`gbla.generators.rmat_edge_pieces`, or pieces read from a file, a graph as large
        as the ranks' memory together). Otherwise as :meth:`from_edges`: repeats combined by
        ``dup_op`` in the order they come (piece by piece, ranks in order), every problem
        raised on every rank alike (a second pass that differs from the first: InvalidValue
        naming ``pieces``). Collective.

        Examples
        --------
        >>> import gbla
        >>> from gbla import distributed as D
        >>> pieces = gbla.generators.rmat_edge_pieces(8, piece_edges=1000, device="cpu")
        >>> M = D.DistMatrix.from_edge_pieces(D.SelfComm(), pieces, n=256)
        >>> M.nvals == gbla.generators.rmat(8, device="cpu").nvals
        True
        """
        if not callable(pieces):
            raise V.invalid_value(
                "pieces",
                "be a callable returning an iterable of edge pieces",
                type(pieces).__name__,
            )
        return cls._built(Counted.of(comm), pieces, n, dup_op, blocks)

    @classmethod
    def _built(cls, comm, pieces, n, dup_op, blocks, problem=None):
        n = V.size(n, "n")
        bounds, own, transpose, nvals = _build.build(comm, pieces, n, dup_op, blocks, problem)
        return cls(
            comm,
            bounds,
            *own,
            n,
            transpose=transpose,
            nvals=nvals,
            weights=_facts_over_ranks(comm, own[2]),
        )

    @classmethod
    def of(cls, comm, A):
        """This rank's part of a gbla Matrix (read from the host)."""
        return cls.from_csr(
            comm,
            B.to_host(A._indptr),
            B.to_host(A._indices),
            None if A._values is None else B.to_host(A._values),
        )

    def owner(self, ids):
        """The rank owning each global id: of an int, an int (read on the host); of an
        array, an array of the communicator's module."""
        if isinstance(ids, (int, np.integer)):
            return int(np.searchsorted(self.bounds, ids, side="right")) - 1
        xp = self.comm.xp
        return xp.searchsorted(xp.asarray(self.bounds), ids, side="right") - 1

    def gather(self, local):
        """The whole vector, on every rank, from each rank's entries for its vertices
        (``local``: A.hi - A.lo of them, as a traversal leaves its result with
        ``gather=False``); one all-gather, each range's length known from the cut.
        Collective."""
        if len(local) != self.hi - self.lo:
            raise V.invalid_value(
                "local", f"hold this rank's {self.hi - self.lo} entries", f"{len(local)} entries"
            )
        bounds = [int(b) for b in self.bounds]
        lengths = [hi - lo for lo, hi in zip(bounds[:-1], bounds[1:])]
        return self.comm.xp.concatenate(self.comm.allgather(local, lengths))

    def vector(self, indices, values):
        """A DistVector of this rank's range from global ``indices`` (sorted, inside it)."""
        xp = self.comm.xp
        return DistVector(
            xp.asarray(indices, np.int64), xp.asarray(values), self.n, self.lo, self.hi
        )


def _kept(indptr, indices, values, keep, xp):
    """(indptr, indices, values) of a CSR part's entries where ``keep``."""
    rows, indices, values = B.compress(
        keep, rows_of_entries(indptr, len(indices), xp), indices, values
    )
    return indptr_of_sorted_rows(rows, len(indptr) - 1, indptr.dtype, xp), indices, values


def _checked_csr(indptr, indices, values):
    """(indptr as int64, indices) of a square host CSR, or the argument that is wrong named:
    indptr from 0 to len(indices), never falling, indices in [0, n), one value an index."""
    indptr = np.asarray(indptr)
    if indptr.ndim != 1 or len(indptr) == 0:
        raise V.invalid_value("indptr", "be a 1-D array of n + 1 offsets", f"shape {indptr.shape}")
    indptr = V.index_array(indptr, np, np.iinfo(np.int64).max, "indptr")
    indices = np.asarray(indices)
    if indptr[0] != 0 or indptr[-1] != len(indices):
        raise V.invalid_value(
            "indptr",
            f"run from 0 to len(indices) = {len(indices)}",
            f"{int(indptr[0])} .. {int(indptr[-1])}",
        )
    if (np.diff(indptr) < 0).any():
        raise V.invalid_value("indptr", "never fall", int(np.flatnonzero(np.diff(indptr) < 0)[0]))
    V.index_array(indices, np, len(indptr) - 1, "indices")  # a square matrix: columns < n
    if values is not None:
        V.same_length(indices, np.asarray(values), "indices", "values")
    return indptr, indices


def _facts_over_ranks(comm, values):
    """The WeightFacts of a matrix whose rank-local weights are ``values`` (None: iso):
    one all-gather of six numbers."""
    if values is None:
        return _ISO_FACTS
    every = comm.allgather(comm.xp.asarray(_numbers(values)))
    return _facts(np.stack([B.to_host(x) for x in every]), None)


def frontier_counts(u, A):
    """(entries, out-edges) of the vector whose part ``u`` is, over every rank: one
    collective, what a DirectionTracker chooses from (and a traversal stops on)."""
    offsets = _degree_offsets(A, u)
    edges = int(offsets[-1])  # sync
    u.counted = (A, offsets, edges)
    return tuple(A.comm.allreduce_sums([len(u.indices), edges]))


def _degree_offsets(A, u):
    """The prefix sums (from 0, int64) of the out-degrees of u's entries' rows of A."""
    xp = A.comm.xp
    rows = u.indices - A.lo
    offsets = xp.zeros(len(rows) + 1, np.int64)
    if len(rows):
        xp.cumsum(A.indptr[rows + 1] - A.indptr[rows], out=offsets[1:])
    return offsets


def vxm(u, A, semiring, *, allow=None, direction="push", frontier=None):
    """This rank's part of w = u (+).(x) A: the columns of A's rows this rank owns, combined
    over every rank. ``allow``: a bool array over this rank's range (w keeps only allowed
    ids), or None. ``direction``: 'push', 'pull', or a DirectionTracker (the traversal's)
    choosing from the whole frontier: its :func:`frontier_counts`, passed as ``frontier``
    when the caller has them (a traversal counts each new frontier once, to stop on it),
    else counted here. Collective: every rank calls it."""
    if isinstance(direction, _direction.DirectionTracker):
        direction = _choose(u, A, semiring, direction, frontier)
    if direction == "pull":
        return _pull(u, A, semiring, allow)
    return _push(u, A, semiring, allow)


def replicated_vxm(indices, values, A, semiring, *, allow=None, direction="push"):
    """(keys, values) of w = u (+).(x) A on every rank, for a u every rank holds whole (sorted
    global ``indices`` and their ``values``): each rank multiplies its range of u, owns its
    range of w, and w is gathered whole (one more collective). What ``gbla.vxm`` runs on a
    DistMatrix, so that element-wise operations need no communication. ``allow``: a bool
    array over all n outputs, or None."""
    xp, lo, hi = A.comm.xp, A.lo, A.hi
    first, last = (int(i) for i in xp.searchsorted(indices, xp.asarray([lo, hi])))  # sync
    u = DistVector(indices[first:last].astype(np.int64), values[first:last], A.n, lo, hi)
    w = vxm(u, A, semiring, allow=None if allow is None else allow[lo:hi], direction=direction)
    bounds = [int(b) for b in A.bounds]
    parts = [
        _unpack(m, w.values.dtype)
        for m in A.comm.allgather(_pack(_offsets(w.indices, lo, xp), w.values, xp))
    ]
    keys = xp.concatenate([o.astype(np.int64) + bounds[r] for r, (o, _) in enumerate(parts)])
    return keys, xp.concatenate([v for _, v in parts])


def replicated_mxm(F, A, semiring, dtype, mask=None):
    """(keys, values) of C = F (+).(x) A, keys row * n + column, on every rank, for a gbla
    Matrix F every rank holds whole (a frontier per row, as several-source searches keep):
    each rank multiplies F's columns in its range by its rows, combines the products of each
    position, and every rank reduces all ranks' partial results in rank order (two all-gathers).
    ``mask``: a MatrixMask of C, or None. What ``gbla.mxm`` runs with a DistMatrix second."""
    xp, lo, hi, n = A.comm.xp, A.lo, A.hi, A.n
    f_rows = F._entry_rows().astype(np.int64)
    f_cols = F._indices.astype(np.int64)
    mine = xp.flatnonzero((f_cols >= lo) & (f_cols < hi))
    b_entry, owner = expand_rows(A.indptr, f_cols[mine] - lo, xp)
    owner = mine[owner]
    keys = f_rows[owner] * max(n, 1) + A.indices[b_entry].astype(np.int64)
    if mask is not None:
        keep = mask.allows(keys)
        owner, b_entry, keys = B.compress(keep, owner, b_entry, keys)
    mult, z_dtype = semiring.multiply, semiring.output_dtype(dtype)
    if mult.positional:
        z = f_cols[owner].astype(z_dtype)
    else:
        x = F._values_or_ones()[owner].astype(dtype, copy=False)
        y = (
            xp.ones(len(b_entry), dtype)
            if A.values is None
            else A.values[b_entry].astype(dtype, copy=False)
        )
        z = _apply_binary(mult, x, y, dtype, A.device).astype(z_dtype, copy=False)
    order = xp.argsort(keys, kind="stable")
    keys, z = keys[order], z[order]
    if len(keys):
        keys, z = reduce_by_key(keys, z, semiring.add, A.device)
    keys = xp.concatenate(A.comm.allgather(keys))  # rank order: an associative add's result
    z = xp.concatenate(A.comm.allgather(z.astype(z_dtype, copy=False)))
    if not len(keys):
        return keys, z
    order = xp.argsort(keys, kind="stable")
    return reduce_by_key(keys[order], z[order], semiring.add, A.device)


def _dtypes(u, A, semiring):
    dtype = np.result_type(
        u.values.dtype, A.values.dtype if A.values is not None else u.values.dtype
    )
    return dtype, semiring.output_dtype(dtype)


def _choose(u, A, semiring, tracker, frontier):
    """The tracker's choice from the frontier's vertices and out-edges over every rank."""
    vertices, edges = frontier_counts(u, A) if frontier is None else frontier
    early_exit = semiring.add.terminal_for(_dtypes(u, A, semiring)[1]) is not None
    return tracker.choose(
        frontier_vertices=vertices,
        frontier_edges=edges,
        edges=A.nvals,
        n=A.n,
        early_exit=early_exit,
    )


# ------------------------------------------------------------------ what travels
_IDS, _BITMAP = 0, 1  # the first byte of a presence message


def _offsets(ids, lo, xp):
    """Global ids of one rank's range [lo, ...) as int32 offsets (a range is < 2**31 long)."""
    return (ids - lo).astype(np.int32)


def _pack(offsets, values, xp):
    """int32 offsets and their values as one byte message (one collective, not two): the
    values first, then the offsets, each written once, typed (no byte-wise concatenation), so
    that :func:`_unpack` reads both in place, each aligned (the values from the message's
    start, the offsets from a multiple of 4 bytes)."""
    values = xp.asarray(values)
    count = len(offsets)
    head = _values_bytes(count, values.dtype)
    message = xp.empty(head + 4 * count, np.uint8)
    message[: values.dtype.itemsize * count].view(values.dtype)[...] = values
    message[head:].view(np.int32)[...] = offsets
    return message


def _values_bytes(count, dtype):
    """The bytes ``count`` values of ``dtype`` take at a :func:`_pack` message's start, rounded
    up to a multiple of 4 (values narrower than the offsets: at most 3 bytes more)."""
    return -(-np.dtype(dtype).itemsize * count // 4) * 4


def _unpack(message, dtype):
    """(int32 offsets, values of ``dtype``) of a :func:`_pack` message: views of it."""
    dtype = np.dtype(dtype)
    # len = 4 * count + the values' bytes, rounded up by at most 3 < 4 + itemsize
    count = len(message) // (4 + dtype.itemsize)
    head = _values_bytes(count, dtype)
    return message[head:].view(np.int32), message[: dtype.itemsize * count].view(dtype)


def _presence_message(ids, lo, hi, xp):
    """Which of [lo, hi) are present, as bytes: a header byte, then the int32 offsets or the
    packed bitmap of the range, whichever is shorter."""
    if (hi - lo + 7) // 8 < 4 * len(ids):
        bits = xp.zeros(hi - lo, bool)
        bits[ids - lo] = True
        body = xp.packbits(bits)
        head = _BITMAP
    else:
        body = _offsets(ids, lo, xp).view(np.uint8)
        head = _IDS
    return xp.concatenate([xp.full(1, head, np.uint8), body])


def _mark_present(message, lo, hi, present, xp):
    """Sets ``present`` (bool over all n) at the ids of [lo, hi) a presence message names (host
    read of its header byte): a bitmap unpacked straight into the range, no id list made."""
    head = int(message[0])  # sync: one byte
    body = message[1:]
    if head == _BITMAP:
        present[lo:hi] = xp.unpackbits(body)[: hi - lo]  # CuPy's unpackbits takes no count
    else:
        present[body.copy().view(np.int32).astype(np.int64) + lo] = True  # copied: aligned


def _pull(u, A, semiring, allow):
    """Every rank gathers the frontier, then reduces its vertices' in-edges over it."""
    comm, xp = A.comm, A.comm.xp
    if A.transpose is None:
        raise ValueError("a pull needs the transpose's rows (DistMatrix.from_csr builds them)")
    dtype, z_dtype = _dtypes(u, A, semiring)
    bounds = [int(b) for b in A.bounds]
    present = xp.zeros(A.n, bool)
    u_values = None
    if semiring.multiply.uses_x:  # the values travel with the ids, in one message
        parts = [
            _unpack(m, u.values.dtype)
            for m in comm.allgather(_pack(_offsets(u.indices, A.lo, xp), u.values, xp))
        ]
        ids = xp.concatenate([o.astype(np.int64) + bounds[r] for r, (o, _) in enumerate(parts)])
        vals = xp.concatenate([v for _, v in parts])
        u_values = xp.zeros(A.n, vals.dtype)
        u_values[ids] = vals
        present[ids] = True
    else:  # which vertices are present is all the product reads of u
        messages = comm.allgather(_presence_message(u.indices, A.lo, A.hi, xp))
        for r, m in enumerate(messages):
            _mark_present(m, bounds[r], bounds[r + 1], present, xp)
    if xp is not np:  # gbla's pull kernels over the rank's rows of the transpose
        keys, values = _device_pull(
            A, present, u_values, u.values.dtype, allow, semiring, dtype, z_dtype
        )
        return DistVector(keys, values, A.n, A.lo, A.hi)
    t_indptr, t_indices, t_values = A.transpose
    local = xp.arange(A.hi - A.lo, dtype=np.int64)
    if allow is not None:
        local = local[allow]
    keys, values = [], []
    for a, b in _row_chunks(t_indptr, local, xp):  # whole rows: each chunk's keys its own
        rows = local[a:b]
        edge, row = expand_rows(t_indptr, rows, xp)  # the in-edges to read
        k = t_indices[edge].astype(np.int64)
        hit = present[k]
        row, edge, k = row[hit], edge[hit], k[hit]
        if semiring.multiply.positional:
            z = k.astype(z_dtype)
        else:
            x = (
                xp.ones(len(k), dtype)
                if u_values is None
                else u_values[k].astype(dtype, copy=False)
            )  # not read without values
            y = (xp.ones(len(k), dtype) if t_values is None else t_values[edge]).astype(
                dtype, copy=False
            )
            z = _apply_binary(semiring.multiply, x, y, dtype, A.device).astype(z_dtype, copy=False)
        ids = rows[row] + A.lo  # rows ascending, sources ascending within each: keys sorted
        del edge, row, k, hit
        if len(ids):
            ids, z = reduce_by_key(ids, z, semiring.add, A.device)
        keys.append(ids)
        values.append(z)
    return DistVector(_joined(keys, xp, np.int64), _joined(values, xp, z_dtype), A.n, A.lo, A.hi)


# In-edges (pull) or out-edges (push) a rank expands at once: its working memory, about
# 100 bytes an edge, stays near this many of them (a row is never split), whatever the frontier.
_EXPAND = 2**26


def _row_chunks(indptr, rows, xp):
    """(start, end) positions in ``rows`` cutting them into runs of about _EXPAND edges of the
    CSR ``indptr`` (a row of more stands alone): how the CPU's product bounds its memory."""
    if len(indptr) < 2 or int(indptr[-1]) <= _EXPAND or not len(rows):  # all in one run
        return [(0, len(rows))]
    cum = xp.cumsum(indptr[rows + 1].astype(np.int64) - indptr[rows].astype(np.int64))
    targets = xp.arange(1, -(-int(cum[-1]) // _EXPAND), dtype=np.int64) * _EXPAND
    cuts = B.to_host(xp.searchsorted(cum, targets, side="right"))
    bounds = sorted({0, len(rows), *(int(c) for c in cuts)})
    return list(zip(bounds[:-1], bounds[1:]))


def _joined(parts, xp, dtype):
    if len(parts) == 1:
        return parts[0]
    return xp.concatenate(parts) if parts else xp.zeros(0, dtype)


def _push(u, A, semiring, allow):
    comm, xp = A.comm, A.comm.xp
    mult = semiring.multiply
    dtype, z_dtype = _dtypes(u, A, semiring)
    if xp is not np:  # gbla's push kernel over the rank's rows: one product per target
        targets, z = _device_push(A, u, semiring, dtype, z_dtype)
    else:
        targets, z = _host_push(A, u, semiring, dtype, z_dtype)
    bounds = A.bounds
    # owners' ranges (targets are sorted); sync: where each rank's part ends
    cuts = B.to_host(xp.searchsorted(targets, xp.asarray(bounds)))
    offsets = [
        _offsets(targets[cuts[r] : cuts[r + 1]], int(bounds[r]), xp) for r in range(comm.size)
    ]
    if mult.uses_x or mult.uses_y or mult.positional:  # offsets and values in one message
        parts = [
            _unpack(m, z.dtype)
            for m in comm.alltoallv(
                [_pack(offsets[r], z[cuts[r] : cuts[r + 1]], xp) for r in range(comm.size)]
            )
        ]
        ids = xp.concatenate([o for o, _ in parts]).astype(np.int64) + A.lo
        vals = xp.concatenate([v for _, v in parts])
    else:  # pair: the product is one value, whatever the operands
        parts = [(o, None) for o in comm.alltoallv(offsets)]
        ids = xp.concatenate([o for o, _ in parts]).astype(np.int64) + A.lo
        one = _apply_binary(mult, xp.ones(1, dtype), xp.ones(1, dtype), dtype, A.device)
        vals = xp.broadcast_to(one.astype(z_dtype), (len(ids),)).copy()
    if allow is not None and len(ids):
        keep = allow[ids - A.lo]
        ids, vals = B.compress(keep, ids, vals)
    # one rank's products alone (a communicator of one, or the others sent none) are ascending
    # and one per id already: nothing to sort or combine
    if not len(ids) or sum(1 for o, _ in parts if len(o)) == 1:
        return DistVector(ids, vals.astype(z_dtype, copy=False), A.n, A.lo, A.hi)
    by_id = xp.argsort(ids, kind="stable")
    keys, values = reduce_by_key(ids[by_id], vals[by_id], semiring.add, A.device)
    return DistVector(keys, values, A.n, A.lo, A.hi)


def _host_push(A, u, semiring, dtype, z_dtype):
    """(targets ascending, each one's products combined) of this rank's rows of the frontier
    ``u``, with whole-array operations a run of rows at a time (the CPU's product)."""
    xp = A.comm.xp
    rows = u.indices - A.lo
    mult = semiring.multiply
    chunks = []
    for a, b in _row_chunks(A.indptr, rows, xp):
        edge, entry = expand_rows(A.indptr, rows[a:b], xp)  # the products formed here
        entry += a
        targets = A.indices[edge].astype(np.int64)
        if mult.positional:
            z = u.indices[entry].astype(z_dtype)
        else:
            x = u.values[entry].astype(dtype, copy=False)
            y = (xp.ones(len(edge), dtype) if A.values is None else A.values[edge]).astype(
                dtype, copy=False
            )
            z = _apply_binary(mult, x, y, dtype, A.device).astype(z_dtype, copy=False)
        del edge, entry
        # combined here first, one product per target (a target's products in the order
        # formed, so an associative add gives what the owner would have), then to the
        # owners: a target as an offset into its owner's range, and no value when every
        # product is the same (pair)
        order = xp.argsort(targets, kind="stable")
        targets, z = targets[order], z[order]
        del order
        if len(targets):
            targets, z = reduce_by_key(targets, z, semiring.add, A.device)
        chunks.append((targets, z))
    targets, z = chunks[0]
    if len(chunks) > 1:  # the chunks' products of a target, combined in chunk order
        targets = xp.concatenate([t for t, _ in chunks])
        z = xp.concatenate([v for _, v in chunks])
        order = xp.argsort(targets, kind="stable")
        targets, z = reduce_by_key(targets[order], z[order], semiring.add, A.device)
    del chunks
    return targets, z


def _kernel_types(semiring, a_values, u_dtype, dtype):
    return _spmv.SpmvTypes(
        semiring, None if a_values is None else a_values.dtype, u_dtype, dtype, True
    )  # vxm: u is the multiply's first operand


def _device_push(A, u, semiring, dtype, z_dtype):
    """(targets ascending, each one's products combined) of this rank's rows of the frontier
    ``u`` on the GPU: the push kernel of one GPU over the rank's CSR, into dense w and present
    over all n vertices (no sort of the products)."""
    cp = A.comm.xp
    if u.counted is not None and u.counted[0] is A:  # counted for the direction already
        offsets, total = u.counted[1:]
    else:
        offsets = _degree_offsets(A, u)
        total = int(offsets[-1])  # sync: the edges to expand
    w = cp.full(A.n, semiring.add.identity_for(z_dtype), z_dtype)
    present = cp.zeros(A.n, np.uint8)
    # the row pointers' address set back by lo: the kernel reads a row at its global id, the
    # id a positional multiply gives (any.secondi's parent)
    indptr = np.uint64((A.indptr.data.ptr - A.lo * A.indptr.itemsize) % 2**64)
    _spmv.push_into(
        (indptr, A.indices, A.values),
        cp.ascontiguousarray(u.indices),
        cp.ascontiguousarray(u.values),
        offsets,
        total,
        _kernel_types(semiring, A.values, u.values.dtype, dtype),
        None,
        MODE_NONE,
        w,
        present,
        index_dtype=A.indices.dtype,
        offset_dtype=A.indptr.dtype,
    )
    targets = _where_set(present, cp)  # sync: the count
    return targets, w[targets]


def _device_pull(A, present, u_values, u_dtype, allow, semiring, dtype, z_dtype):
    """(ids ascending, their products) of the pull over this rank's rows of the transpose on
    the GPU: the pull kernels of one GPU, a thread a row and a warp a long row, stopping at the
    add's terminal value; ``present`` and ``u_values`` are the gathered frontier over all n."""
    cp = A.comm.xp
    t_indptr, t_indices, t_values = A.transpose
    if "pull_rows" not in A._cache:  # sync: their counts, once per matrix
        A._cache["pull_rows"] = _spmv.row_tiers(t_indptr)
    m = A.hi - A.lo
    w = cp.empty(m, z_dtype)
    hit = cp.zeros(m, np.uint8)
    mask, mode = (None, MODE_NONE) if allow is None else (allow, MODE_TRUE)
    _spmv.pull_into(
        (t_indptr, t_indices, t_values),
        A._cache["pull_rows"],
        u_values,
        present,
        _kernel_types(semiring, t_values, u_dtype, dtype),
        mask,
        mode,
        w,
        hit,
    )
    local = _where_set(hit, cp)  # sync: the count
    return local + A.lo, w[local]


def _where_set(flags, xp):
    """The positions of the set bytes of a dense flag array (bool or uint8), ascending: the
    8-byte words holding one found first (a scan of n / 8 of them), then their bytes (a whole
    flatnonzero over n bytes costs several times as much on the GPU)."""
    head = len(flags) // 8 * 8
    if not head:
        return xp.flatnonzero(flags)
    flags = flags.view(np.uint8)
    words = xp.flatnonzero(flags[:head].view(np.uint64))
    within = xp.flatnonzero(flags[:head].reshape(-1, 8)[words])
    found = words[within // 8] * 8 + within % 8
    if head == len(flags):
        return found
    return xp.concatenate([found, xp.flatnonzero(flags[head:]) + head])
