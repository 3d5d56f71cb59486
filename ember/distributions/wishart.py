"""The Wishart distribution over positive-definite matrices."""
import math
import warnings
from numbers import Number

import ember
from ember.distributions import constraints
from ember.distributions.chi2 import Chi2
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.multivariate_normal import _cholesky_inverse, _precision_to_scale_tril
from ember.distributions.utils import lazy_property

__all__ = ["Wishart"]


def _mvdigamma(x, p):
    """sum_i digamma(x - i/2), i = 0..p-1: the derivative of mvlgamma."""
    half = ember.arange(p, dtype=x.dtype, device=x.device) / 2
    return ember.digamma(x.unsqueeze(-1) - half).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=ember.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """Wishart(df, covariance_matrix=None, precision_matrix=None, scale_tril=None): the
    law of sum_i x_i x_i^T for df Gaussian vectors x_i (real df > p - 1 allowed)."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            # torch guards this with a bare assert, so callers catch AssertionError
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        name, param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = ember.Size(param.shape[:-2])
            self.df = ember.tensor(float(df), dtype=param.dtype, device=param.device)
        else:
            batch_shape = ember.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape))
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if bool((self.df <= event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event_shape[-1] - 1}.")
        setattr(self, name, param.expand(tuple(batch_shape) + (-1, -1)))
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = param
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(param)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(param)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        p = event_shape[-1]
        self._dist_chi2 = Chi2(df=self.df.unsqueeze(-1) - ember.arange(
            p, dtype=param.dtype, device=param.device).expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        batch_shape = ember.Size(batch_shape)
        new = self._expand_params(Wishart, batch_shape, _instance,
                                  ("covariance_matrix", "scale_tril", "precision_matrix"))
        new.df = self.df.expand(batch_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        p = self._event_shape[-1]
        new._dist_chi2 = Chi2(df=new.df.unsqueeze(-1) - ember.arange(
            p, dtype=new.df.dtype, device=new.df.device).expand(tuple(batch_shape) + (-1,)))
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return _cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    def _df_matrix(self):
        return self.df.view(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = ember.where(factor <= 0, math.nan, factor)
        return factor.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        d = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=ember.Size()):
        """L A A^T L^T with A lower triangular: chi (df - i) on the diagonal, standard
        normals below (Bartlett's decomposition)."""
        p = self._event_shape[-1]
        diag = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt())
        shape = tuple(ember.Size(sample_shape)) + tuple(self._batch_shape) + (p, p)
        below = ember.randn(shape, dtype=diag.dtype, device=diag.device).tril(-1)
        A = below + ember.diag_embed(diag)
        chol = self._unbroadcasted_scale_tril @ A
        return chol @ chol.mT

    def rsample(self, sample_shape=ember.Size(), max_try_correction=None):
        """A sample; a draw that is numerically singular is redrawn up to
        ``max_try_correction`` (3) times, with a warning if it stays singular."""
        tries = 3 if max_try_correction is None else max_try_correction
        sample = self._bartlett_sampling(sample_shape)
        ok = self.support.check(sample)
        for _ in range(tries):
            if bool(ok.all()):
                break
            fresh = self._bartlett_sampling(sample_shape)
            sample = ember.where(ok[..., None, None], sample, fresh)
            ok = self.support.check(sample)
        if not bool(ok.all()):
            warnings.warn("Singular sample detected.", stacklevel=2)
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        log_det_l = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = ember.cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * math.log(2) / 2 + log_det_l) - ember.mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * ember.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        log_det_l = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * math.log(2) / 2 + log_det_l) + ember.mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-ember.linalg.slogdet(-2 * x).logabsdet + math.log(2) * p)
                + ember.mvlgamma(y + (p + 1) / 2, p))
