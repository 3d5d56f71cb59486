# --- Tensor's autograd attributes (attached to ember.Tensor in core/tensor.py) ---------

def _get_requires_grad(TensorBase self):
    return (self._keys & AG) != 0


def _set_requires_grad(TensorBase self, requires_grad):
    if not isinstance(requires_grad, bool):
        raise TypeError(f"requires_grad must be a bool, not {type(requires_grad).__name__}")
    if self._grad_fn is not None and not requires_grad:
        raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                           "want to use a computed variable in a subgraph that doesn't require "
                           "differentiation use var_no_grad = var.detach().")
    if requires_grad and not (self._dtype.is_floating_point or self._dtype.is_complex):
        raise RuntimeError("only Tensors of floating point and complex dtype can require "
                           "gradients")
    if requires_grad and self._inference and not inference_mode_c():
        raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                           "InferenceMode is not allowed.")
    if requires_grad:
        self._keys |= AG
    elif self._grad_fn is None:
        self._keys &= ~AG


cdef uint64_t VMAP_MODE = <uint64_t>1 << DispatchKey.VmapMode

cdef str _REQUIRES_GRAD_IN_TRANSFORM = (
    "You are attempting to call Tensor.requires_grad_() (or perhaps using "
    "torch.autograd.functional.* APIs) inside of a function being transformed by a functorch "
    "transform. This is unsupported, please attempt to use the functorch transforms (e.g. "
    "grad, vjp, jacrev, jacfwd, hessian) or call requires_grad_() outside of a function being "
    "transformed instead.")


def requires_grad_(TensorBase self, requires_grad=True):
    """Set requires_grad in place (leaves only); returns self.  Refused inside a function
    transform (grad, vjp, jvp, vmap and those built on them), as PyTorch refuses it: the
    ``requires_grad`` attribute and factories' ``requires_grad=True`` stay allowed."""
    if func_level_c() > 0 or (_state.tls_included() & ~_state.tls_excluded() & VMAP_MODE):
        raise RuntimeError(_REQUIRES_GRAD_IN_TRANSFORM)
    _set_requires_grad(self, requires_grad)
    return self


def set_requires_grad(TensorBase self, requires_grad=True):
    """requires_grad_ for ember's own code, which may run inside a function transform
    (factories, nn.Parameter, ember.func's machinery): PyTorch's equivalents set the flag
    without the method's check.  Returns self."""
    _set_requires_grad(self, requires_grad)
    return self


def _raw_grad(TensorBase self):
    """self.grad without the non-leaf warning (ember.compile compares it around a call)."""
    return self._grad


def _get_grad(TensorBase self):
    if self._grad is None and self._grad_fn is not None and not _retains(self):
        import warnings
        warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being "
                      "accessed. Its .grad attribute won't be populated during "
                      "autograd.backward(). If you indeed want the .grad field to be populated "
                      "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor.",
                      UserWarning, stacklevel=2)
    return self._grad


def _set_grad(TensorBase self, grad):
    if grad is not None:
        if not isinstance(grad, TensorBase):
            raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                            f"type {type(grad).__name__}")
        g = <TensorBase>grad
        if g._dtype is not self._dtype:
            raise RuntimeError("assigned grad has data of a different type")
        if g._device != self._device:
            raise RuntimeError("assigned grad has data located on a different device")
        if g.shape != self.shape:
            raise RuntimeError("assigned grad has data of a different size")
    self._grad = grad


def _get_grad_fn(TensorBase self):
    return self._grad_fn


def is_inference(TensorBase self):
    """True for a tensor created under inference_mode (or a view of one)."""
    return self._inference


def _is_leaf(TensorBase self):
    return self._grad_fn is None


def _output_nr(TensorBase self):
    return self._output_nr


def detach(TensorBase self):
    """A new tensor sharing self's data (and version counter) with no history."""
    return detach_c(self, True)


def detach_(TensorBase self):
    """Detach self from its history in place."""
    if self._base_ref is not None and self._grad_fn is not None:
        raise RuntimeError("Can't detach views in-place. Use detach() instead.")
    if self._level < func_level_c():        # a function transform's captured tensor
        refuse_write(self)
    self._grad_fn = None
    self._output_nr = 0
    self._keys &= ~AG
    return self


