"""Launches the spmv templates of spmv.cu through CuPy: compiled by NVRTC once per generated
struct and index type, and cached in memory (and by CuPy on disk).

:func:`push` and :func:`pull` are the eager products (the host knows the frontier's size);
:func:`device_product` is the product of a loop recorded on the device, which asks the host
nothing: two launches (the frontier binned with the direction chosen on the device, and one
kernel running the chosen direction), whatever the direction; the loop's test takes its output
back after each iteration."""

import numpy as np

from .._backend import _cupy
from . import _codegen, _entries, _launch, _loop
from ._codegen import INDEX_CTYPES, SpmvTypes
from ._frontier import SLOT
from ._launch import THREADS, grid, ptr, sm_count

PULL = 4  # info slot field: 1 when the product pulls (GBLA_INFO_PULL in lists.cuh)

# Rows with more in-edges than LONG_ROW take a warp each in pull, those with more than HUGE_ROW
# a block each, the rest a thread each. 32 keeps a warp's lanes busy on the long rows and the
# per-row loop short on the others; past 1024 (32 turns of a warp) a row would keep its warp
# busy long after the others end: R-MAT(24)'s 55 k rows over 1024 hold 45% of its edges, the
# longest 407 k, which a warp walks in 13 k dependent turns while the GPU idles.
LONG_ROW = 32
HUGE_ROW = 1024


def kernels(types, index_dtype, *, kinds=_codegen.EAGER_KERNELS, offset_dtype=None):
    """The spmv kernels instantiated for ``types`` and the index dtype, on the current device:
    one module of ``kinds`` (an eager product's set, with row pointers of ``offset_dtype``, the
    index dtype unless given; the block pull's; or a device product's)."""
    name, src = _codegen.struct(types)
    ctypes = INDEX_CTYPES[np.dtype(index_dtype)]
    if offset_dtype is not None and np.dtype(offset_dtype) != np.dtype(index_dtype):
        ctypes += ", " + INDEX_CTYPES[np.dtype(offset_dtype)]
    names = tuple(f"{k}<{name}, {ctypes}>" for k in kinds)
    return {
        k: _launch.function("spmv.cu", n, epilogue="\n" + src, name_expressions=names)
        for k, n in zip(kinds, names)
    }


def push(P, n_out, idx, u_values, offsets, total, types, mask, mask_mode):
    """Dense (values, present) of the push product; ``offsets`` are the frontier's degree prefix
    sums (length nf + 1) and ``total`` their last entry, already on the host."""
    cp = _cupy()
    sr = types.semiring
    z = sr.output_dtype(types.dtype)
    w = cp.full(n_out, sr.add.identity_for(z), dtype=z)
    present = cp.zeros(n_out, np.uint8)
    push_into(P, idx, u_values, offsets, total, types, mask, mask_mode, w, present)
    return w, present.view(bool)


def push_into(
    P,
    idx,
    u_values,
    offsets,
    total,
    types,
    mask,
    mask_mode,
    w,
    present,
    *,
    index_dtype=None,
    offset_dtype=None,
):
    """The push kernel combining into ``w`` (filled with the add's identity where nothing was
    combined yet) and ``present`` (uint8), so that several pushes (over blocks of P's rows:
    the out-of-core product) add up to one. P's arrays are read at global row and edge ids;
    each may be an array or a device address (np.uint64: a block's, set back by its first row
    or edge, so that global ids land in it), ``index_dtype`` then naming their index type
    (and ``offset_dtype`` the row pointers', where it differs)."""
    indptr, indices, values = P
    if total:
        k = kernels(
            types, indices.dtype if index_dtype is None else index_dtype, offset_dtype=offset_dtype
        )["gbla_spmv_push"]
        k(
            grid(total),
            (THREADS,),
            (
                idx,
                ptr(u_values if types.uses_u else None),
                np.int64(len(idx)),
                offsets,
                indptr,
                indices,
                ptr(values if types.uses_a else None),
                ptr(mask),
                np.int32(mask_mode),
                w,
                present,
            ),
        )


