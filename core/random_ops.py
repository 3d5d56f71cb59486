"""Random sampling composed from the counter-based uniform/normal fills: randint, normal,
bernoulli.  They draw from ember's generators, so a seed reproduces them on any device and
at any thread count."""
from ember.core import _tensor as _T
from ember.core._dispatch import DispatchKey, live_mode_keys
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _is_all_true, _tensor_arg
from ember.core._results import into_out
from ember.core._tensor import TensorBase
from ember.core.function import zero_derivative
from ember.core.shape_rules import broadcast_shapes

__all__ = ["bernoulli", "normal", "randint", "randint_like"]

_FLOAT64 = _dtype_by_name["float64"]
_VMAP_MODE = 1 << int(DispatchKey.VmapMode)


def randint(*args, generator=None, dtype=None, device=None, requires_grad=False, **kwargs):
    """randint(high, size) or randint(low, high, size): integers uniform in [low, high)."""
    if "size" in kwargs:
        args = args + (kwargs.pop("size"),)
    if "high" in kwargs:
        args = ((kwargs.pop("low", 0), kwargs.pop("high")) + args)
    kwargs.pop("layout", None)                 # strided and host memory: taken and ignored,
    kwargs.pop("pin_memory", None)             # as the other factories do
    if kwargs:
        raise TypeError(f"randint() got unexpected keyword arguments {sorted(kwargs)}")
    if len(args) == 2:
        low, (high, size) = 0, args
    elif len(args) == 3:
        low, high, size = args
    else:
        raise TypeError("randint() expects (high, size) or (low, high, size)")
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    dtype = _dtype_by_name["int64"] if dtype is None else dtype
    # uniforms in [0, high - low), whose truncation is their floor: one fill, one cast
    # (and one add when low is not 0) rather than a chain of float64 temporaries
    if live_mode_keys() & _VMAP_MODE:
        # inside vmap the factory draws (per sample under randomness="different"); the
        # fill of an unbatched tensor would be refused as in-place randomness
        u = _T.rand(*tuple(size), dtype=_FLOAT64, device=device, generator=generator) * \
            float(high - low)
    else:
        u = _T._fill_uniform(_T.empty(*tuple(size), dtype=_FLOAT64, device=device), 0.0,
                             float(high - low), generator)
    exact = not dtype.is_floating_point and dtype is not _dtype_by_name["bool"]
    r = u.to(dtype) if exact else u.floor_().to(dtype)
    r = r.add_(low) if low else r
    return r.requires_grad_() if requires_grad else r     # integer dtypes refuse, as torch


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False, memory_format=None, layout=None, pin_memory=False):
    """randint with ``input``'s shape (and dtype and device unless given)."""
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), generator=generator,
                   dtype=input.dtype if dtype is None else dtype,
                   device=input.device if device is None else device,
                   requires_grad=requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None,
           device=None, requires_grad=False):
    """normal(mean, std, size=None, *, generator=None, out=None, dtype=None, device=None,
    requires_grad=False) -> Tensor: samples of N(mean, std^2).  Float ``mean`` and ``std``
    need ``size``; a tensor ``mean`` and/or ``std`` gives samples of their broadcast shape
    in the dtype of ``mean`` (of ``std`` when mean is a float)."""
    if out is not None:
        if dtype is None and not isinstance(mean, TensorBase) and \
                not isinstance(std, TensorBase):
            dtype = out.dtype               # drawn in out's dtype, as PyTorch's normal.out
        return into_out("normal", normal(mean, std, size, generator=generator, dtype=dtype,
                                         device=device), out, mean, std)
    tensors = [x for x in (mean, std) if isinstance(x, TensorBase)]
    if isinstance(std, TensorBase):
        # _is_all_true: NaN fails too, and the check works on vmap's batched std
        if std.numel() and not bool(_is_all_true(std >= 0)):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    if size is not None:
        if tensors:
            raise TypeError("normal(): size is only accepted with float mean and std")
        z = _T.randn(*tuple(size), generator=generator, dtype=dtype, device=device)
        return z.mul_(std).add_(mean).requires_grad_(requires_grad)
    if not tensors:
        raise TypeError("normal(): give a size, or mean/std tensors")
    like = mean if isinstance(mean, TensorBase) else std
    shape = broadcast_shapes(*(tuple(t.shape) for t in tensors))
    z = _T.randn(*shape, generator=generator, dtype=like.dtype, device=like.device)
    # PyTorch records normal with a zero gradient (its samples are not reparameterised);
    # the inputs are expanded so the node's zero tangents have the result's shape
    return zero_derivative("normal", lambda *_: z.mul_(std).add_(mean),
                           *(t.expand(shape) for t in tensors))


def bernoulli(input, p=None, *, generator=None, out=None):
    """1 with probability ``input`` (or ``p``), else 0, in input's dtype."""
    if out is not None:
        return into_out("bernoulli", bernoulli(input, p, generator=generator), out, input)
    _tensor_arg(input, "bernoulli")
    probs = input if p is None else p
    u = _T.rand(*tuple(input.shape), generator=generator, dtype=_FLOAT64, device=input.device)
    # PyTorch records bernoulli with a zero gradient for its probabilities
    return zero_derivative("bernoulli", lambda x: (u < probs).to(x.dtype), input)
