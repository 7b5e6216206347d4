"""Masks: which output positions an operation may write (GraphBLAS C API semantics).

A structural mask allows i where the mask vector has an entry; a value mask where it has an
entry whose value is nonzero (true); a complemented mask allows the rest.
"""

from __future__ import annotations

from typing import Any

from . import _backend as B
from . import _storage

__all__ = ["Mask", "MatrixMask"]

# Matrix masks up to this many positions are answered by a bitmap (64 MiB at most).
BITMAP_POSITIONS = 1 << 26

# Kernel modes: how a bool array m selects allowed positions.
MODE_NONE, MODE_TRUE, MODE_FALSE = 0, 1, 2


class Mask:
    __slots__ = ("vector", "structural", "complement")

    def __init__(self, vector: Any, structural: bool, complement: bool = False) -> None:
        self.vector = vector
        self.structural = structural
        self.complement = complement

    def __invert__(self) -> Mask:
        return type(self)(self.vector, self.structural, not self.complement)

    def __repr__(self):
        kind = "S" if self.structural else "V"
        return f"{'~' if self.complement else ''}<mask {kind} of {self.vector!r}>"

    def kernel_args(self):
        """(m, mode): position i is allowed iff mode is NONE, or m[i] == (mode == TRUE).

        ``m`` is None only with MODE_NONE (or a full structural complement: nothing allowed,
        returned as an all-false array).
        """
        values, present = self.vector._dense()
        xp = B.xp_of(self.vector.device)
        if self.structural:
            if present is None:
                if not self.complement:
                    return None, MODE_NONE
                return xp.zeros(self.vector.size, bool), MODE_TRUE
            m = present
        else:
            m = values.astype(bool) if present is None else (present & values.astype(bool))
        return m, (MODE_FALSE if self.complement else MODE_TRUE)

    def allows_at(self, indices):
        """Whether the mask allows each of ``indices`` (sorted or not): a lookup at those
        positions only, for a sparse result on the CPU."""
        v = self.vector
        xp = B.xp_of(v.device)
        if v._is_sparse:
            named, values = v._sparse()
            at, hit = _storage.find_sorted(named, indices, xp)
            if not self.structural:
                hit[hit] = values[at[hit]].astype(bool)
        else:
            values, present = v._dense()
            hit = xp.ones(len(indices), bool) if present is None else present[indices]
            if not self.structural:
                hit = hit & values[indices].astype(bool)
        return ~hit if self.complement else hit

    def allowed(self):
        """Bool array of allowed positions, or None when every position is allowed."""
        m, mode = self.kernel_args()
        if mode == MODE_NONE:
            return None
        return m if mode == MODE_TRUE else ~m


class MatrixMask(Mask):
    """Which positions of a matrix result may be written (mxm, a matrix ewise_add): structural
    (``M.S``: where M has an entry) or value (``M.V``: an entry that is not zero), complemented
    with ``~``. Positions are keys, row * ncols + column. ``vector`` holds the matrix."""

    __slots__ = ()

    @property
    def matrix(self) -> Any:
        return self.vector

    def keys(self):
        """The sorted keys of the positions the uncomplemented mask names."""
        M = self.matrix
        keys = M._entry_keys()
        if self.structural or M.is_iso:
            return keys
        return keys[M._values.astype(bool)]

    def allows(self, keys):
        """A bool array: which of ``keys`` the mask allows. Up to 2**26 positions, a bitmap of
        the named ones answers each key in one read; beyond, a search among them."""
        named = self.keys()
        xp = B.xp_of(self.matrix.device)
        positions = self.matrix.nrows * self.matrix.ncols
        if len(named) == 0:
            inside = xp.zeros(len(keys), bool)
        elif positions <= BITMAP_POSITIONS:
            bitmap = xp.zeros(positions, bool)
            bitmap[named] = True
            inside = bitmap[keys]
        else:
            _, inside = _storage.find_sorted(named, keys, xp)
        return ~inside if self.complement else inside
