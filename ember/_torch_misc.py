"""Smaller torch.* functions: anomaly and inter-op thread settings, the legacy default
tensor type, index and segment utilities (unravel_index, segment_reduce, gradient),
binomial/poisson sampling, low-rank SVD/PCA, symbolic-int helpers and DLPack export.
Loaded on first use through the façade's ``__getattr__``."""
import math
import warnings

import ember
from ember.core._autograd import set_requires_grad

__all__ = ["binomial", "empty_permuted", "get_num_interop_threads", "gradient", "has_lapack",
           "has_mkl", "has_openmp", "has_spectral", "init_num_threads",
           "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "pca_lowrank", "poisson",
           "segment_reduce", "set_anomaly_enabled", "set_default_tensor_type",
           "set_flush_denormal", "set_num_interop_threads", "svd_lowrank",
           "sym_constrain_range", "sym_constrain_range_for_size", "sym_sqrt",
           "thread_safe_generator", "to_dlpack", "unravel_index"]

# what this build links: LAPACK through NumPy/SciPy, FFTs in ember.fft; no MKL
has_lapack = True
has_spectral = True
has_mkl = False
has_openmp = True           # ember-cpu's kernels are built with OpenMP (one thread without)

_state = {"interop": None, "interop_used": False}


# -- settings ------------------------------------------------------------------------------

def is_anomaly_enabled():
    """Whether autograd anomaly detection is on."""
    from ember.core import _autograd
    return bool(_autograd.is_anomaly_enabled())


def is_anomaly_check_nan_enabled():
    """Whether anomaly detection checks gradients for NaN."""
    from ember.core import _autograd
    return bool(_autograd.is_anomaly_check_nan_enabled())


def set_anomaly_enabled(enabled, check_nan=True):
    """Turn anomaly detection on or off (``check_nan``: also fail on NaN gradients)."""
    from ember.core import _autograd
    _autograd._set_anomaly_enabled(bool(enabled), bool(check_nan))


def get_num_interop_threads():
    """Threads for inter-op parallelism (ember runs ops one at a time per Python thread;
    the value is what set_num_interop_threads set, else the CPU count)."""
    import os
    _state["interop_used"] = True
    return _state["interop"] or os.cpu_count() or 1


