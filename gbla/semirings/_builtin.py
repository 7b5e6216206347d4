"""The builtin ops, monoids and semirings. Semirings are generated from a product of monoids and
multiply ops; each gets every dtype both sides can take."""

import numpy as np

from .._dtypes import BOOL, DTYPES, FP32, FP64, INT64, INTEGER, NUMERIC
from ._core import ANY_VALUE, BinaryOp, Monoid, Semiring, UnaryOp


def _first(x, y):
    return np.broadcast_arrays(x, y)[0].copy()


def _second(x, y):
    return np.broadcast_arrays(x, y)[1].copy()


def _pair(x, y):
    return np.ones(np.broadcast_shapes(np.shape(x), np.shape(y)), dtype=np.result_type(x, y))


def _bucket_end(x, y):
    with np.errstate(all="ignore"):  # IEEE results (x / 0, 0 / 0), as the GPU's, no warning
        return np.fmax((np.floor(x / y) + 1) * y, x)


def _bandnot(x, y):
    return np.bitwise_and(x, np.invert(y))


# min/max ignore NaN (fmin/fmax), as SuiteSparse:GraphBLAS does; identical on CPU and GPU.
_MIN_CUDA = "((x != x) ? y : ((y != y) ? x : ((y < x) ? y : x)))"
_MAX_CUDA = "((x != x) ? y : ((y != y) ? x : ((y > x) ? y : x)))"

_binary = [
    BinaryOp("plus", "(x + y)", np.add, NUMERIC, commutative=True),
    BinaryOp("minus", "(x - y)", np.subtract, NUMERIC),
    BinaryOp("times", "(x * y)", np.multiply, NUMERIC, commutative=True),
    BinaryOp("div", "(x / y)", np.divide, (FP32, FP64)),  # floats only: C and NumPy agree there
    BinaryOp("min", _MIN_CUDA, np.fmin, DTYPES, commutative=True),
    BinaryOp("max", _MAX_CUDA, np.fmax, DTYPES, commutative=True),
    BinaryOp("first", "x", _first, DTYPES, uses_y=False),
    BinaryOp("second", "y", _second, DTYPES, uses_x=False),
    BinaryOp("pair", "1", _pair, DTYPES, commutative=True, uses_x=False, uses_y=False),
    BinaryOp("any", "x", _first, DTYPES, commutative=True),
    BinaryOp("lor", "(x || y)", np.logical_or, (BOOL,), commutative=True),
    BinaryOp("land", "(x && y)", np.logical_and, (BOOL,), commutative=True),
    BinaryOp("lxor", "(x != y)", np.logical_xor, (BOOL,), commutative=True),
    BinaryOp("eq", "(x == y)", np.equal, DTYPES, result=BOOL, commutative=True),
    BinaryOp("ne", "(x != y)", np.not_equal, DTYPES, result=BOOL, commutative=True),
    BinaryOp("lt", "(x < y)", np.less, DTYPES, result=BOOL),
    BinaryOp("le", "(x <= y)", np.less_equal, DTYPES, result=BOOL),
    BinaryOp("gt", "(x > y)", np.greater, DTYPES, result=BOOL),
    BinaryOp("ge", "(x >= y)", np.greater_equal, DTYPES, result=BOOL),
    BinaryOp("secondi", "k", lambda k: k, DTYPES, result=INT64, positional=True),
    # Bitwise, on a word of bits (a bit-parallel search keeps a source a bit: gbla.bfs)
    BinaryOp("bor", "(x | y)", np.bitwise_or, INTEGER, commutative=True),
    BinaryOp("band", "(x & y)", np.bitwise_and, INTEGER, commutative=True),
    BinaryOp("bxor", "(x ^ y)", np.bitwise_xor, INTEGER, commutative=True),
    BinaryOp("bandnot", "(x & ~y)", _bandnot, INTEGER),  # the bits of x that y lacks
    # The end of x's bucket of width y, (floor(x / y) + 1) * y, and never below x: where y is
    # under x's float spacing the product can round below x, and x ends the bucket instead
    # (delta-stepping's lowest bucket: gbla.sssp). Correctly rounded ops only (no nextafter,
    # whose float on the GPU skips the subnormals NumPy steps to), so both devices agree.
    BinaryOp(
        "bucket_end",
        "fmax((floor(x / y) + 1) * y, x)",
        _bucket_end,
        (FP32, FP64),
    ),
]
BINARY = {op.name: op for op in _binary}