def row_tiers(indptr):
    """(long, huge) int64 ids of a pull matrix's rows by its row pointers: those with more than
    LONG_ROW and at most HUGE_ROW entries, and those with more, the longest first (a block
    takes each in turn: the longest start first, not last)."""
    cp = _cupy()
    degrees = indptr[1:] - indptr[:-1]
    # sync: the two counts (once per matrix: callers keep the tiers with it)
    long = cp.flatnonzero((degrees > LONG_ROW) & (degrees <= HUGE_ROW)).astype(np.int64)
    huge = cp.flatnonzero(degrees > HUGE_ROW).astype(np.int64)
    if len(huge) > 1:  # none on a road network: CuPy's first sort costs 40 ms (its load)
        huge = huge[cp.argsort(-degrees[huge], kind="stable")]
    return long, huge


def pull_rows(Q_matrix):
    """:func:`row_tiers` of the pull matrix, computed once per matrix."""
    cache = Q_matrix._cache
    if "pull_rows" not in cache:
        cache["pull_rows"] = row_tiers(Q_matrix._indptr)
    return cache["pull_rows"]


def pull(Q_matrix, u_values, u_present, types, mask, mask_mode):
    """Dense (values, present) of the pull product."""
    cp = _cupy()
    z = types.semiring.output_dtype(types.dtype)
    w = cp.empty(Q_matrix.nrows, dtype=z)
    present = cp.zeros(Q_matrix.nrows, np.uint8)
    _pull_into(Q_matrix, u_values, u_present, types, mask, mask_mode, w, present)
    return w, present.view(bool)


def _pull_into(Q_matrix, u_values, u_present, types, mask, mask_mode, w, present):
    """The eager pull kernels, writing the rows they find into w and present."""
    pull_into(
        (Q_matrix._indptr, Q_matrix._indices, Q_matrix._values),
        pull_rows(Q_matrix),
        u_values,
        u_present,
        types,
        mask,
        mask_mode,
        w,
        present,
    )


def pull_into(Q, rows, u_values, u_present, types, mask, mask_mode, w, present):
    """The eager pull kernels over the rows of ``Q`` = (indptr, indices, values) (row
    pointers of their own dtype allowed), ``rows`` its (long, huge) rows (:func:`row_tiers`),
    writing the rows they find into w and present (zeroed by the caller)."""
    indptr, indices, values = Q
    n_out = len(indptr) - 1
    ks = kernels(types, indices.dtype, offset_dtype=indptr.dtype)
    a = ptr(values if types.uses_a else None)
    u = ptr(u_values if types.uses_u else None)
    if n_out:
        ks["gbla_spmv_pull"](
            grid(n_out),
            (THREADS,),
            (
                np.int64(n_out),
                indptr,
                indices,
                a,
                u,
                ptr(u_present),
                ptr(mask),
                np.int32(mask_mode),
                np.int64(LONG_ROW),
                w,
                present,
            ),
        )
    long, huge = rows
    if len(long):
        ks["gbla_spmv_pull_warp"](
            grid(len(long) * 32),
            (THREADS,),
            (
                long,
                np.int64(len(long)),
                indptr,
                indices,
                a,
                u,
                ptr(u_present),
                ptr(mask),
                np.int32(mask_mode),
                w,
                present,
            ),
        )
    if len(huge):  # its own module: compiled only for a matrix that has such rows
        block = kernels(
            types, indices.dtype, kinds=_codegen.BLOCK_KERNELS, offset_dtype=indptr.dtype
        )
        block["gbla_spmv_pull_block"](
            grid(len(huge) * THREADS),
            (THREADS,),
            (
                huge,
                np.int64(len(huge)),
                indptr,
                indices,
                a,
                u,
                ptr(u_present),
                ptr(mask),
                np.int32(mask_mode),
                w,
                present,
            ),
        )


# The grid of a device product's kernel, in blocks an SM: it reads its extent from device
# memory and strides over it, so the grid is sized for the GPU, not the frontier.
# tools/profile_loop.py --blocks-per-sm changes it to measure what a level costs.
BLOCKS_PER_SM = 8
# The gather's grid (gbla_gather_decide), in blocks an SM: smaller, since the frontier is usually
# listed, and fewer blocks end in its last-block count before the choice. Sweeping it (1-2), the
# ops' grids (0.5-2 blocks an SM) and the product's (2-8) moved the algebra's rounds on the road
# networks by at most 5%, one search's way or another's (benchmarks/results/ab/
# algebra_loop_grids_and_direct_push_h200.log).
GATHER_BLOCKS_PER_SM = 2
# The largest out-degree of a matrix whose products walk a listed input themselves, 8 lanes an
# entry, where they can only push (loop.cu's direct push: no binning, the gather one load): a
# road network's (at most 9 or so); 0 turns it off.
DIRECT_DEGREE = 32
# The queue of a block of a direct push that relaxes more than one hop deep (gbla.relax's hops,
# spmv.cu's gbla_push_direct), in vertices: the launch's dynamic shared memory, a value and an
# id each. A vertex that finds it full waits for the next round.
CHASE_ROOM = 1024


