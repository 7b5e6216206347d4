"""The ranks as Dask tasks: one task per worker of a ``dask.distributed`` cluster, pinned to
it, each making its communicator through a rendezvous folder: NCCL on one GPU per worker (a
dask-cuda ``LocalCUDACluster``, as cuGraph sets up raft-dask), or local sockets between CPU
workers of one host. Dask is an optional extra (``pip install gbla[dask]``)."""

import os
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
        raise V.invalid_value(
            "size", f"be between 1 and the cluster's {len(workers)} workers", size
        )
    workers = workers[:size]
    devices = [None] * size
    if backend == "nccl":
        visible = client.run(_visible_gpus, workers=workers)
        devices = worker_gpus([visible[w] for w in workers])
    folder = tempfile.mkdtemp(prefix="gbla-dask-")  # the workers share this host's disk
    try:
        futures = [
            client.submit(
                _rank,
                work,
                r,
                size,
                folder,
                backend,
                devices[r],
                workers=[workers[r]],
                allow_other_workers=False,
                pure=False,
            )
            for r in range(size)
        ]
        return client.gather(futures)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def worker_gpus(visible):
    """The GPU each rank's worker uses, from each worker's ``CUDA_VISIBLE_DEVICES`` (None where
    unset): dask-cuda's ``LocalCUDACluster`` lists each worker's own GPU first (its device 0),
    so where the workers' first entries are all set and all differ, each uses its device 0;
    otherwise the workers see the same GPUs, and rank r uses device r."""
    firsts = [v.split(",")[0].strip() if v else None for v in visible]
    if None not in firsts and len(set(firsts)) == len(firsts):
        return [0] * len(visible)
    return list(range(len(visible)))


def _visible_gpus():
    return os.environ.get("CUDA_VISIBLE_DEVICES")


def _rank(work, rank, size, folder, backend, device):
    comm = connect(rank, size, folder, backend, device=device)
    try:
        return work(comm)
    finally:
        close = getattr(comm, "close", None)
        if close is not None:
            close()
