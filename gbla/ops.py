"""The operations: mxv / vxm / mxm / ewise_add / ewise_mult / apply / reduce / reduce_rowwise /
reduce_columnwise / extract / assign / assign_bits / select / scale.

Each computes a result t and writes it into the output with GraphBLAS C API semantics::

    out<mask, replace> accum= t

``mask`` allows positions (structural ``u.S``, value ``u.V``, complemented ``~u.S``, ``~u.V``;
a bare Vector means its value mask); ``accum`` combines the old output with t where both have an
entry; ``replace`` deletes the output's entries the mask does not allow. Without ``out`` the
result is a new Vector. What affects the output is keyword-only.
"""

from __future__ import annotations

from typing import Any, NamedTuple, TypeVar

import numpy as np

from . import _backend as B
from . import _cpu, _matrix_ops, _storage
from . import _validation as V
from . import direction as _direction
from . import semirings as _sr
from ._backend import refuse_host_read
from .direction import DirectionPolicy, DirectionTracker
from .kernels import _elementwise, _entries, _loop, _spmv
from .mask import MODE_NONE, Mask, MatrixMask
from .matrix import Matrix
from .runtime import meter
from .runtime.reduce import reduce_vector
from .scalar import Scalar
from .semirings import BinaryOp, Monoid, Semiring, UnaryOp
from .vector import Vector

# the container in is the container out: a Vector for a Vector, a Matrix for a Matrix
_Container = TypeVar("_Container", Vector, Matrix)
_Direction = str | DirectionPolicy | DirectionTracker
_Op = BinaryOp | Monoid | str

__all__ = [
    "mxv",
    "vxm",
    "mxm",
    "ewise_add",
    "ewise_mult",
    "apply",
    "reduce",
    "reduce_rowwise",
    "reduce_columnwise",
    "extract",
    "assign",
    "assign_bits",
    "select",
    "split",
    "improve",
    "relax",
    "scale",
]


# ---------------------------------------------------------------------- argument resolution
def _matrix(A, arg, partitioned=False):
    """A itself when it is a Matrix (or, with ``partitioned``, a matrix whose products run in
    an engine of its own below ops: a gbla.distributed.DistMatrix cut over ranks, or a
    gbla.outofcore.HostMatrix kept in host memory)."""
    if getattr(A, "partitioned", False):
        if partitioned:
            return A
        raise V.domain(
            arg,
            "be a gbla.Matrix: of the operations only vxm, mxm (as B), select "
            f"and scale take a {type(A).__name__}",
            type(A).__name__,
        )
    if not isinstance(A, Matrix):
        raise V.domain(
            arg, "be a gbla.Matrix (Matrix.from_scipy, from_cupy or from_edges)", type(A).__name__
        )
    return A


def _vector(u, arg):
    if not isinstance(u, Vector):
        raise V.domain(
            arg, "be a gbla.Vector (Vector.from_dense, from_coo or new)", type(u).__name__
        )
    return u


def _semiring(semiring):
    if isinstance(semiring, str):
        return _sr.get(semiring)
    if not isinstance(semiring, Semiring):
        raise V.domain("semiring", "be a gbla Semiring or a registered name", semiring)
    return semiring


def _binary_op(op, arg):
    if isinstance(op, Monoid):
        return op.op
    if isinstance(op, str):
        ops = vars(_sr.binary)
        if op not in ops:
            raise _sr.UnknownName(V.message(arg, f"be one of {sorted(ops)}", op))
        return ops[op]
    if not isinstance(op, BinaryOp):
        raise V.domain(arg, "be a gbla BinaryOp, Monoid or binary op name", op)
    return op


def _mask(mask, size):
    if mask is None:
        return None
    if isinstance(mask, Vector):
        mask = mask.V
    if not isinstance(mask, Mask) or isinstance(mask, MatrixMask):
        raise V.domain("mask", "be a mask (u.S, u.V, ~u.S, ~u.V), a Vector or None", mask)
    V.dimension(mask.vector.size, size, "mask.size", "the output size")
    return mask


def _out(out, size):
    if out is None:
        return None
    _vector(out, "out")
    V.dimension(out.size, size, "out.size", "the output size")
    return out


def _device(**operands):
    devices = {name: x.device for name, x in operands.items() if x is not None}
    V.same_device(devices)
    return next(iter(devices.values()))


def _product_dtype(semiring, x_dtype, y_dtype, arg):
    """The dtype a semiring product computes in: the operands' result type, which it must
    take."""
    dtype = np.result_type(x_dtype, y_dtype)
    if dtype not in semiring.dtypes:
        raise V.domain(
            arg,
            f"combine to a dtype {semiring.name} takes "
            f"({', '.join(d.name for d in semiring.dtypes)})",
            f"{np.dtype(x_dtype).name} and {np.dtype(y_dtype).name} -> {dtype.name}",
        )
    return dtype


def _op_dtype(op, x_dtype, y_dtype, arg):
    dtype = np.result_type(x_dtype, y_dtype)
    if dtype not in op.dtypes:
        raise V.domain(
            arg,
            f"take the operands' dtype; {op.name} takes {[d.name for d in op.dtypes]}",
            dtype.name,
        )
    return dtype


def _scalar_dtype(scalar, like, arg):
    """A NumPy scalar keeps its dtype; a Python one is weak (NumPy 2's rule): it takes ``like``
    when it fits there, so u_int32 + 1 stays int32 while u_int32 + 1.5 becomes float64."""
    if isinstance(scalar, (bool, int, float)):
        try:
            V.representable(scalar, like, arg)
            return like
        except V.InvalidValue:
            pass
    return V.storage_dtype(np.asarray(scalar).dtype, arg)


def _bound_operand(scalar, like, arg, device):
    """(dtype, operand) of a scalar an op binds (apply's left/right, select's thunk): a host
    scalar converted exactly, or a :class:`Scalar` (a 0-d CuPy array too) left where it is, so
    a value computed on the device never goes to the host."""
    if isinstance(scalar, Scalar):
        V.same_device({arg: scalar.device, "the operand": device})
        return scalar.dtype, scalar._value_array()
    if B.array_device(scalar) == "gpu" and scalar.ndim == 0:
        if device != "gpu":
            raise V.domain(arg, "be a host scalar when the operand is on the CPU", "a CuPy scalar")
        return V.storage_dtype(scalar.dtype, arg), scalar
    dtype = _scalar_dtype(scalar, like, arg)
    return dtype, V.scalar_value(scalar, dtype, arg)


def _broadcast(operand, n, dtype, device):
    """n copies of a bound operand, as an array an element-wise kernel reads (a 0-d device
    array is broadcast, not read back)."""
    xp = B.xp_of(device)
    if isinstance(operand, xp.ndarray):  # a Scalar's 0-d array (_bound_operand: on device)
        return xp.broadcast_to(operand.astype(dtype, copy=False), (n,))
    return xp.full(n, operand, dtype=dtype)


# ---------------------------------------------------------------------- element-wise kernels
def _eval_binary(op, x, y, dtype, device):
    if device == "gpu":
        return _elementwise.binary(op, x, y, dtype)
    k = np.arange(max(np.size(x), np.size(y)), dtype=np.int64) if op.positional else None
    # IEEE results without warnings, as on the GPU (a dense vector's absent positions are
    # computed too: 1 / 0 there is no caller's doing)
    with np.errstate(all="ignore"):
        return op.apply_numpy(
            np.asarray(x).astype(dtype, copy=False), np.asarray(y).astype(dtype, copy=False), k
        )


def _eval_unary(op, x, dtype, device):
    if device == "gpu":
        if op.positional:
            cp = B._cupy()
            return cp.arange(x.size, dtype=op.result_dtype(dtype))
        return _elementwise.unary(op, x, dtype)
    if op.positional:
        return np.asarray(op.numpy(np.arange(x.size, dtype=np.int64)), op.result_dtype(dtype))
    return np.asarray(op.numpy(x.astype(dtype, copy=False)), dtype=op.result_dtype(dtype))


def _present_all(present, size, xp):
    return xp.ones(size, bool) if present is None else present


def _union(op, x, y, device, arg):
    """ewise-add core on dense (values, present) pairs: op where both, the lone value elsewhere."""
    (xv, xpres), (yv, ypres) = x, y
    xp = B.xp_of(device)
    dtype = _op_dtype(op, xv.dtype, yv.dtype, arg)
    both = _eval_binary(op, xv, yv, dtype, device)
    if xpres is None and ypres is None:
        return both, None
    zdt = both.dtype
    xpres, ypres = _present_all(xpres, len(xv), xp), _present_all(ypres, len(yv), xp)
    values = xp.where(xpres & ypres, both, xp.where(xpres, xv.astype(zdt), yv.astype(zdt)))
    return values, xpres | ypres


# ---------------------------------------------------------------------- entry lists
def _op_site(namespace):
    """keep(name, size, dtype, fill) of the op asking, inside a loop recorded on the device:
    arrays kept under its op site (the same one in every iteration, recorded or not) for the
    recording's life, set to ``fill`` before every run; None outside such a loop."""
    loop = B.device_loop()
    if loop is None:
        return None
    site = loop.workspace.next_site()

    def keep(name, size, dtype, fill):
        return loop.workspace.persistent((namespace, site, name), size, dtype, fill)

    keep.clear_later = loop.workspace.clear_later  # its output, emptied after the store
    return keep


def _listed_site(device, out=None, accum=None, replace=False):
    """The site of an element-wise op writing a new Vector (no out, no accum) inside a loop
    recorded on the device, where it runs over entry lists; None elsewhere. Taken whatever the
    inputs carry (one without a list reads as an unknown one: a pass over n that makes a list),
    so that the op takes the same path and buffers in every iteration. ``replace`` is checked
    as _write checks it, though without out it changes nothing."""
    V.flag(replace, "replace")
    if device != "gpu" or out is not None or accum is not None:
        return None
    return _op_site("entries")


def _operand(v):
    return _entries.Operand(*v._dense(), v._entries)


def _entry_mask(mask):
    if mask is None:
        return None
    values, present = mask.vector._dense()
    return _entries.Mask(
        present, None if mask.structural else values, mask.complement, mask.vector._entries
    )


def _listed(result):
    """The Vector of an op run over entry lists: (values, present, its list)."""
    values, present, entries = result
    v = Vector._from_dense_arrays(values, present, "gpu")
    v._entries = entries
    return v


# ---------------------------------------------------------------------- the write phase
def _dense_of(indices, values, n):
    """(values, present) of n entries from sparse ones (on the host)."""
    t_values = np.zeros(n, values.dtype)
    t_present = np.zeros(n, bool)
    t_values[indices] = values
    t_present[indices] = True
    return t_values, t_present


def _write_at(out, t, indices, replace):
    """out<m.S, replace> = t on the CPU where the mask is a sparse vector's structure: only its
    entries are read and written (the frontier of a traversal, not the whole vector)."""
    if isinstance(t, Vector):  # a sparse value: looked up at the mask's entries
        at, took = _storage.find_sorted(t._indices, indices, np)
        new = (
            t._values[at].astype(out.dtype, copy=False)
            if len(t._indices)
            else np.zeros(len(indices), out.dtype)
        )
        t_values = None
    else:
        t_values, t_present = t
    if t_values is None:
        pass
    elif np.ndim(t_values) == 0:
        new = np.full(len(indices), t_values, out.dtype)
        took = None
    else:
        new = t_values[indices].astype(out.dtype, copy=False)
        took = None if t_present is None else t_present[indices]
    if replace:
        keep = slice(None) if took is None else took
        out._set_sparse(indices[keep], new[keep])
        return out
    if out._owned and out._is_sparse:  # a loop's state written in place: dense from here on,
        values, present = out._dense()  # so that each later write costs its mask, not a merge
        out._set_dense(values, np.ones(out.size, bool) if present is None else present)
        out._owned = True
    if out._is_sparse:  # merged entry lists: its entries outside the mask, t's inside
        o_idx, o_vals = out._indices, out._values
        outside = ~np.isin(o_idx, indices, assume_unique=True)
        keep = slice(None) if took is None else took
        merged_idx = np.concatenate([o_idx[outside], indices[keep]])
        merged_vals = np.concatenate([o_vals[outside], new[keep].astype(out.dtype)])
        order = np.argsort(merged_idx, kind="stable")
        out._set_sparse(merged_idx[order], merged_vals[order])
        return out
    values, present = out._dense()
    in_place = out._owned and present is not None  # a loop's own state: written in place
    if not in_place:
        values = values.copy()
        present = np.ones(out.size, bool) if present is None else present.copy()
    if took is None:
        values[indices] = new
        present[indices] = True
    else:
        values[indices[took]] = new[took]
        present[indices] = took
    if in_place:
        out._written_in_place()
    else:
        out._set_dense(values, present)
    return out


