"""Graph algorithms written only against the algebra (gbla.ops and the semirings): no CUDA, no
push/pull decision, no environment."""

from .bfs import bfs
from .components import connected_components
from .pagerank import pagerank
from .sssp import sssp
from .triangles import clustering, transitivity, triangles

__all__ = [
    "bfs",
    "sssp",
    "connected_components",
    "pagerank",
    "triangles",
    "clustering",
    "transitivity",
]
