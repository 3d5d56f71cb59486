# Advanced indexing (PyTorch/NumPy rules): t[idx] and t[idx] = v with index tensors, lists,
# arrays and bools mixed with ints, slices, None and Ellipsis.
#
# The basic indices are applied first as a view (index_view records where each advanced
# index lands); bool masks become their nonzero() positions, one index per mask dim; the
# index tensors broadcast together to a shape B.  Adjacent advanced dims keep their place,
# separated ones move to the front (a permuted view).  The k indexed dims are merged into
# one (a view when the strides allow it) and the k indices into one linear index, so every
# case is a single gather (getitem) or scatter (setitem = index_put_) along one dim.

cdef Op op_index = Op("index", "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
                      FAMILY_INDEX, EMBER_INDEX_GATHER, None)
cdef Op op_index_put = Op("index_put", "index_put(Tensor self, Tensor?[] indices, Tensor "
                          "values, bool accumulate=False) -> Tensor", FAMILY_INDEX,
                          EMBER_INDEX_SCATTER, None)


cdef object as_index(object ix, device dev):
    """An advanced index as an int64 or bool tensor on `dev`; other items unchanged."""
    cdef TensorBase t
    if isinstance(ix, bool):
        return full((), ix, dtype=_dtypes.bool, device=dev)
    if isinstance(ix, TensorBase):
        t = <TensorBase>ix
    elif isinstance(ix, (list, range)) or is_array(ix):
        t = tensor(ix)
        if t.numel_c() == 0:           # [] indexes nothing: an empty int64 index
            t = cast_to(t, _dtypes.int64)
    else:
        return ix
    if t._dtype.is_floating_point:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if t._dtype.code == EMBER_UINT8:   # a byte tensor is a mask, as in PyTorch
        t = cast_to(t, _dtypes.bool)
    elif t._dtype.code != EMBER_BOOL:
        t = cast_to(t, _dtypes.int64)
    return to_c(t, dev, None, False) if t._device != dev else t


cdef tuple adv_plan(TensorBase t, tuple items):
    """(view, p, indices, B): the view has the advanced dims at p .. p+k-1 and `indices`
    holds k int64 tensors of the broadcast shape B indexing them."""
    items = tuple([as_index(ix, t._device) for ix in items])
    cdef list adv = []
    cdef TensorBase r = index_view(t, items, adv)
    cdef list dims = [], comps = []
    cdef TensorBase m
    cdef int j
    for d, ix in adv:
        m = <TensorBase>ix
        if m._dtype.code != EMBER_BOOL:
            dims.append(d)
            comps.append(m)
            continue
        for j in range(m._ndim):
            if m._sizes[j] != r._sizes[d + j]:
                raise IndexError(f"The shape of the mask {shape_str(m)} at index {j} does not "
                                 f"match the shape of the indexed tensor {shape_str(r)} at "
                                 f"index {d + j}")
        nz = nonzero(m, as_tuple=True)
        for j in range(len(nz)):
            dims.append(d + j)
            comps.append(nz[j])
    if not dims:                       # the callers send basic-only items elsewhere
        raise RuntimeError("index: no advanced index among the indices")
    shape = _rules.broadcast_shapes(*[c.shape for c in comps])
    comps = [expand_c(<TensorBase>c, (shape,)) for c in comps]
    cdef int k = len(dims), p = dims[0]
    if dims != list(range(p, p + k)):  # separated: the advanced dims go first
        r = permute_c(r, dims + [i for i in range(r._ndim) if i not in dims])
        p = 0
    return r, p, comps, tuple(shape)


cdef TensorBase linear_index(TensorBase r, int p, list comps):
    """One int64 index into the k merged dims; with k > 1 each index is checked and wrapped
    here (a single one is wrapped and checked by the kernel: EMBER_INDEX_WRAP)."""
    if len(comps) == 1:
        return reshape_c(<TensorBase>comps[0], ((-1,),))
    np = numpy()
    cdef TensorBase lin = None, c
    cdef int64_t n
    for j in range(len(comps)):
        c = comps[j]
        n = r._sizes[p + j]
        arr = host_array(c)
        bad = arr[(arr < -n) | (arr >= n)]
        if bad.size:
            raise IndexError(f"index {int(bad.flat[0])} is out of bounds for dimension {p + j} "
                             f"with size {n}")
        if (arr < 0).any():
            c = from_host_array(np.where(arr < 0, arr + n, arr), _dtypes.int64, c._device)
        lin = c if lin is None else binary_op(op_add, binary_op(op_mul, lin, n, 1, None), c,
                                              1, None)
    return reshape_c(lin, ((-1,),))


cdef TensorBase merged(TensorBase r, int p, int k):
    """r with dims p .. p+k-1 merged into one (a view when the strides allow it)."""
    shape = list(r.shape)
    n = 1
    for s in shape[p:p + k]:
        n *= s
    return reshape_c(r, (tuple(shape[:p] + [n] + shape[p + k:]),))


