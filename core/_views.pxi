# View ops: metadata only, one implementation for every device.  A view shares its
# base's storage and version counter and records `_base`.

# Every view op goes through the dispatcher: a kernel registered at a key the tensor
# carries (autograd, a mode, a backend override) runs instead of the core's metadata view.
cdef Op op_view = Op("view", "view(Tensor(a) self, SymInt[] size) -> Tensor(a)", FAMILY_VIEW,
                     0, _rules.infer_view_shape)
cdef Op op_reshape = Op("reshape", "reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
                        FAMILY_VIEW, 0, _rules.infer_view_shape)
cdef Op op_permute = Op("permute", "permute(Tensor(a) self, int[] dims) -> Tensor(a)",
                        FAMILY_VIEW, 0, None)
cdef Op op_transpose = Op("transpose", "transpose(Tensor(a) self, int dim0, int dim1) -> "
                          "Tensor(a)", FAMILY_VIEW, 0, None)
cdef Op op_expand = Op("expand", "expand(Tensor(a) self, SymInt[] size) -> Tensor(a)",
                       FAMILY_VIEW, 0, None)
cdef Op op_squeeze = Op("squeeze", "squeeze(Tensor(a) self, int[]? dim=None) -> Tensor(a)",
                        FAMILY_VIEW, 0, None)
cdef Op op_unsqueeze = Op("unsqueeze", "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
                          FAMILY_VIEW, 0, None)
cdef Op op_narrow = Op("narrow", "narrow(Tensor(a) self, int dim, SymInt start, SymInt length, "
                       "int step=1) -> Tensor(a)", FAMILY_VIEW, 0, None)
cdef Op op_select = Op("select", "select(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
                       FAMILY_VIEW, 0, None)
cdef Op op_diagonal = Op("diagonal", "diagonal(Tensor(a) self, int offset=0, int dim1=0, "
                         "int dim2=1) -> Tensor(a)", FAMILY_VIEW, 0, None)
cdef Op op_as_strided = Op("as_strided", "as_strided(Tensor(a) self, SymInt[] size, "
                           "SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)",
                           FAMILY_VIEW, 0, None)


cdef bint view_strides(TensorBase t, int nd, const int64_t* shape, int64_t* strides):
    """PyTorch's computeStride: strides for viewing t as `shape` without a copy, if any."""
    cdef int64_t numel = t.numel_c()
    if numel == 0:
        contiguous_strides(nd, shape, strides)
        return True
    cdef int64_t one = 1
    cdef const int64_t* osz = t._sizes
    cdef const int64_t* ost = t._strides
    cdef int ond = t._ndim
    if ond == 0:
        osz = &one
        ost = &one
        ond = 1
    cdef int view_d = nd - 1
    cdef int64_t chunk = ost[ond - 1], tensor_numel = 1, view_numel = 1
    cdef int d
    for d in range(ond - 1, -1, -1):
        tensor_numel *= osz[d]
        if d == 0 or (osz[d - 1] != 1 and ost[d - 1] != tensor_numel * chunk):
            while view_d >= 0 and (view_numel < tensor_numel or shape[view_d] == 1):
                strides[view_d] = view_numel * chunk
                view_numel *= shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return False
            if d > 0:
                chunk = ost[d - 1]
                tensor_numel = 1
                view_numel = 1
    return view_d == -1


cdef int resolve_shape(TensorBase t, tuple args, int64_t* shape, str op) except -1:
    cdef int nd = parse_shape(args, shape, op)
    cdef int i, infer = -1
    cdef int64_t known = 1, numel = t.numel_c()
    for i in range(nd):
        if shape[i] == -1:
            if infer >= 0:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif shape[i] < 0:
            raise RuntimeError(f"invalid shape dimension {shape[i]}")
        else:
            known *= shape[i]
    if infer >= 0:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(args[0] if len(args) == 1 else args)}' is "
                               f"invalid for input of size {numel}")
        shape[infer] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{[shape[i] for i in range(nd)]}' is invalid for input "
                           f"of size {numel}")
    return nd


cdef TensorBase view_c(TensorBase t, tuple args):
    kernel = routed(op_view, t)
    if kernel is not None:
        return kernel(t, *args)
    cdef int64_t shape[MAX_DIM]
    cdef int64_t strides[MAX_DIM]
    cdef int nd = resolve_shape(t, args, shape, "view")
    if not view_strides(t, nd, shape, strides):
        raise RuntimeError("view size is not compatible with input tensor's size and stride "
                           "(at least one dimension spans across two contiguous subspaces). "
                           "Use .reshape(...) instead.")
    return make_view(t, nd, shape, strides, t._offset)


