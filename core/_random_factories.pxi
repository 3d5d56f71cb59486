# The random factories (rand, randn, rand_like, randn_like): a fresh tensor filled by the
# generator (_random.pxi); inside vmap, what ember.func registered draws per sample.

cdef uint64_t VMAP_MODE_BIT = <uint64_t>1 << DispatchKey.VmapMode
cdef object _vmap_random = None


def _set_vmap_random(fn):
    """fn(fill, draw, generator) -> tensor: what a random factory returns inside vmap;
    ``draw(lead)`` draws the factory's tensor with a leading dim of size ``lead`` (None:
    its own shape) and ``fill`` names the op that draws ('uniform_' or 'normal_')."""
    global _vmap_random
    _vmap_random = fn


cdef inline bint in_vmap() noexcept:
    return (_state.tls_included() & ~_state.tls_excluded() & VMAP_MODE_BIT) != 0 \
        and _vmap_random is not None


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None,
         **kwargs):
    """Uniform samples from [0, 1)."""
    size = factory_size(size, kwargs, "rand")
    if in_vmap():
        return with_grad(_vmap_random("uniform_", lambda lead: rand(
            *(size if lead is None else (lead,) + parse_size(size)), generator=generator,
            dtype=dtype, device=device), generator), requires_grad)
    dtype, device = _factories.out_spec(out, dtype, device, "rand")
    return _factories.factory_out(random_fill(op_uniform, new_empty(size, dtype, device, "rand"),
                                              0.0, 1.0, generator), out, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None,
          **kwargs):
    """Samples from the standard normal distribution."""
    size = factory_size(size, kwargs, "randn")
    if in_vmap():
        return with_grad(_vmap_random("normal_", lambda lead: randn(
            *(size if lead is None else (lead,) + parse_size(size)), generator=generator,
            dtype=dtype, device=device), generator), requires_grad)
    dtype, device = _factories.out_spec(out, dtype, device, "randn")
    return _factories.factory_out(random_fill(op_normal, new_empty(size, dtype, device, "randn"),
                                              0.0, 1.0, generator), out, requires_grad)


cdef object like_draw(object factory, object input, object lead, object dtype,
                      object device):
    """rand_like/randn_like inside vmap: a draw of input's (per-sample) shape, with a
    leading dim of ``lead`` (None, randomness="same": one draw every sample shares)."""
    return (rand if factory is rand_like else randn)(
        ((lead,) if lead is not None else ()) + tuple(input.shape),
        dtype=input.dtype if dtype is None else dtype,
        device=input.device if device is None else device)


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
              memory_format=None, layout=None, pin_memory=False):
    if in_vmap():
        return with_grad(_vmap_random("uniform_", lambda lead: like_draw(
            rand_like, input, lead, dtype, device), None), requires_grad)
    return with_grad(random_fill(op_uniform, new_like(input, dtype, device, "rand_like", memory_format),
                                 0.0, 1.0, generator), requires_grad)


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
              memory_format=None, layout=None, pin_memory=False):
    if in_vmap():
        return with_grad(_vmap_random("normal_", lambda lead: like_draw(
            randn_like, input, lead, dtype, device), None), requires_grad)
    return with_grad(random_fill(op_normal, new_like(input, dtype, device, "randn_like", memory_format),
                                 0.0, 1.0, generator), requires_grad)


def _shuffled_range(TensorBase u):
    """The permutation of 0 .. n-1 that Fisher-Yates picks with the uniforms ``u`` (n float64
    values in [0, 1), contiguous, on the host): randperm's, O(n) where sorting random keys
    is O(n log n) (element i swaps with j = floor(u[i] (i + 1)))."""
    if u._dtype.code != EMBER_FLOAT64 or u._ndim != 1 or not u.contiguous_c() \
            or u._device.type != "cpu":
        raise RuntimeError("_shuffled_range: expects a contiguous 1-D float64 host tensor")
    cdef int64_t n = u._sizes[0], i, j, t
    report_allocation()             # written past the dispatcher: a capture stops here
    cdef TensorBase out = _factories.empty(n, dtype=_dtypes.int64)
    cdef const double* w = <const double*>u._storage.data + u._offset if n else NULL
    cdef int64_t* p = <int64_t*>out._storage.data if n else NULL
    with nogil:
        for i in range(n):
            p[i] = i
        for i in range(n - 1, 0, -1):
            j = <int64_t>(w[i] * <double>(i + 1))
            if j > i:                   # w[i] * (i + 1) rounded up to i + 1
                j = i
            t = p[i]
            p[i] = p[j]
            p[j] = t
    return out
