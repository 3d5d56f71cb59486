"""Forward-mode derivative formulas: the tangent of each op's output from its inputs'
tangents, for every op that has a backward formula (core/_autograd.pyx's ForwardAD kernel
calls them; see core/_forward.pxi).  The table beside the backward formulas' `derive`
calls.

Most formulas are derived once from a property of the op, as PyTorch's derivatives.yaml
does with ``auto_linear`` / ``auto_element_wise``:

* linear ops (views, copies, sums, gathers, joins, the backward ops of linear ops): the
  tangent is the op applied to the tangents (zeros where an input has none);
* elementwise ops: the Jacobian is diagonal, so J t equals the backward formula applied
  to t (J^T t): one call of the backward formula per input with a tangent, on the tangent
  broadcast to the output's shape;
* reductions over a dim whose outputs depend only on their own slice (prod, amax, amin):
  the backward formula with a gradient of ones gives d out / d x, summed against t;
* ops with a composite implementation in differentiable primitives (the norms' backward
  ops): the tangent of that composite evaluated on the dual inputs.

The rest (matmul, convolution, softmax, the norms, the losses, the max poolings, the
scans with zeros, the in-place writers) are written out below.  A formula sees a
ForwardCtx: ``args`` (the primals), ``kwargs``, ``result``, ``tangents`` (one per
positional argument: None where there is none, a list for a list argument), ``level``.
"""
from ember.core import _autograd as _ag
from ember.core import _fused, optable
from ember.core import _tensor as _T
from ember.core._dispatch import get_op
from ember.core._tensor import TensorBase

__all__ = ["FORWARD_FORMULAS", "install"]


def _diff(x):
    return isinstance(x, TensorBase) and (x.dtype.is_floating_point or x.dtype.is_complex)


def _kwargs(ctx):
    return {k: v for k, v in ctx.kwargs.items() if k != "out"} if ctx.kwargs else {}


def _or_zeros(t, x):
    return t if t is not None else _T.zeros_like(x)


# --- derivations ----------------------------------------------------------------------

def linear(fn=None, wrt=None, output=None):
    """An op linear in its differentiable tensor arguments (those in ``wrt``, by position:
    all of them by default): the op (``fn``, else its entry) on the tangents."""
    def rule(ctx):
        args = []
        for i, (a, t) in enumerate(zip(ctx.args, ctx.tangents)):
            if wrt is not None and i not in wrt:
                args.append(a)
            elif _diff(a):
                args.append(_or_zeros(t, a))
            elif isinstance(a, (list, tuple)) and t is not None:
                args.append(type(a)(_or_zeros(tx, x) if _diff(x) else x
                                    for x, tx in zip(a, t)))
            else:
                args.append(a)
        r = (fn or ctx.op.entry)(*args, **_kwargs(ctx))
        return r if output is None else _pick(r, output)
    return rule


def _pick(r, output):
    """The tangents of a multi-output op whose differentiable outputs are ``output``."""
    return tuple(r[i] if i in output else None for i in range(len(r)))


class _BackwardCtx:
    """A ForwardCtx seen by a backward formula asking for one input's gradient."""
    __slots__ = ("op", "args", "kwargs", "result", "needs_input_grad", "shapes")

    def __init__(self, ctx, i):
        self.op, self.args, self.kwargs, self.result = ctx.op, ctx.args, ctx.kwargs, ctx.result
        n = len(ctx.args)
        self.needs_input_grad = tuple(j == i for j in range(n))
        self.shapes = ctx.shapes

    def saved_result(self, i):
        """Output ``i`` of the op, as OpNode.saved_result gives it to backward formulas."""
        return self.result[i] if isinstance(self.result, tuple) else self.result


def elementwise(ctx):
    """J t = sum over inputs of (backward formula at input i)(t_i broadcast): exact for ops
    whose Jacobian is diagonal (elementwise, with broadcasting).  Complex: a backward
    formula gives g conj(f'), so the tangent is conj(formula(conj(t))) = t f'."""
    formula = ctx.op.derivative[0]
    out_shape = ctx.result.shape
    total = None
    for i, t in enumerate(ctx.tangents):
        if t is None:
            continue
        g = t if tuple(t.shape) == tuple(out_shape) else t.expand(out_shape)
        part = formula(_BackwardCtx(ctx, i), _T.conj_of(g))[i]
        if part is None:
            continue
        part = _T.conj_of(part)
        total = part if total is None else total + part
    return total


