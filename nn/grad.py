"""ember.nn.grad (``torch.nn.grad``): the gradients of a convolution with respect to its
input and its weight, computed by autograd through ember's convolution."""
from ember.core._autograd import set_requires_grad
from ember.nn import functional as F

import ember

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _grad(conv, input, weight, grad_output, stride, padding, dilation, groups, wrt):
    with ember.enable_grad():
        x = set_requires_grad(input.detach(), wrt == "input")
        w = set_requires_grad(weight.detach(), wrt == "weight")
        out = conv(x, w, None, stride, padding, dilation, groups)
        (g,) = ember.autograd.grad(out, x if wrt == "input" else w, grad_output)
    return g


def _input(conv, input_size, weight, grad_output, stride, padding, dilation, groups):
    x = ember.zeros(tuple(input_size), dtype=grad_output.dtype, device=grad_output.device)
    return _grad(conv, x, weight, grad_output, stride, padding, dilation, groups, "input")


def _weight(conv, input, weight_size, grad_output, stride, padding, dilation, groups):
    w = ember.zeros(tuple(weight_size), dtype=input.dtype, device=input.device)
    return _grad(conv, input, w, grad_output, stride, padding, dilation, groups, "weight")


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d with respect to an input of ``input_size``."""
    return _input(F.conv1d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d with respect to a weight of ``weight_size``."""
    return _weight(F.conv1d, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv2d with respect to an input of ``input_size``."""
    return _input(F.conv2d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv2d with respect to a weight of ``weight_size``."""
    return _weight(F.conv2d, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv3d with respect to an input of ``input_size``."""
    return _input(F.conv3d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv3d with respect to a weight of ``weight_size``."""
    return _weight(F.conv3d, input, weight_size, grad_output, stride, padding, dilation, groups)
