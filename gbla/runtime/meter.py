"""The work a loop's products do, counted where they run.

:func:`gbla.iterate` asked for ``stats`` opens a :func:`metering` scope around its run: each
mat-vec product run eagerly inside it (gbla.ops, which decides there whether it pushes or
pulls) adds the edges it examines with :func:`examined`; a loop run on the device counts on
the device instead (a control word its products add to, gbla.kernels._loop.EDGES) and adds
its total once, at its end. Scopes nest: what a loop inside another's body counts is the
outer loop's work too. Outside every scope a product counts nothing and pays nothing.
"""

import contextlib
import contextvars

__all__ = ["Meter", "metering", "active", "examined"]

# A context variable rather than a global: a product run in another thread (or task) is not
# this loop's, and each thread's loops count apart.
_current: contextvars.ContextVar = contextvars.ContextVar("gbla_meter", default=None)


class Meter:
    """The edges counted in one scope: an int, or None once a product ran that nothing here
    counts (a partitioned matrix's, in its own engine), so that a partial count never reads as
    a whole one."""

    __slots__ = ("edges",)

    def __init__(self):
        self.edges = 0

    def add(self, edges):
        self.edges = None if self.edges is None or edges is None else self.edges + int(edges)


@contextlib.contextmanager
def metering():
    """A new :class:`Meter` that the products run inside add to; on leaving, its count is added
    to the scope around it, if any."""
    outer = _current.get()
    meter = Meter()
    token = _current.set(meter)
    try:
        yield meter
    finally:
        _current.reset(token)
        if outer is not None:
            outer.add(meter.edges)


def active():
    """Whether a scope is open here: a product whose count would cost it a sum it does not
    otherwise make asks first."""
    return _current.get() is not None


def examined(edges):
    """Add ``edges`` (an int, or None for a product nothing counts) to the open scope, if any."""
    meter = _current.get()
    if meter is not None:
        meter.add(edges)