def _write(out, t, *, mask, accum, replace, device, masked=False):
    """out<mask, replace> accum= t, with t given as dense (values, present); ``t_values`` may be
    a scalar (an assign). ``masked``: t already has no entry the mask excludes."""
    xp = B.xp_of(device)
    if (
        device == "cpu"
        and accum is None
        and out is not None
        and mask is not None
        and not mask.complement
        and mask.vector._is_sparse
    ):
        m = mask.vector
        named = m._indices if mask.structural else m._indices[m._values.astype(bool)]
        return _write_at(out, t, named, replace)
    if (
        device == "cpu" and accum is None and out is None and isinstance(t, Vector) and t._is_sparse
    ):  # a sparse result stays sparse: the mask read at its entries only
        if mask is None or masked:
            return t
        keep = mask.allows_at(t._indices)
        return Vector._from_sparse_arrays(t._indices[keep], t._values[keep], t.size, device)
    if isinstance(t, Vector):
        t = t._dense()
    t_values, t_present = t
    if out is None and accum is None and (mask is None or masked):
        return Vector._from_dense_arrays(t_values, t_present, device)
    if device == "gpu" and accum is None and mask is not None and out is not None:
        o_values, o_present = out._dense()
        site = None if mask.complement or replace else _op_site("entries")
        if site is not None and (o_present is not None or not out._owned):
            return _listed_write(site, out, t_values, t_present, mask)
        m, mode = mask.kernel_args()
        if out._owned:  # a recorded loop's state: written in place, its addresses fixed
            _elementwise.masked_write(
                t_values,
                t_present,
                o_values,
                o_present,
                m,
                mode,
                replace,
                out.dtype,
                into=(o_values, o_present),
            )
            out._written_in_place()
            return out
        out._set_dense(
            *_elementwise.masked_write(
                t_values, t_present, o_values, o_present, m, mode, replace, out.dtype
            )
        )
        return out
    if np.ndim(t_values) == 0:  # a scalar, maybe one on the device: broadcast and copied
        t_values = xp.broadcast_to(xp.asarray(t_values, dtype=out.dtype), (out.size,)).copy()
    allow = None if mask is None else mask.allowed()
    if out is None:
        if allow is not None:
            t_present = allow if t_present is None else (t_present & allow)
        return Vector._from_dense_arrays(t_values, t_present, device)
    o_values, o_present = out._dense()
    if accum is not None:
        t_values, t_present = _union(
            accum, (o_values, o_present), (t_values, t_present), device, "accum"
        )
    t_values = t_values.astype(out.dtype, copy=False)
    if allow is None:
        out._set_dense(t_values, t_present)
        return out
    n = out.size
    kept = xp.zeros(n, bool) if replace else _present_all(o_present, n, xp)
    present = xp.where(allow, _present_all(t_present, n, xp), kept)
    out._set_dense(xp.where(allow, t_values, o_values), present)
    return out


def _listed_write(site, out, t_values, t_present, mask):
    """out<m> = t, m not complemented, inside a loop recorded on the device, at the mask's
    listed entries (a frontier's cost, not n's): a loop's state in place; any other out gets a
    new value with a list (its entries outside the mask, t's inside), its own arrays, which
    other vectors may share, left as they are."""
    o_values, o_present = out._dense()
    if out._owned:
        _entries.assign(site, _entry_mask(mask), t_values, t_present, o_values, o_present)
        out._written_in_place()
        return out
    values, present, entries = _entries.merge(
        site, _operand(out), t_values, t_present, _entry_mask(mask)
    )
    out._set_dense(values, present)
    out._entries = entries
    return out


# ---------------------------------------------------------------------- mat-vec
def _frontier_offsets(P, idx, xp):
    """Exclusive prefix sums of the frontier's degrees in P, and their total on the host."""
    offsets = xp.zeros(len(idx) + 1, np.int64)
    if len(idx):
        xp.cumsum(P._degrees()[idx], dtype=np.int64, out=offsets[1:])
    return offsets, int(offsets[-1])  # sync: edges leaving the frontier (grid size, direction)


def _matvec(
    A,
    push_of,
    pull_of,
    u,
    semiring,
    flip,
    n_out,
    *,
    mask,
    accum,
    replace,
    out,
    direction,
    relaxation=None,
):
    """The mat-vec of mxv and vxm. ``relaxation`` (a :class:`_Relaxation`): relax's, which
    the device loop's product runs itself (``relax`` decided it may)."""
    semiring = _semiring(semiring)
    mask = _mask(mask, n_out)
    out = _out(out, n_out)
    accum = None if accum is None else _binary_op(accum, "accum")
    replace = V.flag(replace, "replace")
    device = _device(A=A, u=u, mask=None if mask is None else mask.vector, out=out)
    dtype = _product_dtype(semiring, A.dtype, u.dtype, "A.dtype and u.dtype")
    traversal = isinstance(direction, DirectionTracker)  # the caller's, across products
    direction = _direction.start(direction, trackers=True)
    xp = B.xp_of(device)
    if getattr(A, "partitioned", False):  # the product runs in the matrix's own engine
        return _partitioned_vxm(
            A,
            u,
            semiring,
            dtype,
            n_out,
            mask=mask,
            accum=accum,
            replace=replace,
            out=out,
            direction=direction,
            device=device,
        )
    types = _spmv_types(semiring, A, u, dtype, flip)
    m, mode = (None, MODE_NONE) if mask is None else mask.kernel_args()

    if device == "gpu" and B.device_loop() is not None:
        w, present, entries = _device_matvec(
            B.device_loop(),
            push_of,
            pull_of,
            u,
            semiring,
            dtype,
            types,
            direction,
            traversal,
            m,
            mode,
            n_out,
            relaxation,
        )
        result = _write(
            out, (w, present), mask=mask, accum=accum, replace=replace, device=device, masked=True
        )
        if out is None and accum is None:  # the product itself: its entry list comes along
            result._entries = entries
        return result

    offsets = total = None
    if isinstance(direction, DirectionTracker):
        P, Q = push_of(), pull_of()
        idx, u_values = u._sparse()
        if device == "gpu":  # the push kernel takes the prefix sums too
            offsets, total = _frontier_offsets(P, idx, xp)
        else:
            total = int(P._degrees()[idx].sum())
        direction = direction.choose(
            frontier_vertices=len(idx),
            frontier_edges=total,
            edges=Q.nvals,
            n=n_out,
            early_exit=semiring.add.terminal_for(semiring.output_dtype(dtype)) is not None,
        )

    if direction == "push":
        P = push_of()
        idx, u_values = u._sparse()
        if device == "gpu" and offsets is None:
            offsets, total = _frontier_offsets(P, idx, xp)
        if meter.active():  # gbla.iterate counts its products' work: a push, u's out-edges
            meter.examined(int(P._degrees()[idx].sum()) if total is None else total)
        if device == "gpu":
            t = _spmv.push(
                (P._indptr, P._indices, P._values),
                n_out,
                idx,
                u_values,
                offsets,
                total,
                types,
                m,
                mode,
            )
        else:
            hit, vals = _cpu.push(
                (P._indptr, P._indices, P._values),
                n_out,
                idx,
                u_values,
                semiring,
                flip,
                dtype,
                m,
                mode,
            )
            if out is None and accum is None:  # a sparse result stays sparse
                return Vector._from_sparse_arrays(hit, vals, n_out, device)
            t = _dense_of(hit, vals, n_out)
    else:
        Q = pull_of()
        meter.examined(Q.nvals)  # a pull: every stored edge of Q, whatever rows it skips
        u_values, u_present = u._dense()
        if device == "gpu":
            t = _spmv.pull(Q, u_values, u_present, types, m, mode)
        else:
            allow = None if mask is None else mask.allowed()
            t = _cpu.pull(
                (Q._indptr, Q._indices, Q._values),
                n_out,
                u_values,
                u_present,
                semiring,
                flip,
                dtype,
                allow,
                Q._entry_rows(),
                _counter(Q),
            )
    return _write(out, t, mask=mask, accum=accum, replace=replace, device=device, masked=True)


def _partitioned_vxm(A, u, semiring, dtype, n_out, *, mask, accum, replace, out, direction, device):
    """vxm on a partitioned matrix: its ``vxm_entries`` gives the product's entries (sorted
    keys, values) on u's device, and they are written here as any product's are. A
    gbla.distributed.DistMatrix splits the product by the rows each rank holds and gathers it
    whole on every rank (collective: every rank calls it), so the element-wise operations
    around it need no communication; a gbla.outofcore.HostMatrix sends the device, within its
    budget, the edges the frontier needs."""
    keys, values = A.vxm_entries(u, semiring, dtype, mask, direction)
    meter.examined(None)  # its engine chose the direction and counts nothing here
    if out is None and accum is None:
        return Vector._from_sparse_arrays(keys, values, n_out, device)
    xp = B.xp_of(device)
    t_values, t_present = xp.zeros(n_out, values.dtype), xp.zeros(n_out, bool)
    t_values[keys] = values
    t_present[keys] = True
    return _write(
        out,
        (t_values, t_present),
        mask=mask,
        accum=accum,
        replace=replace,
        device=device,
        masked=True,
    )


def _counter(Q):
    """Q's pattern as a SciPy CSR of int32 ones (made once per matrix): the CPU pull of a
    structural product counts present in-neighbours with it."""
    if "counter" not in Q._cache:
        import scipy.sparse as sp

        Q._cache["counter"] = sp.csr_array(
            (np.ones(Q.nvals, np.int32), Q._indices, Q._indptr), shape=Q.shape
        )
    return Q._cache["counter"]


def _device_matvec(
    loop,
    push_of,
    pull_of,
    u,
    semiring,
    dtype,
    types,
    direction,
    traversal,
    m,
    mode,
    n_out,
    relaxation=None,
):
    """The product inside a loop recorded on the device: nothing read back. With a policy, the
    device chooses push or pull from the frontier it gathers; the state of a caller's tracker
    (last choice, GAP's unexplored edges) is kept in the loop's scratch, reset before every
    run. With ``relaxation``, the product writes relax's out, also and window."""
    u_values, u_present = u._dense()
    push, pull = direction != "pull", direction != "push"
    P = push_of() if push else None
    Q = pull_of() if pull else None
    choice = None
    if push and pull:
        state = None
        if traversal:
            state = loop.workspace.scratch(("direction", direction), np.array([0, -1], np.int64))
        early_exit = semiring.add.terminal_for(semiring.output_dtype(dtype)) is not None
        choice = _loop.Choice(direction.policy, state, n_out, Q.nvals, early_exit)
    keep = _op_site("product")
    improve = also = window = None
    hops = 1
    if relaxation is not None:
        improve, also, hops = relaxation.into, relaxation.also, relaxation.hops
        if relaxation.window is not None:
            t, shift, kind = relaxation.window
            if shift is not None:  # added to t by the kernels, kept with the op site
                shift = keep("window_shift", 1, t.dtype, shift)
            window = (t, shift, kind)
    return _spmv.device_product(
        P,
        Q,
        u_values,
        u_present,
        types,
        m,
        mode,
        push=push,
        pull=pull,
        keep=keep,
        choice=choice,
        u_entries=u._entries,
        examined=loop.workspace.examined,  # counted on the device, read at the loop's end
        improve=improve,
        also=None if also is None else (*also._dense(), also._entries),
        window=window,
        hops=hops,
    )


