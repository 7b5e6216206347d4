"""A matrix cut by rows over the ranks of a communicator, and the product on it in both
directions.

Rank r holds rows ``bounds[r]`` to ``bounds[r + 1]`` of A (a vertex range balanced by edges:
its out-edges, with global column ids), the same rows of A's transpose (its in-edges), and the
same range of every vector.

- Push: ``vxm`` expands the local entries of u along their rows, sends each product to the rank
  owning its column (one all-to-all of ids and one of values), and the owner keeps what its
  mask allows and reduces each column's products with the semiring's add, in the order the
  ranks sent them (so every rank count gives the one-GPU result for an associative add).
- Pull: every rank gathers the whole frontier (an all-gather of its entries) and reduces the
  in-edges of its allowed vertices over the present ones, in ascending source order.
- A :class:`~gbla.DirectionTracker` chooses per product from the frontier's size and edges
  summed over the ranks, so every rank takes the same direction."""

from dataclasses import dataclass

import numpy as np

from .. import _backend as B
from .. import direction as _direction
from .._matrix_ops import _apply_binary, reduce_by_key
from .._storage import expand_rows
from ..outofcore.partition import balanced_bounds

__all__ = ["DistMatrix", "DistVector", "vxm"]


@dataclass
class DistVector:
    """This rank's entries of a vector of ``size``: global ids in ``[lo, hi)``, sorted, and
    their values."""

    indices: object
    values: object
    size: int
    lo: int
    hi: int


class DistMatrix:
    """This rank's rows of an n x n matrix: CSR rows ``lo`` to ``hi`` (row pointers from 0,
    global column ids, values or None for an iso pattern), the bounds of every rank, and the
    communicator. Build every rank's part with :meth:`scatter` (or :meth:`from_csr` on each
    rank from the whole host CSR)."""

    def __init__(self, comm, bounds, indptr, indices, values, n, transpose=None, nvals=None):
        self.comm, self.bounds, self.n = comm, np.asarray(bounds, np.int64), int(n)
        self.lo, self.hi = int(self.bounds[comm.rank]), int(self.bounds[comm.rank + 1])
        self.indptr, self.indices, self.values = indptr, indices, values
        self.transpose = transpose  # (indptr, indices, values) of A.T's rows lo..hi, or None
        self.nvals = nvals  # A's entries over every rank
        self.device = "gpu" if comm.xp is not np else "cpu"

    @classmethod
    def from_csr(cls, comm, indptr, indices, values=None):
        """This rank's part of the host CSR (indptr, indices, values) of a square matrix, the
        rows cut by :func:`~gbla.outofcore.partition.balanced_bounds` over ``comm.size``
        ranks; on the communicator's array module."""
        import scipy.sparse as sp
        indptr = np.asarray(indptr, np.int64)
        n = len(indptr) - 1
        bounds = balanced_bounds(indptr, comm.size)
        lo, hi = int(bounds[comm.rank]), int(bounds[comm.rank + 1])
        xp = comm.xp

        def rows(ptr, ind, val):
            e0, e1 = int(ptr[lo]), int(ptr[hi])
            return (xp.asarray(ptr[lo:hi + 1] - e0), xp.asarray(np.asarray(ind)[e0:e1]),
                    None if val is None else xp.asarray(np.asarray(val)[e0:e1]))

        # the in-edges, by the same vertex ranges: the transpose's rows, sources ascending
        data = np.arange(len(indices)) if values is None else np.asarray(values)
        T = sp.csr_array((data, np.asarray(indices), indptr), shape=(n, n)).T.tocsr()
        T.sort_indices()
        t_values = None if values is None else T.data
        return cls(comm, bounds, *rows(indptr, indices, values), n,
                   transpose=rows(T.indptr.astype(np.int64), T.indices, t_values),
                   nvals=int(indptr[-1]))

    @classmethod
    def of(cls, comm, A):
        """This rank's part of a gbla Matrix (read from the host)."""
        return cls.from_csr(comm, B.to_host(A._indptr), B.to_host(A._indices),
                            None if A._values is None else B.to_host(A._values))

    def owner(self, ids):
        """The rank owning each global id."""
        xp = self.comm.xp
        return xp.searchsorted(xp.asarray(self.bounds), ids, side="right") - 1

    def vector(self, indices, values):
        """A DistVector of this rank's range from global ``indices`` (sorted, inside it)."""
        xp = self.comm.xp
        return DistVector(xp.asarray(indices, np.int64), xp.asarray(values), self.n, self.lo,
                          self.hi)


