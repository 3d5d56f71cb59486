"""KL divergences (PyTorch's torch.distributions.kl): ``kl_divergence(p, q)`` looks up the
implementation registered for the most specific pair of classes (``register_kl``) and
raises NotImplementedError for a pair nobody registered.  The pairs themselves live in
kl_pairs.py."""
import warnings
from functools import total_ordering

from ember.distributions.distribution import Distribution

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY = {}        # (type_p, type_q) -> fn(p, q), as registered
_KL_MEMOIZE = {}         # (type_p, type_q) -> the dispatched fn, or NotImplemented


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as KL(p || q) for the two Distribution
    subclasses.  When several registrations match a pair, the most specific wins; if
    that is ambiguous a RuntimeWarning asks for a registration of the exact pair."""
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


@total_ordering
class _Match:
    """A registered pair ordered by specificity: (A, B) <= (C, D) when A is a subclass of C
    (and, on a tie, B of D)."""

    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p)
               and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    # the most specific match, ordered by p first and by q first: they should agree
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})",
                      RuntimeWarning, stacklevel=3)
    return left_fun


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], over the batch shape of p and q."""
    key = (type(p), type(q))
    fun = _KL_MEMOIZE.get(key)
    if fun is None:
        fun = _KL_MEMOIZE[key] = _dispatch_kl(*key)
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type "
                                  f"{q.__class__.__name__}")
    return fun(p, q)


from ember.distributions import kl_cross as _kl_cross  # noqa: E402,F401  (the other cross pairs)
from ember.distributions import kl_pairs as _kl_pairs  # noqa: E402,F401  (registers pairs)

# PyTorch's kl module holds each registered pair under its own name (_kl_normal_normal, ...)
# and a few helpers, which some code calls directly
globals().update({fn.__name__: fn for fn in _KL_REGISTRY.values()})
_kl_uniform_exponetial = _kl_pairs._kl_uniform_exponential      # sic: PyTorch's spelling
_batch_trace_XXT = _kl_pairs._batch_trace_xxt
_infinite_like = _kl_cross._infinite_like
_x_log_x = _kl_cross._x_log_x
