"""The registry of methods: every way gbla runs an algorithm, the algebraic formulations and the
hand-written CUDA kernels alike. All methods of one algorithm take the same arguments and give
the same results, so ``gbla.bfs(A, s, method=name)`` compares them directly on one graph.

Algorithms (``gbla.algorithms``) and kernels (``gbla.kernels``) register themselves here;
neither imports the other. ``gbla.bfs`` and ``gbla.sssp`` check their arguments once and then
call the chosen method's ``run`` with the keywords its algorithm's contract names:

- ``"bfs"``: ``run(A, source, *, return_parents, depth_limit, direction, stats, **options)``
  returns levels (int32, -1 = unreached), or (levels, parents) with parents[source] ==
  source.
- ``"sssp"``: ``run(A, source, *, dtype, return_predecessors, direction, stats, **options)``
  returns distances of ``dtype`` (inf = unreached), or (dist, pred). ``A`` is checked first:
  no NaN or -inf weight, +inf edges dropped, an unweighted graph as its bool pattern (weight
  1), and no negative weight unless the method declares ``negative_weights``. ``options`` are
  the keywords the method lists in ``options``: ``delta`` (a bucket width) is always given,
  the caller's or the default one (``default_delta`` of gbla/algorithms/sssp.py), checked
  positive; ``memory_budget`` (bfs and sssp) only to the methods that list it, which need it.

``direction`` is 'push', 'pull' or a :class:`~gbla.DirectionPolicy` ('auto' arrives as the
method's ``auto_policy``, else the default policy), and anything but 'auto' only for methods
with ``directions``.
``stats`` is a dict the method may fill (e.g. ``stats["iterations"]``).

>>> import gbla
>>> gbla.methods.names("bfs")[0]
'algebraic'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import _validation as V
from . import direction as _direction
from .exceptions import UnknownName, UnsupportedMethod

__all__ = [
    "Method",
    "ALGORITHMS",
    "register",
    "unregister",
    "get",
    "names",
    "resolve",
    "with_budget",
]

ALGORITHMS = ("bfs", "sssp")
INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class Method:
    """One registered method.

    Parameters
    ----------
    name : str
        Unique over all algorithms.
    algorithm : 'bfs' or 'sssp'
    description : str
        One line.
    run : callable
        The method itself, called as the algorithm's contract says (see :mod:`gbla.methods`).
    devices : tuple of 'cpu', 'gpu'
        Where it runs.
    algebraic : bool
        True when it is written in the algebra (``gbla.ops``), False for a hand-written kernel.
    directions : bool
        Whether it takes ``direction=`` (a policy, 'push' or 'pull').
    max_index : int or None
        The largest vertex count and edge count it takes (int32 kernels: 2**31 - 2); None: no
        limit.
    negative_weights : bool
        SSSP only: whether it takes negative weights (and detects negative cycles).
    options : tuple of str
        Further keywords its ``run`` takes (SSSP's ``delta``).
    partitioned : bool or tuple of str
        Whether it runs on a partitioned matrix, whose products run in an engine of its own
        below ops: a :class:`gbla.distributed.DistMatrix` cut over ranks, or a
        :class:`gbla.outofcore.HostMatrix` kept in host memory (so it also takes a
        ``memory_budget``). True: on every kind (an algebraic method written with vxm, mxm,
        select, scale and element-wise operations only); a tuple: on the kinds it names
        (class names, e.g. ``("DistMatrix",)`` for a kernel written for ranks).
    auto_policy : DirectionPolicy or None
        What direction='auto' means for it (a method with ``directions``); None: the default
        policy. The algebra's SSSP methods take a rule without memory
        (:data:`gbla.algorithms.sssp.RELAXATION_POLICY`).
    """

    name: str
    algorithm: str
    description: str
    run: Callable[..., Any] = field(repr=False, compare=False)
    devices: tuple = ("cpu", "gpu")
    algebraic: bool = False
    directions: bool = False
    max_index: int | None = None
    negative_weights: bool = False
    options: tuple = ()
    partitioned: bool | tuple = False
    auto_policy: _direction.DirectionPolicy | None = None

    def __post_init__(self):
        V.identifier(self.name, "name")
        V.one_of(self.algorithm, ALGORITHMS, "algorithm")
        V.is_callable(self.run, "run")
        if self.auto_policy is not None and not (
            self.directions and isinstance(self.auto_policy, _direction.DirectionPolicy)
        ):
            raise V.invalid_value(
                "auto_policy",
                "be None or, with directions=True, a DirectionPolicy",
                self.auto_policy,
            )
        if not self.devices or any(d not in ("cpu", "gpu") for d in self.devices):
            raise V.invalid_value("devices", "name 'cpu', 'gpu' or both", self.devices)

    def unsupported_reason(self, A: Any) -> str | None:
        """Why this method cannot run on the Matrix ``A``, or None when it can."""
        if getattr(A, "partitioned", False) and not self.takes(type(A).__name__):
            kind = type(A).__name__
            return (
                f"method {self.name!r} does not run on a {kind}; those that do: "
                f"{', '.join(n for n in names(self.algorithm) if get(n).takes(kind))}"
            )
        if A.device not in self.devices:
            where = " or ".join(self.devices)
            return f"method {self.name!r} runs on the {where} only; the matrix is on the {A.device}"
        if self.max_index is not None and max(A.nrows, A.nvals) > self.max_index:
            return (
                f"method {self.name!r} takes at most {self.max_index} vertices and edges "
                f"(int32 ids and offsets); the matrix has {A.nrows} vertices and {A.nvals} "
                "edges"
            )
        return None

    def takes(self, kind: str) -> bool:
        """Whether it runs on the partitioned matrix class named ``kind``."""
        return self.partitioned is True or kind in (self.partitioned or ())

    def supports(self, A: Any) -> bool:
        """True when this method can run on the Matrix ``A``."""
        return self.unsupported_reason(A) is None

    def check(self, A: Any) -> None:
        """Raise :class:`~gbla.UnsupportedMethod` with the reason when it cannot run on A."""
        reason = self.unsupported_reason(A)
        if reason is not None:
            raise UnsupportedMethod(reason)


_REGISTRY: dict[str, Method] = {}


def register(method: Method, *, replace: bool = False) -> Method:
    """Add ``method`` (a :class:`Method`) to the registry; returns it.

    Raises
    ------
    InvalidValue
        A method of that name is registered already and ``replace`` is False.
    """
    if not isinstance(method, Method):
        raise V.domain("method", "be a gbla.methods.Method", type(method).__name__)
    if method.name in _REGISTRY and not replace:
        raise V.invalid_value(
            "method.name", "not be registered already (pass replace=True)", method.name
        )
    _REGISTRY[method.name] = method
    return method


def unregister(name: str) -> Method:
    """Remove the method called ``name``; returns it. UnknownName when none is registered."""
    method = get(name)
    del _REGISTRY[method.name]
    return method


def names(algorithm: str | None = None) -> list[str]:
    """Registered method names (of one algorithm when given): the algebraic ones first, each
    group in registration order."""
    if algorithm is not None:
        V.one_of(algorithm, ALGORITHMS, "algorithm")
    chosen = [m for m in _REGISTRY.values() if algorithm in (None, m.algorithm)]
    return [m.name for m in sorted(chosen, key=lambda m: not m.algebraic)]


def get(name: str, algorithm: str | None = None) -> Method:
    """The registered Method called ``name`` (of ``algorithm`` when given).

    Raises
    ------
    UnknownName (a KeyError)
        No such method; the message lists the valid names.
    """
    method = _REGISTRY.get(name) if isinstance(name, str) else None
    if method is None or (algorithm is not None and method.algorithm != algorithm):
        raise UnknownName(V.message("method", f"be one of {names(algorithm)}", name))
    return method


def resolve(name: str, algorithm: str, A: Any, direction: Any) -> tuple[Method, Any]:
    """The registered method ``name`` of ``algorithm``, checked to run on the Matrix ``A`` with
    ``direction``, and that direction resolved ('auto' -> the method's ``auto_policy``, else
    the default policy).

    Raises
    ------
    UnknownName
        ``name`` is not a registered method of ``algorithm``.
    InvalidValue
        ``direction`` is not a direction, or is not 'auto' for a method without ``directions``.
    UnsupportedMethod
        The method cannot run on ``A`` (its device, its size).
    """
    method = get(name, algorithm)
    resolved = _direction.resolve(direction)
    auto = isinstance(direction, str) and direction == "auto"
    if auto and method.auto_policy is not None:
        resolved = method.auto_policy
    if not method.directions and not auto:
        raise V.invalid_value(
            "direction", f"be 'auto' with method={name!r} (it does not switch direction)", direction
        )
    method.check(A)
    return method, resolved


# how a memory budget keeps a matrix in host memory (gbla.outofcore sets it)
_HOST_MATRIX: list[Callable[..., Any]] = []


def set_host_matrix(make: Callable[..., Any]) -> None:
    """Let ``make(A, memory_budget)`` keep A in host memory for the partitioned methods run
    with a budget (:class:`gbla.outofcore.HostMatrix`; the registry imports neither side)."""
    _HOST_MATRIX[:] = [make]


def with_budget(method: Method, A: Any, memory_budget: int | None) -> tuple[Any, dict]:
    """(the matrix ``method`` runs on, the keywords a ``memory_budget`` adds to its run): a
    method that lists ``memory_budget`` in ``options`` (the out-of-core kernels) takes it as
    a keyword; a partitioned one (the algebra) runs on A kept in host memory, its products
    streaming within the budget; no other takes one.

    Raises
    ------
    InvalidValue
        A budget for a method that takes none, or none for one that needs it.
    """
    if "memory_budget" in method.options:
        if memory_budget is None:
            raise V.invalid_value(
                "memory_budget", f"be given with method={method.name!r}", memory_budget
            )
        return A, {"memory_budget": memory_budget}
    if memory_budget is None:
        return A, {}
    if not method.takes("HostMatrix") or not _HOST_MATRIX or getattr(A, "partitioned", False):
        raise V.invalid_value(
            "memory_budget",
            f"be None with method={method.name!r} (the "
            "out-of-core methods and the algebraic ones on a gbla.Matrix "
            "take it)",
            memory_budget,
        )
    return _HOST_MATRIX[0](A, memory_budget), {}
