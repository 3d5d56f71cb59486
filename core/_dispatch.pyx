"""Dispatch keys and operator tables.

Why each key sits where it does (outermost first, as in PyTorch's DispatchKey.h):

* PythonMode: a user's mode (``__torch_dispatch__``-style) sees every call before
  anything else, so it can trace or override the whole stack below.
* Autocast: casts inputs per op before autograd records anything, so the graph sees the
  dtypes the kernels actually run on.
* VmapMode (PyTorch's FuncTorchVmapMode): switched on for the thread while a vmap runs.
  Random ops hold kernels there (vmap's ``randomness`` decides whether they error, draw
  once for the batch or once per sample), and so may Python composites that cannot run
  on vmap's wrappers.  A mode key, so it sees calls whose tensors are all plain.
* ForwardAD: a tensor carries it while it holds a tangent of forward-mode AD.  Its kernel
  runs the op once more for the primal (the dispatch below records the backward graph as
  usual), then the op's forward formula on the tangents.  Above Autograd, so the tangent
  formulas are themselves recorded (reverse-over-forward) and saved inputs keep their
  tangents (forward-over-reverse).  Tangent levels nest: the kernel handles the innermost
  level and hides it while running the op again, which handles the next.
* Autograd: records the backward graph, then redispatches below itself with Autograd
  excluded; everything under it is "just compute".
* Batched (PyTorch's FuncTorchBatched): vmap's wrappers carry it.  Its kernels are the
  batching rules: they unwrap the innermost vmap level, run the op on the physical tensors
  (with the thread state that vmap level started with, so an outer autograd or tangent
  level sees them) and wrap the result.  Below Autograd, so `grad` inside `vmap` records on
  the wrappers with their per-sample shapes and its backward formulas run batched (per-
  sample gradients).  An op without a rule gets the loop fallback (registered here as the
  key's fallback kernel), which warns and runs the op sample by sample.
* ADInplaceOrView: bumps version counters and sets up view metadata for in-place and
  view ops, below autograd so autograd has already saved its inputs' versions.
* Python: tensor subclasses that override ops at the tensor level.
* BackendSelect: factory functions with no tensor argument pick a backend from their
  ``device=`` argument.
* Backend keys (CPU, CUDA, MPS, XPU, Meta, and the keys plugins receive at run time)
  sit lowest: they own the data and run the kernels.  No device name is special-cased:
  a backend key only indexes the backend registry (_device.pyx).
* Profiler (outermost): while ``ember.profiler.profile`` runs, it holds a kernel for every
  op that times the call as the user made it, then redispatches below itself.  It sits
  above PythonMode so a mode's own op calls are timed too.  Nothing is registered there
  otherwise, so an inactive profiler costs nothing.

Transform levels (vmap's and forward AD's) share one counter, so a kernel at ForwardAD
finding a wrapper of a newer vmap level lets the Batched key go first: the order of the
keys is the order within one level, the level number orders the transforms.

Mode keys (Profiler, PythonMode, Autocast, VmapMode) are never carried by tensors; they are
switched on for a thread through the thread-local *included* set (core/_state.pyx), and
a kernel there redispatches by adding its own key to the thread-local *excluded* set.
Python composites (linear, addmm, the losses, ...) become operators of their own with
``@composite("name")``: they consult only the mode keys, so autocast and the profiler
see them as PyTorch's dispatcher sees its CompositeImplicit ops.
"""
from libc.stdint cimport uint64_t

from ember.core cimport _state

cdef uint64_t BACKEND_MASK = ((<uint64_t>1 << 32) - 1) & ~(<uint64_t>1)
# Autograd is not a default key: a tensor carries it exactly while it requires grad, so
# ops on tensors that do not pay nothing for autograd (PyTorch checks requires_grad inside
# its Autograd kernel instead; a missing bit is cheaper than a check)
cdef uint64_t DEFAULT_TENSOR_KEYS = (<uint64_t>1 << DispatchKey.ADInplaceOrView)
# Functionality keys fall through until a layer registers kernels for them.
cdef uint64_t _fallthrough = ~BACKEND_MASK & ~(<uint64_t>1)

FALLTHROUGH = object()      # register this to skip a key for one op
cdef dict _ops = {}         # name -> Op: every operator the core defines
_fallbacks = [None] * NUM_KEYS
cdef uint64_t _fallback_mask = 0    # keys with a fallback factory


cdef list _define_hooks = []     # fn(op) for each op defined from now on


def on_define(fn):
    """Call ``fn(op)`` for every op defined from now on: a layer that registers kernels by
    op name (vmap's rules) covers the ops of modules imported after it too."""
    _define_hooks.append(fn)


def get_op(name):
    """The Op named ``name`` (KeyError if none)."""
    return _ops[name]


def all_ops():
    return dict(_ops)


def key_name(int key):
    """The name of dispatch key ``key`` (dynamic backend keys are named by device type)."""
    try:
        return DispatchKey(key).name
    except ValueError:
        from ember.core._device import _backend_for_key
        b = _backend_for_key(key)
        return f"Backend[{b.type}]" if b is not None else f"Key{key}"


