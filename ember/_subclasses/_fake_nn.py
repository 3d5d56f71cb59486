"""FakeTensor kernels for the nn ops (norms, pooling) and the static-shape fallback.

Norms and pooling keep the batch (and spatial) sizes symbolic, so a CNN captures with a
dynamic batch.  Any other op whose fake inputs all have concrete sizes runs on the hint meta
tensors and takes their shapes: exact, because the meta backend refuses the ops whose output
shape depends on data (nonzero, unique, masked_select).
"""
import ember
from ember._subclasses.fake_tensor import FakeTensor, hint
from ember._sym import SymInt

__all__ = ["NN_RULES", "static_fallback"]


def _fake(ref, sizes, like):
    from ember._subclasses._fake_impls import _fake as make
    return make(ref, sizes, like)


def _unwrap(x):
    from ember._subclasses._fake_impls import _unwrap as unwrap
    return unwrap(x)


def _meta(sizes, dtype):
    return ember.empty(hint(tuple(sizes)), dtype=dtype, device="meta")


# ---- norms --------------------------------------------------------------------------------

def _batch_norm(x, weight, bias, training, momentum, eps, running_mean=None, running_var=None):
    refs = ember.ops.ember.native_batch_norm(
        _unwrap(x), _unwrap(weight), _unwrap(bias), training=training, momentum=momentum,
        eps=eps, running_mean=_unwrap(running_mean), running_var=_unwrap(running_var))
    channels = x._fake_sizes[1] if x.dim() > 1 else x._fake_sizes[0]
    stats = [(channels,) if r.dim() == 1 else tuple(r.shape) for r in refs[1:]]
    return (_fake(refs[0], x._fake_sizes, x),) + tuple(
        _fake(r, s, x) for r, s in zip(refs[1:], stats))


def _layer_norm(x, normalized_shape, weight, bias, eps):
    refs = ember.ops.ember.native_layer_norm(_unwrap(x), hint(tuple(normalized_shape)),
                                             _unwrap(weight), _unwrap(bias), eps)
    axis = x.dim() - len(normalized_shape)
    stats = tuple(x._fake_sizes[:axis]) + (1,) * len(normalized_shape)
    return (_fake(refs[0], x._fake_sizes, x), _fake(refs[1], stats, x),
            _fake(refs[2], stats, x))


# ---- pooling ------------------------------------------------------------------------------

def _pooled(size, k, s, p, d, ceil_mode):
    """PyTorch's pooling output size (guards when ``size`` is symbolic and ceil_mode)."""
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out = out - 1
    return out


def _window_sizes(x, kernel_size, stride, padding, dilation, ceil_mode):
    lead, spatial = x._fake_sizes[:-2], x._fake_sizes[-2:]
    return tuple(lead) + tuple(_pooled(n, k, s, p, d, ceil_mode) for n, k, s, p, d in
                               zip(spatial, kernel_size, stride, padding, dilation))


def _max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode):
    sizes = _window_sizes(x, kernel_size, stride, padding, dilation, ceil_mode)
    return (_fake(_meta(sizes, x.dtype), sizes, x), _fake(_meta(sizes, ember.int64), sizes, x))


def _avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
    sizes = _window_sizes(x, kernel_size, stride, padding, (1, 1), ceil_mode)
    return _fake(_meta(sizes, x.dtype), sizes, x)


def _adaptive_avg_pool2d(x, output_size):
    sizes = tuple(x._fake_sizes[:-2]) + tuple(output_size)
    return _fake(_meta(sizes, x.dtype), sizes, x)


def _adaptive_max_pool2d(x, output_size):
    sizes = tuple(x._fake_sizes[:-2]) + tuple(output_size)
    return (_fake(_meta(sizes, x.dtype), sizes, x), _fake(_meta(sizes, ember.int64), sizes, x))


NN_RULES = {"native_batch_norm": _batch_norm, "native_layer_norm": _layer_norm,
            "max_pool2d_with_indices": _max_pool2d, "avg_pool2d": _avg_pool2d,
            "_adaptive_avg_pool2d": _adaptive_avg_pool2d,
            "adaptive_max_pool2d": _adaptive_max_pool2d}


# ---- concrete sizes -----------------------------------------------------------------------

def _symbolic(x):
    if isinstance(x, SymInt):
        return True
    if isinstance(x, FakeTensor):
        return any(isinstance(s, SymInt) for s in x._fake_sizes)
    if isinstance(x, (tuple, list)):
        return any(_symbolic(v) for v in x)
    if isinstance(x, dict):
        return any(_symbolic(v) for v in x.values())
    return False


def _wrap(ref, like):
    if isinstance(ref, ember.Tensor):
        return _fake(ref, tuple(ref.shape), like)
    if isinstance(ref, (tuple, list)):
        return type(ref)(_wrap(r, like) for r in ref) if type(ref) in (tuple, list) else \
            type(ref)(*(_wrap(r, like) for r in ref))
    return ref


def static_fallback(name):
    """The kernel of an op without a symbolic rule: with concrete sizes only, the op on the
    hint meta tensors; a fake ``out=`` tensor is written in place and returned."""
    def kernel(*args, **kwargs):
        if _symbolic((args, kwargs)):
            raise NotImplementedError(f"{name}: no symbolic shape rule for FakeTensor inputs "
                                      f"(ember._subclasses.fake_tensor)")
        like = next(a for a in (*args, *kwargs.values()) if isinstance(a, FakeTensor))
        out = kwargs.get("out")
        ref = getattr(ember.ops.ember, name)(*_unwrap(args), **{
            k: _unwrap(v) for k, v in kwargs.items()})
        if isinstance(out, FakeTensor):
            return out
        if name.endswith("_") and args and isinstance(args[0], FakeTensor):
            return args[0] if isinstance(ref, ember.Tensor) else ref
        return _wrap(ref, like)
    return kernel
