"""Small real graphs shipped inside the package, so that an example or the command line runs on
real data with no download. Each is a gzip-compressed Matrix Market file in ``gbla/data/`` whose
``%`` comment lines state its origin and licence.
"""

import gzip
from importlib import resources

from . import _validation as V
from .exceptions import UnknownName
from .matrix import Matrix

__all__ = ["names", "load", "describe"]

# name -> (file in gbla/data, vertices, undirected edges, what it is and where it comes from)
_DATASETS = {
    "power_grid": (
        "power_grid.mtx.gz",
        4941,
        6594,
        "US Western States power grid (Watts & Strogatz 1998), sparse and of high "
        "diameter; via networkit/networkit input/power.graph",
    ),
    "facebook": (
        "facebook.mtx.gz",
        4039,
        88234,
        "SNAP ego-Facebook friendships (McAuley & Leskovec 2012), social, small "
        "diameter; via JuliaGraphs/SNAPDatasets.jl",
    ),
}


def names():
    """The names of the shipped graphs.

    Returns
    -------
    list of str

    Examples
    --------
    >>> import gbla.datasets
    >>> gbla.datasets.names()
    ['power_grid', 'facebook']
    """
    return list(_DATASETS)


def _entry(name):
    if not isinstance(name, str) or name not in _DATASETS:
        raise UnknownName(V.message("name", f"be one of {names()}", name))
    return _DATASETS[name]


def _path(name):
    """The shipped file of ``name`` (a Traversable: not necessarily a file on disk)."""
    return resources.files("gbla").joinpath("data", _entry(name)[0])


def describe(name):
    """One line describing the graph ``name``: vertices, undirected edges and origin.

    Parameters
    ----------
    name : str
        One of :func:`names`.

    Returns
    -------
    str

    Raises
    ------
    UnknownName
        For a name not in :func:`names`.

    Examples
    --------
    >>> import gbla.datasets
    >>> gbla.datasets.describe("power_grid")[:48]
    'power_grid: 4941 vertices, 6594 undirected edges'
    """
    _, n, m, text = _entry(name)
    return f"{name}: {n} vertices, {m} undirected edges; {text}"


def load(name, *, device=None):
    """The shipped graph ``name`` as an undirected, unweighted Matrix.

    Parameters
    ----------
    name : str
        One of :func:`names`.
    device : {'cpu', 'gpu', None}
        None: the GPU when CuPy sees one, else the CPU.

    Returns
    -------
    Matrix
        n x n iso bool, symmetric (each undirected edge stored both ways; its transpose is
        itself), no self-loops; ``nvals`` is twice the edge count of :func:`describe`.

    Raises
    ------
    UnknownName
        For a name not in :func:`names`.

    Examples
    --------
    >>> import gbla.datasets
    >>> A = gbla.datasets.load("power_grid", device="cpu")
    >>> A.shape, A.nvals
    ((4941, 4941), 13188)
    """
    import scipy.io
    import scipy.sparse as sp

    _entry(name)
    # gzip by hand: mmread only decompresses by file name, and a resource may have none
    with _path(name).open("rb") as raw, gzip.open(raw, "rb") as f:
        S = sp.coo_array(scipy.io.mmread(f))  # a symmetric file gives both directions
    A = Matrix.from_edges(S.row, S.col, n=S.shape[0], device=device)
    A._symmetric, A._T = True, A
    return A
