"""Reading graphs from files and writing Matrix Market.

:func:`read` picks the reader by extension (gzip transparent): Matrix Market ``.mtx``, SNAP edge
lists ``.txt`` / ``.el`` / ``.wel``, DIMACS 9 shortest-path ``.gr``, METIS ``.graph``, and
binary ``.npz``: a matrix written by ``scipy.sparse.save_npz``, or the cache that
``read(..., cache=True)`` writes beside a text file.

Each format goes through the library made for it where there is one: Matrix Market through
``scipy.io.mmread`` (fast_matrix_market: C++ threads), SciPy's ``.npz`` through
``scipy.sparse.load_npz``. The formats without one are parsed here with no Python loop per
line: the (decompressed) bytes are cut into line-aligned chunks of about a megabyte, parsed in
worker threads (NumPy releases the GIL, so chunks parse in parallel while the main thread
decompresses); a chunk is tokenized from a whitespace mask and integers are decoded eight
digits at a time from 64-bit words (SWAR). A malformed file raises :class:`FormatError` naming
the file, the 1-based line and the reason, and so does a graph too large for this machine's
memory (a declared size or a vertex id), with the GiB it needs, before anything is allocated.

The modules, each importing only those above it: ``_errors`` (FormatError and the size
check), ``_text`` (the chunked byte stream, the worker threads and the tokenizer), ``_formats``
(one parser per text format read here), ``_mtx`` (Matrix Market through SciPy), ``_cache``
(the ``.npz`` files: SciPy's and the cache), ``_read`` (read, read_mtx and the Matrix they
build), ``_write`` (write_mtx).
"""

from ._errors import FormatError
from ._read import read, read_mtx
from ._write import write_mtx

__all__ = ["read", "read_mtx", "write_mtx", "FormatError"]
