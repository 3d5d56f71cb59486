# Elementwise ops: broadcasting, type promotion, Python scalars on either side, out=,
# in-place; all run the backend's `unary`/`binary` primitive.

cdef Op table_op(object d, int family, object rule):
    """The Op of a row of the op table (core/optable.py): its name, or the core's own
    (`d.op`), its schema (by default "name(Tensor self[, Tensor other]) -> Tensor"), family,
    ABI code and shape rule."""
    name = d.op or d.name
    schema = d.schema or (f"{name}(Tensor self) -> Tensor" if family == FAMILY_UNARY
                          else f"{name}(Tensor self, Tensor other) -> Tensor")
    return Op(name, schema, family, d.code, rule)


# every row of the op table (core/optable.py) is an Op: the unary and binary ones on the
# shared paths below, the reductions and scans in core/_reduce.pyx.  The ones a module calls
# directly it holds as C globals.
for _d in _optable.UNARY.ops:
    table_op(_d, FAMILY_UNARY, _rules.elementwise)
for _d in _optable.BINARY.ops:
    table_op(_d, FAMILY_BINARY, _rules.elementwise)
for _d in _optable.REDUCE.ops:
    table_op(_d, FAMILY_REDUCE, _rules.reduction)
for _d in _optable.SCAN.ops:
    table_op(_d, FAMILY_SCAN, _rules.elementwise)
cdef Op op_add = get_op("add")
cdef Op op_sub = get_op("sub")
cdef Op op_mul = get_op("mul")
cdef Op op_div = get_op("div")
cdef Op op_neg = get_op("neg")
cdef Op op_exp = get_op("exp")
cdef Op op_relu = get_op("relu")
# ops of the families in the op modules (core/_math.pyx, core/_reduce.pyx) that the Tensor's
# operators and methods and this module's formulas call
cdef Op op_abs = get_op("abs")
cdef Op op_pow = get_op("pow")
cdef Op op_sqrt_ = get_op("sqrt")
cdef Op op_rsqrt_ = get_op("rsqrt")
cdef Op op_reciprocal_ = get_op("reciprocal")
cdef Op op_floor_divide = get_op("floor_divide")
cdef Op op_remainder = get_op("remainder")
cdef Op op_trunc = get_op("trunc")
cdef Op op_eq = get_op("eq")
cdef Op op_ne = get_op("ne")
cdef Op op_lt = get_op("lt")
cdef Op op_le = get_op("le")
cdef Op op_gt = get_op("gt")
cdef Op op_ge = get_op("ge")
cdef Op op_logical_and = get_op("logical_and")
cdef Op op_logical_xor = get_op("logical_xor")
cdef Op op_sum = get_op("sum")
cdef Op op_prod = get_op("prod")
cdef Op op_amax = get_op("amax")
cdef Op op_amin = get_op("amin")
cdef Op op_mean = get_op("mean")


cdef int raise_kernel_error(int rc, ember_ctx* ctx) except -1:
    pending = _fallback.take_pending()    # raised while the host fallback staged (a warning)
    if pending is not None:
        raise pending
    msg = ctx.error[:].decode("utf-8", "replace") or f"kernel failed with code {rc}"
    if rc == EMBER_ERR_INDEX:
        raise IndexError(msg)
    if rc == EMBER_ERR_VALUE:
        raise ValueError(msg)
    if rc == EMBER_ERR_TYPE:
        raise TypeError(msg)
    if rc == EMBER_ERR_NOT_IMPLEMENTED:
        raise NotImplementedError(msg)
    if rc == EMBER_ERR_MEMORY:
        raise MemoryError(msg)
    raise RuntimeError(msg)


cdef int raise_sync_error(int rc, ember_ctx* ctx) except -1:
    """An error from a synchronising call (`to_host`): an asynchronous device may report
    there an index out of range that an earlier op found (abi.h), when the op's own
    exception type is no longer known, so it is both IndexError and RuntimeError (PyTorch's
    CUDA reports every device assert as RuntimeError)."""
    if rc == EMBER_ERR_INDEX:
        pending = _fallback.take_pending()
        raise pending if pending is not None else \
            IndexOutOfBoundsError(ctx.error[:].decode("utf-8", "replace"))
    return raise_kernel_error(rc, ctx)


