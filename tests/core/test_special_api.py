"""ember.special's surface against torch.special: every public name, keyword names, dtype
promotion, out=, non-contiguous and empty inputs, argument errors, and the derivatives
(values against torch's autograd, and torch's errors where it has none)."""
import inspect
import re

import numpy as np
import pytest
import torch

import ember

UNARY = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma", "entr",
         "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i0e",
         "i1", "i1e", "log1p", "log_ndtr", "modified_bessel_i0", "modified_bessel_i1",
         "modified_bessel_k0", "modified_bessel_k1", "ndtr", "ndtri", "psi", "round",
         "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "sinc",
         "spherical_bessel_j0"]


def torch_names():
    return sorted(n for n in dir(torch.special) if not n.startswith("_")
                  and callable(getattr(torch.special, n)) and n != "Tensor")


def test_every_name_with_torchs_parameters():
    assert ember.special.__all__ == sorted(ember.special.__all__)
    assert set(torch_names()) == set(ember.special.__all__)
    for name in torch_names():
        doc = getattr(torch.special, name).__doc__.strip().split("\n")[0]
        params = [p.strip().split("=")[0] for p in re.match(r"\w+\((.*)\)", doc)[1].split(",")]
        ours = list(inspect.signature(getattr(ember.special, name)).parameters)
        # (axis and keepdims: NumPy's names, which PyTorch's parser takes undocumented)
        assert [p for p in params if p != "*"] == [
            p for p in ours if p not in ("decimals", "axis", "keepdims")], name


def test_lazy_module_and_top_level_names():
    import importlib
    assert importlib.import_module("ember.special") is ember.special
    x = ember.tensor([0.5, 2.0])
    assert ember.i0(x).allclose(ember.special.i0(x))
    assert ember.igamma(x, x).allclose(ember.special.gammainc(x, x))
    assert ember.igammac(x, x).allclose(ember.special.gammaincc(x, x))


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["int64", "bool", "float16", "float32", "float64"])
def test_unary_dtypes(name, dtype, device):
    base = np.array([[0.0, 0.25, 0.5], [1.0, 0.0, 0.75]])
    e = ember.tensor(base, device=device).to(getattr(ember, dtype))
    t = torch.tensor(base).to(getattr(torch, dtype))
    try:
        want = getattr(torch.special, name)(t)
    except (RuntimeError, NotImplementedError) as err:      # e.g. round of an integer
        with pytest.raises(type(err)):
            getattr(ember.special, name)(e)
        return
    got = getattr(ember.special, name)(e)
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    tol = 2e-3 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(got.cpu().float().numpy(), want.float().numpy(), rtol=tol,
                               atol=tol)


@pytest.mark.parametrize("name", UNARY)
def test_unary_layouts_and_out(name, device):
    base = np.linspace(0.05, 0.95, 12).reshape(3, 4)
    e = ember.tensor(base, device=device)
    t = torch.tensor(base)
    fe, ft = getattr(ember.special, name), getattr(torch.special, name)
    np.testing.assert_allclose(fe(e.t()).cpu().numpy(), ft(t.t()).numpy(), rtol=1e-6)
    empty = fe(ember.empty(0, 3, dtype=ember.float64, device=device))
    assert tuple(empty.shape) == (0, 3)
    out = ember.empty(0, dtype=ember.float64, device=device)
    r = fe(e, out=out)
    assert r is out and tuple(out.shape) == (3, 4)
    np.testing.assert_allclose(out.cpu().numpy(), ft(t).numpy(), rtol=1e-6)


def test_argument_errors():
    with pytest.raises(TypeError, match=r"special_i0e\(\): argument 'input' \(position 1\) "
                                        r"must be Tensor, not float"):
        ember.special.i0e(1.0)
    with pytest.raises(NotImplementedError, match="\"i0e_cpu\" not implemented for "
                                                  "'ComplexFloat'"):
        ember.special.i0e(ember.tensor([1j]))
    with pytest.raises(TypeError, match="special_zeta"):
        ember.special.zeta(1.0, 2.0)
    with pytest.raises(NotImplementedError, match="chebyshev_polynomial_t"):
        ember.special.chebyshev_polynomial_t(ember.tensor([1j]), 2)


def test_binary_promotion_and_broadcasting():
    x = ember.tensor([[1.5], [2.5]])
    q = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)
    r = ember.special.zeta(x, q)
    want = torch.special.zeta(torch.tensor([[1.5], [2.5]]), torch.tensor([1.0, 2, 3],
                                                                         dtype=torch.float64))
    assert r.dtype == ember.float64 and tuple(r.shape) == (2, 3)
    np.testing.assert_allclose(r.numpy(), want.numpy(), rtol=1e-12)
    assert ember.special.zeta(ember.tensor([2, 3]), ember.tensor([3])).dtype == ember.float32
    p = ember.special.legendre_polynomial_p(ember.tensor([1, 2]), 3)
    assert p.dtype == ember.float32 and p.tolist() == [1.0, 17.0]


