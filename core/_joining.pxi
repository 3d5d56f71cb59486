# Joining and splitting: cat, and split / split_with_sizes / unbind as single multi-output
# view ops.  Each is ONE autograd node, as in PyTorch: cat's backward hands back views of
# the incoming gradient (split), split's and unbind's backward cat their outputs'
# gradients (zeros for unused outputs).  Both directions are O(total size), so a graph
# with thousands of pieces backprops in linear time, and every formula is written with
# these same ops, so higher-order gradients work.
#
# Routing: only the Autograd key (and the function transforms' keys, ForwardAD and
# Batched) has a kernel of its own here (it records the one node and runs the op below
# it); every other key - a backend, a mode, fake tensors - sees the op's pieces
# (narrow/select views and copy_), exactly as before these ops existed.
#
# In-place rules (_autograd.pyx, multi_view_output): as in PyTorch, an output of split /
# split_with_sizes / unbind that requires grad may not be written in place, nor used after
# its base (or another view of it) was - both raise PyTorch's messages.  Differences: the
# second error comes at the piece's next use, not at `.grad_fn` access; pieces of a tensor
# that does not require grad carry no node and stay writable; tensor_split's pieces (one
# `_split_views` node here, per-piece slices in PyTorch) may be written in place, as there.

cdef Op op_cat = Op("cat", "cat(int dim, Tensor... tensors) -> Tensor", FAMILY_VIEW, 0, None)
cdef Op op_split = Op("split", "split(Tensor(a -> *) self, SymInt split_size, int dim=0) -> "
                      "Tensor(a)[]", FAMILY_VIEW, 0, None)
cdef Op op_split_with_sizes = Op("split_with_sizes", "split_with_sizes(Tensor(a -> *) self, "
                                 "SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
                                 FAMILY_VIEW, 0, None)
# tensor_split's pieces: like split_with_sizes, but ordinary views that may be written in
# place (PyTorch builds tensor_split from slices)
cdef Op op_split_views = Op("_split_views", "_split_views(Tensor(a -> *) self, SymInt[] "
                            "split_sizes, int dim=0) -> Tensor(a)[]", FAMILY_VIEW, 0, None)
cdef Op op_unbind = Op("unbind", "unbind(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
                       FAMILY_VIEW, 0, None)


cdef uint64_t JOIN_KEYS = (AUTOGRAD_BIT | BATCHED_BIT
                           | (<uint64_t>1 << DispatchKey.ForwardAD))


cdef inline object autograd_kernel_for(Op op, uint64_t keys):
    """op's kernel at Autograd (when this call is recorded: an input requires grad and
    grad mode is on), ForwardAD or Batched, whichever is live and highest, else None."""
    cdef uint64_t live = effective_keys(keys) & JOIN_KEYS & op._kernel_mask
    if live:
        return op._table[highest_key(live)]
    return None


cdef inline bint skipped_in_cat(object shape, int ndim):
    """PyTorch's legacy rule: a 1-D empty tensor joins any cat (and is left out)."""
    return len(shape) == 1 and shape[0] == 0 and ndim != 1


