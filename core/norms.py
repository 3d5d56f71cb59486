"""Norms and distances as composites of primitive reductions: linalg.vector_norm (with
PyTorch's derivative, zero where the norm is zero), torch.norm, dist, cdist and renorm.
(The matrix norms are ember.linalg's, in core/linalg/norms.py.)"""
import math

from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._errors import _scalar_name, _tensor_arg
from ember.core._tensor import where
from ember.core.elementwise import _opmath, _out
from ember.core.function import Function, differentiating_backward, zero_derivative

__all__ = ["cdist", "dist", "norm", "renorm", "vector_norm"]


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """linalg.vector_norm: the ``ord``-norm of ``x`` over ``dim`` (all dims by default)."""
    _tensor_arg(x, "vector_norm", "x")
    if dtype is not None:
        x = x.to(dtype)
    if x.dtype.is_complex:              # the norm of the moduli (real, as PyTorch's)
        x = _T._abs(x)
    if not x.is_floating_point():
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {_scalar_name(x)}")
    red = () if dim is None else dim
    if ord == math.inf:
        return _T.amax(_T._abs(x), red, keepdim)
    if ord == -math.inf:
        return _T.amin(_T._abs(x), red, keepdim)
    if ord == 0:
        return _ZeroNorm.apply(x, dim, keepdim)
    if ord == 1:
        return _T._abs(x).sum(dim, keepdim=keepdim)
    xf = x.float() if _opmath(x.dtype) != x.dtype else x   # torch computes these in float32
    if ord == 2 and not _ag._tracked(xf):
        # nothing differentiates it (clip_grad_norm_'s norms): the ops alone, without the
        # node, whose apply cost more than the two passes on a small tensor
        r = _T.sqrt(_T.square(xf).sum(dim, keepdim=keepdim))
    else:
        r = _PNorm.apply(xf, float(ord), dim, keepdim)
    return r if xf is x else r.to(x.dtype)


class _ZeroNorm(Function):
    """The count of nonzeros: recorded (PyTorch's result has a grad_fn) but, as PyTorch's
    backward, it passes no gradient on at all: x.grad stays None, not zeros."""

    _node_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        ctx.dim, ctx.keepdim = dim, keepdim
        return (x != 0).to(x.dtype).sum(dim, keepdim=keepdim)

    @staticmethod
    def backward(ctx, g):
        return None, None, None

    @staticmethod
    def jvp(ctx, tx, *_):           # forward mode: a zero tangent (as PyTorch's)
        return _T.zeros_like(tx.sum(ctx.dim, keepdim=ctx.keepdim))


class _PNorm(Function):
    """(sum |x|^p)^(1/p) over ``dim`` with PyTorch's derivative x |x|^(p-2) / norm^(p-1),
    zero where the norm is zero (differentiating the composite gives 0/0 there)."""

    _node_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, p, dim, keepdim):
        if p == 2:                                     # two passes: no |x| needed
            norm = _T.sqrt(_T.square(x).sum(dim, keepdim=True))
        else:
            norm = (_T._abs(x) ** p).sum(dim, keepdim=True) ** (1.0 / p)
        ctx.save_for_backward(x, norm)
        ctx.p, ctx.dim, ctx.keepdim = p, dim, keepdim
        return norm if keepdim else _unkeep(norm, dim)

    @staticmethod
    def backward(ctx, g):
        x, norm = ctx.saved_tensors
        p = ctx.p
        if differentiating_backward(x):   # the norm as a function of x again
            norm = _PNorm.apply(x, p, ctx.dim, True)
        if not ctx.keepdim:
            g = g.reshape(norm.shape)
        scale = x if p == 2 else x * _T._abs(x) ** (p - 2)
        if p < 2:                   # 0 * inf at a zero entry: PyTorch's subgradient there is 0
            scale = _T.where(x == 0, 0.0, scale)
        d = g / (norm if p == 2 else norm ** (p - 1))
        return scale * _T.where(norm == 0, 0.0, d).to(d.dtype), None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        """The norm's tangent: sum(x |x|^(p-2) t) / norm^(p-1), zero where the norm is."""
        x, norm = ctx.saved_tensors
        p = ctx.p
        scale = x if p == 2 else x * _T._abs(x) ** (p - 2)
        d = (scale * t).sum(ctx.dim, keepdim=True) / (norm if p == 2 else norm ** (p - 1))
        d = _T.where(norm == 0, 0.0, d).to(d.dtype)
        return d if ctx.keepdim else _unkeep(d, ctx.dim)