cdef int broadcast_into(int nd, int64_t* out, TensorBase t) except -1:
    """Broadcast t's shape into out[:nd] (both right-aligned)."""
    cdef int i, j
    for i in range(t._ndim):
        j = nd - t._ndim + i
        if out[j] == 1:
            out[j] = t._sizes[i]
        elif t._sizes[i] != 1 and t._sizes[i] != out[j]:
            raise RuntimeError(
                f"The size of tensor a ({out[j]}) must match the size of tensor b "
                f"({t._sizes[i]}) at non-singleton dimension {i}")
    return 0


cdef int expanded_view(TensorBase t, int nd, const int64_t* sizes, ember_view* v) except -1:
    """t viewed at the broadcast shape: leading and size-1 dims get stride 0."""
    t.view_c(v)
    cdef int i, j, shift = nd - t._ndim
    for i in range(nd - 1, -1, -1):
        j = i - shift
        v.strides[i] = t._strides[j] if j >= 0 and t._sizes[j] == sizes[i] else 0
        v.sizes[i] = sizes[i]
    v.ndim = nd
    return 0


cdef TensorBase cast_copy(TensorBase t, dtype dt):
    """cast_to's copy (_tensor.pxd): a contiguous converted copy of t."""
    cdef TensorBase r = empty_c(t._ndim, t._sizes, dt, t._device)
    run_copy(r, t)
    return r


cdef TensorBase operand(object t, dtype ct):
    """t as a kernel operand: contiguous, in the compute dtype."""
    return <TensorBase>cast_to(<TensorBase>t, ct).contiguous()


cdef str _NO_GRAD_VIEW_WRITE = (
    "A view was created in no_grad mode and is being modified inplace with grad mode "
    "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You "
    "can clarify your code by moving both the view and the inplace either both inside the "
    "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
    "want the inplace to be tracked).")


cdef int check_writable(TensorBase o, object a, object b) except -1:
    """PyTorch's overlap rules for an op writing into `o` (out= or in-place): no two of
    o's elements may share memory, and an input may alias o only exactly."""
    cdef int i
    check_write(o)                          # before the write, not only at bump()
    if o._no_grad_view and is_grad_enabled_c():
        raise RuntimeError(_NO_GRAD_VIEW_WRITE)
    if o.numel_c() == 0:
        return 0
    for i in range(o._ndim):
        if o._strides[i] == 0 and o._sizes[i] > 1:
            raise RuntimeError("unsupported operation: more than one element of the written-to "
                               "tensor refers to a single memory location. Please clone() the "
                               "tensor before performing the operation.")
    for x in (a, b):
        if isinstance(x, TensorBase) and partial_overlap(o, <TensorBase>x):
            raise RuntimeError("unsupported operation: some elements of the input tensor and "
                               "the written-to tensor refer to a single memory location. "
                               "Please clone() the tensor before performing the operation.")
    return 0


cdef bint shares_bytes(TensorBase o, TensorBase x) noexcept:
    """Same storage, intersecting byte ranges, and not the very same view (size-1 dims
    aside: ``x[None] += 1`` writes x's elements from themselves)."""
    if o._storage is not x._storage or o.numel_c() == 0 or x.numel_c() == 0:
        return False
    if o._offset == x._offset and o._dtype is x._dtype and same_walk(o, x):
        return False
    cdef int64_t olo, ohi, xlo, xhi
    byte_range(o, &olo, &ohi)
    byte_range(x, &xlo, &xhi)
    return olo < xhi and xlo < ohi


cdef bint same_walk(TensorBase a, TensorBase b) noexcept:
    """Whether a and b visit the same elements in the same order: equal sizes and strides
    once the size-1 dims are left out."""
    cdef int i = 0, j = 0
    while True:
        while i < a._ndim and a._sizes[i] == 1:
            i += 1
        while j < b._ndim and b._sizes[j] == 1:
            j += 1
        if i == a._ndim or j == b._ndim:
            return i == a._ndim and j == b._ndim
        if a._sizes[i] != b._sizes[j] or a._strides[i] != b._strides[j]:
            return False
        i += 1
        j += 1


