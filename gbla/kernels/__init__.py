"""The registry of methods: every way gbla runs an algorithm, the algebraic formulation first
and the hand-written CUDA kernels beside it. All take the same arguments and give the same
results, so ``gbla.bfs(A, s, method=name)`` compares them directly on one graph.

>>> import gbla
>>> gbla.kernels.names("bfs")[0]
'algebraic'
"""

from dataclasses import dataclass, field
from typing import Callable

from .. import _validation as V
from ..exceptions import UnknownName, UnsupportedMethod

__all__ = ["Method", "names", "get", "ALGORITHMS"]

ALGORITHMS = ("bfs", "sssp")
INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class Method:
    """One registered method.

    name : str, unique over all algorithms.
    algorithm : 'bfs' or 'sssp'.
    description : one line.
    devices : the devices it runs on ('cpu', 'gpu').
    algebraic : True when it is written in the algebra (gbla.ops), False for a CUDA kernel.
    directions : whether it takes ``direction=`` (a policy or 'push'/'pull').
    """

    name: str
    algorithm: str
    description: str
    devices: tuple
    algebraic: bool
    directions: bool = False
    _run: Callable = field(default=None, repr=False, compare=False)

    def unsupported_reason(self, A):
        """Why this method cannot run on the Matrix ``A``, or None when it can."""
        if A.device not in self.devices:
            where = " or ".join(self.devices)
            return (f"method {self.name!r} runs on the {where} only; the matrix is on the "
                    f"{A.device}")
        if not self.algebraic and max(A.nrows, A.nvals) >= INT32_MAX:
            return (f"method {self.name!r} takes int32 vertex ids and edge offsets; the matrix "
                    f"has {A.nrows} vertices and {A.nvals} edges")
        return None

    def supports(self, A):
        """True when this method can run on the Matrix ``A``."""
        return self.unsupported_reason(A) is None

    def check(self, A):
        reason = self.unsupported_reason(A)
        if reason is not None:
            raise UnsupportedMethod(reason)

    def run(self, *args, **kwargs):
        return self._run(*args, **kwargs)


_REGISTRY = {}


def _register(method):
    assert method.name not in _REGISTRY and method.algorithm in ALGORITHMS
    _REGISTRY[method.name] = method


def names(algorithm=None):
    """Registered method names (of one algorithm when given), algebraic ones first."""
    if algorithm is not None:
        V.one_of(algorithm, ALGORITHMS, "algorithm")
    return [m.name for m in _REGISTRY.values() if algorithm in (None, m.algorithm)]


def get(name, algorithm=None):
    """The registered Method called ``name``; UnknownName lists the valid names."""
    method = _REGISTRY.get(name)
    if method is None or (algorithm is not None and method.algorithm != algorithm):
        valid = names(algorithm)
        raise UnknownName(V.message("method", f"be one of {valid}", name))
    return method


# ------------------------------------------------------------------ the algebraic methods
def _bfs_algebraic(A, source, **kwargs):
    from ..algorithms.bfs import _bfs_algebraic as run
    return run(A, source, **kwargs)


def _sssp(method):
    def run(A, source, **kwargs):
        from ..algorithms.sssp import sssp
        return sssp(A, source, method=method, **kwargs)
    return run


_register(Method("algebraic", "bfs", "masked vxm over any.pair (any.secondi for parents), "
                 "push/pull chosen per level by the direction policy", ("cpu", "gpu"), True,
                 directions=True, _run=_bfs_algebraic))
_register(Method("delta_stepping", "sssp", "delta-stepping in min.plus products (LAGraph "
                 "formulation), buckets of width delta", ("cpu", "gpu"), True, directions=True,
                 _run=_sssp("delta_stepping")))
_register(Method("bellman_ford", "sssp", "Bellman-Ford as repeated masked min.plus vxm until "
                 "no distance changes", ("cpu", "gpu"), True, directions=True,
                 _run=_sssp("bellman_ford")))


# ------------------------------------------------------------------ the hand-written kernels
from . import _bfs  # noqa: E402  (its drivers are registered here, after the algebraic ones)

for _name, _run, _directions, _description in _bfs.KERNELS:
    _register(Method(_name, "bfs", _description, ("gpu",), False, directions=_directions,
                     _run=_run))
