"""Folding an eval-mode BatchNorm into the convolution or linear layer before it
(``torch.nn.utils.fusion``): y = bn(conv(x)) becomes one conv with rescaled weights."""
import copy

from ember.core import _tensor as _T
from ember.nn.parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _check_eval(module, bn):
    if module.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """(weight, bias) Parameters of the convolution equal to conv followed by batch norm in
    eval mode: weight * gamma / sqrt(var + eps) per output channel (dim 1 of a transposed
    convolution's weight), bias (b - mean) * gamma / sqrt(var + eps) + beta."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = _T.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _T.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _T.zeros_like(bn_rm)
    scale = (bn_rv + bn_eps).rsqrt()
    shape = [1, -1] if transpose else [-1, 1]
    shape += [1] * (conv_w.dim() - 2)
    fused_w = (conv_w * (bn_w * scale).reshape(shape)).to(w_dtype)
    fused_b = ((conv_b - bn_rm) * scale * bn_w + bn_b).to(b_dtype)
    return (Parameter(fused_w, conv_w.requires_grad),
            Parameter(fused_b, conv_b.requires_grad))


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of ``conv`` with ``bn`` (both in eval mode) folded into its parameters."""
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """(weight, bias) Parameters of the Linear equal to linear followed by batch norm."""
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    if linear_b is None:
        linear_b = _T.zeros_like(bn_rm)
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    fused_w = linear_w * scale.unsqueeze(-1).to(w_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).to(b_dtype)
    return (Parameter(fused_w, linear_w.requires_grad),
            Parameter(fused_b, linear_b.requires_grad))


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` with ``bn`` (both in eval mode) folded into its parameters."""
    _check_eval(linear, bn)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(f"To fuse, linear.out_features == bn.num_features or "
                             f"bn.num_features == 1, got linear.out_features="
                             f"{linear.out_features} and bn.num_features={bn.num_features}")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused
