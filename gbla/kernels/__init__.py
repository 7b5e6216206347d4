"""Hand-written CUDA kernels beside the Python that loads and launches them: the spmv templates
the algebra runs (spmv.cu), the BFS and SSSP kernels registered as drop-in methods of
``gbla.bfs`` (bfs.cu) and ``gbla.sssp`` (sssp.cu), the loop test of a device loop (loop.cu), and
what they share (frontier.cuh; the loader, grid sizing and occupancy in
_launch.py; frontier buffers in _frontier.py). Importing this package registers its kernels in
:mod:`gbla.methods`; nothing here is compiled until a kernel first runs.
"""

from . import _bfs, _sssp  # noqa: F401  (registers the BFS and SSSP kernels)

__all__ = []
