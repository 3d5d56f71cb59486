"""Operands and indices as PyTorch takes them, against torch itself: NumPy arrays in the
comparison and bitwise dunders and in the in-place ones, fill values out of a dtype's
range, scans along a leading dim (contiguous results), several Ellipses, ``range``
indices and Python bools as indices in assignments."""
import warnings

import numpy as np
import pytest
import torch

import ember


def _same(e, t):
    assert type(e).__name__ == type(t).__name__, (e, t)
    if isinstance(t, torch.Tensor):
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert e.tolist() == t.tolist()
    else:
        assert e == t


@pytest.mark.parametrize("expr", ["t == a", "a == t", "t % a", "t // a", "t & a",
                                  "t | a", "t ^ a", "t << a", "t >> a", "t + a", "t * a"])
def test_ndarray_operands_give_tensors(expr):
    a = np.array([3, 1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # torch's __array_wrap__ DeprecationWarning
        want = eval(expr, {"t": torch.tensor([7, 1, 5]), "a": a})
    got = eval(expr, {"t": ember.tensor([7, 1, 5]), "a": a})
    _same(got, want)


@pytest.mark.parametrize("stmt", ["x += a", "x -= a", "x *= a", "x /= a", "x **= a"])
def test_inplace_with_ndarray_falls_back_to_the_operator(stmt):
    """PyTorch's in-place dunders answer NotImplemented for a NumPy array: Python rebinds
    the name to `x op a` (a float64 tensor here), the original tensor is untouched."""
    a = np.array([2.0, 4.0])
    results = []
    for lib in (torch, ember):
        x0 = lib.tensor([1.0, 2.0])
        env = {"x": x0, "a": a}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(stmt, env)
        assert env["x"] is not x0 and x0.tolist() == [1.0, 2.0]
        results.append(env["x"])
    _same(results[1], results[0])
    assert ember.tensor([1.0]).__iadd__("a") is NotImplemented
    with pytest.raises(TypeError):
        ember.tensor([1.0]).add_("a")       # the method itself still refuses


@pytest.mark.parametrize("dtype, value", [
    ("int8", 300), ("int8", -129), ("int8", 127), ("uint8", 256), ("uint8", -1),
    ("uint8", 255), ("uint8", -256), ("int16", 40000), ("int32", 2 ** 31), ("int64", 2 ** 62),
    ("float16", 70000.0), ("float16", 65519.0), ("float16", 65504.0), ("bfloat16", 1e39),
    ("float32", 1e300), ("float32", float("inf")), ("float32", float("nan")),
    ("float64", 1e300), ("bool", 5), ("int8", 3.7), ("int8", 300.5)])
@pytest.mark.parametrize("how", ["fill", "full", "masked_fill", "where"])
def test_fill_values_out_of_range_raise_as_torch(dtype, value, how):
    def run(lib):
        dt = getattr(lib, dtype)
        x = lib.zeros(2, dtype=dt)
        if how == "fill":
            return x.fill_(value)
        if how == "full":
            return lib.full((2,), value, dtype=dt)
        if how == "masked_fill":
            return x.masked_fill(lib.tensor([True, False]), value)
        return lib.where(lib.tensor([True, False]), x, value)

    try:
        want = run(torch)
    except RuntimeError as e:
        assert "without overflow" in str(e)
        with pytest.raises(RuntimeError, match="value cannot be converted to type .* "
                                               "without overflow"):
            run(ember)
        return
    got = run(ember)
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax", "cummin"])
def test_scans_along_a_leading_dim_are_contiguous(op):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) % 5 - 2
    for dim in (0, 1, 2):
        got = getattr(ember.from_numpy(x), op)(dim)
        want = getattr(torch.from_numpy(x), op)(dim)
        g, w = (got.values, want.values) if op in ("cummax", "cummin") else (got, want)
        assert g.is_contiguous() and g.stride() == w.stride()
        np.testing.assert_array_equal(g.view(-1).numpy(), w.view(-1).numpy())
        if op in ("cummax", "cummin"):
            assert got.indices.is_contiguous()
            np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())


@pytest.mark.parametrize("index", ["[..., None, ...]", "[..., ...]", "[..., 0, ...]",
                                   "[0, ..., ...]", "[range(2)]", "[range(2), range(2)]",
                                   "[..., range(1, 3)]"])
def test_several_ellipses_and_range_indices(index):
    want = eval("t" + index, {"t": torch.arange(24).reshape(2, 3, 4)})
    got = eval("t" + index, {"t": ember.arange(24).reshape(2, 3, 4)})
    assert list(got.shape) == list(want.shape) and got.tolist() == want.tolist()


@pytest.mark.parametrize("stmt", ["y[True] = lib.tensor([1, 2, 3])", "y[False] = lib.ones(7)",
                                  "y[True, 1] = 5",
                                  "y[[True, False]] = lib.tensor(-7.9, dtype=lib.float64)",
                                  "y[np.array([True, False])] = lib.tensor(2, dtype=lib.int64)",
                                  "y[True, 1] = lib.tensor(5)"])
def test_python_bool_indices_in_assignments(stmt):
    out = []
    for lib in (torch, ember):
        y = lib.zeros(2, 3)
        try:
            exec(stmt, {"y": y, "lib": lib, "np": np})
            out.append(y.tolist())
        except RuntimeError as e:
            out.append(type(e))
    assert out[0] == out[1]


@pytest.mark.parametrize("expr", [
    "lib.where(lib.tensor([1, 0], dtype=lib.uint8), lib.tensor([1., 2.]), lib.tensor([3., 4.]))",
    "lib.zeros(2).copy_(5)", "lib.zeros(2, dtype=lib.int32).copy_(2.7)",
    "lib.arange(-1.0, 1.0, 0.5, dtype=lib.int32)", "lib.arange(0, 5.5, 1.5, dtype=lib.int16)",
    "lib.arange(0, 5.5, 1.5, dtype=lib.int64)", "lib.arange(-1.0, 1.0, 0.5, dtype=lib.int64)",
    "lib.tensor([True, False]).square()", "lib.relu(lib.tensor([True, False]))",
    "lib.div(lib.ones(2), 2, rounding_mode='bad')", "int(lib.tensor(1 + 1j))",
    "float(lib.tensor(1 + 0j))", "int(lib.tensor(2 + 0j))",
    "lib.tensor([1, 2]).sum(dtype=lib.complex64)", "lib.tensor([1., 2.]).mean(dtype=lib.complex64)",
    "lib.tensor([1, 2]).cumsum(0, dtype=lib.complex128)", "lib.tensor([1 + 1j]).argmax()",
    "lib.tensor([1 + 1j]).amax()"])
def test_more_edges_as_torch(expr):
    out = []
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                r = eval(expr, {"lib": lib})
                out.append(r.tolist() if hasattr(r, "tolist") else r)
            except (RuntimeError, ValueError, TypeError, NotImplementedError) as e:
                out.append(type(e))
    assert out[0] == out[1]
