"""Semirings as data: BinaryOp, Monoid, Semiring and the builtin registry.

>>> from gbla import semirings
>>> semirings.min_plus.add.name, semirings.min_plus.multiply.name
('min', 'plus')
>>> semirings.get("any_pair") is semirings.any_pair
True
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING

from .. import _validation as V
from ..exceptions import UnknownName
from ._builtin import BINARY, MONOIDS, SEMIRINGS, UNARY
from ._core import ANY_VALUE, BinaryOp, Monoid, Semiring, UnaryOp

__all__ = [
    "BinaryOp",
    "UnaryOp",
    "Monoid",
    "Semiring",
    "ANY_VALUE",
    "binary",
    "unary",
    "monoid",
    "get",
    "monoid_of",
    "names",
    "register",
] + sorted(SEMIRINGS)

binary = SimpleNamespace(**BINARY)
unary = SimpleNamespace(**UNARY)
monoid = SimpleNamespace(**MONOIDS)

_REGISTRY = dict(SEMIRINGS)
globals().update(SEMIRINGS)

if TYPE_CHECKING:  # the builtin semirings above, generated from a product: each a Semiring

    def __getattr__(name: str) -> Semiring: ...


def names() -> list[str]:
    """The names of every registered semiring, sorted."""
    return sorted(_REGISTRY)


def get(name: Semiring | str) -> Semiring:
    """The semiring registered under ``name``.

    Raises
    ------
    UnknownName (a KeyError)
        ``name`` is not registered; the message lists the valid names.
    """
    if isinstance(name, Semiring):
        return name
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise UnknownName(V.message("semiring", f"be one of {names()}", name)) from None


def monoid_of(monoid: Monoid | str, arg: str = "monoid") -> Monoid:
    """A Monoid as given, or the builtin one called ``monoid``; ``arg`` names the argument in
    the error.

    Raises
    ------
    UnknownName (a KeyError)
        No builtin monoid has that name; the message lists them.
    DomainMismatch
        Neither a Monoid nor a name.
    """
    if isinstance(monoid, str):
        if monoid not in MONOIDS:
            raise UnknownName(V.message(arg, f"be one of {sorted(MONOIDS)}", monoid))
        return MONOIDS[monoid]
    if not isinstance(monoid, Monoid):
        raise V.domain(arg, "be a gbla Monoid or monoid name", monoid)
    return monoid


def register(semiring: Semiring, *, replace: bool = False) -> Semiring:
    """Add a user-defined semiring to the registry under its name; returns it.

    It then works on both devices: its ops' CUDA expressions are compiled for the GPU and their
    NumPy references run on the CPU.
    """
    if not isinstance(semiring, Semiring):
        raise V.domain("semiring", "be a gbla Semiring", semiring)
    if semiring.name in _REGISTRY and not replace:
        raise V.invalid_value(
            "semiring.name", "not be registered already (pass replace=True)", semiring.name
        )
    _REGISTRY[semiring.name] = semiring
    return semiring
