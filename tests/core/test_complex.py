"""complex64/complex128 against PyTorch: dtypes and promotion, creation, repr, NumPy round
trips, real/imag views, casts, arithmetic, reductions, matmul and error messages."""
import warnings

import numpy as np
import pytest
import torch
from ember.core import _dtype

import ember

REAL = ["uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "bool",
        "bfloat16"]
COMPLEX = ["complex64", "complex128"]


def _c(shape, dtype="complex64", seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _check(e, t, tol=1e-5):
    t = t.resolve_conj()
    assert tuple(e.shape) == tuple(t.shape)
    assert e.dtype.name == str(t.dtype)[6:], (e.dtype, t.dtype)
    np.testing.assert_allclose(e.numpy(force=True), t.numpy(), rtol=tol, atol=tol)


# --- dtypes --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", COMPLEX)
def test_dtype_properties_match_torch(name):
    d, t = getattr(ember, name), getattr(torch, name)
    assert d.is_complex is True and d.is_floating_point is False
    assert (d.itemsize, d.is_signed) == (t.itemsize, t.is_signed)
    assert repr(d) == repr(t).replace("torch", "ember")
    assert d.np_dtype == np.dtype(name)
    assert d.to_complex() is d
    assert d.to_real() is {"complex64": ember.float32, "complex128": ember.float64}[name]
    assert d.to_real().to_complex() is d
    assert _dtype.as_dtype(name) is d and _dtype.dtype_from_numpy(np.dtype(name)) is d
    assert ember.float32.to_real() is ember.float32


def test_aliases_and_codes():
    assert ember.cfloat is ember.complex64 and ember.cdouble is ember.complex128
    assert ember.complex64.code == 9 and ember.complex128.code == 10   # c10's ScalarType
    assert _dtype.as_dtype(complex) is ember.complex128
    assert _dtype.as_dtype(np.complex64) is ember.complex64
    assert ember.bfloat16.to_complex() is ember.complex64      # as torch.bfloat16's
    with pytest.raises(NotImplementedError, match="ComplexHalf"):
        ember.float16.to_complex()


def test_promote_types_table_matches_torch():
    for a in REAL + COMPLEX:
        for b in COMPLEX:
            want = str(torch.promote_types(getattr(torch, a), getattr(torch, b)))[6:]
            assert ember.promote_types(getattr(ember, a), getattr(ember, b)).name == want
            assert ember.promote_types(getattr(ember, b), getattr(ember, a)).name == want


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64", "bool", "float32", "float64",
                                   "complex64", "complex128"])
@pytest.mark.parametrize("other", [1j, 2.5, 3, "c64-0d", "c128-0d", "f64-0d"])
def test_result_type_matches_torch(dtype, other):
    e, t = ember.ones(2, dtype=getattr(ember, dtype)), torch.ones(2, dtype=getattr(torch, dtype))
    if isinstance(other, str):
        name = {"c64": "complex64", "c128": "complex128", "f64": "float64"}[other[:-3]]
        oe, ot = ember.tensor(1, dtype=getattr(ember, name)), torch.tensor(1, dtype=getattr(torch, name))
    else:
        oe = ot = other
    assert ember.result_type(e, oe).name == str(torch.result_type(t, ot))[6:]
    assert ember.result_type(oe, e).name == str(torch.result_type(ot, t))[6:]
    assert (e + oe).dtype.name == str((t + ot).dtype)[6:]


def test_default_complex_dtype_follows_default_dtype():
    assert ember.tensor([1j]).dtype is ember.complex64
    assert ember.full((2,), 1 + 1j).dtype is ember.complex64
    old = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor([1j]).dtype is ember.complex128
        assert ember.result_type(ember.ones(2, dtype=ember.int32), 1j) is ember.complex128
        assert repr(ember.tensor([1j])) == "tensor([0.+1.j])"
        assert repr(ember.tensor([1j], dtype=ember.complex64)) == \
            "tensor([0.+1.j], dtype=ember.complex64)"
    finally:
        ember.set_default_dtype(old)


# --- creation, repr, NumPy ----------------------------------------------------------------