def _get_data(TensorBase self):
    return detach_c(self, False)


def _set_data(TensorBase self, TensorBase data):
    """`t.data = other`: t takes other's storage and metadata, keeping its autograd state."""
    _T._adopt_data(self, data)


cdef bint _retains(TensorBase t):
    return t._ag is not None and (<AutogradMeta>t._ag).retains_grad


# what ember.compile's capture is told (a replayed graph's tensors would not have it)
cdef str _ON_THE_TENSOR = "Tensor.{}() changes a tensor object, which a replay makes anew"


def retain_grad(TensorBase self):
    """Populate .grad of this non-leaf tensor during backward."""
    if not (self._keys & AG):
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self._grad_fn is None or _retains(self):
        return
    report_side_effect(_ON_THE_TENSOR.format("retain_grad"))
    meta_of(self).retains_grad = True
    (<Node>self._grad_fn)._retain_output(self._output_nr, self)


def _retains_grad(TensorBase self):
    return _retains(self)


def register_hook(TensorBase self, hook):
    """hook(grad) runs when the gradient of this tensor is computed and may return a
    replacement; returns a handle with remove()."""
    if not (self._keys & AG):
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    report_side_effect(_ON_THE_TENSOR.format("register_hook"))
    if self._grad_fn is None:
        return add_hook(meta_of(self).hooks, hook)
    return (<Node>self._grad_fn)._register_tensor_hook(self._output_nr, hook)


def _suspend_tensor_hooks(tensors):
    """Take away the Tensor.register_hook hooks of ``tensors`` (a leaf's, or a non-leaf's
    kept by its grad_fn for its output); returns what ``_restore_tensor_hooks`` puts back.
    A capture traces the backward with the engine: a hook it ran would be recorded into
    the graph, and the real backward, which runs the hook again, would apply it twice."""
    cdef TensorBase t
    cdef Node n
    cdef AutogradMeta m
    saved = []
    for x in tensors:
        if not isinstance(x, TensorBase) or not ((<TensorBase>x)._keys & AG):
            continue
        t = <TensorBase>x
        if t._grad_fn is None:
            m = meta_of(t)
            if m.hooks:
                saved.append((m, m.hooks))
                m.hooks = type(m.hooks)()
        else:
            n = <Node>t._grad_fn
            if n._tensor_hooks:
                saved.append((n, n._tensor_hooks))
                n._tensor_hooks = type(n._tensor_hooks)(
                    (k, v) for k, v in n._tensor_hooks.items() if v[0] != t._output_nr)
    return saved


def _restore_tensor_hooks(saved):
    for owner, hooks in reversed(saved):
        if isinstance(owner, AutogradMeta):
            (<AutogradMeta>owner).hooks = hooks
        else:
            (<Node>owner)._tensor_hooks = hooks


def register_post_accumulate_grad_hook(TensorBase self, hook):
    """hook(tensor) runs after the gradient was accumulated into this leaf's .grad."""
    if not (self._keys & AG):
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                           "tensors")
    report_side_effect(_ON_THE_TENSOR.format("register_post_accumulate_grad_hook"))
    return add_hook(meta_of(self).post_acc_hooks, hook)


def _grad_accumulator(TensorBase t):
    return accumulator(t) if (t._keys & AG) and t._grad_fn is None else None


def _edge(TensorBase t):
    return edge_of(t)


def _make_result(TensorBase t, Node node, int output_nr, bint fresh=False):
    """Make t an output of `node` (autograd.Function's outputs); ``fresh``: t is not one
    of the Function's inputs (then a view of a buffer its forward made is its own tensor)."""
    if fresh:
        own_output(t)
    t._grad_fn = node
    t._output_nr = output_nr
    t._keys |= AG


def _set_next_edges(Node node, tuple edges):
    node.next_edges = edges


def _save(TensorBase t, int output_nr=-1):
    """A SavedTensor for autograd.Function's save_for_backward."""
    return save(t, output_nr)


def _unpack(SavedTensor s, Node owner):
    return s.unpack(owner)


def _release(SavedTensor s):
    s.data = None
    s.packed = s.unpack_hook = None


def _conform(g, tuple meta):
    return conform(g, meta)
