# The index family on the backend's `index` primitive (gather/scatter along one dim) and
# `search` primitive (binary search, multinomial draws): gather, scatter(_add/_reduce),
# index_select/add/copy/fill, take, put_, searchsorted and multinomial.  Ops whose index
# is 1-d (index_select, index_add, ...) view it at the walked operand's shape with stride 0
# outside `dim`; take/put_ run on the flattened tensor.  Advanced indexing is in
# _advindex.pxi; the composites (flip, bincount, repeat_interleave, ...) in index_ops.py.


class IndexOutOfBoundsError(IndexError, RuntimeError):
    """An index out of range where PyTorch raises RuntimeError (gather, scatter, index_add):
    both `except IndexError` and `except RuntimeError` catch it."""


cdef Op op_gather = Op("gather", "gather(Tensor self, int dim, Tensor index, *, bool "
                       "sparse_grad=False) -> Tensor", FAMILY_INDEX, EMBER_INDEX_GATHER, None)
cdef Op op_scatter = Op("scatter", "scatter(Tensor self, int dim, Tensor index, Tensor src, *, "
                        "str? reduce=None) -> Tensor", FAMILY_INDEX, EMBER_INDEX_SCATTER, None)
cdef Op op_scatter_add = Op("scatter_add", "scatter_add(Tensor self, int dim, Tensor index, "
                            "Tensor src) -> Tensor", FAMILY_INDEX, EMBER_INDEX_SCATTER_ADD, None)
cdef Op op_scatter_reduce = Op("scatter_reduce", "scatter_reduce(Tensor self, int dim, Tensor "
                               "index, Tensor src, str reduce, *, bool include_self=True) -> "
                               "Tensor", FAMILY_INDEX, EMBER_INDEX_SCATTER_ADD, None)
cdef Op op_index_select = Op("index_select", "index_select(Tensor self, int dim, Tensor index) "
                             "-> Tensor", FAMILY_INDEX, EMBER_INDEX_GATHER, None)
cdef Op op_index_add = Op("index_add", "index_add(Tensor self, int dim, Tensor index, Tensor "
                          "source, *, Scalar alpha=1) -> Tensor", FAMILY_INDEX,
                          EMBER_INDEX_SCATTER_ADD, None)
cdef Op op_index_copy = Op("index_copy", "index_copy(Tensor self, int dim, Tensor index, "
                           "Tensor source) -> Tensor", FAMILY_INDEX, EMBER_INDEX_SCATTER, None)
cdef Op op_index_fill = Op("index_fill", "index_fill(Tensor self, int dim, Tensor index, "
                           "Scalar value) -> Tensor", FAMILY_INDEX, EMBER_INDEX_SCATTER, None)
cdef Op op_take = Op("take", "take(Tensor self, Tensor index) -> Tensor", FAMILY_INDEX,
                     EMBER_INDEX_GATHER, None)
cdef Op op_put = Op("put", "put(Tensor self, Tensor index, Tensor source, bool "
                    "accumulate=False) -> Tensor", FAMILY_INDEX, EMBER_INDEX_SCATTER, None)
cdef Op op_searchsorted = Op("searchsorted", "searchsorted(Tensor sorted_sequence, Tensor self, "
                             "*, bool out_int32=False, bool right=False, str? side=None, "
                             "Tensor? sorter=None) -> Tensor", FAMILY_SEARCH, EMBER_SEARCH_LEFT,
                             None)
cdef Op op_multinomial = Op("multinomial", "multinomial(Tensor self, int num_samples, bool "
                            "replacement=False, *, Generator? generator=None) -> Tensor",
                            FAMILY_SEARCH, EMBER_SEARCH_MULTINOMIAL, None)

cdef dict _SCATTER_REDUCE = {"sum": EMBER_INDEX_SCATTER_ADD, "prod": EMBER_INDEX_SCATTER_MUL,
                             "mean": EMBER_INDEX_SCATTER_ADD, "amax": EMBER_INDEX_SCATTER_AMAX,
                             "amin": EMBER_INDEX_SCATTER_AMIN}


cdef TensorBase index_arg(object index, str op, bint int32_ok):
    """The index as int64 (int32 accepted where PyTorch accepts it)."""
    cdef TensorBase i = as_tensor_arg(index, op, "index")
    if i._dtype.code != EMBER_INT64:
        if not (int32_ok and i._dtype.code == EMBER_INT32):
            raise RuntimeError(f"{op}(): Expected dtype int{'32 or int' if int32_ok else ''}64 "
                               f"for index, but got {st_name(i._dtype)}")
        i = cast_to(i, _dtypes.int64)
    return i


cdef void widen_0d(ember_view* v) noexcept:
    if v.ndim == 0:
        v.ndim = 1
        v.sizes[0] = 1
        v.strides[0] = 1