cdef bint partial_overlap(TensorBase o, TensorBase x) noexcept:
    """PyTorch's error case: two dense views whose memory partly coincides.  Byte ranges
    of interleaved views (two columns of one matrix) intersect without sharing an element
    necessarily; `staged` handles those."""
    return shares_bytes(o, x) and dense(o) and dense(x)


cdef bint dense(TensorBase t) noexcept:
    """Non-overlapping and dense: the elements fill a block of memory, in some dim order."""
    cdef int64_t expected = 1, best
    cdef int i, j, pick
    cdef bint used[MAX_DIM]
    for i in range(t._ndim):
        used[i] = t._sizes[i] == 1
    for i in range(t._ndim):
        pick = -1
        for j in range(t._ndim):            # the unused dim with the smallest stride
            if not used[j] and (pick < 0 or t._strides[j] < best):
                pick, best = j, t._strides[j]
        if pick < 0:
            break
        if best != expected:
            return False
        used[pick] = True
        expected *= t._sizes[pick]
    return True


cdef object staged(TensorBase o, object x):
    """``x``, or a copy of it when it interleaves with the output ``o`` (PyTorch's "too hard
    to tell" overlap, where its result depends on the kernel's element order): reading
    from a copy gives the result every element order would if the views were apart."""
    if isinstance(x, TensorBase) and shares_bytes(o, <TensorBase>x) \
            and not partial_overlap(o, <TensorBase>x):
        return clone_c(<TensorBase>x)
    return x


cdef void byte_range(TensorBase t, int64_t* lo, int64_t* hi) noexcept:
    cdef int64_t end = t._offset
    cdef int i
    for i in range(t._ndim):
        end += (t._sizes[i] - 1) * t._strides[i]
    lo[0] = t._offset * t._dtype.itemsize
    hi[0] = (end + 1) * t._dtype.itemsize


cdef TensorBase checked_out(object out, int nd, const int64_t* sizes, dtype dt,
                            device dev, str op):
    """prepare_out's `out` (_tensor.pxd): checked (device, castable dtype), resized if
    needed."""
    cdef TensorBase o = as_tensor_arg(out, op, "out")
    if o._device != dev:
        raise RuntimeError(f"{op}: Expected out tensor to be on device {dev}, but got {o._device}")
    if not can_cast(dt, o._dtype):
        raise RuntimeError(f"result type {st_name(dt)} can't be cast to the desired output "
                           f"type {st_name(o._dtype)}")
    resize_out(o, nd, sizes, op)
    return o


cdef int resize_out(TensorBase o, int nd, const int64_t* sizes, str op) except -1:
    cdef int i
    if o._ndim == nd:
        for i in range(nd):
            if o._sizes[i] != sizes[i]:
                break
        else:
            return 0
    if o.numel_c():
        import warnings
        warnings.warn(f"{op}: An output with one or more elements was resized since it had "
                      f"shape {list(o.shape)}, which does not match the required output shape "
                      f"{[sizes[i] for i in range(nd)]}.", UserWarning, stacklevel=3)
    cdef int64_t strides[MAX_DIM]
    o._storage = allocate(o._backend, o._device,
                          storage_nbytes(nd, sizes, strides, o._dtype.itemsize))
    o._ndim = nd
    o._shape = None
    memcpy(o._sizes, sizes, nd * sizeof(int64_t))
    memcpy(o._strides, strides, nd * sizeof(int64_t))
    o._offset = 0
    return 0


cdef TensorBase result_in_layout(TensorBase a, TensorBase b, int nd, const int64_t* sizes,
                                 dtype dt, device dev):
    """A fresh elementwise result of shape ``sizes``, laid out as the first of ``a``, ``b``
    (either may be None) that has that shape, when it packs it densely in another order
    (channels_last, a transpose): PyTorch's TensorIterator keeps such an input's layout,
    so ``relu(x_cl).permute(0, 2, 3, 1).view(-1, c)`` works as there.  Else contiguous."""
    cdef TensorBase r = empty_c(nd, sizes, dt, dev)
    cdef TensorBase t = a if a is not None and full_shape(a, nd, sizes) else \
        b if b is not None and full_shape(b, nd, sizes) else None
    if t is None or nd < 2 or t.contiguous_c():
        return r
    cdef int order[MAX_DIM]
    cdef int64_t strides[MAX_DIM]
    cdef int64_t expected = 1
    cdef int i, j, k
    for i in range(nd):                 # dims from the largest stride down (stable)
        k = i
        j = i - 1
        while j >= 0 and t._strides[order[j]] < t._strides[k]:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = k
    for i in range(nd - 1, -1, -1):
        k = order[i]
        if t._sizes[k] != 1 and t._strides[k] != expected:
            return r                    # not dense (a slice, a broadcast): contiguous
        strides[k] = expected
        expected *= t._sizes[k]
    memcpy(r._strides, strides, nd * sizeof(int64_t))
    return r


