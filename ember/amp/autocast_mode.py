"""Automatic mixed precision: ``ember.autocast`` / ``ember.amp.autocast``.

Autocast is a dispatcher key (core/_dispatch.pyx).  Entering a region switches the key on
in this thread's *included* key set; every op listed below holds a kernel at that key,
which casts the op's floating inputs (the policy's dtype), then redispatches with the key
excluded.  The cast is an ordinary differentiable op (``_to_copy``), so autograd records it
and gradients reach the original tensors in their own dtype.  Ops listed nowhere fall
through the key and run in the widest input type (type promotion), as in PyTorch.
"""
import contextlib
import functools
import threading
import warnings

from ember.amp._op_lists import POLICIES
from ember.core import _dispatch, _state
from ember.core import _dtype as _dtypes
from ember.core._dispatch import DispatchKey
from ember.core._tensor import TensorBase
from ember.core.mode_keys import redispatch_below

__all__ = ["autocast", "clear_autocast_cache", "get_autocast_dtype", "is_autocast_available",
           "is_autocast_cache_enabled", "is_autocast_enabled", "set_autocast_cache_enabled",
           "set_autocast_dtype", "set_autocast_enabled"]

_BIT = 1 << int(DispatchKey.Autocast)

# the modules that define the listed composites (imported when autocast is first used)
_DEFINING_MODULES = ("ember.nn.functional", "ember.linalg", "ember.core.norms",
                     "ember.core.fft")

_DEFAULT_DTYPES = {"cpu": "bfloat16", "cuda": "float16", "xpu": "bfloat16", "mps": "float16"}
_CPU_DTYPES = ("bfloat16", "float16")


class _TLS(threading.local):
    def __init__(self):
        self.enabled = {}           # device type -> bool
        self.dtype = {}             # device type -> ember dtype
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}             # id(leaf) -> (leaf, dtype, cast): weights cast once


_tls = _TLS()


def _dt(name):
    return _dtypes._dtype_by_name[name]


def _check_device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    return device_type