def _spmv_types(semiring, A, u, dtype, flip):
    return _spmv.SpmvTypes(semiring, None if A.is_iso else A.dtype, u.dtype, dtype, flip)


def mxv(
    A: Matrix,
    u: Vector,
    semiring: Semiring | str,
    *,
    mask: Mask | Vector | None = None,
    accum: _Op | None = None,
    replace: bool = False,
    out: Vector | None = None,
    direction: _Direction = "auto",
) -> Vector:
    """w<mask> accum= A (+).(x) u: w(i) = add over k of multiply(A(i, k), u(k)), over the k
    where both A(i, k) and u(k) are present.

    Parameters
    ----------
    A : Matrix
    u : Vector, size A.ncols
    semiring : Semiring or str
        e.g. ``semirings.min_plus`` or ``"min_plus"``. The operands are computed in
        ``numpy.result_type(A.dtype, u.dtype)``, which the semiring must take.
    mask : Mask, Vector or None
        ``w.S``, ``w.V``, ``~w.S``, ``~w.V`` (a bare Vector means its value mask), size A.nrows.
    accum : BinaryOp, Monoid, str or None
        Combines the old ``out`` with the product where both have an entry.
    replace : bool
        Delete the entries of ``out`` that the mask does not allow.
    out : Vector or None
        Written in place and returned; None returns a new Vector.
    direction : 'auto', 'push', 'pull', DirectionPolicy or DirectionTracker
        Push scatters the present u(k) along column k of A; pull reduces each allowed row of A,
        stopping at the add monoid's terminal value. 'auto' chooses by the default
        DirectionPolicy; a tracker keeps hysteresis across calls. Results are the same either
        way (up to the choice an ``any`` monoid makes).

    Returns
    -------
    Vector
        ``out``, or a new Vector of the semiring's output dtype.

    Raises
    ------
    DimensionMismatch
        u.size is not A.ncols, or the mask's or ``out``'s size is not A.nrows.
    DomainMismatch
        An operand of the wrong type (A, u, semiring, mask, accum, out), or dtypes the semiring
        or accum does not take.
    DeviceMismatch
        A, u, the mask and ``out`` are not all on one device.
    UnknownName
        ``semiring`` or ``accum`` is a name nothing is registered under.
    InvalidValue
        ``direction`` is not a direction, or ``replace`` is not a bool.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, gbla
    >>> A = gbla.Matrix.from_scipy(sp.csr_array(np.array([[0, 2.], [1, 0]])), device="cpu")
    >>> u = gbla.Vector.from_dense(np.array([10., 20.]), device="cpu")
    >>> gbla.mxv(A, u, "min_plus").to_dense()
    array([22., 11.])
    """
    A, u = _matrix(A, "A"), _vector(u, "u")
    V.dimension(u.size, A.ncols, "u.size", "A.ncols")
    return _matvec(
        A,
        lambda: A.T,
        lambda: A,
        u,
        semiring,
        False,
        A.nrows,
        mask=mask,
        accum=accum,
        replace=replace,
        out=out,
        direction=direction,
    )


def vxm(
    u: Vector,
    A: Matrix,
    semiring: Semiring | str,
    *,
    mask: Mask | Vector | None = None,
    accum: _Op | None = None,
    replace: bool = False,
    out: Vector | None = None,
    direction: _Direction = "auto",
) -> Vector:
    """w<mask> accum= u (+).(x) A: w(j) = add over k of multiply(u(k), A(k, j)), over the k
    where both u(k) and A(k, j) are present.

    Equals ``mxv(A.T, u, ...)`` when the multiply is commutative; otherwise the vector is the
    first operand, as in the GraphBLAS C API.

    Parameters
    ----------
    u : Vector, size A.nrows
    A : Matrix
    semiring : Semiring or str
        e.g. ``semirings.any_pair`` or ``"any_pair"``. The operands are computed in
        ``numpy.result_type(u.dtype, A.dtype)``, which the semiring must take.
    mask, accum, replace, out : as for :func:`mxv`, of size A.ncols
    direction : 'auto', 'push', 'pull', DirectionPolicy or DirectionTracker, default 'auto'
        Push scatters the present u(k) along row k of A (CSR); pull reduces each allowed column
        j (the rows of A.T, built on first use and cached). Otherwise as for :func:`mxv`.

    Returns
    -------
    Vector
        ``out``, or a new Vector of the semiring's output dtype.

    Raises
    ------
    DimensionMismatch, DomainMismatch, DeviceMismatch, UnknownName, InvalidValue
        As for :func:`mxv` (u.size must be A.nrows; the mask and ``out``, A.ncols).

    Examples
    --------
    One BFS step from vertex 0 of the path 0 -> 1 -> 2:

    >>> import numpy as np, gbla
    >>> A = gbla.Matrix.from_edges([0, 1], [1, 2], device="cpu")
    >>> q = gbla.Vector.from_coo([0], True, 3, device="cpu")
    >>> gbla.vxm(q, A, "any_pair").to_coo()
    (array([1]), array([ True]))
    """
    u, A = _vector(u, "u"), _matrix(A, "A", partitioned=True)
    V.dimension(u.size, A.nrows, "u.size", "A.nrows")
    return _vxm(
        u, A, semiring, mask=mask, accum=accum, replace=replace, out=out, direction=direction
    )


def _vxm(u, A, semiring, *, mask, accum, replace, out, direction, relaxation=None):
    """vxm of a checked u and A (``relaxation`` as :func:`_matvec` takes it)."""
    return _matvec(
        A,
        lambda: A,
        lambda: A.T,
        u,
        semiring,
        True,
        A.ncols,
        mask=mask,
        accum=accum,
        replace=replace,
        out=out,
        direction=direction,
        relaxation=relaxation,
    )


# ---------------------------------------------------------------------- matrix times matrix
def mxm(
    A: Matrix,
    B: Matrix,
    semiring: Semiring | str,
    *,
    mask: MatrixMask | Matrix | None = None,
    accum: _Op | None = None,
    replace: bool = False,
    out: Matrix | None = None,
    direction: str = "auto",
) -> Matrix:
    """C<mask, replace> accum= A (+).(x) B: C(i, j) = add over k of multiply(A(i, k), B(k, j)),
    over the k where both are present.

    Row-wise (Gustavson): every product A(i, k) B(k, j) is formed once, the positions the mask
    excludes are dropped before the add monoid reduces each (i, j). The products are formed in
    blocks of A's rows, each at most what half the GPU's free memory holds (a fixed count on
    the CPU; a row is never cut), so the memory held is a block's, not every product's; the
    result is the same. A frontier of many sources (one row each) times a graph is one call: a
    step of a multi-source search.

    Parameters
    ----------
    A : Matrix, m x k
    B : Matrix, k x n
    semiring : Semiring or str
        Computed in ``numpy.result_type(A.dtype, B.dtype)``, which it must take; a positional
        multiply (``secondi``) gives k.
    mask : MatrixMask, Matrix or None
        ``M.S``, ``M.V``, ``~M.S``, ``~M.V`` (a bare Matrix means its value mask), m x n.
    accum : BinaryOp, Monoid, str or None
        Combines ``out``'s entries with the product where both have one.
    replace : bool
        Drop the entries of ``out`` the mask does not allow.
    out : Matrix or None
        m x n; read, never modified: the result is a new Matrix (gbla's matrices are
        immutable), of ``out``'s dtype.
    direction : {'auto', 'push', 'pull'}
        Push expands every row of B an entry of A points at (Gustavson), then drops what the
        mask excludes; pull computes a dot product for each position a mask names (M.S or M.V,
        not complemented), searching B for each k of A's row. 'auto' pulls when the mask's
        rows hold a quarter of the products push would form or fewer. Same results.

    Returns
    -------
    Matrix
        A new m x n Matrix (the semiring's output dtype, or ``out``'s).

    Raises
    ------
    DimensionMismatch
        B.nrows is not A.ncols, or the mask's or ``out``'s shape is not (m, n).
    DomainMismatch
        An operand of the wrong type, or dtypes the semiring or accum does not take.
    DeviceMismatch
        The operands are not all on one device.
    CaptureError
        Called inside a loop body recorded on the device (mxm reads sizes back).

    Examples
    --------
    Two BFS steps at once, from vertices 0 and 2 of the path 0 -> 1 -> 2 -> 3:

    >>> import numpy as np, scipy.sparse as sp, gbla
    >>> A = gbla.Matrix.from_edges([0, 1, 2], [1, 2, 3], n=4, device="cpu")
    >>> F = gbla.Matrix.from_scipy(sp.csr_array(([True, True], ([0, 1], [0, 2])),
    ...                                         shape=(2, 4)), device="cpu")
    >>> gbla.mxm(F, A, "any_pair").to_dense(False)
    array([[False,  True, False, False],
           [False, False, False,  True]])
    """
    A, Bm = _matrix(A, "A"), _matrix(B, "B", partitioned=True)
    V.dimension(Bm.nrows, A.ncols, "B.nrows", "A.ncols")
    semiring = _semiring(semiring)
    shape = (A.nrows, Bm.ncols)
    mask, accum = _matrix_output(mask, out, accum, shape, "the output shape")
    replace = V.flag(replace, "replace")
    device = _device(A=A, B=Bm, mask=None if mask is None else mask.matrix, out=out)
    dtype = _product_dtype(semiring, A.dtype, Bm.dtype, "A.dtype and B.dtype")
    refuse_host_read("gbla.mxm")
    V.one_of(direction, _direction.DIRECTIONS, "direction")
    names_positions = mask is not None and not mask.complement
    if direction == "pull" and not names_positions:
        raise V.invalid_value(
            "direction",
            "be 'auto' or 'push' without a mask naming the positions to compute (M.S or M.V)",
            direction,
        )
    if getattr(Bm, "partitioned", False):  # the product runs in the matrix's own engine
        t = Bm.mxm_entries(A, semiring, dtype, mask)
    else:
        pull = direction == "pull" or (
            direction == "auto" and names_positions and _matrix_ops.pull_is_cheaper(A, Bm, mask)
        )
        t = (_matrix_ops.product_pull if pull else _matrix_ops.product)(
            A, Bm, semiring, dtype, mask
        )
    return _matrix_ops.write(
        out,
        t,
        shape,
        mask=mask,
        accum=accum,
        replace=replace,
        dtype=semiring.output_dtype(dtype),
        device=device,
    )


def _matrix_ewise(combine, u, v, op, mask, accum, replace, out):
    """ewise_add (``combine`` the union) or ewise_mult (the intersection) of two matrices."""
    u, v = _matrix(u, "u"), _matrix(v, "v")
    V.dimension(v.shape, u.shape, "v.shape", "u.shape")
    op = _binary_op(op, "op")
    mask, accum = _matrix_output(mask, out, accum, u.shape, "u.shape")
    device = _device(u=u, v=v, mask=None if mask is None else mask.matrix, out=out)
    dtype = _op_dtype(op, u.dtype, v.dtype, "op")
    left, right = _matrix_ops.keys_of(u), _matrix_ops.keys_of(v)
    keys, values = combine(left, right, op, device)
    values = values.astype(op.result_dtype(dtype), copy=False)
    if mask is not None and out is None:
        keep = mask.allows(keys)
        keys, values = B.compress(keep, keys, values)
    return _matrix_ops.write(
        out,
        (keys, values),
        u.shape,
        mask=mask,
        accum=accum,
        replace=V.flag(replace, "replace"),
        dtype=values.dtype,
        device=device,
    )


