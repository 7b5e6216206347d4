"""Matrix: CSR storage on the CPU (NumPy) or the GPU (CuPy), with its transpose built once and
cached (a symmetric matrix shares its own arrays as its transpose).

Entry (i, j) is the edge i -> j. Row indices within a row are sorted and unique. A matrix whose
values are all True may be stored without a values array ("iso"), as graph patterns are.
Internal arrays are never modified in place.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _backend as B
from . import _storage, _weights
from . import _validation as V
from ._dtypes import BOOL
from .mask import MatrixMask
from .semirings import binary

# How repeated entries combine, the same default in every entry point (from_scipy, from_cupy,
# from_edges, gbla.io.read): the lightest edge, the one a shortest path takes.
DUP_OP = binary.min

__all__ = ["Matrix", "as_graph"]


def as_graph(A: Any, arg: str = "A") -> Matrix:
    """A square Matrix from a Matrix, a scipy.sparse or a cupyx.scipy.sparse matrix: what every
    algorithm and result check takes as its graph.

    Parameters
    ----------
    A : Matrix, scipy.sparse matrix or array, or cupyx.scipy.sparse matrix
        A Matrix is taken as it is; a SciPy one goes through :meth:`Matrix.from_scipy` onto the
        default device (the GPU when CuPy sees one), a CuPy one through
        :meth:`Matrix.from_cupy`.
    arg : str, default 'A'
        The argument's name in error messages.

    Returns
    -------
    Matrix
        ``A`` itself when it is a Matrix, else a new one.

    Raises
    ------
    DomainMismatch
        ``A`` is of none of those types (a dense array, say), or of a dtype gbla cannot hold.
    DimensionMismatch
        ``A`` is not square.
    InvalidValue
        ``A`` is a scipy.sparse array that is not two-dimensional.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, gbla
    >>> from gbla.matrix import as_graph
    >>> A = gbla.Matrix.from_edges([0], [1], device="cpu")
    >>> as_graph(A) is A
    True
    >>> as_graph(sp.eye(3, format="csr")).shape
    (3, 3)
    """
    if getattr(A, "partitioned", False):  # a DistMatrix or a HostMatrix, square by making
        return A
    if not isinstance(A, Matrix):
        import scipy.sparse as sp

        if sp.issparse(A):
            A = Matrix.from_scipy(A)
        elif B.gpu_available() and _is_cupy_sparse(A):
            A = Matrix.from_cupy(A)
        else:
            raise V.domain(arg, "be a gbla.Matrix or a scipy/cupyx sparse matrix", type(A).__name__)
    V.square(A.shape, arg)
    return A


def _is_cupy_sparse(A):
    import cupyx.scipy.sparse as csp

    return csp.issparse(A)


class Matrix:
    """A sparse matrix (a directed graph: entry (i, j) is the edge i -> j) on one device.

    Build one with :meth:`from_scipy`, :meth:`from_cupy` or :meth:`from_edges`.
    """

    __slots__ = (
        "_shape",
        "_dtype",
        "_device",
        "_indptr",
        "_indices",
        "_values",
        "_T",
        "_symmetric",
        "_cache",
    )

    def __init__(self, *args, **kwargs):
        raise TypeError(
            "build a Matrix with Matrix.from_scipy, Matrix.from_cupy or Matrix.from_edges"
        )

    @classmethod
    def _wrap(cls, indptr, indices, values, shape, dtype, device, symmetric=None):
        self = object.__new__(cls)
        self._shape = (int(shape[0]), int(shape[1]))
        self._dtype = np.dtype(dtype)
        self._device = device
        self._indptr, self._indices, self._values = indptr, indices, values
        self._T = None
        self._symmetric = symmetric
        self._cache = {}
        return self

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_scipy(
        cls, S: Any, *, dup_op: Any = DUP_OP, device: str | None = None, index_dtype: Any = None
    ) -> Matrix:
        """A Matrix from any scipy.sparse matrix or array, in any format (the input is copied;
        explicit zeros stay entries; repeated entries of a COO or non-canonical input combine
        by ``dup_op``, the lightest by default, as in every entry point of gbla).

        Parameters
        ----------
        S : scipy.sparse matrix or array, two-dimensional
            Its dtype is kept, or widened losslessly to one gbla computes in (int8, int16,
            uint8, uint16 -> int32; uint32 -> int64; float16 -> float32).
        dup_op : BinaryOp or None, default semirings.binary.min
            How repeated (i, j) entries combine, in input order: the smallest (the edge a
            shortest path takes) by default, ``binary.plus`` for SciPy's sum (what
            ``S.tocsr()`` means), None to raise :class:`~gbla.DuplicateIndex`.
        device : {'cpu', 'gpu', None}, default None
            None: the GPU when CuPy sees one, else the CPU.
        index_dtype : {None, int32, int64}, default None
            None: int32 when it fits, else int64.

        Returns
        -------
        Matrix
            A new Matrix of S's shape, with a values array even for bool (never iso).

        Raises
        ------
        DomainMismatch
            ``S`` is not a scipy.sparse matrix or array, its dtype has no lossless gbla dtype
            (complex, uint64, ...), or ``index_dtype`` is not int32, int64 or None.
        InvalidValue
            ``S`` is not two-dimensional, or ``index_dtype`` is int32 and the matrix needs
            int64.
        DuplicateIndex
            An entry repeats and ``dup_op`` is None.
        DeviceMismatch
            ``device`` is not 'cpu', 'gpu' or None, or is 'gpu' where no GPU can be used.

        Examples
        --------
        >>> import numpy as np, scipy.sparse as sp, gbla
        >>> S = sp.coo_array(([1., 2., 0.], ([0, 0, 1], [1, 1, 0])), shape=(2, 2))
        >>> A = gbla.Matrix.from_scipy(S, device="cpu")
        >>> A
        <gbla.Matrix 2x2 nvals=2 dtype=float64 device=cpu>
        >>> A.to_scipy().toarray()
        array([[0., 1.],
               [0., 0.]])
        >>> from gbla.semirings import binary
        >>> gbla.Matrix.from_scipy(S, dup_op=binary.plus, device="cpu").to_scipy().toarray()
        array([[0., 3.],
               [0., 0.]])
        """
        return cls._from_scipy(S, dup_op, device, index_dtype, copy=True)

    @classmethod
    def _from_scipy(cls, S, dup_op, device, index_dtype, *, copy):
        """:meth:`from_scipy`; ``copy=False`` for a matrix no one else holds (one a reader just
        loaded), whose canonical CSR arrays the Matrix then takes as they are."""
        import scipy.sparse as sp

        if not sp.issparse(S):
            raise V.domain("S", "be a scipy.sparse matrix or array", type(S).__name__)
        if S.ndim != 2:
            raise V.invalid_value("S", "be two-dimensional", f"shape {S.shape}")
        device = B.resolve_device(device)
        dtype = V.storage_dtype(S.dtype, "S")
        if S.format == "csr" and S.has_canonical_format:
            C = sp.csr_matrix(S, dtype=dtype, copy=copy)
        else:  # repeats possible: merged by dup_op, on the host
            coo = sp.coo_matrix(S)
            rows, cols, data = _storage.merge_entries(
                coo.row, coo.col, coo.data.astype(dtype), S.shape, dup_op, "cpu", arg="S"
            )
            C = sp.csr_matrix((data, (rows, cols)), shape=S.shape, dtype=dtype)
        idt = _storage.index_dtype(max(C.shape), C.nnz, index_dtype)
        # C is this call's own (a copy, or a matrix no one else holds): its index arrays are
        # taken as they are where their dtype is already idt
        arrays = (C.indptr.astype(idt, copy=False), C.indices.astype(idt, copy=False), C.data)
        arrays = tuple(B.to_device(a, device) for a in arrays)
        return cls._wrap(*arrays, C.shape, dtype, device)

    @classmethod
    def from_networkx(
        cls,
        G: Any,
        *,
        weight: str | None = "weight",
        nodelist: Any = None,
        device: str | None = None,
    ) -> Matrix:
        """The adjacency Matrix of a networkx graph: entry (i, j) is the edge from the i-th node
        to the j-th, in the order of ``nodelist`` (default ``list(G)``).

        Parameters
        ----------
        G : networkx.Graph, DiGraph, MultiGraph or MultiDiGraph
            An undirected graph gives a symmetric matrix (each edge both ways).
        weight : str or None, default 'weight'
            The edge attribute holding the weight (an edge without it weighs 1); None: an
            unweighted pattern (bool). Parallel edges of a multigraph keep the smallest weight,
            the one networkx's shortest paths take.
        nodelist : sequence or None, default None
            The nodes, in the order of the rows; every node of G, once.
        device : {'cpu', 'gpu', None}, default None
            As for :meth:`from_scipy`.

        Returns
        -------
        Matrix
            A new n x n Matrix (float64 weights, or bool when ``weight`` is None).

        Raises
        ------
        DomainMismatch
            ``G`` is not a networkx graph.
        InvalidValue
            ``nodelist`` misses a node of G or repeats one, or a weight is not a number.

        Examples
        --------
        >>> import networkx as nx, gbla
        >>> G = nx.Graph([(0, 1, {"weight": 2.5}), (1, 2, {})])
        >>> gbla.Matrix.from_networkx(G, device="cpu").to_scipy().toarray()
        array([[0. , 2.5, 0. ],
               [2.5, 0. , 1. ],
               [0. , 1. , 0. ]])
        """
        try:
            import networkx as nx
        except ImportError:  # pragma: no cover - networkx is what G would come from
            raise V.domain(
                "G", "be a networkx graph (networkx is not installed)", type(G).__name__
            ) from None
        if not isinstance(G, nx.Graph):
            raise V.domain("G", "be a networkx graph", type(G).__name__)
        nodes = list(G) if nodelist is None else list(nodelist)
        index = {node: i for i, node in enumerate(nodes)}
        if (
            len(index) != len(nodes)
            or len(nodes) != G.number_of_nodes()
            or any(node not in index for node in G)
        ):
            raise V.invalid_value("nodelist", "hold every node of G once", nodelist)
        # d.get, not G.edges(data=weight): an attribute may be named True, as networkx allows
        edges = (
            [(u, v, d.get(weight, 1)) for u, v, d in G.edges(data=True)]
            if weight is not None
            else [(u, v, True) for u, v in G.edges()]
        )
        src = np.array([index[u] for u, _, _ in edges], np.int64)
        dst = np.array([index[v] for _, v, _ in edges], np.int64)
        try:
            values = None if weight is None else np.array([w for _, _, w in edges], np.float64)
        except (TypeError, ValueError):
            raise V.invalid_value(
                "G", f"have numeric {weight!r} attributes", next(w for _, _, w in edges)
            ) from None
        if not G.is_directed():
            src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
            values = None if values is None else np.concatenate([values, values])
        return cls.from_edges(src, dst, values, len(nodes), dup_op=binary.min, device=device)

    def to_networkx(self, *, directed: bool = True, weight: str | None = "weight") -> Any:
        """A networkx graph of this matrix: node i for row i, an edge i -> j of attribute
        ``weight`` for each entry (explicit zeros included).

        Parameters
        ----------
        directed : bool, default True
            A DiGraph; False: a Graph (the matrix read as symmetric, an edge once).
        weight : str or None, default 'weight'
            The attribute the values go into; None: no attribute (an iso matrix has none).

        Returns
        -------
        networkx.DiGraph or networkx.Graph

        Examples
        --------
        >>> import gbla
        >>> A = gbla.Matrix.from_edges([0, 1], [1, 2], [4., 5.], device="cpu")
        >>> sorted(A.to_networkx().edges(data="weight"))
        [(0, 1, 4.0), (1, 2, 5.0)]
        """
        import networkx as nx

        G = nx.DiGraph() if directed else nx.Graph()
        G.add_nodes_from(range(self.nrows))
        S = self.to_scipy().tocoo()  # sync: copied to the host
        if weight is None or self.is_iso:
            G.add_edges_from(zip(S.row.tolist(), S.col.tolist()))
        else:
            G.add_weighted_edges_from(
                zip(S.row.tolist(), S.col.tolist(), S.data.tolist()), weight=weight
            )
        return G

    @classmethod
    def from_cupy(cls, C: Any, *, dup_op: Any = DUP_OP, index_dtype: Any = None) -> Matrix:
        """A GPU Matrix from a cupyx.scipy.sparse matrix. A canonical CSR matrix (sorted
        indices, no duplicates) is used without copying its arrays; other inputs are converted,
        repeated entries combined by ``dup_op`` (as :meth:`from_scipy`: the smallest by
        default, None raises).

        Parameters
        ----------
        C : cupyx.scipy.sparse matrix
            Any format; duplicates are summed. Its dtype is kept or widened losslessly as in
            :meth:`from_scipy`.
        index_dtype : {None, int32, int64}, default None
            None: int32 when it fits, else int64.

        Returns
        -------
        Matrix
            A Matrix on the GPU, never iso. From a canonical CSR ``C`` it shares every array
            that needs no cast, so in-place changes to ``C`` afterwards would show through:
            leave ``C`` unchanged.

        Raises
        ------
        DeviceMismatch
            No GPU can be used (checked first).
        DomainMismatch
            ``C`` is not a cupyx.scipy.sparse matrix, its dtype has no lossless gbla dtype, or
            ``index_dtype`` is not int32, int64 or None.
        InvalidValue
            ``index_dtype`` is int32 and the matrix needs int64.

        Examples
        --------
        Needs a GPU:

        >>> import cupyx.scipy.sparse as csp, gbla  # doctest: +SKIP
        >>> gbla.Matrix.from_cupy(csp.identity(3, format="csr"))  # doctest: +SKIP
        <gbla.Matrix 3x3 nvals=3 dtype=float64 device=gpu>
        """
        B.resolve_device("gpu")
        import cupyx.scipy.sparse as csp

        if not csp.issparse(C):
            raise V.domain("C", "be a cupyx.scipy.sparse matrix", type(C).__name__)
        dtype = V.storage_dtype(C.dtype, "C")
        if C.format != "csr" or not C.has_canonical_format:  # repeats merged by dup_op
            coo = C.tocoo()
            rows, cols, data = _storage.merge_entries(
                coo.row, coo.col, coo.data.astype(dtype), C.shape, dup_op, "gpu", arg="C"
            )
            C = csp.csr_matrix((data, (rows, cols)), shape=C.shape)
        idt = _storage.index_dtype(max(C.shape), C.nnz, index_dtype)
        return cls._wrap(
            C.indptr.astype(idt, copy=False),
            C.indices.astype(idt, copy=False),
            C.data.astype(dtype, copy=False),
            C.shape,
            dtype,
            "gpu",
        )

    @classmethod
    def from_edges(
        cls,
        src: Any,
        dst: Any,
        values: Any = None,
        n: int | None = None,
        *,
        dup_op: Any = DUP_OP,
        device: str | None = None,
        index_dtype: Any = None,
        ncols: int | None = None,
    ) -> Matrix:
        """An n x n Matrix with an edge src[t] -> dst[t] of weight values[t] for every t.

        Parameters
        ----------
        src, dst : 1-D integer arrays (NumPy, CuPy or sequences) of equal length
            Vertex ids in [0, n); floats holding whole numbers are accepted.
        values : 1-D array, scalar or None, default None
            None: an unweighted pattern (dtype bool, iso: every value True, duplicates
            merged). A scalar gives every edge that value (a Python int: int64, a float:
            float64); an array of len(src) one value per edge. A dtype is kept or widened
            losslessly as in :meth:`from_scipy`.
        n : int or None, default None
            Number of vertices; None: 1 + the largest endpoint (0 for no edges).
        dup_op : BinaryOp or None, default semirings.binary.min
            How repeated (src, dst) pairs of a weighted graph combine, in input order (a Monoid
            or a name is refused): the smallest weight by default, as in every entry point of
            gbla; None raises :class:`~gbla.DuplicateIndex` when a pair repeats. An unweighted
            pattern keeps one edge.
        device : {'cpu', 'gpu', None}, default None
            None: the GPU when ``src`` is a CuPy array, else as for :meth:`from_scipy`.
        index_dtype : {None, int32, int64}, default None
            As for :meth:`from_scipy`.
        ncols : int or None, default None
            A rectangular n x ncols matrix (dst < ncols); None: square.

        Returns
        -------
        Matrix
            A new n x n (or n x ncols) Matrix on ``device``.

        Raises
        ------
        DimensionMismatch
            ``dst`` or an array ``values`` is not as long as ``src``.
        InvalidIndex
            An endpoint is negative or >= n.
        InvalidValue
            ``src``, ``dst`` or ``values`` is not one-dimensional, an endpoint is not a whole
            number, ``n`` is not a non-negative integer, or ``index_dtype`` is int32 and the
            matrix needs int64.
        DomainMismatch
            ``values`` has no lossless gbla dtype, ``dup_op`` is not a BinaryOp (raised when a
            pair repeats), or ``index_dtype`` is not int32, int64 or None.
        DuplicateIndex
            A (src, dst) pair of a weighted graph repeats and ``dup_op`` is None.
        DeviceMismatch
            ``device`` is not 'cpu', 'gpu' or None, or is 'gpu' where no GPU can be used.

        Examples
        --------
        >>> import gbla
        >>> from gbla import semirings
        >>> A = gbla.Matrix.from_edges([0, 1, 1], [1, 2, 2], [1., 2., 3.],
        ...                            dup_op=semirings.binary.plus, device="cpu")
        >>> A.to_scipy().toarray()
        array([[0., 1., 0.],
               [0., 0., 5.],
               [0., 0., 0.]])
        >>> gbla.Matrix.from_edges([0, 1, 1], [1, 2, 2], device="cpu")
        <gbla.Matrix 3x3 nvals=2 dtype=bool device=cpu iso>
        """
        if device is None and B.array_device(src) == "gpu":
            device = "gpu"
        device = B.resolve_device(device)
        xp = B.xp_of(device)
        s = B.to_device(np.asarray(src) if B.array_device(src) == "cpu" else src, device)
        d = B.to_device(np.asarray(dst) if B.array_device(dst) == "cpu" else dst, device)
        V.same_length(s, d, "src", "dst")
        if n is None:  # checked first: a NaN or a fraction has no vertex count
            s, d = V.index_array(s, xp, np.inf, "src"), V.index_array(d, xp, np.inf, "dst")
            n = int(max(s.max(), d.max())) + 1 if len(s) else 0  # sync: the vertex count
        n = V.size(n, "n")
        ncols = n if ncols is None else V.size(ncols, "ncols")
        s = V.index_array(s, xp, n, "src")
        d = V.index_array(d, xp, ncols, "dst")
        if values is None:
            vals, dtype = None, BOOL
        else:
            if np.ndim(values) == 0 and B.array_device(values) == "cpu":
                dtype = V.storage_dtype(np.asarray(values).dtype, "values")
                vals = xp.full(len(s), V.scalar_value(values, dtype, "values"), dtype=dtype)
            else:
                vals = B.to_device(values, device)
                if vals.ndim != 1:
                    raise V.invalid_value("values", "be one-dimensional", f"shape {vals.shape}")
                V.same_length(s, vals, "src", "values")
                dtype = V.storage_dtype(vals.dtype, "values")
                vals = vals.astype(dtype)
        rows, cols, vals = _storage.merge_entries(
            s, d, vals, (n, ncols), dup_op, device, arg="src, dst", what="edge"
        )
        idt = _storage.index_dtype(max(n, ncols), len(rows), index_dtype)
        indptr = _storage.indptr_of_sorted_rows(rows, n, idt, xp)
        return cls._wrap(indptr, cols.astype(idt), vals, (n, ncols), dtype, device)

    # ------------------------------------------------------------------ properties
    @property
    def shape(self) -> tuple[int, int]:
        return self._shape

    @property
    def nrows(self) -> int:
        return self._shape[0]

    @property
    def ncols(self) -> int:
        return self._shape[1]

    @property
    def nvals(self) -> int:
        """Number of stored entries (an int; explicit zeros included).

        Examples
        --------
        >>> import gbla
        >>> gbla.Matrix.from_edges([0, 1], [1, 0], [0., 2.], device="cpu").nvals
        2
        """
        return len(self._indices)

    @property
    def nbytes(self) -> int:
        """Bytes of the stored arrays: row pointers, column indices and values (none for an
        iso matrix); what a traversal's memory is measured against.

        Examples
        --------
        >>> import gbla
        >>> A = gbla.Matrix.from_edges([0, 1], [1, 0], [0., 2.], device="cpu")
        >>> A.nbytes  # 3 int32 row pointers, 2 int32 column indices, 2 float64 values
        36
        >>> A.pattern().nbytes  # iso: no values
        20
        """
        arrays = (self._indptr, self._indices, self._values)
        return sum(int(a.nbytes) for a in arrays if a is not None)

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def device(self) -> str:
        return self._device

    @property
    def index_dtype(self) -> np.dtype:
        return self._indices.dtype

    @property
    def is_iso(self) -> bool:
        """True when every stored value is True and no values array is kept.

        Such a Matrix has dtype bool; :meth:`from_edges` without values and :meth:`pattern`
        build one. A bool Matrix from :meth:`from_scipy` keeps its values and is not iso.

        Examples
        --------
        >>> import gbla
        >>> A = gbla.Matrix.from_edges([0], [1], [2.], device="cpu")
        >>> A.is_iso, A.pattern().is_iso
        (False, True)
        """
        return self._values is None

    @property
    def S(self) -> MatrixMask:
        """Structural mask: allows (i, j) where the matrix has an entry (``~A.S``: elsewhere).

        A :class:`~gbla.mask.MatrixMask` for :func:`gbla.mxm` and matrix
        :func:`gbla.ewise_add`.

        Examples
        --------
        >>> import gbla
        >>> A = gbla.Matrix.from_edges([0], [1], n=2, device="cpu")
        >>> ~A.S
        ~<mask S of <gbla.Matrix 2x2 nvals=1 dtype=bool device=cpu iso>>
        """
        return MatrixMask(self, structural=True)

    @property
    def V(self) -> MatrixMask:
        """Value mask: allows (i, j) where the matrix has an entry that is not zero (True for
        bool; an iso matrix's entries are all True). ``~A.V`` allows the rest."""
        return MatrixMask(self, structural=False)

    @property
    def T(self) -> Matrix:
        """The transpose, built on first use and cached (shared arrays if A is symmetric).

        A Matrix of shape (ncols, nrows) and A's dtype and device; ``A.T.T is A``. Building it
        decides :attr:`is_symmetric` (on the GPU, with a host synchronisation).

        Examples
        --------
        >>> import gbla
        >>> A = gbla.Matrix.from_edges([0, 0], [1, 2], [5., 6.], device="cpu")
        >>> A.T.to_scipy().toarray()
        array([[0., 0., 0.],
               [5., 0., 0.],
               [6., 0., 0.]])
        >>> A.T.T is A
        True
        """
        if self._T is None:
            xp = B.xp_of(self._device)
            n_rows, n_cols = self._shape
            own = (self._indptr, self._indices, self._values)
            if n_rows != n_cols:
                self._symmetric = False
            elif self._symmetric is None and self._device == "gpu":
                self._symmetric = _storage.mirrored(*own)  # sync
            if self._symmetric:  # the transpose is this matrix, arrays shared
                t = own
            else:
                t = _storage.transpose_csr(*own, n_rows, n_cols, xp)
                if self._symmetric is None:  # on the CPU, compared with the transpose
                    self._symmetric = all(
                        (a is None and b is None)
                        or (a is not None and b is not None and bool(np.array_equal(a, b)))
                        for a, b in zip(t, own)
                    )
                    if self._symmetric:
                        t = own
            same = self._symmetric
            T = Matrix._wrap(*t, (n_cols, n_rows), self._dtype, self._device, symmetric=same)
            T._T = self
            self._T = T
        return self._T

    @property
    def weights(self) -> Any:
        """The :class:`~gbla._weights.WeightFacts` of its weights (what gbla.sssp reads of
        them: the smallest finite, whether one is +inf, the first NaN or -inf, the positive
        ones' mean, smallest and count), found at the first read and kept: a Matrix never
        changes, and a search reads them every call."""
        if self.is_iso or self.nvals == 0:
            return _weights.ISO_FACTS if self.nvals else _weights.NO_FACTS
        if "weights" not in self._cache:
            values = self._values
            row = _weights.numbers(values)
            described = None
            if row[5]:  # a NaN or -inf: the first, named by its edge
                xp = B.xp_of(self._device)
                e = int(xp.flatnonzero(xp.isnan(values) | (values == -np.inf))[0])  # sync
                described = (
                    f"{float(values[e])} at ({int(self._entry_rows()[e])}, {int(self._indices[e])})"
                )
            self._cache["weights"] = _weights.facts(row, described)
        return self._cache["weights"]

    @property
    def is_symmetric(self) -> bool:
        """True when A equals its transpose (decided, and the transpose built, on first use).

        A bool: A is square and A(i, j) and A(j, i) are both present with equal values, or
        both missing. A matrix from :meth:`to_device` or :meth:`astype` inherits the answer
        once it is known.

        Examples
        --------
        >>> import gbla
        >>> gbla.Matrix.from_edges([0, 1], [1, 0], device="cpu").is_symmetric
        True
        >>> gbla.Matrix.from_edges([0, 1], [1, 0], [1., 2.], device="cpu").is_symmetric
        False
        """
        if self._symmetric is None:
            _ = self.T  # building the transpose tells whether it equals the matrix
        return self._symmetric

    # ------------------------------------------------------------------ conversions
    def _values_or_ones(self):
        if self._values is not None:
            return self._values
        return B.xp_of(self._device).ones(len(self._indices), BOOL)

    def to_scipy(self) -> Any:
        """A new scipy.sparse.csr_array on the host.

        Returns
        -------
        scipy.sparse.csr_array
            Of A's shape and dtype, copied (from the GPU when A lives there); an iso matrix
            gets an explicit True for each entry.

        Examples
        --------
        >>> import gbla
        >>> A = gbla.Matrix.from_edges([0, 1], [1, 0], [1., 2.], device="cpu")
        >>> A.to_scipy().toarray()
        array([[0., 1.],
               [2., 0.]])
        """
        import scipy.sparse as sp

        # sync: copied to the host
        arrays = [
            B.to_host(a).copy() for a in (self._values_or_ones(), self._indices, self._indptr)
        ]
        return sp.csr_array(tuple(arrays), shape=self._shape)

    def isequal(self, other: Any) -> bool:
        """Same shape, dtype, structure and values (NaN equals NaN), on either device and
        whatever the index type, as :meth:`Vector.isequal` compares vectors.

        Parameters
        ----------
        other : object
            Only a Matrix can be equal (another dtype never is: no cast).

        Returns
        -------
        bool

        Examples
        --------
        >>> import gbla
        >>> A = gbla.Matrix.from_edges([0, 1], [1, 0], [1., 2.], device="cpu")
        >>> A.isequal(A.T.T), A.isequal(A.T)
        (True, False)
        """
        if not isinstance(other, Matrix) or other.shape != self.shape or other.dtype != self.dtype:
            return False
        B.refuse_host_read("Matrix.isequal")
        # sync: on the host (a Matrix's CSR is canonical: sorted, no duplicates)
        return _storage.same_entries(
            [self._indptr, self._indices, self._values_or_ones()],
            [other._indptr, other._indices, other._values_or_ones()],
        )

    def to_dense(self, fill_value: Any = 0) -> Any:
        """A new 2-D array (NumPy or CuPy, on the matrix's device) of its values, with
        ``fill_value`` where it has no entry.

        Parameters
        ----------
        fill_value : scalar, default 0
            The array keeps the matrix's dtype when fill_value fits there exactly, else it
            takes ``numpy.result_type`` of both (-1 with a bool matrix gives int64).

        Returns
        -------
        numpy.ndarray or cupy.ndarray
            Of the matrix's shape.

        Examples
        --------
        >>> import gbla
        >>> gbla.Matrix.from_edges([0], [1], [5], n=2, device="cpu").to_dense(-1)
        array([[-1,  5],
               [-1, -1]])
        """
        xp = B.xp_of(self._device)
        dtype = V.fill_dtype(fill_value, self._dtype)  # -1 into bool or inf into int widens
        out = xp.full(self._shape, fill_value, dtype=dtype)
        out[self._entry_rows(), self._indices] = self._values_or_ones().astype(dtype)
        return out

    def to_device(self, device: str) -> Matrix:
        """This matrix on ``device`` ('cpu' or 'gpu').

        Parameters
        ----------
        device : {'cpu', 'gpu', None}
            None: the GPU when CuPy sees one, else the CPU.

        Returns
        -------
        Matrix
            ``self`` when it lives there already; else a new Matrix with copied arrays (the
            cached transpose stays behind; a known symmetry goes along).

        Raises
        ------
        DeviceMismatch
            ``device`` is not 'cpu', 'gpu' or None, or is 'gpu' where no GPU can be used.

        Examples
        --------
        >>> import gbla
        >>> A = gbla.Matrix.from_edges([0], [1], device="cpu")
        >>> A.to_device("cpu") is A
        True
        """
        device = B.resolve_device(device)
        if device == self._device:
            return self
        vals = None if self._values is None else B.to_device(self._values, device)
        return Matrix._wrap(
            B.to_device(self._indptr, device),
            B.to_device(self._indices, device),
            vals,
            self._shape,
            self._dtype,
            device,
            self._symmetric,
        )

    def astype(self, dtype: Any) -> Matrix:
        """A Matrix of the same structure with values cast to ``dtype`` (index arrays shared).

        Parameters
        ----------
        dtype : dtype-like
            bool, int32, int64, float32 or float64 (nothing is widened here). Values are cast
            as NumPy's ``astype`` casts, unchecked (2.7 -> 2 into an integer dtype).

        Returns
        -------
        Matrix
            ``self`` when it has that dtype already; else a new Matrix with a new values array
            (so an iso matrix cast to another dtype is no longer iso).

        Raises
        ------
        DomainMismatch
            ``dtype`` is not a dtype, or not one of those five.

        Examples
        --------
        >>> import gbla
        >>> A = gbla.Matrix.from_edges([0, 1], [1, 0], [1.5, 2.7], device="cpu")
        >>> A.astype("int32").to_scipy().toarray()
        array([[0, 1],
               [2, 0]], dtype=int32)
        """
        dtype = V.gbla_dtype(dtype, "dtype")
        if dtype == self._dtype:
            return self
        vals = self._values_or_ones().astype(dtype)
        return Matrix._wrap(
            self._indptr, self._indices, vals, self._shape, dtype, self._device, self._symmetric
        )

    def pattern(self) -> Matrix:
        """The structure alone: an iso bool Matrix (every value True) sharing the index arrays.

        Every stored entry becomes True, explicit zeros included.

        Returns
        -------
        Matrix
            ``self`` when it is iso already, else a Matrix made on the first call and kept
            (with what it caches, such as its transpose).

        Examples
        --------
        >>> import gbla
        >>> A = gbla.Matrix.from_edges([0, 1], [1, 0], [0., 2.], device="cpu")
        >>> A.pattern()
        <gbla.Matrix 2x2 nvals=2 dtype=bool device=cpu iso>
        >>> A.pattern().is_symmetric, A.is_symmetric
        (True, False)
        """
        if self._values is None:
            return self
        if "pattern" not in self._cache:  # one object per matrix: what it caches is kept
            self._cache["pattern"] = Matrix._wrap(
                self._indptr, self._indices, None, self._shape, BOOL, self._device, None
            )
        return self._cache["pattern"]

    def _degrees(self):
        """Entries per row (out-degrees), cached."""
        if "degrees" not in self._cache:
            self._cache["degrees"] = self._indptr[1:] - self._indptr[:-1]
        return self._cache["degrees"]

    def _largest_degree(self):
        """The largest out-degree (0 without rows), found once (a reduction and a sync) and
        kept: the number, not the n degrees it is found from."""
        if "largest_degree" not in self._cache:
            degrees = self._indptr[1:] - self._indptr[:-1]
            self._cache["largest_degree"] = int(degrees.max()) if len(degrees) else 0
        return self._cache["largest_degree"]

    def _entry_rows(self):
        """The row of every stored entry (COO rows, in the index dtype), cached."""
        if "rows" not in self._cache:
            self._cache["rows"] = _storage.rows_of_entries(
                self._indptr, self.nvals, B.xp_of(self._device)
            )
        return self._cache["rows"]

    def _entry_keys(self):
        """The key of every stored entry, row * max(ncols, 1) + column (int64, sorted as CSR
        stores them): the positions matrix-matrix operations merge on; cached."""
        if "keys" not in self._cache:
            self._cache["keys"] = self._entry_rows().astype(np.int64) * max(
                self.ncols, 1
            ) + self._indices.astype(np.int64)
        return self._cache["keys"]

    def _keep_entries(self, keep, values, dtype):
        """A new Matrix of the entries where ``keep`` (a bool array over the entries), with
        ``values`` (an array over all entries, or None: iso) and ``dtype``; ``keep`` None keeps
        every entry. Where every entry stays, it shares A's structure (a Matrix never changes
        it)."""
        xp = B.xp_of(self._device)
        # sync: the kept entries, counted once for all arrays
        where = None if keep is None else xp.flatnonzero(keep)
        if where is None or len(where) == self.nvals:
            out = Matrix._wrap(
                self._indptr, self._indices, values, self._shape, dtype, self._device
            )
            out._cache["rows"] = self._entry_rows()
            return out
        # their rows stay sorted: the row pointers are a search away, and the new matrix
        # keeps the rows
        rows = self._entry_rows()[where]
        out = Matrix._wrap(
            _storage.indptr_of_sorted_rows(rows, self.nrows, self._indptr.dtype, xp),
            self._indices[where],
            None if values is None else values[where],
            self._shape,
            dtype,
            self._device,
        )
        out._cache["rows"] = rows
        return out

    def __repr__(self):
        return (
            f"<gbla.Matrix {self._shape[0]}x{self._shape[1]} nvals={self.nvals} "
            f"dtype={self._dtype.name} device={self._device}{' iso' if self.is_iso else ''}>"
        )
