"""Batching rules of the hot neural-network ops.

* Convolution: with shared weights the batch folds into N (one convolution); with weights
  per sample (ensembles) or a weight gradient per sample (per-sample gradients), the
  samples sit side by side in the channels of one grouped convolution (groups * batch), as
  functorch's rule does.
* Pooling: the batch folds into N.
* Layer norm: the normalised dims trail, so the op runs on the physical tensor; parameter
  gradients are summed per sample.  Batch norm: per-sample statistics through the grouped
  channel layout (B * C channels); running statistics batched like the samples (model
  ensembles) go the same way, and in training each sample's are updated in place.
* nll_loss / cross_entropy: the per-element losses of every sample in one call, reduced
  per sample (sum, or mean over that sample's total weight).
* one_hot: one call on the physical tensor, given the class count."""
from ember.core import _tensor as _T
from ember.core._dispatch import DispatchKey
from ember.core._tensor import TensorBase
from ember.core.mode_keys import redispatch_below
from ember.func import _levels
from ember.func._batching import MODE_RULES, _level_of, rule
from ember.func._batching._util import (
    BatchRuleError,
    align,
    materialize,
    unwrap,
    unwrap_shared,
    wrap,
    wrap_all,
)

__all__ = []


def _mat(v, x):
    if not isinstance(x, TensorBase):
        return x
    t, b = unwrap(x, v.level)
    return materialize(t, b, v.size)


def _fold(x):
    """[B, N, ...] -> [B * N, ...]."""
    return x.reshape((x.shape[0] * x.shape[1],) + tuple(x.shape[2:]))