# ---------------------------------------------------------------------- element-wise
def ewise_add(
    u: _Container,
    v: _Container,
    op: _Op,
    *,
    mask: Mask | Vector | Matrix | None = None,
    accum: _Op | None = None,
    replace: bool = False,
    out: _Container | None = None,
) -> _Container:
    """w<mask> accum= u (+) v over the union of the structures: op(u(i), v(i)) where both are
    present, the lone value where one is. Two Matrices give a new Matrix the same way (masks
    ``M.S`` etc., ``out`` read and never modified).

    Parameters
    ----------
    u, v : Vector, of one size
    op : BinaryOp, Monoid or str
        A binary op, a Monoid (its op) or a binary op name such as ``"plus"``. It computes in
        ``numpy.result_type(u.dtype, v.dtype)``, which it must take; a lone value is cast to
        the op's result dtype.
    mask : Mask, Vector or None, default None
        ``w.S``, ``w.V``, ``~w.S``, ``~w.V`` (a bare Vector means its value mask), size u.size.
        None allows every position.
    accum : BinaryOp, Monoid, str or None, default None
        Combines the old ``out`` with the result where both have an entry (computed in
        ``numpy.result_type`` of their dtypes, which accum must take). No effect without
        ``out``.
    replace : bool, default False
        Delete the entries of ``out`` that the mask does not allow.
    out : Vector or None, default None
        Size u.size; written in place (keeping its dtype: the result is cast to it) and returned.
        None returns a new Vector.

    Returns
    -------
    Vector
        ``out``, or a new Vector of the op's result dtype.

    Raises
    ------
    DimensionMismatch
        v.size is not u.size, or the mask's or ``out``'s size is not u.size.
    DomainMismatch
        An operand of the wrong type (u, v, op, mask, accum, out), or dtypes op or accum does
        not take.
    DeviceMismatch
        u, v, the mask and ``out`` are not all on one device.
    UnknownName
        ``op`` or ``accum`` is a name no binary op has.
    InvalidValue
        ``replace`` is not a bool.

    Examples
    --------
    >>> import numpy as np, gbla
    >>> u = gbla.Vector.from_coo([0, 2], [1., 2.], 4, device="cpu")
    >>> v = gbla.Vector.from_coo([2, 3], [10., 20.], 4, device="cpu")
    >>> gbla.ewise_add(u, v, "plus").to_coo()
    (array([0, 2, 3]), array([ 1., 12., 20.]))
    """
    if isinstance(u, Matrix) or isinstance(v, Matrix):
        return _matrix_ewise(_matrix_ops.union, u, v, op, mask, accum, replace, out)
    u, v = _vector(u, "u"), _vector(v, "v")
    V.dimension(v.size, u.size, "v.size", "u.size")
    op = _binary_op(op, "op")
    mask, out = _mask(mask, u.size), _out(out, u.size)
    accum = None if accum is None else _binary_op(accum, "accum")
    device = _device(u=u, v=v, mask=None if mask is None else mask.vector, out=out)
    dtype = _op_dtype(op, u.dtype, v.dtype, "op")
    site = _listed_site(device, out, accum, replace)
    if site is not None:  # over both lists (or the mask's): count_u + count_v entries
        types = _entries.MapTypes(op, u.dtype, v.dtype, dtype, op.result_dtype(dtype))
        return _listed(
            _entries.union(site, types, _operand(u), _operand(v), mask=_entry_mask(mask))
        )
    if device == "cpu" and u._is_sparse and v._is_sparse and not op.positional:
        # the work is the entries; the result stays sparse
        keys, values = _matrix_ops.union(
            (u._indices, u._values), (v._indices, v._values), op, device
        )
        t = Vector._from_sparse_arrays(
            keys, values.astype(op.result_dtype(dtype), copy=False), u.size, device
        )
    else:
        t = _union(op, u._dense(), v._dense(), device, "op")
    return _write(out, t, mask=mask, accum=accum, replace=V.flag(replace, "replace"), device=device)


def ewise_mult(
    u: _Container,
    v: _Container,
    op: _Op,
    *,
    mask: Mask | Vector | Matrix | None = None,
    accum: _Op | None = None,
    replace: bool = False,
    out: _Container | None = None,
) -> _Container:
    """w<mask> accum= u (x) v over the intersection of the structures: op(u(i), v(i)) where both
    are present, no entry elsewhere. Two Matrices give a new Matrix the same way.

    Parameters
    ----------
    u, v, op, mask, accum, replace, out
        As for :func:`ewise_add` (``op`` computes only where both are present).

    Returns
    -------
    Vector
        ``out``, or a new Vector of the op's result dtype.

    Raises
    ------
    DimensionMismatch, DomainMismatch, DeviceMismatch, UnknownName, InvalidValue
        As for :func:`ewise_add`.

    Examples
    --------
    >>> import numpy as np, gbla
    >>> u = gbla.Vector.from_coo([0, 2], [1., 2.], 4, device="cpu")
    >>> v = gbla.Vector.from_coo([2, 3], [10., 20.], 4, device="cpu")
    >>> gbla.ewise_mult(u, v, "times").to_coo()
    (array([2]), array([20.]))
    """
    if isinstance(u, Matrix) or isinstance(v, Matrix):
        return _matrix_ewise(_matrix_ops.intersection, u, v, op, mask, accum, replace, out)
    u, v = _vector(u, "u"), _vector(v, "v")
    V.dimension(v.size, u.size, "v.size", "u.size")
    op = _binary_op(op, "op")
    mask, out = _mask(mask, u.size), _out(out, u.size)
    accum = None if accum is None else _binary_op(accum, "accum")
    device = _device(u=u, v=v, mask=None if mask is None else mask.vector, out=out)
    dtype = _op_dtype(op, u.dtype, v.dtype, "op")
    site = _listed_site(device, out, accum, replace)
    if site is not None:  # over the shortest of u's, v's and the mask's lists
        types = _entries.MapTypes(op, u.dtype, v.dtype, dtype, op.result_dtype(dtype))
        return _listed(
            _entries.map_entries(site, types, _operand(u), _operand(v), mask=_entry_mask(mask))
        )
    if device == "cpu" and (u._is_sparse or v._is_sparse) and not op.positional:
        # on the CPU, over the sparse side's entries only; the result stays sparse
        idx, (x, y) = _intersection(u, v)
        t = Vector._from_sparse_arrays(idx, _eval_binary(op, x, y, dtype, device), u.size, device)
        return _write(
            out, t, mask=mask, accum=accum, replace=V.flag(replace, "replace"), device=device
        )
    (uv, up), (vv, vp) = u._dense(), v._dense()
    values = _eval_binary(op, uv, vv, dtype, device)
    present = up if vp is None else (vp if up is None else up & vp)
    return _write(
        out,
        (values, present),
        mask=mask,
        accum=accum,
        replace=V.flag(replace, "replace"),
        device=device,
    )


def _intersection(u, v):
    """(indices, (u's values, v's values)) where both CPU vectors have an entry, one of them
    sparse: the work is that one's entries."""
    a, b, swapped = (u, v, False) if u._is_sparse else (v, u, True)
    idx, a_vals = a._indices, a._values
    if b._is_sparse:
        at, hit = _storage.find_sorted(b._indices, idx, np)
        b_vals = b._values[at[hit]]
    else:
        b_values, b_present = b._dense()
        hit = np.ones(len(idx), bool) if b_present is None else b_present[idx]
        b_vals = b_values[idx[hit]]
    idx, a_vals = idx[hit], a_vals[hit]
    return idx, ((b_vals, a_vals) if swapped else (a_vals, b_vals))


def apply(
    u: _Container,
    op: UnaryOp | _Op,
    *,
    left: Any = None,
    right: Any = None,
    mask: Mask | Vector | Matrix | None = None,
    accum: _Op | None = None,
    replace: bool = False,
    out: _Container | None = None,
) -> _Container:
    """w<mask> accum= f(u) on u's structure: f(u(i)) at every present i, no entry elsewhere.
    A Matrix gives a Matrix of its structure the same way (f(A(i, j)); a positional
    ``unary.rowindex`` gives i; a matrix mask, ``out`` a Matrix read and never modified).

    Parameters
    ----------
    u : Vector or Matrix
    op : UnaryOp, BinaryOp, Monoid or str
        A UnaryOp (``unary.ainv``; positional ``unary.rowindex`` gives i), computed in u.dtype,
        which it must take. Otherwise a BinaryOp, a Monoid (its op) or a binary op name (a
        string never names a UnaryOp) with one operand bound to a scalar.
    left, right : scalar or None, default None
        With a binary op exactly one is given: ``right=s`` computes op(u(i), s), ``left=s``
        op(s, u(i)); with a UnaryOp both stay None. A Python bool, int or float takes u.dtype
        when it fits there exactly (int32 u plus 1 stays int32, plus 1.5 computes in float64);
        a NumPy scalar keeps its dtype. The op computes in ``numpy.result_type`` of u.dtype and
        the scalar's dtype, which it must take.
    mask, accum, replace, out
        As for :func:`ewise_add`.

    Returns
    -------
    Vector
        ``out``, or a new Vector of the op's result dtype (int64 for a positional op).

    Raises
    ------
    DimensionMismatch
        The mask's or ``out``'s size is not u.size.
    DomainMismatch
        An operand of the wrong type (u, op, mask, accum, out), a dtype op or accum does not
        take, or a scalar of a dtype gbla cannot hold (a str, a complex, a uint64).
    DeviceMismatch
        u, the mask and ``out`` are not all on one device.
    UnknownName
        ``op`` or ``accum`` is a name no binary op has.
    InvalidValue
        ``left`` or ``right`` given with a UnaryOp, not exactly one of them given with a binary
        op, a scalar that is not a number, or ``replace`` not a bool.

    Examples
    --------
    >>> import numpy as np, gbla
    >>> from gbla import semirings
    >>> u = gbla.Vector.from_coo([0, 2], [1., 2.], 4, device="cpu")
    >>> gbla.apply(u, semirings.unary.ainv).to_coo()
    (array([0, 2]), array([-1., -2.]))
    >>> gbla.apply(u, "minus", left=10).to_coo()
    (array([0, 2]), array([9., 8.]))
    >>> w = gbla.Vector.from_dense(np.array([1, 2], np.int32), device="cpu")
    >>> gbla.apply(w, "plus", right=1).dtype, gbla.apply(w, "plus", right=1.5).dtype
    (dtype('int32'), dtype('float64'))
    """
    if isinstance(u, Matrix) or getattr(u, "partitioned", False):
        return _apply_matrix(u, op, left, right, mask, accum, replace, out)
    u = _vector(u, "u")
    mask, out = _mask(mask, u.size), _out(out, u.size)
    accum = None if accum is None else _binary_op(accum, "accum")
    device = _device(u=u, mask=None if mask is None else mask.vector, out=out)
    site = _listed_site(device, out, accum, replace)
    op, s, dtype = _apply_op(op, u.dtype, left, right, device)
    if site is not None:  # over u's list (or the mask's), a bound scalar read by the kernel
        computed = u.dtype if dtype is None else dtype
        types = _entries.MapTypes(
            op, u.dtype, dtype, computed, op.result_dtype(computed), flip=left is not None
        )
        return _listed(
            _entries.map_entries(site, types, _operand(u), scalar=s, mask=_entry_mask(mask))
        )
    # a sparse u on the CPU is computed at its entries (not for an op that reads positions)
    sparse = device == "cpu" and u._is_sparse and not op.positional
    values, present = (u._values, None) if sparse else u._dense()
    t_values = _apply_values(op, s, dtype, values, u.dtype, left is not None, device)
    t = (
        Vector._from_sparse_arrays(u._indices, t_values, u.size, device)
        if sparse
        else (t_values, present)
    )
    return _write(out, t, mask=mask, accum=accum, replace=V.flag(replace, "replace"), device=device)


