"""Graph generators, deterministic for a seed and identical on the CPU and the GPU: random bits
come from a counter-based hash (splitmix64) evaluated with the same array code on both."""

import math
import numbers

import numpy as np

from . import _backend as B
from . import _storage
from . import _validation as V
from .matrix import Matrix

__all__ = [
    "rmat",
    "rmat_edges",
    "rmat_edge_pieces",
    "rmat_host_csr",
    "rgg",
    "grid2d",
    "with_weights",
    "host_csr_weights",
]

_U64 = np.uint64


def _splitmix64(x):
    z = x + _U64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
    return z ^ (z >> _U64(31))


def _uniform(counter, stream, base):
    """Uniform float64 in [0, 1) for each counter of one stream: 53 bits of a hash."""
    return (_splitmix64(counter * _U64(0x100000001B3) + base + _U64(stream)) >> _U64(11)).astype(
        np.float64
    ) * (2.0**-53)


def rmat(scale, edge_factor=16, seed=0, *, device=None, a=0.57, b=0.19, c=0.19, weights=None):
    """A Graph500 Kronecker (R-MAT) graph: 2**scale vertices, edge_factor * 2**scale generated
    edges with initiator probabilities (a, b, c, 1-a-b-c), vertices randomly relabelled, made
    symmetric, self-loops and duplicates removed.

    Returns an iso (unweighted) bool Matrix, symmetric, whose transpose is itself; with
    ``weights=(lo, hi)`` an int32 Matrix of :func:`with_weights`. The same ``seed`` gives the
    same graph on either device.

    Examples
    --------
    >>> import gbla
    >>> A = gbla.generators.rmat(8, seed=1, device="cpu")
    >>> A.shape, A.is_symmetric
    ((256, 256), True)
    """
    device = B.resolve_device(device)
    src, dst = rmat_edges(scale, edge_factor, seed, device=device, a=a, b=b, c=c)
    A = Matrix.from_edges(src, dst, n=2**scale, device=device)
    A._symmetric, A._T = True, A
    return A if weights is None else with_weights(A, *weights, seed=seed)


def rmat_edges(
    scale, edge_factor=16, seed=0, *, part=0, parts=1, device=None, a=0.57, b=0.19, c=0.19
):
    """Part ``part`` of ``parts`` of :func:`rmat`'s edges, as (src, dst) int64 arrays: the
    generated edges numbered ``part * m // parts`` up to the next part's first (m =
    edge_factor * 2**scale), relabelled, self-loops dropped, each both ways. The parts
    together hold every edge of ``rmat(scale, edge_factor, seed)``, an edge generated twice
    (in one part or two) as often as it was: what ranks that each generate their part pass to
    ``gbla.distributed.DistMatrix.from_edges(..., dup_op="any")``, so that no rank holds the
    whole graph. The relabelling permutation (8 bytes a vertex) is made on every part.

    Examples
    --------
    >>> import gbla
    >>> src, dst = gbla.generators.rmat_edges(6, part=1, parts=4, device="cpu")
    >>> len(src) == len(dst), bool((src != dst).all())
    (True, True)
    """
    spec = _RmatSpec(scale, edge_factor, seed, part, parts, a, b, c)
    xp = B.xp_of(B.resolve_device(device))
    lo, hi = spec.edges(spec.first, spec.stop, spec.relabelling(xp, np.int64), xp)
    return xp.concatenate([lo, hi]), xp.concatenate([hi, lo])