cdef TensorBase view_dtype_c(TensorBase t, dtype dt):
    """t's bytes reinterpreted as dtype `dt` (Tensor.view(dtype)): the last dim scales by
    the itemsize ratio, as PyTorch does (a vmap wrapper's batch reinterpreted alike)."""
    if t._bt is not None:
        return _make_batched(view_dtype_c(<TensorBase>t._bt.value, dt), t._bt.level)
    cdef int old = t._dtype.itemsize, new = dt.itemsize, i
    cdef int64_t sizes[MAX_DIM]
    cdef int64_t strides[MAX_DIM]
    memcpy(sizes, t._sizes, t._ndim * sizeof(int64_t))
    memcpy(strides, t._strides, t._ndim * sizeof(int64_t))
    cdef int64_t offset = t._offset
    cdef TensorBase r
    if old != new:
        if t._ndim == 0:
            raise RuntimeError("self.dim() cannot be 0 to view "
                               f"{st_name(t._dtype)} as {st_name(dt)} (different element sizes)")
        if t._strides[t._ndim - 1] != 1:
            raise RuntimeError("self.stride(-1) must be 1 to view "
                               f"{st_name(t._dtype)} as {st_name(dt)} (different element sizes), "
                               f"but got {t._strides[t._ndim - 1]}")
        if new > old:
            ratio = new // old
            if sizes[t._ndim - 1] % ratio or offset % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to view "
                                   f"{st_name(t._dtype)} as {st_name(dt)} (different element "
                                   "sizes), and so must the storage offset")
            for i in range(t._ndim - 1):
                if strides[i] % ratio:
                    raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} to view "
                                       f"{st_name(t._dtype)} as {st_name(dt)} (different "
                                       "element sizes)")
                strides[i] //= ratio
            sizes[t._ndim - 1] //= ratio
            offset //= ratio
        else:
            ratio = old // new
            for i in range(t._ndim - 1):
                strides[i] *= ratio
            sizes[t._ndim - 1] *= ratio
            offset *= ratio
    r = make_view(t, t._ndim, sizes, strides, offset)
    r._dtype = dt
    return r


cdef TensorBase reshape_c(TensorBase t, tuple args):
    kernel = routed(op_reshape, t)
    if kernel is not None:
        return kernel(t, *args)
    cdef int64_t shape[MAX_DIM]
    cdef int64_t strides[MAX_DIM]
    cdef int nd = resolve_shape(t, args, shape, "reshape")
    if view_strides(t, nd, shape, strides):
        return make_view(t, nd, shape, strides, t._offset)
    cdef TensorBase c = contiguous_copy(t)
    contiguous_strides(nd, shape, strides)
    return new_tensor(c._storage, c._dtype, nd, shape, strides, 0)


cdef TensorBase permute_c(TensorBase t, object dims):
    kernel = routed(op_permute, t)
    if kernel is not None:
        return kernel(t, dims)
    cdef int n = t._ndim
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input "
                           f"does not match the length of the desired ordering of dimensions "
                           f"i.e. input.dim() = {n} is not equal to len(dims) = {len(dims)}")
    cdef int64_t sizes[MAX_DIM]
    cdef int64_t strides[MAX_DIM]
    cdef bint seen[MAX_DIM]
    cdef int i, d
    memset(seen, 0, sizeof(seen))
    for i in range(n):
        d = wrap_dim(dims[i], n, "permute")
        if seen[d]:
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        seen[d] = True
        sizes[i] = t._sizes[d]
        strides[i] = t._strides[d]
    return make_view(t, n, sizes, strides, t._offset)


cdef TensorBase transpose_c(TensorBase t, object dim0, object dim1):
    kernel = routed(op_transpose, t)
    if kernel is not None:
        return kernel(t, dim0, dim1)
    cdef int a = wrap_dim(dim0, t._ndim, "transpose"), b = wrap_dim(dim1, t._ndim, "transpose")
    cdef int64_t sizes[MAX_DIM]
    cdef int64_t strides[MAX_DIM]
    if t._ndim == 0:
        return make_view(t, 0, sizes, strides, t._offset)
    memcpy(sizes, t._sizes, t._ndim * sizeof(int64_t))
    memcpy(strides, t._strides, t._ndim * sizeof(int64_t))
    sizes[a], sizes[b] = sizes[b], sizes[a]
    strides[a], strides[b] = strides[b], strides[a]
    return make_view(t, t._ndim, sizes, strides, t._offset)