cdef inline bint full_shape(TensorBase t, int nd, const int64_t* sizes) noexcept:
    return t._ndim == nd and memcmp(t._sizes, sizes, nd * sizeof(int64_t)) == 0


cdef object binary_op(Op op, object a, object b, object alpha, object out):
    """The whole path of a binary elementwise op, scalars allowed on either side."""
    cdef TensorBase ta = a if isinstance(a, TensorBase) else None
    cdef TensorBase tb = b if isinstance(b, TensorBase) else None
    if ta is None and not is_scalar(a) or tb is None and not is_scalar(b):
        raise TypeError(f"{op.name}(): unsupported operand type(s): "
                        f"'{type(a).__name__}' and '{type(b).__name__}'")
    cdef uint64_t keys = effective_keys((ta._keys if ta is not None else 0)
                                        | (tb._keys if tb is not None else 0))
    cdef int k = op.resolve(keys)
    if (op._kernel_mask >> k) & 1:
        return op._table[k](a, b, alpha=alpha, out=out)

    cdef dtype ct = result_type2(a, b, op.name)
    if ct.is_complex:
        return complex_ops().binary(op.name, a, b, alpha, out, ct)
    refuse_limited(op, ct)
    cdef int code = op.code
    if code == EMBER_BINARY_SUB and (ct.code == EMBER_BOOL or isinstance(a, bool)
                                     or isinstance(b, bool) or ta is not None and
                                     ta._dtype.code == EMBER_BOOL or tb is not None and
                                     tb._dtype.code == EMBER_BOOL):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    if binary_to_float(code) and not ct.is_floating_point:
        ct = <dtype>_state.default_dtype()
    if code == EMBER_BINARY_POW and tb is None and not ct.is_floating_point \
            and not ct.is_complex:
        # PyTorch checks a scalar exponent up front (even for an empty base) and answers
        # x ** 0 and x ** 1 without the kernel, so they work on bool tensors too
        if b < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if ct.code == EMBER_BOOL and b in (0, 1):
            return binary_op(op_add if b == 0 else op_mul, a, True, 1, out)
    if code == EMBER_BINARY_POW and tb is None and ta is not None and ta._dtype is ct and \
            (ct.code == EMBER_FLOAT32 or ct.code == EMBER_FLOAT64) and \
            not isinstance(b, bool) and b in _POW_FORMS:
        # PyTorch's forms of common scalar exponents for float and double (its values:
        # sqrt(-0.) is -0.; half types keep pow), far cheaper than pow() per element:
        # x ** 2 is one multiply
        return pow_form(ta, b, out)
    # a 0-dim CPU tensor next to a tensor on another device acts as a scalar (PyTorch)
    if ta is not None and tb is not None and ta._device is not tb._device \
            and ta._device != tb._device:
        if tb._ndim == 0 and tb._device.type == "cpu":
            b, tb = item_c(tb), None
        elif ta._ndim == 0 and ta._device.type == "cpu":
            a, ta = item_c(ta), None
        else:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {ta._device} and {tb._device}!")
    if isinstance(alpha, bool) and ct.code != EMBER_BOOL:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if alpha is not 1 and alpha != 1:
        if isinstance(alpha, float) and not ct.is_floating_point:
            raise RuntimeError("For integral input tensors, argument alpha must not be a "
                               "floating point number.")
        # in place, same shapes and dtype: self + alpha * other in one pass (the optimizer
        # loops' p.add_(g, alpha=-lr)), with the multiply-then-add's bits
        if out is a and tb is not None and ta._dtype is ct and axpy_c != NULL and \
                (code == EMBER_BINARY_ADD or code == EMBER_BINARY_SUB) and \
                isinstance(alpha, (int, float)) and check_writable(ta, ta, tb) == 0 and \
                axpy_c(ta, tb, alpha if code == EMBER_BINARY_ADD else -alpha):
            return a
        # alpha * other in the result dtype: in other's own (narrower) dtype it would wrap
        b = binary_op(op_mul, cast_to(tb, ct), alpha, 1, None) if tb is not None \
            else b * alpha
        tb = b if tb is not None else None

    # a half tensor times or over (or floor-divided by) a Python number runs in float32,
    # PyTorch's opmath type, with the number unrounded (x * 1.7 rounds once, not after 1.7
    # became 1.703125 in bfloat16); a number over one is the tensor's reciprocal (rounded)
    # times the number.  PyTorch's other ops round the number to the tensor's dtype, as the
    # kernel does
    cdef dtype kt = ct                   # the kernel's dtype
    if (ct.code == EMBER_FLOAT16 or ct.code == EMBER_BFLOAT16) and (ta is None) != (tb is None) \
            and (code == EMBER_BINARY_MUL or code == EMBER_BINARY_DIV
                 or code == EMBER_BINARY_FLOOR_DIVIDE and tb is None):
        if code == EMBER_BINARY_DIV and ta is None:
            tb = unary_op(get_op("reciprocal"), cast_to(tb, ct), None)
            b, code = tb, EMBER_BINARY_MUL
        kt = _dtypes.float32
    cdef TensorBase ref = ta if ta is not None else tb
    cdef int nd = max(ta._ndim if ta is not None else 0, tb._ndim if tb is not None else 0)
    cdef int64_t sizes[MAX_DIM]
    cdef int i
    for i in range(nd):
        sizes[i] = 1
    if ta is not None:
        broadcast_into(nd, sizes, ta)
    if tb is not None:
        broadcast_into(nd, sizes, tb)
    cdef dtype rt = _dtypes.bool if is_predicate(code) else ct    # result dtype
    grant_out_write(out, a, b)
    cdef TensorBase o = result_in_layout(ta, tb, nd, sizes, rt, ref._device) if out is None \
        else prepare_out(out, nd, sizes, rt, ref._device, op.name)
    if out is not None:
        ta, tb = staged(o, ta), staged(o, tb)
        check_writable(o, ta, tb)
    if o._backend.is_meta:
        return o
    cdef dtype dt = rt if kt is ct else kt
    cdef TensorBase dst = o if o._dtype is dt else empty_c(nd, sizes, dt, o._device)
    cdef ember_view vo, va, vb
    cdef scalar_buf sa, sb
    cdef TensorBase ca, cb          # converted operands, alive through the kernel call
    dst.view_c(&vo)
    if ta is not None:
        ca = cast_to(ta, kt)
        expanded_view(ca, nd, sizes, &va)
    else:
        write_scalar(a, kt, &sa, op.name)
        scalar_view(&va, nd, sizes, &sa, kt.code)
    if tb is not None:
        cb = cast_to(tb, kt)
        expanded_view(cb, nd, sizes, &vb)
    else:
        write_scalar(b, kt, &sb, op.name)
        scalar_view(&vb, nd, sizes, &sb, kt.code)
    cdef ember_kernel_table* t = o._backend.kernels()
    if o._backend.composites is not None:       # a kernel the device declares it lacks
        fn = (<dict>o._backend.composites).get((True, code, kt))
        if fn is not None:
            return composite_result(o, fn(ca if ta is not None else a,
                                          cb if tb is not None else b), out)
    cdef ember_ctx ctx
    init_ctx(&ctx, o)
    cdef int rc
    if dst.numel_c() > GIL_CUTOFF:
        with nogil:
            rc = t.binary(&ctx, code, &vo, &va, &vb)
    else:
        rc = t.binary(&ctx, code, &vo, &va, &vb)
    if rc:
        raise_kernel_error(rc, &ctx)
    if dst is not o:
        run_copy(o, dst)
    if out is not None:
        o.bump()
    return o


