"""Lazy tensor values of the lowering: what each graph node computes, as a function of an
index, until some consumer needs it in memory.

* ``Buffer``: a tensor that exists at run time (an input, an extern op's result, a kernel's
  output), named by its variable in the generated wrapper, with its strides.
* ``View``: a strided view (transpose, expand, narrow, ...) of another value: an index map;
  given to an extern op it becomes the real view op, so aliasing is kept.
* ``Pointwise``: an elementwise expression over other values.
* ``Reduction``: a sum/max/min (mean: a sum with a scale) over the trailing dims of its
  source; inside a kernel whose rows are its rows it is a per-row scalar, elsewhere it is
  realized first.

``load(kb, idx)`` gives the IR expression of the value at multi-index ``idx`` inside kernel
builder ``kb`` (see ``kernel.KernelBuilder``).
"""
from ember._inductor.ir import index_add, index_mul

__all__ = ["Buffer", "Pointwise", "Reduction", "Value", "View", "contiguous_strides"]


def contiguous_strides(shape):
    strides, n = [], 1
    for s in reversed(shape):
        strides.append(n)
        n *= s
    return tuple(reversed(strides))


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _flat_position(idx, shape):
    """``F`` when ``idx`` is the multi-index of flat position ``F`` in ``shape`` (what a
    reshape of a contiguous tensor reads), else None."""
    from ember._inductor.lowering import unflatten_index
    last = next((i for d, i in zip(reversed(shape), reversed(idx)) if d != 1), None)
    if not (isinstance(last, tuple) and last[0] == "mod"):
        return None
    flat = last[1]
    return flat if list(idx) == unflatten_index(flat, shape) else None


class Value:
    """A lazily computed tensor of ``shape`` and ``dtype`` (an ember dtype)."""

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.realized = None        # the Buffer it was written to, once it was
        self.users = 0              # how many graph nodes read it (set by the scheduler)
        self.sink = False           # some consumer will need it in memory

    def load(self, kb, idx):
        raise NotImplementedError

    def cost(self):
        return 0


class Buffer(Value):
    """A tensor the wrapper holds in variable ``name``."""

    def __init__(self, name, shape, dtype, strides=None, offset=0, view_of=None):
        super().__init__(shape, dtype)
        self.name = name
        self.strides = tuple(contiguous_strides(shape) if strides is None else strides)
        self.offset = offset
        self.realized = self
        # a view of another Buffer: (that Buffer, view target, its other arguments); the
        # wrapper makes the real view (aliasing) when an extern op or the output needs it
        self.view_of = view_of

    def load(self, kb, idx):
        arg = kb.arg(self)
        dt = str(self.dtype).replace("ember.", "")
        contiguous = self.strides == contiguous_strides(self.shape)
        if self.offset == 0 and contiguous and list(idx) == kb.identity and \
                self.shape == kb.full_shape:
            return ("load", arg, kb.flat, dt)
        flat = _flat_position(idx, self.shape) if contiguous else None
        if flat is not None and kb.below(flat, numel(self.shape)):
            # a reshape of this buffer: read the same position
            return ("load", arg, index_add(self.offset, flat), dt)
        index = self.offset
        for i, (size, stride) in zip(idx, zip(self.shape, self.strides)):
            if size != 1:
                index = index_add(index, index_mul(i, stride))
        return ("load", arg, index, dt)

    def __repr__(self):
        return f"Buffer({self.name}, {list(self.shape)}, {self.dtype})"


class View(Value):
    """``base`` seen through ``index_map`` (output index list -> base index list);
    ``replay`` = (target, args after the base) rebuilds it as a real view."""

    def __init__(self, base, shape, dtype, index_map, replay):
        super().__init__(shape, dtype)
        self.base = base
        self.index_map = index_map
        self.replay = replay

    def load(self, kb, idx):
        return kb.load(self.base, self.index_map(list(idx)))

    def cost(self):
        return self.base.cost() if not isinstance(self.base, Buffer) else 0


class Pointwise(Value):
    """``fn(kb, idx)`` -> expression; ``inputs`` are the values it reads."""

    def __init__(self, shape, dtype, fn, inputs, ops=1):
        super().__init__(shape, dtype)
        self.fn = fn
        self.inputs = inputs
        self._cost = ops

    def load(self, kb, idx):
        return kb.load_pointwise(self, list(idx))

    def cost(self):
        return self._cost + sum(v.cost() for v in self.inputs if v.realized is None)


class Reduction(Value):
    """``kind`` ("sum", "max", "min") of ``src`` over its last ``n_inner`` dims,
    accumulated in ``acc_dtype``; the result has ``shape`` (keepdim: 1s where reduced) and
    is ``scale`` times the reduction (a mean: 1/N)."""

    def __init__(self, src, n_inner, kind, shape, dtype, acc_dtype, scale=None):
        super().__init__(shape, dtype)
        self.src = src
        self.n_inner = n_inner
        self.kind = kind
        self.acc_dtype = acc_dtype
        self.scale = scale

    @property
    def outer(self):
        return self.src.shape[:len(self.src.shape) - self.n_inner]

    @property
    def inner(self):
        return self.src.shape[len(self.src.shape) - self.n_inner:]

    def load(self, kb, idx):
        return kb.load_reduction(self, list(idx))

    def cost(self):
        return 1000             # never recomputed: realized or computed once per row

