"""ember.nn.utils.prune against torch.nn.utils.prune: masks, state_dict keys, iterative
pruning through PruningContainer, global pruning, remove and the validation errors."""
import copy

import ember.nn.utils.prune as eprune
import numpy as np
import pytest
import torch
import torch.nn.utils.prune as tprune

import ember

_rng = np.random.RandomState(0)
_W = _rng.randn(4, 6).astype(np.float32)
_WC = _rng.randn(4, 3, 2, 2).astype(np.float32)


def _linear(lib):
    m = lib.nn.Linear(6, 4)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(_W))
        m.bias.copy_(lib.arange(4.0) - 1.5)
    return m


def _conv(lib):
    m = lib.nn.Conv2d(3, 4, 2)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(_WC))
        m.bias.zero_()
    return m


def _np(t):
    return t.detach().numpy()


def _same_state(e, t):
    es, ts = e.state_dict(), t.state_dict()
    assert list(es) == list(ts)
    for k in ts:
        np.testing.assert_allclose(_np(es[k]), _np(ts[k]), rtol=1e-6, atol=1e-6)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]


@pytest.mark.parametrize("amount", [0.3, 7, 0, 1.0])
def test_l1_unstructured_matches_torch(amount):
    e, t = _linear(ember), _linear(torch)
    eprune.l1_unstructured(e, "weight", amount)
    tprune.l1_unstructured(t, "weight", amount)
    _same_state(e, t)
    np.testing.assert_allclose(_np(e.weight), _np(t.weight))
    ey, ty = e(ember.ones(2, 6)), t(torch.ones(2, 6))
    ey.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(_np(e.weight_orig.grad), _np(t.weight_orig.grad), rtol=1e-6)
    assert eprune.is_pruned(e) and tprune.is_pruned(t)


@pytest.mark.parametrize("amount,n,dim,conv", [(0.5, 2, 0, False), (2, 1, 1, False),
                                               (1, float("inf"), -1, False),
                                               (0.5, "fro", 0, False), (2, 2, 0, True),
                                               (0.34, 1, 1, True)])
def test_ln_structured_matches_torch(amount, n, dim, conv):
    make = _conv if conv else _linear
    e, t = make(ember), make(torch)
    eprune.ln_structured(e, "weight", amount, n, dim)
    tprune.ln_structured(t, "weight", amount, n, dim)
    _same_state(e, t)


def test_iterative_pruning_container_and_remove():
    mods = []
    for lib, pr in ((ember, eprune), (torch, tprune)):
        m = _conv(lib)
        pr.l1_unstructured(m, "weight", 0.3)
        pr.ln_structured(m, "weight", 1, 2, 0)
        pr.l1_unstructured(m, "weight", 5)
        pr.custom_from_mask(m, "bias", lib.tensor([1.0, 0, 1, 0]))
        hooks = list(m._forward_pre_hooks.values())
        assert type(hooks[0]).__name__ == "PruningContainer" and len(hooks[0]) == 3
        mods.append(m)
    _same_state(*mods)
    eprune.remove(mods[0], "weight")
    tprune.remove(mods[1], "weight")
    _same_state(*mods)
    assert type(mods[0].weight).__name__ == "Parameter"


def test_global_unstructured_matches_torch():
    mods = []
    for lib, pr in ((ember, eprune), (torch, tprune)):
        a, b = _linear(lib), _conv(lib)
        pr.l1_unstructured(b, "weight", 3)
        pr.global_unstructured([(a, "weight"), (b, "weight"), (a, "bias")],
                               pr.L1Unstructured, amount=10)
        mods.append((a, b))
    for e, t in zip(*mods):
        _same_state(e, t)


def test_random_pruning_counts_and_copies():
    m = _linear(ember)
    eprune.random_unstructured(m, "weight", 0.25)
    assert int((m.weight_mask == 0).sum()) == 6
    eprune.random_structured(m, "weight", 2, 0)
    assert int((m.weight_mask == 0).all(1).sum()) >= 2
    # deepcopy refuses the non-leaf pruned attribute, as torch's does
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(m)


@pytest.mark.parametrize("call", [
    lambda pr, lib: pr.l1_unstructured(_linear(lib), "weight", 1.5),
    lambda pr, lib: pr.l1_unstructured(_linear(lib), "weight", -1),
    lambda pr, lib: pr.l1_unstructured(_linear(lib), "weight", "x"),
    lambda pr, lib: pr.l1_unstructured(_linear(lib), "weight", 25),
    lambda pr, lib: pr.ln_structured(_linear(lib), "bias", 1, 2, 0),
    lambda pr, lib: pr.ln_structured(_linear(lib), "weight", 1, 2, 2),
    lambda pr, lib: pr.remove(_linear(lib), "weight"),
    lambda pr, lib: pr.global_unstructured(5, pr.L1Unstructured, amount=1),
    lambda pr, lib: pr.global_unstructured([(_linear(lib), "weight")], pr.LnStructured,
                                           amount=1, n=2, dim=0),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as te:
        call(tprune, torch)
    with pytest.raises(type(te.value)) as ee:
        call(eprune, ember)
    strip = str(te.value).replace("torch", "ember")
    assert str(ee.value).split(" of module")[0] == strip.split(" of module")[0]
