"""The cross-family KL pairs of ember/distributions/kl_cross.py against torch: ember registers
exactly torch's pairs, and each closed form (and each infinite answer) gives torch's value,
inside and outside the parameter ranges where the closed form is finite."""
import numpy as np
import pytest
import torch

import ember

G = np.random.default_rng(7)
POS = G.uniform(0.5, 2.5, size=(2, 3))
POS_B = G.uniform(0.5, 2.5, size=(2, 3))
REAL = G.normal(size=(2, 3))
PROB = G.uniform(0.1, 0.9, size=(2, 3))
LOW01 = G.uniform(0.05, 0.4, size=(2, 3))
HIGH01 = G.uniform(0.6, 0.95, size=(2, 3))

GENERIC = {
    "Normal": {"loc": REAL, "scale": POS},
    "Laplace": {"loc": REAL * 0.5, "scale": POS_B},
    "Gumbel": {"loc": REAL * 2, "scale": POS_B},
    "Exponential": {"rate": POS},
    "Gamma": {"concentration": POS, "rate": POS_B},
    "Beta": {"concentration1": POS, "concentration0": POS_B},
    "ContinuousBernoulli": {"probs": PROB},
    "Pareto": {"scale": POS, "alpha": POS_B + 2.0},            # alpha > 2: finite moments
    "Uniform": {"low": REAL - 3, "high": REAL + 3},
}

# (p, q, p params, q params) for the finite closed forms; None = the generic parameters
FINITE = [
    ("Beta", "ContinuousBernoulli", None, None),
    ("ContinuousBernoulli", "Exponential", None, None),
    ("ContinuousBernoulli", "Normal", None, None),
    ("ContinuousBernoulli", "Uniform", None, {"low": -1 - POS, "high": 2 + POS_B}),
    ("Exponential", "Gumbel", None, None),
    ("Gamma", "Gumbel", None, None),
    ("Gumbel", "Normal", None, None),
    ("Normal", "Laplace", None, None),
    ("Pareto", "Exponential", None, None),
    ("Pareto", "Gamma", None, None),
    ("Pareto", "Normal", None, None),
    ("Uniform", "Beta", {"low": LOW01, "high": HIGH01}, None),
    ("Uniform", "ContinuousBernoulli", {"low": LOW01, "high": HIGH01}, None),
    ("Uniform", "Gamma", {"low": POS, "high": POS + POS_B}, None),
    ("Uniform", "Gumbel", None, None),
    ("Uniform", "Pareto", {"low": POS + 0.5, "high": POS + 2}, {"scale": POS, "alpha": POS_B}),
]

INFINITE = [(p, q) for p, qs in [
    ("Beta", ["Pareto"]), ("ContinuousBernoulli", ["Pareto"]),
    ("Exponential", ["Beta", "ContinuousBernoulli", "Pareto", "Uniform"]),
    ("Gamma", ["Beta", "ContinuousBernoulli", "Pareto", "Uniform"]),
    ("Gumbel", ["Beta", "ContinuousBernoulli", "Exponential", "Gamma", "Pareto", "Uniform"]),
    ("Laplace", ["Beta", "ContinuousBernoulli", "Exponential", "Gamma", "Pareto", "Uniform"]),
    ("Normal", ["Beta", "ContinuousBernoulli", "Exponential", "Gamma", "Pareto", "Uniform"]),
    ("Pareto", ["Beta", "ContinuousBernoulli", "Uniform"]),
] for q in qs]


def _kl(oracle, p_name, p_params, q_name, q_params):
    pe, pt = oracle.build(p_name, p_params)
    qe, qt = oracle.build(q_name, q_params)
    return ember.distributions.kl_divergence(pe, qe), torch.distributions.kl_divergence(pt, qt)


def test_ember_registers_torchs_pairs():
    from torch.distributions import kl as tkl

    from ember.distributions import kl as ekl
    def names(reg, package):            # the library's own pairs (tests register others)
        return {(p.__name__, q.__name__) for p, q in reg
                if p.__module__.startswith(package) and q.__module__.startswith(package)}

    assert names(ekl._KL_REGISTRY, "ember.") == names(tkl._KL_REGISTRY, "torch.")


