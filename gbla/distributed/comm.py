"""Communicators: what the distributed products need from the ranks around them, and nothing
more: exchange arrays all-to-all (each rank sends a list, one array per rank), sum integers
over the ranks (one or several in one collective: ``allreduce_sum`` / ``allreduce_sums``),
gather an array from every rank.

- :class:`SelfComm`: one rank (a communicator of one), any array module.
- :meth:`ThreadComm.group`: ``size`` ranks in one process, one thread each, exchanging through
  shared memory: the ranks of the CPU tests, or one thread per GPU of a host.
- :class:`NcclComm`: one rank per GPU through NCCL (CuPy's ``cupy.cuda.nccl``), grouped sends
  and receives, never through the host. NVLink multicast stays off (``NCCL_NVLS_ENABLE=0`` is
  set before the communicator is made).
- :class:`Counted`: any of them, counting what its rank sends (the communication volume a
  traversal reports per level).

The values ``allreduce_sums`` sums may be a list of integers or an array of them; NCCL sums a
device array where it lies (one copy back to the host, of the sums).

NCCL's and a device :class:`SelfComm`'s ``capturable`` is True: a CUDA graph can hold what
they do (the bitmap BFS's level loop on the device). One rank exchanges and sums nothing; over
several, NCCL's ``exchange`` and ``sum_into`` only enqueue work on the current stream, into
arrays the caller made, nothing read back.
NCCL's graph mixing stays off (``NCCL_GRAPH_MIXING_SUPPORT=0`` unless set) so that its
collectives may sit in a graph's conditional nodes.
"""

import os
import threading

import numpy as np

__all__ = ["SelfComm", "ThreadComm", "NcclComm", "Counted"]


def _ints(values):
    """Integers as a list: a sequence of them, or an array (a device array read back in one
    copy, not one read a value)."""
    get = getattr(values, "get", None)  # a CuPy array's copy to the host
    return [int(v) for v in (get() if callable(get) else values)]


def _checked(got, lengths):
    """``got`` (what each rank sent this one), refused where a caller's ``lengths`` said
    otherwise: NCCL would receive that many elements, so a wrong length must fail on every
    communicator, not only where it would corrupt or hang."""
    if lengths is not None and [len(g) for g in got] != [int(k) for k in lengths]:
        raise ValueError(
            f"lengths must be what each rank sends: {list(map(int, lengths))} given, "
            f"{[len(g) for g in got]} sent"
        )
    return got


class SelfComm:
    """A communicator of one rank."""

    rank, size = 0, 1

    def __init__(self, xp=np):
        self.xp = xp
        self.capturable = xp is not np

    def alltoallv(self, sends, lengths=None):
        return _checked([sends[0]], lengths)

    def allreduce_sum(self, value):
        return int(value)

    def allreduce_sums(self, values):
        return _ints(values)

    def allgather(self, array, lengths=None):
        return _checked([array], lengths)


class _Barrier:
    """threading.Barrier's wait and abort, except that a thread the barrier has released never
    raises: abort() breaks only the waits not yet complete (threading.Barrier's also breaks
    those still waking up, so a rank failing just after a collective made the others fail at
    its end)."""

    def __init__(self, parties):
        self.parties, self.count, self.generation = parties, 0, 0
        self.broken = False
        self.cond = threading.Condition()

    def wait(self):
        with self.cond:
            if self.broken:
                raise threading.BrokenBarrierError
            generation = self.generation
            self.count += 1
            if self.count == self.parties:
                self.count, self.generation = 0, generation + 1
                self.cond.notify_all()
                return
            while generation == self.generation and not self.broken:
                self.cond.wait()
            if generation == self.generation:  # broken before every party arrived
                raise threading.BrokenBarrierError

    def abort(self):
        with self.cond:
            self.broken = True
            self.cond.notify_all()