def reduction(ctx):
    """Reductions whose outputs depend on their own slice only: d out / d x from the
    backward formula with a gradient of ones, summed against the tangent over the dims."""
    t = ctx.tangents[0]
    if t is None:
        return None
    x, dim = ctx.args[0], ctx.args[1] if len(ctx.args) > 1 else None
    keepdim = ctx.args[2] if len(ctx.args) > 2 else ctx.kwargs.get("keepdim", False)
    d = ctx.op.derivative[0](_BackwardCtx(ctx, 0), _T.ones_like(ctx.result))[0]
    dims = tuple(range(x.dim())) if dim is None or dim == () or dim == [] else dim
    return (d * t).sum(dims, keepdim=bool(keepdim))


def decomposed(fn):
    """The tangent of ``fn(*args, **kwargs)``, a composite of the op in differentiable
    primitives, evaluated on the dual inputs (the level made visible again)."""
    def rule(ctx):
        r = _ag._fw_visible_call(ctx.level, fn, *ctx.args, **_kwargs(ctx))
        if isinstance(r, TensorBase):
            return _ag._fw_tangent(r, ctx.level)
        return tuple(_ag._fw_tangent(x, ctx.level) if isinstance(x, TensorBase) else None
                     for x in r)
    return rule


def zero(ctx):
    """The op overwrites its input with values that do not depend on it (random fills)."""
    return _T.zeros_like(ctx.result)


# --- formulas written out ---------------------------------------------------------------

def _matmul(ctx):
    (a, b), (ta, tb) = ctx.args, ctx.tangents
    r = None if ta is None else _T.matmul(ta, b)
    if tb is not None:
        p = _T.matmul(a, tb)
        r = p if r is None else r + p
    return r


def _convolution(ctx):
    x, w, b, stride, padding, dilation, groups = ctx.args
    tx, tw, tb = ctx.tangents[:3]
    r = None
    if tx is not None or tb is not None:
        r = _T.convolution(_or_zeros(tx, x), w, tb, stride, padding, dilation, groups)
    if tw is not None:
        p = _T.convolution(x, tw, None, stride, padding, dilation, groups)
        r = p if r is None else r + p
    return r


def _convolution_backward(ctx):
    g, x, w, stride, padding, dilation, groups, mask = ctx.args
    tg, tx, tw = ctx.tangents[:3]
    out = [None, None, None]

    def add(i, v):
        if v is not None:
            out[i] = v if out[i] is None else out[i] + v

    if tg is not None:
        for i, v in enumerate(_T.convolution_backward(tg, x, w, stride, padding, dilation,
                                                      groups, mask)):
            add(i, v)
    if tw is not None and mask[0]:
        add(0, _T.convolution_backward(g, x, tw, stride, padding, dilation, groups,
                                       (True, False, False))[0])
    if tx is not None and mask[1]:
        add(1, _T.convolution_backward(g, tx, w, stride, padding, dilation, groups,
                                       (False, True, False))[1])
    return tuple(out)


def _activation(kernel):
    """The tangent of a fused activation (core/_activation.pxi): t * f'(x), f' the
    composite derivative of core/activations.py."""
    def jvp(ctx):
        from ember.core.activations import DERIVATIVES
        x, p0, p1, p2 = (tuple(ctx.args) + (0.0, 0.0, 0.0))[:4]
        t = ctx.tangents[0]
        return None if t is None else DERIVATIVES[kernel](x, t, p0, p1, p2)
    return jvp


def _softmax(ctx):
    t = ctx.tangents[0]
    y, dim = ctx.result, ctx.args[1]
    t = t.to(y.dtype) if t.dtype != y.dtype else t
    return y * (t - (y * t).sum(dim, keepdim=True))


def _log_softmax(ctx):
    t = ctx.tangents[0]
    y, dim = ctx.result, ctx.args[1]
    t = t.to(y.dtype) if t.dtype != y.dtype else t
    return t - (y.exp() * t).sum(dim, keepdim=True)


def _softmax_backward_data(ctx):
    g, y, dim = ctx.args[:3]
    tg, ty = ctx.tangents[:2]
    s = (g * y).sum(dim, keepdim=True)
    r = None
    if ty is not None:
        r = ty * (g - s) - y * (g * ty).sum(dim, keepdim=True)
    if tg is not None:
        p = y * (tg - (tg * y).sum(dim, keepdim=True))
        r = p if r is None else r + p
    return r


