"""``make_tensor``: a random tensor for tests, as torch.testing.make_tensor."""
import math

from ember.core._autograd import set_requires_grad

__all__ = ["make_tensor"]

# default value ranges by kind: PyTorch's (-9, 9) for floats and signed ints, [0, 10) uint8
_FLOAT_RANGE, _INT_RANGE = (-9.0, 9.0), (-9, 10)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` with values drawn uniformly from [low, high) (floats: [-9, 9],
    integers: [-9, 10), uint8 from 0, bool: {False, True}); ``noncontiguous`` gives a view
    with doubled strides over the same values, ``exclude_zero`` replaces zeros by the
    smallest positive step (1 for integers, eps for floats)."""
    import ember
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, ember.Size)):
        shape = tuple(shape[0])
    if requires_grad and not dtype.is_floating_point:
        raise ValueError(f"make_tensor: requires_grad=True is not supported for {dtype}")
    if low is not None and high is not None and low > high:
        raise ValueError(f"make_tensor: low ({low}) must be less than or equal to "
                         f"high ({high})")
    for name, v in (("low", low), ("high", high)):
        if v is not None and isinstance(v, float) and math.isnan(v):
            raise ValueError(f"make_tensor: {name} cannot be NaN")
    if dtype is ember.bool:
        t = ember.randint(0, 2, shape, device=device).to(ember.bool)
    elif dtype.is_floating_point:
        lo = _FLOAT_RANGE[0] if low is None else max(low, float(ember.finfo(dtype).min))
        hi = _FLOAT_RANGE[1] if high is None else min(high, float(ember.finfo(dtype).max))
        t = (ember.rand(shape, dtype=ember.float64, device=device) * (hi - lo) + lo).to(dtype)
    else:
        info = ember.iinfo(dtype)
        default_lo = 0 if dtype is ember.uint8 else _INT_RANGE[0]
        lo = default_lo if low is None else max(math.ceil(low), info.min)
        hi = _INT_RANGE[1] if high is None else min(math.ceil(high) if high != low
                                                    else high + 1, info.max)
        t = ember.randint(lo, max(hi, lo + 1), shape, dtype=dtype, device=device)
    if exclude_zero and dtype is not ember.bool:
        step = 1 if not dtype.is_floating_point else float(ember.finfo(dtype).tiny)
        t = ember.where(t == 0, ember.full((), step, dtype=dtype, device=device), t)
    if noncontiguous and t.numel() > 1:
        doubled = ember.empty(*t.shape[:-1], t.shape[-1] * 2, dtype=dtype, device=device)
        view = doubled[..., ::2]
        view.copy_(t)
        t = view
    if requires_grad:
        set_requires_grad(t, True)
    return t
