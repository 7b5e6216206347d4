"""Loading and launching the .cu kernels: the one loader (NVRTC through CuPy, or a module
compiled ahead of time where :mod:`gbla._prebuilt` has one for the device), grid sizing and
occupancy, all memoised per CUDA device, since a module, a function and an occupancy figure
belong to the device they were made on.

A kernel file's local ``#include "x.cuh"`` lines are inlined by :func:`source` before NVRTC
sees the text, so CuPy's on-disk cache, keyed on the source text, changes when a header does.
"""

import contextlib
import functools
import re
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .._backend import _cupy

__all__ = [
    "KERNEL_DIR",
    "THREADS",
    "source",
    "sources",
    "function",
    "Launch",
    "collecting",
    "device_id",
    "sm_count",
    "grid",
    "ptr",
    "cooperative_blocks",
]

KERNEL_DIR = Path(__file__).parent
THREADS = 256
_INCLUDE = re.compile(r'^#include "([\w.]+)"[^\n]*$', re.M)


def _inline(path, seen):
    """The text of kernel file ``path`` with its local includes inlined, each header once
    across everything ``seen`` holds; headers are looked for beside the file, then in
    gbla/kernels (so a new kernel can include frontier.cuh)."""

    def inline(match):
        header = match.group(1)
        if header in seen:
            return f"// {header}: included above"
        seen.add(header)
        found = path.parent / header
        text = (found if found.is_file() else KERNEL_DIR / header).read_text()
        return f"// ---- {header}\n" + _INCLUDE.sub(inline, text)

    return _INCLUDE.sub(inline, path.read_text())


@functools.lru_cache(maxsize=None)
def source(name):
    """The text of kernel file ``name`` (a file of gbla/kernels, or a path to a kernel of one's
    own) with its local includes inlined, each once."""
    return _inline(KERNEL_DIR / name, set())  # an absolute path stays itself


def sources(names):
    """The texts of several kernel files in one translation unit: each header inlined once
    across all of them (a header's ``#pragma once`` cannot see an inlined copy)."""
    seen = set()
    return "\n".join(f"// ==== {name}\n" + _inline(KERNEL_DIR / name, seen) for name in names)


def device_id():
    """The current CUDA device's ordinal."""
    return _cupy().cuda.Device().id


OPTIONS = ("-std=c++17",)  # what NVRTC compiles every module with


@functools.lru_cache(maxsize=None)
def _module(device, name, prelude, epilogue, name_expressions, cooperative):
    """The module, compiled on its first kernel's use (or loaded prebuilt: gbla._prebuilt's
    hook on CuPy's compiler decides)."""
    return _cupy().RawModule(
        code=prelude + source(name) + epilogue,
        options=OPTIONS,
        name_expressions=name_expressions,
        enable_cooperative_groups=cooperative,
    )


class Launch(NamedTuple):
    """One launch of a kernel of this loader, as :func:`collecting` sees it: which kernel
    (``file``, its name expression ``kernel``, and the ``prelude`` and ``epilogue`` it was
    compiled between) and its ``args``."""

    file: str
    kernel: str
    prelude: str
    epilogue: str
    args: tuple


_collected = None  # the list launches are appended to, inside collecting()


@contextlib.contextmanager
def collecting():
    """Every launch of a kernel of :func:`function` in this block, in order, appended to the
    list it yields (the launches still run). What gbla.runtime replays in one fused kernel."""
    global _collected
    outer, _collected = _collected, []
    try:
        yield _collected
    finally:
        _collected = outer


class Kernel:
    """A compiled kernel (CuPy's function, whose attributes it shows) that says where it
    comes from when it is launched inside :func:`collecting`."""

    __slots__ = ("function", "origin")

    def __init__(self, function, origin):
        self.function = function
        self.origin = origin

    def __call__(self, grid, block, args, *rest, **options):
        if _collected is not None:
            _collected.append(Launch(*self.origin, tuple(args)))
        return self.function(grid, block, args, *rest, **options)

    def __getattr__(self, name):
        return getattr(self.function, name)

    def __setattr__(self, name, value):  # the function's attributes (its shared memory cap)
        if name in Kernel.__slots__:
            object.__setattr__(self, name, value)
        else:
            setattr(self.function, name, value)


@functools.lru_cache(maxsize=None)
def _function(device, name, kernel, prelude, epilogue, name_expressions, cooperative):
    mod = _module(device, name, prelude, epilogue, name_expressions, cooperative)
    return Kernel(mod.get_function(kernel), (name, kernel, prelude, epilogue))


def function(name, kernel, *, prelude="", epilogue="", name_expressions=None, cooperative=False):
    """Kernel ``kernel`` (a name, or a name expression listed in ``name_expressions``) of file
    ``name`` on the current device, its module compiled on first use. Generated code goes in
    ``prelude`` (before the file: what the file uses) or ``epilogue`` (after it: what uses the
    file, such as a semiring struct and its template instantiations)."""
    names = None if name_expressions is None else tuple(name_expressions)
    return _function(device_id(), name, kernel, prelude, epilogue, names, cooperative)


@functools.lru_cache(maxsize=None)
def _sm_count(device):
    return _cupy().cuda.Device(device).attributes["MultiProcessorCount"]


def sm_count():
    """Streaming multiprocessors of the current device."""
    return _sm_count(device_id())


def grid(work, per_block=THREADS):
    """A grid-stride launch's block count for ``work`` items: one item a thread, at most 32
    blocks an SM (the kernels loop over the rest)."""
    return (int(max(1, min(-(-work // per_block), sm_count() * 32))),)


def ptr(a):
    """A kernel argument for an optional array: the array, or a null pointer for None."""
    return np.uint64(0) if a is None else a


@functools.lru_cache(maxsize=None)
def _cooperative_blocks(device, kernel, threads, per_sm_cap):
    try:
        from cupy_backends.cuda.api import driver

        per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, 0)
    except (ImportError, AttributeError):
        per_sm = min(2048 // threads, 65536 // max(kernel.num_regs * threads, 1))
    if per_sm < 1:  # a cooperative launch of even one block an SM would be refused
        raise RuntimeError(
            f"a block of {threads} threads of this kernel does not fit on one SM "
            f"(registers or shared memory): no cooperative grid can run it"
        )
    return _sm_count(device) * min(int(per_sm), per_sm_cap)


def cooperative_blocks(kernel, threads, per_sm_cap):
    """Blocks of ``kernel`` (a function of :func:`function`) that are all resident at once on
    the current device with ``threads`` threads each, at most ``per_sm_cap`` an SM: the grid
    of a cooperative launch."""
    return _cooperative_blocks(device_id(), kernel, threads, per_sm_cap)
