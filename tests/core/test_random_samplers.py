"""The samplers behind ember.distributions against PyTorch's semantics: ember.poisson,
ember.binomial, ember._standard_gamma (with its reparameterised gradient) and
ember._sample_dirichlet: shapes, dtypes, generators, errors, graph nodes and the sample
statistics (seeded, so reproducible)."""
import numpy as np
import pytest
import torch

import ember

N = 20000


def _pmf_distance(samples, log_pmf):
    x = samples.astype(np.int64)
    empirical = np.bincount(x, minlength=x.max() + 1) / x.size
    values = np.arange(empirical.size)
    return np.max(np.abs(empirical - np.exp(log_pmf(values))))


@pytest.mark.parametrize("rate", [0.0, 0.4, 4.0, 9.9, 10.0, 75.0])
def test_poisson(rate, device):
    g = ember.Generator().manual_seed(3)
    x = ember.poisson(ember.full((N,), rate, device=device), generator=g).cpu().numpy()
    assert x.dtype == np.float32 and np.all(x == np.floor(x)) and np.all(x >= 0)
    if rate == 0:
        assert np.all(x == 0)
        return
    t = torch.distributions.Poisson(torch.tensor(rate, dtype=torch.float64))
    assert _pmf_distance(x, lambda v: t.log_prob(torch.tensor(v, dtype=torch.float64))
                         .numpy()) < 0.012


def test_poisson_large_rates_and_errors():
    x = ember.poisson(ember.full((N,), 1e6, dtype=ember.float64),
                      generator=ember.Generator().manual_seed(1)).numpy()
    assert abs(x.mean() - 1e6) < 6 * np.sqrt(1e6 / N) and abs(x.var() / 1e6 - 1) < 0.05
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be "
                                           "non-negative"):
        ember.poisson(ember.tensor([-1.0]))
    r = ember.tensor([2.0, 3.0], requires_grad=True)
    s = ember.poisson(r)
    assert s.requires_grad and s.grad_fn.name() == "PoissonBackward0"
    s.sum().backward()
    assert r.grad.tolist() == [0.0, 0.0]                 # torch's zero derivative


@pytest.mark.parametrize("n,p", [(1, 0.5), (15, 0.3), (16, 0.9), (40, 0.2), (1000, 0.6),
                                 (30, 0.0), (30, 1.0)])
def test_binomial(n, p, device):
    g = ember.Generator().manual_seed(4)
    x = ember.binomial(ember.full((N,), float(n), device=device),
                       ember.full((N,), p, device=device), generator=g).cpu().numpy()
    assert np.all((x >= 0) & (x <= n)) and np.all(x == np.floor(x))
    t = torch.distributions.Binomial(n, torch.tensor(p, dtype=torch.float64))
    assert _pmf_distance(x, lambda v: t.log_prob(torch.tensor(np.minimum(v, n), dtype=torch
                                                              .float64)).numpy()) < 0.012


def test_binomial_huge_counts_and_broadcasting():
    x = ember.binomial(ember.full((N,), 1e9, dtype=ember.float64),
                       ember.tensor(0.25, dtype=ember.float64)).numpy()
    assert x.shape == (N,)
    mean, var = 2.5e8, 1e9 * 0.25 * 0.75
    assert abs(x.mean() - mean) < 6 * np.sqrt(var / N) and abs(x.var() / var - 1) < 0.05
    r = ember.binomial(ember.tensor([[5.0], [10.0]]), ember.tensor([0.1, 0.5, 0.9]))
    assert tuple(r.shape) == (2, 3) and r.dtype == ember.float32


@pytest.mark.parametrize("alpha", [0.01, 0.3, 1.0, 2.5, 40.0])
def test_standard_gamma(alpha):
    ember.manual_seed(5)
    x = ember._standard_gamma(ember.full((N,), alpha, dtype=ember.float64)).numpy()
    assert np.all(x >= 0)
    t = torch.distributions.Gamma(torch.tensor(alpha, dtype=torch.float64), 1.0)
    xs = np.sort(x)
    f = t.cdf(torch.tensor(np.maximum(xs, 1e-300))).numpy()
    ks = max(np.max(np.arange(1, N + 1) / N - f), np.max(f - np.arange(N) / N))
    assert ks < 0.02


