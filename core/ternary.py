"""The ternary elementwise ops: lerp and addcmul/addcdiv (with their in-place forms), in
PyTorch's promotion, formulas and errors; composed from primitive ops, so every device has
them, and run as in-place passes over one intermediate when nothing records the call."""
import functools

from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name, promote_types
from ember.core._errors import _tensor_arg
from ember.core._tensor import TensorBase, where
from ember.core.elementwise import _opmath, _out

__all__ = ["addcdiv", "addcmul", "lerp"]


def _common_dtype(*tensors):
    """PyTorch's promotion over several tensors: dimensioned ones rank above 0-d ones."""
    dims = [t.dtype for t in tensors if t.dim()]
    zero = [t.dtype for t in tensors if not t.dim()]
    if not dims or not zero:
        return functools.reduce(promote_types, dims or zero)
    return _T.result_type(_T.empty(0, dtype=functools.reduce(promote_types, dims)),
                          _T.empty((), dtype=functools.reduce(promote_types, zero)))


def _ternary_operands(op, kernel, input, tensor1, tensor2, value):
    """The three tensors in their common dtype, and value as that dtype's kind of number."""
    for x, arg in ((input, "input"), (tensor1, "tensor1"), (tensor2, "tensor2")):
        _tensor_arg(x, op, arg)
    rt = _common_dtype(input, tensor1, tensor2)
    if rt.name == "bool":
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    value = value if rt.is_floating_point or rt.is_complex else int(value)
    return input.to(rt), tensor1.to(rt), tensor2.to(rt), value


_C10_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def lerp(input, end, weight, *, out=None):
    """input + weight * (end - input); ``end`` (and a tensor ``weight``) must have input's
    floating or complex dtype."""
    if _unrecorded_update(input, end, number=weight):
        d = end - input                     # PyTorch's two-sided formula (below), in place
        r = d.mul_(weight).add_(input) if abs(weight) < 0.5 else d.mul_(weight - 1).add_(end)
        return _out(r, out)
    return _out(_lerp(input, end, weight), out)


# --- lerp, addcmul and addcdiv by in-place passes over one intermediate ------------------
# Their composites allocated a tensor per step (4 MB page-faulted fresh for a 1M tensor, most
# of their 3-7x PyTorch's time).  When nothing records the call, the operands share one
# shape and a float32/float64 dtype, and the number argument is a number, they run as a
# product or difference and in-place steps (add_ with alpha is the backend's one-pass
# update): the same operations in the same order, so the same bits.

def _unrecorded_update(self, *others, number):
    if type(number) is not float and type(number) is not int:
        return False
    if not isinstance(self, TensorBase) or self.dtype.name not in ("float32", "float64"):
        return False
    for t in others:
        if not isinstance(t, TensorBase) or t.dtype != self.dtype or t.shape != self.shape:
            return False
    tensors = (self,) + others
    if _ag.is_grad_enabled() and any(t.requires_grad for t in tensors):
        return False                        # autograd names the node (LerpBackward0, ...)
    return _T._plain_operands(*tensors)


def lerp_(self, end, weight):
    """self = lerp(self, end, weight), in place."""
    if _unrecorded_update(self, end, number=weight) and abs(weight) < 0.5:
        return self.add_(end - self, alpha=weight)       # self + weight * (end - self)
    return None


def addcmul_(self, tensor1, tensor2, value=1):
    """self = self + value * tensor1 * tensor2, in place."""
    if _unrecorded_update(self, tensor1, tensor2, number=value):
        return self.add_(tensor1 * tensor2, alpha=value)
    return None


def addcdiv_(self, tensor1, tensor2, value=1):
    """self = self + value * tensor1 / tensor2, in place."""
    if _unrecorded_update(self, tensor1, tensor2, number=value) and \
            tensor1.is_floating_point():
        return self.add_(tensor1 / tensor2, alpha=value)
    return None


def _lerp(input, end, weight):
    _tensor_arg(input, "lerp")
    _tensor_arg(end, "lerp", "end")
    kernel = "lerp_kernel_tensor" if isinstance(weight, TensorBase) else "lerp_kernel_scalar"
    for x, arg in ((end, "end"), (weight, "weight")):
        # a 0-d weight is PyTorch's wrapped number: any dtype, and it joins the promotion
        if isinstance(x, TensorBase) and x.dtype != input.dtype and \
                (arg == "end" or x.dim()):
            got = _C10_NAMES.get(x.dtype.name, x.dtype.name)
            raise RuntimeError(f"expected dtype {_C10_NAMES.get(input.dtype.name)} for "
                               f"`{arg}` but got dtype {got}")
    if isinstance(weight, complex) and not input.is_complex():
        # a number weight converts to input's dtype: no imaginary part fits a real one
        if weight.imag:
            raise RuntimeError(f"value cannot be converted to type "
                               f"{_C10_NAMES.get(_opmath(input.dtype).name)} without "
                               f"overflow")
        weight = weight.real
    rt = _common_dtype(input, end, weight) if isinstance(weight, TensorBase) else input.dtype
    if not rt.is_floating_point and not rt.is_complex:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_T._st_name(rt)}\'')
    if rt != input.dtype or (isinstance(weight, TensorBase) and weight.dtype != rt):
        input, end = input.to(rt), end.to(rt)
        weight = weight.to(rt) if isinstance(weight, TensorBase) else weight
    if _opmath(rt) != rt:                            # torch computes these in float32
        f32 = _dtype_by_name["float32"]
        w = weight.to(f32) if isinstance(weight, TensorBase) else weight
        return _lerp(input.to(f32), end.to(f32), w).to(rt)
    # torch's two-sided formula: from ``end`` for |weight| >= 1/2, so weight 1 gives end
    # exactly (input + 1 * (end - input) loses end when |input| >> |end|)
    diff = end - input
    if not isinstance(weight, TensorBase):
        return input + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)
    return where(weight.abs() < 0.5, input + weight * diff, end - diff * (1 - weight))


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 * tensor2, in the three tensors' promoted dtype."""
    if _unrecorded_update(input, tensor1, tensor2, number=value):
        return _out((tensor1 * tensor2).mul_(value).add_(input), out)
    input, tensor1, tensor2, value = _ternary_operands("addcmul", "addcmul_cpu_out", input,
                                                       tensor1, tensor2, value)
    if _opmath(input.dtype) != input.dtype:      # torch computes these in float32
        # and in its order, (value * tensor1) * tensor2
        return _out((input.float() + value * tensor1.float() * tensor2.float())
                    .to(input.dtype), out)
    return _out(input + value * (tensor1 * tensor2), out)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 / tensor2 (true division)."""
    for x, arg in ((input, "input"), (tensor1, "tensor1"), (tensor2, "tensor2")):
        _tensor_arg(x, "addcdiv", arg)
    if not any(t.is_floating_point() or t.is_complex() for t in (tensor1, tensor2)):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                           "future release addcdiv will perform a true division of tensor1 and "
                           "tensor2. The historic addcdiv behavior can be implemented as "
                           "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
                           "for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs. The future addcdiv behavior is just the latter "
                           "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    if _unrecorded_update(input, tensor1, tensor2, number=value):
        return _out((tensor1 / tensor2).mul_(value).add_(input), out)
    input, tensor1, tensor2, value = _ternary_operands("addcdiv", "addcdiv_cpu_out", input,
                                                       tensor1, tensor2, value)
    if _opmath(input.dtype) != input.dtype:      # torch computes these in float32
        return _out((input.float() + value * tensor1.float() / tensor2.float())
                    .to(input.dtype), out)
    return _out(input + value * (tensor1 / tensor2), out)