def rmat_edge_pieces(
    scale,
    edge_factor=16,
    seed=0,
    *,
    part=0,
    parts=1,
    piece_edges=2**26,
    device=None,
    a=0.57,
    b=0.19,
    c=0.19,
):
    """:func:`rmat_edges`'s part ``part`` of ``parts`` generated a piece at a time: a callable
    that, each time it is called, yields the part's edges as (src, dst) pieces of at most
    ``piece_edges`` generated edges (each kept edge both ways, so up to twice that many
    entries), int32 ids (int64 from 2**31 vertices). Together the pieces hold the part's
    edges, repeats as often. Only a piece is on ``device`` at a time, and the relabelling
    permutation, made on the first call and kept while the callable lives: what
    ``gbla.distributed.DistMatrix.from_edge_pieces`` builds a graph from without any rank
    holding all its edges.

    Examples
    --------
    >>> import gbla
    >>> pieces = gbla.generators.rmat_edge_pieces(6, piece_edges=300, device="cpu")
    >>> whole, _ = gbla.generators.rmat_edges(6, device="cpu")
    >>> sum(len(src) for src, dst in pieces()) == len(whole)
    True
    """
    spec = _RmatSpec(scale, edge_factor, seed, part, parts, a, b, c)
    piece_edges = V.size(piece_edges, "piece_edges")
    if piece_edges < 1:
        raise V.invalid_value("piece_edges", "be at least 1", piece_edges)
    xp = B.xp_of(B.resolve_device(device))
    kept = {}

    def pieces():
        if "perm" not in kept:
            kept["perm"] = spec.relabelling(xp, np.int32 if spec.n < 2**31 else np.int64)
        for first in range(spec.first, spec.stop, piece_edges):
            lo, hi = spec.edges(first, min(first + piece_edges, spec.stop), kept["perm"], xp)
            yield xp.concatenate([lo, hi]), xp.concatenate([hi, lo])

    return pieces


class _RmatSpec:
    """A checked R-MAT description and part: its vertices ``n``, its generated edges
    ``first`` to ``stop``, and how to make them."""

    def __init__(self, scale, edge_factor, seed, part, parts, a, b, c):
        scale = V.size(scale, "scale")
        if not 1 <= scale <= 32:
            raise V.invalid_value("scale", "satisfy 1 <= scale <= 32", scale)
        edge_factor = V.size(edge_factor, "edge_factor")
        self.seed = V.size(seed, "seed")
        parts = V.size(parts, "parts")
        if parts < 1:
            raise V.invalid_value("parts", "be at least 1", parts)
        part = V.in_range(V.integer(part, "part"), parts, "part")
        for name, p in (("a", a), ("b", b), ("c", c)):
            if not (isinstance(p, (int, float)) and 0 <= p <= 1):
                raise V.invalid_value(name, "be a probability in [0, 1]", p)
        if a + b + c > 1 or a + b >= 1:
            raise V.invalid_value("a + b + c", "be at most 1 (and a + b below 1)", a + b + c)
        self.scale, self.a, self.b, self.c = scale, a, b, c
        self.n, m = 2**scale, edge_factor * 2**scale
        self.first, self.stop = part * m // parts, (part + 1) * m // parts

    def relabelling(self, xp, dtype):
        """The random relabelling of the vertices (the same for every part of a seed)."""
        return xp.asarray(np.random.default_rng(self.seed).permutation(self.n).astype(dtype))

    def edges(self, first, stop, perm, xp):
        """(lower, higher) ends of the generated edges numbered first to stop, relabelled by
        ``perm`` (ids in its dtype), self-loops dropped."""
        a, b, c = self.a, self.b, self.c
        base = _splitmix64(np.full(1, self.seed, _U64))[0]
        counter = xp.arange(first, stop, dtype=_U64)
        src = xp.zeros(stop - first, np.int64)
        dst = xp.zeros(stop - first, np.int64)
        # The Graph500 reference's recursion: per level, a bit of the source with P = c + d,
        # then a bit of the destination conditioned on it.
        c_norm, a_norm = c / (1.0 - (a + b)), a / (a + b)
        for level in range(self.scale):
            src_bit = _uniform(counter, 2 * level, base) > (a + b)
            threshold = xp.where(src_bit, c_norm, a_norm)
            dst_bit = _uniform(counter, 2 * level + 1, base) > threshold
            src |= src_bit.astype(np.int64) << level
            dst |= dst_bit.astype(np.int64) << level
        del counter
        src, dst = perm[src], perm[dst]
        keep = src != dst
        return xp.minimum(src, dst)[keep], xp.maximum(src, dst)[keep]