def set_num_interop_threads(num):
    """Set the inter-op thread count once, before any inter-op work (as PyTorch)."""
    if num <= 0:
        raise RuntimeError("Expected positive number of threads")
    if _state["interop_used"] or _state["interop"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _state["interop"] = int(num)


def init_num_threads():
    """Initialise the intra-op thread pool for this thread (a no-op: ember-cpu's pool
    initialises itself)."""


def set_flush_denormal(mode):
    """Whether flushing denormals could be set: ember keeps IEEE denormals, so False."""
    return False


def set_default_tensor_type(t):
    """The legacy form of set_default_dtype (and device, for CUDA types): ``t`` a legacy
    tensor type such as ember.DoubleTensor or its name."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                  "use torch.set_default_dtype() and torch.set_default_device() as "
                  "alternatives.", UserWarning, stacklevel=2)
    from ember.core import legacy_types
    cls = legacy_types.resolve(t)
    if not cls.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    ember.set_default_dtype(cls.dtype)
    if cls.is_cuda:
        ember.set_default_device("cuda")


def thread_safe_generator():
    """The calling DataLoader thread worker's generator, or None elsewhere: ember's
    DataLoader workers are processes, whose default generator is their own, so None."""
    return None


# -- creation, indices, segments -----------------------------------------------------------

def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialised tensor of ``size`` whose memory holds its dims in the order
    ``physical_layout`` (outermost first)."""
    size = tuple(size)
    order = list(physical_layout)
    if sorted(order) != list(range(len(size))):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    base = ember.empty(*[size[d] for d in order], dtype=dtype, device=device)
    inverse = [order.index(d) for d in range(len(size))]
    return set_requires_grad(base.permute(*inverse), requires_grad)


def unravel_index(indices, shape):
    """The coordinates of flat ``indices`` in a tensor of ``shape`` (a tuple of tensors)."""
    if not isinstance(indices, ember.Tensor):
        indices = ember.tensor(indices)
    if indices.is_floating_point() or indices.dtype == ember.bool or indices.is_complex():
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    # out-of-range indices wrap (floor division and remainder), as PyTorch 2.13's do
    flat = indices.long()
    coords = []
    for s in reversed(shape):
        coords.append(ember.remainder(flat, s))
        flat = ember.div(flat, s, rounding_mode="floor")
    return tuple(reversed(coords))


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """Reduce ('sum', 'mean', 'max', 'min', 'prod') consecutive segments of ``data`` along
    ``axis``, the segments given by ``lengths`` or ``offsets``; empty segments give
    ``initial`` (or the reduction's identity; NaN for mean, as PyTorch)."""
    if reduce not in ("sum", "mean", "max", "min", "prod"):
        raise RuntimeError(f"segment_reduce: unsupported reduction {reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
    if lengths is None:
        lengths = offsets[..., 1:] - offsets[..., :-1]
    if lengths.dim() != 1:
        raise RuntimeError("segment_reduce(): only 1-D lengths are supported")
    counts = [int(v) for v in lengths.tolist()]
    if not unsafe and sum(counts) != data.shape[axis]:
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                           "to data.size(lengths.dim()-1) when !unsafe.")
    pieces, start = [], 0
    for n in counts:
        part = data.narrow(axis, start, n)
        start += n
        if n == 0:
            fill = initial
            if fill is None:
                fill = {"sum": 0.0, "prod": 1.0, "mean": float("nan"),
                        "max": float("-inf"), "min": float("inf")}[reduce]
            shape = list(data.shape)
            shape[axis] = 1
            pieces.append(ember.full(shape, fill, dtype=data.dtype, device=data.device))
            continue
        if reduce in ("max", "min"):
            value = getattr(part, "amax" if reduce == "max" else "amin")(axis, keepdim=True)
        else:
            value = getattr(part, reduce)(axis, keepdim=True)
        if initial is not None and reduce in ("sum", "prod", "max", "min"):
            combine = {"sum": ember.add, "prod": ember.mul, "max": ember.clamp_min,
                       "min": ember.clamp_max}[reduce]
            value = combine(value, initial)
        pieces.append(value)
    return ember.cat(pieces, axis)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The gradient of samples ``input`` by central differences inside and one-sided
    (first- or second-order, ``edge_order``) differences at the ends, along ``dim`` (every
    dim by default); ``spacing`` a number, one per dim, or coordinate tensors."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(range(input.dim())) if dim is None else \
        ([dim] if isinstance(dim, int) else list(dim))
    dims = [d % input.dim() for d in dims]
    if not isinstance(spacing, (list, tuple)):
        spacing = [spacing] * len(dims)
    if len(spacing) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                           f"it's spacing and dim arguments to have the same length, but got "
                           f"a spacing argument of length {len(spacing)} and a dim argument "
                           f"of length {len(dims)}.")
    x = input if input.is_floating_point() or input.is_complex() else input.to(
        ember.get_default_dtype())
    out = []
    for d, h in zip(dims, spacing):
        n = x.shape[d]
        if n < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
        out.append(_gradient_1d(x, d, h, edge_order))
    return tuple(out)


def _gradient_1d(x, d, h, edge_order):
    n = x.shape[d]

    def at(a, b):
        return x.narrow(d, a, b - a)
    if isinstance(h, ember.Tensor) and h.dim() == 1:          # coordinates
        # torch promotes with the coordinates' dtype (integer ones count as the default)
        dt = ember.promote_types(x.dtype, h.dtype if h.is_floating_point() else
                                 ember.get_default_dtype())
        x, c = x.to(dt), h.to(dt)
        shape = [1] * x.dim()
        shape[d] = -1
        dx = (c[1:] - c[:-1]).reshape(shape)
        a, b = dx.narrow(d, 0, n - 2), dx.narrow(d, 1, n - 2)
        interior = (at(2, n) * a * a - at(0, n - 2) * b * b + at(1, n - 1) * (b * b - a * a)) \
            / (a * b * (a + b))
        if edge_order == 1:
            first = (at(1, 2) - at(0, 1)) / dx.narrow(d, 0, 1)
            last = (at(n - 1, n) - at(n - 2, n - 1)) / dx.narrow(d, n - 2, 1)
        else:       # the quadratic through the three end samples, differentiated at the end
            h1, h2 = dx.narrow(d, 0, 1), dx.narrow(d, 1, 1)
            first = (-(2 * h1 + h2) / (h1 * (h1 + h2)) * at(0, 1)
                     + (h1 + h2) / (h1 * h2) * at(1, 2) - h1 / (h2 * (h1 + h2)) * at(2, 3))
            h1, h2 = dx.narrow(d, n - 3, 1), dx.narrow(d, n - 2, 1)
            last = (h2 / (h1 * (h1 + h2)) * at(n - 3, n - 2)
                    - (h1 + h2) / (h1 * h2) * at(n - 2, n - 1)
                    + (2 * h2 + h1) / (h2 * (h1 + h2)) * at(n - 1, n))
        return ember.cat([first, interior, last], d)
    h = float(h.item() if isinstance(h, ember.Tensor) else h)
    interior = (at(2, n) - at(0, n - 2)) / (2 * h)
    if edge_order == 1:
        first = (at(1, 2) - at(0, 1)) / h
        last = (at(n - 1, n) - at(n - 2, n - 1)) / h
    else:
        first = (-1.5 * at(0, 1) + 2 * at(1, 2) - 0.5 * at(2, 3)) / h
        last = (0.5 * at(n - 3, n - 2) - 2 * at(n - 2, n - 1) + 1.5 * at(n - 1, n)) / h
    return ember.cat([first, interior, last], d)


