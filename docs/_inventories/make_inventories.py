"""Write the small intersphinx inventories shipped beside this file.

    python docs/_inventories/make_inventories.py

The machines gbla's docs are built on (CI among them) reach PyPI only, so Python's, NumPy's,
SciPy's, CuPy's and networkx's own objects.inv cannot be fetched at build time. Each file
written here lists the names gbla's pages and docstrings cite, with the URL each project
publishes it at (the projects' documented URL schemes: NumPy's, SciPy's and CuPy's
``reference/generated/<name>.html``, networkx's class and algorithm pages). conf.py reads these
first and the project's own inventory only where a file is missing. To cite a new name, add it
below and rerun.
"""

import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent

PYTHON = {  # name: (role, page)
    **{
        e: ("py:exception", "library/exceptions.html")
        for e in (
            "Exception",
            "ValueError",
            "IndexError",
            "KeyError",
            "TypeError",
            "LookupError",
            "RuntimeError",
            "MemoryError",
            "AssertionError",
            "NotImplementedError",
            "OSError",
            "FileNotFoundError",
            "TimeoutError",
        )
    },
    **{
        c: ("py:class", "library/stdtypes.html")
        for c in ("dict", "list", "tuple", "str", "bytes", "set", "frozenset", "range")
    },
    **{
        c: ("py:class", "library/functions.html")
        for c in ("int", "float", "bool", "object", "slice", "complex")
    },
    **{f: ("py:function", "library/functions.html") for f in ("callable", "len", "iter")},
    "None": ("py:data", "library/constants.html"),
    "True": ("py:data", "library/constants.html"),
    "False": ("py:data", "library/constants.html"),
    "contextlib.contextmanager": ("py:function", "library/contextlib.html"),
    "collections.namedtuple": ("py:function", "library/collections.html"),
    "os.PathLike": ("py:class", "library/os.html"),
    "pathlib.Path": ("py:class", "library/pathlib.html"),
    "collections.abc.Mapping": ("py:class", "library/collections.abc.html"),
    "collections.abc.Iterable": ("py:class", "library/collections.abc.html"),
    "collections.abc.Callable": ("py:class", "library/collections.abc.html"),
    "typing.Callable": ("py:data", "library/typing.html"),
    "concurrent.futures.ThreadPoolExecutor": ("py:class", "library/concurrent.futures.html"),
}

# The labels and glossary terms numpydoc links parameter types to (numpydoc.xref.DEFAULT_LINKS):
# name: (role, uri with anchor, title)
PYTHON_LABELS = {
    "bltin-boolean-values": (
        "std:label",
        "library/stdtypes.html#bltin-boolean-values",
        "Boolean Type",
    ),
    "iterable": ("std:term", "glossary.html#term-iterable", "-"),
    "sequence": ("std:term", "glossary.html#term-sequence", "-"),
    "generator": ("std:term", "glossary.html#term-generator", "-"),
}
NUMPY_LABELS = {
    "arrays.scalars": ("std:label", "reference/arrays.scalars.html#arrays-scalars", "Scalars"),
    "array_like": ("std:term", "glossary.html#term-array_like", "-"),
}

NUMPY_GENERATED = {  # name: role, each at reference/generated/<name>.html
    "numpy.ndarray": "py:class",
    "numpy.dtype": "py:class",
    "numpy.result_type": "py:function",
    "numpy.fmin": "py:data",
    "numpy.fmax": "py:data",
    "numpy.hypot": "py:data",
    "numpy.flatnonzero": "py:function",
    "numpy.asarray": "py:function",
    "numpy.save": "py:function",
    "numpy.load": "py:function",
    "numpy.argsort": "py:function",
    "numpy.iinfo": "py:class",
    "numpy.finfo": "py:class",
}
NUMPY_OTHER = {  # name: (role, page)
    "numpy.int32": ("py:class", "reference/arrays.scalars.html"),
    "numpy.int64": ("py:class", "reference/arrays.scalars.html"),
    "numpy.float32": ("py:class", "reference/arrays.scalars.html"),
    "numpy.float64": ("py:class", "reference/arrays.scalars.html"),
    "numpy.bool": ("py:class", "reference/arrays.scalars.html"),
    "numpy.generic": ("py:class", "reference/arrays.scalars.html"),
    "numpy.random.Generator": ("py:class", "reference/random/generator.html"),
    "numpy.random.RandomState": ("py:class", "reference/random/legacy.html"),
    "numpy.inf": ("py:data", "reference/constants.html"),
    "numpy.nan": ("py:data", "reference/constants.html"),
    "numpy.random.default_rng": ("py:function", "reference/random/generator.html"),
    "numpy.typing.ArrayLike": ("py:data", "reference/typing.html"),
    "numpy.typing.DTypeLike": ("py:data", "reference/typing.html"),
}