def keyset_names(uint64_t keys):
    """The keys of a 64-bit key set, highest priority first."""
    out = []
    while keys:
        k = highest_key(keys)
        out.append(key_name(k))
        keys &= ~(<uint64_t>1 << k)
    return out


def set_fallback(int key, factory):
    """For an op with no kernel at ``key`` (and not falling through there): register
    ``factory(op)`` as its kernel the first time a call reaches it (None: raise instead).
    How a key gives every op, those defined later too, one generic kernel."""
    global _fallback_mask
    _fallbacks[key] = factory
    if factory is None:
        _fallback_mask &= ~(<uint64_t>1 << key)
    else:
        _fallback_mask |= (<uint64_t>1 << key)


def set_fallthrough(int key, bint fallthrough):
    """Make ``key`` fall through (or not) for every op with no kernel of its own there."""
    global _fallthrough
    if fallthrough:
        _fallthrough |= (<uint64_t>1 << key)
    else:
        _fallthrough &= ~(<uint64_t>1 << key)


cdef class Op:
    """One operator: its schema, shape rule, derivative and per-key kernel table."""

    def __init__(self, str name, str schema, int family, int code, shape_rule=None):
        if name in _ops:
            raise RuntimeError(f"op '{name}' is already defined")
        _ops[name] = self
        self.name = name
        self.schema = schema
        self.family = family
        self.code = code
        self.shape_rule = shape_rule
        self.derivative = None
        self.entry = None
        self._table = [None] * NUM_KEYS
        self._kernel_mask = 0
        self._ft_mask = 0
        for fn in _define_hooks:
            fn(self)

    def register(self, int key, kernel):
        """Register ``kernel`` (a callable, or FALLTHROUGH) for dispatch key ``key``."""
        if not 0 < key < NUM_KEYS:
            raise ValueError(f"{self.name}: dispatch key {key} is out of range")
        self.unregister(key)
        self._table[key] = kernel
        if kernel is FALLTHROUGH:
            self._ft_mask |= (<uint64_t>1 << key)
        else:
            self._kernel_mask |= (<uint64_t>1 << key)

    def unregister(self, int key):
        self._table[key] = None
        self._kernel_mask &= ~(<uint64_t>1 << key)
        self._ft_mask &= ~(<uint64_t>1 << key)

    cdef int resolve(self, uint64_t keys) except -1:
        # a functionality key is live if this op has a kernel there, or if neither the op
        # nor the global table lets it fall through
        cdef uint64_t live = (keys & ~BACKEND_MASK) & (
            self._kernel_mask | ~(_fallthrough | self._ft_mask))
        cdef int k
        if live:
            k = highest_key(live)
            if not (self._kernel_mask >> k) & 1:
                if _fallbacks[k] is None:
                    raise NotImplementedError(
                        f"{self.name}: no kernel registered for dispatch key {key_name(k)}")
                self.register(k, _fallbacks[k](self))
            return k
        k = highest_key(keys & BACKEND_MASK)
        if k == 0:
            raise RuntimeError(f"{self.name}: no backend dispatch key among the inputs")
        return k

    def redispatch(self, int key, uint64_t keys, tuple args, dict kwargs):
        """Run this op as the dispatcher would below mode key ``key``, for a call whose
        effective key set (inputs' keys with this thread's included/excluded applied) is
        ``keys``: the next functionality key with a kernel, else a backend override, else
        ``entry`` (which runs below Autograd).  ``entry`` alone would skip Autograd for
        ops whose entry calls their implementation directly."""
        cdef uint64_t below = keys & ((<uint64_t>1 << key) - 1)
        # a composite (family -1) runs its function below the mode keys: the tensor keys'
        # fallbacks are for ops that reach them
        cdef uint64_t fallbacks = (_fallback_mask & ~(_fallthrough | self._ft_mask)) \
            if self.family != -1 else 0
        cdef uint64_t live = below & ~BACKEND_MASK & (self._kernel_mask | fallbacks)
        cdef int k
        if live:
            k = highest_key(live)
            if not (self._kernel_mask >> k) & 1:
                self.register(k, _fallbacks[k](self))
            return self._table[k](*args, **kwargs)
        k = highest_key(below & BACKEND_MASK)
        if k and (self._kernel_mask >> k) & 1:
            return self._table[k](*args, **kwargs)
        return self.entry(*args, **kwargs)

    def trace(self, uint64_t keys):
        """[(key name, what happens there)] for a call with dispatch key set ``keys``,
        highest priority first, ending at the key that handles the call."""
        steps = []
        cdef uint64_t rest = keys
        cdef int k
        while rest:
            k = highest_key(rest)
            rest &= ~(<uint64_t>1 << k)
            name = key_name(k)
            if (self._kernel_mask >> k) & 1:
                steps.append((name, f"kernel {getattr(self._table[k], '__qualname__', self._table[k])!r}"))
                return steps
            if (BACKEND_MASK >> k) & 1:
                from ember.core._device import _backend_for_key
                b = _backend_for_key(k)
                steps.append((name, f"backend '{b.type}' primitive kernels from plugin "
                                    f"{b.plugin!r}" if b is not None else "unregistered backend"))
                return steps
            if ((_fallthrough | self._ft_mask) >> k) & 1:
                steps.append((name, "fallthrough"))
            else:
                steps.append((name, "no kernel: NotImplementedError"))
                return steps
        return steps

    def __repr__(self):
        return f"<ember op {self.name}: {self.schema}>"


