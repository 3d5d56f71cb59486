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


cdef Op op_eq = Op("eq", "eq(Tensor self, Tensor other) -> Tensor", FAMILY_BINARY,
                   EMBER_BINARY_EQ, _rules.elementwise)
cdef Op op_ne = Op("ne", "ne(Tensor self, Tensor other) -> Tensor", FAMILY_BINARY,
                   EMBER_BINARY_NE, _rules.elementwise)
cdef Op op_lt = Op("lt", "lt(Tensor self, Tensor other) -> Tensor", FAMILY_BINARY,
                   EMBER_BINARY_LT, _rules.elementwise)
cdef Op op_le = Op("le", "le(Tensor self, Tensor other) -> Tensor", FAMILY_BINARY,
                   EMBER_BINARY_LE, _rules.elementwise)
cdef Op op_gt = Op("gt", "gt(Tensor self, Tensor other) -> Tensor", FAMILY_BINARY,
                   EMBER_BINARY_GT, _rules.elementwise)
cdef Op op_ge = Op("ge", "ge(Tensor self, Tensor other) -> Tensor", FAMILY_BINARY,
                   EMBER_BINARY_GE, _rules.elementwise)
cdef Op op_logical_and = Op("logical_and", "logical_and(Tensor self, Tensor other) -> Tensor",
                            FAMILY_BINARY, EMBER_BINARY_LOGICAL_AND, _rules.elementwise)
cdef Op op_logical_or = Op("logical_or", "logical_or(Tensor self, Tensor other) -> Tensor",
                           FAMILY_BINARY, EMBER_BINARY_LOGICAL_OR, _rules.elementwise)
cdef Op op_logical_xor = Op("logical_xor", "logical_xor(Tensor self, Tensor other) -> Tensor",
                            FAMILY_BINARY, EMBER_BINARY_LOGICAL_XOR, _rules.elementwise)


cdef object compare(Op op, object a, object b):
    """A comparison dunder: NotImplemented for operands ember does not know (so that
    `t == None` is False, as in Python and PyTorch)."""
    if not (isinstance(b, TensorBase) or is_scalar(b)) or \
            not (isinstance(a, TensorBase) or is_scalar(a)):
        return NotImplemented
    return binary_op(op, a, b, 1, None)


cdef object logical_op(Op op, TensorBase a, object b, str symbol):
    """~, &, |, ^ on bool tensors (the logical ops); integer bitwise kernels are not part
    of the ABI yet, so integer operands get a clear error."""
    if isinstance(b, TensorBase):
        other_ok = (<TensorBase>b)._dtype.code == EMBER_BOOL
    else:
        other_ok = isinstance(b, bool) or (symbol == "~")
    if a._dtype.code != EMBER_BOOL or not other_ok:
        raise NotImplementedError(f"the `{symbol}` operator is implemented for bool tensors "
                                  "only so far (integer bitwise kernels are not in the ABI yet)")
    return binary_op(op, a, b, 1, None)


cdef object binary_function(Op op):
    """The public function of a binary op: ``name(input, other, *, out=None)``."""
    def fn(input, other, *, out=None):
        return binary_op(op, as_tensor_arg(input, op.name, "input"), other, 1, out)
    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = (f"{op.name}(input, other, *, out=None): elementwise, with broadcasting and "
                  f"type promotion, as torch.{op.name}.")
    return fn


eq = binary_function(op_eq)
ne = binary_function(op_ne)
lt = binary_function(op_lt)
le = binary_function(op_le)
gt = binary_function(op_gt)
ge = binary_function(op_ge)
logical_and = binary_function(op_logical_and)
logical_or = binary_function(op_logical_or)
logical_xor = binary_function(op_logical_xor)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
BINARY_METHODS = ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
                  "logical_xor")


def logical_not(input, *, out=None):
    """True where ``input`` is zero (False, 0, 0.0)."""
    return binary_op(op_eq, as_tensor_arg(input, "logical_not", "input"), 0, 1, out)


def equal(input, other):
    """True if both tensors have the same shape and elements."""
    cdef TensorBase a = as_tensor_arg(input, "equal", "input")
    cdef TensorBase b = as_tensor_arg(other, "equal", "other")
    if a.shape != b.shape:
        return False
    return bool(all_c(binary_op(op_eq, a, b, 1, None), None, False))


cdef object all_c(TensorBase t, object dim, bint keepdim):
    """all(): the minimum of the values as bools (True over an empty range)."""
    cdef TensorBase b = cast_to(t, _dtypes.bool)
    if b.numel_c() == 0 and dim is None:
        return full((), True, device=t._device)
    return reduce_op(op_amin, b, () if dim is None else dim, keepdim, None, None)


cdef object any_c(TensorBase t, object dim, bint keepdim):
    """any(): the maximum of the values as bools (False over an empty range)."""
    cdef TensorBase b = cast_to(t, _dtypes.bool)
    if b.numel_c() == 0 and dim is None:
        return full((), False, device=t._device)
    return reduce_op(op_amax, b, () if dim is None else dim, keepdim, None, None)


def _all(input, dim=None, keepdim=False):
    """True if every element of ``input`` (over ``dim``) is nonzero."""
    return all_c(as_tensor_arg(input, "all", "input"), dim, keepdim)


def _any(input, dim=None, keepdim=False):
    """True if any element of ``input`` (over ``dim``) is nonzero."""
    return any_c(as_tensor_arg(input, "any", "input"), dim, keepdim)


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


def _maximum_scalar(input, other):
    """maximum with a Python number allowed for ``other`` (clamp's lower bound)."""
    return binary_op(op_maximum, input, other, 1, None)


def _minimum_scalar(input, other):
    """minimum with a Python number allowed for ``other`` (clamp's upper bound)."""
    return binary_op(op_minimum, input, other, 1, None)


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


def _binary_method(Op op):
    def method(self, other):
        return binary_op(op, self, other, 1, None)
    method.__name__ = op.name
    return method


def _math_methods():
    """{name: method} for Tensor: the unary ops above with their in-place forms, the
    comparisons and logical ops, all/any."""
    out = {}
    for name in UNARY_METHODS:
        out[name], out[name + "_"] = _unary_method(get_op(name))
    for name in BINARY_METHODS:
        out[name] = _binary_method(get_op(name))
    out["logical_not"] = lambda self: logical_not(self)
    out["all"], out["any"], out["equal"] = _all, _any, equal
    return out