cdef object composite_result(TensorBase o, object r, object out):
    """The op table's composite's result `r` written into the op's output `o`."""
    run_copy(o, <TensorBase>r)
    if out is not None:
        o.bump()
    return o


cdef inline bint is_predicate(int code) noexcept:
    """Comparisons and logical ops: bool results from operands of one common dtype."""
    return EMBER_BINARY_EQ <= code <= EMBER_BINARY_LOGICAL_XOR


_POW_FORMS = (2, 3, 0.5, -0.5, -1, -2, 1)


cdef object pow_form(TensorBase a, object e, object out):
    """a ** e for an exponent of _POW_FORMS, as PyTorch computes it."""
    if e == 2:
        return binary_op(op_mul, a, a, 1, out)
    if e == 1:              # PyTorch copies the base; x * 1 is x, NaN and -0. included
        if out is a:        # x.pow_(1): a copy onto itself, which PyTorch skips
            a.bump()
            return a
        return binary_op(op_mul, a, 1, 1, out)
    if e == -2:
        return unary_op(op_reciprocal_, binary_op(op_mul, a, a, 1, None), out)
    if e == 3:
        return binary_op(op_mul, binary_op(op_mul, a, a, 1, None), a, 1, out)
    if e == 0.5:
        return unary_op(op_sqrt_, a, out)
    if e == -0.5:
        return unary_op(op_rsqrt_, a, out)
    return unary_op(op_reciprocal_, a, out)