@pytest.mark.parametrize("data", [[1 + 2j, 3 - 1j], [[1e10 + 1j, 0.001j]], 1 + 1j,
                                  [1.5 + 2j, -3 - 1j], [0j], [[-0.5j, 2], [3, 4 + 0.25j]],
                                  [[1 + 1j] * 7] * 12, []])
@pytest.mark.parametrize("dtype", [None] + COMPLEX)
def test_creation_and_repr_match_torch(data, dtype):
    e = ember.tensor(data, dtype=None if dtype is None else getattr(ember, dtype))
    t = torch.tensor(data, dtype=None if dtype is None else getattr(torch, dtype))
    if dtype is None and not data:
        e, t = e.to(ember.complex64), t.to(torch.complex64)
    assert repr(e) == repr(t).replace("torch.", "ember.")
    _check(e, t, 0)


def test_factories():
    for name in COMPLEX:
        d, td = getattr(ember, name), getattr(torch, name)
        _check(ember.zeros(2, 3, dtype=d), torch.zeros(2, 3, dtype=td), 0)
        _check(ember.ones(2, dtype=d), torch.ones(2, dtype=td), 0)
        _check(ember.full((3,), 2 - 1j, dtype=d), torch.full((3,), 2 - 1j, dtype=td), 0)
        _check(ember.zeros_like(ember.ones(2), dtype=d), torch.zeros(2, dtype=td), 0)
        assert ember.empty(4, dtype=d).dtype is d
    x = ember.ones(3, dtype=ember.complex64)
    x.fill_(1 - 2j)
    assert x.tolist() == [1 - 2j] * 3
    assert ember.full((2,), 3 + 0j).dtype is ember.complex64


def test_numpy_round_trip_shares_memory():
    a = _c((3, 4), "complex128")
    e = ember.from_numpy(a)
    assert e.dtype is ember.complex128 and e.numpy() is not a
    a[1, 2] = 7 - 7j
    assert e[1, 2].item() == 7 - 7j
    e.numpy()[0, 0] = 5j
    assert a[0, 0] == 5j
    np.testing.assert_array_equal(ember.tensor(a[:, ::2]).numpy(), a[:, ::2])
    assert ember.from_numpy(a[::2]).numpy().tolist() == a[::2].tolist()
    assert np.asarray(ember.tensor([1j])).dtype == np.complex64
    assert complex(ember.tensor(1 + 2j)) == 1 + 2j and ember.tensor([2j]).item() == 2j


def test_complex_and_polar_match_torch():
    re, im = np.random.default_rng(0).standard_normal((2, 3, 4))
    for dt in ("float32", "float64"):
        a, b = re.astype(dt), im.astype(dt)
        _check(ember.complex(ember.tensor(a), ember.tensor(b)),
               torch.complex(torch.tensor(a), torch.tensor(b)), 0)
        _check(ember.polar(ember.tensor(abs(a)), ember.tensor(b)),
               torch.polar(torch.tensor(abs(a)), torch.tensor(b)), 1e-6)
    with pytest.raises(RuntimeError, match="Expected object of scalar type Float but got "
                                           "scalar type Double"):
        ember.complex(ember.ones(2), ember.ones(2, dtype=ember.float64))


# --- views ---------------------------------------------------------------------------------

def test_real_imag_are_views_that_write_through():
    a = _c((3, 4))
    e, t = ember.tensor(a), torch.tensor(a)
    for x in (e, t):
        x.real[0] = 1.5
        x.imag[:, 1] *= 2
        x.imag.add_(1)
    _check(e, t, 0)
    _check(e.real, t.real, 0)
    assert e.real.stride() == t.real.stride() == (8, 2)
    assert e.imag.storage_offset() == t.imag.storage_offset() == 1
    e.real = ember.zeros(3, 4)
    assert (e.real == 0).all()
    r = ember.ones(3)
    assert r.real is r
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with "
                                           "non-complex dtypes."):
        r.imag


