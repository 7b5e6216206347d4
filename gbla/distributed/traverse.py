"""BFS and Bellman-Ford over a :class:`~.matrix.DistMatrix`, as the algebra writes them: one
distributed ``vxm`` a level (any.pair for levels, any.secondi for parents, min.plus for
distances), each rank keeping its range of the results, a sum over the ranks deciding when to
stop, and the whole result gathered on every rank at the end. Collective: every rank calls
them with the same arguments."""

import numpy as np

from .. import _validation as V
from .. import direction as _direction
from ..exceptions import NegativeCycleError
from ..semirings import any_pair, any_secondi, min_plus
from .matrix import vxm

__all__ = ["bfs", "sssp"]


def _gather(A, local):
    """The whole vector, from every rank's range of it, on every rank."""
    return A.comm.xp.concatenate(A.comm.allgather(local))


def bfs(A, source, *, return_predecessors=False, depth_limit=None, direction="auto"):
    """Levels (int32, -1 unreached) and, when asked, parents (int64, parents[source] ==
    source) from ``source``, on every rank; ``direction`` as for :func:`gbla.bfs` (a policy
    chooses push or pull per level, from the whole frontier)."""
    xp, n = A.comm.xp, A.n
    source = V.source(source, n)
    mine = A.lo <= source < A.hi
    levels = xp.full(A.hi - A.lo, -1, np.int32)
    parents = xp.full(A.hi - A.lo, -1, np.int64) if return_predecessors else None
    ids = [source] if mine else []
    if mine:
        levels[source - A.lo] = 0
        if parents is not None:
            parents[source - A.lo] = source
    q = A.vector(np.array(ids, np.int64), np.array([source] * len(ids), np.int64))
    semiring = any_secondi if return_predecessors else any_pair
    steps = _direction.start(direction)
    depth = 0
    while depth_limit is None or depth < depth_limit:
        depth += 1
        q = vxm(q, A, semiring, allow=levels == -1, direction=steps)
        levels[q.indices - A.lo] = depth
        if parents is not None:
            parents[q.indices - A.lo] = q.values
        if A.comm.allreduce_sum(len(q.indices)) == 0:  # sync: anything found anywhere
            break
    if parents is None:
        return _gather(A, levels)
    return _gather(A, levels), _gather(A, parents)


def sssp(A, source, *, dtype=np.float64, direction="auto"):
    """Bellman-Ford distances (``dtype``, inf unreached) from ``source`` on every rank: each
    round only the vertices whose distance fell push; a distance still falling in round n
    raises NegativeCycleError on every rank."""
    xp, n = A.comm.xp, A.n
    source = V.source(source, n)
    dtype = np.dtype(dtype)
    dist = xp.full(A.hi - A.lo, np.inf, dtype)
    mine = A.lo <= source < A.hi
    if mine:
        dist[source - A.lo] = 0
    frontier = A.vector(np.array([source] if mine else [], np.int64),
                        np.zeros(int(mine), dtype))
    steps = _direction.start(direction)
    rounds = 0
    while A.comm.allreduce_sum(len(frontier.indices)):  # sync: anything fell anywhere
        rounds += 1
        if rounds > n:
            raise NegativeCycleError(V.message(
                "A", "have no negative cycle reachable from the source",
                f"distances still falling after {n} rounds"))
        t = vxm(frontier, A, min_plus, direction=steps)
        better = t.values < dist[t.indices - A.lo]
        ids, values = t.indices[better], t.values[better].astype(dtype)
        dist[ids - A.lo] = values
        frontier = A.vector(ids, values)
    return _gather(A, dist)
