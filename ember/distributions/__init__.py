"""ember.distributions: PyTorch's torch.distributions, loaded on first use.

Distributions with sampling (ember's generators), log_prob/cdf/icdf/entropy and moments,
argument and sample validation; constraints and the transforms between them
(``biject_to``/``transform_to``); and ``kl_divergence`` with its ``register_kl`` registry.
Each family lives in the module PyTorch keeps it in (ember.distributions.normal.Normal,
...), so pickles and scripts that name those paths find them."""
from ember.distributions import constraints as constraints
from ember.distributions import transforms as transforms
from ember.distributions.bernoulli import Bernoulli as Bernoulli
from ember.distributions.beta import Beta as Beta
from ember.distributions.binomial import Binomial as Binomial
from ember.distributions.categorical import Categorical as Categorical
from ember.distributions.cauchy import Cauchy as Cauchy
from ember.distributions.chi2 import Chi2 as Chi2
from ember.distributions.constraint_registry import biject_to as biject_to
from ember.distributions.constraint_registry import transform_to as transform_to
from ember.distributions.continuous_bernoulli import ContinuousBernoulli as ContinuousBernoulli
from ember.distributions.dirichlet import Dirichlet as Dirichlet
from ember.distributions.distribution import Distribution as Distribution
from ember.distributions.exp_family import ExponentialFamily as ExponentialFamily
from ember.distributions.exponential import Exponential as Exponential
from ember.distributions.fishersnedecor import FisherSnedecor as FisherSnedecor
from ember.distributions.gamma import Gamma as Gamma
from ember.distributions.generalized_pareto import GeneralizedPareto as GeneralizedPareto
from ember.distributions.geometric import Geometric as Geometric
from ember.distributions.gumbel import Gumbel as Gumbel
from ember.distributions.half_cauchy import HalfCauchy as HalfCauchy
from ember.distributions.half_normal import HalfNormal as HalfNormal
from ember.distributions.independent import Independent as Independent
from ember.distributions.inverse_gamma import InverseGamma as InverseGamma
from ember.distributions.kl import kl_divergence as kl_divergence
from ember.distributions.kl import register_kl as register_kl
from ember.distributions.kumaraswamy import Kumaraswamy as Kumaraswamy
from ember.distributions.laplace import Laplace as Laplace
from ember.distributions.lkj_cholesky import LKJCholesky as LKJCholesky
from ember.distributions.log_normal import LogNormal as LogNormal
from ember.distributions.logistic_normal import LogisticNormal as LogisticNormal
from ember.distributions.lowrank_multivariate_normal import (
    LowRankMultivariateNormal as LowRankMultivariateNormal,
)
from ember.distributions.mixture_same_family import MixtureSameFamily as MixtureSameFamily
from ember.distributions.multinomial import Multinomial as Multinomial
from ember.distributions.multivariate_normal import MultivariateNormal as MultivariateNormal
from ember.distributions.negative_binomial import NegativeBinomial as NegativeBinomial
from ember.distributions.normal import Normal as Normal
from ember.distributions.one_hot_categorical import OneHotCategorical as OneHotCategorical
from ember.distributions.one_hot_categorical import (
    OneHotCategoricalStraightThrough as OneHotCategoricalStraightThrough,
)
from ember.distributions.pareto import Pareto as Pareto
from ember.distributions.poisson import Poisson as Poisson
from ember.distributions.relaxed_bernoulli import RelaxedBernoulli as RelaxedBernoulli
from ember.distributions.relaxed_categorical import (
    RelaxedOneHotCategorical as RelaxedOneHotCategorical,
)
from ember.distributions.studentT import StudentT as StudentT
from ember.distributions.transformed_distribution import (
    TransformedDistribution as TransformedDistribution,
)
from ember.distributions.transforms import *  # noqa: F403
from ember.distributions.uniform import Uniform as Uniform
from ember.distributions.von_mises import VonMises as VonMises
from ember.distributions.weibull import Weibull as Weibull
from ember.distributions.wishart import Wishart as Wishart

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
           "ContinuousBernoulli", "Dirichlet", "Distribution", "Exponential",
           "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric",
           "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy",
           "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal",
           "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial",
           "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Pareto", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "StudentT", "Poisson", "Uniform", "VonMises",
           "Weibull", "Wishart", "TransformedDistribution", "biject_to", "kl_divergence",
           "register_kl", "transform_to"]
__all__.extend(transforms.__all__)
