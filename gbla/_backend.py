"""CPU (NumPy/SciPy) and GPU (CuPy) array modules and the choice of device.

Everything above this module writes array code against ``xp`` (numpy or cupy) so the same
expression runs on both devices.
"""

import concurrent.futures
import functools
import os
import threading

import numpy as np

from .exceptions import CaptureError, DeviceMismatch

__all__ = [
    "DEVICES",
    "gpu_available",
    "default_device",
    "resolve_device",
    "xp_of",
    "array_device",
    "to_host",
    "to_device",
    "device_loop",
    "refuse_host_read",
    "to_numpy",
    "synchronize",
    "free_device_bytes",
    "scatter_reduce",
    "SCATTER_OPS",
    "compress",
    "host_threads",
    "host_map",
]

DEVICES = ("cpu", "gpu")


@functools.lru_cache(maxsize=None)
def _cupy():
    try:
        import cupy
    except Exception:  # ImportError, or a broken CUDA install raising at import
        return None
    from . import _prebuilt  # kernels compiled ahead of time, taken before CuPy compiles

    _prebuilt.install(cupy)
    return cupy


@functools.lru_cache(maxsize=None)
def gpu_available():
    """True when CuPy imports and sees at least one CUDA device."""
    cp = _cupy()
    if cp is None:
        return False
    try:
        return cp.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def default_device():
    return "gpu" if gpu_available() else "cpu"


def resolve_device(device):
    """Map ``None`` to the default device and check that the named device can be used."""
    if device is None:
        return default_device()
    if device not in DEVICES:
        raise DeviceMismatch(f"device must be one of {DEVICES} or None; got {device!r}")
    if device == "gpu" and not gpu_available():
        raise DeviceMismatch(
            "device must be 'cpu' on this machine (CuPy or a CUDA device is missing); got 'gpu'"
        )
    return device


def xp_of(device):
    return _cupy() if device == "gpu" else np


def array_device(a):
    """'gpu' for a CuPy array, 'cpu' for anything NumPy can take."""
    cp = _cupy()
    if cp is not None and isinstance(a, cp.ndarray):
        return "gpu"
    return "cpu"


def to_host(a):
    return a.get() if array_device(a) == "gpu" else np.asarray(a)


def to_device(a, device):
    """The array on ``device``, copied only when it lives elsewhere."""
    if device == "gpu":
        return _cupy().asarray(a)
    return to_host(a)


