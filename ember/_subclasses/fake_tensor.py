"""Fake tensors: tensors with (possibly symbolic) sizes and no data, as ``torch._subclasses``.

A ``FakeTensor`` is an ``ember.Tensor`` whose Cython part is a meta tensor at the *hint*
sizes (so the core keeps plain int64 sizes) and whose ``shape`` holds ``ember.SymInt``s.
It carries the ``Python`` dispatch key; every op has a kernel there (``_impls``) that runs
the op on the hint meta tensors — which checks the arguments exactly as eager does and gives
the result's dtype — and computes the symbolic output shape with the shape rules of
``ember.core.shape_rules``.  Ops without a symbolic rule raise NotImplementedError naming
the op.  Composites (cat, linear, conv1d, bmm, ...) need nothing of their own: they run on
these primitives.

``ember.empty(s0, 3, device="meta")`` (any factory given SymInt sizes) makes one; so does
``FakeTensorMode().from_tensor(t, dynamic_dims=...)``.
"""
from ember._sym import SymInt
from ember.core import _tensor as _core
from ember.core._dispatch import DispatchKey
from ember.core._size import Size
from ember.core.tensor import Tensor
from ember.fx.experimental.symbolic_shapes import ShapeEnv

__all__ = ["FakeTensor", "FakeTensorMode", "contiguous_strides", "hint", "is_fake"]

_PYTHON_KEY = 1 << int(DispatchKey.Python)


def hint(x):
    """``x`` with every SymInt replaced by its hint (no guard), through tuples and lists."""
    if isinstance(x, SymInt):
        return x.node.hint
    if isinstance(x, (tuple, list)):
        return type(x)(hint(v) for v in x) if type(x) in (tuple, list) else tuple(map(hint, x))
    return x


def contiguous_strides(sizes):
    """Row-major strides for ``sizes`` (ints or SymInts)."""
    strides, n = [], 1
    for s in reversed(sizes):
        strides.append(n)
        n = n * s
    return tuple(reversed(strides))


def is_fake(x):
    return isinstance(x, FakeTensor)


class FakeTensor(Tensor):
    """A tensor with no data whose sizes may be symbolic; see the module docstring.

    ``fake_mode`` is the FakeTensorMode (and through it the ShapeEnv) it belongs to and
    ``fake_device`` the device it stands for (the data would live there)."""

    __slots__ = ()

    @staticmethod
    def _make(meta, sizes, strides, fake_device, fake_mode):
        """A FakeTensor over the hint meta tensor ``meta`` with sizes/strides ``sizes``."""
        t = Tensor._make_subclass(FakeTensor, meta)
        t._add_dispatch_keys(_PYTHON_KEY)
        t._meta = meta
        t._fake_sizes = tuple(sizes)
        t._fake_strides = tuple(strides)
        t.fake_device = fake_device
        t.fake_mode = fake_mode
        return t

    @property
    def shape(self):
        return tuple.__new__(Size, self._fake_sizes)

    def size(self, dim=None):
        if dim is None:
            return self.shape
        return self._fake_sizes[_core._wrap_dim(dim, self.dim(), "size")]

    def stride(self, dim=None):
        if dim is None:
            return self._fake_strides
        return self._fake_strides[_core._wrap_dim(dim, self.dim(), "stride")]

    def numel(self):
        return self.shape.numel()

    nelement = numel

    @property
    def device(self):
        return self.fake_device

    def is_contiguous(self, memory_format=None):
        return self._fake_strides == contiguous_strides(self._fake_sizes)

    def __len__(self):
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._fake_sizes[0]

    def __repr__(self):
        return (f"FakeTensor(..., size={tuple(self._fake_sizes)}, dtype={self.dtype}, "
                f"device='{self.fake_device}')")

    __str__ = __repr__

    def __getitem__(self, index):
        from ember._subclasses._fake_impls import getitem
        return getitem(self, index)

    def narrow(self, dim, start, length):
        from ember._subclasses._fake_impls import narrow
        return narrow(self, dim, start, length)

    def item(self):
        raise RuntimeError("Tensor.item() cannot be called on a FakeTensor: it has no data")

    def tolist(self):
        raise RuntimeError("Tensor.tolist() cannot be called on a FakeTensor: it has no data")

    def numpy(self, *, force=False):
        raise RuntimeError("Tensor.numpy() cannot be called on a FakeTensor: it has no data")


