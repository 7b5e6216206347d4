"""Graphs larger than the GPU's memory: the graph stays in host memory, cut into subgraphs by a
static 1D partition of its source vertices (:mod:`.partition`); each iteration of a traversal
a scheduler decides what crosses the bus (:mod:`.schedule`: the differential scheme of Song et
al., 2022, resident high-value subgraphs and compacted edges for the rest, the GraphCage-,
Subway- and EMOGI-like baselines, and CUDA managed memory with prefetch hints), and the
traversal expands its frontier from wherever the edges are (:mod:`.traverse`), keeping the
accounts: host-to-device bytes (and those moved back), transfers, the peak bytes held.

The schedule and the traversals run with NumPy as the "device" too, which is how the CPU tests
check them; on the GPU the device is CuPy. ``gbla.bfs`` and ``gbla.sssp`` run them (methods
``out_of_core_bfs`` and ``out_of_core_sssp``) when given a ``memory_budget``; the algebraic
methods take one too, running on a :class:`HostMatrix` (:mod:`.host_matrix`), whose products
stream the same way.
"""

from . import _methods  # noqa: E402,F401  (registers out_of_core_bfs and out_of_core_sssp)
from .host_matrix import HostMatrix
from .partition import DEFAULT_PART_BYTES, Partition, partition
from .schedule import STRATEGIES, Accounts, MemoryBudgetError, Scheduler, Step
from .traverse import HostGraph, bfs, sssp

__all__ = [
    "Partition",
    "partition",
    "DEFAULT_PART_BYTES",
    "STRATEGIES",
    "Scheduler",
    "Step",
    "Accounts",
    "MemoryBudgetError",
    "HostGraph",
    "HostMatrix",
    "bfs",
    "sssp",
]