def reduce(u: Vector | Matrix, monoid: Monoid | str, *, out: Scalar | None = None) -> Any:
    """The monoid's reduction of u's present values: a NumPy scalar of u's dtype (the monoid's
    identity when u has no entries; ``any`` returns the value of the lowest present index), or,
    with ``out``, that value written into a :class:`Scalar` where it lives, without reading it
    back (the form a loop body recorded on the device can use). A Matrix reduces all its
    entries (``any``: the first in row order); :func:`reduce_rowwise` and
    :func:`reduce_columnwise` give one value a row or a column.

    Parameters
    ----------
    u : Vector or Matrix
    monoid : Monoid or str
        e.g. ``semirings.monoid.plus`` or ``"plus"``; it must take u.dtype (``plus`` and
        ``times`` do not take bool). Computed in u.dtype.
    out : Scalar or None, default None
        Receives the reduction, cast to its dtype (on u's device); no host read.

    Returns
    -------
    numpy scalar of u.dtype, or ``out``
        The reduction; for an empty u the identity (0 for plus, 1 for times, +inf or the
        largest integer for min, False for lor, ...), and 0 for ``any``, whose identity is only
        a placeholder; ``out`` when given.

    Raises
    ------
    DomainMismatch
        ``u`` is not a Vector, ``monoid`` is not a Monoid or a name (a BinaryOp is refused), or
        the monoid does not take u.dtype.
    UnknownName
        ``monoid`` is a name no monoid has.

    Examples
    --------
    >>> import numpy as np, gbla
    >>> u = gbla.Vector.from_coo([0, 2], [1., 2.], 4, device="cpu")
    >>> print(gbla.reduce(u, "plus"), gbla.reduce(u, "max"))
    3.0 2.0
    >>> print(gbla.reduce(gbla.Vector.new(3, device="cpu"), "min"))
    inf
    """
    name = "u"
    if isinstance(u, Matrix) or getattr(u, "partitioned", False):  # its entries, in CSR order
        A, name = _matrix(u, "u"), "A"
        u = Vector._from_dense_arrays(A._values_or_ones(), None, A.device)
    u = _vector(u, "u")
    monoid = _sr.monoid_of(monoid)
    if u.dtype not in monoid.dtypes:
        raise V.domain(
            f"{name}.dtype",
            f"be one {monoid.name} takes {[d.name for d in monoid.dtypes]}",
            u.dtype.name,
        )
    if out is not None:
        if not isinstance(out, Scalar):
            raise V.domain("out", "be a gbla.Scalar or None", type(out).__name__)
        V.same_device({"u": u.device, "out": out.device})
        if monoid.is_any and u.device == "gpu":
            raise V.invalid_value(
                "monoid",
                "not be 'any' with out= on the GPU (its value is "
                "the lowest present index's, found on the host)",
                "any",
            )
    elif u.device == "gpu":
        B.refuse_host_read("gbla.reduce")
    loop = B.device_loop() if u.device == "gpu" else None
    # a loop's launches share its word of finished blocks
    result = reduce_vector(u, monoid, None if loop is None else loop.workspace.arrived())
    if out is not None:
        out._set(result)
        return out
    if u.device == "gpu":
        return np.asarray(B.to_host(result), dtype=u.dtype)[()]  # sync: the scalar
    return result[()]


def _apply_op(op, u_dtype, left, right, device):
    """apply's op checked against its operand's dtype and its bound scalar: (op, the scalar,
    the dtype the op computes in), the last two None for a UnaryOp."""
    if not isinstance(op, UnaryOp):
        op = _binary_op(op, "op")
    if isinstance(op, UnaryOp):
        if left is not None or right is not None:
            raise V.invalid_value("left, right", "be None with a UnaryOp", (left, right))
        if u_dtype not in op.dtypes:
            raise V.domain(
                "u.dtype", f"be one {op.name} takes {[d.name for d in op.dtypes]}", u_dtype.name
            )
        return op, None, None
    if (left is None) == (right is None):
        raise V.invalid_value("left, right", "be exactly one scalar with a BinaryOp", (left, right))
    arg = "left" if right is None else "right"
    s_dtype, s = _bound_operand(right if left is None else left, u_dtype, arg, device)
    return op, s, _op_dtype(op, u_dtype, s_dtype, "op")


def _apply_values(op, s, dtype, values, u_dtype, flip, device):
    """f of each of ``values``: op(values) for a UnaryOp, op(values, s) (op(s, values) with
    ``flip``) in ``dtype`` for a bound BinaryOp (:func:`_apply_op`)."""
    if dtype is None:
        return _eval_unary(op, values, u_dtype, device)
    s_array = _broadcast(s, len(values), dtype, device)
    return _eval_binary(op, *((s_array, values) if flip else (values, s_array)), dtype, device)


def _matrix_output(mask, out, accum, shape, what):
    """(mask, accum) of an operation giving a Matrix of ``shape`` (``what`` names it in the
    messages), ``out`` checked to be a Matrix of that shape."""
    mask = _matrix_ops.validate_mask(mask, shape)
    if out is not None:
        _matrix(out, "out")
        V.dimension(out.shape, shape, "out.shape", what)
    return mask, None if accum is None else _binary_op(accum, "accum")


def _apply_matrix(A, op, left, right, mask, accum, replace, out):
    """apply on a Matrix: f of each entry, on A's structure (its arrays shared when the result
    is new)."""
    A = _matrix(A, "u")
    mask, accum = _matrix_output(mask, out, accum, A.shape, "u.shape")
    device = _device(u=A, mask=None if mask is None else mask.matrix, out=out)
    op, s, dtype = _apply_op(op, A.dtype, left, right, device)
    t = (
        A._entry_rows().astype(op.result_dtype(A.dtype))
        if op.positional
        else _apply_values(op, s, dtype, A._values_or_ones(), A.dtype, left is not None, device)
    )
    replace = V.flag(replace, "replace")
    if mask is None and accum is None and out is None:
        return A._keep_entries(None, t, t.dtype)
    if device == "gpu":
        refuse_host_read("gbla.apply of a Matrix with a mask, accum or out")  # entries counted
    keys = A._entry_keys()
    if mask is not None and out is None:
        keys, t = B.compress(mask.allows(keys), keys, t)
    return _matrix_ops.write(
        out,
        (keys, t),
        A.shape,
        mask=mask,
        accum=accum,
        replace=replace,
        dtype=t.dtype,
        device=device,
    )


def reduce_rowwise(
    A: Matrix,
    monoid: Monoid | str,
    *,
    mask: Mask | Vector | None = None,
    accum: _Op | None = None,
    replace: bool = False,
    out: Vector | None = None,
) -> Vector:
    """w<mask> accum= the monoid's reduction of each row of A (GrB_Matrix_reduce_Monoid):
    w(i) combines row i's entries, in column order; a row with none gives no entry.

    Parameters
    ----------
    A : Matrix
        An iso A's values are True.
    monoid : Monoid or str
        It must take A.dtype; the result has A's dtype.
    mask, accum, replace, out
        As for :func:`ewise_add`, over a Vector of A.nrows.

    Returns
    -------
    Vector
        ``out``, or a new Vector of size A.nrows.

    Raises
    ------
    DomainMismatch
        ``A`` not a Matrix, a monoid that does not take A.dtype, or another operand of the
        wrong type.
    DimensionMismatch
        The mask's or ``out``'s size is not A.nrows.
    DeviceMismatch, UnknownName, InvalidValue
        As for :func:`ewise_add`.

    Examples
    --------
    >>> import gbla
    >>> A = gbla.Matrix.from_edges([0, 0, 2], [1, 2, 0], [1., 5., 2.], n=4, device="cpu")
    >>> gbla.reduce_rowwise(A, "plus").to_coo()
    (array([0, 2]), array([6., 2.]))
    >>> gbla.reduce_columnwise(A, "max").to_coo()
    (array([0, 1, 2]), array([2., 1., 5.]))
    """
    return _reduce_lines(A, monoid, False, mask, accum, replace, out)


def reduce_columnwise(
    A: Matrix,
    monoid: Monoid | str,
    *,
    mask: Mask | Vector | None = None,
    accum: _Op | None = None,
    replace: bool = False,
    out: Vector | None = None,
) -> Vector:
    """w<mask> accum= the monoid's reduction of each column of A: :func:`reduce_rowwise` of
    A.T (A's cached transpose), a Vector of A.ncols; a column with no entry gives none."""
    return _reduce_lines(A, monoid, True, mask, accum, replace, out)


def _reduce_lines(A, monoid, columns, mask, accum, replace, out):
    A = _matrix(A, "A")
    monoid = _sr.monoid_of(monoid)
    if A.dtype not in monoid.dtypes:
        raise V.domain(
            "A.dtype", f"be one {monoid.name} takes {[d.name for d in monoid.dtypes]}", A.dtype.name
        )
    M = A.T if columns else A
    mask, out = _mask(mask, M.nrows), _out(out, M.nrows)
    accum = None if accum is None else _binary_op(accum, "accum")
    device = _device(A=A, mask=None if mask is None else mask.vector, out=out)
    if device == "gpu":
        refuse_host_read("gbla.reduce_rowwise and reduce_columnwise")  # the rows are counted
    # sync: the rows with entries counted
    rows, values = _matrix_ops.reduce_by_key(
        M._entry_rows().astype(np.int64), M._values_or_ones(), monoid, device
    )
    t = Vector._from_sparse_arrays(rows, values.astype(A.dtype, copy=False), M.nrows, device)
    return _write(out, t, mask=mask, accum=accum, replace=V.flag(replace, "replace"), device=device)


def extract(
    u: _Container,
    I: Any = None,
    J: Any = None,
    *,
    mask: Mask | Vector | Matrix | None = None,
    accum: _Op | None = None,
    replace: bool = False,
    out: _Container | None = None,
) -> _Container:
    """w<mask> accum= u(I), or C<mask> accum= A(I, J) (GrB_extract): w(k) = u(I[k]) where u has
    that entry; C(k, l) = A(I[k], J[l]) where A has it. Indices may repeat (a row or column
    taken twice is there twice); the induced subgraph on vertices S is ``extract(A, S, S)``.

    Parameters
    ----------
    u : Vector or Matrix
    I : sequence or 1-D array of ints, a slice, or None
        The positions (rows of a Matrix) taken, in order; None (GrB_ALL) takes all.
    J : sequence or 1-D array of ints, a slice, or None
        A Matrix's columns, as ``I``; a Vector takes none (None).
    mask, accum, replace, out
        As for :func:`ewise_add` (a Vector of len(I), or a Matrix of (len(I), len(J)) with a
        matrix mask; ``out`` a Matrix is read and never modified).

    Returns
    -------
    Vector or Matrix
        ``out``, or a new one of u's dtype (an iso Matrix stays iso).

    Raises
    ------
    InvalidValue
        An index list that is not one-dimensional or holds no integers, or ``J`` given for a
        Vector.
    InvalidIndex
        A negative index, or one past u's size (A's rows for I, columns for J).
    DimensionMismatch, DomainMismatch, DeviceMismatch
        As for :func:`ewise_add`.

    Examples
    --------
    >>> import gbla
    >>> u = gbla.Vector.from_coo([0, 2, 3], [1., 2., 3.], 5, device="cpu")
    >>> gbla.extract(u, [3, 1, 3]).to_coo()
    (array([0, 2]), array([3., 3.]))
    >>> A = gbla.Matrix.from_edges([0, 1, 2], [1, 2, 0], [1., 2., 3.], device="cpu")
    >>> gbla.extract(A, [2, 0], [0, 1]).to_scipy().toarray()
    array([[3., 0.],
           [0., 1.]])
    """
    if isinstance(u, Matrix) or getattr(u, "partitioned", False):
        return _extract_matrix(u, I, J, mask, accum, replace, out)
    u = _vector(u, "u")
    if J is not None:
        raise V.invalid_value("J", "be None for a Vector (it has no columns)", J)
    idx = _index_list(I, u.size, "I", u.device)
    size = u.size if idx is None else len(idx)
    mask, out = _mask(mask, size), _out(out, size)
    accum = None if accum is None else _binary_op(accum, "accum")
    device = _device(u=u, mask=None if mask is None else mask.vector, out=out)
    values, present = u._dense()
    if idx is not None:
        values, present = values[idx], None if present is None else present[idx]
    elif out is None and mask is None:  # all of u: a copy
        values, present = values.copy(), None if present is None else present.copy()
    return _write(
        out,
        (values, present),
        mask=mask,
        accum=accum,
        replace=V.flag(replace, "replace"),
        device=device,
    )


