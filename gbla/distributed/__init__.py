"""Past one GPU: a matrix cut by rows over the ranks of a communicator (one per GPU), the push
product on it with frontiers exchanged all-to-all, and BFS and SSSP written with it.

- :mod:`.comm`: the communicators (one rank; threads in one process; NCCL between GPUs);
- :mod:`.matrix`: :class:`DistMatrix`, :class:`DistVector` and the distributed ``vxm``;
- :mod:`.build`: a DistMatrix's parts built from edge pieces in two passes (counted, then
  placed), no rank holding more than its part and a piece;
- :mod:`.traverse`: ``bfs`` and ``sssp`` over it;
- :mod:`.bitmap`: ``bitmap_bfs``, a direction-optimizing BFS with bitmap frontiers and
  hand-written kernels for each rank's work (also ``gbla.bfs(..., method="distributed_bitmap")``);
- :mod:`.relax`: ``push_sssp``, Bellman-Ford with hand-written kernels for each rank's
  relaxations, offers combined per target before they leave; its rounds (as the bitmap BFS's
  levels) in a CUDA graph where their messages fit a fixed size.

Run a rank per thread with :func:`run_threads` (several ranks in one process), or a process
per rank with ``python -m gbla.distributed.launch`` (:mod:`.launch`: NCCL between GPUs, or
local sockets between CPU processes), each process taking its communicator from
``launch.init()``.
"""

import threading

from .bitmap import bitmap_bfs  # (registers the method distributed_bitmap of gbla.bfs)
from .comm import Counted, NcclComm, SelfComm, ThreadComm
from .matrix import DistMatrix, DistVector, vxm
from .relax import push_sssp
from .traverse import bfs, sssp

__all__ = [
    "SelfComm",
    "ThreadComm",
    "NcclComm",
    "Counted",
    "DistMatrix",
    "DistVector",
    "vxm",
    "bfs",
    "sssp",
    "bitmap_bfs",
    "push_sssp",
    "run_threads",
]


def run_threads(size, work, xp=None):
    """Run ``work(comm)`` on ``size`` ranks, a thread each with its :class:`ThreadComm`; the
    results in rank order. An exception on any rank is raised here (the first by rank)."""
    import numpy as np

    comms = ThreadComm.group(size, np if xp is None else xp)
    results, errors = [None] * size, [None] * size

    def rank(r):
        try:
            results[r] = work(comms[r])
        except BaseException as e:  # reported to the caller below
            errors[r] = e
            comms[r]._shared["barrier"].abort()  # the other ranks stop waiting for this one

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first = next(
        (e for e in errors if e is not None and not isinstance(e, threading.BrokenBarrierError)),
        None,
    )
    if first is None:
        first = next((e for e in errors if e is not None), None)
    if first is not None:
        raise first
    return results