cdef TensorBase expand_c(TensorBase t, tuple args):
    kernel = routed(op_expand, t)
    if kernel is not None:
        return kernel(t, *args)
    cdef int64_t want[MAX_DIM]
    cdef int64_t strides[MAX_DIM]
    cdef int nd = parse_shape(args, want, "expand")
    if nd < t._ndim:
        raise RuntimeError(f"expand(size={[want[i] for i in range(nd)]}): the number of sizes provided ({nd}) must be greater or equal to "
                           f"the number of dimensions in the tensor ({t._ndim})")
    cdef int i, j
    for i in range(nd - 1, -1, -1):
        j = i - (nd - t._ndim)
        if j >= 0:
            if want[i] == -1:
                want[i] = t._sizes[j]
            if t._sizes[j] == want[i]:
                strides[i] = t._strides[j]
            elif t._sizes[j] == 1:
                strides[i] = 0
            else:
                raise RuntimeError(
                    f"The expanded size of the tensor ({want[i]}) must match the existing size "
                    f"({t._sizes[j]}) at non-singleton dimension {i}.  Target sizes: "
                    f"{[want[k] for k in range(nd)]}.  Tensor sizes: {list(t.shape)}")
        else:
            if want[i] < 0:
                raise RuntimeError(f"The expanded size of the tensor ({want[i]}) isn't allowed "
                                   f"in a leading, non-existing dimension {i}")
            strides[i] = 0
    return make_view(t, nd, want, strides, t._offset)


cdef TensorBase squeeze_c(TensorBase t, object dim):
    kernel = routed(op_squeeze, t)
    if kernel is not None:
        return kernel(t, dim)
    cdef int64_t sizes[MAX_DIM]
    cdef int64_t strides[MAX_DIM]
    cdef bint drop[MAX_DIM]
    cdef int i, n = 0
    memset(drop, 0, sizeof(drop))
    if dim is None:
        for i in range(t._ndim):
            drop[i] = t._sizes[i] == 1
    else:
        for d in (dim if isinstance(dim, (tuple, list)) else (dim,)):
            i = wrap_dim(d, t._ndim, "squeeze")
            if t._ndim:
                drop[i] = t._sizes[i] == 1
    for i in range(t._ndim):
        if not drop[i]:
            sizes[n] = t._sizes[i]
            strides[n] = t._strides[i]
            n += 1
    return make_view(t, n, sizes, strides, t._offset)


cdef TensorBase unsqueeze_c(TensorBase t, object dim):
    kernel = routed(op_unsqueeze, t)
    if kernel is not None:
        return kernel(t, dim)
    cdef int d = wrap_dim(dim, t._ndim + 1, "unsqueeze")
    if t._ndim + 1 > MAX_DIM:
        raise RuntimeError(f"unsqueeze(): ember supports at most {MAX_DIM} dimensions")
    cdef int64_t sizes[MAX_DIM]
    cdef int64_t strides[MAX_DIM]
    cdef int i, j = 0
    for i in range(t._ndim + 1):
        if i == d:
            sizes[i] = 1
            strides[i] = t._strides[d] * t._sizes[d] if d < t._ndim else 1
        else:
            sizes[i] = t._sizes[j]
            strides[i] = t._strides[j]
            j += 1
    return make_view(t, t._ndim + 1, sizes, strides, t._offset)


cdef TensorBase narrow_c(TensorBase t, object dim, int64_t start, int64_t length, int64_t step):
    kernel = routed(op_narrow, t)
    if kernel is not None:      # basic indexing's stepped slices pass `step` too
        return kernel(t, dim, start, length) if step == 1 else kernel(t, dim, start, length, step)
    if t._ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    cdef int d = wrap_dim(dim, t._ndim, "narrow")
    cdef int64_t size = t._sizes[d]
    if start < 0:
        start += size
    if start < 0 or start > size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    cdef int64_t sizes[MAX_DIM]
    cdef int64_t strides[MAX_DIM]
    memcpy(sizes, t._sizes, t._ndim * sizeof(int64_t))
    memcpy(strides, t._strides, t._ndim * sizeof(int64_t))
    sizes[d] = (length + step - 1) // step
    strides[d] = t._strides[d] * step
    return make_view(t, t._ndim, sizes, strides, t._offset + start * t._strides[d])


