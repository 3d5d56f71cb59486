"""kl_divergence against torch for every registered pair, the registry's dispatch
(most specific match, user registrations), and NotImplementedError for unknown pairs."""
import numpy as np
import pytest
import torch

import ember

G = np.random.default_rng(1)
POS = G.uniform(0.5, 2.5, size=(2, 3))
POS_B = G.uniform(0.5, 2.5, size=(2, 3))
REAL = G.normal(size=(2, 3))
PROB = G.uniform(0.1, 0.9, size=(2, 3))
SIMPLEX = G.dirichlet(np.ones(4), size=(2,))
SPD = np.stack([a @ a.T + 3 * np.eye(3) for a in G.normal(size=(2, 3, 3))])
SPD_B = np.stack([a @ a.T + 2 * np.eye(3) for a in G.normal(size=(2, 3, 3))])
LOC3 = G.normal(size=(2, 3))

P = {
    "Normal": {"loc": REAL, "scale": POS},
    "Laplace": {"loc": REAL, "scale": POS},
    "Cauchy": {"loc": REAL, "scale": POS},
    "Gumbel": {"loc": REAL, "scale": POS},
    "HalfNormal": {"scale": POS},
    "Exponential": {"rate": POS},
    "Gamma": {"concentration": POS, "rate": POS_B},
    "Beta": {"concentration1": POS, "concentration0": POS_B},
    "Dirichlet": {"concentration": SIMPLEX * 4 + 0.5},
    "Uniform": {"low": REAL - 3, "high": REAL + 3},
    "Pareto": {"scale": POS, "alpha": POS_B},
    "Poisson": {"rate": POS},
    "Bernoulli": {"probs": PROB},
    "Geometric": {"probs": PROB},
    "Binomial": {"total_count": 5, "probs": PROB},
    "Categorical": {"probs": SIMPLEX},
    "OneHotCategorical": {"probs": SIMPLEX},
    "ContinuousBernoulli": {"probs": PROB},
    "MultivariateNormal": {"loc": LOC3, "covariance_matrix": SPD},
    "LowRankMultivariateNormal": {"loc": LOC3, "cov_factor": G.normal(size=(2, 3, 2)),
                                  "cov_diag": POS},
}
Q = dict(P)
Q.update({
    "Normal": {"loc": REAL * 0.5, "scale": POS_B},
    "Laplace": {"loc": REAL + 1, "scale": POS_B},
    "Cauchy": {"loc": REAL - 1, "scale": POS_B},
    "Gumbel": {"loc": REAL * 2, "scale": POS_B},
    "HalfNormal": {"scale": POS_B},
    "Exponential": {"rate": POS_B},
    "Gamma": {"concentration": POS_B, "rate": POS},
    "Beta": {"concentration1": POS_B, "concentration0": POS},
    "Dirichlet": {"concentration": SIMPLEX[::-1] * 3 + 0.7},
    "Uniform": {"low": REAL - 4, "high": REAL + 5},
    "Pareto": {"scale": POS * 0.5, "alpha": POS},
    "Poisson": {"rate": POS_B},
    "Bernoulli": {"probs": PROB[::-1]},
    "Geometric": {"probs": PROB[::-1]},
    "Binomial": {"total_count": 5, "probs": PROB[::-1]},
    "Categorical": {"probs": SIMPLEX[::-1]},
    "OneHotCategorical": {"probs": SIMPLEX[::-1]},
    "ContinuousBernoulli": {"probs": PROB[::-1]},
    "MultivariateNormal": {"loc": LOC3[::-1], "covariance_matrix": SPD_B},
    "LowRankMultivariateNormal": {"loc": LOC3 * 2, "cov_factor": G.normal(size=(2, 3, 1)),
                                  "cov_diag": POS_B},
})
SAME = sorted(P)
CROSS = [("Beta", "Exponential"), ("Beta", "Gamma"), ("Beta", "Normal"), ("Beta", "Uniform"),
         ("Exponential", "Gamma"), ("Exponential", "Normal"), ("Gamma", "Exponential"),
         ("Gamma", "Normal"), ("Laplace", "Normal"), ("Normal", "Gumbel"),
         ("Uniform", "Normal"), ("Uniform", "Exponential"), ("Bernoulli", "Poisson"),
         ("MultivariateNormal", "LowRankMultivariateNormal"),
         ("LowRankMultivariateNormal", "MultivariateNormal"), ("Poisson", "Bernoulli")]
UNIT = {"low": np.zeros((2, 3)), "high": np.ones((2, 3))}