@pytest.mark.parametrize("p_name,q_name,p_params,q_params", FINITE,
                         ids=[f"{a}-{b}" for a, b, _, _ in FINITE])
def test_closed_forms_match_torch(p_name, q_name, p_params, q_params, oracle):
    got, want = _kl(oracle, p_name, p_params or GENERIC[p_name], q_name,
                    q_params or GENERIC[q_name])
    want = want.detach().numpy()
    assert np.isfinite(want).all()
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("p_name,q_name", INFINITE, ids=[f"{a}-{b}" for a, b in INFINITE])
def test_infinite_pairs(p_name, q_name, oracle):
    got, want = _kl(oracle, p_name, GENERIC[p_name], q_name, GENERIC[q_name])
    assert tuple(got.shape) == tuple(want.shape) == (2, 3)
    assert np.isposinf(want.numpy()).all() and np.isposinf(got.numpy()).all()


# parameters where a closed form turns infinite (p leaves q's support, or p's moments do not
# exist): the same mask of infinities as torch, the same finite values elsewhere
EDGES = [
    ("Pareto", "Exponential", {"scale": np.ones(3), "alpha": np.array([0.5, 1.0, 3.0])},
     {"rate": np.full(3, 2.0)}),
    ("Pareto", "Gamma", {"scale": np.ones(3), "alpha": np.array([0.5, 1.0, 3.0])},
     {"concentration": np.full(3, 2.0), "rate": np.full(3, 1.5)}),
    ("Pareto", "Normal", {"scale": np.ones(3), "alpha": np.array([1.5, 2.0, 3.0])},
     {"loc": np.zeros(3), "scale": np.ones(3)}),
    ("Uniform", "Beta", {"low": np.array([-0.5, 0.2, 0.2]), "high": np.array([0.5, 1.5, 0.7])},
     {"concentration1": np.full(3, 2.0), "concentration0": np.full(3, 3.0)}),
    ("Uniform", "Gamma", {"low": np.array([-1.0, 0.5]), "high": np.array([1.0, 2.0])},
     {"concentration": np.full(2, 2.0), "rate": np.full(2, 1.5)}),
    ("Uniform", "Pareto", {"low": np.array([0.5, 1.5]), "high": np.array([2.0, 3.0])},
     {"scale": np.ones(2), "alpha": np.full(2, 2.5)}),
    ("Uniform", "ContinuousBernoulli", {"low": np.array([0.0, 0.2, 0.3]),
                                        "high": np.array([0.5, 1.0, 0.6])},
     {"probs": np.full(3, 0.3)}),
    ("ContinuousBernoulli", "Uniform", {"probs": np.full(3, 0.3)},
     {"low": np.array([0.0, -1.0, -1.0]), "high": np.array([2.0, 1.0, 2.0])}),
]


@pytest.mark.parametrize("p_name,q_name,p_params,q_params", EDGES,
                         ids=[f"{a}-{b}" for a, b, _, _ in EDGES])
def test_edges_match_torch(p_name, q_name, p_params, q_params, oracle):
    got, want = _kl(oracle, p_name, p_params, q_name, q_params)
    got, want = got.detach().numpy(), want.detach().numpy()
    assert np.isinf(want).any() and np.isfinite(want).any()
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want))
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_gradients_through_a_closed_form(oracle):
    D = ember.distributions
    loc = ember.tensor(REAL, requires_grad=True)
    tloc = torch.tensor(REAL, requires_grad=True)
    kl = D.kl_divergence(D.Normal(loc, ember.tensor(POS)),
                         D.Laplace(ember.tensor(REAL * 0.5), ember.tensor(POS_B)))
    tkl = torch.distributions.kl_divergence(
        torch.distributions.Normal(tloc, torch.tensor(POS)),
        torch.distributions.Laplace(torch.tensor(REAL * 0.5), torch.tensor(POS_B)))
    kl.sum().backward()
    tkl.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), tloc.grad.numpy(), rtol=1e-9)
