"""Masks: which output positions an operation may write (GraphBLAS C API semantics).

A structural mask allows i where the mask vector has an entry; a value mask where it has an
entry whose value is nonzero (true); a complemented mask allows the rest.
"""

from . import _backend as B

__all__ = ["Mask"]

# Kernel modes: how a bool array m selects allowed positions.
MODE_NONE, MODE_TRUE, MODE_FALSE = 0, 1, 2


class Mask:
    __slots__ = ("vector", "structural", "complement")

    def __init__(self, vector, structural, complement=False):
        self.vector = vector
        self.structural = structural
        self.complement = complement

    def __invert__(self):
        return Mask(self.vector, self.structural, not self.complement)

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

    def allowed(self):
        """Bool array of allowed positions, or None when every position is allowed."""
        m, mode = self.kernel_args()
        if mode == MODE_NONE:
            return None
        return m if mode == MODE_TRUE else ~m
