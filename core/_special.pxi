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