def _extract_matrix(A, I, J, mask, accum, replace, out):
    A = _matrix(A, "u")
    rows = _index_list(I, A.nrows, "I", A.device)
    cols = _index_list(J, A.ncols, "J", A.device)
    xp = B.xp_of(A.device)
    shape = (A.nrows if rows is None else len(rows), A.ncols if cols is None else len(cols))
    mask, accum = _matrix_output(mask, out, accum, shape, "(len(I), len(J))")
    device = _device(u=A, mask=None if mask is None else mask.matrix, out=out)
    if device == "gpu":
        refuse_host_read("gbla.extract of a Matrix")  # the entries taken are counted
    keys, at = _storage.submatrix_entries(
        A._indptr,
        A._indices,
        xp.arange(A.nrows, dtype=np.int64) if rows is None else rows,
        cols,
        A.ncols,
        xp,
    )
    values = None if A.is_iso else A._values[at]
    if mask is not None and out is None:
        keys, values = B.compress(mask.allows(keys), keys, values)
    if out is None and accum is None:
        return _matrix_ops.from_keys(keys, values, shape, A.dtype, device, iso=A.is_iso)
    if values is None:
        values = xp.ones(len(keys), bool)
    return _matrix_ops.write(
        out,
        (keys, values),
        shape,
        mask=mask,
        accum=accum,
        replace=V.flag(replace, "replace"),
        dtype=A.dtype,
        device=device,
    )


def _index_list(I, n, arg, device):
    """An index list of GrB_extract as int64 on ``device``: None (all) stays None; a slice is
    the positions it names among n; a sequence or array is checked to hold integers in
    [0, n)."""
    if I is None:
        return None
    xp = B.xp_of(device)
    if isinstance(I, slice):
        return xp.arange(*I.indices(n), dtype=np.int64)
    if isinstance(I, (bool, np.bool_, int, np.integer, float, str)):
        raise V.invalid_value(arg, "be a sequence or 1-D array of indices, a slice or None", I)
    if device == "gpu":
        refuse_host_read("gbla.extract's check of its indices")
    try:
        a = (
            B.to_device(I, device)
            if hasattr(I, "__array_interface__") or hasattr(I, "__cuda_array_interface__")
            else xp.asarray(np.asarray(I))
        )
    except (TypeError, ValueError):
        raise V.invalid_value(arg, "be a sequence or 1-D array of indices", I) from None
    if a.dtype.kind == "b":
        raise V.invalid_value(arg, "hold integers", f"dtype {a.dtype.name}")
    return V.index_array(a, xp, n, arg)


def assign(
    out: Vector,
    value: Any,
    *,
    mask: Mask | Vector | None = None,
    accum: _Op | None = None,
    replace: bool = False,
) -> Vector:
    """out<mask, replace> accum= value: a scalar into every position the mask allows (or a
    Vector of the same size, element by element). Writes ``out`` in place and returns it.

    Parameters
    ----------
    out : Vector
        Written in place; keeps its dtype.
    value : scalar or Vector
        A scalar must be representable in out.dtype (a NaN or an infinity into an integer
        vector raises InvalidValue, as do 1.5 or True; only 0, 1, True and False go into
        bool). A 0-d CuPy array (such as the iteration number of :func:`gbla.iterate` in
        device mode) is read on the device and cast to out.dtype unchecked. A Vector of size
        out.size is written entry by entry, cast to out.dtype; its missing entries count too
        (without mask and accum, ``out`` becomes a copy of it).
    mask : Mask, Vector or None, default None
        ``w.S``, ``w.V``, ``~w.S``, ``~w.V`` (a bare Vector means its value mask), size
        out.size. None allows every position (a scalar then fills ``out`` entirely).
    accum : BinaryOp, Monoid, str or None, default None
        Combines the old entry with the value where both exist (computed in
        ``numpy.result_type`` of their dtypes, which accum must take); None overwrites.
    replace : bool, default False
        Delete the entries of ``out`` that the mask does not allow.

    Returns
    -------
    Vector
        ``out``.

    Raises
    ------
    DimensionMismatch
        A Vector ``value`` or the mask whose size is not out.size.
    DomainMismatch
        An operand of the wrong type (out, mask, accum), or dtypes accum does not take.
    DeviceMismatch
        out, a Vector value and the mask are not all on one device.
    UnknownName
        ``accum`` is a name no binary op has.
    InvalidValue
        A scalar that is not a number or not representable in out.dtype, or ``replace`` not a
        bool.

    Examples
    --------
    >>> import numpy as np, gbla
    >>> u = gbla.Vector.from_coo([0, 2], [1., 2.], 4, device="cpu")
    >>> w = gbla.Vector.from_dense(np.zeros(4), device="cpu")
    >>> gbla.assign(w, 7., mask=u.S).to_dense()
    array([7., 0., 7., 0.])
    >>> gbla.assign(w, 1., accum="plus").to_dense()
    array([8., 1., 8., 1.])
    >>> gbla.assign(w, 5., mask=u.S, replace=True).to_coo()
    (array([0, 2]), array([5., 5.]))
    """
    out = _vector(out, "out")
    mask = _mask(mask, out.size)
    accum = None if accum is None else _binary_op(accum, "accum")
    if isinstance(value, Scalar):  # read where it lives: a device value stays there
        V.same_device({"value": value.device, "out": out.device})
        value = value._value_array()
    if isinstance(value, Vector):
        V.dimension(value.size, out.size, "value.size", "out.size")
        device = _device(out=out, value=value, mask=None if mask is None else mask.vector)
        # a sparse value on the CPU is looked up where it is needed, not made dense
        t = value if device == "cpu" and value._is_sparse else value._dense()
    elif B.array_device(value) == "gpu" and value.ndim == 0:  # a device scalar: no host read
        device = _device(out=out, mask=None if mask is None else mask.vector)
        if device != "gpu":
            raise V.domain("value", "be a host scalar when out is on the CPU", "a CuPy scalar")
        V.storage_dtype(value.dtype, "value")
        # cast where it is written (a recorded loop's depth is no extra launch), except under
        # accum, which combines in out's dtype
        t = (value if accum is None else value.astype(out.dtype), None)
    else:
        device = _device(out=out, mask=None if mask is None else mask.vector)
        t = (V.scalar_value(value, out.dtype, "value"), None)
    return _write(out, t, mask=mask, accum=accum, replace=V.flag(replace, "replace"), device=device)


_WORD_BITS = {np.dtype(np.int32): 32, np.dtype(np.int64): 64}


def assign_bits(out: Vector, value: Any, bits: Vector) -> Vector:
    """out(b, i) = value for every entry i of ``bits`` and every bit b set in bits(i): words of
    bits unpacked into a dense 2-D result (a bit-parallel search, which keeps a source a bit,
    writes each level into its levels so: row b is source b's). Writes ``out`` in place and
    returns it.

    ``out`` is read as a row-major (width, bits.size) array, width = out.size // bits.size:
    entry (b, i) is position ``b * bits.size + i``. Positions whose bit is clear keep what
    they hold.

    Parameters
    ----------
    out : Vector
        Of size bits.size * width, 1 <= width <= 32 (int32 bits) or 64 (int64 bits); keeps its
        dtype.
    value : scalar, Scalar or 0-d CuPy array
        As for :func:`assign`: a host scalar must be representable in out.dtype; a device
        scalar (such as the iteration number of :func:`gbla.iterate` in device mode) is read
        on the device and cast to out.dtype unchecked.
    bits : Vector of int32 or int64
        Bit b of bits(i) (the b-th lowest; the sign bit is bit 31 or 63) sets (b, i). Bits at
        or above width are ignored, as are positions with no entry.

    Returns
    -------
    Vector
        ``out``.

    Raises
    ------
    DimensionMismatch
        out.size is not bits.size times a width in [1, 32] or [1, 64] (0 when bits.size is 0).
    DomainMismatch
        ``out`` or ``bits`` is not a Vector, bits.dtype is not int32 or int64, or ``value`` is
        a device scalar with ``out`` on the CPU.
    DeviceMismatch
        out, bits and a Scalar value are not all on one device.
    InvalidValue
        A host value that is not a number or not representable in out.dtype.

    Examples
    --------
    Entry 0 holds bits 0 and 2, entry 2 bit 1; three entries by a width of 3:

    >>> import numpy as np, gbla
    >>> u = gbla.Vector.from_coo([0, 2], np.array([0b101, 0b010]), 3, device="cpu")
    >>> levels = gbla.Vector.new(9, np.int32, device="cpu")
    >>> gbla.assign_bits(levels, 7, u).to_dense(-1).reshape(3, 3)
    array([[ 7, -1, -1],
           [-1, -1,  7],
           [ 7, -1, -1]], dtype=int32)
    """
    out, bits = _vector(out, "out"), _vector(bits, "bits")
    if bits.dtype not in _WORD_BITS:
        raise V.domain("bits.dtype", "be int32 or int64 (a word of bits)", bits.dtype.name)
    width = V.bit_rows(out.size, bits.size, _WORD_BITS[bits.dtype])
    if isinstance(value, Scalar):  # read where it lives: a device value stays there
        V.same_device({"value": value.device, "out": out.device})
        value = value._value_array()
    device = _device(out=out, bits=bits)
    on_device = B.array_device(value) == "gpu" and np.ndim(value) == 0
    if on_device and device != "gpu":
        raise V.domain("value", "be a host scalar when out is on the CPU", "a CuPy scalar")
    if on_device:
        V.storage_dtype(value.dtype, "value")
    else:
        value = V.scalar_value(value, out.dtype, "value")
    if width == 0:
        return out
    if device == "cpu":
        idx, words = bits._sparse()
        words = words.view(np.uint32 if bits.dtype == np.int32 else np.uint64)
        shifts = np.arange(width, dtype=words.dtype)
        bit, entry = np.nonzero((words[None, :] >> shifts[:, None]) & 1)  # row-major order
        at = bit * bits.size + idx[entry]  # ascending, as _write_at's merge wants them
        return _write_at(out, (value, None), at, replace=False)
    keep = _op_site("entries")
    if keep is None and not on_device:  # an eager call: the value goes over as a device scalar
        value = B.xp_of(device).asarray(value, dtype=out.dtype)
    o_values, o_present = out._dense()
    if not (out._owned and o_present is not None):  # a new value: out's arrays may be shared
        xp = B.xp_of(device)
        o_values = o_values.copy()
        o_present = xp.ones(out.size, bool) if o_present is None else o_present.copy()
        out._set_dense(o_values, o_present)
    _entries.assign_bits(keep, _operand(bits), value, o_values, o_present)
    out._written_in_place()
    return out


# ---------------------------------------------------------------------- select and scale
_STRUCTURAL_SELECT = ("tril", "triu", "diag", "offdiag")


_COMPARISONS = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


def _comparison(op, dtype, arg):
    """The bool-valued BinaryOp ``op`` names (a symbol of _COMPARISONS, a name, an op) as its
    left operand's ``dtype`` takes it, or the error naming ``arg``."""
    op = _binary_op(_COMPARISONS.get(op, op) if isinstance(op, str) else op, arg)
    if op.result_dtype(dtype) != np.dtype(bool):
        raise V.domain(arg, "be a comparison giving bool", op.name)
    return op


