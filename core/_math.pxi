# The rest of the elementwise math the kernel ABI names (abs, log, sqrt, trig, sigmoid,
# maximum, minimum, pow, comparisons): Ops of the op table (core/optable.py, made in
# _elementwise.pxi) on the shared unary/binary paths.  The table's simple rows become public
# functions (`table_functions`), Tensor methods with in-place forms (`_math_methods`) and
# derivatives (`compiled_formula`); the rest are written here.  Public names that would
# shadow Python builtins inside this module (abs, pow) have a leading underscore and are
# re-exported under their PyTorch names.

cdef Op op_log = get_op("log")
cdef Op op_sqrt = get_op("sqrt")
cdef Op op_sin = get_op("sin")
cdef Op op_cos = get_op("cos")
cdef Op op_tanh = get_op("tanh")
cdef Op op_sigmoid = get_op("sigmoid")
cdef Op op_reciprocal = get_op("reciprocal")
cdef Op op_square = get_op("square")
cdef Op op_round = get_op("round")
cdef Op op_bitwise_and = get_op("bitwise_and")
cdef Op op_bitwise_or = get_op("bitwise_or")
cdef Op op_bitwise_xor = get_op("bitwise_xor")
cdef Op op_bitwise_not = get_op("bitwise_not")
cdef Op op_shift_left = get_op("bitwise_left_shift")
cdef Op op_shift_right = get_op("bitwise_right_shift")
cdef Op op_maximum = get_op("maximum")
cdef Op op_minimum = get_op("minimum")
cdef Op op_logical_or = get_op("logical_or")
# the rows whose function and methods come from the table
cdef tuple SIMPLE_UNARY = tuple(d for d in _optable.UNARY.ops if "function" in d.forms)
cdef tuple SIMPLE_BINARY = tuple(d for d in _optable.BINARY.ops if "function" in d.forms)


cdef object binary_function(Op op, bint scalar_self=False):
    """The public function of a binary op: ``name(input, other, *, out=None)``;
    ``scalar_self``: ``input`` may be a Python number when ``other`` is a tensor (PyTorch's
    Scalar_Tensor overloads: ``remainder(5, t)``)."""
    def fn(input, other, *, out=None):
        if not (scalar_self and isinstance(input, (int, float)) and
                isinstance(other, TensorBase)):
            input = as_tensor_arg(input, op.name, "input")
        return binary_op(op, input, other, 1, out)
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


def logical_not(input, *, out=None):
    """True where ``input`` is zero (False, 0, 0.0)."""
    cdef TensorBase x = as_tensor_arg(input, "logical_not", "input")
    # == False for bool: == 0 would promote the mask to int64 first (a copy 8x its size)
    return binary_op(op_eq, x, False if x._dtype.code == EMBER_BOOL else 0, 1, out)


def equal(input, other):
    """True if both tensors have the same shape and elements."""
    cdef TensorBase a = as_tensor_arg(input, "equal", "input")
    cdef TensorBase b = as_tensor_arg(other, "equal", "other")
    if a.shape != b.shape:
        return False
    return bool(all_c(binary_op(op_eq, a, b, 1, None), None, False))


cdef object all_c(TensorBase t, object dim, bint keepdim):
    """all(): the minimum of the values as bools (True over an empty range)."""
    return bool_reduce(t, dim, keepdim, True)


cdef object any_c(TensorBase t, object dim, bint keepdim):
    """any(): the maximum of the values as bools (False over an empty range)."""
    return bool_reduce(t, dim, keepdim, False)