cdef TensorBase select_c(TensorBase t, object dim, int64_t index):
    kernel = routed(op_select, t)
    if kernel is not None:
        return kernel(t, dim, index)
    if t._ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    cdef int d = wrap_dim(dim, t._ndim, "select")
    cdef int64_t size = t._sizes[d]
    if index < -size or index >= size:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {size}")
    if index < 0:
        index += size
    cdef int64_t sizes[MAX_DIM]
    cdef int64_t strides[MAX_DIM]
    cdef int i, j = 0
    for i in range(t._ndim):
        if i != d:
            sizes[j] = t._sizes[i]
            strides[j] = t._strides[i]
            j += 1
    return make_view(t, t._ndim - 1, sizes, strides, t._offset + index * t._strides[d])


cdef TensorBase diagonal_c(TensorBase t, int64_t offset, object dim1, object dim2):
    kernel = routed(op_diagonal, t)
    if kernel is not None:
        return kernel(t, offset, dim1, dim2)
    cdef int a = wrap_dim(dim1, t._ndim, "diagonal"), b = wrap_dim(dim2, t._ndim, "diagonal")
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    cdef int64_t n, start = t._offset
    if offset >= 0:
        n = max(0, min(t._sizes[a], t._sizes[b] - offset))
        if n:
            start += offset * t._strides[b]
    else:
        n = max(0, min(t._sizes[a] + offset, t._sizes[b]))
        if n:
            start -= offset * t._strides[a]
    cdef int64_t sizes[MAX_DIM]
    cdef int64_t strides[MAX_DIM]
    cdef int i, j = 0
    for i in range(t._ndim):
        if i != a and i != b:
            sizes[j] = t._sizes[i]
            strides[j] = t._strides[i]
            j += 1
    sizes[j] = n
    strides[j] = t._strides[a] + t._strides[b]
    return make_view(t, t._ndim - 1, sizes, strides, start)


cdef TensorBase as_strided_c(TensorBase t, object size, object stride, object storage_offset):
    kernel = routed(op_as_strided, t)
    if kernel is not None:
        return kernel(t, size, stride, storage_offset)
    cdef int64_t sizes[MAX_DIM]
    cdef int64_t strides[MAX_DIM]
    cdef int nd = parse_shape((size,), sizes, "as_strided")
    if parse_shape((stride,), strides, "as_strided") != nd:
        raise RuntimeError(f"mismatch in length of strides and shape")
    cdef int64_t off = t._offset if storage_offset is None else storage_offset
    cdef int64_t hi = off, i, span
    if off < 0:
        raise RuntimeError(f"as_strided: Negative storage offset {off}")
    cdef bint empty = False, overflow = False
    for i in range(nd):
        if sizes[i] < 0 or strides[i] < 0:
            raise RuntimeError("as_strided: negative sizes and strides are not supported")
        empty = empty or sizes[i] == 0
        if sizes[i] > 0:
            overflow = overflow or mul_overflow(sizes[i] - 1, strides[i], &span) \
                or __builtin_add_overflow(hi, span, &hi)
    if not empty and (overflow or mul_overflow(hi + 1, t._dtype.itemsize, &span)
                      or span > t._storage._nbytes):
        raise RuntimeError(
            f"setStorage: sizes {[sizes[k] for k in range(nd)]}, strides "
            f"{[strides[k] for k in range(nd)]}, storage offset {off}, and itemsize "
            f"{t._dtype.itemsize} are out of bounds for storage of size "
            f"{t._storage._nbytes}")
    return make_view(t, nd, sizes, strides, off)


