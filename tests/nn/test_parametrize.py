"""nn.utils parametrizations, weight/spectral normalization, fusion and functional_call,
against torch with the same tensors (and buffers copied where they start random)."""
import copy

import numpy as np
import pytest
import torch
from ember.nn.utils import parametrizations as PZ
from ember.nn.utils import parametrize as P

import ember
from ember import nn

RNG = np.random.default_rng(0)


def _copy_into_torch(em, tm):
    tm.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in em.state_dict().items()})


def _close(e, t, atol=1e-6):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=atol, rtol=1e-5)


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu()


def test_register_and_remove_parametrization():
    m = nn.Linear(3, 3)
    P.register_parametrization(m, "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear" and P.is_parametrized(m, "weight")
    assert P.type_before_parametrizations(m) is nn.Linear
    w = m.weight.detach().numpy()
    np.testing.assert_allclose(w, w.T)
    assert sorted(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    m(ember.randn(2, 3)).sum().backward()
    grad = m.parametrizations.weight.original.grad.numpy()
    assert np.all(np.tril(grad, -1) == 0)               # the lower triangle is not read
    m.weight = ember.eye(3) * 2                          # assignment runs right_inverse
    np.testing.assert_allclose(m.weight.detach().numpy(), np.eye(3) * 2)
    with P.cached():
        assert m.weight is m.weight
    P.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and sorted(m.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(m.weight.detach().numpy(), np.eye(3) * 2)
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        P.remove_parametrizations(m, "weight")
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        P.register_parametrization(m, "nope", Symmetric())


def test_parametrization_may_not_change_shape_unless_unsafe():
    class First(nn.Module):
        def forward(self, X):
            return X[0]
    with pytest.raises(ValueError, match="may not change the shape"):
        P.register_parametrization(nn.Linear(3, 3), "weight", First())
    m = P.register_parametrization(nn.Linear(3, 3), "weight", First(), unsafe=True)
    assert tuple(m.weight.shape) == (3,)


def test_parametrized_module_refuses_pickle_but_deepcopies():
    import pickle
    m = P.register_parametrization(nn.Linear(2, 2), "weight", Symmetric())
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(m)
    clone = copy.deepcopy(m)
    _close(clone.weight, torch.tensor(m.weight.detach().numpy()))


def test_weight_norm_parametrization_matches_torch():
    em = PZ.weight_norm(nn.Linear(4, 3), dim=0)
    tm = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(4, 3), dim=0)
    assert sorted(em.state_dict()) == sorted(tm.state_dict())
    _copy_into_torch(em, tm)
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    _close(em(ember.tensor(x)), tm(torch.tensor(x)))
    em(ember.tensor(x)).sum().backward()
    tm(torch.tensor(x)).sum().backward()
    for name in ("original0", "original1"):
        _close(getattr(em.parametrizations.weight, name).grad,
               getattr(tm.parametrizations.weight, name).grad)


def test_old_weight_norm_matches_torch():
    with pytest.warns(FutureWarning):
        em = nn.utils.weight_norm(nn.Conv1d(2, 3, 3), dim=1)
    with pytest.warns(FutureWarning):
        tm = torch.nn.utils.weight_norm(torch.nn.Conv1d(2, 3, 3), dim=1)
    assert sorted(em.state_dict()) == sorted(tm.state_dict()) == ["bias", "weight_g", "weight_v"]
    _copy_into_torch(em, tm)
    x = RNG.standard_normal((2, 2, 6)).astype(np.float32)
    _close(em(ember.tensor(x)), tm(torch.tensor(x)))
    em(ember.tensor(x)).sum().backward()
    tm(torch.tensor(x)).sum().backward()
    _close(em.weight_g.grad, tm.weight_g.grad, 1e-5)
    loaded = PZ.weight_norm(nn.Conv1d(2, 3, 3), dim=1)
    loaded.load_state_dict(em.state_dict())              # the compat hook renames the keys
    _close(loaded(ember.tensor(x)), tm(torch.tensor(x)))
    nn.utils.remove_weight_norm(em)
    assert sorted(em.state_dict()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(em)


@pytest.mark.parametrize("new", [True, False])
def test_spectral_norm_matches_torch(new):
    make = (PZ.spectral_norm, torch.nn.utils.parametrizations.spectral_norm) if new else \
        (nn.utils.spectral_norm, torch.nn.utils.spectral_norm)
    ember.manual_seed(0)            # the weights (and so the power iteration) do not depend on test order
    em = make[0](nn.Linear(4, 5), n_power_iterations=2)
    tm = make[1](torch.nn.Linear(4, 5), n_power_iterations=2)
    assert sorted(em.state_dict()) == sorted(tm.state_dict())
    _copy_into_torch(em, tm)
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    for _ in range(3):          # training steps run the power iteration on the buffers
        _close(em(ember.tensor(x)), tm(torch.tensor(x)), 1e-5)
    em.eval()
    tm.eval()
    _close(em(ember.tensor(x)), tm(torch.tensor(x)), 1e-5)
    # a few power iterations estimate the top singular value, to about 1e-2 here (PyTorch's
    # estimate is the same: the outputs above match)
    sigma = np.linalg.svd(em.weight.detach().numpy())[1][0]
    assert abs(sigma - 1) < 1e-2


@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal(omap, shape):
    m = PZ.orthogonal(nn.Linear(shape[1], shape[0], bias=False), orthogonal_map=omap)
    W = m.weight.detach().numpy().astype(np.float64)
    gram = W.T @ W if shape[0] >= shape[1] else W @ W.T
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-5)
    assert sorted(m.state_dict()) == ["parametrizations.weight.0.base",
                                      "parametrizations.weight.original"]
    m(ember.randn(2, shape[1])).sum().backward()
    assert m.parametrizations.weight.original.grad is not None
    target = np.linalg.qr(RNG.standard_normal((max(shape), min(shape))))[0]
    target = target if shape[0] >= shape[1] else target.T
    m.weight = ember.tensor(target.astype(np.float32))     # assigning an orthogonal matrix
    np.testing.assert_allclose(m.weight.detach().numpy(), target, atol=1e-5)


@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_without_trivialization(omap, shape):
    # a map whose right_inverse cannot invert (the parametrization registers the weight
    # as its original) is registered as PyTorch does: the identity stands in
    m = PZ.orthogonal(nn.Linear(shape[1], shape[0], bias=False), orthogonal_map=omap,
                      use_trivialization=False)
    W = m.weight.detach().numpy().astype(np.float64)
    gram = W.T @ W if shape[0] >= shape[1] else W @ W.T
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-5)
    m(ember.randn(2, shape[1])).sum().backward()
    assert m.parametrizations.weight.original.grad is not None


def test_orthogonal_errors():
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
        PZ.orthogonal(nn.Linear(3, 3), "bias")
    with pytest.raises(ValueError, match='orthogonal_map has to be one of'):
        PZ.orthogonal(nn.Linear(3, 3), orthogonal_map="qr")


def test_fusion_matches_torch():
    conv, bn = nn.Conv2d(3, 4, 3).eval(), nn.BatchNorm2d(4).eval()
    bn.running_mean.copy_(ember.randn(4))
    bn.running_var.copy_(ember.rand(4) + 0.5)
    x = ember.randn(2, 3, 5, 5)
    fused = nn.utils.fuse_conv_bn_eval(conv, bn)
    _close(fused(x), torch.tensor(bn(conv(x)).detach().numpy()), 1e-5)
    lin, bn1 = nn.Linear(3, 4).eval(), nn.BatchNorm1d(4).eval()
    bn1.running_var.copy_(ember.rand(4) + 0.5)
    x = ember.randn(2, 3)
    _close(nn.utils.fuse_linear_bn_eval(lin, bn1)(x), torch.tensor(bn1(lin(x)).detach().numpy()),
           1e-5)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        nn.utils.fuse_conv_bn_eval(conv.train(), bn)


def test_functional_call():
    m = nn.Linear(3, 2)
    w = ember.ones(2, 3)
    out = nn.utils.stateless.functional_call(m, {"weight": w, "bias": ember.zeros(2)},
                                             (ember.ones(1, 3),))
    assert out.tolist() == [[3.0, 3.0]]
    assert not (m.weight.detach().numpy() == 1).all()          # restored afterwards
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'bias'"):
        nn.utils.stateless.functional_call(m, {"weight": w}, (ember.ones(1, 3),), strict=True)


def test_clip_grads_with_norm():
    ps = [ember.nn.Parameter(ember.ones(3)) for _ in range(2)]
    for p in ps:
        p.grad = ember.full((3,), 2.0)
    total = nn.utils.get_total_norm([p.grad for p in ps])
    nn.utils.clip_grads_with_norm_(ps, 1.0, total)
    tps = [torch.nn.Parameter(torch.ones(3)) for _ in range(2)]
    for p in tps:
        p.grad = torch.full((3,), 2.0)
    torch.nn.utils.clip_grads_with_norm_(tps, 1.0, torch.nn.utils.get_total_norm(
        [p.grad for p in tps]))
    _close(ps[0].grad, tps[0].grad)
