"""The static 1D partition of a graph kept in host memory: its source vertices cut into
contiguous ranges ("subgraphs"), each range's out-edges together, sized so that one subgraph's
edges fill about the GPU's L2 cache (Song et al., 2022: a subgraph is the unit that is sent,
kept resident or compacted)."""

from dataclasses import dataclass

import numpy as np

from .. import _validation as V

__all__ = ["Partition", "partition", "balanced_bounds", "DEFAULT_PART_BYTES", "part_bytes_for"]

DEFAULT_PART_BYTES = 50 * 2**20  # the H100's L2: one subgraph's edges stay in it


def part_bytes_for(budget):
    """The default subgraph size under a device budget: the L2's size, or less when the budget
    is small, so that about 16 subgraphs fit in it (residency is decided a subgraph at a time,
    and a budget that holds one subgraph or none leaves the scheme nothing to choose)."""
    return int(min(DEFAULT_PART_BYTES, max(int(budget) // 16, 4096)))


@dataclass(frozen=True, eq=False)
class Partition:
    """Subgraph i holds source vertices ``vertex_bounds[i]`` to ``vertex_bounds[i + 1]`` (the
    host CSR rows) and their out-edges, ``edge_bounds[i]`` to ``edge_bounds[i + 1]`` in the CSR
    arrays. ``edge_bytes``: the bytes an edge takes on the device (its index and its value);
    ``index_bytes``: the bytes of one row pointer."""

    vertex_bounds: np.ndarray
    edge_bounds: np.ndarray
    edge_bytes: int
    index_bytes: int

    @property
    def count(self):
        return len(self.vertex_bounds) - 1

    def edges(self):
        """Out-edges per subgraph (int64, one per subgraph)."""
        return np.diff(self.edge_bounds)

    def vertices(self):
        return np.diff(self.vertex_bounds)

    def nbytes(self):
        """Bytes per subgraph on the device when sent whole: its edges and its row pointers."""
        return self.edges() * self.edge_bytes + (self.vertices() + 1) * self.index_bytes

    def of(self, vertices):
        """The subgraph of each vertex (host ids)."""
        return np.searchsorted(self.vertex_bounds, vertices, side="right") - 1


def balanced_bounds(indptr, parts):
    """``parts + 1`` row bounds (non-decreasing, from 0 to n) that cut a CSR's rows into
    ``parts`` contiguous ranges of about equal edge counts; a range may be empty (a vertex's
    edges are never split). What a partition over subgraphs or over ranks starts from."""
    indptr = np.asarray(indptr, np.int64)
    n, m = len(indptr) - 1, int(indptr[-1])
    targets = (np.arange(1, parts, dtype=np.int64) * m) // parts
    cuts = np.searchsorted(indptr, targets, side="left")  # the first row past each target
    return np.concatenate([[0], cuts, [n]]).astype(np.int64)


def partition(indptr, *, edge_bytes, index_bytes, parts=None, part_bytes=None):
    """Cut the rows of a host CSR (``indptr``) into contiguous subgraphs of about equal edge
    bytes: ``parts`` of them, or as many as make each about ``part_bytes`` (default
    :data:`DEFAULT_PART_BYTES`). A vertex's edges are never split, so a vertex of huge degree
    makes a larger subgraph; ranges without an edge are merged into a neighbour, so every
    subgraph but the only one of an edgeless graph has an edge.

    Raises
    ------
    InvalidValue
        Both or a non-positive ``parts`` / ``part_bytes``.
    """
    indptr = np.asarray(indptr, np.int64)
    m = int(indptr[-1])
    if parts is not None and part_bytes is not None:
        raise V.invalid_value("parts", "be None when part_bytes is given", parts)
    if parts is None:
        part_bytes = DEFAULT_PART_BYTES if part_bytes is None else part_bytes
        if V.integer(part_bytes, "part_bytes") < 1:
            raise V.invalid_value("part_bytes", "be a positive integer", part_bytes)
        parts = max(1, -(-m * edge_bytes // part_bytes))
    elif V.integer(parts, "parts") < 1:
        raise V.invalid_value("parts", "be a positive integer", parts)
    bounds = np.unique(balanced_bounds(indptr, parts))
    edge_bounds = indptr[bounds]
    keep = np.concatenate([[True], np.diff(edge_bounds) > 0])  # drop edgeless ranges
    keep[-1] = True
    bounds, edge_bounds = bounds[keep], edge_bounds[keep]
    if len(bounds) > 2 and edge_bounds[-1] == edge_bounds[-2]:  # an edgeless tail joins
        bounds = np.delete(bounds, -2)
        edge_bounds = np.delete(edge_bounds, -2)
    if len(bounds) == 1:  # no vertex at all
        bounds, edge_bounds = np.array([0, 0], np.int64), np.array([0, 0], np.int64)
    return Partition(
        bounds.astype(np.int64), edge_bounds.astype(np.int64), int(edge_bytes), int(index_bytes)
    )
