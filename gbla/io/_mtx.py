"""Matrix Market through SciPy's reader (``scipy.io.mminfo`` for the header, ``scipy.io.mmread``
for the entries: fast_matrix_market, parsing in C++ threads), with gbla's rules on top: sparse
``coordinate`` files of pattern, integer or real values, a symmetric one square, the size
checked before anything is allocated, and an integer file's values read as written and checked
whole (SciPy's reader would truncate a '1.5' there without a word). SciPy's errors are said
again as FormatError naming the file, the line and the reason; the line is read again for that
(an error path only)."""

import contextlib
import gzip
import io
import re
import zlib

import numpy as np

from ._errors import FormatError, _too_large
from ._formats import _Parsed
from ._text import _INT

_FIELDS = {"pattern": None, "integer": np.int64, "real": np.float64, "double": np.float64}
# hermitian: for real values it is symmetric, which SciPy's reader expands the same way
_SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")
_HEADER = "the header '%%MatrixMarket matrix coordinate <field> <symmetry>'"
_SIZE = "the size line 'rows columns entries'"
_AT_LINE = re.compile(r"Line (\d+): (.*)", re.S)  # how fast_matrix_market places an error


def _read_mtx(path, name):
    """The graph of a Matrix Market file as it states it (both triangles of a symmetric one)."""
    import scipy.io

    try:
        with _source(path, name, buffer=1 << 13) as source:  # a header: a small buffer
            nrows, ncols, entries, layout, field, symmetry = scipy.io.mminfo(source)
    except FormatError:  # the gzip data (a ValueError too)
        raise
    except (ValueError, OverflowError) as e:
        raise _header_error(path, name, e) from None
    if layout != "coordinate":
        raise FormatError(
            f"{name}: line 1: only sparse 'coordinate' files can be read; got '{layout}'"
        )
    if field not in _FIELDS:
        raise FormatError(f"{name}: line 1: field must be pattern, integer or real; got '{field}'")
    if symmetry not in _SYMMETRIES:
        raise FormatError(
            f"{name}: line 1: symmetry must be general, symmetric, skew-symmetric "
            f"or hermitian; got '{symmetry}'"
        )
    if symmetry != "general" and nrows != ncols:
        raise _at_size_line(
            path, name, f"a {symmetry} matrix must be square; got {nrows} x {ncols}"
        )
    too_large = _too_large(
        f"a {nrows} x {ncols} matrix of {entries} entries",
        max(nrows, ncols),
        entries * (1 if symmetry == "general" else 2),
        field != "pattern",
    )
    if too_large is not None:
        raise _at_size_line(path, name, too_large)
    C = _entries(path, name, field, (nrows, ncols), entries, as_real=field == "integer")
    if field == "integer" and C.nnz:
        # SciPy reads '1.5' in an integer file as 1: the values are read as written (the banner
        # said 'real' to SciPy) and must be whole; a file holding one beyond 2**53, where
        # doubles skip integers, is read again as integers (exact)
        values = C.data
        finite = np.isfinite(values)
        if not (finite & (values == np.floor(values))).all():
            raise _first_bad_entry(path, name, field, (nrows, ncols))
        if np.abs(values).max() >= 2.0**53:
            C = _entries(path, name, field, (nrows, ncols), entries, as_real=False)
    dtype = _FIELDS[field]
    values = None if dtype is None else C.data.astype(dtype, copy=False)
    return _Parsed(
        C.row,
        C.col,
        values,
        (nrows, ncols),
        "line 1: the header declares a pattern matrix (no values)",
    )


def _entries(path, name, field, shape, entries, as_real):
    """The file's entries as SciPy reads them (a COO array); ``as_real``: its values as written,
    in float64 (the banner's 'integer' said as 'real')."""
    import scipy.io

    try:
        with _source(path, name, buffer=1 << 22, as_real=as_real) as source:
            return scipy.io.mmread(source, spmatrix=False)
    except FormatError:  # the gzip data (a ValueError too)
        raise
    except (ValueError, OverflowError) as e:
        raise _body_error(path, name, e, field, shape, entries) from None


class _AsReal(io.RawIOBase):
    """A Matrix Market stream whose banner says 'real' where the file says 'integer'."""

    def __init__(self, raw):
        self._raw = raw
        self._head = re.sub(rb"(?i)\binteger\b", b"real", raw.readline(), count=1)

    def readable(self):
        return True

    def close(self):
        self._raw.close()
        super().close()

    def readinto(self, b):
        if self._head:
            k = min(len(b), len(self._head))
            b[:k] = self._head[:k]
            self._head = self._head[k:]
            return k
        return self._raw.readinto(b)


