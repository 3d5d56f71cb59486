# matmul with torch.matmul's rules: 1-D operands, batch broadcasting; the backend's
# `matmul` primitive sees three 3-d views [B, M, K] @ [B, K, N] -> [B, M, N].

cdef Op op_matmul = Op("matmul", "matmul(Tensor self, Tensor other) -> Tensor",
                       FAMILY_MATMUL, 0, _rules.matmul)


cdef int batch_view(TensorBase t, int nb, const int64_t* batch, int64_t r, int64_t c,
                    int64_t rs, int64_t cs, ember_view* v) except -1:
    """v = t as [B, r, c]; returns 0, or 1 if its batch dims do not fold into one stride."""
    t.view_c(v)
    cdef int i, j, shift = nb - (t._ndim - 2 if t._ndim >= 2 else 0)
    cdef int64_t bstride = 0, expect = -1, s
    cdef int64_t B = 1
    for i in range(nb - 1, -1, -1):
        j = i - shift
        s = t._strides[j] if j >= 0 and t._sizes[j] == batch[i] else 0
        if batch[i] != 1:
            if expect == -1:
                bstride = s
            elif s != expect:
                return 1
            expect = s * batch[i]
        B *= batch[i]
    v.ndim = 3
    v.sizes[0], v.sizes[1], v.sizes[2] = B, r, c
    v.strides[0], v.strides[1], v.strides[2] = bstride, rs, cs
    return 0


def matmul(input, other, *, out=None):
    """Matrix product with torch.matmul's rules (1-D operands, broadcast batch dims)."""
    cdef TensorBase a = as_tensor_arg(input, "matmul", "input")
    cdef TensorBase b = as_tensor_arg(other, "matmul", "other")
    cdef int k = op_matmul.resolve(effective_keys(a._keys | b._keys))
    if (op_matmul._kernel_mask >> k) & 1:
        return op_matmul._table[k](a, b, out=out)
    if a._ndim == 0 or b._ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a._ndim}D and {b._ndim}D")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a._dtype.np_dtype if a._dtype.np_dtype is not None else a._dtype.name}"
                           f" != {b._dtype.np_dtype if b._dtype.np_dtype is not None else b._dtype.name}")
    if a._device != b._device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {a._device} and {b._device}!")
    if a._dtype.is_complex:
        return complex_ops().matmul(a, b, out)
    # matrix extents and strides; a 1-D `a` is a row [1, K], a 1-D `b` a column [K, 1]
    cdef int64_t M, K, K2, N, ars, acs, brs, bcs
    if a._ndim == 1:
        M, K, acs = 1, a._sizes[0], a._strides[0]
        ars = acs * K if K else 1       # any stride does for one row; keep BLAS happy
    else:
        M, K = a._sizes[a._ndim - 2], a._sizes[a._ndim - 1]
        ars, acs = a._strides[a._ndim - 2], a._strides[a._ndim - 1]
    if b._ndim == 1:
        K2, N, brs = b._sizes[0], 1, b._strides[0]
        bcs = brs * K2 if K2 else 1
    else:
        K2, N = b._sizes[b._ndim - 2], b._sizes[b._ndim - 1]
        brs, bcs = b._strides[b._ndim - 2], b._strides[b._ndim - 1]
    if K != K2:
        if a._ndim == 1 and b._ndim == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{K}] and src [{K2}] "
                               f"to have the same number of elements, but got {K} and {K2} "
                               f"elements respectively")
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({M}x{K} and {K2}x{N})")
    # broadcast batch dims
    cdef int na = a._ndim - 2 if a._ndim > 2 else 0, nbb = b._ndim - 2 if b._ndim > 2 else 0
    cdef int nb = max(na, nbb), i
    cdef int64_t batch[MAX_DIM]
    cdef int64_t osizes[MAX_DIM]
    cdef int64_t s
    for i in range(nb):
        batch[i] = 1
    for i in range(na):
        batch[nb - na + i] = a._sizes[i]
    for i in range(nbb):
        s = b._sizes[i]
        if batch[nb - nbb + i] == 1:
            batch[nb - nbb + i] = s
        elif s != 1 and s != batch[nb - nbb + i]:
            raise RuntimeError(f"The size of tensor a ({batch[nb - nbb + i]}) must match the "
                               f"size of tensor b ({s}) at non-singleton dimension {i}")
    cdef int on = 0
    for i in range(nb):
        osizes[on] = batch[i]
        on += 1
    if a._ndim > 1:
        osizes[on] = M
        on += 1
    if b._ndim > 1:
        osizes[on] = N
        on += 1
    grant_out_write(out, a, b)
    cdef TensorBase o = prepare_out(out, on, osizes, a._dtype, a._device, "matmul")
    if o._backend.is_meta:
        return o
    cdef TensorBase dst = o if o.contiguous_c() and o._dtype is a._dtype else \
        empty_c(on, osizes, a._dtype, o._device)
    cdef ember_view va, vb, vo
    if batch_view(a, nb, batch, M, K, ars, acs, &va):
        a = contiguous_copy(expand_c(a, tuple([batch[i] for i in range(nb)] + [M, K])))
        batch_view(a, nb, batch, M, K, a._strides[a._ndim - 2], 1, &va)
    if batch_view(b, nb, batch, K, N, brs, bcs, &vb):
        b = contiguous_copy(expand_c(b, tuple([batch[i] for i in range(nb)] + [K, N])))
        batch_view(b, nb, batch, K, N, b._strides[b._ndim - 2], 1, &vb)
    dst.view_c(&vo)
    vo.ndim = 3
    vo.sizes[0], vo.sizes[1], vo.sizes[2] = va.sizes[0], M, N
    vo.strides[0], vo.strides[1], vo.strides[2] = M * N, N, 1
    cdef ember_kernel_table* t = o._backend.kernels()
    cdef ember_ctx ctx
    init_ctx(&ctx, o)
    cdef int rc
    with nogil:
        rc = t.matmul(&ctx, &vo, &va, &vb)
    if rc:
        raise_kernel_error(rc, &ctx)
    if dst is not o:
        run_copy(o, dst)
    if out is not None:
        o.bump()
    return o


