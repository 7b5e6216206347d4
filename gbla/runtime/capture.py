"""Recording a loop body on the device and replaying it.

A :class:`Recording` runs the first iteration unrecorded but device-resident (it compiles every
kernel and builds what ops cache on a matrix, such as a transpose), then captures one iteration
(the body's ops, the copy of the state into its entry buffers, and the loop's test) into the
body of a CUDA graph WHILE node, behind the run's start (the workspace's prologue: the start
block from pinned memory, the staged start vectors and their entry lists, the scratch reset)
and one test that decides whether to enter at all; the graph's last node copies the control
words into pinned memory. A run is then, on the caller's stream, one graph launch and one copy
of the results: no host round trip per iteration, no iteration past the end (the WHILE node
checks before each), and for a start state staged on the host (a search's source) no array
made and no kernel launched from Python before it. The first run, which records, runs its loop
again from the start in the graph.

Where the iteration's kernels are all of :mod:`gbla.kernels._fused`'s kind, one block runs the
small iterations in one kernel (fused.cu): it runs first, between the start and the WHILE node,
and again in the WHILE node's body behind the recorded iteration, going on while the next
iteration is small (a chain of dependent loads a step instead of a graph node a kernel), then
handing the loop to the graph. ``FUSE = False`` (before recording) records without it.

Memory the body allocates while it is captured comes from a pool private to the recording (its
blocks drawn from CuPy's default pool, so they show in its accounting): the graph holds those
addresses, and no one else is ever handed them. Everything goes back when the recording is
dropped. The graph calls go to the CUDA driver through ctypes (:mod:`._graphs`); where
conditional nodes are missing (a driver before 12.4), the iteration is captured with CuPy and
launched once per iteration, the test read each time.
"""

import contextlib

from .. import _backend as B
from ..exceptions import CaptureError, GblaError
from ..kernels import _fused, _launch, _loop
from . import _graphs
from .workspace import LoopState

__all__ = ["Recording", "conditional_graphs", "FUSE"]

# Whether recordings made from now on run their small iterations in one fused block.
FUSE = True


def conditional_graphs():
    """The driver's graph calls (:class:`._graphs.Driver`) where CUDA graph conditional nodes
    can be made here, else None."""
    return _graphs.driver()


