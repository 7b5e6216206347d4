"""gbla.Scalar: a value where the vectors are. reduce(out=) fills one without a host read; select's
thunk, apply's bound operand and assign's value take one and give what the same host value
gives; inside a loop recorded on the device it carries a reduction from op to op."""

import numpy as np
import pytest

import gbla
from gbla.semirings import binary

from .conftest import DEVICES, SKIP_NO_GPU, host

# u = [_, 4.0, _, 2.5, 7.0]
IDX, VALS, N = [1, 3, 4], [4.0, 2.5, 7.0], 5


def vector(device, dtype=np.float64):
    return gbla.Vector.from_coo(IDX, np.array(VALS, dtype), N, device=device)


def coo(v):
    return tuple(host(a).tolist() for a in v.to_coo())


@pytest.mark.parametrize("device", DEVICES)
def test_a_scalar_holds_its_value_dtype_and_device(device):
    s = gbla.Scalar.from_value(2.5, device=device)
    assert (s.value, s.dtype, s.device) == (2.5, np.float64, device)
    assert float(s) == 2.5 and int(gbla.Scalar.from_value(7, device=device)) == 7
    assert gbla.Scalar.from_value(7, device=device).dtype == np.int64
    assert gbla.Scalar.from_value(3, np.float32, device=device).dtype == np.float32
    z = gbla.Scalar.new(np.int32, device=device)
    assert (z.value, z.dtype) == (0, np.int32)
    assert "2.5" in repr(s)


def test_bad_scalars_are_refused_by_name():
    with pytest.raises(TypeError, match="from_value"):
        gbla.Scalar()
    with pytest.raises(gbla.DomainMismatch, match="dtype"):
        gbla.Scalar.new(np.complex128, device="cpu")
    with pytest.raises(gbla.InvalidValue, match="value"):
        gbla.Scalar.from_value(1.5, np.int32, device="cpu")
    with pytest.raises(gbla.DomainMismatch, match="out must be a gbla.Scalar"):
        gbla.reduce(vector("cpu"), "min", out=np.zeros(()))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("monoid, expected", [("min", 2.5), ("max", 7.0), ("plus", 13.5)])
def test_reduce_into_a_scalar_equals_reduce(device, monoid, expected):
    u = vector(device)
    s = gbla.Scalar.new(device=device)
    assert gbla.reduce(u, monoid, out=s) is s
    assert s.value == expected == gbla.reduce(u, monoid)
    # cast to the scalar's dtype, and the identity of an empty vector
    i = gbla.reduce(u, monoid, out=gbla.Scalar.new(np.int64, device=device))
    assert i.value == int(expected)
    empty = gbla.reduce(
        gbla.Vector.new(N, device=device), "min", out=gbla.Scalar.new(device=device)
    )
    assert empty.value == np.inf


@pytest.mark.parametrize("device", DEVICES)
def test_ops_read_a_scalar_as_they_read_its_value(device):
    u = vector(device)
    s = gbla.reduce(u, "min", out=gbla.Scalar.new(device=device))  # 2.5
    for op in (">", "<=", "=="):
        assert coo(gbla.select(u, op, s)) == coo(gbla.select(u, op, 2.5))
    assert coo(gbla.apply(u, binary.minus, right=s)) == ([1, 3, 4], [1.5, 0.0, 4.5])
    assert coo(gbla.apply(u, binary.minus, left=s)) == ([1, 3, 4], [-1.5, 0.0, -4.5])
    w = gbla.assign(gbla.Vector.new(N, device=device), s, mask=u.S)
    assert coo(w) == ([1, 3, 4], [2.5, 2.5, 2.5])
    # a Scalar keeps its dtype, as a NumPy scalar does: int32 u minus an int64 Scalar is int64
    k = gbla.Scalar.from_value(np.int64(1), device=device)
    assert gbla.apply(vector(device, np.int32), binary.minus, right=k).dtype == np.int64


