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


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.autograd.functional.jacobian(lambda v: v * 2, x, strict=True,
                                                    vectorize=True),
    lambda lib, x: lib.autograd.functional.hessian(lambda v: (v * v).sum(), x, strict=True,
                                                   vectorize=True)])
def test_functional_strict_and_vectorize_refused_together(call):
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="not supported together"):
            call(lib, lib.randn(3))


@pytest.mark.parametrize("api", ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"])
def test_functional_inputs_are_a_tensor_or_a_tuple(api):
    for lib in (ember, torch):
        x = lib.randn(3)
        f = getattr(lib.autograd.functional, api)
        fn = (lambda a: (a * a).sum()) if api in ("hessian", "hvp", "vhp") else (lambda a: a * 2)
        args = ([x],) if api in ("jacobian", "hessian", "vjp") else ([x], [x])
        with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
            f(fn, *args)