cdef object bool_reduce(TensorBase t, object dim, bint keepdim, bint is_all):
    """all()/any() over ``dim`` (all dims when None); uint8 input gives uint8, as PyTorch."""
    cdef TensorBase b = cast_to(t, _dtypes.bool)
    dims = () if dim is None else dim
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        r = b if b is not t else b.clone()     # dim=(): nothing reduced (PyTorch)
    elif b.numel_c() == 0:
        # amin/amax refuse an empty range: the sum (0) gives the shape, the answer is fixed
        zeros = reduce_op(op_sum, b, dims, keepdim, None, None)
        r = binary_op(op_eq if is_all else op_ne, zeros, 0, 1, None)
    else:
        r = reduce_op(op_amin if is_all else op_amax, b, dims, keepdim, None, None)
    return cast_to(r, t._dtype) if t._dtype.code == EMBER_UINT8 else r


def _all(input, dim=None, keepdim=False, *, axis=None, keepdims=None, out=None):
    """True if every element of ``input`` (over ``dim``) is nonzero."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names("all", dim, keepdim, axis, keepdims)
    r = all_c(as_tensor_arg(input, "all", "input"), dim, keepdim)
    return r if out is None else _result_out(r, out, "all")


def _any(input, dim=None, keepdim=False, *, axis=None, keepdims=None, out=None):
    """True if any element of ``input`` (over ``dim``) is nonzero."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names("any", dim, keepdim, axis, keepdims)
    r = any_c(as_tensor_arg(input, "any", "input"), dim, keepdim)
    return r if out is None else _result_out(r, out, "any")


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


def _round(input, *, decimals=0, out=None):
    """Round half to even; with ``decimals``, to that many decimal places (as PyTorch:
    round(x * 10**decimals) / 10**decimals)."""
    cdef TensorBase a = as_tensor_arg(input, "round", "input")
    if decimals == 0:
        return unary_op(op_round, a, out)
    if not a._dtype.is_floating_point:
        raise NotImplementedError(f"round: not implemented for '{a._dtype.name}' when "
                                  f"decimals != 0")
    cdef dtype dt = a._dtype
    if dt.code == EMBER_FLOAT16 or dt.code == EMBER_BFLOAT16:
        a = cast_to(a, _dtypes.float32)       # PyTorch computes these in float32
    if decimals > 0:
        scale = 10.0 ** decimals
        r = binary_op(op_div, unary_op(op_round, binary_op(op_mul, a, scale, 1, None), None),
                      scale, 1, None)
    else:                                     # 10 ** -d is exact: divide, then multiply
        scale = 10.0 ** -decimals
        r = binary_op(op_mul, unary_op(op_round, binary_op(op_div, a, scale, 1, None), None),
                      scale, 1, None)
    r = cast_to(r, dt)
    return r if out is None else _result_out(r, out, "round")


cdef Op op_sign = get_op("sign")


def _sign(input, out=None):
    """sign's kernel (EMBER_UNARY_SIGN, SignBackward0) on a tensor of a numeric dtype;
    core/elementwise.py's sign handles bool and complex inputs."""
    return unary_op(op_sign, input, out)


def frac(input, *, out=None):
    """input - trunc(input): the fractional part, with input's sign."""
    cdef TensorBase a = as_tensor_arg(input, "frac", "input")
    if not a._dtype.is_floating_point:
        raise NotImplementedError(f"frac: not implemented for '{a._dtype.name}'")
    return binary_op(op_sub, a, unary_op(op_trunc, a, None), 1, out)


# made once: callers (the façade, aliases resolved at each call) share these objects
cdef dict _TABLE_FUNCTIONS = {d.name: unary_function(get_op(d.name)) for d in SIMPLE_UNARY}
_TABLE_FUNCTIONS.update({d.name: binary_function(get_op(d.name), d.scalar_self)
                         for d in SIMPLE_BINARY})


def table_functions():
    """{name: public function} of the op table's simple rows (their aliases not included:
    method_forms spells those); one shared dict, not to be changed."""
    return _TABLE_FUNCTIONS


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


def _operator_methods(Op op):
    """The dunder and its reflected form for a binary operator (`a & b`, `1 & a`)."""
    def forward(self, other):
        return operator_op(op, self, other)

    def reflected(self, other):
        return operator_op(op, other, self)
    return forward, reflected