cdef int run_index(int code, TensorBase out, TensorBase a, TensorBase index, int dim,
                   str op, bint runtime_error) except -1:
    """The backend's `index` entry; a bad index raises IndexError (also a RuntimeError
    where PyTorch raises that) naming `op`."""
    same_device(op, out, a)
    same_device(op, out, index)
    if _state.deterministic():
        # accumulating scatters are where a backend's fast path may be order-dependent
        base = code & ~EMBER_INDEX_WRAP
        if base == EMBER_INDEX_SCATTER_ADD or base == EMBER_INDEX_SCATTER_MUL:
            _determinism.alert_nondeterministic(op, out._device.type)
    if index.numel_c() == 0 or out._backend.is_meta:
        return 0
    cdef ember_view vo, va, vi
    out.view_c(&vo)
    a.view_c(&va)
    index.view_c(&vi)
    widen_0d(&vo)
    widen_0d(&va)
    widen_0d(&vi)
    if out._dtype.is_complex or a._dtype.is_complex:
        complex_index_views(code, out, a, op, &vo, &va, &vi)
    cdef ember_kernel_table* t = out._backend.kernels()
    cdef ember_ctx ctx
    init_ctx(&ctx, out)
    cdef int rc
    if index.numel_c() > GIL_CUTOFF:
        with nogil:
            rc = t.index(&ctx, code, &vo, &va, &vi, dim)
    else:
        rc = t.index(&ctx, code, &vo, &va, &vi, dim)
    if rc == EMBER_ERR_INDEX:
        msg = f"{op}(): {ctx.error[:].decode('utf-8', 'replace')}"
        raise (IndexOutOfBoundsError if runtime_error else IndexError)(msg)
    if rc:
        raise_kernel_error(rc, &ctx)
    return 0


cdef TensorBase along(TensorBase idx, int nd, const int64_t* sizes, int dim):
    """A 1-d index viewed at `sizes`: its stride along `dim`, 0 elsewhere."""
    cdef int64_t strides[MAX_DIM]
    cdef int i
    for i in range(nd):
        strides[i] = 0
    if idx._ndim:
        strides[dim] = idx._strides[0]
    return make_view(idx, nd, sizes, strides, idx._offset)


cdef TensorBase vector_index(object index, str op, bint int32_ok):
    cdef TensorBase i = index_arg(index, op, int32_ok)
    if i._ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    return i


cdef TensorBase to_out(TensorBase r, object out, str op):
    """`r`, or `out` resized to r's shape holding r's values."""
    if out is None:
        return r
    grant_out_write(out, r, None)
    cdef TensorBase o = prepare_out(out, r._ndim, r._sizes, r._dtype, r._device, op)
    run_copy(o, r)
    o.bump()
    return o


# --- gather and the scatters ----------------------------------------------------------------

cdef str shape_str(TensorBase t):
    return str(list(t.shape))


def gather(input, dim=None, index=None, *, sparse_grad=False, out=None, axis=None):
    """Values of ``input`` along ``dim`` (``axis``) at ``index``: out[i][j] =
    input[index[i][j]][j] for dim=0 (index has input's number of dims; no larger outside
    ``dim``)."""
    if dim is None or axis is not None:
        dim = _dim_or_axis("gather", dim, axis)
    if index is None:
        raise TypeError("gather() missing 1 required positional argument: 'index'")
    cdef TensorBase a = as_tensor_arg(input, "gather", "input")
    refuse_limited_named("gather", a._dtype)
    kernel = routed_n(op_gather, (a, index))
    if kernel is not None:
        return kernel(a, dim, index, sparse_grad=sparse_grad, out=out)
    cdef TensorBase i = index_arg(index, "gather", True)
    cdef int d = wrap_dim(dim, a._ndim, "gather"), k
    if i._ndim != a._ndim and not (i._ndim <= 1 and a._ndim <= 1):
        raise RuntimeError("gather(): Index tensor must have the same number of dimensions as "
                           "input tensor")
    for k in range(min(i._ndim, a._ndim)):
        if k != d and i._sizes[k] > a._sizes[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{shape_str(i)} to be no larger than self {shape_str(a)} apart "
                               f"from dimension {d}")
    cdef TensorBase r = empty_c(i._ndim, i._sizes, a._dtype, a._device)
    if a._ndim != i._ndim:              # a 0-d/1-d mix: both as 1-d
        a = reshape_c(a, ((-1,),))
        i = reshape_c(i, ((-1,),))
        r = reshape_c(r, ((-1,),))
    run_index(EMBER_INDEX_GATHER, r, a, i, d, "gather", True)
    return to_out(reshape_c(r, (index.shape,)), out, "gather")


