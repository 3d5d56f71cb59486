"""Parity with torch for fixes found by side-by-side probing: KL(Uniform || Gamma/Beta/
Chi2) at a support edge, and exception types/messages of transforms, constraints,
Wishart, MixtureSameFamily, broadcast_all and the Distribution base properties."""
import pytest
import torch

import ember


def _both(fn):
    """``fn(lib)`` for ember and torch."""
    return fn(ember), fn(torch)


def _raised(fn, lib):
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("q", [
    lambda D, T: D.Gamma(T([2.0, 0.5]), T([1.0, 3.0])),
    lambda D, T: D.Beta(T([2.0, 0.5]), T([3.0, 1.5])),
    lambda D, T: D.Chi2(T([2.0, 5.0])),
])
def test_kl_uniform_from_zero_is_finite(q):
    # Uniform(0, 1) touches x=0, where x*log(x) must be 0 (not nan)
    def kl(lib):
        T = lambda v: lib.tensor(v, dtype=lib.float64)  # noqa: E731
        D = lib.distributions
        return D.kl_divergence(D.Uniform(T([0.0, 0.0]), T([1.0, 0.5])), q(D, T))
    e, t = _both(kl)
    torch.testing.assert_close(torch.from_numpy(e.numpy()), t)


def test_kl_cross_exponential_family_message():
    def f(lib):
        D = lib.distributions
        return D.kl_divergence(D.Normal(0.0, 1.0), D.Poisson(1.0))
    assert _raised(f, ember) == _raised(f, torch)


@pytest.mark.parametrize("make", [
    lambda lib: lib.distributions.Wishart(lib.tensor(4.0)),
    lambda lib: lib.distributions.MixtureSameFamily(
        lib.distributions.Categorical(probs=lib.tensor([0.5, 0.5])), lib.tensor([1.0])),
    lambda lib: lib.distributions.utils.broadcast_all(lib.tensor([1.0]), "a"),
    lambda lib: lib.distributions.constraints.lower_cholesky.check(lib.tensor([1.0, 2.0])),
    lambda lib: lib.distributions.constraints.corr_cholesky.check(lib.tensor([1.0, 2.0])),
    lambda lib: lib.distributions.transforms.StackTransform(
        [lib.distributions.ExpTransform()] * 2)(lib.zeros(3, 2)),
    lambda lib: lib.distributions.transforms.StackTransform(
        [lib.distributions.ExpTransform()] * 2).inv(lib.zeros(3, 2)),
    lambda lib: lib.distributions.transforms.StackTransform([1]),
    lambda lib: lib.distributions.transforms.CatTransform(
        [lib.distributions.ExpTransform()] * 2, lengths=[1, 2])(lib.zeros(2)),
    lambda lib: lib.distributions.transforms.CatTransform(
        [lib.distributions.ExpTransform()] * 2, lengths=[1, 2]).inv(lib.zeros(2)),
    lambda lib: lib.distributions.transforms.CatTransform(
        [lib.distributions.ExpTransform()] * 2, dim=3)(lib.zeros(2)),
    lambda lib: lib.distributions.transforms.CatTransform(
        [lib.distributions.ExpTransform()], lengths=[1, 2]),
    lambda lib: lib.distributions.transforms.CatTransform([1]),
])
def test_error_type_and_message(make):
    assert _raised(make, ember) == _raised(make, torch)


@pytest.mark.parametrize("prop", ["mean", "variance", "stddev"])
def test_base_moment_not_implemented_message(prop):
    def f(lib):
        D = lib.distributions
        return getattr(D.LogisticNormal(lib.zeros(2), lib.ones(2)), prop)
    assert _raised(f, ember) == _raised(f, torch)