def vxm(u, A, semiring, *, allow=None, direction="push"):
    """This rank's part of w = u (+).(x) A: the columns of A's rows this rank owns, combined
    over every rank. ``allow``: a bool array over this rank's range (w keeps only allowed
    ids), or None. ``direction``: 'push', 'pull', or a DirectionTracker (the traversal's)
    choosing from the whole frontier. Collective: every rank calls it."""
    if isinstance(direction, _direction.DirectionTracker):
        direction = _choose(u, A, semiring, direction)
    if direction == "pull":
        return _pull(u, A, semiring, allow)
    return _push(u, A, semiring, allow)


def _dtypes(u, A, semiring):
    dtype = np.result_type(u.values.dtype, A.values.dtype if A.values is not None else
                           u.values.dtype)
    return dtype, semiring.output_dtype(dtype)


def _choose(u, A, semiring, tracker):
    """The tracker's choice from the frontier's vertices and out-edges over every rank."""
    rows = u.indices - A.lo
    edges = int((A.indptr[rows + 1] - A.indptr[rows]).sum()) if len(rows) else 0  # sync
    vertices = A.comm.allreduce_sum(len(rows))
    edges = A.comm.allreduce_sum(edges)
    early_exit = semiring.add.terminal_for(_dtypes(u, A, semiring)[1]) is not None
    return tracker.choose(frontier_vertices=vertices, frontier_edges=edges, edges=A.nvals,
                          n=A.n, early_exit=early_exit)


def _pull(u, A, semiring, allow):
    """Every rank gathers the frontier, then reduces its vertices' in-edges over it."""
    comm, xp = A.comm, A.comm.xp
    if A.transpose is None:
        raise ValueError("a pull needs the transpose's rows (DistMatrix.from_csr builds them)")
    dtype, z_dtype = _dtypes(u, A, semiring)
    ids = xp.concatenate(comm.allgather(u.indices))
    vals = xp.concatenate(comm.allgather(u.values))
    present = xp.zeros(A.n, bool)
    present[ids] = True
    u_values = xp.zeros(A.n, vals.dtype)
    u_values[ids] = vals
    t_indptr, t_indices, t_values = A.transpose
    local = xp.arange(A.hi - A.lo, dtype=np.int64)
    if allow is not None:
        local = local[allow]
    edge, row = expand_rows(t_indptr, local, xp)  # the in-edges to read
    k = t_indices[edge].astype(np.int64)
    hit = present[k]
    row, edge, k = row[hit], edge[hit], k[hit]
    if semiring.multiply.positional:
        z = k.astype(z_dtype)
    else:
        x = u_values[k].astype(dtype, copy=False)
        y = (xp.ones(len(k), dtype) if t_values is None else t_values[edge]).astype(
            dtype, copy=False)
        z = _apply_binary(semiring.multiply, x, y, dtype, A.device).astype(z_dtype, copy=False)
    ids = local[row] + A.lo  # rows ascending, sources ascending within each: keys sorted
    if not len(ids):
        return DistVector(ids, z, A.n, A.lo, A.hi)
    keys, values = reduce_by_key(ids, z, semiring.add, A.device)
    return DistVector(keys, values, A.n, A.lo, A.hi)


def _push(u, A, semiring, allow):
    comm, xp = A.comm, A.comm.xp
    dtype, z_dtype = _dtypes(u, A, semiring)
    edge, entry = expand_rows(A.indptr, u.indices - A.lo, xp)  # the products formed here
    total = len(edge)
    targets = A.indices[edge].astype(np.int64)
    mult = semiring.multiply
    if mult.positional:
        z = u.indices[entry].astype(z_dtype)
    else:
        x = u.values[entry].astype(dtype, copy=False)
        y = (xp.ones(total, dtype) if A.values is None else A.values[edge]).astype(dtype,
                                                                                 copy=False)
        z = _apply_binary(mult, x, y, dtype, A.device).astype(z_dtype, copy=False)
    # to the owners: ranks in order, each rank's products in the order formed
    owner = A.owner(targets)
    order = xp.argsort(owner, kind="stable")
    targets, z, owner = targets[order], z[order], owner[order]
    cuts = xp.searchsorted(owner, xp.arange(comm.size + 1))
    cuts = cuts.get() if hasattr(cuts, "get") else cuts  # sync: where each rank's part ends
    ids = comm.alltoallv([targets[cuts[r]:cuts[r + 1]] for r in range(comm.size)])
    vals = comm.alltoallv([z[cuts[r]:cuts[r + 1]] for r in range(comm.size)])
    ids, vals = xp.concatenate(ids), xp.concatenate(vals)
    if allow is not None and len(ids):
        keep = allow[ids - A.lo]
        ids, vals = ids[keep], vals[keep]
    if not len(ids):
        return DistVector(ids, vals.astype(z_dtype), A.n, A.lo, A.hi)
    by_id = xp.argsort(ids, kind="stable")
    keys, values = reduce_by_key(ids[by_id], vals[by_id], semiring.add, A.device)
    return DistVector(keys, values, A.n, A.lo, A.hi)