def is_autocast_available(device_type):
    """Whether autocast supports ``device_type`` (any device a plugin registers)."""
    from ember.core._device import _backend_for_type
    return _backend_for_type(_check_device_type(device_type)) is not None


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type`` in this thread (no argument: 'cuda', as
    PyTorch's deprecated form)."""
    return _tls.enabled.get("cuda" if device_type is None else device_type, False)


def get_autocast_dtype(device_type):
    """The dtype lower-precision ops run in under autocast on ``device_type``."""
    d = _tls.dtype.get(device_type)
    return d if d is not None else _dt(_DEFAULT_DTYPES.get(device_type, "float16"))


def set_autocast_dtype(device_type, dtype):
    _tls.dtype[device_type] = dtype


def set_autocast_enabled(device_type, enabled=None):
    """Switch autocast on/off for ``device_type`` (``set_autocast_enabled(bool)``, the old
    form, means 'cuda')."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _tls.enabled[device_type] = bool(enabled)
    if enabled:
        _install()
    included, excluded = _state._get_tls_keys()
    on = any(_tls.enabled.values())
    _state._set_tls_keys(included | _BIT if on else included & ~_BIT, excluded)


def is_autocast_cache_enabled():
    return _tls.cache_enabled


def set_autocast_cache_enabled(enabled):
    _tls.cache_enabled = bool(enabled)


def clear_autocast_cache():
    _tls.cache.clear()


# --- the kernels at the Autocast key ------------------------------------------------------

def _eligible(t, device_type):
    return (isinstance(t, TensorBase) and t.is_floating_point() and t.dtype is not _dtypes.float64
            and t.device.type == device_type)


def _cast_one(t, dtype, device_type):
    if dtype is None or not _eligible(t, device_type) or t.dtype is dtype:
        return t
    cacheable = _tls.cache_enabled and t.is_leaf and t.requires_grad
    if cacheable:
        hit = _tls.cache.get(id(t))
        if hit is not None and hit[0] is t and hit[1] is dtype:
            return hit[2]
    r = t.to(dtype)
    if cacheable:
        _tls.cache[id(t)] = (t, dtype, r)
    return r


def _cast(x, dtype, device_type):
    if isinstance(x, (list, tuple)):
        return type(x)(_cast(v, dtype, device_type) for v in x)
    return _cast_one(x, dtype, device_type)


def _tensors(args, kwargs):
    for x in (*args, *kwargs.values()):
        if isinstance(x, TensorBase):
            yield x
        elif isinstance(x, (list, tuple)):
            yield from (v for v in x if isinstance(v, TensorBase))


class _AutocastKernel:
    """Casts an op's floating inputs on an autocast-enabled device as that device type's
    op lists say (``_op_lists.POLICIES``), then redispatches."""
    __slots__ = ("op",)

    def __init__(self, op):
        self.op = op

    def __call__(self, *args, **kwargs):
        if kwargs.get("out") is not None:       # out= variants are not autocast (PyTorch)
            return redispatch_below(self.op, DispatchKey.Autocast, args, kwargs)
        for t in _tensors(args, kwargs):
            dev = t.device.type
            policy = _policy(dev).get(self.op.name)
            if policy is not None and policy != "keep" and _tls.enabled.get(dev, False):
                dtype = self._target(policy, dev, args, kwargs)
                args = _cast(args, dtype, dev)
                kwargs = {k: _cast(v, dtype, dev) for k, v in kwargs.items()}
            break
        return redispatch_below(self.op, DispatchKey.Autocast, args, kwargs)

    def _target(self, policy, dev, args, kwargs):
        if policy == "lower":
            return get_autocast_dtype(dev)
        if policy == "fp32":
            return _dtypes.float32
        widest = get_autocast_dtype(dev)
        for t in _tensors(args, kwargs):
            if _eligible(t, dev):
                widest = _dtypes.promote_types(widest, t.dtype)
        return widest

    def __repr__(self):
        return f"<autocast kernel of {self.op.name}>"


def _policy(device_type):
    """{op name: policy} of a device type: the CPU's lists, or CUDA's for accelerators."""
    return POLICIES.get(device_type) or POLICIES["cuda"]


_installed = set()


def _install():
    """Register the autocast kernels of every listed op defined so far (idempotent)."""
    import importlib
    for m in _DEFINING_MODULES:
        importlib.import_module(m)
    ops = _dispatch.all_ops()
    for name in set().union(*POLICIES.values()):
        op = ops.get(name)
        if op is not None and name not in _installed and op.entry is not None:
            op.register(DispatchKey.Autocast, _AutocastKernel(op))
            _installed.add(name)


# --- the context manager ------------------------------------------------------------------

def _snapshot():
    """This thread's autocast state (per device: on or off, and the dtype), to run code
    again later as it ran now (checkpoint's recomputation in backward)."""
    return dict(_tls.enabled), dict(_tls.dtype), _tls.cache_enabled


@contextlib.contextmanager
def _restored(snapshot):
    """The autocast state ``snapshot`` took, for the duration of the block."""
    enabled, dtype, cache = snapshot
    now = _snapshot()
    devices = set(enabled) | set(now[0])
    try:
        for dev in devices:
            _tls.dtype[dev] = dtype.get(dev, now[1].get(dev))
            set_autocast_enabled(dev, enabled.get(dev, False))
        _tls.cache_enabled = cache
        _tls.nesting += 1
        yield
    finally:
        _tls.nesting -= 1
        if _tls.nesting == 0:
            clear_autocast_cache()
        for dev in devices:
            set_autocast_enabled(dev, now[0].get(dev, False))
        _tls.dtype.clear()
        _tls.dtype.update(now[1])
        _tls.cache_enabled = now[2]


class autocast:
    """Run the ops of a region (or of a decorated function) in mixed precision:
    lower-precision-safe ops (matmul, linear, conv, ...) in ``dtype``, precision-sensitive
    ones (losses, linalg, fft, ...) in float32, everything else in its inputs' widest type.

    ``device_type``: 'cpu', 'cuda', ...; ``dtype``: default bfloat16 on the CPU (float16 on
    CUDA); ``enabled``: False makes the region a no-op; ``cache_enabled``: cast each weight
    (a leaf requiring grad) once per outermost region."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        self.device = _check_device_type(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None \
            else bool(cache_enabled)
        if not isinstance(enabled, bool):
            raise TypeError(f"autocast(): argument 'enabled' must be bool, not "
                            f"{type(enabled).__name__}")
        if enabled and device_type == "cpu" and self.fast_dtype not in (
                _dt(n) for n in _CPU_DTYPES):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                          "autocast.\nCPU Autocast only supports dtype of torch.bfloat16, "
                          "torch.float16 currently.", UserWarning, stacklevel=2)
            enabled = False
        elif enabled and device_type != "cpu":
            import ember
            if not is_autocast_available(device_type) or \
                    not ember.get_device_module(device_type).is_available():
                warnings.warn(f"{device_type.upper() if device_type == 'cuda' else device_type}"
                              f" is not available. Disabling autocast.", UserWarning,
                              stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        dev = self.device
        self.prev = is_autocast_enabled(dev)
        self.prev_fastdtype = get_autocast_dtype(dev)
        self.prev_cache_enabled = is_autocast_cache_enabled()
        set_autocast_dtype(dev, self.fast_dtype)
        set_autocast_enabled(dev, self._enabled)
        set_autocast_cache_enabled(self._cache_enabled)
        _tls.nesting += 1
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _tls.nesting -= 1
        if _tls.nesting == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast
