# Special functions on the unary kernel family (abi.h codes ERFINV, LGAMMA, DIGAMMA):
# floating results (integer inputs give the default dtype, as exp does).  polygamma and
# mvlgamma are composites over these (core/special.py).

cdef list _SPECIAL_UNARY = [("erfinv", EMBER_UNARY_ERFINV), ("lgamma", EMBER_UNARY_LGAMMA),
                            ("digamma", EMBER_UNARY_DIGAMMA)]
for _name, _code in _SPECIAL_UNARY:
    Op(_name, f"{_name}(Tensor self) -> Tensor", FAMILY_UNARY, _code, _rules.elementwise)


def _special_functions():
    """{name: public function} for the special-function ops (ember.erfinv, ...)."""
    return {name: unary_function(get_op(name)) for name, _ in _SPECIAL_UNARY}


def _special_methods():
    """{name: method} for Tensor: erfinv/erfinv_, lgamma/lgamma_, digamma/digamma_."""
    out = {}
    for name, _ in _SPECIAL_UNARY:
        out[name], out[name + "_"] = _unary_method(get_op(name))
    return out


# --- derivatives (see _autograd_support.pxi) -------------------------------------------

cdef double _HALF_SQRT_PI = 0.886226925452758


def _d_digamma(ctx, g):
    from ember.core.special import polygamma        # a composite over these ops
    return (g * polygamma(1, ctx.args[0]),)


derive_unary(get_op("erfinv"), lambda ctx, g: (g * _HALF_SQRT_PI * exp(ctx.result.square()),),
             SAVE_RESULT)
derive_unary(get_op("lgamma"), lambda ctx, g: (g * unary_op(get_op("digamma"), ctx.args[0],
                                                            None),), SAVE_INPUTS)
derive_unary(get_op("digamma"), _d_digamma, SAVE_INPUTS)


# --- the exact GELU as one kernel each way (abi.h GELU codes) -----------------------------
# x * Phi(x) forward and g * (Phi(x) + x phi(x)) backward: one pass over the activations
# each way instead of the composite's five and seven (nn.functional.gelu uses them; a
# backend without the codes answers NotImplementedError and the composite runs instead)

cdef Op op_gelu = Op("_gelu", "_gelu(Tensor self) -> Tensor", FAMILY_UNARY, EMBER_UNARY_GELU,
                     _rules.elementwise)
cdef Op op_gelu_backward = Op("_gelu_backward", "_gelu_backward(Tensor grad_output, Tensor "
                              "self) -> Tensor", FAMILY_BINARY, EMBER_BINARY_GELU_BACKWARD,
                              _rules.elementwise)
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
