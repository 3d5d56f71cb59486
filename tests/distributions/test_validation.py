"""Argument and sample validation with PyTorch's exception types and messages,
Distribution.set_default_validate_args, constructor errors, pickling, expand (views of the
parameters), lazily computed parameters, and the module paths PyTorch uses."""
import importlib
import pickle

import numpy as np
import pytest
import torch
from torch.distributions.von_mises import _log_modified_bessel_fn as torch_fn

import ember
from ember.distributions.dirichlet import _Dirichlet
from ember.distributions.von_mises import _log_modified_bessel_fn

D = ember.distributions


def _messages(make):
    """(ember message, torch message with torch.Size spelled as ember's) of the ValueError
    both raise."""
    with pytest.raises(ValueError) as e:
        make(ember)
    with pytest.raises(ValueError) as t:
        make(torch)
    return str(e.value), str(t.value).replace("torch.Size", "ember.Size")


BAD_PARAMS = [
    lambda m: m.distributions.Normal(m.tensor([0.0, 1.0]), m.tensor([1.0, -1.0])),
    lambda m: m.distributions.Gamma(m.tensor([1.0]), m.tensor([0.0])),
    lambda m: m.distributions.Bernoulli(probs=m.tensor([0.5, 1.5])),
    lambda m: m.distributions.Categorical(probs=m.tensor([0.5, -0.5])),
    lambda m: m.distributions.Uniform(m.tensor([2.0]), m.tensor([1.0])),
    lambda m: m.distributions.Poisson(m.tensor([-1.0])),
    lambda m: m.distributions.Binomial(m.tensor([2.5]), m.tensor([0.5])),
    lambda m: m.distributions.Dirichlet(m.tensor([1.0, 0.0])),
    lambda m: m.distributions.Geometric(probs=m.tensor([0.0, 0.5])),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.tensor([[1.0, 2.0],
                                                                       [2.0, 1.0]])),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), scale_tril=m.tensor(
        [[1.0, 1.0], [0.0, 1.0]])),
]


@pytest.mark.parametrize("make", BAD_PARAMS, ids=range(len(BAD_PARAMS)))
def test_bad_parameters(make):
    got, want = _messages(make)
    assert got == want


BAD_VALUES = [
    (lambda m: m.distributions.Normal(0.0, 1.0), lambda m: m.tensor(float("nan"))),
    (lambda m: m.distributions.Exponential(m.tensor([1.0, 2.0])),
     lambda m: m.tensor([1.0, -1.0])),
    (lambda m: m.distributions.Bernoulli(m.tensor([0.3])), lambda m: m.tensor([0.5])),
    (lambda m: m.distributions.Categorical(m.tensor([0.3, 0.7])), lambda m: m.tensor(2)),
    (lambda m: m.distributions.Normal(m.zeros(3), 1.0), lambda m: m.zeros(2)),
    (lambda m: m.distributions.Dirichlet(m.ones(3)), lambda m: m.ones(2)),
    (lambda m: m.distributions.Beta(m.tensor([2.0]), m.tensor([3.0])),
     lambda m: m.tensor([1.5])),
]


@pytest.mark.parametrize("make,value", BAD_VALUES, ids=range(len(BAD_VALUES)))
def test_bad_values(make, value):
    got, want = _messages(lambda m: make(m).log_prob(value(m)))
    assert got == want
    assert "be a Tensor" in _messages(lambda m: make(m).log_prob(1.0))[0]


def test_validation_switches():
    assert D.Normal(ember.tensor([0.0]), ember.tensor([-1.0]),
                    validate_args=False).scale.item() == -1.0
    D.Distribution.set_default_validate_args(False)
    try:
        d = D.Normal(ember.tensor([0.0]), ember.tensor([-1.0]))
        assert not d._validate_args
        d.log_prob(ember.tensor([float("nan")]))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(ember.tensor([0.0]), ember.tensor([-1.0]))
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(3)


