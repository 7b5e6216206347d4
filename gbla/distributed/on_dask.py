"""The ranks as Dask tasks: one task per worker of a ``dask.distributed`` cluster, pinned to
it, each making its communicator through a rendezvous that travels through the scheduler
(Dask Variables): NCCL on one GPU per worker (dask-cuda workers, as cuGraph sets up
raft-dask), or sockets between CPU workers. Nothing is shared but the scheduler, so the
workers may be on several hosts: rank 0's NCCL unique id (or each rank's socket address)
goes through it, and the ranks' data then moves over NCCL's own transports (or the sockets),
never through Dask. Dask is an optional extra (``pip install gbla[dask]``)."""

import os
import uuid

from .. import _validation as V
from .launch import BACKENDS, connect

__all__ = ["run_dask", "DaskRendezvous"]


class DaskRendezvous:
    """Where one run's ranks meet, inside Dask tasks: a published value is a Dask Variable
    named after the run and the key, held by the scheduler; sockets listen on the address the
    task's worker serves Dask on, so that workers of other hosts reach them."""

    def __init__(self, run):
        from distributed import get_worker
        from distributed.comm import get_address_host

        self.run = run
        self.host = get_address_host(get_worker().address)

    def publish(self, key, value):
        """Make ``value`` (bytes) readable by every rank of the run under ``key``."""
        from distributed import Variable

        Variable(f"{self.run}-{key}").set(value)

    def lookup(self, key, timeout):
        """The bytes published under ``key``, waiting up to ``timeout`` seconds for them."""
        from distributed import Variable

        return Variable(f"{self.run}-{key}").get(timeout=timeout)


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
    run = f"gbla-{uuid.uuid4().hex}"  # this run's variables, apart from any other run's
    try:
        futures = [
            client.submit(
                _rank,
                work,
                r,
                size,
                run,
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
        keys = ["nccl_id"] if backend == "nccl" else [f"port_{r}" for r in range(size)]
        # deleted on the scheduler before returning: Variable.delete only queues the deletion
        client.run_on_scheduler(_forget_variables, [f"{run}-{key}" for key in keys])


async def _forget_variables(names, dask_scheduler=None):
    variables = dask_scheduler.extensions["variables"]
    for name in names:
        await variables.delete(name=name)


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


def _rank(work, rank, size, run, backend, device):
    comm = connect(rank, size, DaskRendezvous(run), backend, device=device)
    try:
        return work(comm)
    finally:
        close = getattr(comm, "close", None)
        if close is not None:
            close()