def test_standard_gamma_gradient_is_the_implicit_derivative():
    """d x / d alpha at fixed CDF value: compare with a central difference of SciPy's
    inverse incomplete gamma function (an independent route to the same quantity)."""
    sp = pytest.importorskip("scipy.special")
    alpha = ember.tensor([0.2, 1.0, 3.0, 25.0, 2000.0], dtype=ember.float64,
                         requires_grad=True)
    ember.manual_seed(6)
    x = ember._standard_gamma(alpha)
    (g,) = ember.autograd.grad(x.sum(), alpha)
    a, xv = alpha.detach().numpy(), x.detach().numpy()
    u = sp.gammainc(a, xv)
    h = 1e-6 * a
    want = (sp.gammaincinv(a + h, u) - sp.gammaincinv(a - h, u)) / (2 * h)
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-5)
    with pytest.raises(NotImplementedError):
        ember._standard_gamma(ember.tensor([1, 2]))


def test_sample_dirichlet():
    a = ember.tensor([[0.5, 1.0, 3.0], [2.0, 2.0, 2.0]])
    ember.manual_seed(7)
    x = ember._sample_dirichlet(a)
    assert tuple(x.shape) == (2, 3) and x.dtype == ember.float32
    assert x.sum(-1).allclose(ember.ones(2))
    ember.manual_seed(7)
    assert ember._sample_dirichlet(a).equal(x)


# --- dtypes PyTorch's CPU kernels lack ---------------------------------------------------

SAMPLER_CALLS = [
    lambda m: m.poisson(m.tensor([2, 3])),
    lambda m: m.poisson(m.tensor([True])),
    lambda m: m._standard_gamma(m.tensor([2.0], dtype=m.float16)),
    lambda m: m._standard_gamma(m.tensor([2.0], dtype=m.bfloat16)),
    lambda m: m._sample_dirichlet(m.tensor([2.0, 1.0], dtype=m.float16)),
    lambda m: m._sample_dirichlet(m.tensor([2, 1])),
    lambda m: m.binomial(m.tensor([10.0], dtype=m.float16), m.tensor([0.5],
                                                                     dtype=m.float16)),
    lambda m: m.binomial(m.tensor([10]), m.tensor([0.5])),
    lambda m: m.binomial(m.tensor([10.0]), m.tensor([1])),
    lambda m: m.binomial(m.tensor([10.0], dtype=m.float64), m.tensor([0.5])),
    lambda m: m.distributions.Gamma(m.tensor([2.0], dtype=m.float16), m.tensor(
        [1.0], dtype=m.float16)).sample(),
    lambda m: m.distributions.Beta(m.tensor([2.0], dtype=m.bfloat16), m.tensor(
        [1.0], dtype=m.bfloat16)).sample(),
    lambda m: m.distributions.Poisson(m.tensor([2, 3])).sample(),
]


@pytest.mark.parametrize("call", SAMPLER_CALLS)
def test_sampler_dtype_errors_match_torch(call):
    with pytest.raises(Exception) as t:
        call(torch)
    with pytest.raises(type(t.value)):
        call(ember)


# --- Dirichlet samples in float32: drawn in float64, kept inside (0, 1) -----------------

def test_dirichlet_float32_samples_never_reach_the_boundary():
    ember.manual_seed(8)
    d = ember.distributions.Beta(ember.tensor(0.2), ember.tensor(0.2))
    s = d.sample((200000,))
    info = ember.finfo(ember.float32)
    assert s.min().item() >= info.tiny and s.max().item() == 1 - info.eps / 2
    assert bool(d.log_prob(s).isfinite().all())
    x = ember._sample_dirichlet(ember.full((50000, 3), 0.05))
    assert x.max().item() < 1 and x.min().item() > 0


@pytest.mark.parametrize("alpha", [0.01, 0.03])
def test_dirichlet_small_concentrations_have_no_lump_at_one_half(alpha):
    # float32 gammas of these concentrations underflow together: a pair of equal tiny
    # values used to put ~20% of the samples at exactly 0.5
    ember.manual_seed(9)
    torch.manual_seed(9)
    s = ember.distributions.Beta(ember.tensor(alpha), ember.tensor(alpha)).sample((200000,))
    t = torch.distributions.Beta(torch.tensor(alpha), torch.tensor(alpha)).sample((200000,))
    middle = ((s > 0.25) & (s < 0.75)).float().mean().item()
    want = ((t > 0.25) & (t < 0.75)).float().mean().item()
    assert abs(middle - want) < 0.004 and (s == 0.5).sum().item() <= 2