def test_view_as_real_and_complex():
    a = _c((2, 3), "complex128")
    e, t = ember.tensor(a), torch.tensor(a)
    er, tr = ember.view_as_real(e), torch.view_as_real(t)
    assert er.stride() == tr.stride() and er.dtype is ember.float64
    _check(er, tr, 0)
    er[0, 0, 1] = 9.0
    assert e[0, 0].item().imag == 9.0
    back = ember.view_as_complex(er)
    assert back.dtype is ember.complex128 and back.data_ptr() == e.data_ptr()
    _check(ember.view_as_complex(er[1:]), torch.view_as_complex(tr[1:]), 0)
    for call in ("view_as_complex(T.ones(3, 3))", "view_as_complex(T.ones(2, 3).t())",
                 "view_as_complex(T.ones(3, dtype=T.int32))",
                 "view_as_complex(T.ones(4, 2)[1:3, :1].expand(2, 2))",
                 "view_as_real(T.ones(3))"):
        with pytest.raises(RuntimeError) as got:
            eval(call, {"view_as_complex": ember.view_as_complex,
                        "view_as_real": ember.view_as_real, "T": ember})
        with pytest.raises(RuntimeError) as want:
            eval(call, {"view_as_complex": torch.view_as_complex,
                        "view_as_real": torch.view_as_real, "T": torch})
        assert str(got.value) == str(want.value)


def test_shape_ops_copies_and_casts():
    a = _c((3, 4))
    e, t = ember.tensor(a), torch.tensor(a)
    for f in (lambda x: x.t(), lambda x: x[1:, ::2], lambda x: x.reshape(2, 6),
              lambda x: x.view(4, 3), lambda x: x[:, 1], lambda x: x.unsqueeze(0).expand(2, 3, 4),
              lambda x: x.t().contiguous(), lambda x: x.clone(), lambda x: x.flip(0),
              lambda x: x[[0, 2]], lambda x: ember.cat([x, x]) if isinstance(x, ember.Tensor)
              else torch.cat([x, x])):
        _check(f(e), f(t), 0)
    for src in ("float32", "float64", "int64", "bool"):
        x = np.arange(4).astype(src)
        for dst in COMPLEX:
            _check(ember.tensor(x).to(getattr(ember, dst)),
                   torch.tensor(x).to(getattr(torch, dst)), 0)
    _check(e.to(ember.complex128), t.to(torch.complex128), 1e-7)
    _check(e.cdouble(), t.cdouble(), 1e-7)
    with pytest.warns(UserWarning, match="Casting complex values to real discards"):
        _check(e.to(ember.float32), t.real.contiguous(), 0)
    z = ember.zeros(3, 4, dtype=ember.complex128)
    z.copy_(e)
    _check(z, t.to(torch.complex128), 1e-7)
    z[0] = 1 + 1j
    assert z[0, 3].item() == 1 + 1j


def test_gathers_and_scatters_move_pairs():
    a = _c((3, 4), "complex128")
    e, t = ember.tensor(a), torch.tensor(a)
    idx = [[0, 2], [1, 1], [3, 0]]
    _check(e[[0, 2]], t[[0, 2]], 0)
    _check(e[:, [3, 1]], t[:, [3, 1]], 0)
    _check(e[e.real > 0], t[t.real > 0], 0)
    _check(e.t()[[1, 0]], t.t()[[1, 0]], 0)
    _check(ember.gather(e, 1, ember.tensor(idx)), torch.gather(t, 1, torch.tensor(idx)), 0)
    _check(ember.index_select(e, 0, ember.tensor([2, 0])),
           torch.index_select(t, 0, torch.tensor([2, 0])), 0)
    _check(ember.zeros(3, 4, dtype=ember.complex128).scatter_add(1, ember.tensor(idx), e[:, :2]),
           torch.zeros(3, 4, dtype=torch.complex128).scatter_add(1, torch.tensor(idx), t[:, :2]),
           0)
    e2, t2 = e.clone(), t.clone()
    e2[[0, 2]] = e[[1, 1]]
    t2[[0, 2]] = t[[1, 1]]
    _check(e2, t2, 0)
    with pytest.raises(NotImplementedError, match="ComplexDouble"):
        ember.ones(3, dtype=ember.complex128).scatter_reduce(
            0, ember.tensor([0, 0, 1]), e[0, :3], "prod")


