"""gbla: graph algorithms as sparse linear algebra (GraphBLAS style) on the GPU (CuPy) and the
CPU (NumPy/SciPy)."""

from . import datasets, generators, io, kernels, methods, semirings, verify
from ._version import __version__
from .algorithms import bfs, sssp
from ._backend import default_device, gpu_available
from .direction import DEFAULT_POLICY, DirectionPolicy, DirectionTracker
from .exceptions import (DeviceMismatch, DimensionMismatch, DomainMismatch, DuplicateIndex,
                         GblaError, InvalidIndex, InvalidValue, NegativeCycleError, UnknownName,
                         UnsupportedMethod, ValidationError)
from .mask import Mask
from .matrix import Matrix
from .ops import apply, assign, ewise_add, ewise_mult, mxv, reduce, scale, select, vxm
from .vector import Vector

__all__ = [
    "Matrix", "Vector", "Mask", "semirings", "kernels", "generators", "datasets", "io",
    "verify", "methods", "bfs", "sssp",
    "mxv", "vxm", "ewise_add", "ewise_mult", "apply", "reduce", "assign", "select", "scale",
    "DirectionPolicy", "DirectionTracker", "DEFAULT_POLICY",
    "gpu_available", "default_device",
    "GblaError", "DimensionMismatch", "DomainMismatch", "DeviceMismatch", "InvalidIndex",
    "InvalidValue", "DuplicateIndex", "UnknownName", "UnsupportedMethod", "NegativeCycleError",
    "ValidationError",
]