cdef TensorBase scatter_c(TensorBase self, object dim, object index, object src, int code,
                          str op):
    """self[...index...] (op)= src in place; src a tensor or a number."""
    cdef TensorBase i = index_arg(index, op, True)
    cdef int d = wrap_dim(dim, self._ndim, op), k
    cdef TensorBase s
    if isinstance(src, TensorBase):
        s = <TensorBase>src
        if s._dtype is not self._dtype:
            raise RuntimeError(f"{op}(): Expected self.dtype to be equal to src.dtype")
    else:
        s = expand_c(full((), src, dtype=self._dtype, device=self._device), (index.shape,))
    if i._ndim != self._ndim or s._ndim != self._ndim:
        if not (i._ndim <= 1 and self._ndim <= 1 and s._ndim <= 1):
            raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions "
                               f"as self tensor")
    for k in range(i._ndim):
        if (k != d and i._sizes[k] > self._sizes[k]) or i._sizes[k] > s._sizes[k]:
            raise RuntimeError(f"Expected index {shape_str(i)} to be no larger than self "
                               f"{shape_str(self)} apart from dimension {d} and to be no "
                               f"larger size than src {shape_str(s)}")
    check_writable(self, s, i)
    run_index(code, self, s, i, d, op, True)
    self.bump()
    return self


cdef int scatter_code(object reduce) except -1:
    if reduce is None:
        return EMBER_INDEX_SCATTER
    if reduce == "add":
        return EMBER_INDEX_SCATTER_ADD
    if reduce == "multiply":
        return EMBER_INDEX_SCATTER_MUL
    raise RuntimeError(f"reduce argument must be either add or multiply., got {reduce}")


def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
    """A copy of ``input`` with ``src`` (a tensor or a number; or ``value``) written at
    ``index`` along ``dim`` (``reduce``: 'add' or 'multiply' combines instead)."""
    cdef TensorBase a = as_tensor_arg(input, "scatter", "input")
    refuse_limited_named("scatter", a._dtype)
    kernel = routed_n(op_scatter, (a, index, src))
    if kernel is not None:
        return kernel(a, dim, index, src, value=value, reduce=reduce, out=out)
    return to_out(scatter_c(clone_c(a), dim, index, value if src is None else src,
                            scatter_code(reduce), "scatter"), out, "scatter")


# The in-place index ops, when autograd records them, compute out of place and copy the
# result back into self.  They compute from a clone: the out-of-place op saves its input,
# which the copy back would overwrite (and backward would refuse as modified in place).

def _scatter_(TensorBase self, dim, index, src=None, *, value=None, reduce=None):
    """In place: Tensor.scatter_."""
    refuse_limited_named("scatter", self._dtype)
    if recording(self, src):
        return self.copy_(scatter(self.clone(), dim, index, src, value=value, reduce=reduce))
    return scatter_c(self, dim, index, value if src is None else src, scatter_code(reduce),
                     "scatter_")


def scatter_add(input, dim, index, src, *, out=None):
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim``; duplicates add
    up in a fixed order (the same bits for any thread count)."""
    cdef TensorBase a = as_tensor_arg(input, "scatter_add", "input")
    kernel = routed_n(op_scatter_add, (a, index, src))
    if kernel is not None:
        return kernel(a, dim, index, src, out=out)
    return to_out(scatter_c(clone_c(a), dim, index, as_tensor_arg(src, "scatter_add", "src"),
                            EMBER_INDEX_SCATTER_ADD, "scatter_add"), out, "scatter_add")


def _scatter_add_(TensorBase self, dim, index, src):
    """In place: Tensor.scatter_add_."""
    if recording(self, src):
        return self.copy_(scatter_add(self.clone(), dim, index, src))
    return scatter_c(self, dim, index, as_tensor_arg(src, "scatter_add_", "src"),
                     EMBER_INDEX_SCATTER_ADD, "scatter_add_")


cdef object reduce_identity(str reduce, dtype dt):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dt.code == EMBER_BOOL:
        return reduce == "amin"
    if dt.is_floating_point:
        return float("-inf") if reduce == "amax" else float("inf")
    from ember.core.typeinfo import iinfo
    return iinfo(dt).min if reduce == "amax" else iinfo(dt).max


cdef TensorBase scatter_reduce_c(TensorBase self, object dim, object index, object src,
                                 str reduce, bint include_self, str op):
    """In place on self: PyTorch's scatter_reduce_ (mean as a sum over a count)."""
    if reduce not in _SCATTER_REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    cdef TensorBase s = as_tensor_arg(src, op, "src")
    if not include_self:               # touched positions start from the identity
        scatter_c(self, dim, index, reduce_identity(reduce, self._dtype), EMBER_INDEX_SCATTER,
                  op)
    scatter_c(self, dim, index, s, _SCATTER_REDUCE[reduce], op)
    if reduce != "mean":
        return self
    cdef TensorBase count = full(tuple(self.shape), 1 if include_self else 0,
                                 dtype=self._dtype, device=self._device)
    scatter_c(count, dim, index, 1, EMBER_INDEX_SCATTER_ADD, op)
    count = where_c(binary_op(op_eq, count, 0, 1, None), 1, count, self._dtype, None)
    r = binary_op(op_div if self._dtype.is_floating_point else op_floor_divide, self, count, 1,
                  None)
    copy_into(self, r, op)
    return self


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    """A copy of ``input`` reducing ``src`` into it at ``index`` along ``dim``; ``reduce``
    is 'sum', 'prod', 'mean', 'amax' or 'amin'; ``include_self`` counts input's own values."""
    cdef TensorBase a = as_tensor_arg(input, "scatter_reduce", "input")
    kernel = routed_n(op_scatter_reduce, (a, index, src))
    if kernel is not None:
        return kernel(a, dim, index, src, reduce, include_self=include_self, out=out)
    return to_out(scatter_reduce_c(clone_c(a), dim, index, src, reduce, include_self,
                                   "scatter_reduce"), out, "scatter_reduce")


