"""gbla: graph algorithms as sparse linear algebra (GraphBLAS style) on the GPU (CuPy) and the
CPU (NumPy/SciPy)."""

from . import generators, semirings
from ._backend import default_device, gpu_available
from .direction import DEFAULT_POLICY, DirectionPolicy, DirectionTracker
from .exceptions import (DeviceMismatch, DimensionMismatch, DomainMismatch, DuplicateIndex,
                         GblaError, InvalidIndex, InvalidValue, NegativeCycleError, UnknownName,
                         ValidationError)
from .mask import Mask
from .matrix import Matrix
from .ops import apply, assign, ewise_add, ewise_mult, mxv, reduce, vxm
from .vector import Vector

__version__ = "0.1.0"

__all__ = [
    "Matrix", "Vector", "Mask", "semirings", "generators",
    "mxv", "vxm", "ewise_add", "ewise_mult", "apply", "reduce", "assign",
    "DirectionPolicy", "DirectionTracker", "DEFAULT_POLICY",
    "gpu_available", "default_device",
    "GblaError", "DimensionMismatch", "DomainMismatch", "DeviceMismatch", "InvalidIndex",
    "InvalidValue", "DuplicateIndex", "UnknownName", "NegativeCycleError", "ValidationError",
]
