"""``ember.ops``: every operator of the dispatcher as a callable (as ``torch.ops.aten``).

``ember.ops.ember.add(a, b)`` runs the op ``add`` from the top of the dispatcher (mode keys,
autocast, autograd, then the backend), with the arguments its kernels take.  Graphs captured
by ``ember.compile`` call ops this way, so a captured graph runs exactly what the user's
code ran.
"""
from ember.core import _dispatch, _state
from ember.core.mode_keys import _input_keys

__all__ = ["OpOverload", "ops"]

_TOP = 63                   # above every dispatch key: redispatch below it is a full dispatch
_FAMILY_RANDOM = 7
_RANDOM = frozenset(["multinomial", "bernoulli", "dropout", "randint_like", "normal"])


class OpOverload:
    """The ember operator ``op`` as a function; ``_is_impure`` says whether a call mutates
    an argument or draws random numbers (graph passes keep such calls)."""

    __slots__ = ("_op", "__name__", "__qualname__", "_fx_qualname", "_fx_name", "_is_impure")

    def __init__(self, op):
        self._op = op
        self.__name__ = self.__qualname__ = op.name
        self._fx_qualname = f"ember.ops.ember.{op.name}"
        self._fx_name = op.name
        writes = op.derivative is not None and \
            bool(op.derivative[2] & _dispatch.DerivativeFlags.WRITES_SELF)
        self._is_impure = (op.name.endswith("_") or op.family == _FAMILY_RANDOM or writes
                           or op.name in _RANDOM)

    @property
    def op(self):
        return self._op

    def __call__(self, *args, **kwargs):
        included, excluded = _state._get_tls_keys()
        keys = (_input_keys(args, kwargs) | included) & ~excluded
        return self._op.redispatch(_TOP, keys, args, kwargs)

    def __repr__(self):
        return self._fx_qualname

    def __reduce__(self):
        return (_overload, (self._op.name,))


def _overload(name):
    return getattr(ops.ember, name)


class _OpNamespace:
    """``ember.ops.ember``: attribute ``name`` is the OpOverload of op ``name``."""

    def __init__(self, name):
        self._name = name
        self._cache = {}

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        ov = self._cache.get(name)
        if ov is None:
            try:
                op = _dispatch.get_op(name)
            except KeyError:
                raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute "
                                     f"'{name}'") from None
            ov = self._cache[name] = OpOverload(op)
        setattr(self, name, ov)             # later lookups skip __getattr__
        return ov

    def __dir__(self):
        return sorted(_dispatch.all_ops())


class _Ops:
    """``ember.ops``: operator namespaces (``ember.ops.ember``)."""

    def __init__(self):
        self.ember = _OpNamespace("ember")

    def __getattr__(self, name):
        if name == "higher_order":         # cond, while_loop (as torch.ops.higher_order)
            import ember._higher_order_ops  # noqa: F401  (registers cond, while_loop)
            from ember._higher_order_ops._hop import higher_order
            return higher_order
        raise AttributeError(f"ember.ops has no namespace '{name}' (ember's operators are in "
                             f"ember.ops.ember)")


ops = _Ops()
