# Random numbers: a Generator is (seed, offset) for the counter-based kernels, so the
# same seed gives the same numbers at any thread count.

DEF DEFAULT_SEED = 67280421310721        # PyTorch's default seed

cdef Op op_uniform = Op("uniform_", "uniform_(Tensor(a!) self, float from=0, float to=1, *, "
                        "Generator? generator=None) -> Tensor(a!)", FAMILY_RANDOM,
                        EMBER_RANDOM_UNIFORM, None)
cdef Op op_normal = Op("normal_", "normal_(Tensor(a!) self, float mean=0, float std=1, *, "
                       "Generator? generator=None) -> Tensor(a!)", FAMILY_RANDOM,
                       EMBER_RANDOM_NORMAL, None)


cdef class Generator:
    """A random number generator: a 64-bit seed and a 64-bit counter offset."""

    cdef readonly device device
    cdef uint64_t _seed
    cdef uint64_t _offset

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self._seed = DEFAULT_SEED
        self._offset = 0

    def manual_seed(self, seed):
        """Seed the generator; returns it."""
        report_side_effect("manual_seed() reseeds a generator")
        seed = int(seed)
        if seed < -(1 << 63) or seed >= (1 << 64):
            raise RuntimeError(f"Overflow when unpacking long long")
        self._seed = seed & 0xFFFFFFFFFFFFFFFF
        self._offset = 0
        return self

    def seed(self):
        """Seed from a non-deterministic source; returns the seed."""
        import os
        s = int.from_bytes(os.urandom(8), "little") & 0x7FFFFFFFFFFFFFFF
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The state as a uint8 tensor of 16 bytes (seed, offset; little endian)."""
        data = self._seed.to_bytes(8, "little") + self._offset.to_bytes(8, "little")
        return tensor(list(data), dtype=_dtypes.uint8)

    def set_state(self, new_state):
        cdef TensorBase st = as_tensor_arg(new_state, "set_state", "new_state")
        if st._dtype is not _dtypes.uint8 or st.numel_c() != 16:
            raise RuntimeError("Expected a torch.ByteTensor of 16 bytes as the generator state")
        raw = bytes(st.tolist())
        self._seed = int.from_bytes(raw[:8], "little")
        self._offset = int.from_bytes(raw[8:], "little")
        return self

    cdef uint64_t advance(self, uint64_t n):
        cdef uint64_t off = self._offset
        self._offset += n
        return off


cdef dict _default_generators = {}
cdef object _last_manual_seed = None     # seeds default generators created later too


cdef Generator default_generator_for(device dev):
    g = _default_generators.get(dev.type)
    if g is None:
        g = Generator(dev.type)
        if _last_manual_seed is not None:
            g.manual_seed(_last_manual_seed)
        _default_generators[dev.type] = g
    return <Generator>g


def _default_generator(dev="cpu"):
    return default_generator_for(as_device(dev))


def manual_seed(seed):
    """Seed every device type's default generator (including ones created later)."""
    global _last_manual_seed
    default_generator_for(cpu_device()).manual_seed(seed)
    _last_manual_seed = seed
    for g in _default_generators.values():
        g.manual_seed(seed)
    return default_generator_for(cpu_device())


def seed():
    """Seed the default generators non-deterministically; returns the seed."""
    s = default_generator_for(cpu_device()).seed()
    manual_seed(s)
    return s


def initial_seed():
    return default_generator_for(cpu_device()).initial_seed()


cdef object random_fill(Op op, TensorBase t, double p0, double p1, object generator):
    """Fill t in place from the counter-based generator; advances it by t.numel().  Through
    the dispatcher, so autograd sees the write (a leaf refuses it, a history is cut)."""
    cdef int k = op.resolve(effective_keys(t._keys))
    if (op._kernel_mask >> k) & 1:
        return op._table[k](t, p0, p1, generator=generator)
    if t._dtype.is_complex:
        # PyTorch's complex draws: the real and imaginary parts each uniform in [from, to),
        # or each normal with variance std^2 / 2 (so that E|z - mean|^2 = std^2)
        random_fill(op, real_view_c(t), p0, p1 if op is op_uniform else p1 * 0.7071067811865476,
                    generator)
        return t
    if not t._dtype.is_floating_point:
        raise NotImplementedError(f"\"{op.name.rstrip("_")}\" not implemented for "
                                  f"'{st_name(t._dtype)}' (random fills need a floating dtype)")
    cdef Generator g = default_generator_for(t._device) if generator is None else generator
    cdef uint64_t offset = g.advance(t.numel_c())
    t.bump()
    if t._backend.is_meta or t.numel_c() == 0:
        return t
    cdef ember_view v
    t.view_c(&v)
    cdef ember_kernel_table* tab = t._backend.kernels()
    cdef ember_ctx ctx
    init_ctx(&ctx, t)
    cdef int rc
    with nogil:
        rc = tab.random(&ctx, op.code, &v, g._seed, offset, p0, p1)
    if rc:
        raise_kernel_error(rc, &ctx)
    return t


def _fill_uniform(TensorBase t, double from_, double to, generator):
    """Tensor.uniform_'s fill (the method is TensorBase's, in core/_tensor.pyx)."""
    return random_fill(op_uniform, t, from_, to, generator)


def _fill_normal(TensorBase t, double mean, double std, generator):
    """Tensor.normal_'s fill."""
    return random_fill(op_normal, t, mean, std, generator)


# --- derivatives (see _autograd_support.pxi): the old values are overwritten, so the
# gradient reaching them is zero (torch: zeros_like(grad)) ---

def _d_random_fill(ctx, g):
    return (zeros_like(g),)


for _op in (op_uniform, op_normal):
    derive(_op, _d_random_fill, lambda t, p0, p1, generator=None, _op=_op:
           random_fill(_op, t, p0, p1, generator), WRITES_SELF)


# the class reports PyTorch's public path (torch.Generator), for pickles and reprs
(<PyTypeObject*>Generator).tp_name = b"ember.Generator"
PyType_Modified(<PyTypeObject*>Generator)
