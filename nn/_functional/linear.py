"""linear and bilinear (torch.nn.functional)."""
from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._errors import _tensor_arg
from ember.core.products import addmm

__all__ = ["bilinear", "linear"]


@composite("linear")
def linear(input, weight, bias=None):
    """input @ weight.T + bias; ``weight`` is (out_features, in_features) or 1-D."""
    _tensor_arg(input, "linear", "input", 1)
    _tensor_arg(weight, "linear", "weight", 2)
    if weight.dim() not in (1, 2):
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{weight.dim()}D")
    if bias is not None:
        _tensor_arg(bias, "linear", "bias", 3)
        if input.dim() == 2 and weight.dim() == 2:     # one BLAS call with the bias folded in
            return addmm(bias, input, weight.t())
        if weight.dim() == 2 and bias.dim() == 1 and input.dim() > 0 and input.is_contiguous():
            # PyTorch's folding of any other contiguous input: addmm over its rows, a view back
            rows = addmm(bias, input.view(-1, input.shape[-1]), weight.t())
            return rows.view(tuple(input.shape[:-1]) + (weight.shape[0],))
    out = _T.matmul(input, weight.t())
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """y_k = input1^T weight[k] input2 + bias[k] over the last dims; weight is
    (out_features, in1_features, in2_features)."""
    _tensor_arg(input1, "bilinear", "input1", 1)
    _tensor_arg(input2, "bilinear", "input2", 2)
    _tensor_arg(weight, "bilinear", "weight", 3)
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} "
                           f"and {input2.dim()}")
    if input1.dim() == 0:
        raise RuntimeError("bilinear(): input dimension must be at least 1")
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D, got {weight.dim()}-D")
    out_f, in1, in2 = weight.shape
    if input1.shape[-1] != in1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {in1}")
    if input2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {in2}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_f):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1] if bias.dim() else 0} but expected {out_f}")
    # (..., in1) @ (in1, out*in2) -> (..., out, in2), then contract in2 with input2
    w = weight.permute(1, 0, 2).reshape(in1, out_f * in2)
    t = _T.matmul(input1, w).reshape(tuple(input1.shape[:-1]) + (out_f, in2))
    out = (t * input2.unsqueeze(-2)).sum(-1)
    return out if bias is None else out + bias