def select(x: _Container, op: _Op, thunk: Any = None) -> _Container:
    """The entries of a Vector or Matrix that satisfy a condition (GrB_select).

    Parameters
    ----------
    x : Vector or Matrix
    op : str, BinaryOp or Monoid
        ``"nonzero"`` keeps the values that are not zero (False, 0 and 0.0 go; NaN stays); a
        comparison with ``thunk`` (``"=="``, ``"!="``, ``"<"``, ``"<="``, ``">"``, ``">="``, a
        binary op name such as ``"lt"``, or a bool-valued BinaryOp such as ``binary.lt``:
        op(value, thunk)); for a Matrix also the structural ``"tril"`` (j <= i), ``"triu"``
        (j >= i), ``"diag"`` (j == i), ``"offdiag"`` (j != i), which ignore values and thunk.
        An iso Matrix's values are True.
    thunk : scalar, Scalar, Vector or None, default None
        The right operand of a comparison, which needs one. A Python bool, int or float takes
        x.dtype when it fits there exactly, a NumPy scalar keeps its dtype; the comparison
        computes in ``numpy.result_type`` of x.dtype and the thunk's dtype, which it must take.
        A Vector of x's size (x a Vector, on its device) compares position by position: x's
        entry i is kept where the thunk has an entry i and ``op(x[i], thunk[i])`` holds (a
        gbla extension: ``t`` where ``t < d`` in one op, as a relaxation's test needs).

    Returns
    -------
    Vector or Matrix
        A new one of the same size, dtype and device holding the kept entries with their
        values (an iso Matrix stays iso).

    Raises
    ------
    DomainMismatch
        ``x`` is neither a Vector nor a Matrix, ``op`` has the wrong type or does not give bool,
        or a dtype the comparison does not take (a thunk of a dtype gbla cannot hold included).
    UnknownName
        ``op`` is a string naming no comparison or binary op (``"tril"`` etc. on a Vector).
    InvalidValue
        A comparison without ``thunk``, or a thunk that is not a number.

    Examples
    --------
    >>> import numpy as np, gbla
    >>> v = gbla.Vector.from_coo([1, 2, 3], [5., 0., 20.], 4, device="cpu")
    >>> gbla.select(v, ">", 4).to_coo()
    (array([1, 3]), array([ 5., 20.]))
    >>> A = gbla.Matrix.from_edges([0, 1, 2], [1, 0, 0], [1., 2., 3.], device="cpu")
    >>> gbla.select(A, "tril").to_scipy().toarray()
    array([[0., 0., 0.],
           [2., 0., 0.],
           [3., 0., 0.]])
    """
    return _select(x, op, thunk, rest=False)


def split(x: _Container, op: _Op, thunk: Any = None) -> tuple[_Container, _Container]:
    """:func:`select` and the rest of ``x``'s entries, in one pass (a gbla extension).

    ``kept, rest = split(x, op, thunk)`` gives ``kept == select(x, op, thunk)`` and ``rest``
    the entries of x that ``kept`` lacks (``apply(x, identity, mask=~kept.S)``); together they
    hold every entry of x once. Inside a loop recorded on the device, one kernel over x's list
    makes both, where a select and its complement were two: delta-stepping's window takes
    its front and leaves the rest pending this way.

    Parameters and errors are :func:`select`'s.

    Returns
    -------
    (Vector, Vector) or (Matrix, Matrix)
        The kept entries and the others, each new, of x's size, dtype and device.

    Examples
    --------
    >>> import gbla
    >>> v = gbla.Vector.from_coo([1, 2, 3], [5., 0., 20.], 4, device="cpu")
    >>> near, far = gbla.split(v, "<=", 5.0)
    >>> near.to_coo(), far.to_coo()
    ((array([1, 2]), array([5., 0.])), (array([3]), array([20.])))
    """
    return _select(x, op, thunk, rest=True)


def _select(x, op, thunk, rest):
    """select(x, op, thunk); with ``rest``, (that, the rest of x's entries)."""
    if getattr(x, "partitioned", False):  # each part selects among its own entries
        if op in _STRUCTURAL_SELECT:
            raise V.invalid_value("op", f"be a comparison on a {type(x).__name__}", op)
        # a number's selection can be kept with the matrix, as a Matrix's caches are
        key = (op, thunk) if isinstance(thunk, (int, float, np.number)) else None

        def kept(values):
            return _select_values(values, op, thunk, x.dtype, x.device)

        out = x.keep_entries(kept, key=key)
        if not rest:
            return out
        return out, x.keep_entries(
            lambda values: ~kept(values), key=None if key is None else ("rest", *key)
        )
    if isinstance(x, Matrix):
        if op in _STRUCTURAL_SELECT:
            rows, cols = x._entry_rows(), x._indices
            keep = {
                "tril": cols <= rows,
                "triu": cols >= rows,
                "diag": cols == rows,
                "offdiag": cols != rows,
            }[op]
        else:
            keep = _select_values(x._values_or_ones(), op, thunk, x.dtype, x.device)
        out = x._keep_entries(keep, x._values, x.dtype)
        return (out, x._keep_entries(~keep, x._values, x.dtype)) if rest else out
    x = _vector(x, "x")
    if isinstance(thunk, Vector):
        return _select_by_vector(x, op, thunk, rest)
    site = _listed_site(x.device)
    if site is not None:  # over x's list, the comparison made in the kernel
        shift, parts = None, thunk._split_shift() if isinstance(thunk, Scalar) else None
        if parts is not None and parts[1] is not None:
            # s + c: where the comparison is in s's dtype, the kernel adds c to s (no launch)
            cond, dt, t = _select_condition(op, parts[0], x.dtype, x.device)
            shift = parts[1] if dt == thunk.dtype else None
        if shift is None:
            cond, dt, t = _select_condition(op, thunk, x.dtype, x.device)
        types = _entries.MapTypes(
            _sr.unary.identity if cond is None else cond,
            x.dtype,
            None if cond is None else dt,
            dt,
            np.dtype(bool),
        )
        result = _entries.select(site, types, _operand(x), t, rest=rest, shift=shift)
        return _listed_pair(result, rest)
    if x.device == "cpu" and x._is_sparse:  # at its entries only; the results stay sparse
        keep = _select_values(x._values, op, thunk, x.dtype, x.device)
        return _sparse_split(x, keep, rest)
    values, present = x._dense()
    keep = _select_values(values, op, thunk, x.dtype, x.device)
    return _dense_split(x, values, present, keep, rest)


def _listed_pair(result, rest):
    """The Vector (or, with ``rest``, the two) of an op over entry lists."""
    return (_listed(result[0]), _listed(result[1])) if rest else _listed(result)


def _sparse_split(x, keep, rest):
    """x's (sparse, on the CPU) entries where ``keep``; with ``rest``, and the others."""
    idx, vals = x._indices, x._values
    out = Vector._from_sparse_arrays(idx[keep], vals[keep], x.size, x.device)
    if not rest:
        return out
    return out, Vector._from_sparse_arrays(idx[~keep], vals[~keep], x.size, x.device)


def _dense_split(x, values, present, keep, rest):
    """x's entries (dense ``values`` and ``present``, None: all) where ``keep``; with
    ``rest``, and the others."""
    out = Vector._from_dense_arrays(values, keep if present is None else keep & present, x.device)
    if not rest:
        return out
    other = ~keep if present is None else ~keep & present
    return out, Vector._from_dense_arrays(values, other, x.device)


def _select_by_vector(x, op, v, rest=False):
    """select(x, op, v) for a Vector v of x's size: x's entries where v has one and op holds;
    with ``rest``, and x's other entries."""
    V.dimension(v.size, x.size, "thunk.size", "x.size")
    V.same_device({"x": x.device, "thunk": v.device})
    if op == "nonzero":
        raise V.invalid_value("thunk", "be None or a scalar with 'nonzero'", "a Vector")
    op = _comparison(op, x.dtype, "op")
    dt = _op_dtype(op, x.dtype, v.dtype, "op")
    site = _listed_site(x.device)
    if site is not None:  # over x's list, the thunk's value read at each entry
        types = _entries.MapTypes(op, x.dtype, v.dtype, dt, np.dtype(bool))
        result = _entries.select(site, types, _operand(x), vector=_operand(v), rest=rest)
        return _listed_pair(result, rest)
    t_values, t_present = v._dense()
    if x.device == "cpu" and x._is_sparse and not op.positional:  # at its entries only
        idx = x._indices
        keep = _eval_binary(op, x._values, t_values[idx], dt, x.device)
        if t_present is not None:
            keep &= t_present[idx]
        return _sparse_split(x, keep, rest)
    values, present = x._dense()
    keep = _eval_binary(op, values, t_values, dt, x.device)
    if t_present is not None:
        keep &= t_present
    return _dense_split(x, values, present, keep, rest)


def _select_condition(op, thunk, dtype, device):
    """(comparison, the dtype it computes in, the bound thunk) of a select; (None, dtype, None)
    for "nonzero"."""
    if op == "nonzero":
        return None, dtype, None
    op = _comparison(op, dtype, "op")
    if thunk is None:
        raise V.invalid_value("thunk", f"be given with {op.name}", None)
    t_dtype, t = _bound_operand(thunk, dtype, "thunk", device)
    return op, _op_dtype(op, dtype, t_dtype, "op"), t


def _select_values(values, op, thunk, dtype, device):
    op, dt, t = _select_condition(op, thunk, dtype, device)
    if op is None:
        return values.astype(bool)
    return _eval_binary(op, values, _broadcast(t, len(values), dt, device), dt, device)


def improve(out: Vector, t: Vector, better: str | BinaryOp = "<") -> Vector:
    """Keep the better values, in place: ``out(i) = t(i)`` at each entry i of t where out has
    no entry i or ``better(t(i), out(i))`` holds; returns those entries of t (a gbla extension).

    A relaxation's step in one op: Bellman-Ford's round is ``t = f min.+ A`` then
    ``f = improve(d, t)``, and a labelling's is the same with its own semiring. It equals
    ``w = ewise_mult(t, out, better); z = apply(t, identity, mask=~out.S);
    assign(z, t, mask=w.V); assign(out, z, mask=z.S)`` and returns z; inside a loop recorded on
    the device, where out is the loop's state, it is one kernel over t's entry list instead of
    four.

    Parameters
    ----------
    out : Vector
        Written in place; a value taken from t is cast to out's dtype.
    t : Vector
        Of out's size, on out's device.
    better : str or BinaryOp, default ``"<"``
        A comparison (``"<"``, ``"<="``, ``">"``, ``">="``, ``"=="``, ``"!="``, a binary op name
        such as ``"lt"``, or a bool-valued BinaryOp), computed in ``numpy.result_type`` of the
        two dtypes, which it must take: ``better(t(i), out(i))``. A NaN is never better.

    Returns
    -------
    Vector
        t's entries that were written into out, with t's values and dtype.

    Raises
    ------
    DomainMismatch
        out or t not a Vector, better not a comparison or not defined on the dtypes, out and
        t on different devices.
    DimensionMismatch
        t's size is not out's.

    Examples
    --------
    >>> import gbla
    >>> d = gbla.Vector.from_coo([0, 1], [4., 1.], 3, device="cpu")
    >>> t = gbla.Vector.from_coo([0, 1, 2], [2., 5., 7.], 3, device="cpu")
    >>> gbla.improve(d, t).to_coo()
    (array([0, 2]), array([2., 7.]))
    >>> d.to_coo()
    (array([0, 1, 2]), array([2., 1., 7.]))
    """
    out = _vector(out, "out")
    t = _vector(t, "t")
    V.dimension(t.size, out.size, "t.size", "out.size")
    V.same_device({"out": out.device, "t": t.device})
    op = _comparison(better, t.dtype, "better")
    dt = _op_dtype(op, t.dtype, out.dtype, "better")
    site = _listed_site(out.device) if out._owned else None
    if site is not None:  # a recorded loop's state, written over t's list
        o_values, o_present = out._dense()
        types = _entries.MapTypes(op, t.dtype, out.dtype, dt, np.dtype(bool))
        result = _entries.improve(site, types, _operand(t), o_values, o_present)
        out._written_in_place()
        return _listed(result)
    if out._dense()[1] is None:  # out has every entry: one comparison decides
        z = select(t, op, out)
    else:
        wins = ewise_mult(t, out, op)
        z = apply(t, _sr.unary.identity, mask=~out.S)
        assign(z, t, mask=wins.V)
    assign(out, z, mask=z.S)
    return z