@contextlib.contextmanager
def _source(path, name, buffer, as_real=False):
    """What SciPy reads: a plain file by its path (read in C++), a gzip file as a stream of
    ``buffer`` bytes decompressed at a time (for any case of '.gz', which SciPy would not
    recognise), its damage said as FormatError."""
    gz = path.name.lower().endswith(".gz")
    if not gz and not as_real:
        yield str(path)
        return
    try:
        # SciPy asks a stream for 1 KiB at a time: served from a large buffer for the
        # entries, not by the 8 KiB one of GzipFile (a Python call and a decompress call
        # each: 0.2 s on NE)
        raw = gzip.open(path, "rb") if gz else open(path, "rb")  # closed with f
        if as_real:
            raw = _AsReal(raw)
        with io.BufferedReader(raw, buffer_size=buffer) as f:
            yield f
    except (gzip.BadGzipFile, zlib.error) as e:
        raise FormatError(f"{name}: not valid gzip data ({e})") from None
    except EOFError:
        raise FormatError(f"{name}: the gzip data ends early (a truncated file)") from None


# ================================================================================ error paths
def _lines(path):
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rb") as f:
        yield from f


def _size_line(path):
    """(number, text) of the size line: the first after the banner that is neither blank nor
    a '%' comment; (None, None) when there is none."""
    for number, line in enumerate(_lines(path), 1):
        if number > 1 and line.strip() and not line.startswith(b"%"):
            return number, line.strip().decode("ascii", "replace")
    return None, None


def _at_size_line(path, name, reason):
    return FormatError(f"{name}: line {_size_line(path)[0]}: {reason}")


def _said(text):
    """fast_matrix_market's words as a reason: 'Invalid integer value.' -> 'invalid integer
    value'."""
    text = text.strip().rstrip(".")
    return text[:1].lower() + text[1:]


def _header_error(path, name, error):
    found = _AT_LINE.match(str(error))
    line, said = (int(found[1]), found[2]) if found else (None, str(error))
    if line == 1:
        first = next(_lines(path), b"").rstrip(b"\r\n")[:60].decode("ascii", "replace")
        return FormatError(f"{name}: line 1: expected {_HEADER}; got {first!r}")
    if "Premature EOF" in said:  # SciPy counts the line after the last
        return FormatError(f"{name}: line {max(line - 1, 1)}: the file ends before {_SIZE}")
    number, text = _size_line(path)
    if line is None or line == number:  # SciPy names no line for a bad size line
        return FormatError(f"{name}: line {number}: expected {_SIZE}; got {text[:60]!r}")
    return FormatError(f"{name}: line {line}: {_said(said)}")


def _body_error(path, name, error, field, shape, entries):
    text = str(error)
    found = _AT_LINE.match(text)
    if found is None:
        short = re.search(r"Expected another (\d+) lines", text)
        if short is None:
            return FormatError(f"{name}: {_said(text)}")
        last = sum(1 for _ in _lines(path))
        return FormatError(
            f"{name}: line {last}: the file ends after "
            f"{entries - int(short[1])} entries; line {_size_line(path)[0]} "
            f"declares {entries}"
        )
    line = int(found[1])
    words = next(
        (content.split() for number, content in enumerate(_lines(path), 1) if number == line), []
    )
    reason = _entry_problem(words, field, shape)
    if reason is None and "Too many lines" in found[2]:
        reason = f"more entries than the {entries} declared on line {_size_line(path)[0]}"
    return FormatError(f"{name}: line {line}: {reason or _said(found[2])}")


def _first_bad_entry(path, name, field, shape):
    """The FormatError of the first entry line whose words are wrong (a value that is not
    whole in an integer file: SciPy read it without a word)."""
    number, _ = _size_line(path)
    for line, content in enumerate(_lines(path), 1):
        words = content.split()
        if line > number and words:
            reason = _entry_problem(words, field, shape)
            if reason is not None:
                return FormatError(f"{name}: line {line}: {reason}")
    return FormatError(f"{name}: an integer file holds a value that is not a whole number")


def _entry_problem(words, field, shape):
    """What is wrong with the entry line of ``words`` in gbla's words (None: nothing found
    here, SciPy's reason stands). SciPy ignores what follows a line's last field."""
    if words[:1] and words[0].startswith(b"%"):
        return "a '%' comment among the entries (comments belong to the header)"
    width = 2 if field == "pattern" else 3
    if len(words) < width:
        form = "'row column'" if width == 2 else "'row column value'"
        return f"expected {width} tokens ({form}); got {len(words)}"
    for word, what, count in zip(words, ("row", "column"), shape):
        shown = word.decode("ascii", "replace")
        if not _INT.match(word):
            return f"{what} index must be an integer; got {shown!r}"
        if int(word) < 1:
            return f"{what} index {shown} is below 1 (ids are 1-based)"
        if int(word) > count:
            return f"{what} index {shown} exceeds the declared {what} count {count}"
    if width == 3:
        shown = words[2].decode("ascii", "replace")
        if field == "integer":
            if not _INT.match(words[2]):
                return f"value must be an integer; got {shown!r}"
            if not -(2**63) <= int(words[2]) < 2**63:
                return f"value {shown} does not fit in int64"
        else:
            try:
                float(words[2])
            except ValueError:
                return f"value must be a number; got {shown!r}"
    return None