def _binary_method(Op op):
    def method(self, other):
        return binary_op(op, self, other, 1, None)
    method.__name__ = op.name
    return method


def _math_methods():
    """{name: method} for Tensor: the unary ops above with their in-place forms, the
    comparisons and logical ops, all/any."""
    out = {}
    for d in SIMPLE_UNARY:
        out[d.name], out[d.name + "_"] = _unary_method(get_op(d.name))
    for d in SIMPLE_BINARY:
        out[d.name] = _binary_method(get_op(d.name))
    out["round"] = lambda self, decimals=0: _round(self, decimals=decimals)
    def invert(TensorBase self):
        # the operator refuses other dtypes with PyTorch's TypeError, where
        # torch.bitwise_not names the kernel
        if self._dtype.is_floating_point or self._dtype.is_complex:
            raise TypeError("~ (operator.invert) is only implemented on integer and "
                            "Boolean-type tensors")
        return unary_op(op_bitwise_not, self, None)
    out["__invert__"] = invert
    for dunder, op in (("and", op_bitwise_and), ("or", op_bitwise_or), ("xor", op_bitwise_xor),
                       ("lshift", op_shift_left), ("rshift", op_shift_right),
                       ("floordiv", op_floor_divide), ("mod", op_remainder)):
        out[f"__{dunder}__"], out[f"__r{dunder}__"] = _operator_methods(op)
    out["frac"] = lambda self: frac(self)
    out["logical_not"] = lambda self: logical_not(self)
    out["all"], out["any"], out["equal"] = _all, _any, equal
    out["where"] = lambda self, condition, other: where(condition, self, other)
    out["masked_fill"], out["masked_fill_"] = masked_fill, _masked_fill_
    out["nonzero"] = nonzero
    return out


cdef Op op_where = Op("where", "where(Tensor condition, Tensor self, Tensor other) -> Tensor",
                      FAMILY_WHERE, 0, _rules.elementwise)


cdef object where_c(TensorBase cond, object a, object b, dtype rt, object out):
    """out = cond ? a : b with a and b (tensors or numbers) as dtype `rt`, broadcast."""
    cdef int k = op_where.resolve(effective_keys(
        cond._keys | (a._keys if isinstance(a, TensorBase) else 0)
        | (b._keys if isinstance(b, TensorBase) else 0)))
    if (op_where._kernel_mask >> k) & 1:
        return op_where._table[k](cond, a, b, out=out, dtype=rt)
    if cond._dtype.code == EMBER_UINT8:
        # PyTorch still takes a byte mask, with a deprecation warning
        import warnings
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated "
                      "and will be removed in a future version of PyTorch. Use a boolean "
                      "condition instead.", UserWarning, stacklevel=2)
        cond = cast_to(cond, _dtypes.bool)
    elif cond._dtype.code != EMBER_BOOL:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {st_name(cond._dtype)}")
    cdef int64_t sizes[MAX_DIM]
    cdef int nd = cond._ndim, i
    for x in (a, b):
        if isinstance(x, TensorBase):
            nd = max(nd, (<TensorBase>x)._ndim)
            if (<TensorBase>x)._device != cond._device:
                raise RuntimeError(f"Expected all tensors to be on the same device, but found "
                                   f"at least two devices, {cond._device} and "
                                   f"{(<TensorBase>x)._device}!")
    for i in range(nd):
        sizes[i] = 1
    broadcast_into(nd, sizes, cond)
    for x in (a, b):
        if isinstance(x, TensorBase):
            broadcast_into(nd, sizes, <TensorBase>x)
    if out is not b:
        grant_out_write(out, cond, a)
    cdef TensorBase o = prepare_out(out, nd, sizes, rt, cond._device, "where")
    if out is not None:
        check_writable(o, cond, a if isinstance(a, TensorBase) else b)
    if o._backend.is_meta or o.numel_c() == 0:
        return o
    cdef TensorBase dst = o if o._dtype is rt else empty_c(nd, sizes, rt, o._device)
    cdef ember_view vo, vc, va, vb
    cdef scalar_buf sa, sb
    cdef TensorBase ca, cb
    dst.view_c(&vo)
    expanded_view(cond, nd, sizes, &vc)
    if isinstance(a, TensorBase):
        ca = cast_to(<TensorBase>a, rt)
        expanded_view(ca, nd, sizes, &va)
    else:
        check_scalar_range(a, rt, "where")
        write_scalar(a, rt, &sa, "where")
        scalar_view(&va, nd, sizes, &sa, rt.code)
    if isinstance(b, TensorBase):
        cb = cast_to(<TensorBase>b, rt)
        expanded_view(cb, nd, sizes, &vb)
    else:
        check_scalar_range(b, rt, "where")
        write_scalar(b, rt, &sb, "where")
        scalar_view(&vb, nd, sizes, &sb, rt.code)
    if rt.is_complex:                   # selects (real, imag) pairs (_complex.pxi)
        complex_where_views(rt, &vo, &vc, &va, &vb)
    cdef ember_kernel_table* t = o._backend.kernels()
    cdef ember_ctx ctx
    init_ctx(&ctx, o)
    cdef int rc
    if dst.numel_c() > GIL_CUTOFF:
        with nogil:
            rc = t.where(&ctx, &vo, &vc, &va, &vb)
    else:
        rc = t.where(&ctx, &vo, &vc, &va, &vb)
    if rc:
        raise_kernel_error(rc, &ctx)
    if dst is not o:
        run_copy(o, dst)
    if out is not None:
        o.bump()
    return o


