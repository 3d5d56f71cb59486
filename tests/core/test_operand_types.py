"""Arithmetic dunders with operands of other types, as PyTorch's: an operand the op does
not take gives NotImplemented (Python then tries its reflected method - an fx Proxy's, a
user class's - and else raises its own TypeError), a NumPy array counts as a tensor."""
import numpy as np
import pytest
import torch

import ember

OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
       "/": lambda a, b: a / b, "**": lambda a, b: a ** b, "@": lambda a, b: a @ b}


class Reflects:
    """Answers every reflected arithmetic method with its own name."""
    def __radd__(self, o): return "radd"
    def __rsub__(self, o): return "rsub"
    def __rmul__(self, o): return "rmul"
    def __rtruediv__(self, o): return "rtruediv"
    def __rpow__(self, o): return "rpow"
    def __rmatmul__(self, o): return "rmatmul"


@pytest.mark.parametrize("op", list(OPS))
def test_a_foreign_operand_gets_its_reflected_method(op):
    for m in (torch, ember):
        assert OPS[op](m.ones(3), Reflects()) == OPS[op](torch.ones(3), Reflects())


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("other", [None, "a", [1.0, 2.0, 3.0], (1,), object()],
                         ids=["None", "str", "list", "tuple", "object"])
def test_an_operand_no_one_takes_raises_pythons_type_error(op, other):
    with pytest.raises(TypeError) as t:
        OPS[op](torch.ones(3), other)
    with pytest.raises(TypeError) as e:
        OPS[op](ember.ones(3), other)
    assert str(e.value) == str(t.value)


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("array", [np.arange(1.0, 4.0), np.arange(1, 4), np.float64(2.0),
                                   np.array(2.0, dtype=np.float32), np.ones(3, dtype=bool)],
                         ids=["f64", "i64", "np scalar", "0-d f32", "bool"])
def test_numpy_operands_as_pytorch_leaves_them_to_numpy(op, array):
    """NumPy's promotion (float32 with an int64 array is float64), a tensor back.  With
    the array on the left PyTorch raises NumPy's odd TypeError; ember gives the same
    NumPy result."""
    if op == "@" and np.ndim(array) == 0:
        return
    t, e = OPS[op](torch.ones(3), array), OPS[op](ember.ones(3), array)
    assert isinstance(e, ember.Tensor) == isinstance(t, torch.Tensor)
    assert str(e.dtype)[6:] == str(t.dtype)[6:]
    np.testing.assert_allclose(np.asarray(e), np.asarray(t))
    r = OPS[op](array, ember.ones(3))
    np.testing.assert_allclose(np.asarray(r), OPS[op](array, np.ones(3, np.float32)))


def test_a_tensor_requiring_grad_refuses_a_numpy_operand():
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match="requires grad"):
            m.ones(3, requires_grad=True) + np.ones(3)


def test_errors_between_tensors_keep_their_message():
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool"):
        ember.ones(3).bool() - ember.ones(3).bool()
    with pytest.raises(RuntimeError):
        ember.ones(2, 3) @ ember.ones(2, 3)


def test_fx_traces_a_constant_on_the_left():
    c = ember.arange(1.0, 4.0)
    gm = ember.fx.symbolic_trace(lambda x: (c + x) * c - c / x + c ** x)
    x = ember.arange(2.0, 5.0)
    np.testing.assert_allclose(gm(x).numpy(), ((c + x) * c - c / x + c ** x).numpy())
