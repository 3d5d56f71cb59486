"""PyTorch parity of complex arithmetic over float parts (core/complex_ops.py) and of the
composites that refuse complex input: prod and cumprod of complex tensors, sum/mean/prod/
cumsum with a real ``dtype`` of complex input, logical_and/or/xor of complex operands,
division by a complex zero, reciprocal/rsqrt of zero, the refusals of maximum/minimum/
fmax/fmin and max/min, dist with a complex difference, and cat([])'s exception type.  Each
case runs with ember and with torch (``lib``)."""
import math

import pytest
import torch

import ember

INF, NAN = math.inf, math.nan


def _same(oracle, call, rel=1e-6):
    def run(lib):
        env = {"lib": lib, "c": lib.tensor([[1 + 1j, 2, 3j], [3, 1j, 2 - 1j]]),
               "v": lib.tensor([1 + 1j, 2]), "r": lib.tensor([1.0, 2.0]), "INF": INF}
        return eval(call, env)
    got, want = oracle.outcome(ember, run), oracle.outcome(torch, run)
    assert oracle.values_equal(got, want, rel), (got, want)


@pytest.mark.parametrize("call", [
    "c.prod()", "c.prod(0)", "c.prod(1, keepdim=True)", "c.prod(-1)", "c.double().prod(0)",
    "lib.zeros(0, 3, dtype=lib.complex64).prod(0)", "lib.zeros(2, 0, dtype=lib.complex64).prod(1)",
    "lib.tensor(1 + 1j).prod()", "lib.tensor(1 + 1j).prod(0, keepdim=True)", "v.prod(2)",
    "v.prod(dtype=lib.complex128)", "v.prod(dtype=lib.float32)",
    "lib.prod(v, 0, out=lib.empty(0, dtype=lib.complex64))",
    "lib.tensor([1 + 1j] * 37).prod()",
    "c.cumprod(0)", "c.cumprod(1)", "c.cumprod(-1).stride()", "c.cumprod(0).stride()",
    "lib.tensor([1 + 1j, 2, 3j, 1 - 1j, 0.5, 2j, 1, -1]).cumprod(0)",
    "lib.tensor(1 + 1j).cumprod(0)", "lib.zeros(0, dtype=lib.complex64).cumprod(0)",
    "v.cumprod(1)", "v.cumprod(0, dtype=lib.complex128)", "v.cumprod(0, dtype=lib.float64)",
    "lib.tensor([1 + 1j, 2]).cumprod_(0)",
    "v.sum(dtype=lib.float32)", "v.sum(dtype=lib.int64)", "v.mean(dtype=lib.float32)",
    "c.sum(1, dtype=lib.float64)", "v.cumsum(0, dtype=lib.float32)",
    "v.cumsum(0, dtype=lib.complex128)"])
def test_complex_reductions_and_scans(oracle, call):
    _same(oracle, call)


@pytest.mark.parametrize("call", [
    "lib.logical_and(lib.tensor([1j, 0]), lib.tensor([True, True]))",
    "lib.logical_or(lib.tensor([1j, 0, 0]), lib.tensor([0.0, 0.0, 2.0]))",
    "lib.logical_xor(lib.tensor([1j, 0]), lib.tensor([0j, 0j]))",
    "lib.tensor([1j, 0]).logical_and_(lib.tensor([True, True]))",
    "lib.tensor([True, False]).logical_and_(lib.tensor([1j, 0]))",
    "lib.tensor([1j, 0, 1]).logical_xor_(lib.tensor([1j, 0, 0]))",
    "lib.tensor([1j, 0]).logical_and(lib.tensor([[1], [0]]))",
    "lib.logical_and(v, v, out=lib.empty(2, dtype=lib.bool))"])
def test_complex_logical_ops(oracle, call):
    _same(oracle, call)


_SPECIAL = [0j, complex(-0.0, 0.0), complex(0.0, -0.0), 1 + 1j, complex(INF, 0),
            complex(0, INF), complex(NAN, 0), 3 - 4j]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("call", ["x.reciprocal()", "x.rsqrt()", "1 / x", "2.5 / x",
                                  "(1 + 1j) / x", "lib.ones_like(x) * (1 + 1j) / x",
                                  "x / x"])
def test_complex_division_by_zero(oracle, dtype, call):
    def run(lib):
        x = lib.tensor(_SPECIAL, dtype=getattr(lib, dtype))
        return eval(call, {"lib": lib, "x": x})
    got, want = oracle.outcome(ember, run), oracle.outcome(torch, run)
    assert oracle.values_equal(got, want, 1e-6), (got, want)


@pytest.mark.parametrize("call", [
    "lib.maximum(v, v)", "lib.minimum(r, v)", "lib.fmax(v, v)", "lib.fmin(r, v)",
    "lib.max(v)", "lib.max(v, 0)", "lib.min(v, 0)", "v.max(0, keepdim=True)",
    "lib.max(v, v)", "lib.dist(r, lib.tensor([1j, 2]))",
    "lib.dist(r, lib.tensor([1j, 2]), 1)", "lib.dist(v, lib.tensor([1j, 2]), INF)",
    "lib.cat([])", "lib.cat(())"])
def test_refusals_and_complex_distances(oracle, call):
    _same(oracle, call)
