"""PyTorch parity of core/elementwise.py's composites: ldexp's result dtype and exact
scaling, sinc/hypot/logaddexp of float16 and bfloat16 computed in float32 and rounded once,
clamp/sign/heaviside/copysign/xlogy refusing complex as torch does, complex lerp, addcdiv
and logaddexp, and logcumsumexp's contiguous result.  Each case runs with ember and with
torch (``lib``) and compares the outcome (values, dtype, shape, or the exception type)."""
import math

import pytest
import torch

import ember

INF, NAN = math.inf, math.nan
_DTYPES = ["bool", "uint8", "int16", "int64", "float16", "bfloat16", "float32", "float64",
           "complex64"]


def _same(oracle, fn, rel=0.0):
    got, want = oracle.outcome(ember, fn), oracle.outcome(torch, fn)
    assert oracle.values_equal(got, want, rel), (got, want)


@pytest.mark.parametrize("a", _DTYPES)
@pytest.mark.parametrize("b", _DTYPES[:-1])
@pytest.mark.parametrize("b_dim", [0, 1])
def test_ldexp_dtype_and_values(oracle, a, b, b_dim):
    if (a, b, b_dim) == ("complex64", "float16", 1):
        pytest.skip("torch computes this one in ComplexHalf, a dtype ember does not have")

    def run(lib):
        x = lib.tensor([3, -4, 1]).to(getattr(lib, a))
        e = lib.tensor([2, 1, 1] if b_dim else 2).to(getattr(lib, b))
        return lib.ldexp(x, e)
    _same(oracle, run)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("x,e", [(1e-30, 200), (1e30, -200), (3.0, -25), (1000.0, -30),
                                 (1.0, -140), (0.0, 5000), (INF, -5000), (NAN, 3),
                                 (2.0 ** -1074, 2050), (1.5, -1074), (1e-30, 1100)])
def test_ldexp_scales_exactly(oracle, dtype, x, e):
    # an integer exponent scales without overflowing or rounding on the way
    _same(oracle, lambda lib: lib.ldexp(lib.tensor([x], dtype=getattr(lib, dtype)),
                                        lib.tensor([e])))


def test_ldexp_differentiates():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    ember.ldexp(x, ember.tensor([3, -1])).sum().backward()
    assert x.grad.tolist() == [8.0, 0.5]


_HALF_CASES = {
    "sinc": lambda lib, dt: lib.sinc(lib.tensor([1, -1, 2, 0.5, 3.3, 0], dtype=dt)),
    "hypot": lambda lib, dt: lib.hypot(lib.tensor([5.0, 3.0, 1e-3, 0.3], dtype=dt),
                                       lib.tensor([1.0, 4.0, 7e-4, 0.7], dtype=dt)),
    "logaddexp": lambda lib, dt: lib.logaddexp(lib.tensor([1.0, 2.0, 3.0, -INF], dtype=dt),
                                               lib.tensor([1.0, 1.0, -3.0, -INF], dtype=dt)),
    "logaddexp2": lambda lib, dt: lib.logaddexp2(lib.tensor([1.0, 2.0, 3.0], dtype=dt),
                                                 lib.tensor([1.0, 1.0, -3.0], dtype=dt)),
}


@pytest.mark.parametrize("op", sorted(_HALF_CASES))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_rounds_once(oracle, op, dtype):
    _same(oracle, lambda lib: _HALF_CASES[op](lib, getattr(lib, dtype)))


@pytest.mark.parametrize("call", [
    "lib.clamp(c, 0, 1)", "c.clamp_(0)", "lib.clip(c, 0)", "lib.clamp(r, min=1 + 1j)",
    "lib.clamp(r, max=2 + 0j)", "lib.clamp(i, max=2 + 0j)", "lib.clamp_min(r, 1 + 0j)",
    "lib.clamp_max(c, 1)", "lib.clamp_min(c, c)", "lib.clamp(r, min=lib.tensor(1 + 1j))",
    "r.clamp_(min=1j)", "lib.clamp(r.half(), min=1j)",
    "lib.sign(c)", "lib.heaviside(c, c)", "lib.heaviside(r, c)", "lib.copysign(c, c)",
    "lib.copysign(r, c)", "lib.xlogy(c, c)", "lib.xlogy(2.0, c)"])
def test_complex_refusals(oracle, call):
    def run(lib):
        env = {"lib": lib, "c": lib.tensor([1 + 1j, 2]), "r": lib.tensor([1.0, 3.0]),
               "i": lib.tensor([1, 3])}
        return eval(call, env)
    _same(oracle, run)


@pytest.mark.parametrize("call", [
    "lib.lerp(c, d, 0.8)", "lib.lerp(c, d, 0.8 + 0.1j)", "lib.lerp(c, d, lib.tensor(0.25j))",
    "lib.lerp(c, d, lib.tensor([0.5, 0.75]))", "lib.lerp(c.double(), d, 0.8)",
    "lib.lerp(r, r + 1, lib.tensor(0.5j))", "lib.lerp(r, r + 1, 0.5j)",
    "lib.lerp(r, r + 1, 0.5 + 0j)", "lib.lerp(r.half(), r.half() + 1, 0.5j)",
    "lib.tensor([1 + 1j]).lerp_(lib.tensor([2 + 0j]), 0.75)",
    "lib.addcdiv(i, i, lib.tensor([1j, 2]), value=2)",
    "lib.addcdiv(i, lib.tensor([1j, 2]), i, value=0.5)",
    "lib.addcmul(i, lib.tensor([1j, 2]), i, value=0.5)",
    "lib.logaddexp(c, d)", "lib.logaddexp(r, c)", "lib.logaddexp(c.double(), r)",
    "lib.logaddexp(lib.tensor([1j, 2 + 3j, -1 - 1j]), lib.tensor([1j, 1 - 2j, INF]))",
    "lib.logaddexp2(c, c)"])
def test_complex_composites(oracle, call):
    def run(lib):
        env = {"lib": lib, "c": lib.tensor([1 + 1j, 2]), "d": lib.tensor([2 + 0j, -1j]),
               "r": lib.tensor([1.0, 3.0]), "i": lib.tensor([1, 2]), "INF": INF}
        return eval(call, env)
    _same(oracle, run, rel=1e-6)


@pytest.mark.parametrize("shape,dim", [((2, 3), 0), ((2, 3), 1), ((2, 3, 4), 1),
                                       ((3, 2), -2)])
def test_logcumsumexp_is_contiguous(shape, dim):
    e = ember.arange(math.prod(shape), dtype=ember.float32).reshape(shape).logcumsumexp(dim)
    t = torch.arange(math.prod(shape), dtype=torch.float32).reshape(shape).logcumsumexp(dim)
    assert e.is_contiguous() and e.stride() == t.stride()
    assert e.view(-1).tolist() == pytest.approx(t.view(-1).tolist(), rel=1e-6)


@pytest.mark.parametrize("call", ["lib.positive(lib.tensor([True]))",
                                  "lib.isin(lib.tensor([1j]), lib.tensor([1j]))",
                                  "lib.isin(lib.tensor([1.0]), lib.tensor([1j]))"])
def test_refusals_match_torchs(oracle, call):
    oracle.same_error(call, RuntimeError, lambda lib: {"lib": lib})
