"""The ranks as Dask tasks: one task per worker of a ``dask.distributed`` cluster, pinned to
it, each making its communicator through a rendezvous folder: NCCL on one GPU per worker (a
dask-cuda ``LocalCUDACluster``, as cuGraph sets up raft-dask), or local sockets between CPU
workers of one host. Dask is an optional extra (``pip install gbla[dask]``)."""

import shutil
import tempfile

from .. import _validation as V
from .launch import BACKENDS, connect

__all__ = ["run_dask"]


def run_dask(client, work, *, size=None, backend="nccl"):
    """Run ``work(comm)`` on ``size`` ranks (default: one per worker of ``client``'s cluster),
    a task each pinned to its worker; the results in rank order. Every rank's task must run at
    once, so ``size`` is at most the number of workers.

    Raises
    ------
    InvalidValue
        A ``size`` beyond the workers, or an unknown ``backend``.
    """
    V.one_of(backend, BACKENDS, "backend")
    workers = sorted(client.scheduler_info()["workers"])
    size = len(workers) if size is None else V.integer(size, "size")
    if not 1 <= size <= len(workers):
        raise V.invalid_value("size", f"be between 1 and the cluster's {len(workers)} workers",
                              size)
    folder = tempfile.mkdtemp(prefix="gbla-dask-")  # the workers share this host's disk
    try:
        futures = [client.submit(_rank, work, r, size, folder, backend, workers=[workers[r]],
                                 allow_other_workers=False, pure=False) for r in range(size)]
        return client.gather(futures)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _rank(work, rank, size, folder, backend):
    comm = connect(rank, size, folder, backend)
    try:
        return work(comm)
    finally:
        close = getattr(comm, "close", None)
        if close is not None:
            close()