class Recording(_graphs.GraphOwner):
    """One loop body recorded on the device, with the :class:`~.workspace.Workspace` it owns.

    ``keep``: what the body reads besides its state (closure values), held as long as the
    recording, so that no address the graph holds is ever freed before it. ``fuse``: whether
    one block may run its small iterations (None: :data:`FUSE`)."""

    def __init__(self, body, workspace, condition, keep, fuse=None):
        cp = B._cupy()
        self.body = body
        self.workspace = workspace
        self.condition = condition
        self.keep = keep
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.pool = cp.cuda.MemoryPool(cp.get_default_memory_pool().malloc)
        self.rt = conditional_graphs()
        self._cupy_graph = None
        self._body_recorded = False
        self.body_nodes = None  # {node kind: count} of one recorded iteration
        self.fuse = FUSE if fuse is None else fuse
        self.fused = None  # the Program one block runs, where the iteration fuses
        # else why not (a diagnostic)
        self.not_fused = None if self.fuse else "recorded with fuse=False"
        self._fused_args = None

    # ------------------------------------------------------------------ running
    def run(self, start, max_iterations, dense=None, keep=None):
        """Run the loop from ``start`` (a dict of Vectors); returns (final state as new Vectors,
        but dense arrays for the names in ``dense``, name to fill, and only the names in ``keep``
        where it is given: Workspace.results; iterations run)."""
        if self._exec is not None:
            return self._replay(start, max_iterations, dense, keep)
        cp = B._cupy()
        caller = cp.cuda.get_current_stream()
        self.stream.wait_event(caller.record())
        ws = self.workspace
        with self.stream:
            ws.stage(start, max_iterations)
            ws.prologue()
            if not self.recorded:
                if not self._first_iteration():
                    return self._finish(caller, dense, keep)
                self._record()
                if self._exec is not None:  # its graph runs the loop from the start
                    return self._replay(start, max_iterations, dense, keep)
            self._start_test()
            while int(ws.control[_loop.GO].get()):  # sync: no conditional nodes here
                self._cupy_graph.launch(self.stream)
        return self._finish(caller, dense, keep)

    def _replay(self, start, max_iterations, dense, keep):
        """A run of the recorded WHILE graph on the caller's stream: the start staged, one
        launch (whose last node copies the control words out), the results copied."""
        stream = B._cupy().cuda.get_current_stream()
        ws = self.workspace
        ws.stage(start, max_iterations)
        self.rt.launch(self._exec, stream.ptr)  # its last node copies the control words out
        results = ws.results(dense, keep)
        stream.synchronize()  # sync: the iterations run
        return results, ws.done()

    @property
    def recorded(self):
        return self._exec is not None or self._cupy_graph is not None

    def _finish(self, caller, dense, keep):
        ws = self.workspace
        with self.stream:
            results = ws.results(dense, keep)
            ws.read_control()
            self.stream.synchronize()  # sync: the iterations run
        caller.wait_event(self.stream.record())
        return results, ws.done()

    def _present(self):
        return self.workspace.buffers[self.condition][1]

    def _count(self):
        """The condition vector's entry-list count, where its buffers keep a list."""
        entries = self.workspace.lists.get(self.condition)
        return None if entries is None else entries[1]

    def _n(self):
        return self._present().size

    # ------------------------------------------------------------------ recording
    def _iteration(self, state, handle=None):
        """The body's ops, the state back into its entry buffers, the ops' outputs emptied for
        the next iteration, and the loop's test."""
        self.workspace.begin_iteration()
        self.body(state, self.workspace.iteration)
        try:
            self.workspace.store(state)
        except ValueError as e:
            raise CaptureError(str(e)) from None
        _loop.test(  # it also empties the ops' outputs, now stored where they are state
            self._present(),
            self._n(),
            self.workspace.control,
            counts=1,
            handle=handle,
            count=self._count(),
            sites=self.workspace.sites(),
        )

    def _start_test(self, handle=None):
        """The test before the first iteration (with ``handle``, setting the WHILE node's
        condition), and test_reduce's reduction of the start state (Workspace.reduced)."""
        ws = self.workspace
        _loop.test(
            self._present(), self._n(), ws.control, counts=0, handle=handle, count=self._count()
        )
        if ws.reduced is not None:
            ws.reduce_state()

    def _first_iteration(self):
        """Iteration 1, device-resident but unrecorded; False when the loop does not start."""
        ws = self.workspace
        self._start_test()
        if not int(ws.control[_loop.GO].get()):  # sync: does the loop start at all
            return False
        with _device_mode(self, "run on the device"):
            self._iteration(_state(ws))
        return True

    def _record(self):
        with (
            _device_mode(self, "be recorded on the device"),
            B._cupy().cuda.using_allocator(self.pool.malloc),
        ):
            if self.rt is not None:
                self._body_recorded = False
                try:
                    self._record_while()
                    return
                except Exception:
                    if self._body_recorded:  # the graph API works: the body is at fault
                        raise
                    # the driver refused the conditional node (another driver's rules):
                    # the iteration is replayed from the host instead, and stats say so
                    self.rt = None
            self._record_cupy(_state(self.workspace))

    @property
    def graph_kind(self):
        """'while' (one launch a run) or 'per-iteration' (one launch an iteration)."""
        return "while" if self._exec is not None else "per-iteration"

    def _record_while(self):
        rt, s = self.rt, self.stream.ptr
        graph = rt.graph()
        try:
            handle = rt.conditional_handle(graph)

            def start():  # the run's start, then the test whether to enter at all
                self.workspace.prologue()
                self._start_test(handle)

            rt.capture(s, graph, start)
            # the WHILE node follows every node of the start (the test, or test_reduce's
            # reduction, is the last of them)
            nodes = rt.nodes(graph)
            loop, body_graph = rt.add_while(graph, nodes, handle)
            self._body_recorded = True  # from here on a failure is the body's
            program = self._fusible(handle) if self.fuse else None

            def body():
                with _launch.collecting() as launches:
                    self._iteration(_state(self.workspace), handle)
                if program is None:
                    return
                try:
                    fused = _fused.Program(launches)  # the addresses of this capture
                except _fused.NotFusible as e:
                    self.not_fused = f"the second capture: {e}"
                    return
                if fused.source != program.source:  # not the iteration compiled: no block
                    self.not_fused = "the iteration changed between two captures"
                    return
                packed.append(fused.pack())
                self._fused_args = B._cupy().empty(len(packed[0]), "uint64")
                self.fused = fused
                fused.launch(self._fused_args, self.workspace.control)

            packed = []
            rt.capture(s, body_graph, body)
            if self.fused is not None:  # sync: the arguments copied, once a recording
                self._fused_args.set(packed[0])
                # the block also runs first, between the start and the loop: a search whose
                # first levels are thin (from one source) starts in it, not in the graph's
                # iteration; the test it runs sets the WHILE node's condition
                rt.capture(
                    s,
                    graph,
                    lambda: self.fused.launch(self._fused_args, self.workspace.control),
                    after=nodes,
                    then=loop,
                )
            # the graph's last node: the control words' copy into pinned memory
            rt.capture(s, graph, self.workspace.read_control, after=[loop])
            self.body_nodes = _node_counts(rt, body_graph)  # diagnostics: None if refused
            self._exec = rt.instantiate(graph)
            self._graph = graph
        except BaseException:
            rt.destroy(graph)
            raise

    def _fusible(self, handle):
        """The Program of one block for this iteration (compiled), or None (why: in
        :attr:`not_fused`): the iteration is captured once into a graph thrown away, its
        launches collected, and fuses only where they are every kernel node of that graph."""
        rt = self.rt
        scratch = rt.graph()
        try:
            with _launch.collecting() as launches:
                rt.capture(
                    self.stream.ptr,
                    scratch,
                    lambda: self._iteration(_state(self.workspace), handle),
                )
            nodes = _node_counts(rt, scratch)
        finally:
            rt.destroy(scratch)
        try:
            if nodes is None:
                raise _fused.NotFusible("the graph API did not count the iteration's nodes")
            others = {k: v for k, v in nodes.items() if k != "kernels" and v}
            if others or nodes["kernels"] != len(launches):
                raise _fused.NotFusible(
                    f"the iteration holds nodes besides the kernels it "
                    f"launched: {nodes}, {len(launches)} launches"
                )
            program = _fused.Program(launches)
        except _fused.NotFusible as e:
            self.not_fused = str(e)
            return None
        try:
            program.function()  # compiled now, not while the body is captured
        except Exception as e:  # noqa: BLE001  (the graph's iteration still runs the loop)
            self.not_fused = f"the fused block did not compile: {type(e).__name__}: {e}"
            return None
        return program

    def _record_cupy(self, state):
        self.stream.begin_capture()
        try:
            self._iteration(state)
        finally:
            graph = self.stream.end_capture()
        self._cupy_graph = graph


def _node_counts(rt, graph):
    """What one iteration costs in graph nodes: {'kernels': k, 'memsets': m, 'copies': c,
    'other': o} (an iteration's time is mostly a few microseconds a node), or None where the
    driver will not say: a count is a diagnostic, never a reason for a loop to fail."""
    try:
        counts = dict.fromkeys(("kernels", "memsets", "copies", "other"), 0)
        for node in rt.nodes(graph):
            counts[rt.node_kind(node)] += 1
        return counts
    except Exception:  # noqa: BLE001
        return None


@contextlib.contextmanager
def _device_mode(recording, what):
    """Ops take their device paths inside; an error that is not one of gbla's own (a CUDA
    error, a kernel that does not compile, an allocation that fails) becomes CaptureError."""
    B.set_device_loop(recording)
    try:
        yield
    except GblaError:
        raise
    except Exception as e:
        raise CaptureError(f"the loop body could not {what}: {type(e).__name__}: {e}") from e
    finally:
        B.set_device_loop(None)


def _state(workspace):
    return LoopState(workspace.vectors())
