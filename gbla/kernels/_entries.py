"""Launchers of entries.cu: the entry lists dense vectors carry inside a loop recorded on the
device (a device product makes one as it finds entries, and so do the element-wise ops here),
and the ops and writes that read them, so that a traversal's level costs its frontier, not a
pass over every vertex.

A list is ``(ids, count)``: ``ids`` a device array of positions (int32, or int64 for n >=
2**31; a product's has its matrix's index dtype) with room for every position, ``count`` a
one-element uint64 device array, ``UNKNOWN`` when no list is kept. An op reads a vector without
a list as one whose count is unknown: a pass over n, which makes a list for what follows.

The element-wise ops (:func:`map`, :func:`select`, :func:`union`, :func:`merge`) write into
buffers kept for their op site (``keep(name, size, dtype, fill)``, as for a device product):
each use's entries are taken back along its list after the iteration's store, every site's in
one launch. Everything is enqueued on the current stream; nothing is read back."""

import itertools
from typing import NamedTuple

import numpy as np

from .._backend import _cupy
from .._dtypes import BOOL, CUDA_TYPES, DTYPES, FP32, FP64, INT32, INT64, INTEGER
from . import _codegen, _launch
from ._codegen import MapTypes
from ._launch import THREADS, ptr, sm_count

__all__ = [
    "UNKNOWN",
    "MASK_TYPES",
    "MapTypes",
    "Operand",
    "Mask",
    "new_list",
    "forget",
    "store",
    "site_table",
    "Reset",
    "assign",
    "assign_bits",
    "map_entries",
    "select",
    "improve",
    "union",
    "merge",
    "reduce",
    "registry_types",
    "translation_unit",
]

UNKNOWN = np.uint64(2**64 - 1)  # GBLA_UNKNOWN of entries.cu
BIT_WORDS = tuple(CUDA_TYPES[d] for d in INTEGER)  # the words gbla_assign_bits reads
# m_type of entries.cu: how a value mask's values are read (0: a structural mask, not read)
MASK_TYPES = {BOOL: 1, INT32: 2, INT64: 3, FP32: 4, FP64: 5}


class Operand(NamedTuple):
    """A dense vector as these kernels read it: values, presence (None: every entry) and entry
    list (None: none kept)."""

    values: object
    present: object
    entries: object


class Mask(NamedTuple):
    """A mask as these kernels read it at each position: its vector's presence (None: all),
    values (None: a structural mask), whether it is complemented, and its vector's list."""

    present: object
    values: object
    complement: bool
    entries: object


def _id_dtype(n):
    return np.dtype(np.int32 if n < 2**31 else np.int64)


def new_list(n, id_dtype=None):
    """(ids, count) with room for n entries (ids of ``id_dtype``, None: the type n needs),
    count unknown."""
    cp = _cupy()
    ids = cp.empty(max(n, 1), _id_dtype(n) if id_dtype is None else id_dtype)
    return ids, cp.full(1, UNKNOWN, np.uint64)


def forget(entries):
    """Enqueue: the list no longer describes its vector (count := UNKNOWN)."""
    entries[1].fill(UNKNOWN)


def _kernel(name, *types):
    expression = f"{name}<{', '.join(types)}>"
    return _launch.function("entries.cu", expression, name_expressions=(expression,))


def _map_kernel(name, types, family=None):
    """Kernel ``name`` instantiated with the struct of ``types``, compiled with the other
    kernels of ``family`` that one op launches (one module)."""
    struct, src = _codegen.map_struct(types)
    names = tuple(f"{k}<{struct}>" for k in (family or (name,)))
    return _launch.function(
        "entries.cu", f"{name}<{struct}>", epilogue="\n" + src, name_expressions=names
    )


def _ctype(dtype):
    dtype = np.dtype(dtype)
    return {np.dtype(np.uint8): "bool"}.get(dtype) or CUDA_TYPES[dtype]