class ThreadComm:
    """One rank of a group of threads in one process (see :meth:`group`)."""

    def __init__(self, rank, shared, xp):
        self.rank, self.size = rank, shared["size"]
        self._shared, self.xp = shared, xp

    @classmethod
    def group(cls, size, xp=np):
        """``size`` communicators, one for each thread that will run a rank."""
        shared = {"size": size, "barrier": _Barrier(size), "slots": [None] * size}
        return [cls(r, shared, xp) for r in range(size)]

    def _exchange(self, item, take=list):
        """Every rank's ``item``, in rank order, as ``take`` makes them this rank's (two
        barriers: all shown, all taken). On GPU ranks the threads' current streams need not be
        one: each thread's is synchronized before it shows its item (no rank reads an array
        still being written) and after it took the others' (:meth:`_own`'s copies made before
        their owners go on to reuse or free them)."""
        s = self._shared
        self._drain()
        s["slots"][self.rank] = item
        s["barrier"].wait()
        items = take(list(s["slots"]))
        self._drain()
        s["barrier"].wait()
        return items

    def _drain(self):
        if self.xp is not np:
            self.xp.cuda.get_current_stream().synchronize()

    def _own(self, arrays):
        """This rank's copies of other ranks' device arrays (NumPy's: as they are)."""
        return arrays if self.xp is np else [a.copy() for a in arrays]

    def alltoallv(self, sends, lengths=None):
        if len(sends) != self.size:
            raise ValueError(f"sends must hold one array per rank ({self.size}); got {len(sends)}")
        mine = self._exchange(
            sends,
            lambda everything: self._own([everything[r][self.rank] for r in range(self.size)]),
        )
        return _checked(mine, lengths)

    def allreduce_sum(self, value):
        return int(sum(self._exchange(int(value))))

    def allreduce_sums(self, values):
        return [int(sum(column)) for column in zip(*self._exchange(_ints(values)))]

    def allgather(self, array, lengths=None):
        return _checked(self._exchange(array, self._own), lengths)


class NcclComm:
    """One rank of an NCCL communicator (one process or thread per GPU, the current CuPy
    device its GPU). ``unique_id``: from :meth:`unique_id` on rank 0, shared with the others
    by the launcher (or by Dask)."""

    capturable = True

    def __init__(self, size, unique_id, rank):
        _environment()
        import cupy
        from cupy.cuda import nccl

        self.xp, self._nccl = cupy, nccl
        self.rank, self.size = rank, size
        self._comm = nccl.NcclCommunicator(size, unique_id, rank)

    @staticmethod
    def unique_id():
        _environment()
        from cupy.cuda import nccl

        return nccl.get_unique_id()

    def _type(self, dtype):
        nccl = self._nccl
        return {
            np.dtype(np.int8): nccl.NCCL_INT8,
            np.dtype(np.uint8): nccl.NCCL_UINT8,
            np.dtype(np.bool_): nccl.NCCL_UINT8,
            np.dtype(np.int32): nccl.NCCL_INT32,
            np.dtype(np.uint32): nccl.NCCL_UINT32,
            np.dtype(np.int64): nccl.NCCL_INT64,
            np.dtype(np.uint64): nccl.NCCL_UINT64,
            np.dtype(np.float16): nccl.NCCL_FLOAT16,
            np.dtype(np.float32): nccl.NCCL_FLOAT32,
            np.dtype(np.float64): nccl.NCCL_FLOAT64,
        }[np.dtype(dtype)]

    def alltoallv(self, sends, lengths=None):
        """sends[r] to rank r, got[r] from it. ``lengths`` (what each rank sends this one, when
        the caller knows) spares the exchange of the sizes and its wait. One rank keeps its own
        array (no NCCL call), as SelfComm and ThreadComm hand it back."""
        if self.size == 1:
            return _checked([sends[0]], lengths)
        cp, nccl = self.xp, self._nccl
        stream = cp.cuda.get_current_stream().ptr
        if lengths is None:
            counts = cp.asarray([len(a) for a in sends], np.int64)
            got = cp.empty(self.size, np.int64)
            nccl.groupStart()  # the sizes first, one int64 each way
            for r in range(self.size):
                self._comm.send(counts[r : r + 1].data.ptr, 1, nccl.NCCL_INT64, r, stream)
                self._comm.recv(got[r : r + 1].data.ptr, 1, nccl.NCCL_INT64, r, stream)
            nccl.groupEnd()
            lengths = got.get().tolist()  # sync: the sizes to receive
        dtype = sends[0].dtype
        recvs = [cp.empty(int(k), dtype) for k in lengths]
        kind = self._type(dtype)
        nccl.groupStart()
        for r in range(self.size):
            if len(sends[r]):
                self._comm.send(sends[r].data.ptr, len(sends[r]), kind, r, stream)
            if lengths[r]:
                self._comm.recv(recvs[r].data.ptr, int(lengths[r]), kind, r, stream)
        nccl.groupEnd()
        return recvs

    def allreduce_sum(self, value):
        return self.allreduce_sums([value])[0]

    def allreduce_sums(self, values):
        """The sums over the ranks of ``values``: integers, or a device array of them, which
        is summed where it is (no copy to the host and back before the collective)."""
        if self.size == 1:
            return _ints(values)
        cp, nccl = self.xp, self._nccl
        if isinstance(values, cp.ndarray):  # summed out of place: the caller's stays as it is
            source = values
        else:
            source = cp.asarray([int(v) for v in values], np.int64)
        x = cp.empty_like(source)
        self._comm.allReduce(
            source.data.ptr,
            x.data.ptr,
            len(x),
            self._type(x.dtype),
            nccl.NCCL_SUM,
            cp.cuda.get_current_stream().ptr,
        )
        return [int(v) for v in x.get()]  # sync: the sums

    def exchange(self, sends, recvs):
        """sends[r] (a sequence of arrays) to rank r, recvs[r] (as many arrays, each the length
        of rank r's) from it, in one group of sends and receives on the current stream: nothing
        allocated, nothing read back (a CUDA graph may capture it)."""
        cp, nccl = self.xp, self._nccl
        stream = cp.cuda.get_current_stream().ptr
        nccl.groupStart()
        for r in range(self.size):
            for a in sends[r]:
                self._comm.send(a.data.ptr, len(a), self._type(a.dtype), r, stream)
            for b in recvs[r]:
                self._comm.recv(b.data.ptr, len(b), self._type(b.dtype), r, stream)
        nccl.groupEnd()

    def sum_into(self, array):
        """``array`` (a device array) summed over the ranks where it lies, enqueued on the
        current stream (a CUDA graph may capture it)."""
        self._comm.allReduce(
            array.data.ptr,
            array.data.ptr,
            len(array),
            self._type(array.dtype),
            self._nccl.NCCL_SUM,
            self.xp.cuda.get_current_stream().ptr,
        )

    def allgather(self, array, lengths=None):
        return self.alltoallv([array] * self.size, lengths)