def movedim(TensorBase input, source, destination):
    """Move the dims ``source`` of ``input`` to the positions ``destination``."""
    src = [source] if not isinstance(source, (tuple, list)) else list(source)
    dst = [destination] if not isinstance(destination, (tuple, list)) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    n = input._ndim
    src = [wrap_dim(d, n, "movedim") for d in src]
    dst = [wrap_dim(d, n, "movedim") for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError("movedim: repeated dim in `source` or `destination`")
    order = [-1] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    order = [o if o != -1 else next(rest) for o in order]
    return permute_c(input, order)


def flatten(TensorBase input, start_dim=0, end_dim=-1):
    """Flatten dims ``start_dim`` .. ``end_dim`` into one (a view when possible)."""
    if input._ndim == 0:
        return reshape_c(input, ((1,),))
    s = wrap_dim(start_dim, input._ndim, "flatten")
    e = wrap_dim(end_dim, input._ndim, "flatten")
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = list(input.shape)
    return reshape_c(input, (tuple(shape[:s] + [-1] + shape[e + 1:]),))


def unflatten(TensorBase input, dim, sizes):
    """Expand dim ``dim`` of ``input`` into ``sizes`` (one may be -1)."""
    d = wrap_dim(dim, input._ndim, "unflatten")
    sizes = list(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    inner = _rules.infer_view_shape(sizes, input._sizes[d]) if -1 in sizes else tuple(sizes)
    prod = 1
    for s in inner:
        prod *= s
    if prod != input._sizes[d]:
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size "
                           f"of dim {dim} ({input._sizes[d]}) in the input tensor")
    shape = list(input.shape)
    return view_c(input, (tuple(shape[:d] + list(inner) + shape[d + 1:]),))


# --- basic indexing: ints, slices (positive steps), None, Ellipsis --------------------
# (index tensors, lists and bools are advanced indexing: _advindex.pxi)

cdef TensorBase index_view(TensorBase t, tuple index, list adv):
    """t with the basic indices of `index` applied, as a view.  Advanced indices (index
    tensors, converted by the caller: int64 or bool) are skipped and recorded in `adv` as
    (dim of the view they index, tensor); a 0-d bool adds a dim of size 1 first."""
    cdef int consumed = 0
    cdef bint ellipsis = False
    for ix in index:
        if ix is Ellipsis:
            pass
        elif ix is not None:
            consumed += mask_dims(ix) if adv is not None else 1
    if consumed > t._ndim:
        raise IndexError(f"too many indices for tensor of dimension {t._ndim}")
    cdef TensorBase r = t
    cdef int d = 0
    cdef int64_t start, stop, step, size
    for ix in index:
        if ix is Ellipsis:
            # the first `...` stands for every dim the other indices leave; a later one, for
            # none (PyTorch's rule: x[..., 0, ...] is x[..., 0])
            if not ellipsis:
                d += t._ndim - consumed
            ellipsis = True
        elif ix is None:
            r = unsqueeze_c(r, d)
            d += 1
        elif adv is not None and is_index_tensor(ix):
            if (<TensorBase>ix)._ndim == 0 and (<TensorBase>ix)._dtype.code == EMBER_BOOL:
                r = unsqueeze_c(r, d)
            adv.append((d, ix))
            d += max(1, mask_dims(ix))
        elif isinstance(ix, slice):
            size = r._sizes[d]
            step = 1 if ix.step is None else ix.step.__index__()
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start, stop, _ = slice(ix.start, ix.stop, 1).indices(size)
            r = narrow_c(r, d, start, max(0, stop - start), step)
            d += 1
        elif hasattr(ix, "__index__"):
            if isinstance(ix, TensorBase) and (<TensorBase>ix)._dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            r = select_c(r, d, ix.__index__())
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"byte Variables are valid indices (got {type(ix).__name__})")
    if r is t:                        # t[...] / t[()]: an alias, on the autograd path too
        return view_c(t, (t.shape,))
    return r


cdef tuple index_items(object index):
    """t[index]'s indices as a tuple: a tuple as is; a list shorter than 32 that holds a
    sequence, a slice, Ellipsis, None or a tensor read as a tuple, with PyTorch's warning
    (NumPy's old rule, which PyTorch keeps); anything else as one index."""
    if isinstance(index, tuple):
        return index
    if type(index) is list and len(index) < 32:
        for x in index:
            if x is None or x is Ellipsis or isinstance(x, (slice, list, tuple, TensorBase)):
                import warnings
                warnings.warn("Using a non-tuple sequence for multidimensional indexing is "
                              "deprecated and will be changed in pytorch 2.9; use "
                              "x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
                              "interpreted as tensor index, x[torch.tensor(seq)], which will "
                              "result either in an error or a different result",
                              UserWarning, stacklevel=3)
                return tuple(index)
    return (index,)


cdef object getitem(TensorBase t, object index):
    cdef tuple items = index_items(index)
    if has_advanced(items):
        return adv_getitem(t, items)
    return index_view(t, items, None)