_unary = [
    UnaryOp("identity", "x", lambda x: x.copy(), DTYPES),
    UnaryOp("ainv", "(-x)", np.negative, NUMERIC),
    UnaryOp("abs", "((x < 0) ? -x : x)", np.abs, NUMERIC),
    UnaryOp("lnot", "(!x)", np.logical_not, (BOOL,)),
    UnaryOp("one", "1", np.ones_like, DTYPES),
    UnaryOp("floor", "floor(x)", np.floor, (FP32, FP64)),
    UnaryOp("rowindex", "i", lambda i: i, DTYPES, result=INT64, positional=True),
]
UNARY = {op.name: op for op in _unary}


def _top(dtype):
    return np.inf if dtype.kind == "f" else (True if dtype == BOOL else np.iinfo(dtype).max)


def _bottom(dtype):
    return -np.inf if dtype.kind == "f" else (False if dtype == BOOL else np.iinfo(dtype).min)


def _times_terminal(dtype):
    return 0 if dtype.kind == "i" else None  # 0 * inf is NaN, so floats have no terminal


_monoids = [
    Monoid(BINARY["plus"], identity=lambda d: 0),
    Monoid(BINARY["times"], identity=lambda d: 1, terminal=_times_terminal),
    Monoid(BINARY["min"], identity=_top, terminal=_bottom, idempotent=True),
    Monoid(BINARY["max"], identity=_bottom, terminal=_top, idempotent=True),
    Monoid(BINARY["any"], identity=lambda d: 0, terminal=ANY_VALUE, idempotent=True),
    Monoid(BINARY["lor"], identity={BOOL: False}, terminal={BOOL: True}, idempotent=True),
    Monoid(BINARY["land"], identity={BOOL: True}, terminal={BOOL: False}, idempotent=True),
    Monoid(BINARY["lxor"], identity={BOOL: False}),
    Monoid(BINARY["eq"], identity={BOOL: True}, name="eq", dtypes=(BOOL,)),
    # every bit set (-1 in two's complement) absorbs bor and is band's identity
    Monoid(BINARY["bor"], identity=lambda d: 0, terminal=lambda d: -1, idempotent=True),
    Monoid(BINARY["band"], identity=lambda d: -1, terminal=lambda d: 0, idempotent=True),
    Monoid(BINARY["bxor"], identity=lambda d: 0),
]
MONOIDS = {m.name: m for m in _monoids}

# Pairs (add, multiply) whose distributivity the law tests check.
_DISTRIBUTIVE = (
    {
        ("min", "plus"),
        ("max", "plus"),
        ("plus", "times"),
        ("min", "max"),
        ("max", "min"),
        ("min", "min"),
        ("max", "max"),
        ("lor", "land"),
        ("land", "lor"),
        ("lxor", "land"),
        ("lor", "lor"),
        ("land", "land"),
    }
    | {(a, m) for a in ("min", "max", "any", "lor", "land") for m in ("first", "second")}
    | {(a, "pair") for a in ("any", "lor", "land", "min", "max")}
    | {("bor", "band"), ("band", "bor"), ("bxor", "band"), ("bor", "bor"), ("band", "band")}
    | {(a, m) for a in ("bor", "band") for m in ("first", "second")}
)

_PRODUCT = [
    (
        ("min", "max", "plus", "times", "any"),
        ("plus", "minus", "times", "min", "max", "first", "second", "pair"),
    ),
    (
        ("lor", "land", "lxor", "eq", "any"),
        ("land", "lor", "lxor", "eq", "first", "second", "pair"),
    ),
    (("any", "min", "max", "plus"), ("secondi",)),
    (("bor", "band", "bxor"), ("band", "bor", "bxor", "first", "second")),
]


def _semirings():
    out = {}
    for adds, mults in _PRODUCT:
        for a in adds:
            for m in mults:
                name = f"{a}_{m}"
                add, mul = MONOIDS[a], BINARY[m]
                dtypes = tuple(d for d in mul.dtypes if mul.result_dtype(d) in add.dtypes)
                if dtypes and name not in out:
                    out[name] = Semiring(
                        add, mul, dtypes=dtypes, distributive=(a, m) in _DISTRIBUTIVE
                    )
    return out


SEMIRINGS = _semirings()