def _log_softmax_backward_data(ctx):
    g, y, dim = ctx.args[:3]
    tg, ty = ctx.tangents[:2]
    p = y.exp()
    r = None
    if ty is not None:
        r = -p * ty * g.sum(dim, keepdim=True)
    if tg is not None:
        q = tg - p * tg.sum(dim, keepdim=True)
        r = q if r is None else r + q
    return r


def _normalized(x, tx, mean, rstd, red):
    """(xhat, d xhat, d mean, d rstd) of xhat = (x - mean) * rstd, stats over ``red``."""
    xhat = (x - mean) * rstd
    if tx is None:
        return xhat, None, None, None
    tmean = tx.mean(red, keepdim=True)
    u = rstd * (tx - tmean)
    m = (xhat * u).mean(red, keepdim=True)
    return xhat, u - xhat * m, tmean, -rstd * m


def _affine_tangent(xhat, txhat, w, tw, tb, shape):
    """d (xhat * w + b), with w and b (or None) broadcast as ``shape``."""
    r = None
    if txhat is not None:
        r = txhat if w is None else txhat * w.reshape(shape)
    if tw is not None:
        p = xhat * tw.reshape(shape)
        r = p if r is None else r + p
    if tb is not None:
        p = tb.reshape(shape)
        r = p if r is None else r + p
    return r


def _native_layer_norm(ctx):
    x, ns, w, b, eps = ctx.args
    tx, _, tw, tb = ctx.tangents[:4]
    y, mean, rstd = ctx.result
    k = 1 if isinstance(ns, int) else len(tuple(ns))
    red = tuple(range(x.dim() - k, x.dim()))
    xhat, txhat, tmean, trstd = _normalized(x, tx, mean.to(x.dtype), rstd.to(x.dtype), red)
    ty = _affine_tangent(xhat, txhat, w, tw, tb, tuple(x.shape[x.dim() - k:]))
    return (ty, tmean, trstd)


def _native_batch_norm(ctx):
    x, w, b = ctx.args[:3]
    tx, tw, tb = (tuple(ctx.tangents) + (None,) * 3)[:3]
    y, mean, invstd = ctx.result
    shape = (1, x.shape[1]) + (1,) * (x.dim() - 2)
    red = (0,) + tuple(range(2, x.dim()))
    m, r = mean.reshape(shape).to(x.dtype), invstd.reshape(shape).to(x.dtype)
    if ctx.kwargs.get("training"):
        xhat, txhat, tmean, trstd = _normalized(x, tx, m, r, red)
        stats = (tmean.reshape(mean.shape) if tmean is not None else None,
                 trstd.reshape(invstd.shape) if trstd is not None else None)
    else:
        xhat = (x - m) * r
        txhat = None if tx is None else tx * r
        stats = (None, None)
    cshape = (x.shape[1],) + (1,) * (x.dim() - 2)
    return (_affine_tangent(xhat, txhat, w, tw, tb, cshape),) + stats


def _class_dim(x):
    return 0 if x.dim() == 1 else 1


def _nll_loss_forward(ctx):
    x, target, weight, reduction, ignore_index = ctx.args
    tx = ctx.tangents[0]
    return (_T.nll_loss_forward(tx, target, weight, reduction, ignore_index)[0], None)


def _cross_entropy_forward(ctx):
    x, target, weight, reduction, ignore_index = ctx.args
    tx, d = ctx.tangents[0], _class_dim(x)
    tlsm = tx - (_T.softmax(x, d) * tx).sum(d, keepdim=True)
    return (_T.nll_loss_forward(tlsm, target, weight, reduction, ignore_index)[0], None)


def _cross_entropy_backward(ctx):
    g, x, target, weight, reduction, ignore_index, total = ctx.args
    tg, tx = ctx.tangents[:2]
    r = None
    if tg is not None:
        r = _T._cross_entropy_backward(tg, x, target, weight, reduction, ignore_index, total)
    if tx is not None:
        d = _class_dim(x)
        # the row factor scale * weight[target] * g, read off nll's gradient at the target
        factor = -_T.nll_loss_backward(g, x, target, weight, reduction, ignore_index,
                                       total).sum(d, keepdim=True)
        s = _T.softmax(x, d)
        p = factor * s * (tx - (s * tx).sum(d, keepdim=True))
        r = p if r is None else r + p
    return r


def _gather_planes(t, idx):
    """t [N, C, H, W] read at the flat plane positions idx [N, C, Ho, Wo]."""
    n, c = t.shape[:2]
    return _T.gather(t.reshape(n, c, -1), 2, idx.reshape(n, c, -1)).reshape(idx.shape)


