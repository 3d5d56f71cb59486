"""The engine's checks on what hooks return, and on implicit gradients, as PyTorch's: a
tensor hook may not change a gradient's size or dtype (ember took a [3] gradient for a [2]
leaf), a post-accumulate-grad hook returns None, and a complex output needs an explicit
gradient."""
import pytest
import torch

import ember


@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("hook, error, match", [
    (lambda lib: (lambda g: lib.ones(3)), RuntimeError, "has changed the size of value"),
    (lambda lib: (lambda g: g.double()), RuntimeError, "has changed the type of value"),
    (lambda lib: (lambda g: 3), TypeError, "expected Variable, but hook returned 'int'")])
def test_tensor_hooks_keep_size_and_dtype(leaf, hook, error, match):
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        t = x if leaf else x * 1
        t.register_hook(hook(lib))
        with pytest.raises(error, match=match):
            (t * 2).sum().backward()


def test_a_tensor_hook_may_replace_the_gradient():
    x = ember.ones(2, requires_grad=True)
    x.register_hook(lambda g: g * 3)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


def test_post_accumulate_grad_hook_returns_none():
    for lib in (ember, torch):
        p = lib.ones(2, requires_grad=True)
        p.register_post_accumulate_grad_hook(lambda t: t * 1)
        with pytest.raises(RuntimeError, match="should return None"):
            (p * 2).sum().backward()


def test_complex_output_needs_an_explicit_gradient():
    for lib in (ember, torch):
        z = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="only for real scalar outputs"):
            (z * 1j).sum().backward()


def test_retain_grad_follows_an_in_place_op():
    """The retained gradient is the new version's (ember gave the old one's, 2x here)."""
    got = {}
    for lib in (ember, torch):
        x, w = lib.ones(3, requires_grad=True), lib.tensor([1., 2., 3.])
        y = x * 1
        y.retain_grad()
        y.mul_(2)
        (y * w).sum().backward()
        b = x * 1
        b.retain_grad()
        b[:2].mul_(3)
        (b * w).sum().backward()
        got[lib] = (y.grad.tolist(), b.grad.tolist(), x.grad.tolist())
    assert got[ember] == got[torch]


def test_queue_callback_runs_when_the_pass_ends():
    """Variable._execution_engine.queue_callback (custom data-parallel code uses it): the
    callback runs after every node, .grad filled; outside backward it raises."""
    got = {}
    for lib in (ember, torch):
        engine, log = lib.autograd.Variable._execution_engine, []
        x = lib.ones(2, requires_grad=True)
        y = x * 2

        def hook(g, engine=engine, log=log, x=x):
            engine.queue_callback(lambda: log.append(x.grad.tolist()))
            return g
        y.register_hook(hook)
        y.sum().backward()
        with pytest.raises(RuntimeError, match="only be installed during backward"):
            engine.queue_callback(lambda: None)
        got[lib] = log
    assert got[ember] == got[torch] == [[2.0, 2.0]]
