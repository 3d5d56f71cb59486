"""ember._foreach_* (ember/_foreach.py) against torch._foreach_*: every name torch has,
values of the out-of-place and in-place forms over each argument form, the in-place forms'
return value, list-length errors, and gradients through the out-of-place forms."""
import numpy as np
import pytest
import torch

import ember

TORCH_NAMES = sorted(n for n in dir(torch) if n.startswith("_foreach_"))
UNARY = ["abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
         "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
         "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"]
SHAPES = [(3,), (2, 4), ()]


def _data(seed=0, low=0.1, high=0.9, shapes=SHAPES):
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, high, s).astype(np.float32) for s in shapes]


def _pair(arrays, requires_grad=False):
    e = [ember.tensor(a.copy(), requires_grad=requires_grad) for a in arrays]
    t = [torch.tensor(a.copy(), requires_grad=requires_grad) for a in arrays]
    return e, t


def _close(ours, theirs, atol=1e-6, rtol=1e-5):
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(o.detach().numpy()), t.detach().numpy(),
                                   atol=atol, rtol=rtol)


def test_ember_has_every_foreach_name_torch_has():
    assert len(TORCH_NAMES) >= 90
    missing = [n for n in TORCH_NAMES if not callable(getattr(ember, n, None))]
    assert missing == []
    assert not hasattr(ember, "_foreach_bogus")


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    e, t = _pair(_data(low=-0.9) if name not in ("log", "log10", "log2", "sqrt", "rsqrt",
                                                   "lgamma") else _data())
    _close(getattr(ember, f"_foreach_{name}")(e), getattr(torch, f"_foreach_{name}")(t))
    r = getattr(ember, f"_foreach_{name}_")(e)
    getattr(torch, f"_foreach_{name}_")(t)
    assert r is e
    _close(e, t)


# (family, second argument as a function of the numpy data) -- every form torch accepts
BINARY_CASES = [
    (op, form)
    for op in ("add", "sub", "mul", "div", "pow", "clamp_max", "clamp_min", "maximum",
               "minimum")
    for form in ("scalar", "scalars", "list")
] + [(op, "tensor") for op in ("add", "mul", "div")]


def _second(form, lib, arrays):
    if form == "scalar":
        return 0.5
    if form == "scalars":
        return [0.25 * (i + 1) for i in range(len(arrays))]
    if form == "tensor":
        return lib.tensor(0.75)
    return [lib.tensor(a) for a in _data(seed=1)]


@pytest.mark.parametrize("op,form", BINARY_CASES)
def test_binary_forms(op, form):
    arrays = _data()
    e, t = _pair(arrays)
    fe, ft = getattr(ember, f"_foreach_{op}"), getattr(torch, f"_foreach_{op}")
    _close(fe(e, _second(form, ember, arrays)), ft(t, _second(form, torch, arrays)))
    fe_, ft_ = getattr(ember, f"_foreach_{op}_"), getattr(torch, f"_foreach_{op}_")
    assert fe_(e, _second(form, ember, arrays)) is e
    ft_(t, _second(form, torch, arrays))
    _close(e, t)


@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("form", ["list", "tensor"])
def test_alpha(op, form):
    if op == "sub" and form == "tensor":
        pytest.skip("torch has no _foreach_sub(tensors, Tensor)")
    arrays = _data()
    e, t = _pair(arrays)
    _close(getattr(ember, f"_foreach_{op}")(e, _second(form, ember, arrays), alpha=-2.5),
           getattr(torch, f"_foreach_{op}")(t, _second(form, torch, arrays), alpha=-2.5))
    getattr(ember, f"_foreach_{op}_")(e, _second(form, ember, arrays), alpha=3)
    getattr(torch, f"_foreach_{op}_")(t, _second(form, torch, arrays), alpha=3)
    _close(e, t)


def test_alpha_with_a_scalar_is_a_type_error():
    e, t = _pair(_data())
    with pytest.raises(TypeError):
        torch._foreach_add(t, 1.0, alpha=2)
    with pytest.raises(TypeError):
        ember._foreach_add(e, 1.0, alpha=2)


