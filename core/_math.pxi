# The rest of the elementwise math the kernel ABI names (abs, log, sqrt, trig, sigmoid,
# maximum, minimum, pow): each an Op on the shared unary/binary paths of _elementwise.pxi.
# Public names that would shadow Python builtins inside this module (abs, pow) are
# defined with a leading underscore and re-exported under their PyTorch names.

cdef Op op_abs = Op("abs", "abs(Tensor self) -> Tensor", FAMILY_UNARY, EMBER_UNARY_ABS,
                    _rules.elementwise)
cdef Op op_log = Op("log", "log(Tensor self) -> Tensor", FAMILY_UNARY, EMBER_UNARY_LOG,
                    _rules.elementwise)
cdef Op op_sqrt = Op("sqrt", "sqrt(Tensor self) -> Tensor", FAMILY_UNARY, EMBER_UNARY_SQRT,
                     _rules.elementwise)
cdef Op op_sin = Op("sin", "sin(Tensor self) -> Tensor", FAMILY_UNARY, EMBER_UNARY_SIN,
                    _rules.elementwise)
cdef Op op_cos = Op("cos", "cos(Tensor self) -> Tensor", FAMILY_UNARY, EMBER_UNARY_COS,
                    _rules.elementwise)
cdef Op op_tanh = Op("tanh", "tanh(Tensor self) -> Tensor", FAMILY_UNARY, EMBER_UNARY_TANH,
                     _rules.elementwise)
cdef Op op_sigmoid = Op("sigmoid", "sigmoid(Tensor self) -> Tensor", FAMILY_UNARY,
                        EMBER_UNARY_SIGMOID, _rules.elementwise)
cdef Op op_reciprocal = Op("reciprocal", "reciprocal(Tensor self) -> Tensor", FAMILY_UNARY,
                           EMBER_UNARY_RECIPROCAL, _rules.elementwise)
cdef Op op_square = Op("square", "square(Tensor self) -> Tensor", FAMILY_UNARY,
                       EMBER_UNARY_SQUARE, _rules.elementwise)
cdef Op op_maximum = Op("maximum", "maximum(Tensor self, Tensor other) -> Tensor",
                        FAMILY_BINARY, EMBER_BINARY_MAXIMUM, _rules.elementwise)
cdef Op op_minimum = Op("minimum", "minimum(Tensor self, Tensor other) -> Tensor",
                        FAMILY_BINARY, EMBER_BINARY_MINIMUM, _rules.elementwise)
cdef Op op_pow = Op("pow", "pow(Tensor self, Tensor exponent) -> Tensor", FAMILY_BINARY,
                    EMBER_BINARY_POW, _rules.elementwise)


cdef object unary_function(Op op):
    """The public function of a unary op: ``name(input, *, out=None)``."""
    def fn(input, *, out=None):
        return unary_op(op, as_tensor_arg(input, op.name, "input"), out)
    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"{op.name}(input, *, out=None): elementwise, as torch.{op.name}."
    return fn


_abs = unary_function(op_abs)
log = unary_function(op_log)
sqrt = unary_function(op_sqrt)
sin = unary_function(op_sin)
cos = unary_function(op_cos)
tanh = unary_function(op_tanh)
sigmoid = unary_function(op_sigmoid)
reciprocal = unary_function(op_reciprocal)
square = unary_function(op_square)
UNARY_METHODS = ("abs", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "reciprocal",
                 "square")


def maximum(input, other, *, out=None):
    """Elementwise maximum (NaN propagates), with broadcasting and type promotion."""
    return binary_op(op_maximum, as_tensor_arg(input, "maximum", "input"),
                     as_tensor_arg(other, "maximum", "other"), 1, out)


def minimum(input, other, *, out=None):
    """Elementwise minimum (NaN propagates), with broadcasting and type promotion."""
    return binary_op(op_minimum, as_tensor_arg(input, "minimum", "input"),
                     as_tensor_arg(other, "minimum", "other"), 1, out)


def _pow(input, exponent, *, out=None):
    """input ** exponent; either may be a Python number."""
    return binary_op(op_pow, input, exponent, 1, out)


def _unary_method(Op op):
    def method(self):
        return unary_op(op, self, None)

    def method_(self):
        return unary_op(op, self, self)
    method.__name__, method_.__name__ = op.name, op.name + "_"
    return method, method_


def _math_methods():
    """{name: method} for Tensor: the unary ops above and their in-place forms."""
    out = {}
    for name in UNARY_METHODS:
        out[name], out[name + "_"] = _unary_method(get_op(name))
    return out