def test_pickle_and_tolist():
    import pickle
    e = ember.tensor([[1 + 2j, -3j]], dtype=ember.complex128)
    back = pickle.loads(pickle.dumps(e))
    assert back.dtype is ember.complex128 and back.tolist() == [[1 + 2j, -3j]]


# --- arithmetic ----------------------------------------------------------------------------

BINARY = {"add": lambda m, x, y: m.add(x, y), "sub": lambda m, x, y: m.sub(x, y),
          "mul": lambda m, x, y: m.mul(x, y), "div": lambda m, x, y: m.div(x, y),
          "alpha": lambda m, x, y: m.add(x, y, alpha=2 - 1j),
          "pow": lambda m, x, y: m.pow(x, y)}


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("other", ["complex", "complex-bcast", "float32", "float64", "int64",
                                   1.5 - 2j, 2.0, 3, 0.5j])
def test_binary_ops_match_torch(op, dtype, other):
    a = _c((3, 4), dtype)
    e, t = ember.tensor(a), torch.tensor(a)
    if other == "complex":
        b = _c((3, 4), dtype, 1)
    elif other == "complex-bcast":
        b = _c((4,), dtype, 2)
    elif isinstance(other, str):
        b = (np.random.default_rng(3).standard_normal((3, 1)) * 3).astype(other)
    else:
        b = None
    eb, tb = (other, other) if b is None else (ember.tensor(b), torch.tensor(b))
    tol = 1e-4 if dtype == "complex64" else 1e-10
    _check(BINARY[op](ember, e, eb), BINARY[op](torch, t, tb), tol)
    if op != "alpha":
        _check(BINARY[op](ember, eb, e) if b is not None or op != "pow" else e,
               BINARY[op](torch, tb, t) if b is not None or op != "pow" else t, tol)


def test_operators_in_place_and_out():
    a, b = _c((2, 3)), _c((2, 3), seed=1)
    e, t = ember.tensor(a), torch.tensor(a)
    eb, tb = ember.tensor(b), torch.tensor(b)
    _check(e * eb + 1j - eb / (e + 2), t * tb + 1j - tb / (t + 2), 1e-5)
    _check(-e, -t, 0)
    _check(e ** 2, t ** 2, 1e-5)
    _check(1j * ember.ones(2), 1j * torch.ones(2), 0)
    e2, t2 = e.clone(), t.clone()
    e2 += eb
    t2 += tb
    e2.mul_(1 - 1j)
    t2.mul_(1 - 1j)
    _check(e2, t2, 1e-5)
    out = ember.empty(0, dtype=ember.complex64)
    assert ember.mul(e, eb, out=out) is out
    _check(out, t * tb, 1e-5)
    with pytest.raises(RuntimeError, match="result type ComplexFloat can't be cast to the "
                                           "desired output type Float"):
        ember.ones(2).add_(e[0, :2])
    with pytest.raises(RuntimeError, match="result type ComplexFloat can't be cast"):
        ember.add(e, e, out=ember.empty(2, 3))


UNARY = ["neg", "exp", "log", "sqrt", "abs", "angle", "conj", "reciprocal", "square", "sin",
         "cos", "isreal"]


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("dtype", COMPLEX)
def test_unary_ops_match_torch(op, dtype):
    a = _c((3, 4), dtype)
    a[0, 0], a[0, 1], a[0, 2] = -4 + 0j, 2j, -1 - 0.0j
    e, t = ember.tensor(a), torch.tensor(a)
    tol = 1e-5 if dtype == "complex64" else 1e-12
    _check(getattr(ember, op)(e), getattr(torch, op)(t), tol)
    _check(getattr(e, op)() if op != "isreal" else ember.isreal(e.t()),
           getattr(t, op)() if op != "isreal" else torch.isreal(t.t()), tol)


def test_angle_of_real_matches_torch():
    x = [-2.0, 0.0, 3.0, float("nan"), -0.0]
    _check(ember.angle(ember.tensor(x)), torch.angle(torch.tensor(x)), 0)
    _check(ember.angle(ember.tensor([-1, 2])), torch.angle(torch.tensor([-1, 2])), 1e-7)


