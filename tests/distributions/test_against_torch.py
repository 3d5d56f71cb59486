"""Every distribution against torch.distributions with identical parameters: shapes,
log_prob (at torch's own samples), cdf/icdf, entropy, mean/mode/variance/stddev,
enumerate_support, sample/rsample shapes, and expand; float64 and float32, with batch
broadcasting between the parameters."""
import math

import numpy as np
import pytest
import torch

import ember

G = np.random.default_rng(0)
POS = G.uniform(0.5, 2.5, size=(2, 3))
POS2 = G.uniform(0.5, 2.5, size=(3,))
REAL = G.normal(size=(2, 3))
PROB = G.uniform(0.1, 0.9, size=(2, 3))
SIMPLEX = G.dirichlet(np.ones(4), size=(2,))
LOGITS = G.normal(size=(2, 4))
SPD = np.stack([a @ a.T + 3 * np.eye(3) for a in G.normal(size=(2, 3, 3))])
TRIL = np.linalg.cholesky(SPD)
LOC3 = G.normal(size=(2, 3))

CASES = [
    ("Normal", {"loc": REAL, "scale": POS2}),
    ("Normal", {"loc": 0.5, "scale": 2.0}),
    ("LogNormal", {"loc": REAL, "scale": POS}),
    ("HalfNormal", {"scale": POS}),
    ("Cauchy", {"loc": REAL, "scale": POS}),
    ("HalfCauchy", {"scale": POS}),
    ("Laplace", {"loc": REAL, "scale": POS2}),
    ("Uniform", {"low": REAL, "high": REAL + POS}),
    ("Exponential", {"rate": POS}),
    ("Gamma", {"concentration": POS, "rate": POS2}),
    ("Chi2", {"df": POS}),
    ("Beta", {"concentration1": POS, "concentration0": POS2}),
    ("Beta", {"concentration1": 0.7, "concentration0": 2.0}),
    ("Dirichlet", {"concentration": SIMPLEX * 5 + 0.3}),
    ("Gumbel", {"loc": REAL, "scale": POS}),
    ("Pareto", {"scale": POS, "alpha": POS2 + 2}),
    ("Weibull", {"scale": POS, "concentration": POS2}),
    ("Kumaraswamy", {"concentration1": POS + 1, "concentration0": POS2 + 1}),
    ("InverseGamma", {"concentration": POS + 2, "rate": POS2}),
    ("StudentT", {"df": POS * 3, "loc": REAL, "scale": POS2}),
    ("FisherSnedecor", {"df1": POS * 3, "df2": POS2 * 5}),
    ("VonMises", {"loc": REAL, "concentration": POS}),
    ("GeneralizedPareto", {"loc": REAL, "scale": POS, "concentration": REAL * 0.3}),
    ("Bernoulli", {"probs": PROB}),
    ("Bernoulli", {"logits": REAL}),
    ("Geometric", {"probs": PROB}),
    ("Binomial", {"total_count": 10, "probs": PROB}),
    ("Binomial", {"total_count": np.array([3.0, 5.0, 7.0]), "logits": REAL}),
    ("NegativeBinomial", {"total_count": POS * 3, "probs": PROB}),
    ("Poisson", {"rate": POS * 3}),
    ("Categorical", {"probs": SIMPLEX}),
    ("Categorical", {"logits": LOGITS}),
    ("OneHotCategorical", {"probs": SIMPLEX}),
    ("Multinomial", {"total_count": 7, "probs": SIMPLEX}),
    ("ContinuousBernoulli", {"probs": np.array([0.1, 0.4995, 0.5, 0.7, 0.999])}),
    ("ContinuousBernoulli", {"logits": REAL}),
    ("RelaxedBernoulli", {"temperature": np.array(0.7), "probs": PROB}),
    ("RelaxedOneHotCategorical", {"temperature": np.array(0.5), "logits": LOGITS}),
    ("LogisticNormal", {"loc": REAL, "scale": POS}),
    ("MultivariateNormal", {"loc": LOC3, "covariance_matrix": SPD}),
    ("MultivariateNormal", {"loc": LOC3[0], "scale_tril": TRIL}),
    ("MultivariateNormal", {"loc": LOC3, "precision_matrix": SPD}),
    ("LowRankMultivariateNormal", {"loc": LOC3, "cov_factor": G.normal(size=(2, 3, 2)),
                                   "cov_diag": POS}),
    ("Wishart", {"df": np.array([4.0, 6.5]), "covariance_matrix": SPD}),
    ("LKJCholesky", {"dim": 3, "concentration": POS2}),
]
IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]
# where PyTorch is the less accurate side: its VonMises log I0 is a polynomial fit (~1e-7),
# its Multinomial entropy takes lgamma(n + 1) of an int64 n in float32
LOOSE = {"VonMises": 1e-5, "Multinomial": 1e-6}


