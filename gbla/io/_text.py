"""Text in line-aligned chunks parsed by worker threads: the byte stream, the thread pool that
maps a parser over the chunks, and the tokenizer the parsers read a chunk with."""

import collections
import itertools
import os
import re
import warnings
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._errors import FormatError

# A chunk this size (bytes) keeps the tokenizer's temporaries in cache (0.5-1 MB measured best).
_CHUNK = 1 << 20
_PIECE = 1 << 23  # bytes read (or decompressed from) the file at a time
_THREADS = max(1, min(8, os.cpu_count() or 1))


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
        self._line_start, line = self._pos, self._buf[self._pos : end]
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
        rest = self._buf[self._pos :]
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
            raise stream.error(
                stream.line + chunk.count(b"\n", 0, bad.offset), bad.reason
            ) from None
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
        buf[:_PAD] = buf[_PAD + n :] = 32
        buf[_PAD : _PAD + n] = np.frombuffer(chunk, np.uint8)
        space = buf <= 32  # blank, tab, CR, LF and other control bytes separate tokens
        edges = np.flatnonzero(space[1:] != space[:-1]) + 1
        self.buf, self.starts, self.ends = buf, edges[0::2], edges[1::2]

    def __len__(self):
        return len(self.starts)

    def offset(self, t):
        return int(self.starts[t]) - _PAD

    def text(self, t):
        raw = self.buf[self.starts[t] : self.ends[t]].tobytes().decode("utf-8", "replace")
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
                raw = b[s[i] : e[i]].tobytes()
                big = int(raw) if _INT.match(raw) and (signed or raw[:1] != b"-") else None
                ok[i] = big is not None and -(2**63) < big < 2**63
                value[i] = abs(big) if ok[i] else 0
        if signed:
            np.negative(value, out=value, where=neg)
        bad = np.flatnonzero(~ok)
        if bad.size:
            i = t[bad[0]]
            raw = b[self.starts[i] : self.ends[i]].tobytes()
            reason = (
                f"{what} {raw.decode()} does not fit in int64"
                if _INT.match(raw) and (signed or raw[:1] != b"-")
                else f"{what} must be an integer; got {self.text(i)}"
            )
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
                    out = np.fromstring(
                        text[:upto] + b"0" if upto < len(text) else text, dtype=np.float64, sep=","
                    )
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
                raise _Bad(
                    self.offset(t),
                    f"expected {form} or a '{chr(comment)}' comment "
                    f"line; got a line starting {self.text(t)}",
                )
        need = width + (prefix is not None)
        wrong = np.flatnonzero(data & (counts != need))
        if wrong.size:
            k = wrong[0]
            raise _Bad(self.offset(heads[k]), f"expected {need} tokens ({form}); got {counts[k]}")
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
        raw = tok.buf[tok.starts[i] : tok.ends[i]].tobytes()
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
            raise self.stream.error(
                line + chunk.count(b"\n", 0, tok.offset(row)),
                f"more {self.what} than the {self.declared} declared on line {self.where}",
            )
        self.count += rows

    def at_end(self):
        if self.count < self.declared:
            raise self.stream.error(
                self.stream.last_line,
                f"the file ends after {self.count} {self.what}; line "
                f"{self.where} declares {self.declared}",
            )