SCIPY_GENERATED = {
    **{
        f"scipy.sparse.{c}": "py:class"
        for c in (
            "csr_matrix",
            "csr_array",
            "csc_matrix",
            "csc_array",
            "coo_matrix",
            "coo_array",
            "sparray",
            "spmatrix",
        )
    },
    **{
        f"scipy.sparse.{f}": "py:function"
        for f in ("issparse", "save_npz", "load_npz", "eye", "diags")
    },
    **{
        f"scipy.sparse.csgraph.{f}": "py:function"
        for f in (
            "shortest_path",
            "dijkstra",
            "bellman_ford",
            "johnson",
            "floyd_warshall",
            "breadth_first_order",
            "breadth_first_tree",
            "depth_first_order",
            "connected_components",
        )
    },
    "scipy.io.mmread": "py:function",
    "scipy.io.mmwrite": "py:function",
}
SCIPY_OTHER = {
    "scipy.sparse": ("py:module", "reference/sparse.html"),
    "scipy.sparse.csgraph": ("py:module", "reference/sparse.csgraph.html"),
    "scipy.sparse.csgraph.NegativeCycleError": ("py:exception", "reference/sparse.csgraph.html"),
}

CUPY_GENERATED = {
    "cupy.ndarray": "py:class",
    "cupy.asarray": "py:function",
    "cupy.asnumpy": "py:function",
    "cupy.RawKernel": "py:class",
    "cupy.RawModule": "py:class",
    "cupy.ElementwiseKernel": "py:class",
    "cupy.ReductionKernel": "py:class",
    "cupy.cuda.Stream": "py:class",
    "cupy.cuda.Graph": "py:class",
    "cupy.cuda.MemoryPool": "py:class",
    "cupy.cuda.Device": "py:class",
    "cupy.get_default_memory_pool": "py:function",
    **{
        f"cupyx.scipy.sparse.{c}": "py:class"
        for c in ("csr_matrix", "csc_matrix", "coo_matrix", "spmatrix")
    },
}
CUPY_OTHER = {"cupyx.scipy.sparse": ("py:module", "reference/scipy_sparse.html")}

NETWORKX_CLASSES = {  # name: page under reference/classes/
    "networkx.Graph": "graph.html",
    "networkx.DiGraph": "digraph.html",
    "networkx.MultiGraph": "multigraph.html",
    "networkx.MultiDiGraph": "multidigraph.html",
}
NETWORKX_FUNCTIONS = {  # public name: the module networkx documents it under
    "bfs_edges": "networkx.algorithms.traversal.breadth_first_search",
    "bfs_tree": "networkx.algorithms.traversal.breadth_first_search",
    "bfs_layers": "networkx.algorithms.traversal.breadth_first_search",
    "single_source_shortest_path_length": "networkx.algorithms.shortest_paths.unweighted",
    "single_source_dijkstra_path_length": "networkx.algorithms.shortest_paths.weighted",
    "single_source_dijkstra": "networkx.algorithms.shortest_paths.weighted",
    "all_pairs_shortest_path_length": "networkx.algorithms.shortest_paths.unweighted",
    "shortest_path_length": "networkx.algorithms.shortest_paths.generic",
    "connected_components": "networkx.algorithms.components.connected",
    "pagerank": "networkx.algorithms.link_analysis.pagerank_alg",
    "triangles": "networkx.algorithms.cluster",
    "clustering": "networkx.algorithms.cluster",
    "transitivity": "networkx.algorithms.cluster",
}


def _write(name, version, entries, labels=None):
    """entries: (name, role, uri) with the anchor included; labels: name -> (role, uri,
    title). Sphinx's inventory format 2."""
    rows = [(n, role, uri, "-") for n, role, uri in entries]
    rows += [(n, role, uri, title) for n, (role, uri, title) in (labels or {}).items()]
    body = "".join(f"{n} {role} 1 {uri} {title}\n" for n, role, uri, title in sorted(rows))
    header = (
        f"# Sphinx inventory version 2\n# Project: {name}\n# Version: {version}\n"
        "# The remainder of this file is compressed using zlib.\n"
    )
    path = HERE / f"{name.lower()}.inv"
    path.write_bytes(header.encode() + zlib.compress(body.encode()))
    print(f"{path.name}: {len(rows)} names")


def main():
    _write("Python", "3", [(n, r, f"{page}#{n}") for n, (r, page) in PYTHON.items()], PYTHON_LABELS)
    _write(
        "NumPy",
        "stable",
        [(n, r, f"reference/generated/{n}.html#{n}") for n, r in NUMPY_GENERATED.items()]
        + [(n, r, f"{page}#{n}") for n, (r, page) in NUMPY_OTHER.items()]
        + [("numpy", "py:module", "reference/index.html#module-numpy")],
        NUMPY_LABELS,
    )
    _write(
        "SciPy",
        "stable",
        [(n, r, f"reference/generated/{n}.html#{n}") for n, r in SCIPY_GENERATED.items()]
        + [
            (n, r, f"{page}#module-{n}" if r == "py:module" else f"{page}#{n}")
            for n, (r, page) in SCIPY_OTHER.items()
        ],
    )
    _write(
        "CuPy",
        "stable",
        [(n, r, f"reference/generated/{n}.html#{n}") for n, r in CUPY_GENERATED.items()]
        + [(n, r, f"{page}#module-{n}") for n, (r, page) in CUPY_OTHER.items()],
    )
    nx = [(n, "py:class", f"reference/classes/{page}#{n}") for n, page in NETWORKX_CLASSES.items()]
    for name, module in NETWORKX_FUNCTIONS.items():
        full = f"{module}.{name}"
        uri = f"reference/algorithms/generated/{full}.html#{full}"
        nx += [(full, "py:function", uri), (f"networkx.{name}", "py:function", uri)]
    nx.append(("networkx", "py:module", "index.html#module-networkx"))
    _write("networkx", "stable", nx)


if __name__ == "__main__":
    main()