def _max_pool(ctx):
    return (_gather_planes(ctx.tangents[0], ctx.result[1]), None)


def _cummax(ctx):
    t, dim = ctx.tangents[0], ctx.args[1]
    values, indices = ctx.result
    if t.dim() == 0:
        return (t, None)
    return (_T.gather(t, dim, indices), None)


def _cumprod(ctx):
    """d cumprod: out * cumsum(t / x) where no zero came yet; at the first zero and after
    it (one zero so far), t at that zero times the product of the others; past a second
    zero, 0 (PyTorch's cumprod_jvp, exact with zeros)."""
    x, dim = ctx.args[0], ctx.args[1]
    t, out = ctx.tangents[0], ctx.result
    if x.dim() == 0:
        return t
    zero = x == 0
    safe = _T.where(zero, 1.0, x)
    nz = _T.cumsum(zero.to(x.dtype), dim)
    first = zero & (nz == 1)
    no_zero = out * _T.cumsum(t / safe, dim)
    one_zero = _T.cumprod(safe, dim) * _T.cumsum(_T.where(first, t, 0.0), dim)
    return _T.where(nz == 0, no_zero, _T.where(nz == 1, one_zero, 0.0))


def _scatter(ctx):
    a, dim, index = ctx.args[:3]
    src = ctx.args[3] if len(ctx.args) > 3 else None
    reduce = ctx.kwargs.get("reduce")
    if reduce == "multiply":
        raise NotImplementedError(
            "Trying to use forward AD with scatter (reduce='multiply') that does not support "
            "it because it has not been implemented yet.")
    ta = _or_zeros(ctx.tangents[0], a)
    ts = ctx.tangents[3] if len(ctx.tangents) > 3 else None
    value = _or_zeros(ts, src) if isinstance(src, TensorBase) else 0.0
    if reduce == "add":
        return ta.scatter_add(dim, index, value) if isinstance(value, TensorBase) else ta
    return _T.scatter(ta, dim, index, value)


def _scatter_reduce(ctx):
    """sum and mean are linear; prod, amax and amin from the result: amax/amin share t
    evenly between the values equal to the result (as the backward does), prod is the
    product rule, exact with zeros."""
    a, dim, index, src, reduce = ctx.args[:5]
    include_self = ctx.kwargs.get("include_self", True)
    ta, ts = _or_zeros(ctx.tangents[0], a), _or_zeros(ctx.tangents[3], src)
    if reduce in ("sum", "mean"):
        return _T.scatter_reduce(ta, dim, index, ts, reduce, include_self=include_self)
    out = ctx.result
    fself = 1.0 if include_self else 0.0
    if reduce in ("amax", "amin"):
        self_hit = (a == out).to(a.dtype) * fself
        src_hit = (src == _T.gather(out, dim, index)).to(a.dtype)
        n = _T.scatter_add(self_hit, dim, index, src_hit)
        tsum = _T.scatter_add(ta * self_hit, dim, index, ts * src_hit)
        return _T.where(n == 0, ta, tsum / _T.where(n == 0, 1.0, n))
    if reduce == "prod":
        zs, za = (src == 0).to(a.dtype), (a == 0).to(a.dtype) * fself
        nzero = _T.scatter_add(za, dim, index, zs)
        s_safe, a_safe = _T.where(src == 0, 1.0, src), _T.where(a == 0, 1.0, a)
        others = _T.scatter_reduce(a_safe if include_self else _T.ones_like(a), dim, index,
                                   s_safe, "prod", include_self=True)
        ratio = _T.scatter_add(ta / a_safe * fself * (1 - za), dim, index, ts / s_safe * (1 - zs))
        at_zero = _T.scatter_add(ta * za, dim, index, ts * zs)
        t = _T.where(nzero == 0, out * ratio, _T.where(nzero == 1, others * at_zero, 0.0))
        if not include_self:
            hit = _T.scatter(_T.zeros_like(a, dtype=zs.dtype), dim, index, 1.0)
            t = _T.where(hit == 1, t, ta)
        return t
    raise NotImplementedError(f"Trying to use forward AD with scatter_reduce (reduce="
                              f"{reduce!r}) that does not support it because it has not "
                              f"been implemented yet.")


def _index_fill(ctx):
    a, dim, index, value = ctx.args
    tv = ctx.tangents[3]
    v = _or_zeros(tv, value) if isinstance(value, TensorBase) else 0.0
    return _T.index_fill(_or_zeros(ctx.tangents[0], a), dim, index, v)


