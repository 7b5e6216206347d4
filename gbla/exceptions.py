"""Exception types raised by gbla: one base class, one subclass per kind of domain error."""

__all__ = [
    "GblaError",
    "DimensionMismatch",
    "DomainMismatch",
    "DeviceMismatch",
    "InvalidIndex",
    "InvalidValue",
    "DuplicateIndex",
    "NegativeCycleError",
    "ConvergenceError",
    "ValidationError",
    "UnknownName",
    "UnsupportedMethod",
    "CaptureError",
    "OutOfDeviceMemory",
]


class GblaError(Exception):
    """Base class of every error gbla raises on purpose."""


class DimensionMismatch(GblaError, ValueError):
    """Shapes or sizes of the operands do not agree."""


class DomainMismatch(GblaError, TypeError):
    """A dtype the operation or the semiring cannot take."""


class DeviceMismatch(GblaError, ValueError):
    """Operands live on different devices, or the device is unavailable."""


class InvalidIndex(GblaError, IndexError):
    """An index is negative, out of range or not an integer."""


class InvalidValue(GblaError, ValueError):
    """A value (or argument) is not allowed, e.g. a non-finite number where one is not allowed."""


class DuplicateIndex(GblaError, ValueError):
    """The same position was given twice where no dup_op says how to combine them."""


class NegativeCycleError(GblaError, ValueError):
    """A negative cycle is reachable from the source of a shortest-path search."""


class ConvergenceError(GblaError, RuntimeError):
    """An iterative method did not converge within its iterations (args: the message, then the
    iterations run)."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


class ValidationError(GblaError, AssertionError):
    """A result failed a validity check."""


class UnknownName(GblaError, KeyError):
    """A name (of a semiring, op or method) that is not registered."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


class UnsupportedMethod(GblaError, ValueError):
    """A registered method asked to run where it cannot (on the CPU, say); gbla never falls
    back to another method silently."""


class CaptureError(GblaError, RuntimeError):
    """A loop body could not be recorded on the device: it read a value back to the host, changed
    a state vector's size or dtype, or an op inside it failed while being recorded. The stream
    and the memory pool stay usable; nothing is kept."""


class OutOfDeviceMemory(GblaError, MemoryError):
    """A device allocation failed: the message names what was being built, the bytes it needs
    and the bytes the device had free."""