cdef object binary_inplace(Op op, TensorBase self, object other, object alpha):
    """self.op_(other): the result must keep self's shape and be castable to its dtype."""
    cdef dtype ct = result_type2(self, other, op.name)
    if binary_to_float(op.code) and not ct.is_floating_point and not ct.is_complex:
        ct = <dtype>_state.default_dtype()
    if not can_cast(ct, self._dtype):
        raise RuntimeError(f"result type {st_name(ct)} can't be cast to the desired output "
                           f"type {st_name(self._dtype)}")
    cdef int64_t sizes[MAX_DIM]
    cdef int i
    for i in range(self._ndim):
        sizes[i] = self._sizes[i]
    if isinstance(other, TensorBase):
        if (<TensorBase>other)._ndim > self._ndim:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(_rules.broadcast_shapes(self.shape, other.shape))}")
        broadcast_into(self._ndim, sizes, <TensorBase>other)
        for i in range(self._ndim):
            if sizes[i] != self._sizes[i]:
                raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                                   f"broadcast shape {[sizes[j] for j in range(self._ndim)]}")
    binary_op(op, self, other, alpha, self)
    return self


cdef bint unary_to_float(int code) noexcept:
    """Unary ops whose integer inputs give the default float dtype (exp, log, sin, ...);
    the rest keep the input's dtype."""
    return not (code == EMBER_UNARY_NEG or code == EMBER_UNARY_RELU or code == EMBER_UNARY_ABS
                or code == EMBER_UNARY_SQUARE or code == EMBER_UNARY_BITWISE_NOT
                or EMBER_UNARY_FLOOR <= code <= EMBER_UNARY_ROUND or code == EMBER_UNARY_SIGN)


cdef inline bint binary_to_float(int code) noexcept:
    """Binary ops whose integer inputs give the default float dtype (true division, atan2)."""
    return code == EMBER_BINARY_DIV or code == EMBER_BINARY_ATAN2


