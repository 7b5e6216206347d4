"""The error a malformed graph file raises."""

from ..exceptions import GblaError


class FormatError(GblaError, ValueError):
    """A malformed graph file; the message reads ``"<file>: line <n>: <reason>"``."""

    __module__ = "gbla.io"  # its public name, in tracebacks and pickles