def grads(name, *values, argnums=(0,), create_graph=False):
    """(ember grads, torch grads) of sum(name(*values)) w.r.t. the listed arguments."""
    ev = [ember.tensor(v, dtype=ember.float64, requires_grad=i in argnums)
          if isinstance(v, list) else v for i, v in enumerate(values)]
    tv = [torch.tensor(v, dtype=torch.float64, requires_grad=i in argnums)
          if isinstance(v, list) else v for i, v in enumerate(values)]
    ge = ember.autograd.grad(getattr(ember.special, name)(*ev).sum(),
                             [ev[i] for i in argnums], create_graph=create_graph)
    gt = torch.autograd.grad(getattr(torch.special, name)(*tv).sum(),
                             [tv[i] for i in argnums], create_graph=create_graph)
    return ge, gt


DERIVATIVES = [
    ("i0", [[-3.0, -0.5, 0.0, 0.7, 25.0]]), ("i0e", [[-3.0, -0.5, 0.7, 25.0]]),
    ("i1", [[-3.0, 0.0, 0.7, 25.0]]), ("i1e", [[-3.0, 0.0, 0.7, 25.0]]),
    ("erfcx", [[-3.0, 0.0, 0.7, 9.0]]), ("log_ndtr", [[-40.0, -2.0, 0.3, 5.0]]),
    ("ndtri", [[1e-10, 0.1, 0.5, 0.9]]), ("ndtr", [[-3.0, 0.5]]),
    ("entr", [[0.1, 0.5, 2.0]]), ("expit", [[-1.0, 3.0]]), ("gammaln", [[0.5, 3.0]]),
    ("psi", [[0.5, 3.0]]), ("sinc", [[0.0, 0.3, 2.5]]), ("log1p", [[0.5, 3.0]]),
]


@pytest.mark.parametrize("name,args", DERIVATIVES, ids=[d[0] for d in DERIVATIVES])
def test_unary_derivatives(name, args):
    (ge,), (gt,) = grads(name, *args)
    # psi' = trigamma: PyTorch's is 3e-10 off (trigamma(1/2) = pi^2/2 exactly)
    rtol = 1e-9 if name == "psi" else 1e-10
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=rtol, atol=1e-300)


def test_binary_derivatives():
    a, x = [0.5, 2.0, 30.0], [0.3, 2.5, 28.0]
    for name in ("gammainc", "gammaincc"):
        (ge,), (gt,) = grads(name, a, x, argnums=(1,))
        np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-10)
    (ge,), (gt,) = grads("zeta", [2.0, 3.5], [1.5, 0.25], argnums=(1,))
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-10)
    ge, gt = grads("xlog1py", [0.0, 2.0, 1.5], [-1.0, 0.5, 3.0], argnums=(0, 1))
    for a, b in zip(ge, gt):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    ge, gt = grads("multigammaln", [3.0, 4.5], 3)
    np.testing.assert_allclose(ge[0].numpy(), gt[0].numpy(), rtol=1e-10)


def test_second_derivatives():
    ge, gt = grads("i0", [-2.0, 0.5, 30.0], create_graph=True)
    xe = ember.tensor([-2.0, 0.5, 30.0], dtype=ember.float64, requires_grad=True)
    xt = torch.tensor([-2.0, 0.5, 30.0], dtype=torch.float64, requires_grad=True)
    (de,) = ember.autograd.grad(ember.special.i0e(xe).sum(), xe, create_graph=True)
    (dt,) = torch.autograd.grad(torch.special.i0e(xt).sum(), xt, create_graph=True)
    (dde,) = ember.autograd.grad(de.sum(), xe)
    (ddt,) = torch.autograd.grad(dt.sum(), xt)
    np.testing.assert_allclose(dde.numpy(), ddt.numpy(), rtol=1e-10)


def test_missing_derivatives_raise_as_torch():
    a = ember.tensor([1.5], requires_grad=True)
    x = ember.tensor([0.5], requires_grad=True)
    r = ember.special.gammainc(a, x)
    assert r.requires_grad and r.grad_fn.name() == "IgammaBackward0"
    with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input' is "
                                                  "not implemented."):
        r.sum().backward()
    with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not "
                                                  "implemented."):
        ember.special.zeta(ember.tensor([2.5], requires_grad=True), 1.0).sum().backward()
    # PyTorch records no graph at all for the Bessel/Airy kernels and the polynomials
    for name in ("bessel_j0", "modified_bessel_k1", "airy_ai", "spherical_bessel_j0"):
        assert not getattr(ember.special, name)(x).requires_grad
    assert not ember.special.hermite_polynomial_h(x, 3).requires_grad


def test_polygamma_takes_an_index_n():
    # an int argument takes anything with __index__ (a 0-d integer tensor, a numpy int);
    # not a bool, a float or a 1-d tensor
    for fn in ("polygamma", "special.polygamma"):
        def call(lib, n):
            f = lib.polygamma if fn == "polygamma" else lib.special.polygamma
            return f(n, lib.tensor([2.0, 0.5]))
        for n in (lambda lib: lib.tensor(1), lambda lib: np.int64(2)):
            assert np.allclose(call(ember, n(ember)).tolist(), call(torch, n(torch)).tolist())
        for n in (lambda lib: lib.tensor([1]), lambda lib: lib.tensor(1.0), lambda lib: 1.0,
                  lambda lib: True):
            for lib in (ember, torch):
                with pytest.raises(TypeError):
                    call(lib, n(lib))
    x = ember.tensor([2.0])
    assert x.polygamma(ember.tensor(1)).allclose(ember.tensor([0.6449341]))
