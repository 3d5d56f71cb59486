"""ember.utils.checkpoint against torch's non-reentrant checkpoint: first and higher order,
under backward() (the leaves the function closes over accumulate) and under grad()
(only the inputs' gradients, nothing reaches .grad)."""
import pytest
import torch

import ember


def _run(L, case):
    cp = L.utils.checkpoint
    w = L.tensor([0.5, -1.], requires_grad=True)
    x = L.tensor([1., 2.], requires_grad=True)

    def fn(t):
        return (L.tanh(t * w) ** 2).sum()
    out = cp.checkpoint(fn, x, use_reentrant=False)
    got = []
    if case == "penalty":                   # a gradient penalty (WGAN-GP)
        gx, = L.autograd.grad(out, x, create_graph=True)
        got.append(w.grad)
        ((gx.norm() - 1) ** 2).backward()
    elif case == "create_graph":
        out.backward(create_graph=True)
        got.append(w.grad.requires_grad)
        (w.grad.sum() * x.grad.sum()).backward()
    elif case == "grad":
        got.append(L.autograd.grad(out, x)[0].tolist())
    else:
        out.backward()
    return got + [None if t.grad is None else t.grad.tolist() for t in (w, x)]


@pytest.mark.parametrize("case", ["penalty", "create_graph", "grad", "backward"])
def test_checkpoint_gradients_match_torch(case):
    want, got = _run(torch, case), _run(ember, case)
    assert len(want) == len(got)
    for a, b in zip(want, got):
        if isinstance(a, list):
            assert b == pytest.approx(a, rel=1e-6)
        else:
            assert a == b


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_recomputation_runs_under_the_forward_autocast(use_reentrant):
    # the backward's recomputation ran in float32 while the forward ran in bfloat16, so the
    # gradients were of a different function (PyTorch keeps the forward's autocast state)
    lin = ember.nn.Linear(8, 8)
    x = ember.randn(4, 8, requires_grad=True)
    seen = []

    def f(a):
        y = lin(a)
        seen.append(y.dtype)
        return y.float().sin()

    with ember.autocast("cpu", dtype=ember.bfloat16):
        out = ember.utils.checkpoint.checkpoint(f, x, use_reentrant=use_reentrant)
    out.sum().backward()
    assert seen == [ember.bfloat16, ember.bfloat16]
    g_ckpt = x.grad.clone()
    x.grad = None
    with ember.autocast("cpu", dtype=ember.bfloat16):
        out = f(x)
    out.sum().backward()
    assert ember.equal(x.grad, g_ckpt)
    assert not ember.is_autocast_enabled("cpu")