cdef object unary_op(Op op, TensorBase a, object out):
    """The whole path of a unary elementwise op."""
    cdef int k = op.resolve(effective_keys(a._keys))
    if (op._kernel_mask >> k) & 1:
        return op._table[k](a, out=out)
    cdef dtype ct = a._dtype
    if ct.is_complex:
        return complex_ops().unary(op.name, a, out)
    if ct.code == EMBER_BOOL:
        if op.code == EMBER_UNARY_SQUARE:     # PyTorch's pow(x, 2): bool promotes to int64
            return unary_op(op, cast_to(a, _dtypes.int64), out)
        if op.code == EMBER_UNARY_RELU:
            raise RuntimeError("Boolean inputs not supported for relu")
    if not unary_to_float(op.code):
        refuse_limited(op, ct)
    if op.code == EMBER_UNARY_NEG and ct.code == EMBER_BOOL:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    if unary_to_float(op.code) and not ct.is_floating_point:
        ct = <dtype>_state.default_dtype()
    cdef TensorBase src = cast_to(a, ct)
    grant_out_write(out, a, None)
    cdef TensorBase o = result_in_layout(a, None, a._ndim, a._sizes, ct, a._device) \
        if out is None else prepare_out(out, a._ndim, a._sizes, ct, a._device, op.name)
    if out is not None:
        src = staged(o, src)
        check_writable(o, src, None)
    if o._backend.is_meta:
        return o
    cdef TensorBase dst = o if o._dtype is ct else empty_c(a._ndim, a._sizes, ct, o._device)
    cdef ember_view vo, va
    dst.view_c(&vo)
    src.view_c(&va)
    cdef ember_kernel_table* t = o._backend.kernels()
    if o._backend.composites is not None:       # a kernel the device declares it lacks
        fn = (<dict>o._backend.composites).get((False, op.code, ct))
        if fn is not None:
            return composite_result(o, fn(src), out)
    cdef ember_ctx ctx
    init_ctx(&ctx, o)
    cdef int rc
    if dst.numel_c() > GIL_CUTOFF:
        with nogil:
            rc = t.unary(&ctx, op.code, &vo, &va)
    else:
        rc = t.unary(&ctx, op.code, &vo, &va)
    if rc:
        raise_kernel_error(rc, &ctx)
    if dst is not o:
        run_copy(o, dst)
    if out is not None:
        o.bump()
    return o


def add(input, other, *, alpha=1, out=None):
    """input + alpha * other, with broadcasting and type promotion."""
    return binary_op(op_add, input, other, alpha, out)


def sub(input, other, *, alpha=1, out=None):
    """input - alpha * other, with broadcasting and type promotion."""
    return binary_op(op_sub, input, other, alpha, out)


def mul(input, other, *, out=None):
    """input * other, with broadcasting and type promotion."""
    return binary_op(op_mul, input, other, 1, out)


def div(input, other, *, rounding_mode=None, out=None):
    """input / other (true division: integer inputs give the default float dtype)."""
    if rounding_mode is None:
        return binary_op(op_div, input, other, 1, out)
    if rounding_mode == "floor":
        if out is None and (isinstance(input, TensorBase) and input.requires_grad or
                            isinstance(other, TensorBase) and other.requires_grad) and \
                result_type2(input, other, "div").is_floating_point:
            # div's floor mode is differentiable, with zero gradients (floor_divide is not)
            from ember.core.function import zero_derivative
            return zero_derivative("div", lambda a, b: binary_op(op_floor_divide, a, b, 1,
                                                                 None), input, other)
        return binary_op(op_floor_divide, input, other, 1, out)
    if rounding_mode != "trunc":
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                         f"'floor' but found '{rounding_mode}'")
    cdef dtype rt = result_type2(input, other, "div")
    if rt.code == EMBER_FLOAT16 or rt.code == EMBER_BFLOAT16:
        # truncated in float32 and rounded once, as PyTorch (not the rounded quotient)
        q = binary_op(op_div, cast_to(input, _dtypes.float32) if isinstance(input, TensorBase)
                      else input, cast_to(other, _dtypes.float32)
                      if isinstance(other, TensorBase) else other, 1, None)
        q = cast_to(unary_op(op_trunc, q, None), rt)
        return q if out is None else _result_out(q, out, "div")
    if rt.is_floating_point:
        return unary_op(op_trunc, binary_op(op_div, input, other, 1, None), out)
    # integers: floor division, moved one toward zero where it rounded a negative quotient
    q = binary_op(op_floor_divide, input, other, 1, None)
    inexact = binary_op(op_ne, binary_op(op_remainder, input, other, 1, None), 0, 1, None)
    negative = binary_op(op_logical_xor, is_negative(input), is_negative(other), 1, None)
    fix = binary_op(op_logical_and, inexact, negative, 1, None)
    return binary_op(op_add, q, cast_to(fix, (<TensorBase>q)._dtype), 1, out)



cdef object is_negative(object x):
    return binary_op(op_lt, x, 0, 1, None) if isinstance(x, TensorBase) else x < 0


true_divide = div


def neg(input, *, out=None):
    """-input."""
    return unary_op(op_neg, as_tensor_arg(input, "neg", "input"), out)


negative = neg


def exp(input, *, out=None):
    """e ** input, elementwise (integer inputs give the default float dtype)."""
    return unary_op(op_exp, as_tensor_arg(input, "exp", "input"), out)