def _cat_forward(dim, *tensors, out=None):
    """cat's kernel: check the inputs, allocate the (promoted) result, copy each piece in."""
    parts = [t for t in tensors
             if not ((<TensorBase>t)._ndim == 1 and (<TensorBase>t)._sizes[0] == 0)] \
        or list(tensors[:1])
    cdef TensorBase ref = <TensorBase>parts[0], t
    if ref._ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    cdef int d = wrap_dim(dim, ref._ndim, "cat"), k
    cdef dtype dt = ref._dtype
    cdef int64_t total = 0
    cdef bint fake = False            # a dynamic capture's fake tensors among the parts
    for i in range(len(parts)):
        t = <TensorBase>parts[i]
        fake |= (t._keys & PYTHON_KEY_BIT) != 0
        if t._ndim != ref._ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref._ndim} "
                               f"and {t._ndim}")
        for k in range(ref._ndim):
            if k != d and t._sizes[k] != ref._sizes[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref._sizes[k]} but got size {t._sizes[k]} "
                                   f"for tensor number {i} in the list.")
        if t._device != ref._device and own_device(t) != own_device(ref):
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {own_device(ref)} and {own_device(t)}!")
        total += t._sizes[d]
    for t in tensors:                 # the skipped empties take part in the dtype too
        if t._dtype is not dt:
            dt = promote(dt, t._dtype)
    shape = list(ref.shape)
    # fake tensors (a dynamic capture's): the result's size is the symbolic sum (the copies
    # below then narrow it at plain bounds, which the capture guards)
    shape[d] = sum(p.shape[d] for p in parts) if fake else total
    cdef TensorBase result
    cdef int64_t sizes[MAX_DIM]
    if out is None:
        result = new_empty((shape,), dt, own_device(ref), "cat")
    else:
        for k in range(ref._ndim):
            sizes[k] = shape[k]
        if isinstance(out, TensorBase) and not can_cast(dt, (<TensorBase>out)._dtype):
            raise TypeError(f"torch.cat(): input types can't be cast to the desired output "
                            f"type {st_name((<TensorBase>out)._dtype)}")
        result = prepare_out(out, ref._ndim, sizes, dt, ref._device, "cat")
    # a fresh result overlaps no input and has no views: its pieces are plain copies (no
    # overlap or version checks) unless a mode (fake tensors, a dispatch mode) takes copy_
    cdef bint fresh = out is None and not (
        (op_copy._kernel_mask >> op_copy.resolve(effective_keys(result._keys))) & 1)
    cdef int64_t start = 0
    cdef TensorBase piece
    for t in parts:
        piece = narrow_c(result, d, start, t._sizes[d], 1)
        if fresh:
            run_copy(piece, t)
        else:
            grant_out_write(piece, None, None)  # out= may write a captured tensor, piecewise
            copy_into(piece, t, "cat")
        start += t._sizes[d]
    return result


def _cat(tensors, dim=0, out=None):
    """cat of a sequence of tensors (checked by the caller to be tensors, non-empty)."""
    cdef uint64_t keys = 0
    for t in tensors:
        keys |= (<TensorBase>t)._keys
    kernel = autograd_kernel_for(op_cat, keys)
    if kernel is not None:
        return kernel(dim, *tensors, out=out) if out is not None else kernel(dim, *tensors)
    return _cat_forward(dim, *tensors, out=out)


def _d_cat(ctx, g):
    """cat: each input's gradient is its slice of g - views, one split for all of them."""
    shapes = ctx.shapes[1:]
    cdef int nd = g.dim()
    cdef int d = wrap_dim(ctx.args[0], nd, "cat")
    sizes = [0 if skipped_in_cat(s, nd) else s[d] for s in shapes]
    pieces = split_with_sizes(g, sizes, d)
    return (None,) + tuple(zeros(s, dtype=g.dtype, device=g.device) if skipped_in_cat(s, nd)
                           else p for s, p in zip(shapes, pieces))


cdef tuple split_views(TensorBase t, int d, object sections):
    out, start = [], 0
    for s in sections:
        out.append(narrow_c(t, d, start, s, 1))
        start += s
    return tuple(out)


cdef list split_sections(TensorBase t, int d, int64_t step):
    cdef int64_t size = t._sizes[d]
    if step <= 0 and not (step == 0 and size == 0):
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={step}")
    return [min(step, size - i) for i in range(0, size, step)] if size else [0]


