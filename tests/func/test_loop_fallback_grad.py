"""Composites that run sample by sample inside vmap (they read values on the host or write
batched values into a tensor they made) keep the graph of an enclosing grad or jvp: their
per-sample gradients and tangents equal torch.func's (they came out zero)."""
import warnings

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(3)
B = 3


def _cases(lib):
    F = lib.nn.functional
    two = lambda x: x[:4].reshape(2, 2)                                   # noqa: E731
    return {
        "binary_cross_entropy": lambda x: F.binary_cross_entropy(
            lib.sigmoid(x), lib.full_like(x, 0.3)),
        "logcumsumexp": lambda x: lib.logcumsumexp(x, 0) * lib.arange(5.0, dtype=x.dtype),
        "diag": lambda x: lib.diag(x) * 2,
        "diagflat": lambda x: lib.diagflat(x[:3]) * 3,
        "block_diag": lambda x: lib.block_diag(two(x), x[4:].reshape(1, 1)),
        "matrix_exp": lambda x: lib.linalg.matrix_exp(two(x) * 0.5),
        "lstsq": lambda x: lib.linalg.lstsq(two(x) + 3 * lib.eye(2, dtype=x.dtype),
                                            lib.ones(2, 1, dtype=x.dtype)).solution,
        "polar": lambda x: lib.view_as_real(lib.polar(x.abs() + 1, x)),
        "complex": lambda x: lib.view_as_real(lib.complex(x, 2 * x)),
    }


NAMES = list(_cases(ember))


def _run(lib, name, kind, x, t):
    f = _cases(lib)[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "vmap_grad":
            return lib.func.vmap(lib.func.grad(lambda v: (f(v) * f(v)).sum()))(x)
        if kind == "jacrev":
            return lib.func.vmap(lib.func.jacrev(f))(x)
        return lib.func.vmap(lambda v, u: lib.func.jvp(f, (v,), (u,))[1])(x, t)


@pytest.mark.parametrize("kind", ["vmap_grad", "jacrev", "vmap_jvp"])
@pytest.mark.parametrize("name", NAMES)
def test_loop_fallback_keeps_gradients(name, kind):
    x = RNG.uniform(0.2, 0.9, (B, 5))
    t = RNG.standard_normal((B, 5))
    e = _run(ember, name, kind, ember.tensor(x), ember.tensor(t))
    r = _run(torch, name, kind, torch.tensor(x), torch.tensor(t))
    assert tuple(e.shape) == tuple(r.shape)
    assert np.abs(r.numpy()).max() > 0
    np.testing.assert_allclose(e.numpy(), r.numpy(), rtol=1e-6, atol=1e-8)


def test_loop_fallback_twice_differentiated_raises():
    f = _cases(ember)["logcumsumexp"]
    g = ember.func.vmap(ember.func.grad(lambda v: ember.func.grad(lambda u: f(u).sum())(v).sum()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="differentiated once, not twice"):
            g(ember.rand(B, 5, dtype=ember.float64))


def test_plain_vmap_unchanged():
    """Without a grad or tangent the composite runs the plain loop (same values)."""
    x = RNG.standard_normal((B, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = ember.vmap(lambda v: ember.logcumsumexp(v, 0))(ember.tensor(x))
    r = torch.vmap(lambda v: torch.logcumsumexp(v, 0))(torch.tensor(x))
    np.testing.assert_allclose(e.numpy(), r.numpy(), rtol=1e-12)
    assert e.grad_fn is None


@pytest.mark.parametrize("kind", ["vmap", "vmap_grad", "vmap_jvp", "jacfwd", "jacrev",
                                  "hessian"])
def test_matrix_exp_batches_in_one_call(kind):
    """matrix_exp takes the batch as leading dims (no loop, no warning), nested vmaps too,
    and has a forward derivative (the Frechet derivative, exp of a block matrix)."""
    a = RNG.uniform(-0.5, 0.5, (B, 3, 3))
    t = RNG.standard_normal((B, 3, 3))

    def run(lib, x, u):
        me = lib.linalg.matrix_exp
        return {"vmap": lambda: lib.vmap(me)(x),
                "vmap_grad": lambda: lib.vmap(lib.func.grad(lambda m: me(m).sin().sum()))(x),
                "vmap_jvp": lambda: lib.vmap(lambda m, v: lib.func.jvp(me, (m,), (v,))[1])(x, u),
                "jacfwd": lambda: lib.vmap(lib.func.jacfwd(me))(x),
                "jacrev": lambda: lib.vmap(lib.func.jacrev(me))(x),
                "hessian": lambda: lib.func.hessian(lambda m: me(m).sum())(x[0])}[kind]()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        e = run(ember, ember.tensor(a), ember.tensor(t))
    r = run(torch, torch.tensor(a), torch.tensor(t))
    np.testing.assert_allclose(e.numpy(), r.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kind", ["polygamma", "polygamma_poles", "digamma_grad"])
def test_polygamma_batches_without_host_reads(kind):
    """polygamma's shift and pole test read the values: over every sample at once inside
    vmap (they raised BatchedDataAccess, and so did digamma's gradient)."""
    x = RNG.uniform(0.5, 3.0, (B, 4))
    x[1, 2] = -1.0                                      # a pole

    def run(lib):
        if kind == "polygamma":
            return lib.vmap(lambda v: lib.polygamma(2, v.abs() + 0.5))(lib.tensor(x))
        if kind == "polygamma_poles":
            return lib.vmap(lambda v: lib.polygamma(1, v))(lib.tensor(x))
        return lib.vmap(lib.func.grad(lambda v: lib.digamma(v.abs() + 0.5).sum()))(
            lib.tensor(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        e = run(ember)
    if kind == "polygamma_poles":   # torch's float sum misses the poles (1e32, not inf)
        want = np.stack([ember.polygamma(1, ember.tensor(r)).numpy() for r in x])
    else:
        want = run(torch).numpy()
    np.testing.assert_allclose(e.numpy(), want, rtol=1e-8, atol=1e-10)


def test_nanmedian_gradient_per_sample():
    x = RNG.standard_normal((B, 6))
    x[0, 2] = np.nan
    x[1, :3] = 0.25                                     # ties share the gradient
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = ember.vmap(ember.func.grad(ember.nanmedian))(ember.tensor(x))
    r = torch.vmap(torch.func.grad(torch.nanmedian))(torch.tensor(x))
    np.testing.assert_allclose(e.numpy(), r.numpy())