@pytest.mark.parametrize("device", DEVICES)
def test_a_scalar_plus_a_number_is_its_value_plus_that_number_in_its_dtype(device):
    s = gbla.Scalar.from_value(np.float32(0.1), device=device)
    for got, want in (
        (s + 0.2, np.float32(0.1) + np.float32(0.2)),
        (0.2 + s, np.float32(0.1) + np.float32(0.2)),
        (np.float32(0.2) + s, np.float32(0.1) + np.float32(0.2)),
        (s - 0.2, np.float32(0.1) - np.float32(0.2)),
    ):
        assert got.dtype == np.float32 and got.device == device
        assert got.value == want and got.value.dtype == np.float32
    shifted = s + 1.0
    gbla.reduce(vector(device, np.float32), "min", out=s)  # s written later: s + 1 follows it
    assert shifted.value == np.float32(3.5) and "+" in repr(shifted)
    k = gbla.Scalar.from_value(np.int32(5), device=device)
    assert (k - 7).value == -2 and (k - 7).dtype == np.int32
    with pytest.raises(gbla.InvalidValue, match="c"):
        k + 2.5  # not exact in int32
    with pytest.raises(gbla.DomainMismatch, match="out"):
        gbla.reduce(vector(device), "min", out=gbla.Scalar.new(device=device) + 1.0)
    with pytest.raises(TypeError):
        s + vector(device)
    # what a kernel reads and adds: s itself, s and c, none for a shift of a shift
    assert s._split_shift() == (s, None)
    base, c = (s + 1.0)._split_shift()
    assert base is s and c == np.float32(1.0) and c.dtype == np.float32
    assert ((s + 1.0) + 2.0)._split_shift() is None
    assert ((s + 1.0) + 2.0).value == s.value + np.float32(1.0) + np.float32(2.0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_ops_read_a_scalar_plus_a_number_as_its_value(device, dtype):
    u = (
        vector(device, dtype)
        if dtype != np.int64
        else gbla.Vector.from_coo(IDX, np.array([4, 2, 7], dtype), N, device=device)
    )
    s = gbla.reduce(u, "min", out=gbla.Scalar.new(dtype, device=device))
    c = dtype(2)
    for op in (">", "<=", "=="):
        want = coo(gbla.select(u, op, (s + c).value))
        assert coo(gbla.select(u, op, s + c)) == want
        kept, rest = gbla.split(u, op, s + c)
        assert coo(kept) == want and len(coo(rest)[0]) == 3 - len(want[0])
    assert coo(gbla.apply(u, binary.minus, right=s + c)) == coo(
        gbla.apply(u, binary.minus, right=(s + c).value)
    )


def _device_and_eager(body, state):
    """{mode: (iterations, the round each entry left in)} of body's loop over ``state``
    (its "left" the condition), recorded on the device and run from Python."""
    results = {}
    for mode in ("device", "eager"):
        run = {}
        out = gbla.iterate(body, state, while_nonempty="left", mode=mode, stats=run)
        results[mode] = (run["iterations"], coo(out["round"]))
    return results


@pytest.mark.gpu
@SKIP_NO_GPU
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_a_window_of_a_reduction_plus_a_number_on_the_device_equals_it_eagerly(dtype):
    # delta-stepping's window: the entries within 2 of the smallest, split off each round,
    # the rest carried; the kernel adds 2 to the reduction (no launch of its own)
    rng = np.random.default_rng(8)
    values = rng.integers(0, 40, 300).astype(dtype)
    start = gbla.Vector.from_coo(np.arange(300), values, 300, device="gpu")
    low = gbla.Scalar.new(dtype, device="gpu")

    def body(s, i):
        gbla.reduce(s.left, "min", out=low)
        front, s.left = gbla.split(s.left, "<=", low + dtype(2))
        gbla.assign(s.round, i, mask=front.S)

    state = {"left": start, "round": gbla.Vector.new(300, np.int64, device="gpu")}
    results = _device_and_eager(body, state)
    assert results["device"] == results["eager"]
    assert results["device"][0] > 5


@pytest.mark.gpu
@SKIP_NO_GPU
def test_a_scalar_carries_a_reduction_between_ops_on_the_device():
    # Each iteration drops the entries at the current minimum: 5 values, 3 distinct, 3 rounds.
    start = gbla.Vector.from_coo([0, 1, 2, 3, 4], [3.0, 1.0, 2.0, 1.0, 3.0], 5, device="gpu")
    low = gbla.Scalar.new(device="gpu")

    def body(s, i):
        gbla.reduce(s.left, "min", out=low)
        s.left = gbla.select(s.left, ">", low)
        gbla.assign(s.round, i, mask=gbla.select(s.left, "<=", 2.0).S)

    state = {"left": start, "round": gbla.Vector.new(5, np.int64, device="gpu")}
    results = _device_and_eager(body, state)
    assert results["device"] == results["eager"] == (3, ([2], [1]))


@pytest.mark.gpu
@SKIP_NO_GPU
def test_reading_a_scalar_inside_a_recorded_body_raises():
    start = {"q": gbla.Vector.from_coo([0], 1.0, 3, device="gpu")}
    low = gbla.Scalar.new(device="gpu")

    def body(s, i):
        gbla.reduce(s.q, "min", out=low)
        float(low)

    with pytest.raises(gbla.CaptureError, match="Scalar.value"):
        gbla.iterate(body, start, while_nonempty="q", mode="device")
