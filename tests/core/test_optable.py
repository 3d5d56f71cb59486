"""The op table (core/optable.py): the C it generates is current, its codes are abi.h's, and
every row is what PyTorch has: the forms it declares exist (and no others do), and its
derivative formula gives PyTorch's gradient over the row's input domain, on contiguous,
strided and empty inputs."""
import numpy as np
import pytest
import torch
from ember.backends._abi import abi_ops
from ember.core import optable, optable_codegen

import ember

ROWS = [(f.name, d) for f in (optable.UNARY, optable.BINARY) for d in f.ops]
FORMED = [(fam, d) for fam, d in ROWS if d.forms]
DERIVED = [(fam, d) for fam, d in ROWS if d.grad is not None]


def test_generated_c_is_current():
    assert optable_codegen.stale() == [], \
        "the op table changed: run python -m ember.core.optable_codegen"


@pytest.mark.parametrize("fam", optable.FAMILIES, ids=lambda f: f.name)
def test_codes_are_the_headers(fam):
    assert abi_ops()[fam.name] == tuple(d.enum.lower() for d in fam.ops)


@pytest.mark.parametrize("fam,d", FORMED, ids=lambda x: getattr(x, "name", x))
def test_forms_are_pytorchs(fam, d):
    for name in (d.name,) + d.aliases:
        have = {"function": hasattr(ember, name), "method": hasattr(ember.Tensor, name),
                "inplace": hasattr(ember.Tensor, name + "_"),
                "inplace_function": hasattr(ember, name + "_")}
        torch_has = {"function": hasattr(torch, name), "method": hasattr(torch.Tensor, name),
                     "inplace": hasattr(torch.Tensor, name + "_"),
                     "inplace_function": hasattr(torch, name + "_")}
        for form in d.forms:
            assert have[form] and torch_has[form], (name, form)
        for form in set(have) - set(d.forms):
            assert not torch_has[form], f"{name}: torch has the {form} form, the row does not"


_DOMAIN = {"any": (-2.0, 2.0), "small": (-1.0, 1.0), "positive": (0.2, 3.0),
           "nonzero": (0.5, 2.0), "unit": (-0.8, 0.8)}


def _inputs(fam, d, rng, shape):
    """One array per input of the op, drawn from the row's domain."""
    domains = (d.domain,) * 2 if isinstance(d.domain, str) else d.domain
    count = 1 if fam == "unary" else 2
    return [rng.uniform(*_DOMAIN[dom], size=shape) for dom in domains[:count]]


@pytest.mark.parametrize("layout", ["contiguous", "strided", "empty"])
@pytest.mark.parametrize("fam,d", DERIVED, ids=lambda x: getattr(x, "name", x))
def test_derivative_formula_is_pytorchs(fam, d, layout):
    rng = np.random.default_rng(abs(hash((d.name, layout))) % 2**32)
    shape = {"contiguous": (3, 4), "strided": (4, 3), "empty": (0, 3)}[layout]
    arrays = _inputs(fam, d, rng, shape)
    w = rng.standard_normal(shape[::-1] if layout == "strided" else shape)

    def grads(lib):
        xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        ins = [x.t() if layout == "strided" else x for x in xs]     # non-contiguous views
        call = getattr(lib, d.op.lstrip("_") if d.op else d.name, None) or \
            getattr(lib.nn.functional, d.name)
        (call(*ins) * lib.tensor(w)).sum().backward()
        return [x.grad.numpy() for x in xs]

    for got, want in zip(grads(ember), grads(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-12, err_msg=d.name)


COMPOSED = [(fam.name, d) for fam in (optable.UNARY, optable.BINARY) for d in fam.ops
            if d.composite]


@pytest.mark.parametrize("fam,d", COMPOSED, ids=lambda x: getattr(x, "name", x))
def test_composite_computes_the_op(fam, d):
    """A row's composite (what a device that declares the kernel unimplemented runs) gives
    the kernel's values on the row's domain, float32 and float64."""
    from ember.core.row_composites import composite_functions
    fn = composite_functions()[(fam, d.code)]
    rng = np.random.default_rng(d.code)
    arrays = _inputs(fam, d, rng, (50,))
    for dt, tol in ((ember.float64, 1e-12), (ember.float32, 2e-6)):
        xs = [ember.tensor(a, dtype=dt) for a in arrays]
        call = getattr(ember, d.op.lstrip("_") if d.op else d.name, None) or \
            getattr(ember.nn.functional, d.name)
        got, want = fn(*xs), call(*xs)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol * 10,
                                   err_msg=d.name)
