"""The Python side of frontier.cuh, for every traversal kernel: int32 views of a matrix, and the
double-buffered, degree-binned frontier with its rotating counter slots."""

import re

import numpy as np

from .._backend import _cupy
from . import _launch

__all__ = ["SMALL", "LARGE", "SLOT", "int32_csr", "int32_rows", "BinnedFrontier"]


def _define(name, file="frontier.cuh"):
    """A #define of a kernel file (frontier.cuh by default): the file is the one source of
    the constants the Python side shares with it."""
    match = re.search(rf"^#define {name} (\d+)\b", _launch.source(file), re.M)
    return int(match.group(1))


SMALL, LARGE, SLOT = _define("GBLA_SMALL"), _define("GBLA_LARGE"), _define("GBLA_SLOT")
EDGES = 3  # slot field: the frontier's out-edges (the bin sizes are fields 0..2)


def int32_csr(A):
    """A's CSR arrays as int32 (methods with int32 ids admit only matrices whose ids fit),
    converted once and cached when the matrix stores int64."""
    if A._indptr.dtype == np.int32:
        return A._indptr, A._indices
    if "int32_csr" not in A._cache:
        A._cache["int32_csr"] = (A._indptr.astype(np.int32), A._indices.astype(np.int32))
    return A._cache["int32_csr"]


def int32_rows(A):
    """The source vertex of every stored edge (COO rows) as int32, converted once and cached
    when the matrix stores int64."""
    rows = A._entry_rows()
    if rows.dtype == np.int32:
        return rows
    if "int32_rows" not in A._cache:
        A._cache["int32_rows"] = rows.astype(np.int32)
    return A._cache["int32_rows"]


class BinnedFrontier:
    """Two frontier buffers of three bins each (small / medium / large out-degree, n entries a
    bin), the one being read and the one being built, and ``n_slots`` counter slots (SLOT u64
    each) described in frontier.cuh.

    Step k of a level-synchronous traversal writes slot k % 3 and clears slot (k + 1) % 3, so
    a slot is never cleared by the launch that reads it; :meth:`read` brings the slot of the
    last step back (the one host round trip of a step) and swaps the buffers.
    """

    def __init__(self, n, n_slots=3):
        cp = _cupy()
        self.n = n
        self.bins = [cp.empty(3 * max(n, 1), np.int32) for _ in range(2)]
        self.slots = cp.zeros((n_slots, SLOT), np.uint64)
        # the three bins of each buffer and the slots, as views made once (a view costs a few
        # microseconds, which a level of a road network cannot spare)
        self.views = {id(b): [b[i * n :] for i in range(3)] for b in self.bins}
        self.slot_views = [self.slots[i] for i in range(n_slots)]
        self.step = 0
        self.counts = (1, 0, 0)
        self.edges = None  # the frontier's out-edges, known after the first read

    @property
    def current(self):
        """The buffer being read (the frontier) and the one being built."""
        return self.bins[0], self.bins[1]

    def bin_views(self, buffer):
        return self.views[id(buffer)]

    def next_slot(self):
        """(slot, clear) of the next step."""
        self.step += 1
        return self.slot_views[self.step % 3], self.slot_views[(self.step + 1) % 3]

    def read(self, swap=True):
        """The last step's slot on the host; the bin sizes and edges taken from it, and the
        buffers swapped unless the step built no bins (``swap`` False)."""
        info = self.slot_views[self.step % 3].get()  # sync: the next frontier's size and edges
        if swap:
            self.bins.reverse()
        self.counts = tuple(int(c) for c in info[:3])
        self.edges = int(info[EDGES])
        return info

    @property
    def size(self):
        return sum(self.counts)
