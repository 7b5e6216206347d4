"""The error a malformed graph file raises, and the size check every reader makes before it
allocates what a file declares."""

import os

from ..exceptions import GblaError


class FormatError(GblaError, ValueError):
    """A malformed graph file; the message reads ``"<file>: line <n>: <reason>"``."""

    __module__ = "gbla.io"  # its public name, in tracebacks and pickles


def _host_bytes():
    """The machine's physical memory in bytes (None where the OS does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _bytes_to_read(n, entries, valued):
    """What reading a graph of n vertices and ``entries`` arcs allocates, about: two int64 ids
    and a value per arc read, and the CSR row pointers."""
    return 8 * (n + 1) + entries * (16 + (8 if valued else 0))


def _too_large(declared, n, entries, valued):
    """Why the graph ``declared`` spells (n vertices, ``entries`` arcs) cannot be read on this
    machine, or None when it can. A declared size or a vertex id is compared with physical
    memory before anything is allocated: a file saying 10**12 must not end in a bare
    MemoryError, or in swapping, half-way through."""
    need, have = _bytes_to_read(n, entries, valued), _host_bytes()
    if have is None or need <= have:
        return None
    return (
        f"{declared} needs {need / 2**30:,.1f} GiB to read; this machine has "
        f"{have / 2**30:,.1f} GiB"
    )


def _largest_vertex_count(entries, valued):
    """The most vertices a graph of ``entries`` arcs may have to pass _too_large (None: no
    limit known)."""
    have = _host_bytes()
    if have is None:
        return None
    return max((have - _bytes_to_read(0, entries, valued)) // 8 - 1, 0)
