"""What the algorithms share: their graph argument as a Matrix, their method check, and the
direction every product of one traversal gets."""

from .. import _backend as B
from .. import _validation as V
from ..direction import DEFAULT_POLICY, DirectionPolicy
from ..exceptions import UnknownName
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


def resolve_method(method, algorithm, A, direction):
    """The registered method ``method`` of ``algorithm``, checked to run on ``A`` with
    ``direction``: unknown names, unsupported devices and a direction given to a method that
    does not switch direction all raise."""
    from .. import kernels
    if not isinstance(method, str):
        raise UnknownName(V.message("method", f"be one of {kernels.names(algorithm)}", method))
    entry = kernels.get(method, algorithm)
    if not entry.directions and not (isinstance(direction, str) and direction == "auto"):
        raise V.invalid_value("direction", f"be 'auto' with method={method!r} (it does not "
                              "switch direction)", direction)
    entry.check(A)
    return entry


def tracker(direction):
    """The ``direction=`` for every product of one traversal: a tracker that carries the
    policy's hysteresis from one product to the next, or a fixed 'push' or 'pull'."""
    if direction == "auto":
        return DEFAULT_POLICY.tracker()
    if isinstance(direction, DirectionPolicy):
        return direction.tracker()
    return V.one_of(direction, ("push", "pull"), "direction")