cpdef object adv_getitem(TensorBase t, tuple items):
    kernel = routed_n(op_index, (t,) + items)
    if kernel is not None:
        return kernel(t, items)
    if not has_advanced(items):        # 0-d integer indices only (a vmap loop's sample of
        return clone_c(index_view(t, items, None))      # a batched index): a copy, as index
    r, p, comps, shape = adv_plan(t, items)
    cdef int k = len(comps)
    cdef TensorBase g = index_select_c(merged(r, p, k), p, linear_index(r, p, comps),
                                       EMBER_INDEX_WRAP if k == 1 else 0, "index")
    out_shape = tuple(r.shape)[:p] + shape + tuple(r.shape)[p + k:]
    return reshape_c(g, (out_shape,))


cpdef object adv_setitem(TensorBase t, tuple items, object value, bint accumulate,
                         bint same_dtype, str op):
    """t[items] = value (+= with accumulate, duplicates adding up in order), in place."""
    refuse_limited_named("index_put", t._dtype)
    kernel = routed_n(op_index_put, (t, value) + items)
    if kernel is not None:
        return kernel(t, items, value, accumulate, same_dtype=same_dtype, op=op)
    if not has_advanced(items):        # 0-d integer indices only: one element or slice
        return basic_put(t, items, value, accumulate, op)
    r, p, comps, shape = adv_plan(t, items)
    cdef TensorBase view = r
    cdef int k = len(comps)
    cdef TensorBase lin = linear_index(view, p, comps)
    cdef TensorBase v
    if isinstance(value, TensorBase):
        v = <TensorBase>value
        if same_dtype and v._dtype is not t._dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, "
                               f"got {st_name(t._dtype)} for the destination and "
                               f"{st_name(v._dtype)} for the source.")
        v = cast_to(to_c(v, t._device, None, False), t._dtype)
        if v._storage is t._storage:
            v = clone_c(v)
    else:
        v = full((), value, dtype=t._dtype, device=t._device)
    target = tuple(view.shape)[:p] + shape + tuple(view.shape)[p + k:]
    try:
        v = expand_c(v, (target,))
    except RuntimeError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {shape_str(v)} cannot be "
                           f"broadcast to indexing result of shape {list(target)}") from None
    cdef TensorBase m = merged(view, p, k)
    index_update(m, p, lin, merged(v, p, len(shape)), EMBER_INDEX_SCATTER_ADD if accumulate
                 else EMBER_INDEX_SCATTER, False, EMBER_INDEX_WRAP if k == 1 else 0, op)
    if m._storage is not view._storage:    # the merge had to copy: write back
        copy_into(view, reshape_c(m, (view.shape,)), op)
    t.bump()
    return t


cdef TensorBase basic_put(TensorBase t, tuple items, object value, bint accumulate, str op):
    """t[items] = value (+= with accumulate) for items that are all basic, in place."""
    cdef TensorBase dst = index_view(t, items, None)
    if accumulate:
        copy_into(dst, binary_op(op_add, dst, value, 1, None), op)
    elif isinstance(value, TensorBase):
        copy_into(dst, <TensorBase>value, op)
    else:
        fill_c(dst, value)
    return t


cdef tuple put_items(object indices, str op):
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{op}(): argument 'indices' must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    return tuple([slice(None) if i is None else as_tensor_arg(i, op, "indices")
                  for i in indices])


def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` written at ``indices`` (a tuple of index
    tensors, as ``input[indices] = values``); ``accumulate`` adds instead."""
    cdef TensorBase a = clone_c(as_tensor_arg(input, "index_put", "input"))
    return _index_put_(a, indices, values, accumulate)


def _index_put_(TensorBase self, indices, values, accumulate=False):
    """In place: Tensor.index_put_."""
    cdef tuple items = put_items(indices, "index_put_")
    cdef TensorBase v = as_tensor_arg(values, "index_put_", "values")
    if has_advanced(items):
        return adv_setitem(self, items, v, accumulate, True, "index_put_")
    cdef TensorBase dst = index_view(self, items, None)       # only 0-d integer indices
    copy_into(dst, binary_op(op_add, dst, v, 1, None) if accumulate else v, "index_put_")
    return self


# --- derivatives (see _autograd_support.pxi) -------------------------------------------

def _d_index(ctx, g):
    z = zeros_for(g, ctx.shapes[0])
    adv_setitem(z, ctx.arg(1), g, True, False, "index")
    return (z,)


def _d_index_put(ctx, g):
    """t[items] = value (in place): the overwritten positions pass no gradient back to
    t's old values; value gets g at those positions (summed where it was broadcast)."""
    items, value, accumulate = ctx.arg(1), ctx.arg(2), ctx.arg(3)
    gt = g
    if not accumulate:
        gt = clone_c(g)
        adv_setitem(gt, items, 0.0, False, False, "index_put_")
    return gt, None, (adv_getitem(g, items) if isinstance(value, TensorBase) else None)


derive(op_index, _d_index, lambda t, items: adv_getitem(t, items), SAVE_INPUTS)
derive(op_index_put, _d_index_put,
       lambda t, items, value, accumulate=False, same_dtype=False, op="index_put_":
           adv_setitem(t, items, value, accumulate, same_dtype, op),
       SAVE_INPUTS | WRITES_SELF)
