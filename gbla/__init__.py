"""gbla: graph algorithms as sparse linear algebra (GraphBLAS style) on the GPU (CuPy) and the
CPU (NumPy/SciPy).

The layers, each importing only those below it:

- ``cli``, ``bench``: the ``gbla`` command and its benchmarks;
- ``algorithms`` (``bfs``, ``sssp``, ``connected_components``, ``pagerank``, ``triangles``,
  ``clustering``, ``transitivity``):
  written only against ``ops`` and ``semirings``; bfs and sssp dispatch every method through
  ``methods``, the registry that the algebraic algorithms and the hand-written ``kernels``
  both register into;
- ``ops``: mxv, vxm, mxm, ewise_add, ewise_mult, apply, reduce, reduce_rowwise,
  reduce_columnwise, extract, assign, assign_bits, select, split, scale, executing on the CPU
  (``_cpu``) or through ``kernels`` (spmv.cu and element-wise kernels; bfs.cu's kernels are
  methods), with push or pull chosen by ``direction``;
- ``runtime``: how a loop of ops executes, eagerly or recorded and replayed on the device
  (:func:`iterate`); ops take their device-resident paths while a body is recorded;
- ``Matrix``, ``Vector``, ``Scalar``, ``Mask`` over ``_storage`` (CSR helpers);
- ``semirings`` (ops, monoids, semirings as data), ``_dtypes``;
- ``_validation`` (the one place inputs are checked), ``_backend``, ``exceptions``.

Beside them: ``csgraph`` (scipy.sparse.csgraph's functions over gbla), ``io`` (graph files),
``datasets`` (graphs shipped in the package), ``generators`` (rmat, grid2d, rgg, weights),
``verify`` (result checks), ``warmup`` (the built-in kernels compiled before a first call),
``distributed`` (a matrix cut over ranks: its products, and BFS
with bitmap frontiers as method ``distributed_bitmap``).
"""

from . import (
    csgraph,
    datasets,
    distributed,
    generators,
    io,
    kernels,
    methods,
    outofcore,
    runtime,
    semirings,
    verify,
)
from ._backend import default_device, gpu_available, synchronize, to_numpy
from ._version import __version__ as __version__
from ._warmup import warmup
from .algorithms import (
    bfs,
    clustering,
    connected_components,
    pagerank,
    sssp,
    transitivity,
    triangles,
)
from .direction import DEFAULT_POLICY, DirectionPolicy, DirectionTracker
from .exceptions import (
    CaptureError,
    ConvergenceError,
    DeviceMismatch,
    DimensionMismatch,
    DomainMismatch,
    DuplicateIndex,
    GblaError,
    InvalidIndex,
    InvalidValue,
    NegativeCycleError,
    OutOfDeviceMemory,
    UnknownName,
    UnsupportedMethod,
    ValidationError,
)
from .mask import Mask
from .matrix import Matrix
from .ops import (
    apply,
    assign,
    assign_bits,
    ewise_add,
    ewise_mult,
    extract,
    improve,
    mxm,
    mxv,
    reduce,
    reduce_columnwise,
    reduce_rowwise,
    relax,
    scale,
    select,
    split,
    vxm,
)
from .runtime import LoopState, iterate
from .scalar import Scalar
from .vector import Vector

__all__ = [
    "Matrix",
    "Vector",
    "Scalar",
    "Mask",
    "semirings",
    "kernels",
    "generators",
    "datasets",
    "io",
    "csgraph",
    "outofcore",
    "distributed",
    "verify",
    "methods",
    "runtime",
    "bfs",
    "sssp",
    "connected_components",
    "pagerank",
    "triangles",
    "clustering",
    "transitivity",
    "warmup",
    "iterate",
    "LoopState",
    "mxv",
    "vxm",
    "mxm",
    "ewise_add",
    "ewise_mult",
    "apply",
    "reduce",
    "reduce_rowwise",
    "reduce_columnwise",
    "extract",
    "assign",
    "assign_bits",
    "select",
    "split",
    "improve",
    "relax",
    "scale",
    "DirectionPolicy",
    "DirectionTracker",
    "DEFAULT_POLICY",
    "gpu_available",
    "default_device",
    "to_numpy",
    "synchronize",
    "GblaError",
    "DimensionMismatch",
    "DomainMismatch",
    "DeviceMismatch",
    "InvalidIndex",
    "InvalidValue",
    "DuplicateIndex",
    "UnknownName",
    "UnsupportedMethod",
    "NegativeCycleError",
    "ConvergenceError",
    "ValidationError",
    "CaptureError",
    "OutOfDeviceMemory",
]
