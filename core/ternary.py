"""The ternary elementwise ops: lerp and addcmul/addcdiv (with their in-place forms), in
PyTorch's promotion, formulas and errors: one pass through the backend's `ternary` entry
where it applies, else composed from primitive ops, so every device has them."""
import functools

from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name, promote_types
from ember.core._errors import _tensor_arg
from ember.core._tensor import TensorBase, where
from ember.core.elementwise import _opmath, _out
from ember.core.function import Function

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
    r = _lerp_pass(input, end, weight)
    if r is not None:
        return _out(r, out)
    return _out(_lerp(input, end, weight), out)


# --- one pass through the backend's `ternary` entry (ABI 6.5, core/_ternary.pxi) ---------
# PyTorch's formulas with one fused multiply-add, so the bits are PyTorch's; where the
# entry does not apply (other dtypes, modes, a backend without it) the composites run.
_LERP, _ADDCMUL, _ADDCDIV = 0, 1, 2          # abi.h's EMBER_TERNARY_* codes


def _one_pass(code, input, tensor1, tensor2, number, out=None):
    """The op through the entry (tensor2 None: the number); None where it does not run.
    A call autograd records is a node of PyTorch's name (below) around the same pass."""
    if _ag.is_grad_enabled() and any(isinstance(t, TensorBase) and t.requires_grad
                                     for t in (input, tensor1, tensor2)):
        if out is not None or not _T._ternary_ready(input, tensor1, tensor2):
            return None
        node = _NODES[code] if tensor2 is not None or code != _LERP else _LerpScalar
        return node.apply(input, tensor1, tensor2, number)
    return _T._ternary(code, input, tensor1, tensor2, number, out)


class _Ternary(Function):
    """A recorded lerp/addcmul/addcdiv: the forward is the entry's pass (or, where the
    kernel declines, the composite, unrecorded), the backward PyTorch's formulas in ops."""

    code = None
    saves = ()              # which of (input, tensor1, tensor2) the backward reads

    @classmethod
    def forward(cls, ctx, input, tensor1, tensor2, number):
        ctx.number = number
        operands = (input, tensor1, tensor2)
        ctx.save_for_backward(*(operands[i] for i in cls.saves))
        r = _T._ternary(cls.code, input, tensor1, tensor2, number)
        if r is not None:
            return r
        if cls.code == _LERP:
            return _lerp(input, tensor1, number if tensor2 is None else tensor2)
        return (addcmul if cls.code == _ADDCMUL else addcdiv)(input, tensor1, tensor2,
                                                               value=number)


class _LerpScalar(_Ternary):
    _node_name = "LerpBackward0"
    code = _LERP

    @staticmethod
    def backward(ctx, g):
        w = ctx.number
        return g * (1 - w), g * w, None, None


class _LerpTensor(_Ternary):
    _node_name = "LerpBackward1"
    code = _LERP
    saves = (0, 1, 2)

    @staticmethod
    def backward(ctx, g):
        input, end, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (g * (1 - weight) if need[0] else None, g * weight if need[1] else None,
                g * (end - input) if need[2] else None, None)


class _Addcmul(_Ternary):
    _node_name = "AddcmulBackward0"
    code = _ADDCMUL
    saves = (1, 2)

    @classmethod
    def backward(cls, ctx, g):
        """g for input; for tensor1 and tensor2, g times the derivative of value * t1 * t2
        (addcmul) or value * t1 / t2 (addcdiv) in each."""
        t1, t2 = ctx.saved_tensors
        v, need = ctx.number, ctx.needs_input_grad
        if cls.code == _ADDCMUL:
            d1 = g * (t2 * v) if need[1] else None
            d2 = g * (t1 * v) if need[2] else None
        else:
            d1 = g * (v / t2) if need[1] else None
            d2 = -g * (v * t1 / (t2 * t2)) if need[2] else None
        return g, d1, d2, None


class _Addcdiv(_Addcmul):
    _node_name = "AddcdivBackward0"
    code = _ADDCDIV


_NODES = {_LERP: _LerpTensor, _ADDCMUL: _Addcmul, _ADDCDIV: _Addcdiv}


def _is_number(x):
    return type(x) is float or type(x) is int


def _lerp_pass(input, end, weight, out=None):
    if isinstance(weight, TensorBase):
        return _one_pass(_LERP, input, end, weight, 0.0, out)
    return _one_pass(_LERP, input, end, None, float(weight), out) if _is_number(weight) \
        else None


def _addc_pass(code, input, tensor1, tensor2, value, out=None):
    return _one_pass(code, input, tensor1, tensor2, float(value), out) if _is_number(value) \
        else None


def lerp_(self, end, weight):
    """self = lerp(self, end, weight), in place."""
    return _lerp_pass(self, end, weight, self)


def addcmul_(self, tensor1, tensor2, value=1):
    """self = self + value * tensor1 * tensor2, in place."""
    return _addc_pass(_ADDCMUL, self, tensor1, tensor2, value, self)


def addcdiv_(self, tensor1, tensor2, value=1):
    """self = self + value * tensor1 / tensor2, in place."""
    return _addc_pass(_ADDCDIV, self, tensor1, tensor2, value, self)


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
    r = _addc_pass(_ADDCMUL, input, tensor1, tensor2, value)
    if r is not None:
        return _out(r, out)
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
    r = _addc_pass(_ADDCDIV, input, tensor1, tensor2, value)
    if r is not None:
        return _out(r, out)
    input, tensor1, tensor2, value = _ternary_operands("addcdiv", "addcdiv_cpu_out", input,
                                                       tensor1, tensor2, value)
    if _opmath(input.dtype) != input.dtype:      # torch computes these in float32
        return _out((input.float() + value * tensor1.float() / tensor2.float())
                    .to(input.dtype), out)
    return _out(input + value * (tensor1 / tensor2), out)
