"""gbla.iterate: a loop of ops, run on the device when its state lives there."""

import contextlib
import numbers

import numpy as np

from .. import _backend as B
from .. import _validation as V
from ..exceptions import CaptureError
from ..matrix import Matrix
from ..scalar import Scalar
from ..semirings import monoid_of
from ..vector import Vector
from . import capture, meter
from .capture import Recording
from .reduce import reduce_vector
from .workspace import LoopState, Workspace, conform

__all__ = ["iterate", "LoopState"]

MODES = ("auto", "device", "eager")


def iterate(
    body,
    state,
    *,
    while_nonempty,
    max_iterations=None,
    cache=None,
    key=None,
    mode="auto",
    stats=None,
    dense=None,
    keep=None,
    fuse=None,
    test_reduce=None,
):
    """Run ``body(s, iteration)`` while the vector ``s[while_nonempty]`` has an entry.

    This is gbla's non-blocking mode. On the GPU (``mode='auto'`` or ``'device'``) the body
    is run once to record its ops, and the loop then runs on the device: the first iteration
    runs for real (compiling what it needs), the second is captured into a CUDA graph whose
    WHILE node repeats it, testing the condition on the device before every iteration. No
    value goes back to the host until the loop ends, so an iteration costs what its kernels
    cost. On the CPU, or with ``mode='eager'``, the same body runs from Python, the condition
    read after each iteration: the reference, with identical results.

    What the body may do, because its ops are recorded once and replayed:

    - call ops (mxv, vxm, ewise_add, ewise_mult, apply, assign, assign_bits, select, scale)
      on the state, on matrices and on vectors it makes; rebind a state name to a new
      Vector of the same size (cast at the end of the iteration to the dtype the name
      started with, as GraphBLAS casts into a typed output), or write one in place
      (``out=``, :func:`~gbla.assign`, :func:`~gbla.assign_bits`);
    - use ``iteration`` (1 in the first iteration) only as an op's value: in device mode it
      is a device scalar, written by the loop between iterations;
    - never read a value back to the host: ``Vector.nvals``, :func:`~gbla.reduce` (without
      ``out=``), ``to_coo``, ``isequal``, ``print`` of a Vector, ``Scalar.value`` raise
      :class:`~gbla.CaptureError`; nor branch in Python on data (the branch taken while
      recording is the one replayed). A value one op computes for another goes through a
      :class:`~gbla.Scalar`: ``gbla.reduce(u, "min", out=s)``, then ``gbla.select(u, "<=", s)``.

    Every Python value the body reads besides ``s`` (matrices, semirings, constants) is frozen
    into the recording. With ``cache``, the recording is kept on that Matrix and reused by later
    calls with an equal ``key`` and the same state names, sizes and dtypes, so ``key`` must
    name every such value that can differ between calls; it is dropped with the matrix. Without
    ``cache`` it is dropped when the call returns.

    Parameters
    ----------
    body : callable
        ``body(s, iteration)``: ``s`` a :class:`LoopState` (``s.q`` or ``s["q"]``).
    state : dict of str to Vector
        The start state; the caller's vectors are not modified. All on one device.
    while_nonempty : str
        The state name whose vector decides: the loop runs while it has an entry, tested before
        every iteration.
    max_iterations : int or None
        At most this many iterations (0: none).
    cache : Matrix or None
        Keep the recording on this matrix, under ``key``.
    key : hashable
        What the recording depends on besides the state's shapes (used only with ``cache``).
    mode : {'auto', 'device', 'eager'}
        'auto': device mode when the state is on the GPU.
    stats : dict or None
        ``stats["iterations"]``: the iterations run; ``stats["mode"]``: 'device' or 'eager';
        in device mode ``stats["graph"]``: 'while' (a conditional WHILE node, one launch a
        run) or 'per-iteration' (where conditional nodes cannot be made: one launch and one
        read an iteration); with 'while', ``stats["body_nodes"]``: the graph nodes of one
        iteration by kind ('kernels', 'memsets', 'copies', 'other'), what an iteration costs;
        ``stats["fused"]``: whether one block runs the small iterations in one kernel (the
        fused block, where the iteration's kernels allow), then
        ``stats["fused_iterations"]`` (those it ran), else ``stats["not_fused"]`` (why not).
        In either mode ``stats["edges"]``: the edges the body's products (:func:`~gbla.vxm`,
        :func:`~gbla.mxv`) examined over the run, a push the out-edges of its input's entries,
        a pull every stored edge of the matrix it reads (an upper bound of what it touched,
        where a mask or the add's terminal value lets it skip rows or end one early); the
        same in both modes for the same directions (a direction policy may choose otherwise
        in device mode, whose fused block always pushes); absent where a product ran in a
        partitioned matrix's own engine. Counted where the products run: in device mode on
        the device, read with the loop's control words at its end (no read an iteration);
        a loop run inside this one's body counts here too.
    dense : dict of str to scalar, or None
        State names to return as dense arrays, each with its fill value where the vector has no
        entry: what ``out[name].to_dense(fill)`` would give, made on the device in one pass
        from the loop's buffers (no Vector copied first).
    keep : iterable of str, or None
        The state names to return (None: all); on the device, the others' buffers are not
        copied.
    fuse : bool or None
        Device mode: whether one block may run the loop's small iterations in one kernel (the
        fused block, ``stats["fused"]``); None: ``gbla.runtime.capture.FUSE`` (True). The
        block saves a BFS level's launches but lost to the graph's iteration for the
        relaxation rounds of :func:`~gbla.sssp` on an H200, which pass False
        (``benchmarks/results/ab/fused_block_bounds_h200.log``).
    test_reduce : (monoid, Scalar) or None
        The reduction of ``s[while_nonempty]`` with the monoid (a name or a Monoid, not
        'any') written into the Scalar (of that vector's dtype) before the first iteration and
        after each: the body starts with it, as if it began with ``gbla.reduce(s[...],
        monoid, out=scalar)``, and after the loop the Scalar holds the last state's. In device
        mode 'min' and 'max' cost no launch of their own: the store of the state at the end
        of an iteration writes it (another monoid, or a state the body wrote in place, takes
        a reduction's launch there). Delta-stepping's window, for instance, starts at the
        least pending distance. With ``cache``, the Scalar of the recording's first call is
        the one its body reads; a later call's is written too.

    Returns
    -------
    dict of str to Vector (or array)
        The final state (the names in ``keep``), new Vectors; new arrays for the names in
        ``dense``.

    Raises
    ------
    DomainMismatch
        ``body`` not callable, ``state`` not a dict of Vectors, ``cache`` not a Matrix,
        ``test_reduce`` naming a monoid that does not take the vector's dtype or something
        other than a Scalar that holds its own value.
    InvalidValue
        An empty ``state``, ``while_nonempty`` not one of its names, a bad ``max_iterations``,
        ``mode`` or ``fuse``, 'device' with the state on the CPU, an unhashable ``key``, a
        ``dense`` or ``keep`` naming something other than a state name, a fill value that is
        not a number, a ``test_reduce`` that is not a (monoid, Scalar) pair, names 'any', or
        names a Scalar of another dtype than the vector's.
    DeviceMismatch
        The state's vectors on different devices, or test_reduce's Scalar on another.
    UnknownName
        ``test_reduce`` naming no builtin monoid.
    CaptureError
        The body did what a recorded body cannot (above), or left a state name bound to
        something other than a Vector of its size (in either mode, so that a body which runs
        eagerly also runs on the device); the state passed in is untouched.

    Examples
    --------
    Breadth-first levels from vertex 0 of the path 0 -> 1 -> 2:

    >>> import gbla
    >>> A = gbla.Matrix.from_edges([0, 1], [1, 2], device="cpu")
    >>> q = gbla.Vector.from_coo([0], True, 3, device="cpu")
    >>> levels = gbla.assign(gbla.Vector.new(3, int, device="cpu"), 0, mask=q.S)
    >>> def level(s, depth):
    ...     s.q = gbla.vxm(s.q, A, "any_pair", mask=~s.levels.S)
    ...     gbla.assign(s.levels, depth, mask=s.q.S)
    >>> out = gbla.iterate(level, {"q": q, "levels": levels}, while_nonempty="q")
    >>> out["levels"].to_dense(-1)
    array([0, 1, 2])
    """
    if not callable(body):
        raise V.domain("body", "be callable as body(s, iteration)", type(body).__name__)
    if (
        not isinstance(state, dict)
        or not state
        or not all(isinstance(k, str) and isinstance(v, Vector) for k, v in state.items())
    ):
        if isinstance(state, dict) and not state:
            raise V.invalid_value("state", "name at least one Vector", state)
        raise V.domain("state", "be a dict of str to gbla.Vector", type(state).__name__)
    if not isinstance(while_nonempty, str) or while_nonempty not in state:
        raise V.invalid_value(
            "while_nonempty", f"be one of the state's names {sorted(state)}", while_nonempty
        )
    if max_iterations is not None:
        max_iterations = V.size(max_iterations, "max_iterations")
    V.one_of(mode, MODES, "mode")
    if fuse is not None and not isinstance(fuse, (bool, np.bool_)):
        raise V.invalid_value("fuse", "be True, False or None", fuse)
    if stats is not None and not isinstance(stats, dict):
        raise V.domain("stats", "be a dict or None", type(stats).__name__)
    V.same_device({name: v.device for name, v in state.items()})
    device = next(iter(state.values())).device
    if mode == "device" and device != "gpu":
        raise V.invalid_value("mode", "be 'auto' or 'eager' with the state on the CPU", mode)
    partitioned = getattr(cache, "partitioned", False)
    if cache is not None:
        if not isinstance(cache, Matrix) and not partitioned:
            raise V.domain("cache", "be a gbla.Matrix or None", type(cache).__name__)
        try:
            hash(key)
        except TypeError:
            raise V.invalid_value("key", "be hashable", key) from None
    dense = _dense_fills(dense, state)
    keep = _kept(keep, state)
    test_reduce = _test_reduce(test_reduce, state[while_nonempty], device)
    run_stats = {}
    if partitioned and mode == "device":
        raise V.invalid_value(
            "mode",
            f"be 'auto' or 'eager' with a {type(cache).__name__} (its "
            "products run in its own engine, talking to other ranks or "
            "planning transfers on the host: nothing to record)",
            mode,
        )
    # the products' work is counted only when asked for: an eager push may then sum degrees
    # it would not otherwise sum
    with meter.metering() if stats is not None else contextlib.nullcontext() as counted:
        if device == "gpu" and mode != "eager" and not partitioned:
            result = _device(
                body,
                state,
                while_nonempty,
                max_iterations,
                cache,
                key,
                run_stats,
                dense,
                keep,
                capture.FUSE if fuse is None else bool(fuse),
                test_reduce,
            )
        else:
            result = _eager(body, state, while_nonempty, max_iterations, run_stats, test_reduce)
            if keep is not None:
                result = {name: v for name, v in result.items() if name in keep}
            for name, fill in dense.items():
                if name in result:
                    result[name] = result[name].to_dense(fill)
    if stats is not None:
        if counted is not None and counted.edges is not None:
            run_stats["edges"] = counted.edges
        stats.update(run_stats)
    return result


