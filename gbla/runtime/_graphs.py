"""The CUDA driver's graph calls that a recorded loop needs, called through ctypes.

A WHILE node, capture into a given graph and the conditional handle are not in CuPy; they are
in cuda-bindings, whose import takes 45-80 ms on an H100 machine (a first call paid it:
issue 41), and in the driver itself, which CuPy has already loaded. These few calls go to the
driver directly: the same library, the same handles (a CuPy stream's ``ptr`` is a CUstream),
no import. :func:`driver` is None where the driver lacks them (before CUDA 12.4) or where a
WHILE node cannot be made; the recording then falls back to CuPy's graphs.
"""

import contextlib
import ctypes
import functools
import sys

__all__ = ["driver", "Driver"]

# cuda.h's values
_CAPTURE_RELAXED = 2  # CU_STREAM_CAPTURE_MODE_RELAXED
_NODE_CONDITIONAL = 13  # CU_GRAPH_NODE_TYPE_CONDITIONAL
_COND_IF, _COND_WHILE = 0, 1  # CU_GRAPH_COND_TYPE_IF, _WHILE
NODE_KINDS = {0: "kernels", 1: "copies", 2: "memsets"}  # CUgraphNodeType -> a count's name

_p = ctypes.c_void_p


class _Conditional(ctypes.Structure):  # CUDA_CONDITIONAL_NODE_PARAMS
    _fields_ = [
        ("handle", ctypes.c_uint64),
        ("type", ctypes.c_int),
        ("size", ctypes.c_uint),
        ("graphs_out", ctypes.POINTER(_p)),
        ("ctx", _p),
    ]


class _Union(ctypes.Union):
    _fields_ = [("reserved1", ctypes.c_longlong * 29), ("conditional", _Conditional)]


class _NodeParams(ctypes.Structure):  # CUgraphNodeParams: 256 bytes
    _fields_ = [
        ("type", ctypes.c_int),
        ("reserved0", ctypes.c_int * 3),
        ("u", _Union),
        ("reserved2", ctypes.c_longlong),
    ]


