"""The vector and matrix transforms of ember.distributions.transforms (re-exported there,
where their __module__ points): softmax and stick breaking onto the simplex, Cholesky-factor
transforms, and the slice-wise CatTransform / StackTransform."""
import functools
import math
import operator

import ember
import ember.nn.functional as F
from ember.distributions import constraints
from ember.distributions.transforms import Transform, _atanh, _clipped_sigmoid, _Elementwise
from ember.distributions.utils import _sum_rightmost, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["CatTransform", "CorrCholeskyTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "SoftmaxTransform", "StackTransform",
           "StickBreakingTransform"]


class CorrCholeskyTransform(Transform):
    """Unconstrained vectors of length D(D-1)/2 to Cholesky factors of D x D correlation
    matrices: tanh into (-1, 1), then stick breaking along each row."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = ember.finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        remaining = (1 - r * r).sqrt().cumprod(-1)
        eye = ember.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return (r + eye) * F.pad(remaining[..., :-1], [1, 0], value=1.0)

    def _inverse(self, y):
        left = 1 - ember.cumsum(y * y, dim=-1)
        left_shifted = F.pad(left[..., :-1], [1, 0], value=1.0)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left_shifted, diag=-1).sqrt()
        return _atanh(t)

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        left = 1 - (y * y).cumsum(dim=-1)
        stick = 0.5 * tril_matrix_to_vec(left, diag=-2).log().sum(-1)
        tanh_part = -2 * (x + F.softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick + tanh_part

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return ember.Size(tuple(shape[:-1]) + (d, d))

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        n = shape[-1]
        return ember.Size(tuple(shape[:-2]) + (n * (n - 1) // 2,))


class SoftmaxTransform(_Elementwise):
    """Unconstrained vectors to the simplex by softmax (not injective: its inverse is the
    log, one of the preimages)."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        p = (x - x.max(-1, True)[0]).exp()
        return p / p.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


class StickBreakingTransform(_Elementwise):
    """Unconstrained vectors of length K-1 to the K-simplex by stick breaking (a
    bijection, with a tractable Jacobian)."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def _call(self, x):
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        z = _clipped_sigmoid(x - offset.log())
        left = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1.0) * F.pad(left, [1, 0], value=1.0)

    def _inverse(self, y):
        head = y[..., :-1]
        offset = y.shape[-1] - y.new_ones(head.shape[-1]).cumsum(-1)
        rest = ember.clamp(1 - head.cumsum(-1), min=ember.finfo(y.dtype).tiny)
        return head.log() - rest.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        x = x - offset.log()
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return ember.Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return ember.Size(tuple(shape[:-1]) + (shape[-1] - 1,))


class LowerCholeskyTransform(_Elementwise):
    """Unconstrained matrices to lower-triangular ones with a positive diagonal (exp of
    the diagonal, the strict lower triangle kept)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(_Elementwise):
    """Unconstrained matrices to positive-definite ones: L L^T of their lower-Cholesky
    transform."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        factor = LowerCholeskyTransform()(x)
        return factor @ factor.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(ember.linalg.cholesky(y))


class CatTransform(Transform):
    """Transforms ``tseq`` applied to consecutive slices of ``lengths`` along ``dim``."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")
        self.dim = dim

    @functools.cached_property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @functools.cached_property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _slices(self, x, maps, name="x"):
        # torch signals shape mismatches here with AssertionError; mirror type and text
        if not -x.dim() <= self.dim < x.dim():
            raise AssertionError(
                f"dim {self.dim} out of range for tensor with {x.dim()} dimensions")
        if x.shape[self.dim] != self.length:
            raise AssertionError(f"{name}.size({self.dim}) = {x.shape[self.dim]} must equal "
                                 f"length {self.length}")
        out, start = [], 0
        for fn, length in zip(maps, self.lengths):
            out.append(fn(x.narrow(self.dim, start, length)))
            start += length
        return out

    def _call(self, x):
        return ember.cat(self._slices(x, self.transforms), dim=self.dim)

    def _inverse(self, y):
        return ember.cat(self._slices(y, [t.inv for t in self.transforms], "y"), dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        xs = self._slices(x, [lambda s: s] * len(self.transforms))
        ys = self._slices(y, [lambda s: s] * len(self.transforms), "y")
        terms = []
        for t, a, b in zip(self.transforms, xs, ys):
            term = t.log_abs_det_jacobian(a, b)
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim += self.event_dim
        if dim < 0:
            return ember.cat(terms, dim=dim)
        return functools.reduce(operator.add, terms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Transforms ``tseq`` applied to the slices along ``dim``, restacked."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z, name="x"):
        # same AssertionError type/text as torch for mismatched inputs
        if not -z.dim() <= self.dim < z.dim():
            raise AssertionError(
                f"dim {self.dim} out of range for tensor with {z.dim()} dimensions")
        if z.shape[self.dim] != len(self.transforms):
            raise AssertionError(f"{name}.size({self.dim}) = {z.shape[self.dim]} must equal "
                                 f"len(transforms) {len(self.transforms)}")
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _call(self, x):
        return ember.stack([t(s) for t, s in zip(self.transforms, self._slice(x))], self.dim)

    def _inverse(self, y):
        return ember.stack([t.inv(s) for t, s in zip(self.transforms, self._slice(y, "y"))],
                           self.dim)

    def log_abs_det_jacobian(self, x, y):
        return ember.stack([t.log_abs_det_jacobian(a, b) for t, a, b in
                            zip(self.transforms, self._slice(x), self._slice(y, "y"))], self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