def where(condition, input=None, other=None, *, out=None):
    """``input`` where ``condition`` holds, else ``other`` (either may be a number), with
    broadcasting and type promotion; ``where(condition)`` is ``nonzero(as_tuple=True)``."""
    cdef TensorBase cond = as_tensor_arg(condition, "where", "condition")
    if input is None and other is None:
        return nonzero(cond, as_tuple=True)
    for x, name in ((input, "input"), (other, "other")):
        if not isinstance(x, TensorBase) and not is_scalar(x):
            from ember.core._errors import _arg_type_message
            raise TypeError(_arg_type_message(x, "where", name, expected="Tensor or Number"))
    return where_c(cond, input, other, result_type2(input, other, "where"), out)


cdef uint64_t _VALUE_AS_TENSOR = AUTOGRAD_BIT | BATCHED_BIT | (
    <uint64_t>1 << DispatchKey.ForwardAD)


def masked_fill(input, mask, value):
    """``input`` with ``value`` where ``mask`` is True (the result keeps input's dtype)."""
    cdef TensorBase a = as_tensor_arg(input, "masked_fill", "input")
    cdef TensorBase m = as_tensor_arg(mask, "masked_fill", "mask")
    if m._dtype.code != EMBER_BOOL:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{st_name(m._dtype)}")
    if isinstance(value, TensorBase):
        if (<TensorBase>value)._ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {(<TensorBase>value)._ndim} dimension(s).")
        # a value that is batched (vmap), requires grad or carries tangents goes in as the
        # tensor it is (where routes it); any other is read once, so a 0-d CPU value may
        # fill a tensor on another device
        if not (<TensorBase>value)._keys & _VALUE_AS_TENSOR:
            value = item_c(<TensorBase>value)
    else:
        check_scalar_range(value, a._dtype, "masked_fill")
    return where_c(m, value, a, a._dtype, None)


def _masked_fill_(TensorBase self, mask, value):
    """In place: self[mask] = value (mask broadcasts to self's shape)."""
    cdef TensorBase r = masked_fill(self, mask, value)
    if r.shape != self.shape:
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                           f"shape {list(r.shape)}")
    copy_into(self, r, "masked_fill_")
    return self


