"""The rest of PyTorch's registered KL(p || q) pairs across families (kl_pairs.py holds the
same-family ones and the common cross pairs): closed forms involving ContinuousBernoulli,
Gumbel, Pareto and Uniform, and the pairs whose answer is infinite because p's support
leaves q's (a Normal against a Beta, anything unbounded against a Pareto, ...).  Each
follows PyTorch's formula, so values agree with torch.distributions.kl_divergence,
including where PyTorch gives ``inf`` for parameters outside a closed form's range."""
import math
import re

import ember
from ember.distributions.beta import Beta
from ember.distributions.continuous_bernoulli import ContinuousBernoulli
from ember.distributions.exponential import Exponential
from ember.distributions.gamma import Gamma
from ember.distributions.gumbel import Gumbel
from ember.distributions.kl import register_kl
from ember.distributions.laplace import Laplace
from ember.distributions.normal import Normal
from ember.distributions.pareto import Pareto
from ember.distributions.uniform import Uniform
from ember.distributions.utils import euler_constant

__all__ = []

_INF = math.inf


def _infinite_like(t):
    return ember.full_like(t, _INF)


def _x_log_x(t):
    # xlogy gives 0 at t == 0 (t * log t would be nan for a Uniform with low=0)
    return ember.special.xlogy(t, t)


def _inf_where(cond, result):
    return ember.where(cond, _INF, result)


# --- infinite: p puts mass where q has none -------------------------------------------------

def _register_infinite(p_type, q_types, param):
    """Register KL(p || q) = inf for each q type (``param``: the p attribute to shape it)."""
    def infinite(p, q):
        return _infinite_like(getattr(p, param))
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", p_type.__name__).lower()
    infinite.__name__ = f"_kl_{snake}_infinity"      # PyTorch's name: kl._kl_normal_infinity
    for q_type in q_types:
        register_kl(p_type, q_type)(infinite)


_register_infinite(Beta, (Pareto,), "concentration1")
_register_infinite(ContinuousBernoulli, (Pareto,), "probs")
_register_infinite(Exponential, (Beta, ContinuousBernoulli, Pareto, Uniform), "rate")
_register_infinite(Gamma, (Beta, ContinuousBernoulli, Pareto, Uniform), "concentration")
_register_infinite(Gumbel, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform),
                   "loc")
_register_infinite(Laplace, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform),
                   "loc")
_register_infinite(Normal, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform),
                   "loc")
_register_infinite(Pareto, (Beta, ContinuousBernoulli, Uniform), "scale")


# --- ContinuousBernoulli ----------------------------------------------------------------------

def _minus_cross_entropy_with_cb(p, q):
    """-H(p) - E_p[log q(x)] for q a ContinuousBernoulli and p on the unit interval."""
    return -p.entropy() - p.mean * q.logits - ember.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return _minus_cross_entropy_with_cb(p, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = _minus_cross_entropy_with_cb(p, q)
    return _inf_where((p.high >= 1.0) | (p.low <= 0.0), result)   # as PyTorch's test


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + q.scale.log()
    t3 = (p.variance + p.mean.square() - 2.0 * q.loc * p.mean) / (2.0 * q.scale.square())
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    # PyTorch's condition (q.low >= 0 or q.high <= 1), kept so that values agree
    return _inf_where((q.low >= 0.0) | (q.high <= 1.0), result)


# --- Gumbel, Normal-Laplace -------------------------------------------------------------------

@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    scale_rate = p.rate * q.scale
    loc_scale = q.loc / q.scale
    t1 = scale_rate.log() - 1
    t2 = ember.exp(loc_scale) * scale_rate / (scale_rate + 1)
    return t1 - loc_scale + t2 + scale_rate.reciprocal()


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    c = p.concentration
    beta_scale = p.rate * q.scale
    loc_scale = q.loc / q.scale
    t1 = (c - 1) * c.digamma() - c.lgamma() - c
    t2 = beta_scale.log() + c / beta_scale
    t3 = ember.exp(loc_scale) * (1 + beta_scale.reciprocal()).pow(-c) - loc_scale
    return t1 + t2 + t3


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    ratio = p.scale / q.scale
    t1 = (ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * euler_constant - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (euler_constant + 1)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    ratio = q.scale / (p.high - p.low)
    high = (p.high - q.loc) / q.scale
    low = (p.low - q.loc) / q.scale
    t1 = ratio.log() + 0.5 * (high + low)
    return t1 - ratio * (ember.exp(-high) - ember.exp(-low))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    z = loc_diff / p.scale
    t1 = (p.scale / q.scale).log()
    t2 = math.sqrt(2 / math.pi) * p.scale * ember.exp(-0.5 * z.pow(2))
    t3 = loc_diff * ember.erf(math.sqrt(0.5) * z)
    return -t1 + (t2 + t3) / q.scale - 0.5 * (1 + math.log(0.5 * math.pi))


# --- Pareto as p: finite only where its moments are ---------------------------------------

@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate = p.scale * q.rate
    t1 = (p.alpha / scale_rate).log()
    t3 = p.alpha * scale_rate / (p.alpha - 1)
    return _inf_where(p.alpha <= 1, t1 - p.alpha.reciprocal() + t3 - 1)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _inf_where(p.alpha <= 1, t1 + t2 + t3 + t4 - 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t3 = p.alpha * common.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common - q.loc).pow(2)
    return _inf_where(p.alpha <= 2, t1 - p.alpha.reciprocal() + (t3 + t4) / var_normal - 1)


# --- Uniform as p -------------------------------------------------------------------------

@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width) / width
    t4 = (q.concentration1.lgamma() + q.concentration0.lgamma()
          - (q.concentration1 + q.concentration0).lgamma())
    return _inf_where((p.high > 1.0) | (p.low < 0.0), t3 + t4 - width.log() - t2)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t4 = q.rate * (p.high + p.low) / 2
    return _inf_where(p.low < 0.0, -width.log() + t2 + t3 + t4)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    return _inf_where(p.low < q.scale, t2 * (q.alpha + 1) - t1)