# A relaxation's comparison that its product's add monoid decides alone: add(t, o) != o is
# better(t, o) exactly, so that the product may test and lower out itself (gbla.relax).
_RELAXES = {"min": "lt", "max": "gt"}
# A window's comparison by the add's op: the entries of u it expands (gbla.relax's window)
_WITHIN = {"min": "<=", "max": ">="}


class _Relaxation(NamedTuple):
    """What a device loop's product runs of :func:`relax`: out's (values, present), which it
    writes; ``also`` (a Vector or None), whose entries join its output; ``window`` (t, shift,
    kind: t a 0-d device array, shift a host value or None, kind _spmv.window_kind's) or
    None; ``hops``, relax's."""

    into: tuple
    also: Any = None
    window: Any = None
    hops: int = 1


def relax(
    out: Vector,
    u: Vector,
    A: Matrix,
    semiring: Semiring | str = "min_plus",
    better: str | BinaryOp = "<",
    *,
    direction: _Direction = "auto",
    also: Vector | None = None,
    window: Scalar | Any = None,
    hops: int = 1,
) -> Vector:
    """out = the better of out and u (+).(x) A, in place; returns the entries of out that
    changed, with their new values (a gbla extension).

    A relaxation's round in one op: ``improve(out, vxm(u, A, semiring, direction=direction),
    better)``, which it equals. Inside a loop recorded on the device, where out is the loop's
    state, of the product's dtype, ``better`` is what the semiring's add decides alone
    (``"<"`` for a min monoid, ``">"`` for a max one) and u is not out, the product tests and
    writes out as it runs: one kernel where the composition takes two, and a value that does
    not improve is never listed. NaN is treated as improve treats it: a NaN in out is never
    beaten, and t is the product's own fold (min and max drop NaN). Bellman-Ford's round is
    ``f = relax(d, f, A)``, delta-stepping's ``reduce(p, "min", out=low)``, then
    ``p = relax(d, p, A, window=low + width)``.

    Parameters
    ----------
    out : Vector
        Of size A.ncols, written in place.
    u : Vector
        Of size A.nrows: the values to relax from.
    A : Matrix
    semiring : Semiring or str, default ``"min_plus"``
    better : str or BinaryOp, default ``"<"``
        As for :func:`improve`.
    direction : as for :func:`vxm`
    also : Vector or None
        Of size A.ncols: its entries join the result, combined by the semiring's add where
        the result has one too, ``ewise_add(also, relax(out, u, A, ...), add)``; in a loop on
        the device the product writes them beside its own.
    window : Scalar, number or None
        A bucket of u (the semiring's add a min or max): only u's entries within it, u(i) <= t
        (``>=`` for max), are expanded, and the others join the result unchanged, as ``also``'s
        would: ``front, rest = split(u, "<=", window)``, then ``relax(out, front, A,
        also=rest)`` (with ``also``: ``ewise_add(also, rest)``). A Scalar may be ``s + c``
        (:class:`Scalar`). In a loop on the device, with u of the product's dtype and a
        Scalar window of that dtype, the product's own gather picks the entries within (the
        split costs no kernel, and a direction policy is told the bucket's size).
    hops : int, default 1
        How many edges deep one call may relax from u's entries (1 to 255). Where the
        product walks u's list itself (in a loop on the device, u of out's dtype, a matrix
        of small out-degrees, a push), a vertex whose value falls (inside the window, with one) is
        expanded in the same launch, up to ``hops`` edges from u, instead of joining the
        result for the next call. Out then holds values no worse than one hop's, and the
        result every vertex whose value fell and whose out-edges were not relaxed from that
        value: a loop to the fixed point ends with the same out in fewer rounds
        (Bellman-Ford's and delta-stepping's, by the hops). Elsewhere (the CPU, eager mode, a
        binned push, a pull) one hop, as ``hops=1``. Where a call goes deeper, which vertices
        its result holds depends on the threads' order; the loop's final out does not.

    Returns
    -------
    Vector
        The entries of out that changed, with the values written there (and ``also``'s, and
        the entries of u the window left).

    Raises
    ------
    DomainMismatch, DimensionMismatch
        As :func:`vxm` and :func:`improve` raise them.
    InvalidValue
        A ``window`` with an add other than min or max; ``hops`` not an integer from 1 to
        255.

    Examples
    --------
    >>> import gbla
    >>> A = gbla.Matrix.from_edges([0, 0, 1], [1, 2, 2], [4., 9., 2.], device="cpu")
    >>> d = gbla.Vector.from_coo([0, 2], [0., 20.], 3, device="cpu")
    >>> gbla.relax(d, d, A).to_coo()
    (array([1, 2]), array([4., 9.]))
    >>> d.to_coo()
    (array([0, 1, 2]), array([0., 4., 9.]))

    A window: vertex 0 (0 <= 5) is expanded, vertex 1 (10 > 5) waits, carried into the result:

    >>> B = gbla.Matrix.from_edges([0, 1], [2, 2], [9., 2.], device="cpu")
    >>> p = gbla.Vector.from_coo([0, 1], [0., 10.], 3, device="cpu")
    >>> d = gbla.Vector.from_coo([0, 1], [0., 10.], 3, device="cpu")
    >>> gbla.relax(d, p, B, window=5.0).to_coo()
    (array([1, 2]), array([10.,  9.]))
    """
    out, u = _vector(out, "out"), _vector(u, "u")
    A = _matrix(A, "A", partitioned=True)
    semiring = _semiring(semiring)
    V.dimension(u.size, A.nrows, "u.size", "A.nrows")
    V.dimension(out.size, A.ncols, "out.size", "A.ncols")
    if also is not None:
        also = _vector(also, "also")
        V.dimension(also.size, A.ncols, "also.size", "A.ncols")
        V.same_device({"out": out.device, "also": also.device})
    hops = V.integer(hops, "hops")
    if not 1 <= hops <= 255:
        raise V.invalid_value("hops", "be an integer from 1 to 255", hops)
    within = None
    if window is not None:
        within = _WITHIN.get(semiring.add.op.name)
        if within is None:
            raise V.invalid_value(
                "window", f"go with a min or max add, not {semiring.add.op.name}", window
            )
        V.dimension(u.size, A.ncols, "u.size", "A.ncols")  # u's entries join the result
    partitioned = getattr(A, "partitioned", False)  # its products run in its own engine
    V.same_device({"out": out.device, "u": u.device, **({} if partitioned else {"A": A.device})})
    loop = B.device_loop()
    if loop is not None and out.device == "gpu" and not partitioned:
        t_dtype = semiring.output_dtype(
            _product_dtype(semiring, A.dtype, u.dtype, "A.dtype and u.dtype")
        )
        op = _comparison(better, t_dtype, "better")
        o_values, o_present = out._dense()
        if (
            out._owned
            and out.dtype == t_dtype
            and semiring.add.idempotent
            and _RELAXES.get(semiring.add.op.name) == op.name
            and u._dense()[0].data.ptr != o_values.data.ptr  # u is read while out is written
        ):
            relaxation = _relaxation((o_values, o_present), u, also, window, within, t_dtype, hops)
            if relaxation is not None:
                t = _vxm(
                    u,
                    A,
                    semiring,
                    mask=None,
                    accum=None,
                    replace=False,
                    out=None,
                    direction=direction,
                    relaxation=relaxation,
                )
                out._written_in_place()
                if also is None or relaxation.also is not None:
                    return t
                return ewise_add(also, t, semiring.add.op)
    if window is not None:  # the bucket split off, the rest joining the result
        front, rest = split(u, within, window)
        also = rest if also is None else ewise_add(also, rest, semiring.add.op)
        return relax(out, front, A, semiring, better, direction=direction, also=also)
    changed = improve(out, vxm(u, A, semiring, direction=direction), better)
    return changed if also is None else ewise_add(also, changed, semiring.add.op)


def _relaxation(into, u, also, window, within, t_dtype, hops):
    """The :class:`_Relaxation` a device loop's product runs for :func:`relax`, or None where
    a window asks for what the product's own gather cannot do (then relax composes it)."""
    o_values = into[0]
    # also's entries written by the product beside its own: of its dtype, and not out's
    # values, which the product writes
    joined = None
    if also is not None and also.dtype == t_dtype:
        joined = also if also._dense()[0].data.ptr != o_values.data.ptr else None
    if u.dtype != t_dtype:  # what a deeper hop expands are out's values, read as u's
        hops = 1
    if window is None:
        return _Relaxation(into, joined, None, hops)
    # the window in the gather: u's entries carried as they are (of the product's dtype), no
    # other vector joining, and a Scalar of that dtype (s or s + c) the kernels read
    parts = window._split_shift() if isinstance(window, Scalar) else None
    kind = _spmv.window_kind(t_dtype, above=within == ">=")
    if (
        also is not None
        or kind is None
        or u.dtype != t_dtype
        or parts is None
        or window.dtype != t_dtype
        or window.device != "gpu"
    ):
        return None
    base, shift = parts
    return _Relaxation(into, None, (base._array, shift, kind), hops)


def scale(A: Matrix, v: Vector, op: _Op, *, side: str = "left") -> Matrix:
    """B = diag(v) (+).op A (``side="left"``: B(i, j) = op(v(i), A(i, j))) or A (+).op diag(v)
    (``side="right"``: B(i, j) = op(A(i, j), v(j))): the product with a diagonal matrix.

    Entries of A whose row (left) or column (right) has no entry in v are dropped, as in the
    product. Returns a new Matrix of op's result dtype.

    Parameters
    ----------
    A : Matrix
        Any shape; an iso A's values are True.
    v : Vector
        Size A.nrows (left) or A.ncols (right).
    op : BinaryOp, Monoid or str
        A binary op, a Monoid (its op) or a binary op name such as ``"times"``. It computes in
        ``numpy.result_type(A.dtype, v.dtype)``, which it must take.
    side : {'left', 'right'}, default 'left'

    Returns
    -------
    Matrix
        A new Matrix of A's shape and device and op's result dtype.

    Raises
    ------
    DimensionMismatch
        v.size is not A.nrows (left) or A.ncols (right).
    DomainMismatch
        ``A``, ``v`` or ``op`` of the wrong type, or a dtype op does not take.
    DeviceMismatch
        A and v are on different devices.
    UnknownName
        ``op`` is a name no binary op has.
    InvalidValue
        ``side`` is neither 'left' nor 'right'.

    Examples
    --------
    >>> import numpy as np, gbla
    >>> A = gbla.Matrix.from_edges([0, 1, 2], [1, 0, 0], [1., 2., 3.], device="cpu")
    >>> v = gbla.Vector.from_coo([0, 1], [10., 100.], 3, device="cpu")
    >>> gbla.scale(A, v, "times").to_scipy().toarray()
    array([[  0.,  10.,   0.],
           [200.,   0.,   0.],
           [  0.,   0.,   0.]])
    """
    A, v = _matrix(A, "A", partitioned=True), _vector(v, "v")
    V.one_of(side, ("left", "right"), "side")
    V.dimension(
        v.size,
        A.nrows if side == "left" else A.ncols,
        "v.size",
        "A.nrows" if side == "left" else "A.ncols",
    )
    op = _binary_op(op, "op")
    device = _device(A=A, v=v)
    values, present = v._dense()
    if getattr(A, "partitioned", False):  # v whole beside every part: each its own entries
        dtype = _op_dtype(op, A.dtype, v.dtype, "op")

        def combine(vv, a):
            x, y = (vv, a) if side == "left" else (a, vv)
            return _eval_binary(op, x, y, dtype, device)

        return A.scaled(values, present, combine, side)
    where = A._entry_rows() if side == "left" else A._indices
    a = A._values_or_ones()
    vv = values[where]
    dtype = _op_dtype(op, A.dtype, v.dtype, "op")
    x, y = (vv, a) if side == "left" else (a, vv)
    out = _eval_binary(op, x, y, dtype, device)
    if present is None:  # every entry stays: A's structure, new values
        return A._keep_entries(None, out, out.dtype)
    return A._keep_entries(present[where], out, out.dtype)
