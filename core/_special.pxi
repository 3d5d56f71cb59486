# Special functions (erfinv, lgamma, digamma) are rows of the op table (core/optable.py):
# their Ops, functions, methods and derivatives come from it (_math.pxi); polygamma and
# mvlgamma are composites over them (core/special.py).

# --- the exact GELU as one kernel each way (abi.h GELU codes) -----------------------------
# x * Phi(x) forward and g * (Phi(x) + x phi(x)) backward: one pass over the activations
# each way instead of the composite's five and seven (nn.functional.gelu uses them; a
# backend without the codes answers NotImplementedError and the composite runs instead)

cdef Op op_gelu = get_op("_gelu")
cdef Op op_gelu_backward = get_op("_gelu_backward")
cdef double _INV_SQRT_2PI = 0.3989422804014327


def _gelu(input):
    """The exact GELU of a floating tensor, x * Phi(x)."""
    return unary_op(op_gelu, as_tensor_arg(input, "gelu", "input"), None)


def _gelu_backward(grad_output, input):
    """grad_output * GELU'(input)."""
    return binary_op(op_gelu_backward, grad_output, input, 1, None)


def _d_gelu_backward(ctx, gg):
    # d/dg = GELU'(x); d/dx = g * GELU''(x) = g * phi(x) * (2 - x^2)
    g, x = ctx.args
    need = ctx.needs_input_grad
    gg_g = binary_op(op_gelu_backward, gg, x, 1, None) if need[0] else None
    gg_x = (gg * g * exp(x.square() * -0.5) * _INV_SQRT_2PI * (2 - x.square())
            if len(need) > 1 and need[1] else None)
    return gg_g, gg_x


derive_unary(op_gelu, lambda ctx, g: (binary_op(op_gelu_backward, g, ctx.args[0], 1, None),),
             SAVE_INPUTS)
derive_binary(op_gelu_backward, _d_gelu_backward, SAVE_INPUTS)
