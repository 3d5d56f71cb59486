"""Helpers shared by the distributions (PyTorch's torch.distributions.utils): argument
broadcasting, logits <-> probabilities, cached properties, and packing of lower-triangular
matrices into vectors."""
import math
from functools import update_wrapper
from numbers import Number

import ember

__all__ = ["broadcast_all", "clamp_probs", "euler_constant", "lazy_property",
           "logits_to_probs", "probs_to_logits", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060        # Euler-Mascheroni constant


def broadcast_all(*values):
    """The arguments (tensors and numbers) broadcast to one shape: numbers become tensors of
    the first tensor's dtype and device (the default dtype when there is none)."""
    if not all(isinstance(v, (ember.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, ember.Tensor) for v in values):
        like = next((v for v in values if isinstance(v, ember.Tensor)), None)
        options = ({"dtype": ember.get_default_dtype()} if like is None
                   else {"dtype": like.dtype, "device": like.device})
        values = [v if isinstance(v, ember.Tensor) else ember.tensor(float(v), **options)
                  for v in values]
    return ember.broadcast_tensors(*values)


def _broadcast_params(*values):
    """(the values broadcast together, their batch shape): Size() when all are numbers."""
    tensors = broadcast_all(*values)
    if all(isinstance(v, Number) for v in values):
        return tensors, ember.Size()
    return tensors, tensors[0].size()


def _probs_or_logits(probs, logits):
    """("probs", probs) or ("logits", logits): exactly one must be given."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    return ("probs", probs) if probs is not None else ("logits", logits)


def _standard_normal(shape, dtype, device):
    return ember.randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value, dim):
    """``value`` summed over its ``dim`` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: sigmoid when ``is_binary``, else softmax over the last
    dim."""
    if is_binary:
        return ember.sigmoid(logits)
    return ember.softmax(logits, -1)


def clamp_probs(probs):
    """``probs`` clamped into [eps, 1 - eps] of their dtype."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities (clamped away from 0 and 1): log(p) - log1p(-p) when
    ``is_binary``, else log(p)."""
    p = clamp_probs(probs)
    if is_binary:
        return ember.log(p) - ember.log1p(-p)
    return ember.log(p)


class lazy_property:
    """A property computed once per instance on first access and stored in its __dict__
    (so a distribution built from probs computes logits only when asked)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property looks like on the class: also a property, for documentation
    tools and for ``isinstance(..., property)`` checks."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)
        lazy_property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (from diagonal ``diag``) of the last two dims, row by row."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = _tril_indices(n, diag, mat.device)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of ``tril_matrix_to_vec``: a square matrix, zero above diagonal ``diag``."""
    m = vec.shape[-1]
    # the side n solves m = n (n + 1) / 2 + diag n - (-diag)(1 - diag)/2 ... for diag <= 0
    n = (-(1 + 2 * diag) + math.sqrt((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1))) / 2
    eps = 1e-6
    if abs(n - round(n)) > eps:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    out = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    rows, cols = _tril_indices(n, diag, vec.device)
    out[..., rows, cols] = vec
    return out


def _tril_indices(n, diag, device):
    rows = [i for i in range(n) for j in range(n) if j <= i + diag]
    cols = [j for i in range(n) for j in range(n) if j <= i + diag]
    return (ember.tensor(rows, dtype=ember.int64, device=device),
            ember.tensor(cols, dtype=ember.int64, device=device))


class _BinaryParameter:
    """Mixin of the distributions parameterised by one success probability given as
    ``probs`` or ``logits``: the other is computed lazily."""

    def _init_param(self, probs, logits, *others):
        """Broadcast the given parameter with ``others`` (numbers or tensors), store it
        as ``self.probs``/``self.logits`` and ``self._param``; returns (others broadcast,
        batch shape)."""
        name, value = _probs_or_logits(probs, logits)
        tensors, batch_shape = _broadcast_params(value, *others)
        setattr(self, name, tensors[0])
        self._param = tensors[0]
        return tensors[1:], batch_shape

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def _expand_binary(self, cls, batch_shape, _instance, names=()):
        new = self._expand_params(cls, batch_shape, _instance, ("probs", "logits") + names)
        new._param = new.__dict__["probs"] if "probs" in self.__dict__ and \
            self._param is self.__dict__["probs"] else new.__dict__["logits"]
        return new