def _environment():
    """NCCL's settings, before its first call: no NVLink multicast objects, ever; no support
    for mixing graphs with calls outside them on parallel streams (which puts event nodes in a
    captured collective, and those a conditional node's body refuses), unless set."""
    os.environ["NCCL_NVLS_ENABLE"] = "0"
    os.environ.setdefault("NCCL_GRAPH_MIXING_SUPPORT", "0")


def _nbytes(array):
    return int(array.nbytes)


class Counted:
    """A communicator that counts what its rank sends: ``bytes_sent``, the payload bytes it
    hands to other ranks (all-to-all: the arrays for the others; all-gather: its array once per
    other rank; sums: 8 bytes a value per other rank, the flat algorithm's volume), and
    ``collectives``, the collective calls (each one a latency on a real network). Sizes NCCL
    exchanges before a payload (8 bytes a peer) are not payload and not counted. Every other
    attribute is the wrapped communicator's."""

    def __init__(self, comm):
        self.comm = comm
        self.bytes_sent = 0
        self.collectives = 0

    @classmethod
    def of(cls, comm):
        """``comm`` counted (itself when it already is)."""
        return comm if isinstance(comm, Counted) else cls(comm)

    def __getattr__(self, name):  # rank, size, xp, and whatever else the communicator has
        return getattr(self.comm, name)

    def alltoallv(self, sends, lengths=None):
        self.collectives += 1
        self.bytes_sent += sum(_nbytes(a) for r, a in enumerate(sends) if r != self.comm.rank)
        return self.comm.alltoallv(sends, lengths)

    def allgather(self, array, lengths=None):
        self.collectives += 1
        self.bytes_sent += _nbytes(array) * (self.comm.size - 1)
        return self.comm.allgather(array, lengths)

    def allreduce_sum(self, value):
        self.collectives += 1
        self.bytes_sent += 8 * (self.comm.size - 1)
        return self.comm.allreduce_sum(value)

    def allreduce_sums(self, values):
        self.collectives += 1
        self.bytes_sent += 8 * len(values) * (self.comm.size - 1)
        return self.comm.allreduce_sums(values)