cdef object setitem(TensorBase t, object index, object value):
    cdef tuple items
    cdef TensorBase v
    cdef int lead = 0
    if type(index) is bool:
        # x[True] = v is PyTorch's basic copy into x[None] (v cast to x's dtype); x[False] = v
        # writes nothing and checks nothing
        if index:
            setitem(t, None, value)
        return
    items = index_items(index)
    if isinstance(value, TensorBase):
        # a value's leading size-1 dims are dropped first (PyTorch's slicePrefix1sSize):
        # x[0] = ones(1, 1, n) writes a row
        v = <TensorBase>value
        while lead < v._ndim and v._sizes[lead] == 1:
            lead += 1
        if lead:
            value = view_c(v, (tuple(v.shape[lead:]),))
    if has_advanced(items):
        if len(items) == 1 and is_bool_mask(items[0]) and \
                isinstance(value, TensorBase) and (<TensorBase>value).numel_c() == 1 and \
                (<TensorBase>value)._dtype is not t._dtype:
            # x[mask] = one-element tensor: PyTorch's masked_fill path, which casts it
            value = value.to(t._dtype)
        adv_setitem(t, items, value, False, True, "index_put_")
        return
    cdef TensorBase dst = index_view(t, items, None)
    if isinstance(value, TensorBase):
        copy_into(dst, <TensorBase>value, "copy_")
    else:
        fill_c(dst, value)


cdef bint is_bool_mask(object ix):
    """A boolean mask index: a bool tensor, a list of Python bools, a bool array."""
    if isinstance(ix, TensorBase):
        return (<TensorBase>ix)._dtype.code == EMBER_BOOL
    if type(ix) is list:
        return len(ix) > 0 and all(type(b) is bool for b in ix)
    return is_array(ix) and str(getattr(ix, "dtype", "")) == "bool"


# function forms (torch.reshape, torch.permute, ...)

def reshape(input, shape):
    """``input`` with shape ``shape``: a view when possible, else a copy."""
    return reshape_c(as_tensor_arg(input, "reshape", "input"), (shape,))


def permute(input, dims):
    return permute_c(as_tensor_arg(input, "permute", "input"), dims)


def transpose(input, dim0, dim1):
    return transpose_c(as_tensor_arg(input, "transpose", "input"), dim0, dim1)


swapaxes = swapdims = transpose


def t(input):
    return as_tensor_arg(input, "t", "input").t()


def squeeze(input, dim=None, *, axis=None):
    if axis is not None:
        dim, _ = _numpy_names("squeeze", dim, False, axis, None)
    return squeeze_c(as_tensor_arg(input, "squeeze", "input"), dim)


def unsqueeze(input, dim=None, *, axis=None):
    if dim is None or axis is not None:
        dim = _dim_or_axis("unsqueeze", dim, axis)
    return unsqueeze_c(as_tensor_arg(input, "unsqueeze", "input"), dim)


def narrow(input, dim, start, length):
    return narrow_c(as_tensor_arg(input, "narrow", "input"), dim, start, length, 1)


def select(input, dim=None, index=None, *, axis=None):
    if dim is None or axis is not None:
        dim = _dim_or_axis("select", dim, axis)
    if index is None:
        raise TypeError("select() missing 1 required positional argument: 'index'")
    return select_c(as_tensor_arg(input, "select", "input"), dim, index)


def diagonal(input, offset=0, dim1=0, dim2=1):
    return diagonal_c(as_tensor_arg(input, "diagonal", "input"), offset, dim1, dim2)


def as_strided(input, size, stride, storage_offset=None):
    return as_strided_c(as_tensor_arg(input, "as_strided", "input"), size, stride,
                        storage_offset)


def clone(input, *, memory_format=None):
    """A copy of ``input`` (``memory_format`` picks its strides: preserve_format keeps a
    dense tensor's)."""
    cdef TensorBase t = as_tensor_arg(input, "clone", "input")
    if memory_format is None and t.contiguous_c() and t.numel_c():
        return clone_c(t)
    from ember.core import memory_format as _mf
    strides = _mf.strides_for(t, memory_format, "clone")
    if strides is None:
        return clone_c(t)
    return restrided(new_empty((t.shape,), t._dtype, t._device, "clone"), strides).copy_(t)


def numel(input):
    return as_tensor_arg(input, "numel", "input").numel_c()


def is_tensor(obj):
    """True if ``obj`` is an ember tensor."""
    return isinstance(obj, TensorBase)