def _index_put(ctx):
    """In place t[items] = value: the written positions take value's tangent."""
    a, items, value, accumulate = ctx.args[:4]
    t = _or_zeros(ctx.tangents[0], a).clone()
    tv = ctx.tangents[2]
    v = _or_zeros(tv, value) if isinstance(value, TensorBase) else 0.0
    if accumulate and not isinstance(value, TensorBase):
        return t
    if isinstance(v, TensorBase) and _T._batch_level(v) is not None and \
            _T._batch_level(t) is None:
        # value's tangent batched by a vmap (jacfwd's basis): so must the written one be
        t = _T._zeros_for(v, tuple(t.shape)).add_(t)
    get_op("index_put").entry(t, items, v, accumulate)
    return t


def _copy(ctx):
    dst, src = ctx.args[:2]
    ts = ctx.tangents[1]
    if ts is None:
        return _T.zeros_like(dst)
    return ts.to(dst.dtype).expand(dst.shape)


def _fill(ctx):
    dst, value = ctx.args[:2]
    tv = ctx.tangents[1] if len(ctx.tangents) > 1 else None
    if tv is None:
        return _T.zeros_like(dst)
    return tv.to(dst.dtype).expand(dst.shape)


# --- the table ---------------------------------------------------------------------------

# every differentiable op of the op table (core/optable.py), and where
_ELEMENTWISE = tuple(d.op or d.name for f in (optable.UNARY, optable.BINARY) for d in f.ops
                     if get_op(d.op or d.name).derivative is not None) + ("where",)
_LINEAR = (
    "view", "reshape", "permute", "transpose", "expand", "squeeze", "unsqueeze", "narrow",
    "select", "diagonal", "as_strided", "clone", "_to_copy", "sum", "mean", "cumsum",
    "gather", "index_select", "take", "index", "index_add", "index_copy", "scatter_add",
    "put", "avg_pool2d", "_adaptive_avg_pool2d", "split", "split_with_sizes", "_split_views",
    "unbind")

FORWARD_FORMULAS = {name: elementwise for name in _ELEMENTWISE}
FORWARD_FORMULAS.update({name: linear() for name in _LINEAR})
FORWARD_FORMULAS.update({
    "cat": linear(lambda dim, *tensors: _T._cat(tensors, dim)),
    "prod": reduction, "amax": reduction, "amin": reduction,
    "cumprod": _cumprod, "cummax": _cummax, "cummin": _cummax,
    "matmul": _matmul,
    "convolution": _convolution,
    "convolution_backward": _convolution_backward,
    **{name: _activation(kernel) for name, kernel in _fused.ACTIVATION_KERNELS.items()},
    "softmax": _softmax, "log_softmax": _log_softmax,
    "_softmax_backward_data": _softmax_backward_data,
    "_log_softmax_backward_data": _log_softmax_backward_data,
    "native_layer_norm": _native_layer_norm,
    "native_batch_norm": _native_batch_norm,
    "native_layer_norm_backward": decomposed(
        lambda *a: _T._norm_composite("native_layer_norm_backward", *a)),
    "native_batch_norm_backward": decomposed(
        lambda *a: _T._norm_composite("native_batch_norm_backward", *a)),
    "nll_loss_forward": _nll_loss_forward,
    "_cross_entropy_forward": _cross_entropy_forward,
    "nll_loss_backward": linear(_T.nll_loss_backward, wrt=(0,)),
    "_cross_entropy_backward": _cross_entropy_backward,
    "max_pool2d_with_indices": _max_pool, "adaptive_max_pool2d": _max_pool,
    "max_pool2d_with_indices_backward": linear(_T.max_pool2d_with_indices_backward, wrt=(0,)),
    "adaptive_max_pool2d_backward": linear(_T.adaptive_max_pool2d_backward, wrt=(0,)),
    "avg_pool2d_backward": linear(_T.avg_pool2d_backward, wrt=(0,)),
    "_adaptive_avg_pool2d_backward": linear(_T._adaptive_avg_pool2d_backward, wrt=(0,)),
    "scatter": _scatter, "scatter_reduce": _scatter_reduce,
    "index_fill": _index_fill, "index_put": _index_put,
    "copy_": _copy, "fill_": _fill, "normal_": zero, "uniform_": zero,
})

_installed = False


def install():
    """Register the ForwardAD kernels (when the first dual level starts)."""
    global _installed
    if not _installed:
        _installed = True
        _ag.install_forward(FORWARD_FORMULAS)


_ag._set_forward_installer(install)