# --- derivative (see _autograd_support.pxi) --------------------------------------------

cdef bint column_major(TensorBase t):
    """A 2-D tensor laid out as the transpose of a contiguous one (a Linear's weight.t())."""
    return t._ndim == 2 and t._strides[0] == 1 and t._strides[1] == t._sizes[0]


def _d_matmul(ctx, g):
    """1-D operands are a row / a column, as in the forward; broadcast batch dims are
    summed away by the engine.  A column-major 2-D operand gets its gradient in its own
    layout (the product computed transposed, as PyTorch's mm backward does), so that
    gradient reaches the contiguous tensor behind it contiguous: accumulating a strided
    gradient into a weight's .grad is several times slower."""
    # PyTorch's convention: g @ other^H, self^H @ g (conj_of: nothing for a real operand)
    a, b = ctx.args
    a, b = conj_of(a), conj_of(b)
    need = ctx.needs_input_grad
    if a.dim() == 1 and b.dim() == 1:
        return g * b, g * a
    a2 = unsqueeze_c(a, 0) if a.dim() == 1 else a
    b2 = unsqueeze_c(b, -1) if b.dim() == 1 else b
    g2 = unsqueeze_c(g, -2) if a.dim() == 1 else g
    g2 = unsqueeze_c(g2, -1) if b.dim() == 1 else g2
    ga = gb = None
    if need[0]:
        if column_major(a2) and b2.dim() == 2:
            ga = transpose_c(matmul(b2, transpose_c(g2, 0, 1)), 0, 1)
        else:
            ga = matmul(g2, transpose_c(b2, -2, -1))
        ga = squeeze_c(ga, -2) if a.dim() == 1 else ga
    if len(need) > 1 and need[1]:
        if b.dim() == 2 and a2.dim() > 2:
            # a batch of rows against one matrix (linear over [B, T, K]): the weight's
            # gradient is one product over every row, not a product per batch summed later
            a2 = reshape_c(a2, ((-1, a2.shape[-1]),))
            g2 = reshape_c(g2, ((-1, g2.shape[-1]),))
        if column_major(b2) and a2.dim() == 2:
            gb = transpose_c(matmul(transpose_c(g2, 0, 1), a2), 0, 1)
        else:
            gb = matmul(transpose_c(a2, -2, -1), g2)
        gb = squeeze_c(gb, -1) if b.dim() == 1 else gb
    return ga, gb


derive(op_matmul, _d_matmul, lambda a, b, out=None: matmul(a, b, out=out), SAVE_INPUTS)
