"""autograd.grad(..., is_grads_batched=True): a vector-Jacobian product per row of the
grad_outputs, through vmap, as PyTorch's (it raised NotImplementedError)."""
import pytest
import torch

import ember


def _run(lib):
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    y = x ** 2 * lib.tensor([1., 0.5, 2.])
    jac, = lib.autograd.grad(y, x, lib.eye(3), is_grads_batched=True, retain_graph=True)
    two, = lib.autograd.grad((y, y.sum()), x, (lib.eye(3)[:2], lib.ones(2)),
                             is_grads_batched=True)
    g, = lib.autograd.grad((x * x).sum(), x, create_graph=True)
    hess, = lib.autograd.grad(g, x, lib.eye(3), is_grads_batched=True)
    return [jac.tolist(), two.tolist(), hess.tolist()]


def test_batched_grad_outputs_match_torch():
    assert _run(ember) == _run(torch)


def test_a_row_of_the_wrong_shape_raises():
    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="first dimension of each grad_output"):
            lib.autograd.grad(x * 2, x, lib.eye(2), is_grads_batched=True)