cdef list checked_sections(TensorBase t, int d, object split_sizes):
    sections = [s.__index__() for s in split_sizes]
    cdef int64_t total = 0
    for s in sections:
        if s < 0:
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                               f"entries, but got split_sizes={sections}")
        total += s
    if total != t._sizes[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{t._sizes[d]} (input tensor's size at dimension {d}), but got "
                           f"split_sizes={sections}")
    return sections


cdef int need_dims(TensorBase t, str op) except -1:
    if t._ndim == 0:
        raise RuntimeError(f"{op} expects at least a 1-dimensional tensor")
    return 0


def _split_forward(TensorBase tensor, split_size, dim=0):
    need_dims(tensor, "split")
    cdef int d = wrap_dim(dim, tensor._ndim, "split")
    return split_views(tensor, d, split_sections(tensor, d, split_size))


def _split_with_sizes_forward(TensorBase tensor, split_sizes, dim=0):
    need_dims(tensor, "split_with_sizes")
    cdef int d = wrap_dim(dim, tensor._ndim, "split_with_sizes")
    return split_views(tensor, d, checked_sections(tensor, d, split_sizes))


def _unbind_forward(TensorBase input, dim=0):
    if input._ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    cdef int d = wrap_dim(dim, input._ndim, "unbind")
    return tuple(select_c(input, d, i) for i in range(input._sizes[d]))


def split(TensorBase tensor, split_size_or_sections, dim=0):
    """Split into chunks of ``split_size_or_sections`` (an int or a list of sizes): views
    of ``tensor``, recorded as one autograd node."""
    if isinstance(split_size_or_sections, int):
        kernel = autograd_kernel_for(op_split, tensor._keys)
        if kernel is not None:
            return kernel(tensor, split_size_or_sections, dim)
        return _split_forward(tensor, split_size_or_sections, dim)
    return split_with_sizes(tensor, split_size_or_sections, dim)


def split_with_sizes(TensorBase input, split_sizes, dim=0):
    """Views of ``input`` along ``dim`` with the given sizes (which must sum to its size)."""
    kernel = autograd_kernel_for(op_split_with_sizes, input._keys)
    if kernel is not None:
        return kernel(input, split_sizes, dim)
    return _split_with_sizes_forward(input, split_sizes, dim)


def _split_views(TensorBase input, split_sizes, dim=0):
    """split_with_sizes whose outputs may be modified in place (tensor_split's)."""
    kernel = autograd_kernel_for(op_split_views, input._keys)
    if kernel is not None:
        return kernel(input, split_sizes, dim)
    return _split_with_sizes_forward(input, split_sizes, dim)


def chunk(TensorBase input, int chunks, dim=0, *, axis=None):
    """Split into ``chunks`` pieces of (nearly) equal size along ``dim`` (``axis``)."""
    if axis is not None:
        dim = _numpy_names("chunk", dim, None, axis, None, 0)[0]
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: "
                           f"{chunks}")
    need_dims(input, "chunk")
    d = wrap_dim(dim, input._ndim, "chunk")
    size = input._sizes[d]
    if size == 0:               # PyTorch: ``chunks`` empty pieces, not one
        return split(input, [0] * chunks, d)
    return split(input, (size + chunks - 1) // chunks, d)


def unbind(TensorBase input, dim=0, *, axis=None):
    """Remove dim ``dim`` (``axis``), returning a tuple of all slices along it (views, one
    node)."""
    if axis is not None:
        dim = _numpy_names("unbind", dim, None, axis, None, 0)[0]
    kernel = autograd_kernel_for(op_unbind, input._keys)
    if kernel is not None:
        return kernel(input, dim)
    return _unbind_forward(input, dim)


cdef tuple output_grads(object g):
    # a node with one output gets its gradient alone, with several a tuple
    return (g,) if isinstance(g, TensorBase) else tuple(g)


def _d_split(ctx, g):
    """split / split_with_sizes: the outputs' gradients (zeros where unused), joined."""
    return (_cat(output_grads(g), ctx.args[2]),)


def _d_unbind(ctx, g):
    cdef int d = ctx.args[1]
    return (_cat([unsqueeze_c(x, d) for x in output_grads(g)], d),)


# cat's entry routes again (AG excluded below the Autograd kernel): vmap's Batched kernel
# joins wrappers; _cat_forward's copy_ into a plain result could not take them
derive(op_cat, _d_cat, lambda dim, *tensors, out=None: _cat(tensors, dim, out), 0)
# The outputs are saved (metadata-only views) so the engine can give an unused one zeros.
derive(op_split, _d_split, _split_forward, SAVE_RESULT)
derive(op_split_with_sizes, _d_split, _split_with_sizes_forward, SAVE_RESULT)
derive(op_split_views, _d_split, _split_with_sizes_forward, SAVE_RESULT)
derive(op_unbind, _d_unbind, _unbind_forward, SAVE_RESULT)