def test_constructor_errors():
    cases = [
        (lambda m: m.distributions.Bernoulli(), "Either `probs` or `logits`"),
        (lambda m: m.distributions.Categorical(m.tensor(0.5)), "at least one-dimensional"),
        (lambda m: m.distributions.Categorical(logits=m.tensor(0.5)), "`logits` parameter"),
        (lambda m: m.distributions.Dirichlet(m.tensor(1.0)), "`concentration` parameter"),
        (lambda m: m.distributions.MultivariateNormal(m.zeros(2)), "Exactly one of"),
        (lambda m: m.distributions.MultivariateNormal(m.tensor(0.0), m.eye(2)),
         "loc must be at least one-dimensional."),
        (lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.ones(2)),
         "covariance_matrix must be at least two-dimensional"),
        (lambda m: m.distributions.LowRankMultivariateNormal(m.zeros(2), m.ones(3, 1),
                                                             m.ones(2)),
         "cov_factor must be a batch of matrices with shape 2 x m"),
        (lambda m: m.distributions.Independent(m.distributions.Normal(m.zeros(2), 1.0), 2),
         "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape)"),
        (lambda m: m.distributions.TransformedDistribution(
            m.distributions.Normal(0.0, 1.0), [1]), "transforms must be a Transform"),
        (lambda m: m.distributions.MixtureSameFamily(
            m.distributions.Categorical(m.ones(3)), m.distributions.Normal(m.zeros(2), 1.0)),
         "does not equal"),
    ]
    for make, text in cases:
        got, want = _messages(make)
        assert got == want and text in got, (got, want)
    for m in (ember, torch):
        with pytest.raises(NotImplementedError, match="inhomogeneous total_count"):
            m.distributions.Multinomial(m.tensor(3), m.ones(2))
        with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
            m.distributions.Binomial(m.tensor([2.0, 3.0]), m.tensor([0.5, 0.5])).entropy()
        with pytest.raises(NotImplementedError, match="cartesian product"):
            m.distributions.Independent(m.distributions.Bernoulli(m.ones(2) / 2),
                                        1).enumerate_support()


def test_pickle_and_expand():
    loc = ember.tensor([0.0, 1.0, 2.0])
    cases = [D.Normal(loc, 2.0), D.Categorical(logits=ember.tensor([[0.1, 0.2], [1.0, 0.0]])),
             D.MultivariateNormal(ember.zeros(2), ember.eye(2) * 2),
             D.LogNormal(loc, ember.ones(3)), D.Beta(ember.tensor([2.0]), ember.tensor([3.0])),
             D.TransformedDistribution(D.Normal(loc, 1.0), D.transforms.TanhTransform()),
             D.Independent(D.Normal(loc, 1.0), 1), D.Bernoulli(probs=ember.tensor([0.3]))]
    for d in cases:
        x = d.sample()
        d.probs if isinstance(d, (D.Categorical, D.Bernoulli)) else None      # lazy twin
        d2 = pickle.loads(pickle.dumps(d))
        assert type(d2) is type(d) and d2.log_prob(x).allclose(d.log_prob(x))
        big = d.expand((4,) + tuple(d.batch_shape))
        assert tuple(big.batch_shape) == (4,) + tuple(d.batch_shape)
        assert big.log_prob(x).shape == (4,) + tuple(d.batch_shape)
        assert big._validate_args == d._validate_args
    e = D.Normal(loc, 2.0).expand((5, 3))
    assert e.loc.stride() == (0, 1)                # a view, not a copy