cdef class DispatchKeySet:
    """A set of dispatch keys as a 64-bit mask (bit k = key k); iterates highest priority
    first.  The dispatcher works on the raw mask; this class is for inspecting it."""

    cdef readonly uint64_t mask

    def __init__(self, keys=()):
        cdef uint64_t m = 0
        if isinstance(keys, int):
            m = keys
        else:
            for k in keys:
                m |= (<uint64_t>1 << int(k))
        self.mask = m

    def has(self, key):
        return bool((self.mask >> int(key)) & 1)

    def highest_priority_key(self):
        """The key that sees a call first (Undefined for an empty set)."""
        return _as_key(highest_key(self.mask))

    def __iter__(self):
        cdef uint64_t m = self.mask
        cdef int k
        while m:
            k = highest_key(m)
            m &= ~(<uint64_t>1 << k)
            yield _as_key(k)

    def __or__(self, other):
        return DispatchKeySet((<DispatchKeySet>self).mask | (<DispatchKeySet>other).mask)

    def __and__(self, other):
        return DispatchKeySet((<DispatchKeySet>self).mask & (<DispatchKeySet>other).mask)

    def __sub__(self, other):
        return DispatchKeySet((<DispatchKeySet>self).mask & ~(<DispatchKeySet>other).mask)

    def __eq__(self, other):
        return isinstance(other, DispatchKeySet) and self.mask == (<DispatchKeySet>other).mask

    def __hash__(self):
        return hash(self.mask)

    def __len__(self):
        return bin(self.mask).count("1")

    def __repr__(self):
        return f"DispatchKeySet({', '.join(keyset_names(self.mask))})"


cdef object _as_key(int k):
    """A DispatchKey member, or the plain int of a run-time backend key."""
    try:
        return DispatchKey(k)
    except ValueError:
        return k


cdef uint64_t VMAP_MODE = <uint64_t>1 << DispatchKey.VmapMode
cdef uint64_t MODE_KEYS = ((<uint64_t>1 << DispatchKey.Autocast)
                           | (<uint64_t>1 << DispatchKey.PythonMode)
                           | (<uint64_t>1 << DispatchKey.Profiler) | VMAP_MODE)
cdef object _vmap_composite = None


cdef inline uint64_t _live_mode_keys() noexcept:
    return _state.tls_included() & ~_state.tls_excluded() & MODE_KEYS


def mode_keys_active():
    """Whether this thread has a mode key (Profiler, PythonMode, Autocast, VmapMode)
    switched on."""
    return _live_mode_keys() != 0


def live_mode_keys():
    """The mode keys switched on in this thread, as a mask of DispatchKey bits."""
    return _live_mode_keys()


def _set_vmap_composite(fn):
    """fn(op, python_function, args, kwargs): how a composite with no VmapMode kernel of
    its own runs while a vmap is on (ember.func: decomposed, or a loop over the batch)."""
    global _vmap_composite
    _vmap_composite = fn


cdef class Composite:
    """A Python composite made an operator: with no mode key live for this thread it calls
    the Python function directly (one mask test); otherwise the kernel registered at the
    highest live mode key runs, and redispatches to ``op.entry`` (the function)."""
    cdef readonly Op op
    cdef readonly object fn
    cdef dict __dict__

    def __call__(self, *args, **kwargs):
        cdef uint64_t on = _state.tls_included() & ~_state.tls_excluded()
        cdef uint64_t live = on & self.op._kernel_mask & MODE_KEYS
        if live:
            return self.op._table[highest_key(live)](*args, **kwargs)
        if on & VMAP_MODE and _vmap_composite is not None:
            return _vmap_composite(self.op, self.fn, args, kwargs)
        return self.fn(*args, **kwargs)

    def __get__(self, obj, objtype):
        if obj is None:
            return self
        import types
        return types.MethodType(self, obj)

    def __reduce__(self):
        return self.__qualname__

    def __repr__(self):
        return f"<ember composite op {self.op.name}: {self.fn!r}>"


def composite(str name, str schema=None):
    """Decorator: register the Python function as the composite operator ``name`` (its
    ``entry``); mode keys (Autocast, Profiler) may then hold kernels for it."""
    def wrap(fn):
        op = _ops.get(name)
        if op is None:
            op = Op(name, schema or f"{name}(...)", -1, -1)
        if op.entry is not None:
            raise RuntimeError(f"composite op '{name}' is already defined")
        op.entry = fn
        c = Composite.__new__(Composite)
        (<Composite>c).op = op
        (<Composite>c).fn = fn
        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            c.__dict__[attr] = getattr(fn, attr, None)
        c.__dict__["__wrapped__"] = fn
        return c
    return wrap