def _call(obj, name, *args):
    """(value, None) or (None, exception type)."""
    try:
        attr = getattr(obj, name)
        return (attr(*args) if callable(attr) else attr), None
    except (NotImplementedError, ValueError, RuntimeError) as e:
        return None, type(e)


def _same(e, t, rtol, atol=1e-12):
    e = e.detach().cpu().numpy() if hasattr(e, "detach") else np.asarray(e)
    t = t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)
    assert e.shape == t.shape, (e.shape, t.shape)
    if np.float32 in (e.dtype, t.dtype):            # number parameters: the default dtype
        rtol, atol = max(rtol, 2e-4), max(atol, 1e-5)
    np.testing.assert_allclose(e.astype(np.float64), t.astype(np.float64), rtol=rtol,
                               atol=atol, equal_nan=True)


@pytest.mark.parametrize("name,params", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matches_torch(name, params, dtype, oracle, device):
    rtol = LOOSE.get(name, 1e-9) if dtype == "float64" else 2e-4
    e, t = oracle.build(name, params, dtype, device)
    assert tuple(e.batch_shape) == tuple(t.batch_shape)
    assert tuple(e.event_shape) == tuple(t.event_shape)
    assert set(e.arg_constraints) == set(t.arg_constraints)
    assert e.has_rsample == t.has_rsample
    assert e.has_enumerate_support == t.has_enumerate_support
    assert repr(e.support).replace("ember", "torch") == repr(t.support) or \
        type(e.support).__name__ == type(t.support).__name__
    torch.manual_seed(0)
    x = t.sample((4,))
    # Python-number parameters make CPU tensors (as in PyTorch): values go where they are
    device = e.sample().device
    xe = ember.tensor(x.numpy(), device=device)
    want, terr = _call(t, "log_prob", x)
    if terr is None:    # (PyTorch's GeneralizedPareto.log_prob fails for float64 itself)
        _same(e.log_prob(xe), want, rtol, atol=1e-9 if dtype == "float64" else 1e-4)
    else:
        assert e.log_prob(xe).isfinite().all()
    for prop in ("mean", "mode", "variance", "stddev"):
        got, err = _call(e, prop)
        want, terr = _call(t, prop)
        assert err == terr, (prop, err, terr)
        if want is not None:
            _same(got, want, rtol, atol=1e-9 if dtype == "float64" else 1e-5)
    got, err = _call(e, "entropy")
    want, terr = _call(t, "entropy")
    if terr is None:
        _same(got, want, rtol, atol=1e-9 if dtype == "float64" else 1e-5)
    if not e.support.is_discrete and e.event_shape == ():
        got, err = _call(e, "cdf", xe)
        want, terr = _call(t, "cdf", x)
        assert err is None or terr is not None, ("cdf", err, terr)
        if want is not None:
            _same(got, want, rtol, atol=1e-9 if dtype == "float64" else 1e-5)
        u = torch.tensor(np.linspace(0.05, 0.95, 4)[:, None, None]
                         * np.ones(tuple(t.batch_shape)), dtype=getattr(torch, dtype))
        got, err = _call(e, "icdf", ember.tensor(u.numpy(), device=device))
        want, terr = _call(t, "icdf", u)
        assert err is None or terr is not None, ("icdf", err, terr)
        if want is not None:
            _same(got, want, rtol * 10, atol=1e-8 if dtype == "float64" else 1e-4)
    if t.has_enumerate_support:
        for expand in (True, False):
            got, err = _call(e, "enumerate_support", expand)
            want, terr = _call(t, "enumerate_support", expand)
            assert err == terr
            if want is not None:
                _same(got, want, 0)
    assert tuple(e.sample((5, 2)).shape) == tuple(t.sample((5, 2)).shape)
    assert tuple(e.sample().shape) == tuple(t.sample().shape)
    if t.has_rsample:
        assert tuple(e.rsample((3,)).shape) == tuple(t.rsample((3,)).shape)
    big = (4,) + tuple(t.batch_shape)
    ee, te = e.expand(big), t.expand(big)
    assert tuple(ee.batch_shape) == tuple(te.batch_shape)
    xb = t.sample((1,)).expand((2,) + big + tuple(t.event_shape))
    want, terr = _call(te, "log_prob", xb)
    if terr is None:
        _same(ee.log_prob(ember.tensor(xb.numpy(), device=device)), want, rtol,
              atol=1e-9 if dtype == "float64" else 1e-4)


def test_perplexity_and_sample_n(oracle):
    e, t = oracle.build("Categorical", {"probs": SIMPLEX})
    _same(e.perplexity(), t.perplexity(), 1e-12)
    with pytest.warns(UserWarning, match="sample_n will be deprecated"):
        assert tuple(e.sample_n(3).shape) == (3, 2)


def test_mixture_same_family(oracle):
    mix_e, mix_t = oracle.build("Categorical", {"logits": LOGITS[:, :3]})
    comp_e, comp_t = oracle.build("Normal", {"loc": np.stack([REAL, REAL + 1])[:, 0],
                                             "scale": np.stack([POS, POS])[:, 0]})
    e = ember.distributions.MixtureSameFamily(mix_e, comp_e)
    t = torch.distributions.MixtureSameFamily(mix_t, comp_t)
    x = t.sample((5,))
    xe = ember.tensor(x.numpy())
    _same(e.log_prob(xe), t.log_prob(x), 1e-10)
    _same(e.cdf(xe), t.cdf(x), 1e-10)
    _same(e.mean, t.mean, 1e-10)
    _same(e.variance, t.variance, 1e-10)
    assert tuple(e.sample((7,)).shape) == (7, 2)
    assert tuple(e.expand((4, 2)).batch_shape) == (4, 2)
    # a multivariate component family
    mvn_e, mvn_t = oracle.build("MultivariateNormal", {"loc": LOC3, "scale_tril": TRIL})
    cat_e, cat_t = oracle.build("Categorical", {"probs": np.array([0.3, 0.7])})
    e = ember.distributions.MixtureSameFamily(cat_e, mvn_e)
    t = torch.distributions.MixtureSameFamily(cat_t, mvn_t)
    x = t.sample((4,))
    _same(e.log_prob(ember.tensor(x.numpy())), t.log_prob(x), 1e-10)
    assert tuple(e.sample((6,)).shape) == (6, 3)
    assert "MixtureSameFamily(" in repr(e)


def test_independent_and_transformed(oracle):
    base_e, base_t = oracle.build("Normal", {"loc": REAL, "scale": POS})
    e = ember.distributions.Independent(base_e, 1)
    t = torch.distributions.Independent(base_t, 1)
    assert tuple(e.batch_shape) == (2,) and tuple(e.event_shape) == (3,)
    x = t.sample((3,))
    _same(e.log_prob(ember.tensor(x.numpy())), t.log_prob(x), 1e-12)
    _same(e.entropy(), t.entropy(), 1e-12)
    assert repr(e.support) == "IndependentConstraint(Real(), 1)"
    TE, TT = ember.distributions.transforms, torch.distributions.transforms
    te = ember.distributions.TransformedDistribution(
        base_e, [TE.AffineTransform(1.0, 2.0), TE.ExpTransform()])
    tt = torch.distributions.TransformedDistribution(
        base_t, [TT.AffineTransform(1.0, 2.0), TT.ExpTransform()])
    y = tt.sample((3,))
    ye = ember.tensor(y.numpy())
    _same(te.log_prob(ye), tt.log_prob(y), 1e-10)
    _same(te.cdf(ye), tt.cdf(y), 1e-10)
    u = torch.full((2, 3), 0.3, dtype=torch.float64)
    _same(te.icdf(ember.tensor(u.numpy())), tt.icdf(u), 1e-10)
    # a decreasing transform flips the CDF
    te = ember.distributions.TransformedDistribution(base_e, TE.AffineTransform(0.0, -1.0))
    tt = torch.distributions.TransformedDistribution(base_t, TT.AffineTransform(0.0, -1.0))
    _same(te.cdf(ye), tt.cdf(y), 1e-10)
    # a vector transform makes an event dim of the base's batch dim
    te = ember.distributions.TransformedDistribution(base_e, TE.StickBreakingTransform())
    tt = torch.distributions.TransformedDistribution(base_t, TT.StickBreakingTransform())
    assert tuple(te.event_shape) == tuple(tt.event_shape) == (4,)
    s = tt.sample((2,))
    _same(te.log_prob(ember.tensor(s.numpy())), tt.log_prob(s), 1e-9)


def test_icdf_inverts_cdf():
    d = ember.distributions
    for dist in (d.Normal(ember.tensor([0.3]), ember.tensor([2.0])),
                 d.Laplace(ember.tensor([0.3]), ember.tensor([2.0])),
                 d.Cauchy(ember.tensor([0.3]), ember.tensor([2.0])),
                 d.Exponential(ember.tensor([1.5])), d.HalfNormal(ember.tensor([1.5])),
                 d.Uniform(ember.tensor([-1.0]), ember.tensor([3.0]))):
        u = ember.tensor([0.1, 0.5, 0.9])
        assert dist.cdf(dist.icdf(u)).allclose(u, atol=1e-5), dist
    assert math.isclose(float(d.Normal(0.0, 1.0).icdf(ember.tensor(0.975))), 1.959964,
                        rel_tol=1e-5)


@pytest.mark.parametrize("name,params", CASES, ids=IDS)
def test_log_prob_gradients(name, params):
    """d/dtheta of sum(log_prob(x)) (+ entropy where torch has it) against torch's autograd,
    for every floating tensor parameter."""
    def leaves(lib):
        # integer-valued counts are not differentiated (torch has no derivative for them)
        return {k: lib.tensor(v, dtype=lib.float64, requires_grad=k != "total_count")
                if isinstance(v, np.ndarray) else v for k, v in params.items()}

    le, lt = leaves(ember), leaves(torch)
    names = [k for k, v in lt.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    if not names:
        return
    e = getattr(ember.distributions, name)(**le)
    t = getattr(torch.distributions, name)(**lt)
    torch.manual_seed(1)
    x = t.sample((3,))
    try:
        loss_t = t.log_prob(x).sum()
    except RuntimeError:            # PyTorch's own float64 failure (GeneralizedPareto)
        return
    loss_e = e.log_prob(ember.tensor(x.numpy())).sum()
    try:
        loss_t = loss_t + t.entropy().sum()
        loss_e = loss_e + e.entropy().sum()
    except NotImplementedError:
        pass
    gt = torch.autograd.grad(loss_t, [lt[k] for k in names], allow_unused=True)
    ge = ember.autograd.grad(loss_e, [le[k] for k in names], allow_unused=True)
    for k, a, b in zip(names, ge, gt):
        if b is None:
            assert a is None or float(a.abs().max()) == 0, k
            continue
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=LOOSE.get(name, 1e-8),
                                   atol=1e-9, err_msg=f"{name}.{k}")


def test_continuous_bernoulli_at_the_upper_limit_uses_the_taylor_branch():
    # the unstable region is lims[0] < p <= lims[1]: at p == lims[1] the closed forms
    # cancel catastrophically in float32
    def stats(lib, **kwargs):
        d = lib.distributions.ContinuousBernoulli(**kwargs)
        return [d.mean.tolist(), d.variance.tolist(), d.entropy().tolist(),
                d.log_prob(lib.tensor([0.3, 0.3])).tolist()]
    e = stats(ember, probs=ember.tensor([0.501, 0.7]), lims=(0.499, 0.501))
    t = stats(torch, probs=torch.tensor([0.501, 0.7]), lims=(0.499, 0.501))
    np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)