def _blocks(n):
    """Grid-stride launches: two blocks an SM cover a listed frontier, and the pass over n
    where a list is unknown (once a run)."""
    return (max(1, min(-(-n // THREADS), _most_blocks())),)


def _most_blocks():
    """The largest grid :func:`_blocks` makes."""
    return sm_count() * 2


def _list(entries):
    """The (ids, wide, count) arguments of a list; no list: null pointers, read as unknown."""
    if entries is None:
        return np.uint64(0), np.int32(0), np.uint64(0)
    ids, count = entries
    return ids, np.int32(ids.dtype.itemsize == 8), count


def _walkable(mask):
    """The mask's list where it holds every position the mask allows (not complemented)."""
    return None if mask is None or mask.complement else mask.entries


def _mask_args(mask):
    """(presence, values, m_type, complement) arguments of a mask; None: no mask."""
    if mask is None:
        return np.uint64(0), np.uint64(0), np.int32(0), np.int32(0)
    m_type = 0 if mask.values is None else MASK_TYPES[np.dtype(mask.values.dtype)]
    return ptr(mask.present), ptr(mask.values), np.int32(m_type), np.int32(mask.complement)


def _bound(keep, scalar, dtype):
    """A bound scalar (apply's, select's thunk, assign's value) as one device value of
    ``dtype``: a 0-d device array cast where it is (never read back), a host value kept at the
    op site, set when it is made and at each run's start (no launch an iteration)."""
    if hasattr(scalar, "__cuda_array_interface__"):
        return scalar.astype(dtype, copy=False)
    return keep("scalar", 1, dtype, scalar)


def _output(keep, n, dtype, name=""):
    """(values, present, list) of an op site's output, empty: its last use's entries were taken
    back after the last iteration's store, with every other site's, by the loop's test
    (:func:`site_table`); this use is listed for the next. ``name``: which output of the site,
    where it has two."""
    values = keep(name + "values", max(n, 1), dtype, None)
    present = keep(name + "present", max(n, 1), np.bool_, False)
    ids = keep(name + "ids", max(n, 1), _id_dtype(n), None)
    count = keep(name + "count", 1, np.uint64, 0)
    keep.clear_later(n, ids, count, present)
    return values[:n], present[:n], (ids, count)


class Reset(NamedTuple):
    """What the loop's test sets back besides a site's presence and list (a device product's
    output, _spmv.device_product): ``values`` at the listed entries to the value whose bits are
    ``identity`` (``bytes`` wide), and the words of ``info`` to zero but for its direction word,
    ``pull``."""

    values: object
    identity: int
    bytes: int
    info: object
    pull: int


# a gbla_site of lists.cuh: ids, wide, count, present, n, values, bytes, identity, info,
# info_words, pull
SITE_WORDS = 11


def site_table(sites):
    """The gbla_site table of ``sites`` ((n, ids, count, present, reset) each, reset a
    :class:`Reset` or None) as uint64 words, for the loop's test (loop.cu, lists.cuh's
    gbla_clear_sites)."""
    table = np.zeros((len(sites), SITE_WORDS), np.uint64)
    for row, (n, ids, count, present, reset) in zip(table, sites):
        row[:5] = (ids.data.ptr, ids.dtype.itemsize == 8, count.data.ptr, present.data.ptr, n)
        if reset is not None:
            row[5:] = (
                reset.values.data.ptr,
                reset.bytes,
                reset.identity,
                reset.info.data.ptr,
                reset.info.size,
                reset.pull,
            )
    return table


def _launch_into(kernel, n, args, out, *after):
    """``kernel`` over n positions with ``args``, then ``out``'s arguments (values, present,
    list), then ``after``; returns ``out``."""
    values, present, entries = out
    kernel(_blocks(n), (THREADS,), (np.int64(n), *args, values, present, *_list(entries), *after))
    return out


def map_entries(keep, types, a, b=None, *, scalar=None, mask=None):
    """(values, present, list) of z<mask> = f(a, b) at the entries a and b share, f the
    expression of ``types`` (MapTypes): apply (``scalar``, a host value or a 0-d device array,
    as b; or no b for a unary op) and ewise_mult (``b`` an Operand). Walks the shortest known
    list of a's, b's and the mask's (not complemented); ``mask`` a :class:`Mask` or None."""
    n = a.values.size
    b_values, b_step, b_present, b_entries = None, 0, None, None
    if scalar is not None:
        b_values = _bound(keep, scalar, types.dtype)
    elif b is not None:
        b_values, b_step, b_present, b_entries = b.values, 1, b.present, b.entries
    out = _output(keep, n, types.z_dtype)
    args = (
        *_list(a.entries),
        *_list(b_entries),
        *_list(_walkable(mask)),
        a.values,
        ptr(a.present),
        ptr(b_values),
        np.int64(b_step),
        ptr(b_present),
        *_mask_args(mask),
    )
    return _launch_into(_map_kernel("gbla_entries_map", types), n, args, out)


def select(keep, types, a, thunk=None, *, vector=None, rest=False, shift=None):
    """(values, present, list) of a's entries where f(a, thunk) holds (``thunk`` a host value
    or a 0-d device array, None where f reads none); with ``vector`` (an Operand: the thunk a
    vector of ``types.b_dtype``), a's entries where it has one too and f(a_i, vector_i)
    holds. With ``rest``, a pair: those, and a's other entries, made in the same pass. With
    ``shift`` (a host value), the thunk is thunk + shift, added in ``types.dtype`` by the
    kernel (a Scalar plus a number)."""
    n = a.values.size
    out = _output(keep, n, a.values.dtype)
    other = _output(keep, n, a.values.dtype, "rest_") if rest else None
    if vector is not None:
        t, tp, step = vector.values, ptr(vector.present), 1
    else:
        t = None if thunk is None else _bound(keep, thunk, types.dtype)
        tp, step = np.uint64(0), 0
    args = (*_list(a.entries), a.values, ptr(a.present), ptr(t), tp, np.int32(step))
    added = None if shift is None else keep("shift", 1, types.dtype, shift)
    kernel = _map_kernel("gbla_entries_select", types)
    if other is None:
        return _launch_into(
            kernel, n, args, out, np.uint64(0), np.uint64(0), *_list(None), ptr(added)
        )
    values, present, entries = other
    _launch_into(kernel, n, args, out, values, present, *_list(entries), ptr(added))
    return out, other


def improve(keep, types, a, out_values, out_present):
    """(values, present, list) of a's entries where out has no entry or f(a_i, out_i) holds,
    each written into out in place (``out_values`` of ``types.b_dtype``, ``out_present`` None
    where out has every entry): a relaxation's test and write in one kernel."""
    n = a.values.size
    z = _output(keep, n, a.values.dtype)
    args = (*_list(a.entries), a.values, ptr(a.present), out_values, ptr(out_present))
    return _launch_into(_map_kernel("gbla_entries_improve", types), n, args, z)


def union(keep, types, a, b, *, mask=None):
    """(values, present, list) of z<mask> = a (+) b: f where both have an entry, the lone
    value (cast to the result dtype) where one has; over count_a + count_b entries where both
    lists are known."""
    n = a.values.size
    out = _output(keep, n, types.z_dtype)
    args = (
        *_list(a.entries),
        *_list(b.entries),
        *_list(_walkable(mask)),
        a.values,
        ptr(a.present),
        b.values,
        ptr(b.present),
        *_mask_args(mask),
    )
    return _launch_into(_map_kernel("gbla_entries_union", types), n, args, out)


def _t_args(keep, t_values, out_dtype):
    """(values, scalar flag) of t: an array of n, a 0-d device array (cast where it is
    written), or a host value (already of out's dtype, kept at the op site)."""
    scalar = np.ndim(t_values) == 0
    if scalar and not hasattr(t_values, "__cuda_array_interface__"):
        t_values = _bound(keep, t_values, out_dtype)
    return t_values, scalar


def merge(keep, out, t_values, t_present, mask):
    """(values, present, list) of a new value of out<mask> = t (``mask`` not complemented),
    for an ``out`` (Operand) that must not be written in place: its entries outside the mask,
    t's inside; over count_out + count_mask entries where both lists are known. ``t_present``
    None: t has every entry."""
    n = out.values.size
    tv, scalar = _t_args(keep, t_values, out.values.dtype)
    result = _output(keep, n, out.values.dtype)
    present, values, m_type, _ = _mask_args(mask)
    kernel = _kernel("gbla_entries_merge", _ctype(tv.dtype), _ctype(out.values.dtype))
    args = (
        *_list(out.entries),
        *_list(mask.entries),
        present,
        values,
        m_type,
        tv,
        np.int32(scalar),
        ptr(t_present),
        out.values,
        ptr(out.present),
    )
    return _launch_into(kernel, n, args, result)


def assign(keep, mask, t_values, t_present, out_values, out_present):
    """Enqueue out<mask> = t in place (``mask`` not complemented) at the mask's listed
    entries (every position where it has no known list); ``t_values`` an array of n, a 0-d
    device array or a host value of out's dtype, ``t_present`` None when t has every entry."""
    n = out_values.size
    tv, scalar = _t_args(keep, t_values, out_values.dtype)
    present, values, m_type, _ = _mask_args(mask)
    kernel = _kernel("gbla_assign_entries", _ctype(tv.dtype), _ctype(out_values.dtype))
    kernel(
        _blocks(n),
        (THREADS,),
        (
            np.int64(n),
            *_list(mask.entries),
            present,
            values,
            m_type,
            tv,
            np.int32(scalar),
            ptr(t_present),
            out_values,
            out_present,
        ),
    )


def assign_bits(keep, bits, t_value, out_values, out_present):
    """Enqueue out(b, i) = t in place for every entry i of ``bits`` (an Operand of int32 or
    int64 words) and every bit b < width set in bits(i), ``out_values`` and ``out_present``
    a row-major (width, n) array flattened; ``t_value`` a 0-d device array or a host value
    of out's dtype. Walks bits' list (every position where it has none)."""
    n = bits.values.size
    width = out_values.size // max(n, 1)
    tv, _ = _t_args(keep, t_value, out_values.dtype)
    kernel = _kernel(
        "gbla_assign_bits", _ctype(tv.dtype), _ctype(bits.values.dtype), _ctype(out_values.dtype)
    )
    kernel(
        _blocks(n),
        (THREADS,),
        (
            np.int64(n),
            np.int32(width),
            *_list(bits.entries),
            bits.values,
            ptr(bits.present),
            tv,
            out_values,
            out_present,
        ),
    )


_REDUCE = "gbla_entries_reduce"


def reduce(entries, values, present, monoid, arrived=None, out=None):
    """The monoid's reduction of a vector's entries (those listed, or where ``present``, None
    for all, where the count is unknown) as a 0-d device array of values.dtype, the monoid's
    identity when there are none: one launch, a partial per block that the last block folds in
    block order, nothing read back. ``arrived``: one uint64 word on the device, zero, that the
    launch leaves zero (a new one where None). ``out``: the 0-d array of values.dtype to write
    (a new one where None). Not for ``any``, whose identity is only a placeholder."""
    cp = _cupy()
    dtype = values.dtype
    types = MapTypes(monoid.op, dtype, dtype, dtype, dtype, identity=monoid.identity_for(dtype))
    n = values.size
    blocks = _blocks(n)
    partial = cp.empty(blocks[0], dtype)
    if out is None:
        out = cp.empty((), dtype)
    if arrived is None:
        arrived = cp.zeros(1, np.uint64)
    _map_kernel(_REDUCE, types)(
        blocks,
        (THREADS,),
        (np.int64(n), *_list(entries), values, ptr(present), partial, out, arrived),
    )
    return out


def store_partials():
    """How many partials a store's fold writes at the most: a slot a block of :func:`_blocks`."""
    return _most_blocks()


def store(
    values, present, entries, buffer_values, buffer_present, buffer_entries, arrived, fold=None
):
    """Enqueue buffer := (values, present), a vector whose ``entries`` list its entries, into a
    state's buffers whose own list is ``buffer_entries``, in one launch: the old entries the new
    value lacks cleared, the new ones written, the list copied (or, where either list is
    unknown, the whole value copied). ``arrived``: one uint64 word on the device, zero, that the
    launch leaves zero. ``fold``: (code, identity, out, partial): the launch also writes the
    new value's min (code 1) or max (2), gbla's min and max monoids of that ``identity``, into
    the 0-d ``out`` (``partial``: at least :func:`store_partials` slots); all of values.dtype,
    not bool. None: no reduction."""
    n = buffer_values.size
    ids_w, count_w = entries
    ids_b, count_b = buffer_entries
    t, i = _ctype(values.dtype), _ctype(ids_w.dtype)
    code, identity, out, partial = (0, 0, None, None) if fold is None else fold
    _kernel("gbla_store", t, i)(
        _blocks(n),
        (THREADS,),
        (
            np.int64(n),
            ids_w,
            count_w,
            values,
            present,
            buffer_values,
            buffer_present,
            ids_b,
            count_b,
            arrived,
            np.int32(code),
            values.dtype.type(identity),
            ptr(out),
            ptr(partial),
        ),
    )


# ---------------------------------------------------------------------- what nvcc checks
def registry_types(unary_ops, binary_ops, monoids, nonzero):
    """{kernel family: [MapTypes]}: every struct the ops can ask of these ops over gbla's
    dtypes (``nonzero``: the unary op select's "nonzero" tests with), as ops.py builds them."""
    pairs = list(itertools.product(DTYPES, DTYPES))
    found = {"map": [], "select": [], "improve": [], "union": [], "reduce": []}
    for op in unary_ops:  # apply
        found["map"] += [MapTypes(op, d, None, d, op.result_dtype(d)) for d in op.dtypes]
    for op in binary_ops:
        for u, s in pairs:
            t = np.result_type(u, s)
            if t not in op.dtypes:
                continue
            z = op.result_dtype(t)
            # apply with a scalar, cast to t before the kernel, on either side
            found["map"] += [MapTypes(op, u, t, t, z, flip) for flip in (False, True)]
            found["map"].append(MapTypes(op, u, s, t, z))  # ewise_mult
            found["union"].append(MapTypes(op, u, s, t, z))  # ewise_add
            if op.result_dtype(u) == BOOL:  # select's comparison with a thunk
                found["select"].append(MapTypes(op, u, t, t, BOOL))
                if s != t:  # a Vector thunk of dtype s, read as it is stored
                    found["select"].append(MapTypes(op, u, s, t, BOOL))
                found["improve"].append(MapTypes(op, u, s, t, BOOL))  # out of dtype s
    found["select"] += [MapTypes(nonzero, d, None, d, BOOL) for d in DTYPES]
    for m in monoids:
        found["reduce"] += [
            MapTypes(m.op, d, d, d, d, identity=m.identity_for(d)) for d in m.dtypes if not m.is_any
        ]
    return found


_FAMILIES = {
    "map": ("gbla_entries_map",),
    "select": ("gbla_entries_select",),
    "improve": ("gbla_entries_improve",),
    "union": ("gbla_entries_union",),
    "reduce": (_REDUCE,),
}


def translation_unit(found):
    """One .cu translation unit instantiating each kernel of entries.cu: those of ``found``
    (registry_types) with their structs, the others for every value type (and id type) a
    launcher passes. What CI compiles with nvcc, the same code NVRTC compiles at run time."""
    parts = [_launch.source("entries.cu")]
    uses = []
    seen = set()
    for family, type_list in found.items():
        for types in type_list:
            name, src = _codegen.map_struct(types)
            if name not in seen:
                seen.add(name)
                parts.append(src)
            uses += [f"(void*)&{k}<{name}>" for k in _FAMILIES[family]]
    values = [CUDA_TYPES[d] for d in DTYPES]
    for t, o in itertools.product(values, values):
        uses += [f"(void*)&gbla_entries_merge<{t}, {o}>", f"(void*)&gbla_assign_entries<{t}, {o}>"]
    for t, i in itertools.product(values, ("int", "long long")):
        uses.append(f"(void*)&gbla_store<{t}, {i}>")
    for t, w, o in itertools.product(values, BIT_WORDS, values):
        uses.append(f"(void*)&gbla_assign_bits<{t}, {w}, {o}>")
    # Taking each kernel's address instantiates it without spelling out its signature.
    parts.append("void* const gbla_entries_kernels[] = {" + ", ".join(sorted(set(uses))) + "};")
    return "\n".join(parts) + "\n"
