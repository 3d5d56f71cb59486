"""What every linalg module shares: argument checks with PyTorch's messages, the trip to the
host and back, LAPACK status codes turned into LinAlgError, and the named result tuples.

Linear algebra runs on the host (NumPy's batched LAPACK wrappers, SciPy's LAPACK/BLAS for
what NumPy lacks) in the input's own precision, and the result goes back to the input's
device.  NumPy and SciPy are imported on first use: `import ember` stays free of them."""

from ember.core import _tensor as _T
from ember.core._errors import _scalar_name, _tensor_arg
from ember.core._results import named_result

__all__ = ["LinAlgError"]


class LinAlgError(RuntimeError):
    """A linear algebra routine failed on its input (a singular matrix, a matrix that is not
    positive-definite); PyTorch's ``torch.linalg.LinAlgError``."""

    __module__ = "ember.linalg"


def _numpy():
    import numpy
    return numpy


def _lapack(name, *arrays):
    """SciPy's LAPACK routine ``name`` for the arrays' precision (sgetrf, dgetrf, ...)."""
    from scipy.linalg import get_lapack_funcs
    return get_lapack_funcs(name, arrays)


def _blas(name, *arrays):
    from scipy.linalg import get_blas_funcs
    return get_blas_funcs(name, arrays)


def _type_name(t):
    return _scalar_name(t)              # "ember.FloatTensor" -> "Float", as torch names dtypes


def _check_float(t, op):
    """LAPACK takes float32/float64: integers and the 16-bit floats are refused as torch does."""
    if not t.is_floating_point():
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. "
                           f"Got {_type_name(t)}")
    if t.dtype.itemsize < 4:
        raise RuntimeError(f"{op}: Low precision dtypes not supported. Got {_type_name(t)}")


def _matrix(x, op, arg="A", square=False, floating=True):
    """``x`` checked as a (batch of) matrices: at least 2-D, square if asked, float32/64."""
    t = _tensor_arg(x, op, arg, 1)
    if t.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor {arg} must have at least 2 dimensions.")
    if square and t.shape[-1] != t.shape[-2]:
        raise RuntimeError(f"{op}: {arg} must be batches of square matrices, but they are "
                           f"{t.shape[-2]} by {t.shape[-1]} matrices")
    if floating:
        _check_float(t, op)
    return t


def _same_dtype(a, b, op, names=("A", "B")):
    if a.dtype != b.dtype:
        raise RuntimeError(f"{op}: Expected {names[0]} and {names[1]} to have the same dtype, "
                           f"but found {names[0]} of type {_type_name(a)} and {names[1]} of "
                           f"type {_type_name(b)} instead")


def _recording(*tensors):
    """True when autograd records an op on ``tensors`` or forward AD carries a tangent: the
    op then runs through its differentiable form (core/linalg/derivatives.py, imported on
    first use)."""
    from ember.core import _autograd
    return any(_autograd._tracked(t) for t in tensors)


def _derivatives():
    from ember.core.linalg import derivatives
    return derivatives


def _host(t):
    """t's values as a new NumPy array of its own precision."""
    return _T._to_host(t)


def _back(arr, like, dtype=None):
    """The NumPy array ``arr`` as a tensor on ``like``'s device (``like``'s dtype by default)."""
    return _T._from_host(arr, like.dtype if dtype is None else dtype, like.device)


def _batch_shape(op, *shapes):
    """The broadcast of the batch shapes (all but the last two sizes); a mismatch is reported
    as torch does, naming the first shape's size "a" and the second's "b"."""
    np = _numpy()
    try:
        return tuple(np.broadcast_shapes(*(tuple(s[:-2]) for s in shapes)))
    except ValueError:
        a, b = (tuple(s[:-2]) for s in shapes[:2])
        for i in range(1, max(len(a), len(b)) + 1):
            x = a[-i] if i <= len(a) else 1
            y = b[-i] if i <= len(b) else 1
            if x != y and 1 not in (x, y):
                raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor "
                                   f"b ({y}) at non-singleton dimension "
                                   f"{max(len(a), len(b)) - i}") from None
        raise


