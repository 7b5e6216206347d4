"""Launchers of entries.cu: the entry lists dense vectors carry inside a loop recorded on the
device (a device product makes one as it finds entries), and the writes that read them, so that
a traversal's level costs its frontier, not a pass over every vertex.

A list is ``(ids, count)``: ``ids`` a device array of positions (int32, or int64 for n >=
2**31) with room for every position, ``count`` a one-element uint64 device array, ``UNKNOWN``
when no list is kept. Everything is enqueued on the current stream; nothing is read back."""

import numpy as np

from .._backend import _cupy
from .._dtypes import CUDA_TYPES
from . import _launch
from ._launch import THREADS, ptr, sm_count

__all__ = ["UNKNOWN", "new_list", "forget", "store", "assign"]

UNKNOWN = np.uint64(2**64 - 1)  # GBLA_UNKNOWN of entries.cu


def _id_dtype(n):
    return np.dtype(np.int32 if n < 2**31 else np.int64)


def new_list(n):
    """(ids, count) with room for n entries, count unknown."""
    cp = _cupy()
    count = cp.empty(1, np.uint64)
    count.fill(UNKNOWN)
    return cp.empty(max(n, 1), _id_dtype(n)), count


def forget(entries):
    """Enqueue: the list no longer describes its vector (count := UNKNOWN)."""
    entries[1].fill(UNKNOWN)


def _kernel(name, *types):
    expression = f"{name}<{', '.join(types)}>"
    return _launch.function("entries.cu", expression, name_expressions=(expression,))


def _ctype(dtype):
    dtype = np.dtype(dtype)
    return {np.dtype(np.uint8): "bool"}.get(dtype) or CUDA_TYPES[dtype]


def _blocks(n):
    """Grid-stride launches: two blocks an SM cover a listed frontier, and the pass over n
    where a list is unknown (once a run)."""
    return (max(1, min(-(-n // THREADS), sm_count() * 2)),)


def store(values, present, entries, buffer_values, buffer_present, buffer_entries):
    """Enqueue buffer := (values, present), a vector whose ``entries`` list its entries, into a
    state's buffers whose own list is ``buffer_entries``: the old entries the new value lacks
    cleared, the new ones written, the list copied (or, where either list is unknown, the whole
    value copied)."""
    n = buffer_values.size
    ids_w, count_w = entries
    ids_b, count_b = buffer_entries
    t, i = _ctype(values.dtype), _ctype(ids_w.dtype)
    _kernel("gbla_store_clear", t, i)(_blocks(n), (THREADS,),
                                      (np.int64(n), ids_b, count_b, count_w, values, present,
                                       buffer_values, buffer_present))
    _kernel("gbla_store_set", t, i)(_blocks(n), (THREADS,),
                                    (ids_w, count_w, values, buffer_values, buffer_present, ids_b,
                                     count_b))


def assign(entries, mask, t_values, t_present, out_values, out_present):
    """Enqueue out<m.S> = t in place at the entries listed for the mask's vector (``mask`` its
    presence, read only where the list is unknown); ``t_values`` an array of n or a 0-d device
    array, ``t_present`` None when t has every entry."""
    ids, count = entries
    n = out_values.size
    scalar = t_values.ndim == 0
    kernel = _kernel("gbla_assign_entries", _ctype(t_values.dtype), _ctype(out_values.dtype),
                     _ctype(ids.dtype))
    kernel(_blocks(n), (THREADS,), (np.int64(n), ids, count, mask, t_values, np.int32(scalar),
                                    ptr(t_present), out_values, out_present))