def test_conj_is_materialised():
    e = ember.tensor([1 + 2j])
    c = e.conj()
    assert c.item() == 1 - 2j and not c.is_conj() and not ember.is_conj(c)
    assert c.resolve_conj() is c and ember.conj_physical(e).item() == 1 - 2j
    assert ember.is_complex(e) and e.is_complex() and not ember.ones(1).is_complex()
    assert ember.conj(ember.ones(2)).dtype is ember.float32


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, False), (1, True), ((0, 1), True)])
def test_sum_and_mean_match_torch(dtype, dim, keepdim):
    a = _c((3, 5), dtype)
    e, t = ember.tensor(a).t(), torch.tensor(a).t()
    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    _check(e.sum(**kw), t.sum(**kw), 1e-5)
    _check(ember.mean(e, **kw), torch.mean(t, **kw), 1e-5)
    if dtype == "complex64":
        _check(e.sum(dtype=ember.complex128), t.sum(dtype=torch.complex128), 1e-6)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 2)), ((4,), (4, 3)), ((2, 3, 4), (4,)),
                                   ((2, 1, 3, 4), (5, 4, 2)), ((4,), (4,))])
def test_matmul_matches_torch(dtype, sa, sb):
    a, b = _c(sa, dtype), _c(sb, dtype, 1)
    _check(ember.tensor(a) @ ember.tensor(b), torch.tensor(a) @ torch.tensor(b), 1e-5)
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
        ember.tensor(a) @ ember.tensor(b.real.copy())


def test_comparisons_and_closeness():
    a = _c((4,))
    e, t = ember.tensor(a), torch.tensor(a)
    _check(e == e.conj(), t == t.conj(), 0)
    _check(e != e, t != t, 0)
    _check(e == complex(a[1]), t == complex(a[1]), 0)
    assert ember.allclose(e, e + 1e-7j) and not ember.allclose(e, e + 1e-3j)
    _check(ember.isclose(e, e + 1e-3), torch.isclose(t, t + 1e-3), 0)
    ember.testing.assert_close(e, e + 1e-7j)
    with pytest.raises(AssertionError, match="Tensor-likes are not close"):
        ember.testing.assert_close(e, e + 1e-2j)


@pytest.mark.parametrize("call", ["a < a", "a >= 1", "ember.amax(a)", "ember.asin(a)",
                                  "a.cummax(0)"])
def test_unsupported_ops_name_the_dtype(call):
    a = ember.tensor([1 + 1j, 2])
    with pytest.raises((NotImplementedError, RuntimeError), match="ComplexFloat"):
        eval(call, {"ember": ember, "a": a})


def test_lt_error_matches_torch():
    with pytest.raises(NotImplementedError) as want:
        torch.tensor([1j]) < torch.tensor([1j])
    with pytest.raises(NotImplementedError) as got:
        ember.tensor([1j]) < ember.tensor([1j])
    assert str(got.value) == str(want.value)


def test_complex_leaves_require_grad_as_torch():
    z = ember.ones(2, dtype=ember.complex64).requires_grad_()
    assert z.requires_grad and ember.tensor([1 + 2j], requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="floating point and complex"):
        ember.ones(2, dtype=ember.int64).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.ones(2) + 1                      # the real path is untouched


def test_where_and_masked_fill():
    a, b = _c((3, 4)), _c((4,), seed=1)
    e, t = ember.tensor(a), torch.tensor(a)
    eb, tb = ember.tensor(b), torch.tensor(b)
    _check(ember.where(e.real > 0, e, eb), torch.where(t.real > 0, t, tb), 0)
    _check(ember.where(e.imag > 0, e, 2 - 1j), torch.where(t.imag > 0, t, 2 - 1j), 0)
    _check(ember.where(e.imag > 0, 1j, ember.ones(4)), torch.where(t.imag > 0, 1j, torch.ones(4)), 0)
    _check(e.masked_fill(e.real < 0, 3j), t.masked_fill(t.real < 0, 3j), 0)


def test_scans():
    a = _c((3, 4))
    e, t = ember.tensor(a), torch.tensor(a)
    _check(e.cumsum(1), t.cumsum(1), 1e-5)
    _check(ember.cumsum(e, 0, dtype=ember.complex128), torch.cumsum(t, 0, dtype=torch.complex128),
           1e-6)
    with pytest.raises(NotImplementedError, match="ComplexFloat"):
        e.cummax(0)