def _scatter_reduce_(TensorBase self, dim, index, src, reduce, *, include_self=True):
    """In place: Tensor.scatter_reduce_."""
    if recording(self, src):
        return self.copy_(scatter_reduce(self.clone(), dim, index, src, reduce,
                                         include_self=include_self))
    return scatter_reduce_c(self, dim, index, src, reduce, include_self, "scatter_reduce_")


# --- ops with a 1-d index along one dim -------------------------------------------------------

def index_select(input, dim, index, *, out=None):
    """The slices of ``input`` along ``dim`` at the positions in the 1-d ``index``."""
    cdef TensorBase a = as_tensor_arg(input, "index_select", "input")
    refuse_limited_named("index_select", a._dtype)
    kernel = routed_n(op_index_select, (a, index))
    if kernel is not None:
        return kernel(a, dim, index, out=out)
    cdef TensorBase i = vector_index(index, "index_select", True)
    return to_out(index_select_c(a, wrap_dim(dim, a._ndim, "index_select"), i, 0,
                                 "index_select"), out, "index_select")


cdef TensorBase index_select_c(TensorBase a, int d, TensorBase i, int flags, str op):
    """GATHER of the 1-d int64 index `i` along dim d (0-d `a` as 1-d)."""
    cdef int64_t sizes[MAX_DIM]
    cdef int nd = a._ndim if a._ndim else 1
    if a._ndim == 0:
        a = reshape_c(a, ((1,),))
    memcpy(sizes, a._sizes, nd * sizeof(int64_t))
    sizes[d] = i.numel_c()
    cdef TensorBase r = empty_c(nd, sizes, a._dtype, a._device)
    # index_select's out-of-range error is an IndexError and a RuntimeError: PyTorch raises
    # the one at dim 0 and the other at any other dim
    run_index(EMBER_INDEX_GATHER | flags, r, a, along(i, nd, sizes, d), d, op,
              op == "index_select")
    return r


cdef TensorBase index_update(TensorBase self, object dim, object index, TensorBase source,
                             int code, bint int32_ok, int flags, str op):
    """In place: self[..., index[k], ...] (code)= source[..., k, ...] along dim."""
    cdef TensorBase i = vector_index(index, op, int32_ok)
    cdef int d = wrap_dim(dim, self._ndim, op), k
    cdef int nd = self._ndim if self._ndim else 1
    cdef TensorBase dst = self if self._ndim else reshape_c(self, ((1,),))
    cdef TensorBase src = source if source._ndim or not self._ndim else reshape_c(source, ((1,),))
    if src._dtype is not self._dtype:
        raise RuntimeError(f"{op}(): self ({st_name(self._dtype)}) and source "
                           f"({st_name(src._dtype)}) must have the same scalar type")
    if src._ndim != nd or src._sizes[d] != i.numel_c():
        raise RuntimeError(f"{op}(): Number of indices ({i.numel_c()}) should be equal to "
                           f"source.size(dim) ({src._sizes[d] if src._ndim == nd else '?'})")
    for k in range(nd):
        if k != d and src._sizes[k] != dst._sizes[k]:
            raise RuntimeError(f"{op}(): source {shape_str(source)} and self "
                               f"{shape_str(self)} must match outside dim {d}")
    check_writable(dst, src, i)
    run_index(code | flags, dst, src, along(i, nd, src._sizes, d), d, op,
              code == EMBER_INDEX_SCATTER_ADD)
    self.bump()
    return self


