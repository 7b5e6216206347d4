"""A vector's reduction by a monoid where the vector is: the work of :func:`gbla.reduce` and of
a loop's ``test_reduce`` (:func:`gbla.iterate`), in one place."""

import numpy as np

from ..kernels import _elementwise, _entries

__all__ = ["reduce_vector"]


def reduce_vector(v, monoid, arrived=None):
    """The monoid's reduction of ``v``'s entries (its identity where there are none): a 0-d
    array of v's dtype where v is (nothing read back on the GPU). ``arrived``: the word of
    finished blocks a GPU launch takes (a loop's shared one; None: a new one). 'any' on the
    GPU takes the lowest present index's value (a host read of the entry list)."""
    sparse_cpu = v.device == "cpu" and v._is_sparse
    values, present = (None, None) if sparse_cpu else v._dense()
    if v.device == "gpu":
        if monoid.is_any:
            idx, vals = v._sparse()
            return vals[0] if len(idx) else np.asarray(monoid.identity_for(v.dtype))
        if v._entries is not None:
            return _entries.reduce(v._entries, values, present, monoid, arrived)
        return _elementwise.reduce(monoid, values, present)
    vals = v._values if v._is_sparse else values if present is None else values[present]
    if len(vals) == 0:
        return np.asarray(monoid.identity_for(v.dtype), dtype=v.dtype)
    return np.asarray(monoid.reduceat(vals, np.zeros(1, np.int64))[0], dtype=v.dtype)