def test_pow_scalar_and_zero_bases():
    a = np.array([1 + 1j, -2 + 0.5j, 0.3 - 2j, 0], dtype=np.complex128)
    e, t = ember.tensor(a), torch.tensor(a)
    for f in (lambda x: 2 ** x, lambda x: 1j ** x, lambda x: x ** (1 + 1j), lambda x: x ** 0.5,
              lambda x: x ** 3, lambda x: 1 / x, lambda x: x / (0.5 - 2j)):
        _check(f(e), f(t), 1e-12)
    _check(0 ** e[[0, 2]], 0 ** t[[0, 2]], 0)


def test_orderless_ops_refuse_and_bool_isfinite():
    e, t = ember.tensor([[1 + 1j, 0j], [1j, 2]]), torch.tensor([[1 + 1j, 0j], [1j, 2]])
    for call in ("F.sort(x)", "F.topk(x.flatten(), 1)", "F.unique(x)", "F.argsort(x)"):
        with pytest.raises((RuntimeError, NotImplementedError)) as want:
            eval(call, {"F": torch, "x": t})
        with pytest.raises(want.type) as got:
            eval(call, {"F": ember, "x": e})
        assert str(got.value) == str(want.value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _check(e.bool(), t.bool(), 0)
    z = [complex("inf"), 1j, complex(0, float("nan"))]
    _check(ember.isfinite(ember.tensor(z)), torch.isfinite(torch.tensor(z)), 0)


def _rotary(L, xq, freqs):
    """LLaMA's apply_rotary_emb: pairs of the last dim as complex numbers, rotated."""
    xq_ = L.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    return L.view_as_real(xq_ * freqs).flatten(-2).type_as(xq)


def test_rotary_embeddings_differentiate_as_torch():
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((2, 5, 3, 8)).astype(np.float32)
    w0 = rng.standard_normal((2, 5, 3, 8)).astype(np.float32)
    angles = np.outer(np.arange(5), 1.0 / 10000 ** (np.arange(0, 8, 2) / 8))
    grads = []
    for L in (ember, torch):
        x = L.tensor(x0, requires_grad=True)
        freqs = L.polar(L.ones(5, 4), L.tensor(angles, dtype=L.float32)).reshape(1, 5, 1, 4)
        out = _rotary(L, x * 2, freqs)
        (out * L.tensor(w0)).sum().backward()
        grads.append((out.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make", [
    lambda L, x: L.view_as_complex(L.stack([x, x], -1)) * (1 + 2j),
    lambda L, x: x.to(L.complex64) * L.tensor([1 + 1j, 2 - 1j]),
    lambda L, x: x * (1 + 1j) - x])
def test_complex_paths_differentiate_as_torch(make):
    grads = []
    for L in (ember, torch):
        x = L.tensor([1., 2.], requires_grad=True)
        L.view_as_real(make(L, x)).pow(2).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == pytest.approx(grads[1])


@pytest.mark.parametrize("make", [
    lambda L, x: L.complex(x, x), lambda L, x: L.polar(x, x),
    lambda L, x: (x * (1 + 1j)).exp(), lambda L, x: L.fft.fft(x)])
def test_complex_results_of_real_inputs_differentiate_as_torch(make):
    """complex(), polar(), a complex exp and an FFT of real inputs carry the gradient back
    to them, the real part of PyTorch's conjugate-convention gradient."""
    grads = []
    for L in (ember, torch):
        x = L.tensor([1., 2.], requires_grad=True)
        (make(L, x).abs() ** 2).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == pytest.approx(grads[1])


def test_real_and_imag_of_a_complex_result_carry_the_gradient():
    grads = []
    for L in (ember, torch):
        x = L.tensor([1., 2.], requires_grad=True)
        c = x.to(L.complex64) * L.tensor([1 + 2j, 3 - 1j])
        assert c.real.requires_grad and c.imag.requires_grad
        (c.real * 2 + c.imag ** 2).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == pytest.approx(grads[1])