def _flat(a):
    """The stack ``a`` (batch dims, then a matrix) as a 3-D array (empty batches included)."""
    import math
    return a.reshape((math.prod(a.shape[:-2]),) + a.shape[-2:])


def _broadcast(arr, batch):
    """``arr`` (a stack of matrices) broadcast to the batch shape ``batch``, flattened to 3-D."""
    np = _numpy()
    full = np.broadcast_to(arr, tuple(batch) + arr.shape[-2:])
    return np.ascontiguousarray(_flat(full))


def _raise_on_info(op, info, message):
    """LinAlgError for the first failed matrix of a batch (``info`` holds LAPACK status codes,
    one per matrix, in the batch's shape), in torch's words."""
    flat = info.reshape(-1)
    bad = flat.nonzero()[0]
    if bad.size:
        where = f"(Batch element {int(bad[0])}): " if info.ndim else ""
        raise LinAlgError(f"{op}: {where}{message(int(flat[bad[0]]))}")


def _lapack_info(name, a, **options):
    """The LAPACK status code (its last output) of routine ``name`` run on each matrix of
    the stack ``a``, in the batch's shape (getrf: k > 0 when U[k-1, k-1] == 0; potrf: k > 0
    when the leading minor of order k is not positive-definite)."""
    np = _numpy()
    flat = _flat(a)
    if not flat.shape[0]:
        return np.zeros(a.shape[:-2], dtype=np.int32)
    routine = _lapack(name, flat[0])
    codes = [routine(m, **options)[-1] for m in flat]
    return np.array(codes, dtype=np.int32).reshape(a.shape[:-2])


def host_svd(a, **options):
    """NumPy's SVD of the host array ``a``; LinAlgError with PyTorch's message when it does
    not converge (NumPy raises its own exception type; PyTorch names linalg.svd for every
    function that takes one)."""
    np = _numpy()
    try:
        return np.linalg.svd(a, **options)
    except np.linalg.LinAlgError:
        why = ("the input matrix contained non-finite values" if not np.isfinite(a).all()
               else "the input matrix is ill-conditioned or has too many repeated singular "
                    "values")
        raise LinAlgError(f"linalg.svd: The algorithm failed to converge because {why}.") \
            from None


def _guarded(fn, stack, *others, routine="getrf", **options):
    """``fn`` over a stack of square matrices (and matching stacks ``others``) with the
    LAPACK status of each (``routine``'s): NaN results where a matrix failed."""
    np = _numpy()
    try:
        return fn(stack, *others), np.zeros(stack.shape[:-2], dtype=np.int32)
    except np.linalg.LinAlgError:
        info = _lapack_info(routine, stack, **options)
        ok = info == 0
        shape = stack.shape if not others else others[0].shape
        out = np.full(shape, np.nan, dtype=stack.dtype)
        out[ok] = fn(stack[ok], *(o[ok] for o in others))
        return out, info


def _singular(k):
    return (f"The diagonal element {k} is zero, the inversion could not be completed because "
            f"the input matrix is singular.")


# torch.return_types.<name>: a named tuple of the op's outputs
_result = named_result


def _fill_out(name, result, out):
    """Write ``result`` (a tensor or a tuple of them) into ``out`` as torch's out= does."""
    if out is None:
        return result
    pairs = zip(out, result) if isinstance(result, tuple) else ((out, result),)
    for o, r in pairs:
        _tensor_arg(o, name, "out")
        if o.shape != r.shape:
            raise RuntimeError(f"{name}: expected out tensor of shape {list(r.shape)}, but got "
                               f"{list(o.shape)}")
        o.copy_(r)
    return out


def with_out(fn):
    """Make ``fn(..., out=None)`` honour out= (the functions compute a fresh result)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        return _fill_out(fn.__name__, fn(*args, **kwargs), out)
    return wrapper
