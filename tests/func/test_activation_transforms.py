"""The fused activations' backward under jacrev and vmap(vjp): a batch of cotangents is a
vmap wrapper, which the fused kernel cannot read (it raised BatchedDataAccess); the
composite derivative runs instead, with torch.func's values."""
import numpy as np
import pytest
import torch

import ember

ACTS = {"silu": {}, "softplus": {"beta": 2.0}, "elu": {"alpha": 0.7}, "celu": {},
        "leaky_relu": {"negative_slope": 0.1}, "hardtanh": {}, "hardsigmoid": {},
        "hardswish": {}, "mish": {}, "logsigmoid": {}, "hardshrink": {}, "softshrink": {},
        "selu": {}, "relu6": {}}
X = np.random.default_rng(5).uniform(-3, 3, (4, 5))


def _fn(lib, name):
    f = getattr(lib.nn.functional, name)
    return lambda x: f(x, **ACTS[name]) * 1.5


@pytest.mark.parametrize("kind", ["jacrev", "vmap_vjp", "jacobian_vectorize", "hessian"])
@pytest.mark.parametrize("name", list(ACTS))
def test_activation_backward_under_batched_cotangents(name, kind):
    if name == "hardsigmoid" and kind == "hessian":
        pytest.skip("PyTorch has no forward derivative of hardsigmoid_backward")

    def run(lib):
        f, x = _fn(lib, name), lib.tensor(X)
        if kind == "jacrev":
            return lib.func.jacrev(f)(x[0])
        if kind == "vmap_vjp":
            _, vjp = lib.func.vjp(f, x)
            return lib.vmap(vjp)(lib.ones(3, 4, 5, dtype=x.dtype) * 0.5)[0]
        if kind == "jacobian_vectorize":
            return lib.autograd.functional.jacobian(f, x[1], vectorize=True)
        return lib.func.hessian(lambda v: f(v).sum())(x[2])
    np.testing.assert_allclose(run(ember).numpy(), run(torch).numpy(), rtol=1e-10,
                               atol=1e-12)