def _dense_fills(dense, state):
    """``dense`` checked: a dict of state names to number fills ({} for None)."""
    if dense is None:
        return {}
    if not isinstance(dense, dict):
        raise V.domain(
            "dense", "be a dict of state names to fill values, or None", type(dense).__name__
        )
    for name, fill in dense.items():
        if name not in state:
            raise V.invalid_value("dense", f"name only the state's names {sorted(state)}", name)
        if not isinstance(fill, (numbers.Real, np.bool_)):
            raise V.invalid_value(f"dense[{name!r}]", "be a real number (the fill value)", fill)
    return dict(dense)


def _test_reduce(test_reduce, v, device):
    """``test_reduce`` checked: (Monoid, Scalar) or None."""
    if test_reduce is None:
        return None
    if not isinstance(test_reduce, tuple) or len(test_reduce) != 2:
        raise V.invalid_value("test_reduce", "be a (monoid, Scalar) pair or None", test_reduce)
    monoid, scalar = test_reduce
    monoid = monoid_of(monoid, "test_reduce[0]")
    if monoid.is_any:
        raise V.invalid_value("test_reduce[0]", "not be 'any' (its value is not defined)", "any")
    if v.dtype not in monoid.dtypes:
        raise V.domain(
            "test_reduce[0]",
            f"take the vector's dtype {v.dtype.name} (it takes {[d.name for d in monoid.dtypes]})",
            monoid.name,
        )
    if not isinstance(scalar, Scalar) or scalar._base is not None:
        raise V.domain(
            "test_reduce[1]", "be a gbla.Scalar that holds its own value", type(scalar).__name__
        )
    if scalar.dtype != v.dtype:
        raise V.invalid_value(
            "test_reduce[1].dtype", f"be the vector's dtype {v.dtype.name}", scalar.dtype.name
        )
    V.same_device({"state": device, "test_reduce[1]": scalar.device})
    return monoid, scalar