class FakeTensorMode:
    """Owns a ShapeEnv and makes FakeTensors: ``from_tensor(t, dynamic_dims=...)`` gives a
    fake copy of ``t`` whose listed dims are fresh size symbols.

    Args:
        shape_env: the ShapeEnv that symbols come from (a new one when None).
    """

    def __init__(self, *, shape_env=None):
        self.shape_env = ShapeEnv() if shape_env is None else shape_env

    def from_tensor(self, tensor, *, dynamic_dims=None, static_shapes=False):
        """A FakeTensor with ``tensor``'s shape, dtype and device.

        ``dynamic_dims``: the dims whose sizes become symbols (all dims when None unless
        ``static_shapes``); sizes of 0 and 1 stay constants (the ShapeEnv's 0/1
        specialisation).
        """
        if isinstance(tensor, FakeTensor):
            return tensor
        if not isinstance(tensor, Tensor):
            raise TypeError(f"from_tensor(): expected a Tensor, got {type(tensor).__name__}")
        n = tensor.dim()
        if dynamic_dims is None:
            dynamic_dims = () if static_shapes else range(n)
        dyn = {_core._wrap_dim(d, n, "from_tensor") for d in dynamic_dims}
        sizes = [self.shape_env.create_symint(s) if i in dyn else s
                 for i, s in enumerate(tensor.shape)]
        return self.empty(sizes, dtype=tensor.dtype, device=tensor.device)

    def empty(self, sizes, *, dtype=None, device=None):
        """A contiguous FakeTensor of (int or SymInt) ``sizes``."""
        from ember import device as _device
        from ember import empty
        sizes = tuple(sizes)
        dev = _device("cpu" if device is None else device)
        meta = empty(hint(sizes), dtype=dtype, device="meta")
        return FakeTensor._make(meta, sizes, contiguous_strides(sizes), dev, self)

    def __repr__(self):
        return f"FakeTensorMode({self.shape_env!r})"


def _mode_of(sizes):
    """The FakeTensorMode of the ShapeEnv behind the first SymInt of ``sizes`` (one per
    ShapeEnv, so every fake tensor of a ShapeEnv shares its mode)."""
    for s in sizes:
        if isinstance(s, SymInt):
            env = s.node.shape_env
            mode = getattr(env, "_fake_mode", None)
            if mode is None:
                mode = env._fake_mode = FakeTensorMode(shape_env=env)
            return mode
    return None


def _symbolic_factory(size, dtype, device, op):
    """The core factories' hook for sizes that are not all ints: a FakeTensor when some
    size is a SymInt (``ember.empty(s0, 3, device="meta")``), else None (eager path)."""
    seq = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    mode = _mode_of(seq)
    if mode is None:
        return None
    for i, s in enumerate(seq):
        if isinstance(s, float) or not hasattr(s, "__index__"):
            raise TypeError(f"{op}(): argument 'size' must be tuple of ints, but found "
                            f"element of type {type(s).__name__} at pos {i}")
        if isinstance(s, int) and s < 0 or isinstance(s, SymInt) and s.node.hint < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(seq)}")
    sizes = tuple(s if isinstance(s, SymInt) else s.__index__() for s in seq)
    return mode.empty(sizes, dtype=dtype, device=device)


_core._set_symbolic_factory(_symbolic_factory)
from ember._subclasses import _fake_impls  # noqa: E402,F401  (registers the Python kernels)
