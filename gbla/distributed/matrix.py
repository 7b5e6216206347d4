"""A matrix cut by rows over the ranks of a communicator, and the push product on it.

Rank r holds rows ``bounds[r]`` to ``bounds[r + 1]`` of A (a vertex range balanced by edges:
its out-edges, with global column ids) and the same range of every vector. ``vxm`` expands the
local entries of u along their rows, sends each product to the rank owning its column (one
all-to-all of ids and one of values), and the owner keeps what its mask allows and reduces
each column's products with the semiring's add, in the order the ranks sent them (so every
rank count gives the one-GPU result for an associative add)."""

from dataclasses import dataclass

import numpy as np

from .. import _backend as B
from .._matrix_ops import _apply_binary, _owners, reduce_by_key
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

    def __init__(self, comm, bounds, indptr, indices, values, n):
        self.comm, self.bounds, self.n = comm, np.asarray(bounds, np.int64), int(n)
        self.lo, self.hi = int(self.bounds[comm.rank]), int(self.bounds[comm.rank + 1])
        self.indptr, self.indices, self.values = indptr, indices, values
        self.device = "gpu" if comm.xp is not np else "cpu"

    @classmethod
    def from_csr(cls, comm, indptr, indices, values=None):
        """This rank's part of the host CSR (indptr, indices, values) of a square matrix, the
        rows cut by :func:`~gbla.outofcore.partition.balanced_bounds` over ``comm.size``
        ranks; on the communicator's array module."""
        indptr = np.asarray(indptr, np.int64)
        n = len(indptr) - 1
        bounds = balanced_bounds(indptr, comm.size)
        lo, hi = int(bounds[comm.rank]), int(bounds[comm.rank + 1])
        e0, e1 = int(indptr[lo]), int(indptr[hi])
        xp = comm.xp
        return cls(comm, bounds, xp.asarray(indptr[lo:hi + 1] - e0),
                   xp.asarray(np.asarray(indices)[e0:e1]),
                   None if values is None else xp.asarray(np.asarray(values)[e0:e1]), n)

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


def vxm(u, A, semiring, *, allow=None):
    """This rank's part of w = u (+).(x) A: the columns of A's rows this rank owns, combined
    over every rank. ``allow``: a bool array over this rank's range (w keeps only allowed
    ids), or None. Collective: every rank calls it."""
    comm, xp = A.comm, A.comm.xp
    dtype = np.result_type(u.values.dtype, A.values.dtype if A.values is not None else
                           u.values.dtype)
    z_dtype = semiring.output_dtype(dtype)
    rows = u.indices - A.lo
    starts = A.indptr[rows]
    counts = A.indptr[rows + 1] - starts
    offsets = xp.cumsum(counts)
    total = int(offsets[-1]) if len(offsets) else 0  # sync: the products formed here
    position = xp.arange(total, dtype=np.int64)
    entry = _owners(counts, offsets, position, xp) if total else position
    edge = starts[entry] + position - (offsets[entry] - counts[entry]) if total else position
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