def _kept(keep, state):
    """``keep`` checked: a frozenset of state names, or None."""
    if keep is None:
        return None
    if isinstance(keep, str) or not hasattr(keep, "__iter__"):
        raise V.domain("keep", "be an iterable of state names, or None", type(keep).__name__)
    keep = frozenset(keep)
    for name in keep:
        if name not in state:
            raise V.invalid_value("keep", f"name only the state's names {sorted(state)}", name)
    return keep


def _eager(body, state, condition, max_iterations, stats, test_reduce=None):
    # The state gets arrays of its own, which ops may then write in place (a level of a
    # traversal costs its frontier, not a copy of every vector); the caller's stay untouched.
    s = LoopState({name: _own(v) for name, v in state.items()})
    signature = _signature(state)

    def reduced():  # test_reduce's value, before the first iteration and after each
        if test_reduce is not None:
            monoid, scalar = test_reduce
            scalar._set(reduce_vector(s[condition], monoid))

    done = 0
    reduced()
    while (max_iterations is None or done < max_iterations) and s[condition].nvals:  # sync
        done += 1
        body(s, done)
        try:  # what device mode does at the end of an iteration, so both modes agree
            s._replace(
                {name: conform(name, s[name], size, dtype) for name, size, dtype in signature}
            )
        except ValueError as e:
            raise CaptureError(str(e)) from None
        reduced()
    stats.update(iterations=done, mode="eager")
    out = {name: s[name] for name in s.keys()}
    for v in out.values():
        if isinstance(v, Vector):
            v._owned = False  # the caller's now: written as any vector is
    return out