def _unkeep(t, dim):
    """``t`` (reduced over ``dim`` with keepdim) without the reduced dims."""
    if dim is None or dim == () or dim == []:
        return t.reshape(())
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return t.squeeze(tuple(d % t.dim() for d in dims)) if t.dim() else t


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: the vector ``p``-norm over ``dim`` (all elements by default); 'fro' is
    the 2-norm over the dims given (at most two), 'nuc' the sum of singular values of the
    matrices over ``dim`` (the last two by default, for a 2-D input)."""
    x = _tensor_arg(input, "norm", position=1)
    if isinstance(dim, int):
        dim = (dim,)
    if isinstance(p, str):
        if p == "nuc":                  # the sum of singular values: a matrix norm
            from ember.core.linalg.norms import matrix_norm
            dim = tuple(range(x.dim())) if dim is None else tuple(dim)
            if len(dim) != 2:
                raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                                   f"{' '.join(map(str, dim))}")
            r = matrix_norm(x, "nuc", dim, keepdim, dtype=dtype)
            return r if out is None else _T._result_out(r, out, "norm")
        if p != "fro":
            raise RuntimeError(f"norm(): unsupported p {p!r}: expected 'fro', 'nuc' or a number")
        if dim is not None and len(dim) > 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {tuple(dim)}")
        p = 2
    if p is None:
        p = 2
    if not isinstance(p, (int, float)) or isinstance(p, bool):
        raise TypeError(f"norm(): argument 'p' must be a number or 'fro', not "
                        f"{type(p).__name__}")
    r = vector_norm(x, p, dim, keepdim, dtype=dtype)
    return r if out is None else _T._result_out(r, out, "norm")


def dist(input, other, p=2):
    """The p-norm of input - other (broadcast)."""
    d = _tensor_arg(input, "dist") - _tensor_arg(other, "dist", "other")
    if not d.is_floating_point() and not d.is_complex():
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_T._st_name(d.dtype)} instead.")
    return vector_norm(d.reshape(-1), p)


class _CdistMax(Function):
    """cdist's inf-norm over the last dim: torch's _cdist_backward passes the whole
    gradient to every coordinate at the maximum, ties included (amax would split it)."""

    _node_name = "CdistBackward0"

    @staticmethod
    def forward(ctx, d):
        a = _T._abs(d)
        r = _T.amax(a, -1) if d.shape[-1] else a.sum(-1)
        ctx.save_for_backward(d, r)
        return r

    @staticmethod
    def backward(ctx, g):
        d, r = ctx.saved_tensors
        at_max = (_T._abs(d) == r.unsqueeze(-1)).to(d.dtype)
        return d.sign() * at_max * g.unsqueeze(-1)


def _cdist_norm(d, p):
    """The p-norm over the last dim with torch's cdist derivative: 0 at a zero coordinate
    (p <= 1) or a zero distance, a count (p = 0) differentiates to 0."""
    if p == 0:
        return zero_derivative("cdist", lambda t: (t != 0).to(t.dtype).sum(-1), d)
    if p == 1:
        return _T._abs(d).sum(-1)
    if p == math.inf:
        return _CdistMax.apply(d)
    return _PNorm.apply(d, float(p), -1, False)


@composite("cdist")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each row of x1 [..., P, M] and of x2 [..., R, M]."""
    _tensor_arg(x1, "cdist", "x1")
    _tensor_arg(x2, "cdist", "x2")
    for t, name in ((x1, "X1"), (x2, "X2")):
        if t.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{t.dim()}D")
        if not t.is_floating_point():
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_T._st_name(t.dtype)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    d = x1.unsqueeze(-2) - x2.unsqueeze(-3)            # [..., P, R, M]
    return _cdist_norm(d, p)


def renorm(input, p, dim, maxnorm, *, out=None):
    """Each slice of ``input`` along ``dim`` whose ``p``-norm exceeds ``maxnorm``, rescaled
    to norm ``maxnorm`` (as PyTorch, by maxnorm / (norm + 1e-7))."""
    x = _tensor_arg(input, "renorm", position=1)
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError(f"renorm: Expected a floating point or complex tensor as input. "
                           f"Got {_T._st_name(x.dtype)}")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if x.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.dim()} "
                           f"dimensions")
    dim = dim % x.dim()
    others = [d for d in range(x.dim()) if d != dim]
    norms = vector_norm(x, p, others, keepdim=True)
    factor = where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0).to(x.dtype)
    return _out(x * factor, out)