def relu(input):
    """max(input, 0), elementwise."""
    return unary_op(op_relu, as_tensor_arg(input, "relu", "input"), None)


# --- derivatives (see _autograd_support.pxi) -------------------------------------------

cdef object binary_entry(Op op):
    def entry(a, b, alpha=1, out=None):
        return binary_op(op, a, b, alpha, out)
    return entry


cdef object unary_entry(Op op):
    def entry(a, out=None):
        return unary_op(op, a, out)
    return entry


cdef void derive_binary(Op op, formula, int save):
    derive(op, formula, binary_entry(op), save)


cdef void derive_unary(Op op, formula, int save):
    derive(op, formula, unary_entry(op), save)


def _d_add(ctx, g):
    alpha = ctx.kwargs.get("alpha", 1)
    return g, (g if alpha == 1 else g * alpha)


def _d_sub(ctx, g):
    alpha = ctx.kwargs.get("alpha", 1)
    return g, (-g if alpha == 1 else g * -alpha)


def _d_mul(ctx, g):
    # PyTorch's convention: grad * conj(other) (conj_of: nothing for a real operand)
    a, b = ctx.args
    a, b = conj_of(a), conj_of(b)
    need = ctx.needs_input_grad
    return (g * b if need[0] else None), (g * a if len(need) > 1 and need[1] else None)


cpdef object conj_of(object x):
    """x conjugated when complex: what a derivative formula reads of a saved value under
    PyTorch's convention (the gradient is grad * conj(df/dz) for a holomorphic op)."""
    if isinstance(x, TensorBase):
        return x.conj() if (<TensorBase>x)._dtype.is_complex else x
    return x.conjugate() if isinstance(x, complex) else x


def _d_div(ctx, g):
    # grad / conj(other), -grad conj(self / other^2) (conj_of: nothing for a real operand)
    a, b = ctx.args
    a, b = conj_of(a), conj_of(b)
    need = ctx.needs_input_grad
    return (g / b if need[0] else None), \
        (-g * a / (b * b) if len(need) > 1 and need[1] else None)


derive_binary(op_add, _d_add, 0)
derive_binary(op_sub, _d_sub, 0)
derive_binary(op_mul, _d_mul, SAVE_INPUTS | SELF_FOR_OTHERS | OTHER_FOR_SELF)
derive_binary(op_div, _d_div, SAVE_INPUTS | SELF_FOR_OTHERS)
# where, not g * (y > 0): one select pass instead of a bool cast and a multiply (and 0,
# not NaN, where y is 0 and g NaN, as PyTorch's threshold_backward)
derive_unary(op_relu, lambda ctx, g: (where(ctx.result > 0, g, 0),), SAVE_RESULT)


# the dunders of ops whose families live in core/_math.pyx
cdef object inplace_dunder(Op op, TensorBase self, object other):
    """`self op= other` (`+=`, `-=`, `*=`, `/=`, `**=`): in place for a tensor or a scalar;
    NotImplemented for anything else (a NumPy array), so Python computes `self op other`
    and rebinds the name, as with PyTorch's."""
    if isinstance(other, TensorBase) or is_scalar(other):
        return binary_inplace(op, self, other, 1)
    return NotImplemented


cdef object operator_op(Op op, object a, object b):
    """A dunder (`==`, `<`, `//`, `%`, `&`, `<<`, ...): NotImplemented for operands ember
    does not know (so that `t == None` is False, as in Python and PyTorch); with a NumPy
    array, NumPy's result as a tensor (PyTorch: NumPy computes it, Tensor.__array_wrap__
    wraps it)."""
    if not (isinstance(b, TensorBase) or is_scalar(b)) or \
            not (isinstance(a, TensorBase) or is_scalar(a)):
        np = sys.modules.get("numpy")       # no array can exist before NumPy is imported
        fn = _PY_OPERATORS.get(op.name)
        if np is None or fn is None or not (isinstance(a, np.ndarray) or
                                            isinstance(b, np.ndarray)):
            return NotImplemented
        x = a.__array__() if isinstance(a, TensorBase) else a
        y = b.__array__() if isinstance(b, TensorBase) else b
        return from_numpy(np.asarray(fn(x, y)))
    return binary_op(op, a, b, 1, None)