def _own(v):
    """A copy of v with arrays of its own, marked as a loop's state: dense, so that ops may
    write it in place, unless it is a sparse CPU vector, whose ops then work at its entries
    (a pile of pending vertices rebound each iteration stays the size of the pile)."""
    if v.device == "cpu" and v._is_sparse:
        own = Vector._from_sparse_arrays(v._indices.copy(), v._values.copy(), v.size, "cpu")
        own._owned = True
        return own
    xp = B.xp_of(v.device)
    values, present = v._dense()
    present = xp.ones(v.size, bool) if present is None else present.copy()
    own = Vector._from_dense_arrays(values.copy(), present, v.device)
    own._owned = True
    return own


def _signature(state):
    return tuple((name, v.size, np.dtype(v.dtype)) for name, v in sorted(state.items()))


def _device(
    body, state, condition, max_iterations, cache, key, stats, dense, keep, fuse, test_reduce
):
    if B.device_loop() is not None:
        raise CaptureError(
            "gbla.iterate inside a loop body recorded on the device: a loop "
            "there would read its condition back to the host; run the outer "
            "loop with mode='eager'"
        )
    signature = _signature(state)
    recording = None
    reduced = None if test_reduce is None else (condition, test_reduce[0])
    slot = ("gbla.iterate", key, signature, condition, fuse, reduced)
    if cache is not None:
        recording = cache._cache.get(slot)
    if recording is None:
        alive = tuple(_contents(c) for c in (getattr(body, "__closure__", None) or ()))
        recording = Recording(body, Workspace(signature, reduced), condition, alive, fuse)
    if test_reduce is not None:  # the Scalar reads the workspace's value, which runs write
        test_reduce[1]._set(recording.workspace.reduced_out)
    result, done = recording.run(state, max_iterations, dense, keep)
    if cache is not None and recording.recorded:
        cache._cache[slot] = recording
    meter.examined(recording.workspace.edges())  # counted on the device, read at the run's end
    stats.update(iterations=done, mode="device")
    if recording.recorded:
        stats["graph"] = recording.graph_kind
        if recording.body_nodes is not None:
            stats["body_nodes"] = dict(recording.body_nodes)
        stats["fused"] = recording.fused is not None
        if recording.fused is not None:
            stats["fused_iterations"] = recording.workspace.fused_done()
        else:
            stats["not_fused"] = recording.not_fused or "not recorded with a WHILE node"
    return result


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # a cell not yet bound
        return None