def test_lazy_parameters_and_repr():
    d = D.Categorical(probs=ember.tensor([1.0, 3.0]))
    assert "logits" not in d.__dict__ and d.probs.tolist() == [0.25, 0.75]
    assert d.logits.allclose(ember.log(ember.tensor([0.25, 0.75])))
    assert repr(D.Normal(ember.tensor([0.0, 1.0]), 1.0)) == \
        "Normal(loc: ember.Size([2]), scale: ember.Size([2]))"
    assert repr(D.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert repr(D.Independent(D.Normal(ember.zeros(2), 1.0), 1)).startswith("Independent(")


def test_module_paths():
    for name in torch.distributions.__all__:
        obj = getattr(torch.distributions, name)
        module = getattr(obj, "__module__", None)
        if module and module.startswith("torch.distributions."):
            mod = importlib.import_module(module.replace("torch", "ember", 1))
            assert getattr(mod, name) is getattr(D, name), name
    from ember.distributions.constraints import positive  # noqa: F401
    from ember.distributions.kl import kl_divergence, register_kl  # noqa: F401
    from ember.distributions.utils import (  # noqa: F401
        broadcast_all,
        lazy_property,
        logits_to_probs,
        probs_to_logits,
    )
    assert set(torch.distributions.utils.__all__ if hasattr(torch.distributions.utils,
                                                             "__all__") else []) <= \
        set(dir(ember.distributions.utils))


def test_utils_against_torch():
    U, TU = ember.distributions.utils, torch.distributions.utils
    p = np.array([[0.2, 0.3, 0.5], [1e-9, 0.5, 0.5 - 1e-9]])
    np.testing.assert_allclose(U.probs_to_logits(ember.tensor(p)).numpy(),
                               TU.probs_to_logits(torch.tensor(p)).numpy())
    np.testing.assert_allclose(U.probs_to_logits(ember.tensor(p), True).numpy(),
                               TU.probs_to_logits(torch.tensor(p), True).numpy())
    np.testing.assert_allclose(U.logits_to_probs(ember.tensor(p)).numpy(),
                               TU.logits_to_probs(torch.tensor(p)).numpy())
    m = np.arange(16.0).reshape(4, 4)
    for diag in (-2, -1, 0, 1):
        v = U.tril_matrix_to_vec(ember.tensor(m), diag)
        np.testing.assert_array_equal(v.numpy(), TU.tril_matrix_to_vec(torch.tensor(m),
                                                                       diag).numpy())
        np.testing.assert_array_equal(U.vec_to_tril_matrix(v, diag).numpy(),
                                      TU.vec_to_tril_matrix(torch.tensor(v.numpy()),
                                                            diag).numpy())
    a, b = U.broadcast_all(ember.tensor([1.0, 2.0], dtype=ember.float64), 3)
    assert b.dtype == ember.float64 and b.tolist() == [3.0, 3.0]
    with pytest.raises(ValueError, match="Input arguments must all be instances"):
        U.broadcast_all("x")


VMAPPED = [
    lambda m, x: m.distributions.Normal(x, 1.0).log_prob(m.tensor(0.5)),
    lambda m, x: m.distributions.Gamma(x.abs() + 1, 2.0).log_prob(m.tensor(0.5)),
    lambda m, x: m.distributions.Exponential(2.0).log_prob(x.abs()),
    lambda m, x: m.distributions.Dirichlet(x.abs() + 1).log_prob(m.tensor([0.25, 0.75])),
]


@pytest.mark.parametrize("fn", VMAPPED)
def test_default_validation_works_under_vmap(fn):
    # validation asks _is_all_true, which answers for the whole batch inside vmap
    x = np.array([[0.3, -1.2], [2.0, 0.7], [1.1, 0.4]], dtype=np.float32)
    e = ember.func.vmap(lambda v: fn(ember, v))(ember.tensor(x))
    t = torch.func.vmap(lambda v: fn(torch, v))(torch.tensor(x))
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
    for lib in (ember, torch):          # an invalid value in any sample still fails
        with pytest.raises(RuntimeError):
            lib.func.vmap(lambda s: lib.distributions.Normal(0.0, s).log_prob(
                lib.tensor(0.5)))(lib.tensor([1.0, -2.0]))


def test_per_sample_gradients_with_validation():
    def loss(lib):
        return lambda w, x: -lib.distributions.Normal(w * x, 1.0).log_prob(x).sum()
    x = np.array([[0.5], [-1.0], [2.0]], dtype=np.float32)
    e = ember.func.vmap(ember.func.grad(loss(ember)), in_dims=(None, 0))(
        ember.tensor(0.7), ember.tensor(x))
    t = torch.func.vmap(torch.func.grad(loss(torch)), in_dims=(None, 0))(
        torch.tensor(0.7), torch.tensor(x))
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5)


def test_private_names_torch_code_imports():
    K, EK = torch.distributions.kl, ember.distributions.kl
    pairs = sorted(n for n in dir(K) if n.startswith("_kl_"))
    assert [n for n in pairs if not hasattr(EK, n)] == []
    p, q = (D.Normal(ember.tensor([0.0, 1.0]), 1.5), D.Normal(ember.tensor([0.5, 0.0]), 1.0))
    tp, tq = (torch.distributions.Normal(torch.tensor([0.0, 1.0]), 1.5),
              torch.distributions.Normal(torch.tensor([0.5, 0.0]), 1.0))
    np.testing.assert_allclose(EK._kl_normal_normal(p, q).numpy(),
                               K._kl_normal_normal(tp, tq).numpy(), rtol=1e-6)
    assert EK._kl_normal_infinity(p, q).isinf().all()
    m = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    np.testing.assert_allclose(EK._batch_trace_XXT(ember.tensor(m)).numpy(),
                               K._batch_trace_XXT(torch.tensor(m)).numpy())
    v = np.array([0.0, 0.5, 2.0], dtype=np.float32)
    np.testing.assert_allclose(EK._x_log_x(ember.tensor(v)).numpy(),
                               K._x_log_x(torch.tensor(v)).numpy())
    assert EK._infinite_like(ember.zeros(2)).isinf().all()
    c = ember.tensor([0.5, 2.0], requires_grad=True)
    x = _Dirichlet.apply(c)
    x[0].backward()
    assert x.sum().item() == pytest.approx(1.0) and c.grad is not None
    k = np.array([0.1, 1.0, 50.0, 800.0])
    for order in (0, 1):
        np.testing.assert_allclose(_log_modified_bessel_fn(ember.tensor(k), order).numpy(),
                                   torch_fn(torch.tensor(k), order).numpy(), rtol=1e-6)
    with pytest.raises(AssertionError):
        _log_modified_bessel_fn(ember.tensor(k), order=2)
