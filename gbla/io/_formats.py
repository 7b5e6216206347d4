"""One parser per text format gbla parses itself (SNAP edge lists, DIMACS, METIS): each reads
a _Stream into the graph its file states. Matrix Market is read by SciPy (_mtx)."""

from dataclasses import dataclass

import numpy as np

from ._errors import _largest_vertex_count, _too_large
from ._text import _INT, _Bad, _Counter, _ids, _map_chunks, _Tokens


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


def _check_fits(stream, line, declared, n, entries, valued):
    """Raise FormatError at header ``line`` when the graph it declares cannot be held here."""
    reason = _too_large(declared, n, entries, valued)
    if reason is not None:
        raise stream.error(line, reason)


def _header_ints(stream, line, count, form, at_least=None):
    """The integers of a header line (``count`` of them, or ``at_least`` to ``count``)."""
    if line is None:
        raise stream.error(max(stream.line - 1, 1), f"the file ends before {form}")
    words = line.split()
    if not (at_least or count) <= len(words) <= count or not all(
        _INT.match(w) and not w.startswith(b"-") for w in words
    ):
        shown = line[:60].decode("ascii", "replace")
        raise stream.error(stream.line - 1, f"expected {form}; got {shown!r}")
    return [int(w) for w in words]


def _parse_edges(stream):
    line = stream.content_line(b"#")
    if line is None:
        return _Parsed(
            np.empty(0, np.int64),
            np.empty(0, np.int64),
            None,
            (0, 0),
            "line 1: the file has no edges",
        )
    first_line = stream.line - 1
    width = len(line.split())
    if width not in (2, 3):
        raise stream.error(first_line, f"expected 2 or 3 tokens ('u v' or 'u v w'); got {width}")
    stream.unread()
    form = f"'u v' like line {first_line}" if width == 2 else f"'u v w' like line {first_line}"

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

    read = 0

    def check(result, line, chunk):
        # n is the largest id + 1, so one id decides the size: an id too large for this
        # machine is named at its line, before the rest of the file is read.
        nonlocal read
        u, v = result[0], result[1]
        read += len(u)
        limit = _largest_vertex_count(read, width == 3)
        if limit is None or not len(u) or max(int(u.max()), int(v.max())) < limit:
            return
        tok = _Tokens(chunk)
        row = int(np.argmax((u >= limit) | (v >= limit)))
        column = 0 if u[row] >= limit else 1
        big = int((u, v)[column][row])
        at = tok.offset(tok.table(width, ord("#"))[column][row])
        # Relabelling would read it, but ids are the vertices' names (a source given on the
        # command line is one): the file's owner is told how instead.
        raise stream.error(
            line + chunk.count(b"\n", 0, at),
            _too_large(
                f"vertex id {big} (a graph of {big + 1} vertices)", big + 1, read, width == 3
            )
            + " (ids are vertex numbers, n the largest + 1: number the "
            "vertices 0..n-1 to read it)",
        )

    parts, _ = _map_chunks(stream, work, check=check)
    src, dst = _join(parts, 0), _join(parts, 1)
    n = int(max(src.max(), dst.max())) + 1 if len(src) else 0
    values = None
    if width == 3:
        real = any(p[2].dtype.kind == "f" for p in parts)
        values = _join(parts, 2).astype(np.float64 if real else np.int64)
    return _Parsed(
        src, dst, values, (n, n), f"line {first_line}: edge lines hold 'u v' (no weights)"
    )


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
    if (
        len(words) != 4
        or words[:2] != [b"p", b"sp"]
        or not all(_INT.match(w) and w[:1] != b"-" for w in words[2:])
    ):
        raise stream.error(
            p_line,
            "expected the problem line 'p sp <nodes> <arcs>'; got "
            f"{line[:60].decode('ascii', 'replace')!r}",
        )
    n, m = int(words[2]), int(words[3])
    _check_fits(stream, p_line, f"a graph of {n} nodes and {m} arcs", n, m, True)

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
    _check_fits(stream, h, f"a graph of {n} vertices and {m} edges", n, 2 * m, True)
    fmt = line.split()[2].decode() if rest else "0"
    if len(fmt) > 3 or set(fmt) - {"0", "1"}:
        raise stream.error(h, f"fmt must be up to three 0/1 digits (e.g. 1, 10, 11); got '{fmt}'")
    sizes, vertex_weights, edge_weights = (c == "1" for c in fmt.zfill(3))
    ncon = rest[1] if len(rest) > 1 else 1
    lead = sizes + vertex_weights * ncon  # tokens before the neighbours on each line
    step = 2 if edge_weights else 1
    form = "'neighbour weight' pairs" if edge_weights else "neighbours"
    if lead:
        form = f"{lead} vertex size/weight token(s), then {form}"

    def carry(chunk, vertex):
        # Vertex lines are the lines not starting with '%': counted here, in order, so each
        # worker knows the vertex its chunk starts at.
        lines = chunk.count(b"\n") + bool(chunk[chunk.rfind(b"\n") + 1 :].strip())
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
            raise _Bad(
                tok.offset(t[k]),
                f"vertex line {vertex[k] + 1} exceeds the {n} vertices declared on line {h}",
            )
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
        raise stream.error(
            stream.last_line,
            f"the file ends after {lines} vertex lines; line {h} declares {n} vertices",
        )
    src, dst = _join(parts, 0), _join(parts, 1)
    if len(src) != 2 * m:
        raise stream.error(
            h,
            f"the header declares {m} edges but the lists hold {len(src)} "
            f"entries ({2 * m} expected: each edge is listed at both ends)",
        )
    values = _join(parts, 2) if edge_weights else None
    return _Parsed(
        src, dst, values, (n, n), f"line {h}: the header's fmt '{fmt}' declares no edge weights"
    )


_PARSERS = {"edges": _parse_edges, "dimacs": _parse_dimacs, "metis": _parse_metis}