cdef TensorBase index_add_c(TensorBase self, object dim, object index, object source,
                            object alpha, str op):
    cdef TensorBase s = as_tensor_arg(source, op, "source")
    if alpha is not 1 and alpha != 1:
        if isinstance(alpha, float) and not self._dtype.is_floating_point:
            raise RuntimeError("For integral input tensors, argument alpha must not be a "
                               "floating point number.")
        s = cast_to(binary_op(op_mul, s, alpha, 1, None), s._dtype)
    return index_update(self, dim, index, s, EMBER_INDEX_SCATTER_ADD, True, 0, op)


def index_add(input, dim, index, source, *, alpha=1, out=None):
    """A copy of ``input`` with ``alpha * source`` added at the 1-d ``index`` along
    ``dim`` (duplicates add up in order)."""
    cdef TensorBase a = as_tensor_arg(input, "index_add", "input")
    kernel = routed_n(op_index_add, (a, index, source))
    if kernel is not None:
        return kernel(a, dim, index, source, alpha=alpha, out=out)
    return to_out(index_add_c(clone_c(a), dim, index, source, alpha, "index_add"), out,
                  "index_add")


def _index_add_(TensorBase self, dim, index, source, *, alpha=1):
    """In place: Tensor.index_add_."""
    if recording(self, source):
        return self.copy_(index_add(self.clone(), dim, index, source, alpha=alpha))
    return index_add_c(self, dim, index, source, alpha, "index_add_")


def index_copy(input, dim, index, source, *, out=None):
    """A copy of ``input`` with the slices of ``source`` written at ``index`` along ``dim``."""
    cdef TensorBase a = as_tensor_arg(input, "index_copy", "input")
    kernel = routed_n(op_index_copy, (a, index, source))
    if kernel is not None:
        return kernel(a, dim, index, source, out=out)
    return to_out(index_update(clone_c(a), dim, index, as_tensor_arg(source, "index_copy",
                                                                     "source"),
                               EMBER_INDEX_SCATTER, False, 0, "index_copy_"), out, "index_copy")


def _index_copy_(TensorBase self, dim, index, source):
    """In place: Tensor.index_copy_."""
    if recording(self, source):
        return self.copy_(index_copy(self.clone(), dim, index, source))
    return index_update(self, dim, index, as_tensor_arg(source, "index_copy_", "source"),
                        EMBER_INDEX_SCATTER, False, 0, "index_copy_")


cdef TensorBase index_fill_c(TensorBase self, object dim, object index, object value, str op):
    if isinstance(value, TensorBase):
        if (<TensorBase>value)._ndim:
            raise RuntimeError(f"{op}(): only supports a 0-dimensional value tensor, but got "
                               f"tensor with {(<TensorBase>value)._ndim} dimension(s).")
        value = item_c(<TensorBase>value)
    cdef TensorBase i = vector_index(index, op, False)
    cdef int d = wrap_dim(dim, self._ndim, op)
    cdef int64_t sizes[MAX_DIM]
    cdef int nd = self._ndim if self._ndim else 1
    memcpy(sizes, self._sizes, self._ndim * sizeof(int64_t))
    if self._ndim == 0:
        sizes[0] = 1
    sizes[d] = i.numel_c()
    cdef TensorBase v = full((), value, dtype=self._dtype, device=self._device)
    cdef int64_t zeros_[MAX_DIM]
    memset(zeros_, 0, sizeof(zeros_))
    return index_update(self, d, i, make_view(v, nd, sizes, zeros_, v._offset),
                        EMBER_INDEX_SCATTER, False, EMBER_INDEX_WRAP, op)


def index_fill(input, dim, index, value):
    """A copy of ``input`` with ``value`` at the 1-d ``index`` along ``dim`` (negative
    indices count from the end)."""
    cdef TensorBase a = as_tensor_arg(input, "index_fill", "input")
    kernel = routed_n(op_index_fill, (a, index, value))
    if kernel is not None:
        return kernel(a, dim, index, value)
    return index_fill_c(clone_c(a), dim, index, value, "index_fill_")


def _index_fill_(TensorBase self, dim, index, value):
    """In place: Tensor.index_fill_."""
    if recording(self, value):
        return self.copy_(index_fill(self.clone(), dim, index, value))
    return index_fill_c(self, dim, index, value, "index_fill_")


# --- take and put_: the tensor as a flat vector --------------------------------------------

