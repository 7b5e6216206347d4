"""Communicators: what the distributed products need from the ranks around them, and nothing
more: exchange arrays all-to-all (each rank sends a list, one array per rank), sum an integer
over the ranks, gather an array from every rank.

- :class:`SelfComm`: one rank (a communicator of one), any array module.
- :meth:`ThreadComm.group`: ``size`` ranks in one process, one thread each, exchanging through
  shared memory: the ranks of the CPU tests, or one thread per GPU of a host.
- :class:`NcclComm`: one rank per GPU through NCCL (CuPy's ``cupy.cuda.nccl``), grouped sends
  and receives, never through the host. NVLink multicast stays off (``NCCL_NVLS_ENABLE=0`` is
  set before the communicator is made).
"""

import os
import threading

import numpy as np

__all__ = ["SelfComm", "ThreadComm", "NcclComm"]


class SelfComm:
    """A communicator of one rank."""

    rank, size = 0, 1

    def __init__(self, xp=np):
        self.xp = xp

    def alltoallv(self, sends):
        return [sends[0]]

    def allreduce_sum(self, value):
        return int(value)

    def allgather(self, array):
        return [array]


class ThreadComm:
    """One rank of a group of threads in one process (see :meth:`group`)."""

    def __init__(self, rank, shared, xp):
        self.rank, self.size = rank, shared["size"]
        self._shared, self.xp = shared, xp

    @classmethod
    def group(cls, size, xp=np):
        """``size`` communicators, one for each thread that will run a rank."""
        shared = {"size": size, "barrier": threading.Barrier(size),
                  "slots": [None] * size}
        return [cls(r, shared, xp) for r in range(size)]

    def _exchange(self, item):
        """Every rank's ``item``, in rank order (two barriers: all written, all read)."""
        s = self._shared
        s["slots"][self.rank] = item
        s["barrier"].wait()
        items = list(s["slots"])
        s["barrier"].wait()
        return items

    def alltoallv(self, sends):
        if len(sends) != self.size:
            raise ValueError(f"sends must hold one array per rank ({self.size}); got "
                             f"{len(sends)}")
        everything = self._exchange(sends)
        return [everything[r][self.rank] for r in range(self.size)]

    def allreduce_sum(self, value):
        return int(sum(self._exchange(int(value))))

    def allgather(self, array):
        return self._exchange(array)


class NcclComm:
    """One rank of an NCCL communicator (one process or thread per GPU, the current CuPy
    device its GPU). ``unique_id``: from :meth:`unique_id` on rank 0, shared with the others
    by the launcher (or by Dask)."""

    def __init__(self, size, unique_id, rank):
        os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # no NVLink multicast objects, ever
        import cupy
        from cupy.cuda import nccl
        self.xp, self._nccl = cupy, nccl
        self.rank, self.size = rank, size
        self._comm = nccl.NcclCommunicator(size, unique_id, rank)

    @staticmethod
    def unique_id():
        os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
        from cupy.cuda import nccl
        return nccl.get_unique_id()

    def _type(self, dtype):
        nccl = self._nccl
        return {np.dtype(np.int8): nccl.NCCL_INT8, np.dtype(np.uint8): nccl.NCCL_UINT8,
                np.dtype(np.bool_): nccl.NCCL_UINT8, np.dtype(np.int32): nccl.NCCL_INT32,
                np.dtype(np.uint32): nccl.NCCL_UINT32, np.dtype(np.int64): nccl.NCCL_INT64,
                np.dtype(np.uint64): nccl.NCCL_UINT64, np.dtype(np.float16): nccl.NCCL_FLOAT16,
                np.dtype(np.float32): nccl.NCCL_FLOAT32,
                np.dtype(np.float64): nccl.NCCL_FLOAT64}[np.dtype(dtype)]

    def alltoallv(self, sends):
        cp, nccl = self.xp, self._nccl
        stream = cp.cuda.get_current_stream().ptr
        counts = cp.asarray([len(a) for a in sends], np.int64)
        got = cp.empty(self.size, np.int64)
        nccl.groupStart()  # the sizes first, one int64 each way
        for r in range(self.size):
            self._comm.send(counts[r:r + 1].data.ptr, 1, nccl.NCCL_INT64, r, stream)
            self._comm.recv(got[r:r + 1].data.ptr, 1, nccl.NCCL_INT64, r, stream)
        nccl.groupEnd()
        lengths = got.get().tolist()  # sync: the sizes to receive
        dtype = sends[0].dtype
        recvs = [cp.empty(k, dtype) for k in lengths]
        kind = self._type(dtype)
        nccl.groupStart()
        for r in range(self.size):
            if len(sends[r]):
                self._comm.send(sends[r].data.ptr, len(sends[r]), kind, r, stream)
            if lengths[r]:
                self._comm.recv(recvs[r].data.ptr, lengths[r], kind, r, stream)
        nccl.groupEnd()
        return recvs

    def allreduce_sum(self, value):
        cp, nccl = self.xp, self._nccl
        x = cp.asarray([int(value)], np.int64)
        self._comm.allReduce(x.data.ptr, x.data.ptr, 1, nccl.NCCL_INT64, nccl.NCCL_SUM,
                             cp.cuda.get_current_stream().ptr)
        return int(x.get()[0])  # sync: the sum

    def allgather(self, array):
        return self.alltoallv([array] * self.size)
