"""Inference tensors (inference_mode) and the random in-place fills under autograd, with
PyTorch 2.13's behaviour and messages."""
import pytest

import ember

torch = pytest.importorskip("torch")

SAVE_MSG = "Inference tensors cannot be saved for backward"
INPLACE_MSG = "Inplace update to inference tensor outside InferenceMode is not allowed"
LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."


def both(make):
    """The same construction in ember and torch."""
    return make(ember), make(torch)


def test_is_inference_flags_match_torch():
    for m in (ember, torch):
        normal = m.ones(3)
        with m.inference_mode():
            inf = m.ones(3)
            view_of_normal = normal[1:]
            computed = normal * 2
        assert inf.is_inference() and inf[1:].is_inference() and inf.t().is_inference()
        assert computed.is_inference()
        assert not normal.is_inference() and not view_of_normal.is_inference()
        assert not (inf + 1).is_inference()           # made outside the mode
        assert not inf.clone().is_inference()
        with m.inference_mode(False):
            assert not m.ones(2).is_inference()


def test_inference_tensor_saved_for_backward_raises():
    for m in (ember, torch):
        with m.inference_mode():
            a = m.ones(3)
        w = m.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match=SAVE_MSG):
            a * w                                     # mul saves both inputs
        r = a + w                                     # add saves nothing: allowed
        r.sum().backward()
        assert w.grad.tolist() == [1.0, 1.0, 1.0]
        (a.clone() * w).sum().backward()              # the documented work-around


def test_inplace_on_inference_tensor_outside_mode_raises():
    for m in (ember, torch):
        with m.inference_mode():
            a = m.zeros(3)
        for write in (lambda: a.add_(1), lambda: a.fill_(2), lambda: a.copy_(m.ones(3)),
                      lambda: a[1:].mul_(2), lambda: a.uniform_(),
                      lambda: m.add(m.ones(3), 1, out=a)):
            with pytest.raises(RuntimeError, match=INPLACE_MSG):
                write()
        if m is ember:                                 # refused before writing (torch's
            assert a.tolist() == [0.0, 0.0, 0.0]       # fill_ writes, then raises)
        with m.inference_mode():
            a.fill_(1)
        assert a.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("fill", ["uniform_", "normal_"])
def test_random_fill_on_leaf_requiring_grad_raises(fill):
    for m in (ember, torch):
        x = m.zeros(4, requires_grad=True)
        with pytest.raises(RuntimeError, match=LEAF_MSG):
            getattr(x, fill)()
        with m.no_grad():                              # what nn.init does
            getattr(x, fill)()
        assert x.is_leaf and x.requires_grad


@pytest.mark.parametrize("fill", ["uniform_", "normal_"])
def test_random_fill_cuts_the_history(fill):
    grads = []
    for m in (ember, torch):
        x = m.ones(4, requires_grad=True)
        y = x * 3
        getattr(y, fill)()
        assert y.grad_fn.name() == fill.rstrip("_").capitalize() + "Backward0"
        (y * 2 + x).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [1.0] * 4


@pytest.mark.parametrize("fill", ["uniform_", "normal_", "fill_"])
def test_fill_of_saved_tensor_is_detected(fill):
    for m in (ember, torch):
        x = m.ones(3, requires_grad=True)
        y = x * 2
        z = y * y                                      # saves y
        args = (0.5,) if fill == "fill_" else ()
        getattr(y, fill)(*args)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


def test_random_fill_of_a_view_zeroes_that_region():
    grads = []
    for m in (ember, torch):
        x = m.ones(2, 3, requires_grad=True)
        y = x.clone()
        y[0].uniform_()
        y.sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [[0.0] * 3, [1.0] * 3]


def test_an_inference_tensor_cannot_require_grad_outside_inference_mode():
    with ember.inference_mode():
        y = ember.ones(2)
    with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor "
                                           "outside InferenceMode is not allowed."):
        y.requires_grad_(True)
    y.requires_grad_(False)                       # turning it off is allowed


def test_fill_and_zero_write_expanded_tensors():
    """One value written to elements that share memory is well defined: PyTorch fills an
    expanded tensor (its base gets the value); ops reading the target still refuse it."""
    for m in (ember, torch):
        x = m.zeros(1, 3)
        x.expand(2, 3).fill_(1)
        assert x.tolist() == [[1.0, 1.0, 1.0]]
        x.expand(2, 3).zero_()
        assert x.tolist() == [[0.0, 0.0, 0.0]]
        with pytest.raises(RuntimeError, match="more than one element"):
            x.expand(2, 3).add_(1)