def take(input, index, *, out=None):
    """``input`` as a 1-d tensor, read at ``index`` (negative indices count from the end);
    the result has index's shape."""
    cdef TensorBase a = as_tensor_arg(input, "take", "input")
    refuse_limited_named("take", a._dtype)
    kernel = routed_n(op_take, (a, index))
    if kernel is not None:
        return kernel(a, index, out=out)
    cdef TensorBase i = index_arg(index, "take", False)
    cdef TensorBase r = index_select_c(reshape_c(a, ((-1,),)), 0, reshape_c(i, ((-1,),)),
                                       EMBER_INDEX_WRAP, "take")
    return to_out(reshape_c(r, (i.shape,)), out, "take")


cdef TensorBase put_c(TensorBase self, object index, object source, bint accumulate, str op):
    cdef TensorBase i = index_arg(index, op, False)
    cdef TensorBase s = as_tensor_arg(source, op, "source")
    if s._dtype is not self._dtype:
        raise RuntimeError(f"{op}(): self and source expected to have the same dtype, but "
                           f"got self.dtype = {st_name(self._dtype)} and source.dtype = "
                           f"{st_name(s._dtype)}")
    if s.numel_c() != i.numel_c():
        raise RuntimeError(f"{op}(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {s.numel_c()}, "
                           f"index.numel() = {i.numel_c()}")
    cdef TensorBase flat = reshape_c(self, ((-1,),))
    cdef bint copied = flat._storage is not self._storage
    index_update(flat, 0, reshape_c(i, ((-1,),)), reshape_c(s, ((-1,),)),
                 EMBER_INDEX_SCATTER_ADD if accumulate else EMBER_INDEX_SCATTER, False,
                 EMBER_INDEX_WRAP, op)
    if copied:                         # self was not viewable as a vector
        copy_into(self, reshape_c(flat, (self.shape,)), op)
    self.bump()
    return self


def put(input, index, source, accumulate=False):
    """A copy of ``input`` with ``source`` written (added, with ``accumulate``) at the flat
    positions ``index``."""
    cdef TensorBase a = as_tensor_arg(input, "put", "input")
    kernel = routed_n(op_put, (a, index, source))
    if kernel is not None:
        return kernel(a, index, source, accumulate)
    return put_c(clone_c(a), index, source, accumulate, "put")


def _put_(TensorBase self, index, source, accumulate=False):
    """In place: Tensor.put_."""
    if recording(self, source):
        return self.copy_(put(self.clone(), index, source, accumulate))
    return put_c(self, index, source, accumulate, "put_")


# --- search ------------------------------------------------------------------------------------