def test_pow_with_a_scalar_base():
    e, t = _pair(_data())
    _close(ember._foreach_pow(2.0, e), torch._foreach_pow(2.0, t))


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("form", ["default", "value", "scalars", "tensor"])
def test_pointwise(op, form):
    arrays, a1, a2 = _data(), _data(seed=1), _data(seed=2)
    kw = {"default": lambda lib: {}, "value": lambda lib: {"value": -0.5},
          "scalars": lambda lib: {"scalars": [0.5, 2.0, -1.0]},
          "tensor": lambda lib: {"scalars": lib.tensor([0.5, 2.0, -1.0])}}[form]
    e, t = _pair(arrays)
    e1, t1 = _pair(a1)
    e2, t2 = _pair(a2)
    _close(getattr(ember, f"_foreach_{op}")(e, e1, e2, **kw(ember)),
           getattr(torch, f"_foreach_{op}")(t, t1, t2, **kw(torch)))
    assert getattr(ember, f"_foreach_{op}_")(e, e1, e2, **kw(ember)) is e
    getattr(torch, f"_foreach_{op}_")(t, t1, t2, **kw(torch))
    _close(e, t)
    # positional fourth argument
    _close(getattr(ember, f"_foreach_{op}")(e, e1, e2, 3.0),
           getattr(torch, f"_foreach_{op}")(t, t1, t2, 3.0))


def test_pointwise_packed_scalars_errors():
    e, _ = _pair(_data())
    with pytest.raises(RuntimeError, match="Expected length of scalars to match input of "
                                           "length 3 but got 2"):
        ember._foreach_addcmul(e, e, e, ember.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="dimension 1. Got 2"):
        ember._foreach_addcmul(e, e, e, ember.ones(1, 3))


@pytest.mark.parametrize("form", ["scalar", "scalars", "list"])
def test_lerp(form):
    arrays, ends = _data(), _data(seed=3)
    e, t = _pair(arrays)
    ee, te = _pair(ends)
    w = {"scalar": lambda lib: 0.3, "scalars": lambda lib: [0.1, 0.5, 0.9],
         "list": lambda lib: [lib.tensor(a) for a in _data(seed=4)]}[form]
    _close(ember._foreach_lerp(e, ee, w(ember)), torch._foreach_lerp(t, te, w(torch)))
    assert ember._foreach_lerp_(e, ee, w(ember)) is e
    torch._foreach_lerp_(t, te, w(torch))
    _close(e, t)


@pytest.mark.parametrize("ord", [0, 1, 2, 3, 0.5, float("inf"), -1, float("-inf")])
def test_norm_and_powsum(ord):
    arrays = _data(low=-2, high=2)
    arrays[0][1] = 0.0
    e, t = _pair(arrays)
    _close(ember._foreach_norm(e, ord), torch._foreach_norm(t, ord), rtol=1e-5)
    _close(ember._foreach_powsum(e, ord), torch._foreach_powsum(t, ord), rtol=1e-5)


def test_norm_dtype_and_default():
    e, t = _pair(_data())
    ours, theirs = ember._foreach_norm(e, dtype=ember.float64), \
        torch._foreach_norm(t, dtype=torch.float64)
    assert all(o.dtype == ember.float64 for o in ours)
    _close(ours, theirs)
    _close(ember._foreach_norm(e), torch._foreach_norm(t))
    _close(ember._foreach_powsum(e, 2, dtype=ember.float64),
           torch._foreach_powsum(t, 2, dtype=torch.float64))


def test_max_mm_clone_copy_zero():
    e, t = _pair(_data(low=-3, high=3))
    _close(ember._foreach_max(e), torch._foreach_max(t))
    with pytest.raises(RuntimeError, match="empty tensor"):
        ember._foreach_max([ember.ones(0)])
    a, b = _data(shapes=[(2, 3), (4, 2)]), _data(seed=5, shapes=[(3, 4), (2, 1)])
    (ea, ta), (eb, tb) = _pair(a), _pair(b)
    _close(ember._foreach_mm(ea, eb), torch._foreach_mm(ta, tb), rtol=1e-5)
    clones = ember._foreach_clone(e)
    assert all(c is not x for c, x in zip(clones, e))
    _close(clones, torch._foreach_clone(t))
    src, tsrc = _pair(_data(seed=6))
    assert ember._foreach_copy_(e, src) is e
    torch._foreach_copy_(t, tsrc)
    _close(e, t)
    assert ember._foreach_zero_(e) is e
    assert all(float(x.abs().sum()) == 0.0 for x in e)


