"""One process per rank, started the way users of NCCL expect:

    python -m gbla.distributed.launch -n 2 [--backend nccl|socket] script.py [args ...]

starts ``n`` copies of the script, each with ``GBLA_RANK``, ``GBLA_WORLD_SIZE``, a rendezvous
folder (``GBLA_RENDEZVOUS``) and ``NCCL_NVLS_ENABLE=0``; inside, :func:`init` gives the rank's
communicator: an :class:`~.comm.NcclComm` on GPU ``rank`` (rank 0's unique id passed through
the folder), or a :class:`SocketComm` between processes on the CPU (pickled arrays over
sockets, for machines without NCCL and for the tests). :func:`connect` takes the folder, or any
rendezvous with ``publish``, ``lookup`` and ``host`` (gbla.distributed.on_dask passes one that
travels through the Dask scheduler, so that ranks on several hosts meet). The launcher's exit
status is that of the first rank to fail (0 when none does); once a rank fails, the others are
ended soon after (one left waiting in a collective for it would never return).
"""

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Client, Listener
from pathlib import Path

import numpy as np

from .comm import _checked

__all__ = ["init", "connect", "SocketComm", "FolderRendezvous", "main"]

BACKENDS = ("nccl", "socket")


class FolderRendezvous:
    """Where the ranks of one host meet: a folder every rank sees, a file a published value
    (written whole, then renamed into place); sockets on the loopback address."""

    host = "127.0.0.1"

    def __init__(self, folder):
        self.folder = Path(folder)

    def publish(self, key, value):
        """Make ``value`` (bytes) readable by every rank under ``key``."""
        (self.folder / f"{key}.tmp").write_bytes(value)
        os.replace(self.folder / f"{key}.tmp", self.folder / key)

    def lookup(self, key, timeout):
        """The bytes published under ``key``, waiting up to ``timeout`` seconds for them."""
        return _wait_for(self.folder / key, timeout)


class SocketComm:
    """One rank of a group of processes, a socket to every other rank: each listens on the
    rendezvous's host and publishes its address there."""

    xp = np

    def __init__(self, rank, size, rendezvous, timeout=60.0):
        self.rank, self.size = rank, size
        if not hasattr(rendezvous, "publish"):
            rendezvous = FolderRendezvous(rendezvous)
        listener = Listener((rendezvous.host, 0), authkey=b"gbla")
        host, port = listener.address
        rendezvous.publish(f"port_{rank}", f"{host}:{port}".encode())
        self._peers = {}
        for r in range(rank):  # connect to the lower ranks, accept the higher
            host, _, port = rendezvous.lookup(f"port_{r}", timeout).decode().rpartition(":")
            conn = Client((host, int(port)), authkey=b"gbla")
            conn.send(rank)
            self._peers[r] = conn
        for _ in range(rank + 1, size):
            conn = listener.accept()
            self._peers[conn.recv()] = conn
        listener.close()

    def alltoallv(self, sends, lengths=None):
        if len(sends) != self.size:
            raise ValueError(f"sends must hold one array per rank ({self.size}); got {len(sends)}")
        # sends on threads, so that two ranks sending large arrays to each other never wait
        # on each other's receive
        threads = [
            threading.Thread(
                target=self._peers[r].send_bytes, args=(pickle.dumps(np.asarray(sends[r])),)
            )
            for r in self._peers
        ]
        for t in threads:
            t.start()
        got = [None] * self.size
        got[self.rank] = np.asarray(sends[self.rank])
        for r, conn in self._peers.items():
            got[r] = pickle.loads(conn.recv_bytes())
        for t in threads:
            t.join()
        return _checked(got, lengths)

    def allreduce_sum(self, value):
        return self.allreduce_sums([value])[0]

    def allreduce_sums(self, values):
        mine = np.array([int(v) for v in values], np.int64)
        return [int(v) for v in np.sum(self.alltoallv([mine] * self.size), axis=0)]

    def allgather(self, array, lengths=None):
        return self.alltoallv([array] * self.size, lengths)

    def close(self):
        for conn in self._peers.values():
            conn.close()


def _wait_for(path, timeout):
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no rank wrote {path.name} within {timeout} s")
        time.sleep(0.01)
    return path.read_bytes()


def init(timeout=60.0):
    """This process's communicator, from the launcher's environment."""
    return connect(
        int(os.environ["GBLA_RANK"]),
        int(os.environ["GBLA_WORLD_SIZE"]),
        os.environ["GBLA_RENDEZVOUS"],
        os.environ.get("GBLA_BACKEND", "socket"),
        timeout,
    )


def connect(rank, size, rendezvous, backend, timeout=60.0, device=None):
    """Rank ``rank`` of ``size``'s communicator, meeting the others through ``rendezvous``: a
    folder every rank sees (a :class:`FolderRendezvous`), or an object with ``publish(key,
    bytes)``, ``lookup(key, timeout)`` and ``host`` (the address this rank's socket listens
    on). A SocketComm (``backend`` 'socket'), or an NcclComm on GPU ``device`` of those this
    process sees (default: GPU ``rank``), rank 0's unique id published for the others."""
    if not hasattr(rendezvous, "publish"):
        rendezvous = FolderRendezvous(rendezvous)
    if backend == "socket":
        return SocketComm(rank, size, rendezvous, timeout)
    import cupy

    from .comm import NcclComm

    cupy.cuda.Device(rank if device is None else device).use()
    if rank == 0:
        unique_id = pickle.dumps(NcclComm.unique_id())
        rendezvous.publish("nccl_id", unique_id)
    else:
        unique_id = rendezvous.lookup("nccl_id", timeout)
    return NcclComm(size, pickle.loads(unique_id), rank)


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m gbla.distributed.launch", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("-n", "--nprocs", type=int, required=True, help="ranks (processes)")
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="nccl",
        help="nccl (a GPU per rank) or socket (CPU processes)",
    )
    p.add_argument("script", help="the Python script each rank runs")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    args = p.parse_args(argv)
    if args.nprocs < 1:
        p.error(f"-n must be a positive integer; got {args.nprocs}")
    with tempfile.TemporaryDirectory(prefix="gbla-rendezvous-") as folder:
        procs = []
        for rank in range(args.nprocs):
            env = dict(
                os.environ,
                GBLA_RANK=str(rank),
                GBLA_WORLD_SIZE=str(args.nprocs),
                GBLA_RENDEZVOUS=folder,
                GBLA_BACKEND=args.backend,
                NCCL_NVLS_ENABLE="0",
            )
            procs.append(subprocess.Popen([sys.executable, args.script, *args.args], env=env))
        return _wait_all(procs)


def _wait_all(procs, grace=10.0):
    """0 when every rank succeeds, else the exit status of the first rank to fail. Once one
    fails, the others get ``grace`` seconds to end on their own, then are terminated: a rank
    waiting in a collective for a dead one would wait forever (NCCL has no timeout)."""
    first, failed_at = 0, None
    while True:
        codes = [proc.poll() for proc in procs]
        if failed_at is None:
            first = next((c for c in codes if c), 0)
            if first:
                failed_at = time.monotonic()
        if all(c is not None for c in codes):
            return first
        if failed_at is not None and time.monotonic() - failed_at > grace:
            for proc in procs:
                if proc.poll() is None:
                    proc.terminate()
            for proc in procs:
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            return first
        time.sleep(0.05)


if __name__ == "__main__":
    sys.exit(main())