# -- sampling ------------------------------------------------------------------------------

def poisson(input, generator=None):
    """A Poisson sample per element of the rates ``input`` (NumPy's sampler on the host,
    seeded from ember's generator); recorded with a zero gradient, as PyTorch's."""
    import numpy as np

    from ember.core.function import zero_derivative
    rate = input.detach().double().cpu().numpy()
    if (rate < 0).any():
        raise RuntimeError("poisson: invalid Poisson rate, expected rate to be non-negative")
    seed = int(ember.randint(0, 2 ** 62, (), generator=generator))
    samples = np.random.default_rng(seed).poisson(rate)
    return zero_derivative("poisson", lambda x: ember.tensor(samples, dtype=x.dtype,
                                                             device=x.device), input)


def binomial(count, prob, generator=None):
    """A Binomial(count, prob) sample per element (NumPy's sampler on the host); recorded
    with a backward that raises, as PyTorch's."""
    import numpy as np

    from ember.core.function import without_derivative
    n = count.detach().double().cpu().numpy()
    p = prob.detach().double().cpu().numpy()
    if ((p < 0) | (p > 1)).any():
        raise RuntimeError("binomial: expected prob to be in [0, 1]")
    seed = int(ember.randint(0, 2 ** 62, (), generator=generator))
    samples = np.random.default_rng(seed).binomial(n.astype(np.int64), p)
    return without_derivative("binomial", lambda c, q: ember.tensor(
        samples, dtype=c.dtype, device=c.device), count, prob)


# -- low-rank factorizations ---------------------------------------------------------------

def _range_finder(A, q, niter, M):
    """An orthonormal basis (n x q) for the range of (A - M)^T (Halko et al. 2011, alg 4.4)."""
    def mult(X):
        return A.transpose(-2, -1) @ X - (0 if M is None else M.transpose(-2, -1) @ X)

    def mult_t(X):
        return A @ X - (0 if M is None else M @ X)
    R = ember.randn(*A.shape[:-2], A.shape[-2], q, dtype=A.dtype, device=A.device)
    Q = ember.linalg.qr(mult(R)).Q
    for _ in range(niter):
        Q = ember.linalg.qr(mult_t(Q)).Q
        Q = ember.linalg.qr(mult(Q)).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V): an approximate rank-``q`` SVD of A - M by randomized subspace
    iteration (``niter`` steps)."""
    q = min(q, A.shape[-1], A.shape[-2])
    M = None if M is None else M.expand(A.shape)
    Q = _range_finder(A, q, niter, M)                            # (n, q)
    B = (A @ Q) - (0 if M is None else M @ Q)                    # (m, q)
    U, S, Vh = ember.linalg.svd(B, full_matrices=False)
    return U, S, Q @ Vh.transpose(-2, -1)


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of an approximate PCA: svd_lowrank of ``A`` centred on its column means."""
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    if not (0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter)
    return svd_lowrank(A, q, niter, A.mean(-2, keepdim=True))


# -- symbolic ints, DLPack ---------------------------------------------------------------

def sym_sqrt(a):
    """math.sqrt for numbers (and symbolic numbers)."""
    if hasattr(a, "__sym_sqrt__"):
        return a.__sym_sqrt__()
    return math.sqrt(a)


def sym_constrain_range(size, *, min=None, max=None):
    """Assert ``min <= size <= max`` (a check on a plain int; a symbolic int keeps it)."""
    if isinstance(size, int):
        if (min is not None and size < min) or (max is not None and size > max):
            raise ValueError(f"Invalid value {size} for range [{min}:{max}]")
        return
    node = getattr(size, "node", None)
    if node is not None and hasattr(node, "constrain_range"):
        node.constrain_range(min, max)


def sym_constrain_range_for_size(size, *, min=None, max=None):
    """sym_constrain_range for a value used as a size (at least 0; PyTorch's default min
    of 2 only matters for its symbolic reasoning)."""
    if isinstance(size, int) and size < 0:
        raise ValueError(f"Invalid value {size} for range [{min}:{max}]")
    sym_constrain_range(size, min=min, max=max)


def to_dlpack(tensor):
    """A DLPack capsule sharing ``tensor``'s memory."""
    return tensor.__dlpack__()
