"""What the algorithms share: turning their graph argument into a Matrix."""

from .. import _backend as B
from .. import _validation as V
from ..matrix import Matrix


def as_graph(A):
    """A square gbla.Matrix from a Matrix, a scipy.sparse or a cupyx.scipy.sparse matrix."""
    if not isinstance(A, Matrix):
        import scipy.sparse as sp
        if sp.issparse(A):
            A = Matrix.from_scipy(A)
        elif B.gpu_available() and _is_cupy_sparse(A):
            A = Matrix.from_cupy(A)
        else:
            raise V.domain("A", "be a gbla.Matrix or a scipy/cupyx sparse matrix",
                           type(A).__name__)
    V.square(A.shape, "A")
    return A


def _is_cupy_sparse(A):
    import cupyx.scipy.sparse as csp
    return csp.issparse(A)
