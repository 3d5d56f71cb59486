"""In-place forms of composite ops (x.clamp_(...), x.addcmul_(...), x.hypot_(...), ...) and
the distribution fills (random_, exponential_, geometric_, cauchy_, log_normal_).

Each computes out of place and writes back with copy_, which bumps the version counter
and applies autograd's in-place rules (leaf errors, rebasing the history).  When self
takes part in autograd the op reads a clone, so the values it saved are not the ones
being overwritten."""
import math
import numbers

from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core import elementwise, products, shapes, special, ternary
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _tensor_arg
from ember.core._tensor import TensorBase
from ember.core.elementwise_nodes import _number_bounds
from ember.core.method_table import method_table
from ember.core.typeinfo import iinfo

__all__ = ["clamp_", "clamp_max_", "clamp_min_", "clip_", "deg2rad_", "nan_to_num_", "rad2deg_",
           "sinc_", "xlogy_"]

_FLOAT64 = _dtype_by_name["float64"]
_BOOL = _dtype_by_name["bool"]
_MANTISSA = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}    # with the hidden bit


def _writeback(self, result, op):
    """self.copy_(result) once result fits self's shape and dtype (PyTorch's rules)."""
    if tuple(result.shape) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                           f"shape {list(result.shape)}")
    _check_cast(result.dtype, self)
    return self.copy_(result)


def _check_cast(src, self):
    """PyTorch's can_cast for an in-place result: no float (or complex) into an integer
    dtype, no complex into a real one, nothing but bool into bool."""
    if (src.is_floating_point or src.is_complex) and not (self.dtype.is_floating_point
                                                          or self.dtype.is_complex) \
            or src.is_complex and not self.dtype.is_complex \
            or self.dtype == _BOOL and src != _BOOL:
        raise RuntimeError(f"result type {_T._st_name(src)} can't be cast to the desired "
                           f"output type {_T._st_name(self.dtype)}")


def _source(self, op):
    _tensor_arg(self, op)
    if self.requires_grad and _ag.is_grad_enabled():
        if self.is_leaf:            # autograd's check comes before the kernel's (torch)
            raise RuntimeError(_LEAF_INPLACE)
        return self.clone()
    return self


_LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."


def _inplace(fn, name, promoted=False):
    """The in-place method ``name`` of the out-of-place ``fn(self, *args, **kwargs)``.
    ``promoted``: fn's result has the promoted dtype of (self, other), which is checked
    first, as PyTorch refuses `int_t.bitwise_and_(2.5)` for the cast, not the kernel."""
    def method(self, *args, **kwargs):
        source = _source(self, name)
        if promoted and args and isinstance(args[0], (TensorBase, numbers.Number)):
            _check_cast(_T.result_type(self, args[0]), self)
        return _writeback(self, fn(source, *args, **kwargs), name)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place {fn.__name__}: self = {fn.__name__}(self, ...)."
    return method


_M = elementwise
_OUT_OF_PLACE = {
    "addcmul_": ternary.addcmul, "addcdiv_": ternary.addcdiv,
    "lerp_": ternary.lerp, "clamp_": _M.clamp, "clip_": _M.clamp,
    "clamp_min_": _M.clamp_min, "clamp_max_": _M.clamp_max, "sign_": _M.sign,
    "sgn_": _M.sgn, "nan_to_num_": _M.nan_to_num, "triu_": shapes.triu,
    "tril_": shapes.tril, "addmm_": products.addmm, "baddbmm_": products.baddbmm,
    "absolute_": _T._abs, "arctan2_": _M.arctan2, "hypot_": _M.hypot, "xlogy_": _M.xlogy,
    "copysign_": _M.copysign, "heaviside_": _M.heaviside, "sinc_": _M.sinc,
    "deg2rad_": _M.deg2rad, "rad2deg_": _M.rad2deg,
    "mvlgamma_": special.mvlgamma,
}
INPLACE_METHODS = {name: _inplace(fn, name) for name, fn in _OUT_OF_PLACE.items()}


def _fast_first(name, fast):
    """INPLACE_METHODS[name], trying ``fast`` (a one-pass kernel into self, None where it does
    not apply) first."""
    general = INPLACE_METHODS[name]

    def method(self, *args, **kwargs):
        r = fast(self, *args, **kwargs)
        return general(self, *args, **kwargs) if r is None else r
    method.__name__ = method.__qualname__ = name
    method.__doc__ = general.__doc__
    return method


def _clamp_numbers_(self, min=None, max=None):
    """clamp_ with number bounds (not NaN) of a floating tensor nothing records: one pass
    into self (WGAN's weight clipping runs it on every parameter); None otherwise."""
    if not isinstance(self, TensorBase) or not self.dtype.is_floating_point or \
            _ag._tracked(self):
        return None
    bounds = _number_bounds(min, max)
    if bounds is None or (min is None and max is None):
        return None
    _M._check_bound(self, min)
    _M._check_bound(self, max)
    return _T._activation_kernel("clamp", self, None, *bounds, out=self)


def _nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    """nan_to_num_ of a floating tensor nothing records, in place (see
    elementwise._nan_to_num_pass); None otherwise."""
    if not isinstance(self, TensorBase) or not self.dtype.is_floating_point or \
            _ag._tracked(self):
        return None
    r = _M._nan_to_num_pass(self, nan, posinf, neginf, _M.finfo(self.dtype), self)
    return r if r is self else None


def _sign_(self):
    """sign_ of a real, non-bool tensor: the kernel writes self, as the table's in-place
    methods do (one pass and SignBackward0, where the general form copies a new tensor back
    under CopyBackward0); None otherwise."""
    if not isinstance(self, TensorBase) or self.dtype.is_complex or self.dtype == _BOOL:
        return None
    return _T._sign(self, self)


