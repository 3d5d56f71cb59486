"""The factories against PyTorch: core/factories.py (eye, linspace, logspace) and the
Cython ones of core/_factories.pxi (tensor's dtype inference and overflow checks, out=)."""

import re

import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("expr", [
    "F.eye(3)", "F.eye(2, 4)", "F.linspace(0, 1, 5)", "F.linspace(-3, 10, 7)",
    "F.linspace(2, 2, 1)", "F.logspace(0, 2, 3)", "F.linspace(0, 1, 4, dtype=F.float64)",
    # one step is `start`, not `end`
    "F.linspace(0, 10, 1)", "F.linspace(3, -10, 1, dtype=F.int64)", "F.logspace(1, 3, 1)",
])
def test_factories_match_torch(expr, device, oracle):
    oracle.expr_matches(expr, device, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["linspace", "logspace"])
def test_linspace_logspace_honour_requires_grad(name, device):
    t = getattr(ember, name)(0, 1, 3, device=device, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    assert not getattr(ember, name)(0, 1, 3, device=device).requires_grad


@pytest.mark.parametrize("build", [
    # NumPy scalars and arrays inside a list keep their dtype, promoted with the rest
    lambda L: L.tensor([np.float64(2.5)]), lambda L: L.tensor([np.float32(1), 2.5]),
    lambda L: L.tensor([np.int32(1)]), lambda L: L.tensor([np.int32(1), 5]),
    lambda L: L.tensor([np.int32(1), 5.5]), lambda L: L.tensor([np.array([1., 2.])]),
    lambda L: L.tensor([np.array([1., 2.], dtype=np.float32)]),
    lambda L: L.tensor([np.bool_(True), True]), lambda L: L.tensor([True, 2]),
    lambda L: L.tensor([1 + 2j, 3]), lambda L: L.tensor([[], []]),
    # one-element tensors inside a list are numbers
    lambda L: L.tensor([L.tensor([1.]), L.tensor([2.])]),
    lambda L: L.tensor([L.tensor(1., dtype=L.float64), 2.]),
    lambda L: L.tensor([L.tensor([1., 3.]), L.tensor([2., 4.])]),
    # overflow: Python ints past int64, values a given integer dtype cannot hold
    lambda L: L.tensor([2 ** 63]), lambda L: L.tensor([-2 ** 63 - 1]),
    lambda L: L.tensor(2 ** 63), lambda L: L.tensor([2 ** 64 - 1, 0], dtype=L.uint64),
    lambda L: L.tensor([float("inf")], dtype=L.long),
    lambda L: L.tensor([1e30], dtype=L.long),
    lambda L: L.tensor([float("nan")], dtype=L.int32),
    lambda L: L.tensor([300], dtype=L.uint8), lambda L: L.tensor([-1], dtype=L.uint8),
    lambda L: L.tensor([-300], dtype=L.uint8),
    lambda L: L.tensor([2.7, -2.7], dtype=L.long),
])
def test_tensor_infers_dtypes_and_checks_overflow_as_torch(build, oracle):
    assert oracle.outcome(ember, build) == oracle.outcome(torch, build)


@pytest.mark.parametrize("build", [
    lambda L, o: L.arange(3, out=o), lambda L, o: L.zeros(2, 3, out=o),
    lambda L, o: L.ones(2, out=o), lambda L, o: L.full((2,), 3.5, out=o),
    lambda L, o: L.empty(4, out=o).fill_(2), lambda L, o: L.rand(3, out=o).mul(0),
    lambda L, o: L.randn(3, out=o).mul(0), lambda L, o: L.zeros(2, dtype=L.int32, out=o),
    lambda L, o: L.arange(L.tensor(1), L.tensor(2.5), 0.5, out=o),
])
@pytest.mark.parametrize("out_dtype, n", [("float32", 5), ("int64", 0)])
def test_factories_write_out_as_torch(build, out_dtype, n, oracle):
    def run(L):
        o = L.zeros(n, dtype=getattr(L, out_dtype))
        r = build(L, o)
        assert r is o
        return r
    assert oracle.outcome(ember, run) == oracle.outcome(torch, run)


def test_arange_takes_zero_dim_tensor_bounds():
    assert ember.arange(ember.tensor(3.)).tolist() == [0., 1., 2.]


@pytest.mark.parametrize("data", [[1, 2, "a"], [[1], ["x"]], [b"x"], "abc"])
def test_strings_in_tensor_data_raise_torchs_type_error(data):
    with pytest.raises(TypeError) as e:
        ember.tensor(data)
    with pytest.raises(TypeError) as t:
        torch.tensor(data)
    assert str(e.value) == str(t.value)


@pytest.mark.parametrize("build", [
    lambda L: L.linspace(0, 1 + 1j, 3), lambda L: L.linspace(1j, 2, 3),
    lambda L: L.linspace(0, 10 + 10j, 5), lambda L: L.linspace(L.tensor(1j), 2, 3),
    lambda L: L.linspace(L.tensor(1.0), 2 + 1j, 3), lambda L: L.linspace(0, 1 + 1j, 1),
    lambda L: L.logspace(0, 1j, 3), lambda L: L.logspace(1j, 2, 3, base=2),
    lambda L: L.logspace(0, 1j, 4, dtype=L.complex128),
])
@pytest.mark.parametrize("default", ["float32", "float64"])
def test_linspace_logspace_infer_complex_from_the_endpoints(build, default):
    # complex endpoints give the default complex dtype; the imaginary parts are kept
    results = []
    for lib in (ember, torch):
        before = lib.get_default_dtype()
        lib.set_default_dtype(getattr(lib, default))
        try:
            results.append(build(lib))
        finally:
            lib.set_default_dtype(before)
    got, want = results
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    torch.testing.assert_close(torch.from_numpy(got.numpy()), want)


@pytest.mark.parametrize("build", [
    lambda L: L.linspace(0, 1 + 1j, 3, dtype=L.float32),
    lambda L: L.linspace(1j, 2, 3, dtype=L.int64), lambda L: L.linspace(1j, 2, 3, dtype=L.bool),
    lambda L: L.logspace(0, 1j, 3, dtype=L.float64),
])
def test_linspace_logspace_refuse_a_real_dtype_for_complex_endpoints(build):
    with pytest.raises(RuntimeError) as want:
        build(torch)
    with pytest.raises(RuntimeError, match=re.escape(str(want.value))):
        build(ember)


@pytest.mark.parametrize("name", ["empty", "zeros", "ones", "rand", "randn"])
def test_size_as_a_keyword(name):
    """``torch.zeros(size=(2, 3))``: the keyword form (it was ignored, a 0-d result)."""
    for m in (ember, torch):
        assert tuple(getattr(m, name)(size=(2, 3)).shape) == (2, 3)
        assert tuple(getattr(m, name)(size=[4], layout=m.strided, pin_memory=False).shape) == (4,)
        with pytest.raises(TypeError):
            getattr(m, name)(2, size=(2,))
    with pytest.raises(TypeError, match="unexpected keyword argument 'shape'"):
        getattr(ember, name)(shape=(2,))


@pytest.mark.parametrize("call", [
    lambda m, a: a.new_zeros(2, 3, requires_grad=True),
    lambda m, a: a.new_ones((2,), requires_grad=True),
    lambda m, a: a.new_empty(4, requires_grad=True),
    lambda m, a: a.new_full((2,), 7.0, requires_grad=True),
    lambda m, a: a.new_tensor([1.0, 2.0], requires_grad=True),
    lambda m, a: a.new_ones(size=(3,), layout=m.strided, pin_memory=False),
    lambda m, a: a.new_zeros(2, dtype=m.float64, requires_grad=False),
])
def test_new_factories_take_requires_grad_and_keywords(call):
    # requires_grad= was taken and dropped (a leaf without grad, no error)
    a = ember.ones(2, dtype=ember.float16)
    t = torch.ones(2, dtype=torch.float16)
    e, r = call(ember, a), call(torch, t)
    assert (e.requires_grad, e.is_leaf, tuple(e.shape), str(e.dtype).split(".")[1]) == \
        (r.requires_grad, r.is_leaf, tuple(r.shape), str(r.dtype).split(".")[1])


def test_random_like_factories_take_generator_and_requires_grad():
    a = ember.ones(3, 2)
    for fn in (ember.rand_like, ember.randn_like):
        x = fn(a, generator=ember.Generator().manual_seed(4))
        y = fn(a, generator=ember.Generator().manual_seed(4), layout=ember.strided)
        assert np.array_equal(x.numpy(), y.numpy())
    r = ember.randint_like(a, 5, generator=ember.Generator().manual_seed(4), requires_grad=True)
    assert r.requires_grad and r.dtype == ember.float32 and r.shape == (3, 2)
    assert r.detach().ge(0).all() and r.detach().lt(5).all()
    with pytest.raises(RuntimeError, match="floating point"):
        ember.randint(0, 5, (2,), requires_grad=True)


@pytest.mark.parametrize("args,dtype", [
    ((10,), None), ((17, 3, -2), None), ((2 ** 40, 2 ** 40 + 9, 3), None),
    ((-1.5, 2.25, 0.25), None), ((0.0, 1.0, 1 / 3), "float64"), ((5, 1_000_003, 7), None),
    ((1_000_000,), "float64"), ((1_000_000,), "float32"), ((300,), "int8"),
    ((-7, 70, 3), "int32"),
])
def test_arange_values_equal_numpys_on_every_device(args, dtype, device):
    # start + i * step in int64 (wrapping) or double, rounded once: written in place on
    # the CPU device, made on the host elsewhere; the same numbers either way
    got = ember.arange(*args, dtype=getattr(ember, dtype) if dtype else None, device=device)
    kind = np.float64 if any(isinstance(v, float) for v in args) or \
        (dtype or "").startswith("float") else np.int64
    start, step = (0, 1) if len(args) == 1 else (args[0], args[2] if len(args) > 2 else 1)
    n = len(torch.arange(*args))
    want = (kind(start) + np.arange(n, dtype=kind) * kind(step)).astype(
        np.dtype(dtype) if dtype else kind)
    np.testing.assert_array_equal(got.cpu().numpy(), want)


@pytest.mark.parametrize("args", [(0, 1, 5), (-3, 7.5, 11), (2, -5, 100_001), (1, 1, 1),
                                  (0, 10, 0), (-1e2, 1e2, 4097)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "uint8", "int8"])
def test_linspace_from_both_ends_in_double(args, dtype, device):
    got = ember.linspace(*args, dtype=getattr(ember, dtype), device=device).cpu().numpy()
    start, end, steps = args
    if not dtype.startswith("float"):        # PyTorch's integer kernel: endpoints first
        start, end = (np.array(v).astype(np.int64).astype(dtype).item() for v in (start, end))
    i = np.arange(steps, dtype=np.float64)
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    half = 1 if steps == 1 else steps // 2
    want = np.where(i < half, start + step * i, end - step * (steps - 1 - i)).astype(dtype)
    np.testing.assert_array_equal(got, want)
    if not dtype.startswith("float") and abs(start) < 100:
        np.testing.assert_array_equal(
            got, torch.linspace(*args, dtype=getattr(torch, dtype)).numpy())


def test_integer_linspace_refuses_endpoints_out_of_range_as_torch():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="cannot be converted to type int8_t"):
            m.linspace(-1e3, 1e3, 5, dtype=m.int8)