def is_floating_point(input):
    return as_tensor_arg(input, "is_floating_point", "input")._dtype.is_floating_point


# --- derivatives (see _autograd_support.pxi): views hand the gradient back through the
# inverse view; slicing views write it into the matching region of zeros ---------------

cdef object into_zeros(object g, object shape, object region):
    """zeros(shape) with g written into region(zeros)."""
    z = zeros_for(g, shape)
    region(z).copy_(g)
    return z


def _d_narrow(ctx, g):
    _, dim, start, length, *step = ctx.args
    return (into_zeros(g, ctx.shapes[0],
                       lambda z: narrow_c(z, dim, start, length, step[0] if step else 1)),)


def _d_select(ctx, g):
    _, dim, index = ctx.args
    return (into_zeros(g, ctx.shapes[0], lambda z: select_c(z, dim, index)),)


def _d_diagonal(ctx, g):
    _, offset, d1, d2 = ctx.args
    return (into_zeros(g, ctx.shapes[0], lambda z: diagonal_c(z, offset, d1, d2)),)


def _d_permute(ctx, g):
    dims = ctx.args[1]
    cdef int n = len(dims)
    inv = [0] * n
    for i in range(n):
        inv[wrap_dim(dims[i], n, "permute")] = i
    return (permute_c(g, inv),)


def _d_as_strided(ctx, g):
    # the input's geometry only: its values may have changed since (no version check)
    size, stride, off = ctx.arg(1), ctx.arg(2), ctx.arg(3)
    shape, strides, t_off = ctx.saved_geometry(0)
    cdef int64_t span = 0 if 0 in shape else 1   # (`sum` is ember's sum in this module)
    for s, st in zip(shape, strides):
        span += (s - 1) * st if span else 0
    buf = zeros_for(g, (span,))
    start = (t_off if off is None else off) - t_off
    if overlapping(size, stride):
        # windows that share elements: each element sums the gradients of all its reads
        import numpy as np

        from ember.core._factories import tensor
        where = np.full((), start, np.int64)
        for n, st in zip(size, stride):
            where = where[..., None] + np.arange(n, dtype=np.int64) * st
        index = tensor(where.reshape(-1), device=g.device)
        buf.index_add_(0, index, g.reshape(-1))
    else:
        as_strided_c(buf, size, stride, start).copy_(g)
    return (as_strided_c(buf, shape, strides, 0),)


cdef bint overlapping(object size, object stride):
    """Whether a view of these sizes and strides reads some element twice: with its dims
    sorted by stride, each stride must pass the span of the dims before it."""
    cdef int64_t reach = 0
    for st, n in sorted((abs(st), n) for n, st in zip(size, stride) if n > 1):
        if st <= reach:
            return True
        reach += (n - 1) * st
    return False


derive(op_view, lambda ctx, g: (reshape_c(g, (ctx.shapes[0],)),),
       lambda t, *args: view_c(t, args), 0)
derive(op_reshape, lambda ctx, g: (reshape_c(g, (ctx.shapes[0],)),),
       lambda t, *args: reshape_c(t, args), 0)
derive(op_permute, _d_permute, lambda t, dims: permute_c(t, dims), 0)
derive(op_transpose, lambda ctx, g: (transpose_c(g, ctx.args[1], ctx.args[2]),),
       lambda t, d0, d1: transpose_c(t, d0, d1), 0)
derive(op_expand, lambda ctx, g: (g,), lambda t, *args: expand_c(t, args), 0)
derive(op_squeeze, lambda ctx, g: (reshape_c(g, (ctx.shapes[0],)),),
       lambda t, dim: squeeze_c(t, dim), 0)
derive(op_unsqueeze, lambda ctx, g: (reshape_c(g, (ctx.shapes[0],)),),
       lambda t, dim: unsqueeze_c(t, dim), 0)
derive(op_narrow, _d_narrow,
       lambda t, dim, start, length, step=1: narrow_c(t, dim, start, length, step), 0)
derive(op_select, _d_select, lambda t, dim, index: select_c(t, dim, index), 0)
derive(op_diagonal, _d_diagonal, lambda t, offset, d1, d2: diagonal_c(t, offset, d1, d2), 0)
derive(op_as_strided, _d_as_strided,
       lambda t, size, stride, off: as_strided_c(t, size, stride, off), SAVE_INPUTS)