for _name, _fast in (("lerp_", ternary.lerp_), ("addcmul_", ternary.addcmul_),
                     ("addcdiv_", ternary.addcdiv_), ("clamp_", _clamp_numbers_),
                     ("clip_", _clamp_numbers_), ("nan_to_num_", _nan_to_num_),
                     ("sign_", _sign_),
                     ("tril_", lambda self, diagonal=0: shapes.triangle_(self, diagonal, False)),
                     ("triu_", lambda self, diagonal=0: shapes.triangle_(self, diagonal, True))):
    INPLACE_METHODS[_name] = _fast_first(_name, _fast)


def _float_power_(self, exponent):
    dt = _M._float_power_dtype(self, exponent)
    if self.dtype != dt:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{_T._st_name(self.dtype)} but the operation's result requires "
                           f"dtype {_T._st_name(dt)}")
    return _writeback(self, _M.float_power(_source(self, "float_power_"), exponent),
                      "float_power_")


def _polygamma_(self, n):
    return _writeback(self, special.polygamma(n, _source(self, "polygamma_")), "polygamma_")


INPLACE_METHODS["float_power_"] = _float_power_
INPLACE_METHODS["polygamma_"] = _polygamma_
clamp_, clip_ = INPLACE_METHODS["clamp_"], INPLACE_METHODS["clip_"]
clamp_min_, clamp_max_ = INPLACE_METHODS["clamp_min_"], INPLACE_METHODS["clamp_max_"]
nan_to_num_, xlogy_ = INPLACE_METHODS["nan_to_num_"], INPLACE_METHODS["xlogy_"]
sinc_, deg2rad_ = INPLACE_METHODS["sinc_"], INPLACE_METHODS["deg2rad_"]
rad2deg_ = INPLACE_METHODS["rad2deg_"]


# --- in-place view ops: self takes the geometry (and history) of the out-of-place view ------

def _inplace_view(name):
    def method(self, *args, **kwargs):
        if self.requires_grad and self.is_leaf and _ag.is_grad_enabled():
            raise RuntimeError(_LEAF_INPLACE)
        # the view is taken of an alias: a backward formula that reads its input's geometry
        # (as_strided's) must not see self's new one
        alias = self.view(self.shape)
        return _T._adopt_view(self, getattr(alias, name[:-1])(*args, **kwargs))
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place version of :meth:`Tensor.{name[:-1]}` (changes self's shape)."
    return method


VIEW_METHODS = {name: _inplace_view(name) for name in (
    "t_", "transpose_", "swapdims_", "swapaxes_", "unsqueeze_", "squeeze_", "as_strided_")}


# --- distribution fills: transforms of the counter-based uniform/normal fills -----------

def _uniform(self, generator):
    return _T.empty(tuple(self.shape), dtype=_FLOAT64, device=self.device).uniform_(
        generator=generator)


def _float_only(self, op):
    if not self.is_floating_point():
        raise RuntimeError(f"{op} expects a floating point tensor, but got "
                           f"{_T._st_name(self.dtype)}")


def random_(self, *args, generator=None, **kwargs):
    """random_(from, to), random_(to) or random_(): integers uniform in [from, to); with no
    bound, [0, 2^mantissa] for floats and the dtype's range for integers."""
    if len(args) > 2 or set(kwargs) - {"from", "to"}:
        raise TypeError("random_() expects (from, to), (to) or no bounds")
    lo, to = (args if len(args) == 2 else (0,) + args if args else (0, None))
    lo, to = kwargs.get("from", lo), kwargs.get("to", to)
    if to is None:
        if self.dtype == _BOOL:
            to = 2
        elif self.is_floating_point():
            to = 2 ** _MANTISSA[self.dtype.name] + 1
        else:
            to = iinfo(self.dtype).max + 1
    if lo >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} "
                           f">= to={to}")
    r = (_uniform(self, generator) * (to - lo)).floor() + lo
    return self.copy_(_T._minimum_scalar(r, to - 1))


def exponential_(self, lambd=1.0, *, generator=None):
    """Samples of Exponential(lambd): -log(1 - u) / lambd."""
    _float_only(self, "exponential_")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return self.copy_(-_M._log1p(-_uniform(self, generator)) / lambd)


def geometric_(self, p, *, generator=None):
    """Samples of Geometric(p) on {1, 2, ...}: ceil(log(1 - u) / log(1 - p))."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), got p = {p}")
    u = _uniform(self, generator)
    k = (_M._log1p(-u) / math.log1p(-p)).ceil()
    return self.copy_(_T._maximum_scalar(k, 1.0))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Samples of Cauchy(median, sigma): median + sigma tan(pi (u - 1/2))."""
    _float_only(self, "cauchy_")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    u = _uniform(self, generator)
    return self.copy_(median + sigma * _T.table_functions()["tan"](math.pi * (u - 0.5)))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Samples of exp(N(mean, std^2))."""
    _float_only(self, "log_normal_")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    z = _T.empty(tuple(self.shape), dtype=_FLOAT64, device=self.device).normal_(
        mean, std, generator=generator)
    return self.copy_(_T.exp(z))


RANDOM_METHODS = {"random_": random_, "exponential_": exponential_, "geometric_": geometric_,
                  "cauchy_": cauchy_, "log_normal_": log_normal_}

InplaceMethods = method_table(
    "InplaceMethods", {**INPLACE_METHODS, **VIEW_METHODS, **RANDOM_METHODS},
    "Tensor's in-place forms of composites (t.clamp_(...)), in-place views (t.t_()) and "
    "distribution fills (t.exponential_())."
)