def rmat_host_csr(scale, edge_factor=16, seed=0, *, parts=16, device=None):
    """:func:`rmat`'s CSR built in host memory a part at a time, for graphs larger than the
    device (an out-of-core search's input): (indptr int64, indices int32 (int64 from 2**31
    vertices)) NumPy arrays, the same graph as ``rmat(scale, edge_factor, seed)``.

    Two passes of ``parts`` steps, each holding about 1/parts of the edges on ``device``: the
    first generates a piece of the edges (:func:`rmat_edge_pieces`) and sends it to the host cut by
    source range; the second brings each source range's pieces back, sorts and deduplicates
    them there, and appends its rows. The host holds the pieces (8 bytes an edge each way) and
    the result.

    Examples
    --------
    >>> import gbla
    >>> indptr, indices = gbla.generators.rmat_host_csr(8, parts=3, seed=1, device="cpu")
    >>> A = gbla.generators.rmat(8, seed=1, device="cpu")
    >>> bool((indptr == A._indptr).all() and (indices == A._indices).all())
    True
    """
    parts = V.size(parts, "parts")
    if parts < 1:
        raise V.invalid_value("parts", "be at least 1", parts)
    device = B.resolve_device(device)
    xp = B.xp_of(device)
    n = 2 ** V.size(scale, "scale")
    ids = np.int32 if n < 2**31 else np.int64
    bounds = np.arange(parts + 1, dtype=np.int64) * n // parts  # source ranges
    pieces = [[] for _ in range(parts)]
    m = V.size(edge_factor, "edge_factor") * n
    # about 1/parts of the generated edges a piece, the relabelling made once for them all
    generated = rmat_edge_pieces(
        scale, edge_factor, seed, piece_edges=max(1, -(-m // parts)), device=device
    )
    for src, dst in generated():
        order = xp.argsort(src)
        src, dst = src[order], dst[order]
        del order
        cuts = B.to_host(xp.searchsorted(src, xp.asarray(bounds)))  # sync: the cut points
        for r in range(parts):
            a, b = int(cuts[r]), int(cuts[r + 1])
            pieces[r].append(
                (B.to_host((src[a:b] - bounds[r]).astype(ids)), B.to_host(dst[a:b].astype(ids)))
            )
        del src, dst
    indptr_parts, index_parts, total = [np.zeros(1, np.int64)], [], 0
    for r in range(parts):
        rows = int(bounds[r + 1] - bounds[r])
        held = pieces[r] or [(np.zeros(0, ids), np.zeros(0, ids))]  # no edge generated
        src = xp.concatenate([xp.asarray(a) for a, _ in held]).astype(np.int64)
        dst = xp.concatenate([xp.asarray(b) for _, b in held]).astype(np.int64)
        pieces[r] = None  # the host copy goes as soon as its range is on the device
        key = xp.unique(src * n + dst)  # sorted by source, then target; repeats once
        del src, dst
        local = key // n
        counts = xp.bincount(local, minlength=rows) if len(key) else xp.zeros(rows, np.int64)
        indptr_parts.append(B.to_host(xp.cumsum(counts)).astype(np.int64) + total)
        index_parts.append(B.to_host((key % n).astype(ids)))
        total += len(key)
        del key, local, counts
    return np.concatenate(indptr_parts), np.concatenate(index_parts) if index_parts else np.zeros(
        0, ids
    )


# Candidate pairs expanded at once in rgg: bounds its working memory (about 40 bytes a pair)
# whatever the radius.
_RGG_CHUNK = 1 << 24


def rgg(scale, seed=0, *, device=None, radius=None, weights=None):
    """A random geometric graph in the style of DIMACS10's ``rgg_n_2_<scale>``: 2**scale points
    uniform in the unit square, two distinct points joined both ways when their Euclidean
    distance is strictly below ``radius``.

    Parameters
    ----------
    scale : int
        log2 of the number of vertices, 1 <= scale <= 30.
    seed : int
        Non-negative; the same seed gives the same graph on either device.
    device : {'cpu', 'gpu', None}
        None: the GPU when CuPy sees one, else the CPU.
    radius : float or None
        Positive and finite; None: DIMACS10's ``0.55 * sqrt(ln n / n)``, which gives an
        average degree near ``pi * 0.55**2 * ln n`` (about 13 at scale 20).
    weights : (int, int) or None
        None: an iso bool Matrix; ``(lo, hi)``: int32 weights of :func:`with_weights`.

    Returns
    -------
    Matrix
        n x n, symmetric (its transpose is itself), no self-loops. Vertex i is the i-th point
        drawn, so vertex ids carry no spatial locality.

    Raises
    ------
    InvalidValue
        For a scale, seed, radius or weights out of range.

    Examples
    --------
    >>> import gbla
    >>> A = gbla.generators.rgg(10, seed=1, device="cpu")
    >>> A.shape, A.is_symmetric
    ((1024, 1024), True)
    """
    scale = V.size(scale, "scale")
    if not 1 <= scale <= 30:
        raise V.invalid_value("scale", "satisfy 1 <= scale <= 30", scale)
    seed = V.size(seed, "seed")
    n = 2**scale
    if radius is None:
        radius = 0.55 * math.sqrt(math.log(n) / n)
    elif (
        isinstance(radius, (bool, np.bool_))
        or not isinstance(radius, numbers.Real)
        or not (math.isfinite(radius) and radius > 0)
    ):
        raise V.invalid_value("radius", "be a positive finite number or None", radius)
    radius = float(radius)
    device = B.resolve_device(device)
    xp = B.xp_of(device)
    x, y = _rgg_points(n, seed, xp)
    # g cells a side of width 1/g > radius, so a pair within the radius lies in one cell or in
    # two adjacent ones; the margin keeps that true through the rounding of x * g.
    g = max(1, int(1.0 / (radius * (1.0 + 1e-9))))
    cx = xp.minimum((x * g).astype(np.int64), g - 1)
    cy = xp.minimum((y * g).astype(np.int64), g - 1)
    cell = cx * g + cy
    order = xp.argsort(cell)
    cell, cx, cy, x, y = cell[order], cx[order], cy[order], x[order], y[order]
    start = xp.zeros(g * g + 1, np.int64)
    start[1:] = xp.cumsum(xp.bincount(cell, minlength=g * g))  # sync: bincount sizes its output
    position = xp.arange(n, dtype=np.int64)
    r2 = radius * radius
    lo_parts, hi_parts = [], []
    # Half the neighbourhood: each unordered pair is met once, from its first point in the
    # (cell, position) order; within a point's own cell only the later positions.
    for dx, dy in ((0, 0), (0, 1), (1, -1), (1, 0), (1, 1)):
        nx, ny = cx + dx, cy + dy
        inside = (nx < g) & (ny >= 0) & (ny < g)
        other = xp.where(inside, nx * g + ny, 0)
        first = position + 1 if (dx, dy) == (0, 0) else start[other]
        count = xp.where(inside, start[other + 1] - first, 0)
        for p, q in _expand(first, count, xp):
            ddx, ddy = x[p] - x[q], y[p] - y[q]
            # Separate array operations (never a fused multiply-add) give the CPU's rounding
            # on the GPU too, so both devices keep the same pairs.
            d2 = ddx * ddx
            d2 = d2 + ddy * ddy
            near = d2 < r2  # sync: (on the GPU) the masks below count their survivors
            lo_parts.append(order[p[near]])
            hi_parts.append(order[q[near]])
    src = xp.concatenate(lo_parts + hi_parts)
    dst = xp.concatenate(hi_parts + lo_parts)
    del lo_parts, hi_parts
    A = Matrix.from_edges(src, dst, n=n, device=device)
    A._symmetric, A._T = True, A
    return A if weights is None else with_weights(A, *weights, seed=seed)


def _rgg_points(n, seed, xp):
    """The coordinates (x, y) of rgg's n points, float64 in [0, 1)."""
    base = _splitmix64(np.full(1, seed, _U64))[0]
    counter = xp.arange(n, dtype=_U64)
    return _uniform(counter, 0, base), _uniform(counter, 1, base)


def _expand(first, count, xp):
    """Yield (p, q) arrays listing every pair (p, first[p] + k) with 0 <= k < count[p], in
    chunks of about _RGG_CHUNK pairs."""
    ends = xp.cumsum(count)
    total = int(ends[-1]) if len(ends) else 0  # sync: the number of pairs to allocate
    lo = 0
    while lo < total:
        hi = min(total, lo + _RGG_CHUNK)
        k = xp.arange(lo, hi, dtype=np.int64)
        # the owner of pair k is the point whose range of ends first exceeds k
        p = xp.searchsorted(ends, k, side="right")
        q = first[p] + (k - (ends[p] - count[p]))
        yield p, q
        lo = hi


def grid2d(rows, cols, *, device=None, weights=None, seed=0):
    """The rows x cols grid graph: vertex r * cols + c joined both ways to its 4 neighbours.
    A road-like graph of diameter rows + cols - 2; iso bool, or int32 weights (lo, hi)."""
    rows, cols = V.size(rows, "rows"), V.size(cols, "cols")
    device = B.resolve_device(device)
    xp = B.xp_of(device)
    ids = xp.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    right = (ids[:, :-1].ravel(), ids[:, 1:].ravel())
    down = (ids[:-1, :].ravel(), ids[1:, :].ravel())
    src = xp.concatenate([right[0], down[0], right[1], down[1]])
    dst = xp.concatenate([right[1], down[1], right[0], down[0]])
    A = Matrix.from_edges(src, dst, n=rows * cols, device=device)
    A._symmetric, A._T = True, A
    return A if weights is None else with_weights(A, *weights, seed=seed)


def with_weights(A, lo, hi, *, seed=0):
    """A's structure with integer weights drawn uniformly from [lo, hi] (int32), the same for
    (i, j) and (j, i), so an undirected graph stays undirected; deterministic for a seed."""
    lo, hi, base = _weight_args(lo, hi, seed)
    xp = B.xp_of(A.device)
    rows = _storage.rows_of_entries(A._indptr, A.nvals, xp).astype(np.int64)
    values = _edge_weights(rows, A._indices, A.ncols, lo, hi, base, xp)
    W = Matrix._wrap(
        A._indptr, A._indices, values.astype(np.int32), A.shape, np.int32, A.device, A._symmetric
    )
    if A._symmetric:
        W._T = W
    return W


def _weight_args(lo, hi, seed):
    lo, hi = (V.integer(v, name) for v, name in ((lo, "lo"), (hi, "hi")))
    if not -(2**31) <= lo <= hi < 2**31:
        raise V.invalid_value("lo, hi", "satisfy -2**31 <= lo <= hi < 2**31", (lo, hi))
    seed = V.size(seed, "seed")
    return lo, hi, _splitmix64(np.full(1, seed, _U64))[0]


def _edge_weights(rows, cols, ncols, lo, hi, base, xp):
    """:func:`with_weights`'s int64 weight of each edge (rows[k], cols[k]): a hash of the pair
    with its ends in order, so that (i, j) and (j, i) weigh the same."""
    cols = cols.astype(np.int64)
    key = (xp.minimum(rows, cols) * max(ncols, 1) + xp.maximum(rows, cols)).astype(_U64)
    return (_uniform(key, 0, base) * (hi - lo + 1)).astype(np.int64) + lo


def host_csr_weights(indptr, indices, lo, hi, *, seed=0, out=None, rows_at_once=2**18):
    """:func:`with_weights`'s weights for a square CSR kept in host memory
    (:func:`rmat_host_csr`'s, an out-of-core search's input): for each edge the value
    ``with_weights`` gives that matrix, computed ``rows_at_once`` rows at a time by a thread
    per CPU (NumPy lets go of the GIL), into ``out`` (a NumPy array of one value an edge:
    pinned host memory, a float dtype) or a new int32 array, which is returned.

    Examples
    --------
    >>> import gbla
    >>> indptr, indices = gbla.generators.rmat_host_csr(8, seed=1, device="cpu")
    >>> w = gbla.generators.host_csr_weights(indptr, indices, 1, 255, seed=3)
    >>> W = gbla.generators.with_weights(gbla.generators.rmat(8, seed=1), 1, 255, seed=3)
    >>> bool((w == W.to_scipy().data).all())
    True
    """
    lo, hi, base = _weight_args(lo, hi, seed)
    indptr = np.asarray(indptr)
    indices = np.asarray(indices)
    n = len(indptr) - 1
    if out is None:
        out = np.empty(len(indices), np.int32)
    elif not isinstance(out, np.ndarray) or out.shape != indices.shape:
        raise V.invalid_value(
            "out", f"be a NumPy array of shape {indices.shape}", getattr(out, "shape", out)
        )
    step = V.size(rows_at_once, "rows_at_once")
    if step < 1:
        raise V.invalid_value("rows_at_once", "be at least 1", step)

    def fill(r0):
        r1 = min(r0 + step, n)
        e0, e1 = int(indptr[r0]), int(indptr[r1])
        rows = np.repeat(np.arange(r0, r1, dtype=np.int64), np.diff(indptr[r0 : r1 + 1]))
        out[e0:e1] = _edge_weights(rows, indices[e0:e1], n, lo, hi, base, np)

    B.host_map(fill, range(0, n, step))
    return out
