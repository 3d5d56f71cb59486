"""layer_norm (``torch.layer_norm`` and ``nn.functional.layer_norm``): the core's kernel
behind PyTorch's checks of the parameters' dtypes on the CPU."""
from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _scalar_name

__all__ = ["layer_norm"]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalisation over the last ``len(normalized_shape)`` dims of ``input``, then
    the elementwise affine ``weight`` and ``bias`` (each of shape ``normalized_shape``)."""
    if input.device.type == "cpu":
        _check_cpu_param_dtypes(input, weight, bias)
    return _T.layer_norm(input, normalized_shape, weight, bias, eps)


def _check_cpu_param_dtypes(input, *params):
    """PyTorch's CPU norm kernels take parameters of the input's dtype, or float32 ones for a
    float16/bfloat16 input (its "mixed dtype" mode); anything else raises."""
    given = [p for p in params if p is not None]
    if not given:
        return
    if given[0].dtype != input.dtype:                     # the mixed mode: all float32
        if any(p.dtype != _dtype_by_name["float32"] for p in given):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of "
                               "Float")
        if input.dtype.name not in ("float16", "bfloat16"):
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return
    for p in given[1:]:
        if p.dtype != input.dtype:
            raise RuntimeError(f"expected scalar type {_scalar_name(input)} but found "
                               f"{_scalar_name(p)}")