def _largest_degree(P):
    """P's largest out-degree, or None while a stream captures and it is not known yet (finding
    it syncs). A loop's first iteration runs unrecorded and finds it, its list or not."""
    if "largest_degree" not in P._cache and _cupy().cuda.get_current_stream().is_capturing():
        return None
    return P._largest_degree()


def _direct_degree(P, u_entries):
    """P's largest out-degree where a product pushing u through P walks u's list itself (the
    direct push: u listed with P's index dtype, that degree at most DIRECT_DEGREE), else 0."""
    if DIRECT_DEGREE <= 0:
        return 0
    # found first, listed or not: a loop's unrecorded first iteration finds it for the capture
    degree = _largest_degree(P)
    if u_entries is None or u_entries[0].dtype != P._indices.dtype or degree is None:
        return 0
    return degree if degree <= DIRECT_DEGREE else 0


def device_product(
    P,
    Q,
    u_values,
    u_present,
    types,
    mask,
    mask_mode,
    *,
    push,
    pull,
    keep,
    choice=None,
    u_entries=None,
    examined=None,
    improve=None,
    also=None,
    window=None,
    hops=1,
):
    """(values, present, entries) of a product whose sizes and direction never reach the host.

    ``P``, ``Q``: the push and pull matrices (a Matrix; None when that direction is never
    taken); ``u_values``, ``u_present``: u dense (present None: every entry), ``u_entries``
    its entry list (_entries) or None. ``push`` and ``pull`` say which directions may run;
    with both, ``choice`` (a :class:`_loop.Choice`) says how the device chooses between them.
    ``keep(name, size, dtype, fill)``: an array that lasts as long as the loop, set to
    ``fill`` before each run (None: left as it is): the output and its entry list live there,
    so that each product takes back only the entries the last one made. ``examined``: a device
    word (a one-element integer array, or None) the product adds the edges it examines to: u's
    out-edges in P when it pushes, Q's stored edges when it pulls (one thread's add in the
    product's kernel, where the direction is known). Two launches on the current stream (the
    gather with the choice, the product: the last product's output is taken back by the loop's
    test after each iteration, ``keep.clear_later``), nothing read back. ``improve``: a
    relaxation (:func:`gbla.relax`): out's values (the product's dtype) and presence (None:
    every entry), which the product writes in place where it improves them (its add
    idempotent); the output then holds only those entries. ``also``: a vector's (values,
    present, entries) of the output's dtype, whose entries join the output, combined by the
    add (gbla.relax's ``also``). ``window``: (t, shift, kind) of gbla.relax's window (t a 0-d
    device array of u's dtype, which is the product's, shift an op site's one-element array or
    None, kind :func:`window_kind`'s): the gather bins only the entries of u the window
    expands, and the others join the output as ``also``'s would (``also`` then None).
    ``hops``: gbla.relax's, for ``improve`` (a direct push past 1 relaxes what it improves up
    to that many edges deep, in bits 8-15 of the kernel's window kind)."""
    cp = _cupy()
    sr = types.semiring
    z = sr.output_dtype(types.dtype)
    direct = _direct_degree(P, u_entries) if push else 0
    # hops past 1 go deeper only in a direct push (from a queue of CHASE_ROOM vertices a
    # block), a pull relaxing one: such a relaxation pushes whatever its policy would say.
    # Bellman-Ford on USA-road-NE, 24 hops: 9.0 ms pushing, 39 letting the policy pull
    # (benchmarks/results/ab/algebra_bellman_ford_hops_h200.log)
    chases = bool(direct) and improve is not None and hops > 1 and CHASE_ROOM > 0
    if chases:
        pull, choice = False, None
    n_out = Q.nrows if pull else P.ncols
    index_dtype = (P if push else Q)._indices.dtype
    if push and pull and Q._indices.dtype != index_dtype:
        raise ValueError("a device product's push and pull matrices must share an index dtype")
    identity = np.asarray(sr.add.identity_for(z), z)
    w = keep("w", n_out, z, identity[()])
    present = keep("present", -(-max(n_out, 1) // 4) * 4, np.uint8, 0)  # whole 4-byte words
    ids = keep("ids", max(n_out, 1), index_dtype, None)
    count = keep("count", 1, np.uint64, 0)
    only_pulls = pull and not push
    slot = np.zeros(SLOT, np.uint64)
    slot[PULL] = only_pulls
    # set so before each run, then by the loop's test after each iteration (lists.cuh)
    info = keep("info", SLOT, np.uint64, slot if only_pulls else 0)
    keep.clear_later(
        n_out,
        ids,
        count,
        present,
        reset=_entries.Reset(
            w, int.from_bytes(identity.tobytes(), "little"), z.itemsize, info, int(only_pulls)
        ),
    )
    ks = kernels(types, index_dtype, kinds=_codegen.DEVICE_KERNELS)
    blocks = (sm_count() * BLOCKS_PER_SM,)
    n_in = P.nrows if push else 0
    bins = None
    listed = u_entries if direct else None
    if push:
        bins = cp.empty(3 * max(n_in, 1), index_dtype)
        _loop.gather(
            n_in,
            u_present,
            P._indptr,
            bins,
            info,
            (sm_count() * GATHER_BLOCKS_PER_SM,),
            choice if pull else None,
            u_entries,
            None if window is None else (u_values, *window),
            direct,
        )
    q_indptr = q_indices = q_values = long = huge = None
    if pull:
        q_indptr, q_indices, q_values = Q._indptr, Q._indices, Q._values
        long, huge = pull_rows(Q)
    if window is not None:  # u's entries the window carries join the output
        also = (u_values, u_present, u_entries)
    a_push = P._values if push and types.uses_a else None
    a_pull = q_values if types.uses_a else None
    kind = 0 if window is None else window[2]
    shared = 0  # the chase's queue (spmv.cu's gbla_push_direct)
    if chases:
        kind |= hops << 8
        shared = CHASE_ROOM * (z.itemsize + np.dtype(index_dtype).itemsize)
    if n_out:
        product = ks["gbla_spmv_device"]
        # past 48 KiB with the static; the attribute asked only of a launch that takes any
        if shared and product.max_dynamic_shared_size_bytes < shared:
            product.max_dynamic_shared_size_bytes = shared
        product(
            blocks,
            (THREADS,),
            (
                ptr(bins),
                np.int64(n_in),
                info,
                ptr(u_values if types.uses_u or window is not None else None),
                ptr(u_present),
                ptr(P._indptr if push else None),
                ptr(P._indices if push else None),
                ptr(a_push),
                np.int64(n_out),
                ptr(q_indptr),
                ptr(q_indices),
                ptr(a_pull),
                np.int64(LONG_ROW),
                ptr(long),
                np.int64(0 if long is None else len(long)),
                ptr(huge),
                np.int64(0 if huge is None else len(huge)),
                ptr(mask),
                np.int32(mask_mode),
                w,
                present,
                ids,
                count,
                np.int64(Q.nvals if pull else 0),
                ptr(examined),
                ptr(None if improve is None else improve[0]),
                ptr(None if improve is None else improve[1]),
                ptr(None if also is None else also[0]),
                ptr(None if also is None else also[1]),
                *_entries._list(None if also is None else also[2]),
                ptr(None if window is None else window[0]),
                ptr(None if window is None else window[1]),
                np.int32(kind),
                ptr(None if not direct else listed[0]),
                ptr(None if not direct else listed[1]),
                ptr(None if choice is None else choice.state),
            ),
            shared_mem=shared,
        )
    return w, present[:n_out].view(bool), (ids, count)


# The dtype codes of a window's kind (frontier.cuh's gbla_window_expands_at)
_WINDOW_DTYPES = {np.dtype(np.float64): 1, np.dtype(np.float32): 2}
_WINDOW_DTYPES.update({np.dtype(np.int64): 3, np.dtype(np.int32): 4})


def window_kind(dtype, above):
    """The kind word of gbla.relax's window over values of ``dtype`` (frontier.cuh): on, with
    ``above`` for a max monoid's (u >= t), and the dtype's code; None where the kernels read no
    such dtype. device_product adds relax's hops past 1 in bits 8-15."""
    code = _WINDOW_DTYPES.get(np.dtype(dtype))
    return None if code is None else 1 | (2 if above else 0) | (code << 4)


__all__ = [
    "window_kind",
    "SpmvTypes",
    "push",
    "pull",
    "kernels",
    "device_product",
    "row_tiers",
    "LONG_ROW",
    "HUGE_ROW",
]