cdef int run_search(int code, TensorBase out, TensorBase srt, TensorBase values,
                    str op) except -1:
    same_device(op, srt, values)
    if out._backend.is_meta:
        return 0
    cdef ember_view vo, vs, vv
    out.view_c(&vo)
    srt.view_c(&vs)
    values.view_c(&vv)
    cdef ember_kernel_table* t = out._backend.kernels()
    cdef ember_ctx ctx
    init_ctx(&ctx, out)
    cdef int rc
    with nogil:
        rc = t.search(&ctx, code, &vo, &vs, &vv)
    if rc:
        raise_kernel_error(rc, &ctx)
    return 0


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    """For each value of ``input`` the position in the innermost dim of
    ``sorted_sequence`` where it would be inserted to keep it sorted (``right``/``side``
    choose after equal values; ``sorter`` sorts an unsorted sequence)."""
    cdef TensorBase s = as_tensor_arg(sorted_sequence, "searchsorted", "sorted_sequence")
    kernel = routed_n(op_searchsorted, (s, input, sorter))
    if kernel is not None:
        return kernel(s, input, out_int32=out_int32, right=right, side=side, sorter=sorter,
                      out=out)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to "
                               "opposites, got side of left while right was True")
        right = side == "right"
    cdef bint scalar = not isinstance(input, TensorBase)
    cdef TensorBase v = full((), input, device=s._device) if scalar else <TensorBase>input
    if s._ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if sorter is not None:
        s = gather(s, -1, sorter)
    if s._ndim > 1 and (v._ndim != s._ndim or tuple(v.shape)[:v._ndim - 1] != tuple(s.shape)[:s._ndim - 1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           f"the first N-1 dimensions of boundaries tensor and input value "
                           f"tensor must match, but we got boundaries tensor {shape_str(s)} "
                           f"and input value tensor {shape_str(v)}")
    cdef dtype ct = result_type2(s, v, "searchsorted")
    cdef TensorBase vv = cast_to(v, ct)
    if s._ndim == 1:                   # one sequence for every value: values as [1, N]
        vv = reshape_c(vv, ((1, -1),))
        s = unsqueeze_c(s, 0)
    elif vv._ndim == 0:
        vv = reshape_c(vv, ((1,),))
    cdef TensorBase r = empty_c(vv._ndim, vv._sizes, _dtypes.int32 if out_int32
                                else _dtypes.int64, s._device)
    run_search(EMBER_SEARCH_RIGHT if right else EMBER_SEARCH_LEFT, r, cast_to(s, ct), vv,
               "searchsorted")
    return to_out(reshape_c(r, (v.shape,)), out, "searchsorted")


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """``num_samples`` category indices per row of the weights ``input`` (1-d or 2-d),
    drawn with or without ``replacement``."""
    cdef TensorBase p = as_tensor_arg(input, "multinomial", "input")
    kernel = routed(op_multinomial, p)
    if kernel is not None:
        return kernel(p, num_samples, replacement, generator=generator, out=out)
    if p._ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not p._dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{st_name(p._dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    cdef int64_t m = p._sizes[p._ndim - 1]
    if not replacement and num_samples > m:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    cdef TensorBase w = cast_to(reshape_c(p, ((-1, m),)), _dtypes.float64)
    cdef int64_t rows = w._sizes[0]
    if num_samples == 1:        # one draw cannot repeat: the search alone (not an m-way race)
        replacement = True
    cdef TensorBase u = rand(rows, num_samples if replacement else 0, generator=generator,
                             dtype=_dtypes.float64, device=p._device)
    cdef TensorBase r = empty_c(2, u._sizes, _dtypes.int64, p._device)
    run_search(EMBER_SEARCH_MULTINOMIAL, r, w, u, "multinomial")   # also checks the rows
    if not replacement:
        # exponential races: the num_samples smallest E / w (E ~ Exp(1)) are a sample
        # without replacement; a zero weight never wins
        if num_samples > int(item_c(reduce_op(op_amin, reduce_op(
                op_sum, cast_to(binary_op(op_gt, w, 0, 1, None), _dtypes.int64), -1, False,
                None, None), None, False, None, None))):
            raise RuntimeError("invalid multinomial distribution (with replacement=False, not "
                               "enough non-negative category to sample)")
        from ember.core.sorting import topk
        e = unary_op(op_neg, unary_op(get_op("log1p"), unary_op(op_neg, rand(
            rows, m, generator=generator, dtype=_dtypes.float64, device=p._device), None),
            None), None)
        keys = where_c(binary_op(op_gt, w, 0, 1, None), binary_op(op_div, e, w, 1, None),
                       float("inf"), _dtypes.float64, None)
        r = topk(keys, num_samples, -1, largest=False).indices
    if p._ndim == 1:
        r = reshape_c(r, ((num_samples,),))
    return to_out(r, out, "multinomial")


# --- derivatives (see _autograd_support.pxi).  The in-place forms above, while autograd
# records, run the out-of-place op and copy_ the result in (copy_ rebases the history). ---

cdef uint64_t TRANSFORMED = BATCHED_BIT | (<uint64_t>1 << DispatchKey.ForwardAD)


cdef bint recording(TensorBase self, object other):
    """Whether an in-place index op goes through its out-of-place form and copy_: while
    autograd records, for vmap's wrappers and tensors with tangents (which only the
    dispatcher's keys handle), and while ember.compile captures (its graph holds ops)."""
    cdef uint64_t keys = self._keys | ((<TensorBase>other)._keys
                                       if isinstance(other, TensorBase) else 0)
    return bool(keys & TRANSFORMED) or (
        not (_state.tls_excluded() & AUTOGRAD_BIT) and bool(keys & AUTOGRAD_BIT)) or \
        capture_live()


def _d_gather(ctx, g):
    a_shape, dim, index = ctx.shapes[0], ctx.arg(1), ctx.arg(2)
    return (scatter_add(zeros(a_shape, dtype=g.dtype, device=g.device), dim, index, g),)


def _d_scatter(ctx, g):
    dim, index, src = ctx.arg(1), ctx.arg(2), ctx.arg(3)
    reduce = ctx.kwargs.get("reduce")
    if reduce == "multiply":
        raise NotImplementedError("scatter(reduce='multiply'): the derivative is not "
                                  "implemented (PyTorch has none either)")
    ga = g if reduce == "add" else scatter(g, dim, index, 0.0)
    return ga, None, None, (gather(g, dim, index) if isinstance(src, TensorBase) else None)


def _d_scatter_reduce(ctx, g):
    """PyTorch's scatter_reduce gradient: sum passes g on; mean divides by the count; prod
    by the product of the others (exact with zeros); amax/amin split g evenly between the
    values equal to the result.  Without include_self the overwritten values get none."""
    a, dim, index, src, reduce = ctx.args[:5]
    include_self = ctx.kwargs.get("include_self", True)
    hit = scatter(zeros(a.shape, dtype=_dtypes.bool, device=g.device), dim, index, True)
    if reduce == "sum":
        ga, gs = g, gather(g, dim, index)
    elif reduce == "mean":
        n = scatter_add(full(tuple(a.shape), 1.0 if include_self else 0.0, dtype=g.dtype,
                             device=g.device), dim, index, ones_like(src, dtype=g.dtype))
        ga = g / where(n == 0, 1.0, n)
        gs = gather(ga, dim, index)
    elif reduce == "prod":
        result = ctx.result
        # self's share: the product with self read as 1 (the others' product)
        masked = where(a == 0, 1.0, a)
        ga = g * scatter_reduce(masked, dim, index, src, "prod",
                                include_self=include_self) / masked
        # src's share: result / src, or for a src holding its slot's only zero, the
        # product with that zero read as 1
        src_zero = src == 0
        nzero = gather(scatter_add(zeros(a.shape, dtype=g.dtype, device=g.device), dim, index,
                                   src_zero.to(g.dtype)), dim, index)
        single = src_zero & (nzero == 1)
        others = scatter_reduce(a, dim, index, where(single, 1.0, src), "prod",
                                include_self=include_self)
        gs = where(single, gather(g * others, dim, index),
                   gather(g * result, dim, index) / where(src_zero, 1.0, src))
    elif reduce in ("amax", "amin"):
        result = ctx.result
        self_hit = a == result          # counted even without include_self, as torch does
        src_hit = src == gather(result, dim, index)
        n = scatter_add(self_hit.to(g.dtype), dim, index, src_hit.to(g.dtype))
        share = g / where(n == 0, 1.0, n)
        ga = where(self_hit, share, 0.0)
        gs = where(src_hit, gather(share, dim, index), 0.0)
    else:
        raise RuntimeError(f"scatter_reduce: no derivative for reduce={reduce}")
    if not include_self:
        ga = where(hit, 0.0, ga)
    return ga, None, None, gs


def _d_scatter_add(ctx, g):
    return g, None, None, gather(g, ctx.arg(1), ctx.arg(2))


def _d_index_select(ctx, g):
    a_shape, dim, index = ctx.shapes[0], ctx.arg(1), ctx.arg(2)
    return (index_add(zeros(a_shape, dtype=g.dtype, device=g.device), dim, index, g),)


def _d_index_add(ctx, g):
    dim, index, alpha = ctx.arg(1), ctx.arg(2), ctx.kwargs.get("alpha", 1)
    gs = index_select(g, dim, index)
    return g, None, None, (gs if alpha == 1 else gs * alpha)


def _d_index_copy(ctx, g):
    dim, index = ctx.arg(1), ctx.arg(2)
    return index_fill(g, dim, index, 0), None, None, index_select(g, dim, index)


def _d_index_fill(ctx, g):
    """self: g with the filled positions zeroed; a tensor value: the sum of g over them
    (each index once, as PyTorch's _unique)."""
    dim, index, value = ctx.arg(1), ctx.arg(2), ctx.arg(3)
    gv = None
    if isinstance(value, TensorBase) and ctx.needs_input_grad[3]:
        unique = index.reshape(-1).unique()
        gv = index_select(g, dim, unique).sum().reshape(value.shape).to(value.dtype)
    return index_fill(g, dim, index, 0), None, None, gv


def _d_take(ctx, g):
    z = zeros(ctx.shapes[0], dtype=g.dtype, device=g.device)
    return (put(z, ctx.arg(1), g, True),)


def _d_put(ctx, g):
    index, accumulate = ctx.arg(1), ctx.arg(3) if ctx.nargs() > 3 else False
    ga = g if accumulate else put(g, index, zeros(index.shape, dtype=g.dtype, device=g.device))
    return ga, None, take(g, index).reshape(ctx.shapes[2])


derive(op_gather, _d_gather, gather, SAVE_INPUTS)
derive(op_scatter, _d_scatter, scatter, SAVE_INPUTS)
derive(op_scatter_add, _d_scatter_add, scatter_add, SAVE_INPUTS)
derive(op_scatter_reduce, _d_scatter_reduce, scatter_reduce, SAVE_INPUTS | SAVE_RESULT)
derive(op_index_select, _d_index_select, index_select, SAVE_INPUTS)
derive(op_index_add, _d_index_add, index_add, SAVE_INPUTS)
derive(op_index_copy, _d_index_copy, index_copy, SAVE_INPUTS)
derive(op_index_fill, _d_index_fill, index_fill, SAVE_INPUTS)
derive(op_take, _d_take, take, SAVE_INPUTS)
derive(op_put, _d_put, put, SAVE_INPUTS)

# ops without a derivative still get an entry: a mode key (ember.compile's capture, the
# profiler) and the keys above the backend (ForwardAD, Batched) redispatch to it
op_searchsorted.entry = searchsorted
op_multinomial.entry = multinomial