# name, argument types (every call returns a CUresult); the _v2 names are the forms with edge
# data, which CUDA 13's header makes the defaults
_CALLS = {
    "cuCtxGetCurrent": [ctypes.POINTER(_p)],
    "cuGetErrorName": [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
    "cuGraphCreate": [ctypes.POINTER(_p), ctypes.c_uint],
    "cuGraphDestroy": [_p],
    "cuGraphConditionalHandleCreate": [
        ctypes.POINTER(ctypes.c_uint64),
        _p,
        _p,
        ctypes.c_uint,
        ctypes.c_uint,
    ],
    "cuGraphAddNode_v2": [
        ctypes.POINTER(_p),
        _p,
        ctypes.POINTER(_p),
        _p,
        ctypes.c_size_t,
        ctypes.POINTER(_NodeParams),
    ],
    "cuGraphAddDependencies_v2": [_p, ctypes.POINTER(_p), ctypes.POINTER(_p), _p, ctypes.c_size_t],
    "cuGraphGetNodes": [_p, ctypes.POINTER(_p), ctypes.POINTER(ctypes.c_size_t)],
    "cuGraphNodeGetType": [_p, ctypes.POINTER(ctypes.c_int)],
    "cuStreamBeginCaptureToGraph": [_p, _p, ctypes.POINTER(_p), _p, ctypes.c_size_t, ctypes.c_int],
    "cuStreamEndCapture": [_p, ctypes.POINTER(_p)],
    "cuGraphInstantiateWithFlags": [ctypes.POINTER(_p), _p, ctypes.c_ulonglong],
    "cuGraphLaunch": [_p, _p],
    "cuGraphExecDestroy": [_p],
}


def _nodes_array(nodes):
    nodes = [int(n) for n in nodes]
    return (_p * max(1, len(nodes)))(*nodes), len(nodes)


class Driver:
    """The graph calls on one loaded driver library; each raises RuntimeError naming the call
    and the driver's error where the driver refuses."""

    def __init__(self, lib):
        self._f = {}
        for name, argtypes in _CALLS.items():
            f = getattr(lib, name)  # AttributeError: a driver without it
            f.argtypes, f.restype = argtypes, ctypes.c_int
            self._f[name] = f

    def _call(self, name, *args):
        err = self._f[name](*args)
        if err:
            text = ctypes.c_char_p()
            self._f["cuGetErrorName"](err, ctypes.byref(text))
            raise RuntimeError(f"CUDA: {name} failed: {(text.value or b'?').decode()} ({err})")

    def graph(self):
        """A new empty graph's handle."""
        out = _p()
        self._call("cuGraphCreate", ctypes.byref(out), 0)
        return out.value

    def destroy(self, graph):
        self._call("cuGraphDestroy", _p(graph))

    def conditional_handle(self, graph, default=None):
        """A conditional handle of ``graph`` on the current context; ``default``: the value
        it is given at every launch (CU_GRAPH_COND_ASSIGN_DEFAULT), None: only what a kernel
        sets (0 at first)."""
        ctx, out = _p(), ctypes.c_uint64()
        self._call("cuCtxGetCurrent", ctypes.byref(ctx))
        value, flags = (0, 0) if default is None else (int(default), 1)
        self._call(
            "cuGraphConditionalHandleCreate", ctypes.byref(out), _p(graph), ctx, value, flags
        )
        return out.value

    def add_while(self, graph, after, handle):
        """A WHILE node on ``handle`` behind the nodes ``after``: (node, its body graph)."""
        return self._add_conditional(graph, after, handle, _COND_WHILE)

    def add_if(self, graph, after, handle):
        """An IF node on ``handle`` behind the nodes ``after``: (node, its body graph)."""
        return self._add_conditional(graph, after, handle, _COND_IF)

    def _add_conditional(self, graph, after, handle, kind):
        params = _NodeParams()
        params.type = _NODE_CONDITIONAL
        cond = params.u.conditional
        cond.handle, cond.type, cond.size = handle, kind, 1
        ctx = _p()
        self._call("cuCtxGetCurrent", ctypes.byref(ctx))
        cond.ctx = ctx
        deps, count = _nodes_array(after)
        node = _p()
        self._call("cuGraphAddNode_v2", ctypes.byref(node), _p(graph), deps, None, count, params)
        return node.value, params.u.conditional.graphs_out[0]

    def add_dependencies(self, graph, sources, target):
        """Edges from each of ``sources`` to ``target``."""
        src, count = _nodes_array(sources)
        dst, _ = _nodes_array([target] * count)
        self._call("cuGraphAddDependencies_v2", _p(graph), src, dst, None, count)

    def nodes(self, graph):
        """The handles of the graph's nodes (its top level)."""
        count = ctypes.c_size_t(0)
        self._call("cuGraphGetNodes", _p(graph), None, ctypes.byref(count))
        if not count.value:
            return []
        out = (_p * count.value)()
        self._call("cuGraphGetNodes", _p(graph), out, ctypes.byref(count))
        return [int(out[i] or 0) for i in range(count.value)]

    def node_kind(self, node):
        """'kernels', 'copies', 'memsets' or 'other'."""
        kind = ctypes.c_int()
        self._call("cuGraphNodeGetType", _p(node), ctypes.byref(kind))
        return NODE_KINDS.get(kind.value, "other")

    def begin_capture(self, stream, graph, after=()):
        """Capture what ``stream`` is given from now into ``graph`` behind ``after``
        (relaxed mode: a module may load meanwhile)."""
        deps, count = _nodes_array(after)
        self._call(
            "cuStreamBeginCaptureToGraph",
            _p(stream),
            _p(graph),
            deps if count else None,
            None,
            count,
            _CAPTURE_RELAXED,
        )

    def end_capture(self, stream):
        out = _p()
        self._call("cuStreamEndCapture", _p(stream), ctypes.byref(out))

    def capture(self, stream, graph, record, *, after=(), then=None):
        """Capture what ``record`` enqueues on ``stream`` into ``graph``, behind the nodes
        ``after`` and, with ``then``, in front of that node; the capture always ends, so the
        stream is usable whatever ``record`` raised. Returns the nodes it added."""
        before = set(self.nodes(graph))
        self.begin_capture(stream, graph, after)
        try:
            record()
        except BaseException:
            with contextlib.suppress(RuntimeError):  # the error that ended it is the one to see
                self.end_capture(stream)
            raise
        self.end_capture(stream)
        added = [node for node in self.nodes(graph) if node not in before]
        if then is not None and added:
            self.add_dependencies(graph, added, then)
        return added

    def instantiate(self, graph):
        out = _p()
        self._call("cuGraphInstantiateWithFlags", ctypes.byref(out), _p(graph), 0)
        return out.value

    def launch(self, graph_exec, stream):
        self._call("cuGraphLaunch", _p(graph_exec), _p(stream))

    def destroy_exec(self, graph_exec):
        self._call("cuGraphExecDestroy", _p(graph_exec))


class GraphOwner:
    """What makes a CUDA graph (``_graph``) and its executable (``_exec``) and keeps them: both
    destroyed with it, through its :class:`Driver` ``rt`` (None until they are made)."""

    rt = None
    _graph = _exec = None

    def __del__(self):
        try:
            if self._exec is not None:
                self.rt.destroy_exec(self._exec)
            if self._graph is not None:
                self.rt.destroy(self._graph)
        except Exception:  # noqa: BLE001  (interpreter shutdown)
            pass


@functools.lru_cache(maxsize=None)
def driver():
    """The :class:`Driver` where CUDA graph WHILE nodes can be made here, else None (checked
    once: a graph with a conditional handle and a WHILE node is made and destroyed)."""
    try:
        lib = ctypes.CDLL("nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1")
        d = Driver(lib)
        graph = d.graph()
        try:
            d.add_while(graph, [], d.conditional_handle(graph))
        finally:
            d.destroy(graph)
        return d
    except Exception:  # noqa: BLE001  (no driver library, or one without conditional nodes)
        return None
