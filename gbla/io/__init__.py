"""Reading graphs from files and writing Matrix Market.

:func:`read` picks the reader by extension (gzip transparent): Matrix Market ``.mtx``, SNAP edge
lists ``.txt`` / ``.el`` / ``.wel``, DIMACS 9 shortest-path ``.gr``, METIS ``.graph``, and the
binary ``.npz`` cache that ``read(..., cache=True)`` writes beside a text file.

Text is parsed with no Python loop per line. The (decompressed) bytes are cut into line-aligned
chunks of about a megabyte, parsed in worker threads (NumPy releases the GIL, so chunks parse
in parallel while the main thread decompresses). A chunk is tokenized from a whitespace mask and
integers are decoded eight digits at a time from 64-bit words (SWAR). A malformed file raises
:class:`FormatError` naming the file, the 1-based line and the reason; where in a chunk the
problem lies is worked out only once one is found.

The modules, each importing only those above it: ``_errors`` (FormatError), ``_text`` (the
chunked byte stream, the worker threads and the tokenizer), ``_formats`` (one parser per text
format), ``_cache`` (the ``.npz`` cache), ``_read`` (read, read_mtx and the Matrix they build),
``_write`` (write_mtx).
"""

from ._errors import FormatError
from ._read import read, read_mtx
from ._write import write_mtx

__all__ = ["read", "read_mtx", "write_mtx", "FormatError"]
