"""ember.testing.assert_close and make_tensor against torch.testing: the same verdicts and
the same messages (with ember's names)."""
import pytest
import torch
import torch.testing as tt

import ember
import ember.testing as et


def pair(fn):
    """fn(lib) -> (actual, expected) built with lib = torch and lib = ember."""
    return fn(torch), fn(ember)


CASES = [
    lambda L: (L.tensor([1., 2., 3.]), L.tensor([1., 2.5, 3.])),
    lambda L: (L.tensor([1., 2., 3.]), L.tensor([1., 2. + 1e-6, 3.])),
    lambda L: (L.tensor([1, 2, 3]), L.tensor([1, 3, 3])),
    lambda L: (L.tensor([[1., 2.], [3., 4.]], dtype=L.float64),
               L.tensor([[1., 2.], [3., 4.1]], dtype=L.float64)),
    lambda L: (L.tensor([float("nan"), 1.]), L.tensor([float("nan"), 1.])),
    lambda L: (L.ones(2), L.ones(3)),
    lambda L: (L.ones(2), L.ones(2, dtype=L.float64)),
    lambda L: (L.ones(2, dtype=L.bfloat16), L.full((2,), 1.01, dtype=L.bfloat16)),
    lambda L: ([L.ones(2), 3], [L.zeros(2), 3]),
    lambda L: ({"x": [1, L.ones(2)]}, {"x": [1, L.zeros(2)]}),
    lambda L: ({"a": 1}, {"b": 1}),
    lambda L: ([1, 2], [1]),
    lambda L: (1.0, 1.5), lambda L: (1, 2), lambda L: (1, 1.0), lambda L: (1.0, 1.0),
    lambda L: (L.tensor(1.), 1.0), lambda L: ("a", "a"),
]


def outcome(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except Exception as e:   # noqa: BLE001  (the type and text are what we compare)
        return type(e).__name__, str(e).replace("torch.", "ember.").replace("'torch", "'ember")
    return "ok", ""


@pytest.mark.parametrize("case", range(len(CASES)))
def test_same_verdict_and_message(case):
    (ta, te), (ea, ee) = pair(CASES[case])
    assert outcome(et.assert_close, ea, ee) == outcome(tt.assert_close, ta, te)


@pytest.mark.parametrize("kwargs", [dict(rtol=0.2, atol=0.0), dict(equal_nan=True),
                                    dict(check_dtype=False), dict(rtol=1e-3),
                                    dict(msg="custom")])
def test_options(kwargs):
    (ta, te), (ea, ee) = pair(lambda L: (L.tensor([1., float("nan"), 3.]),
                                         L.tensor([1.1, float("nan"), 3.], dtype=L.float64)))
    assert outcome(et.assert_close, ea, ee, **kwargs) == \
        outcome(tt.assert_close, ta, te, **kwargs)


def test_callable_msg_gets_generated_text():
    with pytest.raises(AssertionError, match="^prefix: Tensor-likes are not close"):
        et.assert_close(ember.ones(1), ember.zeros(1), msg=lambda m: "prefix: " + m)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.bfloat16, ember.int64,
                                   ember.uint8, ember.bool])
def test_make_tensor_ranges_and_layout(dtype):
    ember.manual_seed(0)
    t = et.make_tensor(4, 5, dtype=dtype, device="cpu")
    assert t.shape == (4, 5) and t.dtype is dtype
    if dtype is not ember.bool:
        lo = 0 if dtype is ember.uint8 else -9
        assert float(t.min()) >= lo and float(t.max()) <= 9 + (not dtype.is_floating_point)
    n = et.make_tensor((3, 4), dtype=dtype, device="cpu", noncontiguous=True)
    assert not n.is_contiguous() and n.shape == (3, 4)
    if dtype is not ember.bool:
        z = et.make_tensor(50, dtype=dtype, device="cpu", low=-1, high=1, exclude_zero=True)
        assert not bool((z == 0).any())
        assert float(z.min()) >= -1 and float(z.max()) <= 1


def test_make_tensor_errors():
    with pytest.raises(ValueError, match="low"):
        et.make_tensor(2, dtype=ember.float32, device="cpu", low=2, high=1)
    with pytest.raises(ValueError, match="requires_grad"):
        et.make_tensor(2, dtype=ember.int64, device="cpu", requires_grad=True)
    g = et.make_tensor(2, dtype=ember.float64, device="cpu", requires_grad=True)
    assert g.requires_grad and g.is_leaf