def _pair(oracle, p_name, p_params, q_name, q_params):
    pe, pt = oracle.build(p_name, p_params)
    qe, qt = oracle.build(q_name, q_params)
    return ember.distributions.kl_divergence(pe, qe), torch.distributions.kl_divergence(pt, qt)


@pytest.mark.parametrize("name", SAME)
def test_same_family(name, oracle):
    got, want = _pair(oracle, name, P[name], name, Q[name])
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-9,
                               atol=1e-12)
    got, want = _pair(oracle, name, P[name], name, P[name])          # KL(p || p) = 0
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-9)


@pytest.mark.parametrize("p_name,q_name", CROSS, ids=[f"{a}-{b}" for a, b in CROSS])
def test_across_families(p_name, q_name, oracle):
    p_params = UNIT if p_name == "Uniform" and q_name == "Exponential" else P[p_name]
    q_params = {"low": REAL - 3, "high": REAL + 3} if q_name == "Uniform" and \
        p_name == "Beta" else Q[q_name]
    got, want = _pair(oracle, p_name, p_params, q_name, q_params)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-9)


def test_infinite_where_supports_differ(oracle):
    got, want = _pair(oracle, "Uniform", {"low": np.zeros(2), "high": np.ones(2)}, "Uniform",
                      {"low": np.array([0.5, -1.0]), "high": np.array([2.0, 2.0])})
    assert got.tolist() == [float("inf"), want.tolist()[1]] and np.isfinite(want[1])
    got, want = _pair(oracle, "Bernoulli", {"probs": np.array([0.0, 0.3, 1.0])}, "Bernoulli",
                      {"probs": np.array([0.5, 0.0, 0.5])})
    np.testing.assert_allclose(got.numpy(), want.numpy())


def test_independent_transformed_and_gradients(oracle):
    D = ember.distributions
    loc = ember.tensor(REAL, requires_grad=True)
    p = D.Independent(D.Normal(loc, ember.tensor(POS)), 1)
    q = D.Independent(D.Normal(ember.tensor(REAL * 0), ember.tensor(POS_B)), 1)
    kl = D.kl_divergence(p, q)
    tloc = torch.tensor(REAL, requires_grad=True)
    tp = torch.distributions.Independent(torch.distributions.Normal(tloc, torch.tensor(POS)), 1)
    tq = torch.distributions.Independent(torch.distributions.Normal(
        torch.tensor(REAL * 0), torch.tensor(POS_B)), 1)
    tkl = torch.distributions.kl_divergence(tp, tq)
    np.testing.assert_allclose(kl.detach().numpy(), tkl.detach().numpy(), rtol=1e-12)
    kl.sum().backward()
    tkl.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), tloc.grad.numpy(), rtol=1e-12)
    ln_p, ln_q = D.LogNormal(ember.tensor(REAL), ember.tensor(POS)), \
        D.LogNormal(ember.tensor(REAL * 0), ember.tensor(POS_B))
    np.testing.assert_allclose(D.kl_divergence(ln_p, ln_q).numpy(),
                               D.kl_divergence(ln_p.base_dist, ln_q.base_dist).numpy())
    with pytest.raises(NotImplementedError):
        D.kl_divergence(p, D.Independent(D.Normal(ember.zeros(2, 3, 1), 1.0), 2))


def test_unregistered_pair_raises_as_torch():
    D = ember.distributions
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for "
                                                  "p type VonMises and q type Normal"):
        D.kl_divergence(D.VonMises(ember.tensor(0.0), ember.tensor(1.0)),
                        D.Normal(0.0, 1.0))
    with pytest.raises(NotImplementedError, match="different exponential families"):
        D.kl_divergence(D.Poisson(ember.tensor(1.0)), D.Exponential(ember.tensor(0.5)))


def test_register_kl_dispatch():
    D = ember.distributions

    class MyNormal(D.Normal):
        pass

    class MyOther(D.Normal):
        pass

    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        D.register_kl(int, D.Normal)
    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)
    assert float(D.kl_divergence(p, q)) == pytest.approx(float(D.kl_divergence(
        D.Normal(0.0, 1.0), q)))                # inherits Normal-Normal

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p, q):
        return ember.tensor(42.0)

    assert float(D.kl_divergence(p, q)) == 42.0               # the more specific one wins
    assert float(D.kl_divergence(MyOther(0.0, 1.0), q)) != 42.0
    from ember.distributions import kl
    assert kl.kl_divergence is D.kl_divergence and kl.register_kl is D.register_kl
