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
"""

import collections
import gzip
import itertools
import os
import re
import tempfile
import warnings
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from . import _backend as B
from . import _validation as V
from .exceptions import GblaError
from .matrix import Matrix

__all__ = ["read", "read_mtx", "write_mtx", "FormatError"]


class FormatError(GblaError, ValueError):
    """A malformed graph file; the message reads ``"<file>: line <n>: <reason>"``."""


# Text readers by extension (after any ".gz"); ".npz" is the binary cache.
_TEXT_KINDS = {".mtx": "mtx", ".txt": "edges", ".el": "edges", ".wel": "edges", ".gr": "dimacs",
               ".graph": "metis"}
_EXTENSIONS = tuple(_TEXT_KINDS) + (".npz",)

# A chunk this size (bytes) keeps the tokenizer's temporaries in cache (0.5-1 MB measured best).
_CHUNK = 1 << 20
_PIECE = 1 << 23  # bytes read (or decompressed from) the file at a time
_THREADS = max(1, min(8, os.cpu_count() or 1))
_CACHE_VERSION = 1


# ================================================================================ public API
def read(path, weighted=None, *, cache=False, device=None, directed=None):
    """Read a graph file into a Matrix; the format follows the extension (``.gz`` after it:
    gzip).

    - ``.mtx``: Matrix Market coordinate, 1-based; ``symmetric`` and ``skew-symmetric`` files
      give both directions.
    - ``.txt``, ``.el``, ``.wel``: SNAP edge list, ``u v`` or ``u v w`` per line, 0-based,
      ``#`` comment lines; n = largest id + 1; directed.
    - ``.gr``: DIMACS 9 shortest path, ``c`` comments, ``p sp n m``, then ``a u v w`` per arc
      (1-based, directed).
    - ``.graph``: METIS, header ``n m [fmt [ncon]]``, ``%`` comment lines, then line i lists
      vertex i's neighbours (1-based; each undirected edge on both ends' lines; fmt 1 or 001:
      ``v w`` pairs, 10: ncon vertex weights first, 11: both, 100: a vertex size first; vertex
      sizes and weights are skipped). Blank lines are vertices without neighbours; the last
      one may be left out.
    - ``.npz``: the cache written by ``cache=True``.

    Parameters
    ----------
    path : str or os.PathLike
    weighted : {None, True, False}
        None: the values the file has (int64 when its weights are integers, as in DIMACS, METIS
        and integer Matrix Market; float64 for real ones; an iso bool pattern when it has none).
        False: the pattern only. True: the weights, raising FormatError if the file has none.
    cache : bool
        Write ``<path>.npz`` beside a text file after parsing it, and load that instead while
        its recorded size and modification time match the text file. The cache holds the graph
        as the file states it, so one cache serves every ``weighted`` and ``directed`` choice.
        An unwritable directory only warns (RuntimeWarning).
    device : {'cpu', 'gpu', None}
        Where the Matrix lives; None: the GPU when CuPy sees one, else the CPU.
    directed : {None, True, False}
        False: make the graph undirected (both directions of every edge). None or True: the
        arcs as the file gives them (undirected formats give both directions already).

    Returns
    -------
    Matrix
        n x n (rows x columns for a rectangular Matrix Market file); entry (u, v) is the edge
        u -> v. Parallel edges merge: an unweighted pattern keeps one, a weighted graph the
        smallest weight (the ``min`` op), the edge a shortest path would take.

    Raises
    ------
    InvalidValue
        ``path`` does not exist or has no known extension (the message lists them), or an
        argument is not one of its allowed values.
    FormatError
        The file is malformed; the message names the file, the line and the reason (e.g. an
        arc endpoint beyond the ``p`` line's vertex count, fewer entries than declared).

    Examples
    --------
    >>> A = gbla.io.read("rome99.gr", device="cpu")            # doctest: +SKIP
    >>> A.dtype, A.nvals  # 8870 arcs, 11 of them parallel     # doctest: +SKIP
    (dtype('int64'), 8859)
    >>> U = gbla.io.read("p2p-Gnutella08.txt", directed=False, cache=True)  # doctest: +SKIP
    """
    V.optional_flag(weighted, "weighted")
    V.optional_flag(directed, "directed")
    cache = V.flag(cache, "cache")
    device = B.resolve_device(device)
    kind = _kind(V.path_like(path))
    path = _existing(path)
    if kind == "npz":
        A, unweighted = _load_cache(path, str(path))
    else:
        A, unweighted = _read_text(path, kind, cache)
    if weighted is False:
        A = A.pattern()
    elif weighted is True and A.is_iso:
        raise FormatError(f"{path}: {unweighted} (weighted=True needs weights)")
    if directed is False:
        if A.nrows != A.ncols:
            raise V.invalid_value("directed", f"be None or True for the {A.nrows} x {A.ncols} "
                                  f"matrix of {path}", directed)
        A = _symmetrized(A)
    return A.to_device(device)


def read_mtx(path, *, device=None):
    """Read a Matrix Market file (``.mtx`` or ``.mtx.gz``, whatever its name): ``read`` with the
    Matrix Market reader and its defaults.

    Parameters
    ----------
    path : str or os.PathLike
    device : {'cpu', 'gpu', None}

    Returns
    -------
    Matrix
        Both triangles of a symmetric file; an iso bool Matrix for a ``pattern`` file.

    Raises
    ------
    InvalidValue
        ``path`` does not exist.
    FormatError
        The file is malformed.
    """
    path = _existing(path)
    device = B.resolve_device(device)
    A, _ = _read_text(path, "mtx", False)
    return A.to_device(device)


def write_mtx(path, A, *, comment=None):
    """Write A as a Matrix Market coordinate ``general`` file, gzip-compressed when ``path``
    ends in ``.gz``; ``read`` gives A back (integers as int64, floats as float64).

    Parameters
    ----------
    path : str or os.PathLike
    A : Matrix
        Field ``pattern`` when every value is True (an iso matrix included), ``integer`` for
        integer values (and for a bool matrix holding some False: 0 / 1), ``real`` for floats
        (written with the shortest repr that reads back exactly; ``nan`` / ``inf`` kept).
    comment : str or None
        Written after the header, every line of it behind ``%``.

    Raises
    ------
    InvalidValue
        ``path`` is not a path or ``comment`` not a string.
    DomainMismatch
        ``A`` is not a gbla Matrix.

    Examples
    --------
    >>> gbla.io.write_mtx("graph.mtx.gz", A, comment="made by gbla")  # doctest: +SKIP
    """
    V.path_like(path)
    if not isinstance(A, Matrix):
        raise V.domain("A", "be a gbla Matrix", type(A).__name__)
    if comment is not None and not isinstance(comment, str):
        raise V.invalid_value("comment", "be a str or None", comment)
    C = A.to_scipy().tocoo()
    rows, cols = C.row.astype(np.int64) + 1, C.col.astype(np.int64) + 1
    values = None if A.is_iso else C.data
    if values is not None and values.dtype == np.bool_:
        values = None if values.all() else values.astype(np.int64)
    if values is None:
        field, fmt = "pattern", "%d %d\n"
    elif values.dtype.kind in "iu":
        field, fmt = "integer", "%d %d %d\n"
    else:  # %r of a Python float is its shortest exact repr
        field, fmt = "real", "%d %d %r\n"
    lines = [f"%%MatrixMarket matrix coordinate {field} general\n"]
    if comment is not None:
        lines += [f"%{' ' if line else ''}{line}\n" for line in comment.split("\n")]
    lines.append(f"{A.nrows} {A.ncols} {len(rows)}\n")
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write("".join(lines).encode())
        # One %-format per block of rows: C-speed formatting without a Python loop per line.
        block = 1 << 18
        for lo in range(0, len(rows), block):
            parts = [rows[lo:lo + block], cols[lo:lo + block]]
            if values is not None:
                parts.append(values[lo:lo + block])
            flat = [None] * (len(parts[0]) * len(parts))
            for j, part in enumerate(parts):
                flat[j::len(parts)] = part.tolist()
            f.write(((fmt * len(parts[0])) % tuple(flat)).encode())


# ================================================================================ arguments
def _existing(path):
    path = V.path_like(path)
    if not path.is_file():
        raise V.invalid_value("path", "name an existing file", str(path))
    return path


def _kind(path):
    name = path.name.lower()
    if name.endswith(".npz"):
        return "npz"
    base = name[:-3] if name.endswith(".gz") else name
    kind = _TEXT_KINDS.get(os.path.splitext(base)[1])
    if kind is None:
        raise V.invalid_value("path", f"end in one of {', '.join(_EXTENSIONS)} (text formats "
                              "optionally followed by .gz)", str(path))
    return kind


# ================================================================================ the byte stream
def _pieces(path, name):
    """The file's bytes (decompressed for .gz) in pieces of arbitrary boundaries."""
    with open(path, "rb") as f:
        if not path.name.lower().endswith(".gz"):
            while piece := f.read(_PIECE):
                yield piece
            return
        inflate = None
        try:
            while raw := f.read(_PIECE // 8):
                while raw:
                    if inflate is None or inflate.eof:  # a new gzip member
                        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    piece = inflate.decompress(raw)
                    raw = inflate.unused_data if inflate.eof else b""
                    if piece:
                        yield piece
        except zlib.error as e:
            raise FormatError(f"{name}: not valid gzip data ({e})") from None
        if inflate is not None and not inflate.eof:
            raise FormatError(f"{name}: the gzip data ends early (a truncated file)")


def _line_chunks(pieces):
    """Chunks of about _CHUNK bytes that end at a newline (the last one maybe not)."""
    carry = b""
    for piece in pieces:
        data = carry + piece if carry else piece
        start = 0
        while len(data) - start > _CHUNK:
            cut = data.rfind(b"\n", start, start + _CHUNK) + 1
            if cut <= start:  # a line longer than a chunk goes whole
                cut = data.find(b"\n", start + _CHUNK) + 1
                if cut == 0:
                    break
            yield data[start:cut]
            start = cut
        cut = data.rfind(b"\n", start) + 1
        if cut > start:
            yield data[start:cut]
            start = cut
        carry = data[start:]
    if carry:
        yield carry


class _Stream:
    """A text file as lines for its header, then as line-aligned chunks for the workers; keeps
    the line count that error messages need."""

    def __init__(self, path, name):
        self.name = name
        self._chunks = _line_chunks(_pieces(path, name))
        self._buf, self._pos, self._line_start = b"", 0, 0
        self.line = 1  # number of the next line
        # Once every chunk is parsed: the number of the last line, and whether it lacks a
        # line end.
        self.last_line, self.ends_open = 0, False

    def error(self, line, reason):
        return FormatError(f"{self.name}: line {line}: {reason}")

    def readline(self):
        """The next line without its line end, or None at the end of the file."""
        while self._pos >= len(self._buf):
            self._buf, self._pos = next(self._chunks, None), 0
            if self._buf is None:
                self._buf = b""
                return None
        end = self._buf.find(b"\n", self._pos)
        end = len(self._buf) if end < 0 else end
        self._line_start, line = self._pos, self._buf[self._pos:end]
        self._pos = end + 1
        self.line += 1
        return line.rstrip(b"\r")

    def unread(self):
        """Put back the line readline just returned."""
        self._pos = self._line_start
        self.line -= 1

    def content_line(self, comment):
        """The next line that is neither blank nor starts with ``comment``; None at the end."""
        while (line := self.readline()) is not None:
            if line.strip() and not line.startswith(comment):
                return line
        return None

    def chunks(self):
        """The rest of the file as line-aligned chunks (``line`` is the number of the first)."""
        rest = self._buf[self._pos:]
        self._buf, self._pos = b"", 0
        return itertools.chain([rest] if rest else [], self._chunks)


class _Bad(Exception):
    """A worker's finding: the byte offset in its chunk and the reason."""

    def __init__(self, offset, reason):
        super().__init__(reason)
        self.offset, self.reason = offset, reason


def _map_chunks(stream, work, carry=None, check=None):
    """``work(chunk, arg)`` on every remaining chunk, in worker threads; returns the results in
    file order and the final carry state, or raises the FormatError of the first bad line.

    ``carry(chunk, state)`` returns (arg, next state): a running value computed in order here as
    chunks are read (state starts at 0). ``check(result, line, chunk)`` sees each result in
    order and may raise. A few chunks are in flight at a time, so the text is dropped as it is
    parsed.
    """
    results, state, pending = [], 0, collections.deque()
    last = b""

    def finish():
        chunk, arg, job = pending.popleft()
        try:
            result, newlines = job.result()
        except _Bad as bad:
            for *_, other in pending:
                other.cancel()
            bad = _earliest(work, chunk, arg, bad)
            raise stream.error(stream.line + chunk.count(b"\n", 0, bad.offset),
                               bad.reason) from None
        if check is not None:
            check(result, stream.line, chunk)
        results.append(result)
        stream.line += newlines

    with ThreadPoolExecutor(_THREADS) as pool:
        for last in stream.chunks():
            arg = None
            if carry is not None:
                arg, state = carry(last, state)
            pending.append((last, arg, pool.submit(_counted, work, last, arg)))
            if len(pending) > 2 * _THREADS:
                finish()
        while pending:
            finish()
    stream.ends_open = last[-1:] not in (b"", b"\n")
    stream.last_line = max(stream.line - 1 + stream.ends_open, 1)
    return results, state


def _counted(work, chunk, arg):
    # the newlines are counted here, in parallel, rather than by the thread that reads
    return work(chunk, arg), int(np.count_nonzero(np.frombuffer(chunk, np.uint8) == 10))


def _earliest(work, chunk, arg, bad):
    """The first bad line of a chunk. A worker checks one rule over the whole chunk before the
    next, so it may report a later line than another rule would: it runs again on the lines
    before the one reported until they pass (an error path, so the repeats cost nothing)."""
    while True:
        cut = chunk.rfind(b"\n", 0, bad.offset) + 1
        if cut == 0:
            return bad
        try:
            work(chunk[:cut], arg)
        except _Bad as earlier:
            bad = earlier
        else:
            return bad


# ================================================================================ tokens
_PAD = 8  # spaces before a chunk's bytes so the 8-byte word ending at any token can be read
_U64 = np.uint64
_ZEROS, _HIGH, _SIXES = _U64(0x3030303030303030), _U64(0xF0F0F0F0F0F0F0F0), _U64(0x0606060606060606)
_PAIRS = _U64(0x000000FF000000FF)
_MUL1, _MUL2 = _U64(100 + (1000000 << 32)), _U64(1 + (10000 << 32))
# _KEEP[L]: the top L bytes of a little-endian word, where a token's last L characters lie.
_KEEP = np.array([0] + [((1 << 64) - 1) ^ ((1 << (8 * (8 - k))) - 1) for k in range(1, 9)], _U64)
_INT = re.compile(rb"-?[0-9]+\Z")


def _digits8(words, end, length):
    """The ``length`` (1-8) bytes before offset ``end`` as a decimal number, and whether they
    are all digits (Lemire's SWAR reduction of eight digits in three multiplies; in place, as
    fresh temporaries cost as much as the arithmetic)."""
    w = words[end - 8]
    keep = _KEEP[length]
    w &= keep
    np.invert(keep, out=keep)
    keep &= _ZEROS
    w |= keep  # the bytes before the token read as leading '0's
    h = w & _HIGH
    ok = h == _ZEROS
    np.add(w, _SIXES, out=h)
    h &= _HIGH
    ok &= h == _ZEROS  # every byte 0x30-0x39
    w -= _ZEROS
    np.right_shift(w, _U64(8), out=h)
    w *= _U64(10)
    w += h
    np.right_shift(w, _U64(16), out=h)
    h &= _PAIRS
    h *= _MUL2
    w &= _PAIRS
    w *= _MUL1
    w += h
    w >>= _U64(32)
    return w.view(np.int64), ok


class _Tokens:
    """The whitespace-separated tokens of one chunk: ``starts``/``ends`` index ``buf``, the
    chunk's bytes after _PAD spaces."""

    def __init__(self, chunk):
        n = len(chunk)
        buf = np.empty(n + 2 * _PAD, np.uint8)
        buf[:_PAD] = buf[_PAD + n:] = 32
        buf[_PAD:_PAD + n] = np.frombuffer(chunk, np.uint8)
        space = buf <= 32  # blank, tab, CR, LF and other control bytes separate tokens
        edges = np.flatnonzero(space[1:] != space[:-1]) + 1
        self.buf, self.starts, self.ends = buf, edges[0::2], edges[1::2]

    def __len__(self):
        return len(self.starts)

    def offset(self, t):
        return int(self.starts[t]) - _PAD

    def text(self, t):
        raw = self.buf[self.starts[t]:self.ends[t]].tobytes().decode("utf-8", "replace")
        return repr(raw if len(raw) <= 40 else raw[:37] + "...")

    def gap_newlines(self):
        """Per token, the newlines since the previous token (for the first: the chunk start)."""
        b, s = self.buf, self.starts
        prev = np.empty_like(s)
        prev[0], prev[1:] = _PAD, self.ends[:-1]
        gap = s - prev
        count = (b[s - 1] == 10).astype(np.int64)
        longest = int(gap.max())
        if longest > 8:  # long blank runs (rare): exact counts from a running total
            total = np.cumsum(b == 10)
            return total[s - 1] - total[prev - 1]
        wide = np.flatnonzero(gap > 1)  # e.g. CR LF, or blanks before a line's first token
        for k in range(2, longest + 1):
            count[wide] += b[s[wide] - k] == 10
            wide = wide[gap[wide] > k]
        return count

    def lines(self):
        """(heads, counts): the first token of each line that has tokens, and its token count."""
        first = self.gap_newlines() > 0
        first[0] = True
        heads = np.flatnonzero(first)
        return heads, np.diff(np.append(heads, len(self)))

    def line_start(self, t):
        """Whether each token of ``t`` is the first byte of its line."""
        s = self.starts[t]
        return (self.buf[s - 1] == 10) | (s == _PAD)

    def ints(self, t, what, signed=True):
        """Tokens ``t`` as int64, or _Bad naming the first that is not an integer (with
        ``signed`` False: not a run of digits)."""
        b, s, e = self.buf, self.starts[t], self.ends[t]
        words = np.ndarray((len(b) - 7,), "<u8", buffer=b, strides=(1,))
        length = e - s
        if signed:
            neg = b[s] == 45  # '-'
            length -= neg
            value, ok = _digits8(words, e, np.clip(length, 1, 8))
            ok &= length > 0
        else:  # a token is never empty, so 1 <= length
            value, ok = _digits8(words, e, np.minimum(length, 8))
        long = np.flatnonzero(length > 8)
        if long.size:  # 9-16 digits: the eight before the last eight, then Python for longer
            high, ok_high = _digits8(words, e[long] - 8, np.clip(length[long] - 8, 1, 8))
            value[long] += high * 100000000
            ok[long] &= ok_high
            for i in long[length[long] > 16]:
                raw = b[s[i]:e[i]].tobytes()
                big = int(raw) if _INT.match(raw) and (signed or raw[:1] != b"-") else None
                ok[i] = big is not None and -2**63 < big < 2**63
                value[i] = abs(big) if ok[i] else 0
        if signed:
            np.negative(value, out=value, where=neg)
        bad = np.flatnonzero(~ok)
        if bad.size:
            i = t[bad[0]]
            raw = b[self.starts[i]:self.ends[i]].tobytes()
            reason = (f"{what} {raw.decode()} does not fit in int64" if _INT.match(raw)
                      and (signed or raw[:1] != b"-") else
                      f"{what} must be an integer; got {self.text(i)}")
            raise _Bad(self.offset(i), reason)
        return value

    def floats(self, t, what):
        """Tokens ``t`` as float64, or _Bad naming the first that is not a number."""
        s, e = self.starts[t], self.ends[t]
        length = e - s
        if not len(t):
            return np.empty(0)
        # The tokens joined by ',' and closed by ',0': with a non-blank separator np.fromstring
        # must consume each token whole ("1.2.3" or "7x" stop it), and so raises on a bad one.
        size = length + 1
        begin = np.cumsum(size) - size
        joined = self.buf[np.arange(int(size.sum())) + np.repeat(s - begin, size)]
        joined[begin + length] = 44
        text = joined.tobytes() + b"0"

        def parse(upto):
            with warnings.catch_warnings():  # NumPy < 2 warns rather than raises
                warnings.simplefilter("error", DeprecationWarning)
                try:
                    out = np.fromstring(text[:upto] + b"0" if upto < len(text) else text,
                                        dtype=np.float64, sep=",")
                except (ValueError, DeprecationWarning):
                    return None
            return out

        values = parse(len(text))
        if values is not None and len(values) == len(t) + 1:
            return values[:-1]
        lo, hi = 0, len(t) - 1  # find the first token whose prefix fails to parse
        while lo < hi:
            mid = (lo + hi) // 2
            good = parse(int(begin[mid] + size[mid]))
            lo, hi = (mid + 1, hi) if good is not None and len(good) == mid + 2 else (lo, mid)
        raise _Bad(self.offset(t[lo]), f"{what} must be a number; got {self.text(t[lo])}")

    def table(self, width, comment, prefix=None, form=""):
        """The data lines of a one-record-per-line format as ``width`` arrays of token numbers
        (one per column). Blank lines and lines starting with ``comment`` are skipped; with a
        ``prefix`` byte, data lines must start with it as a token of its own and other lines
        are an error. ``form`` spells a data line for messages."""
        if not len(self):
            return [np.empty(0, np.int64)] * width
        heads, counts = self.lines()
        first = self.buf[self.starts[heads]]
        remark = (first == comment) & self.line_start(heads)
        if prefix is None:
            data = ~remark
        else:
            data = (first == prefix) & (self.ends[heads] - self.starts[heads] == 1)
            other = np.flatnonzero(~data & ~remark)
            if other.size:
                t = heads[other[0]]
                raise _Bad(self.offset(t), f"expected {form} or a '{chr(comment)}' comment "
                           f"line; got a line starting {self.text(t)}")
        need = width + (prefix is not None)
        wrong = np.flatnonzero(data & (counts != need))
        if wrong.size:
            k = wrong[0]
            raise _Bad(self.offset(heads[k]),
                       f"expected {need} tokens ({form}); got {counts[k]}")
        rows = heads if data.all() else heads[data]
        skip = need - width
        return [rows + (skip + j) for j in range(width)]


def _ids(tok, t, low, high, what, bound):
    """Tokens ``t`` as vertex ids in [low, high] (high None: unbounded), made 0-based."""
    base = f"ids are {low}-based"
    try:
        ids = tok.ints(t, what, signed=False)  # a sign would be an error: no time spent on it
    except _Bad as bad:
        i = t[int(np.searchsorted(tok.starts[t], bad.offset + _PAD))]
        raw = tok.buf[tok.starts[i]:tok.ends[i]].tobytes()
        if raw[:1] == b"-" and _INT.match(raw):
            raise _Bad(bad.offset, f"{what} {raw.decode()} is below {low} ({base})") from None
        raise
    if len(ids):
        if int(ids.min()) < low:
            i = int(np.argmax(ids < low))
            raise _Bad(tok.offset(t[i]), f"{what} {ids[i]} is below {low} ({base})")
        if high is not None and int(ids.max()) > high:
            i = int(np.argmax(ids > high))
            raise _Bad(tok.offset(t[i]), f"{what} {ids[i]} exceeds {bound} {high}")
    return ids - low if low else ids


class _Counter:
    """A ``check`` for _map_chunks: counts the data rows and raises at the first row beyond the
    ``declared`` count, found again in its chunk with the ``table`` the workers used."""

    def __init__(self, stream, declared, table, what, where):
        self.stream, self.declared, self.table = stream, declared, table
        self.what, self.where, self.count = what, where, 0

    def __call__(self, result, line, chunk):
        rows = len(result[0])
        if self.count + rows > self.declared:
            tok = _Tokens(chunk)
            row = int(self.table(tok)[0][self.declared - self.count])
            raise self.stream.error(line + chunk.count(b"\n", 0, tok.offset(row)),
                                    f"more {self.what} than the {self.declared} declared on "
                                    f"line {self.where}")
        self.count += rows

    def at_end(self):
        if self.count < self.declared:
            raise self.stream.error(self.stream.last_line,
                                    f"the file ends after {self.count} {self.what}; line "
                                    f"{self.where} declares {self.declared}")


# ================================================================================ parsed graphs
@dataclass
class _Parsed:
    """A graph as its file states it: 0-based arcs src -> dst, values or None, the shape, and
    for an unweighted file where that shows (for weighted=True's error)."""
    src: np.ndarray
    dst: np.ndarray
    values: object
    shape: tuple
    unweighted: str = ""


def _join(parts, k):
    return np.concatenate([p[k] for p in parts]) if parts else np.empty(0, np.int64)


def _parse_mtx(stream):
    header = stream.readline()
    words = (header or b"").decode("ascii", "replace").lower().split()
    if len(words) != 5 or words[:2] != ["%%matrixmarket", "matrix"]:
        shown = (header or b"")[:60].decode("ascii", "replace")
        raise stream.error(1, "expected the header '%%MatrixMarket matrix coordinate <field> "
                           f"<symmetry>'; got {shown!r}")
    layout, field, symmetry = words[2:]
    if layout != "coordinate":
        raise stream.error(1, f"only sparse 'coordinate' files can be read; got '{layout}'")
    if field not in ("pattern", "integer", "real", "double"):
        raise stream.error(1, f"field must be pattern, integer or real; got '{field}'")
    if symmetry not in ("general", "symmetric", "skew-symmetric"):
        raise stream.error(1, f"symmetry must be general, symmetric or skew-symmetric; got "
                           f"'{symmetry}'")
    line = stream.content_line(b"%")
    size_line = stream.line - 1
    nrows, ncols, nnz = _header_ints(stream, line, 3, "the size line 'rows columns entries'")
    if symmetry != "general" and nrows != ncols:
        raise stream.error(size_line, f"a {symmetry} matrix must be square; got {nrows} x {ncols}")
    width = 2 if field == "pattern" else 3
    form = "'row column'" if width == 2 else "'row column value'"

    def table(tok):
        return tok.table(width, ord("%"), form=form)

    def work(chunk, _):
        tok = _Tokens(chunk)
        cols = table(tok)
        r = _ids(tok, cols[0], 1, nrows, "row index", "the declared row count")
        c = _ids(tok, cols[1], 1, ncols, "column index", "the declared column count")
        v = None
        if width == 3:
            read_values = tok.ints if field == "integer" else tok.floats
            v = read_values(cols[2], "value")
        return r, c, v

    counter = _Counter(stream, nnz, table, "entries", size_line)
    parts, _ = _map_chunks(stream, work, check=counter)
    counter.at_end()
    src, dst = _join(parts, 0), _join(parts, 1)
    values = None if width == 2 else _join(parts, 2)
    if values is not None and values.dtype != (np.int64 if field == "integer" else np.float64):
        values = values.astype(np.int64 if field == "integer" else np.float64)
    if symmetry != "general":  # the file holds one triangle: add the mirror of each off-diagonal
        off = src != dst
        src, dst = np.concatenate([src, dst[off]]), np.concatenate([dst, src[off]])
        if values is not None:
            mirror = values[off] if symmetry == "symmetric" else -values[off]
            values = np.concatenate([values, mirror])
    return _Parsed(src, dst, values, (nrows, ncols),
                   "line 1: the header declares a pattern matrix (no values)")


def _header_ints(stream, line, count, form, at_least=None):
    """The integers of a header line (``count`` of them, or ``at_least`` to ``count``)."""
    if line is None:
        raise stream.error(max(stream.line - 1, 1), f"the file ends before {form}")
    words = line.split()
    if not (at_least or count) <= len(words) <= count or \
            not all(_INT.match(w) and not w.startswith(b"-") for w in words):
        shown = line[:60].decode("ascii", "replace")
        raise stream.error(stream.line - 1, f"expected {form}; got {shown!r}")
    return [int(w) for w in words]


def _parse_edges(stream):
    line = stream.content_line(b"#")
    if line is None:
        return _Parsed(np.empty(0, np.int64), np.empty(0, np.int64), None, (0, 0),
                       "line 1: the file has no edges")
    first_line = stream.line - 1
    width = len(line.split())
    if width not in (2, 3):
        raise stream.error(first_line, f"expected 2 or 3 tokens ('u v' or 'u v w'); got {width}")
    stream.unread()
    form = "'u v' like line %d" % first_line if width == 2 else "'u v w' like line %d" % first_line

    def work(chunk, _):
        tok = _Tokens(chunk)
        cols = tok.table(width, ord("#"), form=form)
        u = _ids(tok, cols[0], 0, None, "vertex id", "")
        v = _ids(tok, cols[1], 0, None, "vertex id", "")
        w = None
        if width == 3:
            try:  # integer weights stay int64; the first other token makes the chunk float
                w = tok.ints(cols[2], "weight")
            except _Bad:
                w = tok.floats(cols[2], "weight")
        return u, v, w

    parts, _ = _map_chunks(stream, work)
    src, dst = _join(parts, 0), _join(parts, 1)
    n = int(max(src.max(), dst.max())) + 1 if len(src) else 0
    values = None
    if width == 3:
        real = any(p[2].dtype.kind == "f" for p in parts)
        values = _join(parts, 2).astype(np.float64 if real else np.int64)
    return _Parsed(src, dst, values, (n, n),
                   f"line {first_line}: edge lines hold 'u v' (no weights)")


def _parse_dimacs(stream):
    while (line := stream.readline()) is not None:
        if line.strip() and not line.startswith(b"c"):
            break
    if line is None:
        raise stream.error(max(stream.line - 1, 1), "no problem line 'p sp <nodes> <arcs>'")
    p_line = stream.line - 1
    words = line.split()
    if words[:1] == [b"a"]:
        raise stream.error(p_line, "an arc before the problem line 'p sp <nodes> <arcs>'")
    if len(words) != 4 or words[:2] != [b"p", b"sp"] or not all(_INT.match(w) and
                                                              w[:1] != b"-" for w in words[2:]):
        raise stream.error(p_line, "expected the problem line 'p sp <nodes> <arcs>'; got "
                           f"{line[:60].decode('ascii', 'replace')!r}")
    n, m = int(words[2]), int(words[3])

    def table(tok):
        return tok.table(3, ord("c"), prefix=ord("a"), form="an arc 'a u v w'")

    def work(chunk, _):
        tok = _Tokens(chunk)
        cols = table(tok)
        bound = "the declared vertex count"
        u = _ids(tok, cols[0], 1, n, "arc endpoint", bound)
        v = _ids(tok, cols[1], 1, n, "arc endpoint", bound)
        return u, v, tok.ints(cols[2], "arc weight")

    counter = _Counter(stream, m, table, "arcs", p_line)
    parts, _ = _map_chunks(stream, work, check=counter)
    counter.at_end()
    return _Parsed(_join(parts, 0), _join(parts, 1), _join(parts, 2), (n, n))


def _parse_metis(stream):
    line = stream.content_line(b"%")
    h = stream.line - 1
    n, m, *rest = _header_ints(stream, line, 4, "the header 'n m [fmt [ncon]]'", at_least=2)
    fmt = line.split()[2].decode() if rest else "0"
    if len(fmt) > 3 or set(fmt) - {"0", "1"}:
        raise stream.error(h, f"fmt must be up to three 0/1 digits (e.g. 1, 10, 11); got '{fmt}'")
    sizes, vertex_weights, edge_weights = (c == "1" for c in fmt.zfill(3))
    ncon = rest[1] if len(rest) > 1 else 1
    lead = sizes + vertex_weights * ncon  # tokens before the neighbours on each line
    step = 2 if edge_weights else 1
    form = ("'neighbour weight' pairs" if edge_weights else "neighbours")
    if lead:
        form = f"{lead} vertex size/weight token(s), then {form}"

    def carry(chunk, vertex):
        # Vertex lines are the lines not starting with '%': counted here, in order, so each
        # worker knows the vertex its chunk starts at.
        lines = chunk.count(b"\n") + bool(chunk[chunk.rfind(b"\n") + 1:].strip())
        remarks = chunk.count(b"\n%") + chunk.startswith(b"%")
        return vertex, vertex + lines - remarks

    def work(chunk, vertex0):
        tok = _Tokens(chunk)
        if not len(tok):
            return np.empty(0, np.int64), np.empty(0, np.int64), None
        line = np.cumsum(tok.gap_newlines())  # chunk line of each token
        heads = np.flatnonzero(np.r_[True, line[1:] != line[:-1]])
        remark = (tok.buf[tok.starts[heads]] == ord("%")) & tok.line_start(heads)
        t = np.arange(len(tok))
        if remark.any():
            skipped = line[heads[remark]]
            keep = ~np.isin(line, skipped)
            t, line = t[keep], line[keep] - np.searchsorted(skipped, line[keep])
            heads = np.flatnonzero(np.r_[True, line[1:] != line[:-1]]) if len(t) else heads[:0]
        vertex = vertex0 + line
        counts = np.diff(np.append(heads, len(t)))
        wrong = np.flatnonzero((counts < lead) | ((counts - lead) % step != 0))
        if wrong.size:
            k = wrong[0]
            raise _Bad(tok.offset(t[heads[k]]), f"expected {form}; got {counts[k]} tokens")
        beyond = np.flatnonzero(vertex[heads] >= n)
        if beyond.size:
            k = heads[beyond[0]]
            raise _Bad(tok.offset(t[k]), f"vertex line {vertex[k] + 1} exceeds the {n} "
                       f"vertices declared on line {h}")
        position = np.arange(len(t)) - np.repeat(heads, counts)
        listed = position >= lead
        nbr = listed & ((position - lead) % step == 0)
        dst = _ids(tok, t[nbr], 1, n, "neighbour", "the declared vertex count")
        w = tok.ints(t[listed & ~nbr], "edge weight") if edge_weights else None
        if lead:  # vertex sizes and weights are skipped, but must be integers
            tok.ints(t[~listed], "vertex weight")
        return vertex[nbr], dst, w

    parts, lines = _map_chunks(stream, work, carry)
    # A final blank line (an isolated last vertex) is lost by writers that join lines with
    # newlines: "...\n" then reads as one line short; accept that one.
    if lines < n - (not stream.ends_open):
        raise stream.error(stream.last_line, f"the file ends after {lines} vertex lines; line {h}"
                           f" declares {n} vertices")
    src, dst = _join(parts, 0), _join(parts, 1)
    if len(src) != 2 * m:
        raise stream.error(h, f"the header declares {m} edges but the lists hold {len(src)} "
                           f"entries ({2 * m} expected: each edge is listed at both ends)")
    values = _join(parts, 2) if edge_weights else None
    return _Parsed(src, dst, values, (n, n),
                   f"line {h}: the header's fmt '{fmt}' declares no edge weights")


_PARSERS = {"mtx": _parse_mtx, "edges": _parse_edges, "dimacs": _parse_dimacs,
            "metis": _parse_metis}


# ================================================================================ matrices
def _csr(src, dst, values, shape):
    """A canonical scipy CSR array of the arcs; a repeated (src, dst) keeps its smallest value
    (fmin, as gbla's min op: NaN loses)."""
    import scipy.sparse as sp
    data = np.ones(len(src), np.bool_) if values is None else values
    S = sp.coo_array((data, (src, dst)), shape=shape).tocsr()  # sums repeats (bool: or)
    if values is not None and S.nnz < len(src):  # repeats were summed: merge them with min
        key = src * max(shape[1], 1) + dst
        order = np.argsort(key, kind="stable")
        key, data = key[order], data[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        data, key = np.fmin.reduceat(data, starts), key[starts]
        S = sp.coo_array((data, (key // max(shape[1], 1), key % max(shape[1], 1))),
                         shape=shape).tocsr()
    return S


def _matrix(src, dst, values, shape):
    A = Matrix.from_scipy(_csr(src, dst, values, shape), device="cpu")
    return A.pattern() if values is None else A


def _symmetrized(A):
    C = A.to_device("cpu").to_scipy().tocoo()
    src, dst = np.r_[C.row, C.col].astype(np.int64), np.r_[C.col, C.row].astype(np.int64)
    return _matrix(src, dst, None if A.is_iso else np.r_[C.data, C.data], A.shape)


def _read_text(path, kind, cache):
    """The graph of a text file as it states it (on the CPU) and why it has no weights; through
    the cache when asked."""
    cache_path = path.with_name(path.name + ".npz")
    stat = path.stat()
    if cache and cache_path.is_file():
        try:
            A, unweighted = _load_cache(cache_path, str(cache_path), source=stat)
            return A, unweighted
        except (OSError, ValueError):
            pass  # stale or damaged (FormatError is a ValueError): parse again and rewrite it
    parsed = _PARSERS[kind](_Stream(path, str(path)))
    A = _matrix(parsed.src, parsed.dst, parsed.values, parsed.shape)
    if cache:
        _write_cache(cache_path, A, parsed.unweighted, stat)
    return A, parsed.unweighted


def _write_cache(cache_path, A, unweighted, stat):
    S = A.to_scipy()
    arrays = dict(version=np.int64(_CACHE_VERSION), indptr=S.indptr, indices=S.indices,
                  shape=np.array(A.shape, np.int64), dtype=np.array(A.dtype.name),
                  iso=np.bool_(A.is_iso), unweighted=np.array(unweighted),
                  source_size=np.int64(stat.st_size), source_mtime_ns=np.int64(stat.st_mtime_ns))
    if not A.is_iso:
        arrays["values"] = S.data
    tmp = None
    try:
        # Written aside and renamed: a reader never sees half a cache.
        with tempfile.NamedTemporaryFile(dir=cache_path.parent, prefix=cache_path.name,
                                         suffix=".tmp", delete=False) as f:
            tmp = f.name
            np.savez(f, **arrays)
        os.replace(tmp, cache_path)
    except OSError as e:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        warnings.warn(f"gbla.io.read: could not write the cache {cache_path} ({e}); the graph "
                      "was read without it", RuntimeWarning, stacklevel=4)


def _load_cache(path, name, source=None):
    """A cached graph and why it has no weights; with ``source`` (the text file's stat), a
    cache recorded for another size or time raises FormatError."""
    import scipy.sparse as sp
    try:
        with np.load(path, allow_pickle=False) as z:
            f = {k: z[k] for k in z.files}
    except (OSError, ValueError, zlib.error) as e:
        raise FormatError(f"{name}: not a gbla graph cache ({e})") from None
    need = {"version", "indptr", "indices", "shape", "dtype", "iso", "unweighted", "source_size",
            "source_mtime_ns"}
    if need - set(f) or int(f["version"]) != _CACHE_VERSION:
        raise FormatError(f"{name}: not a gbla graph cache of version {_CACHE_VERSION}")
    if source is not None and (int(f["source_size"]) != source.st_size or
                               int(f["source_mtime_ns"]) != source.st_mtime_ns):
        raise FormatError(f"{name}: made from another version of the file")
    try:
        shape = tuple(int(x) for x in f["shape"])
        iso = bool(f["iso"])
        values = np.ones(len(f["indices"]), np.bool_) if iso else f["values"]
        S = sp.csr_array((values.astype(str(f["dtype"])), f["indices"], f["indptr"]),
                         shape=shape)
        A = Matrix.from_scipy(S, device="cpu")
    except (KeyError, TypeError, ValueError, GblaError) as e:
        raise FormatError(f"{name}: not a gbla graph cache ({e})") from None
    return (A.pattern() if iso else A), str(f["unweighted"])