def to_device_together(arrays, device):
    """Host arrays on ``device`` through one copy: on the GPU each copy from pageable memory
    first waits for the stream, so a few small arrays go as one buffer, viewed apart again
    (each at a 16-byte boundary)."""
    if device != "gpu":
        return tuple(np.asarray(a) for a in arrays)
    cp = _cupy()
    if all(np.size(a) <= 1 for a in arrays):  # a source vertex: filled by a kernel, no copy
        return tuple(
            cp.full(np.shape(a), np.asarray(a).reshape(-1)[0], np.asarray(a).dtype)
            if np.size(a)
            else cp.empty(np.shape(a), np.asarray(a).dtype)
            for a in arrays
        )
    arrays = [np.ascontiguousarray(a) for a in arrays]
    starts, end = [], 0
    for a in arrays:
        starts.append(end)
        end += -(-a.nbytes // 16) * 16
    packed = np.zeros(max(end, 1), np.uint8)
    for a, at in zip(arrays, starts):
        packed[at : at + a.nbytes] = a.reshape(-1).view(np.uint8)
    on_gpu = cp.asarray(packed)
    return tuple(
        on_gpu[at : at + a.nbytes].view(a.dtype).reshape(a.shape) for a, at in zip(arrays, starts)
    )


def free_device_bytes():
    """Bytes the current GPU can still give: the driver's free memory plus the blocks CuPy's
    pool holds unused (which it hands out again before asking the driver)."""
    cp = _cupy()
    free, _ = cp.cuda.runtime.memGetInfo()
    return int(free) + int(cp.get_default_memory_pool().free_bytes())


_SCATTERS = {
    "min": ("minimum", "scatter_min"),
    "max": ("maximum", "scatter_max"),
    "plus": ("add", "scatter_add"),
}
SCATTER_OPS = tuple(_SCATTERS)  # the names scatter_reduce takes
_SIGN = np.int64(0x7FFFFFFFFFFFFFFF)


def scatter_reduce(name, out, indices, values):
    """out[indices[k]] = out[indices[k]] (name) values[k] for every k, repeated indices
    combined, in place: ``name`` 'min', 'max' or 'plus' (NumPy's ``ufunc.at``, cupyx's
    scatters). CuPy's float64 min and max compute through float32 (its atomicMin(double*)
    calls fminf), which rounds every value they keep: here float64 is compared as int64 words
    of the same order (:func:`_ordered_words`), exactly."""
    ufunc, scatter = _SCATTERS[name]
    if array_device(out) == "cpu":
        getattr(np, ufunc).at(out, indices, values)
        return
    import cupyx  # the GPU path only

    if name != "plus" and out.dtype == np.float64:
        words = _ordered_words(out)
        getattr(cupyx, scatter)(
            words, indices, _ordered_words(values.astype(np.float64, copy=False))
        )
        out[...] = _ordered_words(words).view(np.float64)
        return
    getattr(cupyx, scatter)(out, indices, values)


def _ordered_words(x):
    """float64 values as int64 words that order as the values do (NaN aside): a non-negative
    float's bits already do, a negative one's with all but the sign bit flipped. Its own
    inverse, on the words."""
    xp = np if array_device(x) == "cpu" else _cupy()
    bits = x.view(np.int64)
    return xp.where(bits < 0, bits ^ _SIGN, bits)


def compress(keep, *arrays):
    """Each array's entries where the bool array ``keep`` is true, in order (a None stays None),
    as a tuple. The kept positions are found once, for all of them: indexing each by ``keep``
    counts them again for each, which on the GPU is a scan and a read back an array (a
    Matrix's rows, columns and values: three)."""
    xp = np if array_device(keep) == "cpu" else _cupy()
    where = xp.flatnonzero(keep)  # sync on the GPU: the count sizes the results
    return tuple(None if a is None else a[where] for a in arrays)


def sync(device):
    if device == "gpu":
        _cupy().cuda.get_current_stream().synchronize()


# The loop being recorded on the device in this thread (gbla.runtime sets it): ops then take their
# device-resident paths, and anything that would read a value back to the host raises.
_loop = threading.local()


def device_loop():
    """The recording (gbla.runtime) whose body runs in this thread, or None."""
    return getattr(_loop, "recording", None)


def set_device_loop(recording):
    _loop.recording = recording


def refuse_host_read(what):
    """Raise CaptureError when ``what`` (which reads the device from the host) runs inside a loop
    body recorded on the device."""
    if device_loop() is not None:
        raise CaptureError(
            f"{what} reads a value back to the host, which a loop body recorded "
            "on the device cannot do; read it after gbla.iterate returns, or run "
            "the loop with mode='eager'"
        )


def to_numpy(array):
    """A NumPy array of a NumPy or CuPy array (copied from the GPU; a NumPy one as it is).

    Examples
    --------
    >>> import numpy as np, gbla
    >>> gbla.to_numpy(np.arange(3))
    array([0, 1, 2])
    """
    return to_host(array)


def synchronize(device=None):
    """Wait for the work gbla queued on ``device`` (the default device when None): what a timing
    of GPU calls needs before reading the clock. Nothing to wait for on the CPU."""
    sync(resolve_device(device))


def host_threads():
    """The CPUs this process may run on (its affinity, where the system says it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def host_map(fn, items):
    """``[fn(item) for item in items]``, a thread per CPU (:func:`host_threads`) taking the
    items in turn: host array work whose NumPy loops let go of the GIL."""
    items = list(items)
    threads = min(len(items), host_threads())
    if threads < 2:
        return [fn(item) for item in items]
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        return list(pool.map(fn, items))