def test_in_place_keeps_the_tensors_and_the_container():
    e, _ = _pair(_data())
    ids = [id(x) for x in e]
    tup = tuple(e)
    assert ember._foreach_mul_(tup, 2.0) is tup
    assert [id(x) for x in e] == ids
    assert isinstance(ember._foreach_mul(e, 2.0), tuple)


def test_broadcasting_list_form():
    e, t = [ember.ones(2)], [torch.ones(2)]
    _close(ember._foreach_add(e, [ember.ones(3, 1)]), torch._foreach_add(t, [torch.ones(3, 1)]))


def test_integer_promotion_and_in_place_cast_error():
    e = [ember.ones(2, dtype=ember.int64)]
    t = [torch.ones(2, dtype=torch.int64)]
    _close(ember._foreach_div(e, 2), torch._foreach_div(t, 2))
    assert ember._foreach_add(e, 1.5)[0].dtype == ember.float32
    with pytest.raises(RuntimeError):
        ember._foreach_add_(e, 1.5)


@pytest.mark.parametrize("call,msg", [
    (lambda lib, a: lib._foreach_add(a, a[:1]),
     "Tensor lists must have the same number of tensors, got 3 and 1"),
    (lambda lib, a: lib._foreach_mul_(a, [1.0]),
     "Tensor list must have same number of elements as scalar list."),
    (lambda lib, a: lib._foreach_addcmul(a, a, a[:2]),
     "Tensor lists must have the same number of tensors, got 3 and 2"),
    (lambda lib, a: lib._foreach_lerp(a, a[:1], 0.5),
     "Tensor lists must have the same number of tensors, got 3 and 1"),
    (lambda lib, a: lib._foreach_copy_(a, a[:1]),
     "Tensor lists must have the same number of tensors, got 3 and 1"),
    (lambda lib, a: lib._foreach_exp([]), "Tensor list must have at least one tensor."),
    (lambda lib, a: lib._foreach_add([], []), "Tensor list must have at least one tensor."),
    (lambda lib, a: lib._foreach_norm([]), "Tensor list must have at least one tensor."),
    (lambda lib, a: lib._foreach_add(a, lib.ones(3)), "scalar tensor expected to be 0 dim"),
])
def test_errors_match_torch(call, msg):
    e, t = _pair(_data())
    with pytest.raises(RuntimeError, match=msg.replace(".", r"\.")):
        call(torch, t)
    with pytest.raises(RuntimeError, match=msg.replace(".", r"\.")):
        call(ember, e)


def test_type_errors():
    e, t = _pair(_data())
    for lib, a in ((torch, t), (ember, e)):
        with pytest.raises(TypeError):
            lib._foreach_exp(a[0])
        with pytest.raises(TypeError):
            lib._foreach_add(a, [a[0], 1.0, 2.0])


def test_in_place_on_a_leaf_that_requires_grad_raises():
    e, t = _pair(_data(), requires_grad=True)
    with pytest.raises(RuntimeError):
        torch._foreach_add_(t, 1.0)
    with pytest.raises(RuntimeError):
        ember._foreach_add_(e, 1.0)


GRAD_CASES = [
    ("exp", lambda lib, o: ()),
    ("sqrt", lambda lib, o: ()),
    ("add", lambda lib, o: (o, )),
    ("mul", lambda lib, o: (o,)),
    ("div", lambda lib, o: (o,)),
    ("pow", lambda lib, o: (2.5,)),
    ("maximum", lambda lib, o: (o,)),
    ("addcmul", lambda lib, o: (o, o, 0.5)),
    ("lerp", lambda lib, o: (o, 0.25)),
    ("norm", lambda lib, o: ()),
]


@pytest.mark.parametrize("name,extra", GRAD_CASES)
def test_gradients_through_out_of_place_forms(name, extra):
    arrays, others = _data(), _data(seed=7)
    e, t = _pair(arrays, requires_grad=True)
    eo, to = _pair(others, requires_grad=True)
    outs_e = getattr(ember, f"_foreach_{name}")(e, *extra(ember, eo))
    outs_t = getattr(torch, f"_foreach_{name}")(t, *extra(torch, to))
    sum(o.sum() for o in outs_e).backward()
    sum(o.sum() for o in outs_t).backward()
    _close([x.grad for x in e], [x.grad for x in t], rtol=1e-4)
    if extra(torch, to) and isinstance(extra(torch, to)[0], list):
        _close([x.grad for x in eo], [x.grad for x in to], rtol=1e-4)