def _unfold(x, size):
    return x.reshape((size, x.shape[0] // size) + tuple(x.shape[1:]))


def _to_channels(x):
    """[B, N, C, ...] -> [N, B * C, ...]: the samples side by side in the channels."""
    x = x.movedim(0, 1)
    return x.reshape((x.shape[0], x.shape[1] * x.shape[2]) + tuple(x.shape[3:]))


def _from_channels(x, size):
    """[N, B * C, ...] -> [B, N, C, ...]."""
    x = x.reshape((x.shape[0], size, x.shape[1] // size) + tuple(x.shape[2:]))
    return x.movedim(1, 0)


def _flat_params(x, size):
    """A per-sample parameter [B, C, ...] as the grouped layout's [B * C, ...]."""
    return x.reshape((size * x.shape[1],) + tuple(x.shape[2:]))


# --- convolution ----------------------------------------------------------------------------

@rule("convolution")
def _convolution(v, op, args, kwargs):
    x_, w_, b_, stride, padding, dilation, groups = args
    (x, xb), (w, wb) = unwrap(x_, v.level), unwrap_shared(w_, v.level)
    b, bb = unwrap_shared(b_, v.level) if b_ is not None else (None, False)
    B = v.size
    if not wb and not bb:                    # shared weights: the batch folds into N
        r = _T.convolution(_fold(x), w, b, stride, padding, dilation, groups)
        return wrap(_unfold(r, B), v.level)
    xg = _to_channels(materialize(x, xb, B))
    wg = _flat_params(materialize(w, wb, B), B)
    bg = None if b is None else materialize(b, bb, B).reshape(-1)
    r = _T.convolution(xg, wg, bg, stride, padding, dilation, groups * B)
    return wrap(_from_channels(r, B), v.level)


@rule("convolution_backward")
def _convolution_backward(v, op, args, kwargs):
    g_, x_, w_, stride, padding, dilation, groups, mask = args
    (g, gb), (x, xb) = unwrap(g_, v.level), unwrap(x_, v.level)
    w, wb = unwrap_shared(w_, v.level)
    B = v.size
    g, x = materialize(g, gb, B), materialize(x, xb, B)
    gi = gw = gbias = None
    if wb:                                   # weights per sample: all through the groups
        r = _T.convolution_backward(_to_channels(g), _to_channels(x), _flat_params(w, B),
                                    stride, padding, dilation, groups * B, mask)
        gi = None if r[0] is None else _from_channels(r[0], B)
        gw = None if r[1] is None else r[1].reshape((B, -1) + tuple(r[1].shape[1:]))
        gbias = None if r[2] is None else r[2].reshape(B, -1)
        return wrap_all((gi, gw, gbias), v.level)
    if mask[0]:
        gi = _unfold(_T.convolution_backward(_fold(g), _fold(x), w, stride, padding, dilation,
                                             groups, (True, False, False))[0], B)
    if mask[1]:
        # one weight gradient per sample: the grouped layout, weights repeated per group
        wg = w.unsqueeze(0).expand((B,) + tuple(w.shape)).reshape((B * w.shape[0],)
                                                                  + tuple(w.shape[1:]))
        r = _T.convolution_backward(_to_channels(g), _to_channels(x), wg, stride, padding,
                                    dilation, groups * B, (False, True, False))[1]
        gw = r.reshape((B, -1) + tuple(r.shape[1:]))
    if mask[2]:
        gbias = g.sum((1,) + tuple(range(3, g.dim())))
    return wrap_all((gi, gw, gbias), v.level)


# --- pooling ---------------------------------------------------------------------------------

@rule("max_pool2d_with_indices", "avg_pool2d", "_adaptive_avg_pool2d", "adaptive_max_pool2d",
      "max_pool2d_with_indices_backward", "avg_pool2d_backward",
      "_adaptive_avg_pool2d_backward", "adaptive_max_pool2d_backward")
def _pool(v, op, args, kwargs):
    phys = [_fold(_mat(v, a)) if isinstance(a, TensorBase) else a for a in args]
    r = op.entry(*phys, **kwargs)
    if isinstance(r, TensorBase):
        return wrap(_unfold(r, v.size), v.level)
    return wrap_all(tuple(_unfold(t, v.size) for t in r), v.level)


# --- normalisation ---------------------------------------------------------------------------

def _ns_len(ns):
    return 1 if isinstance(ns, int) else len(tuple(ns))


@rule("native_layer_norm")
def _layer_norm(v, op, args, kwargs):
    x_, ns, w_, b_, eps = args
    x = _mat(v, x_)
    (w, wb), (b, bb) = unwrap_shared(w_, v.level), unwrap_shared(b_, v.level)
    if not wb and not bb:
        return wrap_all(tuple(op.entry(x, ns, w, b, eps)), v.level)
    y, mean, rstd = op.entry(x, ns, None, None, eps)
    nd = x_.dim()
    if w is not None:
        y = y * align(materialize(w, wb, v.size), True, nd)
    if b is not None:
        y = y + align(materialize(b, bb, v.size), True, nd)
    return wrap_all((y, mean, rstd), v.level)


@rule("native_layer_norm_backward")
def _layer_norm_backward(v, op, args, kwargs):
    g_, x_, ns, mean_, rstd_, w_, b_, mask = args
    g, x, mean, rstd = (_mat(v, a) for a in (g_, x_, mean_, rstd_))
    w, wb = unwrap_shared(w_, v.level) if w_ is not None else (None, False)
    nd, k = x_.dim(), _ns_len(ns)
    lead = tuple(range(1, nd - k + 1))          # the per-sample dims that are summed over
    gi = gw = gbias = None
    if mask[0]:
        h = g if not wb else g * align(w, True, nd)
        gi = op.entry(h, x, ns, mean, rstd, None if wb else w, None,
                      (True, False, False))[0]
    if mask[1] and w_ is not None:
        xhat = (x - mean.to(x.dtype)) * rstd.to(x.dtype)
        gw = (g * xhat).sum(lead) if lead else g * xhat
    if mask[2] and b_ is not None:
        gbias = g.sum(lead) if lead else g
    return wrap_all((gi, gw, gbias), v.level)


def _stat(v, s):
    """(a running statistic, whether it is batched): a batched one as the grouped layout's
    [B * C] (a view of its physical tensor when that is contiguous, so training updates it
    in place)."""
    if s is None:
        return None, False
    t, batched = unwrap(s, v.level)
    return (t.reshape(-1) if batched else t), batched


def _grouped_stat(v, s):
    """A running statistic in the grouped layout: batched, or repeated for every sample."""
    t, batched = _stat(v, s)
    return t if t is None or batched else t.repeat(v.size)


@rule("native_batch_norm")
def _batch_norm(v, op, args, kwargs):
    x_, w_, b_ = args[:3]
    training = kwargs.get("training")
    rm_, rv_ = kwargs.get("running_mean"), kwargs.get("running_var")
    B = v.size
    (w, wb), (b, bb) = (unwrap_shared(a, v.level) if a is not None else (None, False)
                        for a in (w_, b_))
    (rm, rmb), (rv, rvb) = _stat(v, rm_), _stat(v, rv_)
    if training and (rm_ is not None and not rmb or rv_ is not None and not rvb):
        raise RuntimeError(
            "vmap: batch_norm with running statistics in training mode is not supported: it "
            "would update the same running_mean/running_var with every sample's statistics. "
            "Use track_running_stats=False, or the module in eval mode, inside vmap "
            "(functorch.experimental.replace_all_batch_norm_modules_ does the former), or "
            "running statistics batched like the samples (one per sample).")
    x = _mat(v, x_)
    if not training and not (wb or bb or rmb or rvb):    # shared statistics: fold into N
        r = op.entry(_fold(x), w, b, **kwargs)
        return wrap_all((_unfold(r[0], B), r[1].unsqueeze(0).expand((B,) + tuple(r[1].shape)),
                         r[2].unsqueeze(0).expand((B,) + tuple(r[2].shape))), v.level)
    kw = dict(kwargs)
    if rm is not None:
        kw["running_mean"] = rm if rmb else rm.repeat(B)
    if rv is not None:
        kw["running_var"] = rv if rvb else rv.repeat(B)
    wg = None if w is None else materialize(w, wb, B).reshape(-1)
    bg = None if b is None else materialize(b, bb, B).reshape(-1)
    y, mean, invstd = op.entry(_to_channels(x), wg, bg, **kw)
    if training:            # each sample's statistics updated: back into a strided batch
        for s_, s in ((rm_, rm), (rv_, rv)):
            if s is not None:
                t = unwrap(s_, v.level)[0]
                if not t.is_contiguous():
                    t.copy_(s.reshape(t.shape))
    return wrap_all((_from_channels(y, B), mean.reshape(B, -1), invstd.reshape(B, -1)),
                    v.level)


class _BatchNormMode:
    """VmapMode kernel of native_batch_norm.  The op dispatches on input, weight and bias
    (the running statistics travel as keywords), so statistics batched at a level where
    those are not would reach the kernel as wrappers: the input is made batched at that
    level first (a batched zero added, which autograd records like any add), and the
    batching rule above takes the call."""

    __slots__ = ("op",)

    def __init__(self, op):
        self.op = op

    def __call__(self, *args, **kwargs):
        lv = _level_of((kwargs.get("running_mean"), kwargs.get("running_var")), {})
        if lv >= 0 and _level_of(args[:3], {}) < lv:
            x = args[0]
            zero = wrap(_T.zeros(_levels.info(lv).size, dtype=x.dtype, device=x.device), lv)
            args = (x + zero,) + tuple(args[1:])
        return redispatch_below(self.op, DispatchKey.VmapMode, args, kwargs)


MODE_RULES["native_batch_norm"] = _BatchNormMode


@rule("native_batch_norm_backward")
def _batch_norm_backward(v, op, args, kwargs):
    g_, x_, w_, rm, rv, sm_, si_, train, eps, mask = args
    B = v.size
    g, x = _to_channels(_mat(v, g_)), _to_channels(_mat(v, x_))
    w = None if w_ is None else _mat(v, w_).reshape(-1)
    sm = None if sm_ is None else _mat(v, sm_).reshape(-1)
    si = None if si_ is None else _mat(v, si_).reshape(-1)
    gi, gw, gbias = op.entry(g, x, w, _grouped_stat(v, rm), _grouped_stat(v, rv), sm, si,
                             train, eps, mask)
    return wrap_all((None if gi is None else _from_channels(gi, B),
                     None if gw is None else gw.reshape(B, -1),
                     None if gbias is None else gbias.reshape(B, -1)), v.level)


# --- losses over class indices ----------------------------------------------------------------

def _element_weights(target, weight, ignore_index, dtype):
    """Each target's weight (0 where ignored), target's shape."""
    keep = (target != ignore_index).to(dtype)
    if weight is None:
        return keep
    safe = _T.where(target == ignore_index, 0, target)
    return weight.index_select(0, safe.reshape(-1)).reshape(target.shape).to(dtype) * keep


def _nll_rows(v, x_, t_, weight):
    """(rows of every sample's input, their targets, the class weights) for one call."""
    if weight is not None:
        weight, batched = unwrap_shared(weight, v.level)
        if batched:
            raise BatchRuleError("nll_loss")      # class weights per sample: the loop
    x, t = _mat(v, x_), _mat(v, t_)
    if x_.dim() == 1:                          # one sample of C classes: the batch is N
        return x, t, weight
    return _fold(x), _fold(t), weight


@rule("nll_loss_forward", "_cross_entropy_forward")
def _nll_forward(v, op, args, kwargs):
    x_, t_, weight, reduction, ignore_index = args
    x, t, weight = _nll_rows(v, x_, t_, weight)
    per = op.entry(x, t, weight, 0, ignore_index)[0].reshape(v.size, -1)
    total = _element_weights(t, weight, ignore_index, per.dtype).reshape(v.size, -1).sum(1)
    if reduction == 0:
        out = per.reshape((v.size,) + tuple(t_.shape))
    else:
        out = per.sum(1)
        if reduction == 1:
            out = out / total
    return wrap_all((out, total), v.level)


@rule("nll_loss_backward", "_cross_entropy_backward")
def _nll_backward(v, op, args, kwargs):
    g_, x_, t_, weight, reduction, ignore_index, total_ = args
    x, t, weight = _nll_rows(v, x_, t_, weight)
    g = _mat(v, g_)
    if reduction != 0:                         # per-sample scale, then per element
        if reduction == 1:
            g = g / _mat(v, total_)
        g = g.reshape(v.size, 1).expand(v.size, t.numel() // v.size)
    g = g.reshape(t.shape)
    r = op.entry(g, x, t, weight, 0, ignore_index, x.new_ones(()))
    return wrap(r.reshape((v.size,) + tuple(x_.shape)), v.level)


class _OneHot:
    """VmapMode kernel of one_hot: every sample in one call on the physical tensor, whose
    range checks cover all the samples.  The class count must be given, as PyTorch's
    rule requires: inferred, it would depend on the data."""

    __slots__ = ("op",)

    def __init__(self, op):
        self.op = op

    def __call__(self, tensor, num_classes=-1):
        lv = _level_of((tensor,), {})
        if lv < 0:
            return redispatch_below(self.op, DispatchKey.VmapMode, (tensor, num_classes), {})
        if num_classes <= 0:
            raise RuntimeError("When vmap-ing torch.nn.functional.one_hot, please provide an "
                               "explicit positive num_classes argument.")
        v = _levels.info(lv)
        with _levels.switch(v):
            return wrap(self.op.entry(unwrap(tensor, lv)[0], num_classes), lv)


MODE_RULES["one_hot"] = _OneHot