def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements: an [n, ndim] int64 tensor, or one 1-D tensor per
    dim with ``as_tuple`` (computed on the host through NumPy, as DESIGN allows)."""
    cdef TensorBase a = as_tensor_arg(input, "nonzero", "input")
    refuse_limited_named("nonzero", a._dtype)
    np = numpy()
    idx = np.nonzero(host_array(a).reshape(a.shape if a._ndim else (1,)))
    if as_tuple:
        return tuple(from_host_array(i.astype(np.int64), _dtypes.int64, a._device)
                     for i in (idx if a._ndim else idx[:1]))
    stacked = np.stack(idx, axis=1) if a._ndim else np.zeros((len(idx[0]), 0), np.int64)
    return from_host_array(stacked.astype(np.int64), _dtypes.int64, a._device)


def _state_default_dtype():
    return _state.default_dtype()


# --- derivatives (see _autograd_support.pxi) -------------------------------------------

import cmath
import math
import re

cdef double _LN2 = 0.6931471805599453
cdef double _LN10 = 2.302585092994046
cdef double _TWO_OVER_SQRT_PI = 1.1283791670955126


def _zeros_grad(ctx, g):
    """Piecewise-constant ops (floor, round, ...): a zero gradient, as PyTorch."""
    return (zeros_like(g),)


def _d_floor_divide(ctx, g):
    """PyTorch records floor_divide but leaves its derivative unimplemented."""
    raise RuntimeError("derivative for aten::floor_divide is not implemented")


def _d_extreme(ctx, g):
    """maximum/minimum: the gradient goes to the chosen side, split evenly on ties."""
    a, b = ctx.args
    pick_a = binary_op(op_gt if ctx.op is op_maximum else op_lt, a, b, 1, None)
    tie = binary_op(op_eq, a, b, 1, None)
    w = where(tie, 0.5, where(pick_a, 1.0, 0.0))
    return g * w, g * (1 - w)


def _d_nan_extreme(ctx, g):
    """fmax/fmin: as maximum/minimum, but a NaN side gives way to the number."""
    a, b = ctx.args
    pick_a = binary_op(op_ge if ctx.op is get_op("fmax") else op_le, a, b, 1, None)
    pick_a = logical_or(pick_a, b != b)
    return where(pick_a, g, 0.0), where(pick_a, 0.0, g)


cdef inline bint is_complex_value(object x):
    return isinstance(x, complex) or \
        isinstance(x, TensorBase) and (<TensorBase>x)._dtype.is_complex


def _d_pow(ctx, g):
    """d a**b: b * a**(b-1) (0 where b == 0); d b: a**b * log(a) (0 where a == 0 and
    b >= 0), either side possibly a Python number."""
    a, b = ctx.args
    need = ctx.needs_input_grad
    ga = gb = None
    if is_complex_value(g) or is_complex_value(a) or is_complex_value(b):
        a, b = conj_of(a), conj_of(b)           # PyTorch's convention: conj of f'
        return (g * b * a ** (b - 1) if need[0] else None), \
            (g * a ** b * (log(a) if isinstance(a, TensorBase) else cmath.log(a))
             if len(need) > 1 and need[1] else None)
    if need[0]:
        if isinstance(b, TensorBase):
            ga = where(b == 0, 0.0, g * b * a ** (b - 1))
        else:       # zeros, not g * 0 * a**-1: that is NaN where a == 0
            ga = g * b * a ** (b - 1) if b != 0 else zeros_like(g)
    if len(need) > 1 and need[1]:
        log_a = log(a) if isinstance(a, TensorBase) else \
            (math.log(a) if a > 0 else float("nan"))
        gb = where((b >= 0) & (a == 0), 0.0, g * a ** b * log_a)
    return ga, gb


def _d_fmod(ctx, g):
    a, b = ctx.args
    return g, (-g * unary_op(op_trunc, a / b, None) if isinstance(b, TensorBase) else None)


def _d_remainder(ctx, g):
    a, b = ctx.args
    return g, (-g * unary_op(get_op("floor"), a / b, None) if isinstance(b, TensorBase)
              else None)


def _polygamma(n, x):
    from ember.core.special import polygamma            # a composite over these ops
    return polygamma(n, x)


cdef object _atan2_recip(object y, object x):
    """1 / (y^2 + x^2), 0 at y = x = 0: atan2's gradient is 0 there, as PyTorch's."""
    return where((y == 0) & (x == 0), 0.0, (y * y + x * x).reciprocal())


# the constants and late-bound functions the table's derivative formulas may name
cdef dict _FORMULA_NAMES = {"LN2": _LN2, "LN10": _LN10, "TWO_OVER_SQRT_PI": _TWO_OVER_SQRT_PI,
                            "HALF_SQRT_PI": 0.886226925452758, "polygamma": _polygamma,
                            "atan2_recip": lambda y, x: _atan2_recip(y, x),
                            # (the C function: _tensor's module is still initialising)
                            "conj_of": lambda x: conj_of(x)}


cdef tuple compiled_formula(object d):
    """(backward function, save flags) of an op-table row's derivative: its formulas, one
    per input in PyTorch's derivatives.yaml words (grad, self, other, result), become one
    function returning a gradient per input; "zero" is a zero gradient."""
    if d.grad == "zero":
        return _zeros_grad, 0
    exprs = (d.grad,) if isinstance(d.grad, str) else tuple(d.grad)
    words = set(re.findall(r"[A-Za-z_]\w*", " ".join(exprs)))
    lines = [f"def d_{d.name}(ctx, grad):"]
    cdef int save = 0
    read = "conj_of" if d.conj_saved else ""
    if "self" in words or "other" in words:
        save |= SAVE_INPUTS
        lines.append(f"    self = {read}(ctx.args[0])")
        if "other" in words:
            lines.append(f"    other = {read}(ctx.args[1])")
    if "result" in words:
        save |= SAVE_RESULT
        lines.append(f"    result = {read}(ctx.result)")
    lines.append(f"    return ({', '.join(exprs)},)")
    namespace = dict(_FORMULA_NAMES)
    exec("\n".join(lines), namespace)
    return namespace[f"d_{d.name}"], save


cdef object _d, _f, _name          # the loops' names: C variables, not module attributes
cdef int _save
for _d in _optable.UNARY.ops:
    if _d.grad is not None:
        _f, _save = compiled_formula(_d)
        derive_unary(get_op(_d.op or _d.name), _f, _save)
for _d in _optable.BINARY.ops:
    if _d.grad is not None:
        _f, _save = compiled_formula(_d)
        derive_binary(get_op(_d.op or _d.name), _f, _save)
cdef dict _BINARY_D = {
    "maximum": (_d_extreme, SAVE_INPUTS), "minimum": (_d_extreme, SAVE_INPUTS),
    "fmax": (_d_nan_extreme, SAVE_INPUTS), "fmin": (_d_nan_extreme, SAVE_INPUTS),
    "pow": (_d_pow, SAVE_INPUTS),
    "fmod": (_d_fmod, SAVE_INPUTS), "remainder": (_d_remainder, SAVE_INPUTS),
    "floor_divide": (_d_floor_divide, 0),
}
for _name, (_f, _save) in _BINARY_D.items():
    derive_binary(get_op(_name), _f, _save)


def _d_where(ctx, g):
    cond = ctx.args[0]                        # only the condition is saved
    return None, where(cond, g, 0.0), where(cond, 0.0, g)


derive(op_where, _d_where,
       lambda cond, a, b, out=None, dtype=None: where_c(
           cond, a, b, result_type2(a, b, "where") if dtype is None else dtype, out),
       SAVE_FIRST)


# non-differentiable elementwise ops still need an entry, for mode keys to redispatch to
for _op in all_ops().values():
    if (<Op>_op).entry is None and (<Op>_op).family == FAMILY_BINARY:
        (<Op>_op).entry = binary_entry(<Op>_op)
    elif (<Op>_op).entry is None and (<Op>_op).family == FAMILY_UNARY:
        (<Op>_op).entry = unary_entry(<Op>_op)
