"""Connectionist temporal classification loss (torch.nn.functional.ctc_loss): the alpha
(forward) recursion of Graves et al. 2006 in log space, built from differentiable ember ops
and vectorised over the batch and the label positions; only the time loop is in Python.
Its gradient is autograd's."""
from ember.core._errors import _tensor_arg
from ember.core._tensor import TensorBase
from ember.core.function import Function
from ember.core.statistics import logsumexp
from ember.nn._functional.loss import _reduction

import ember

__all__ = ["ctc_loss"]

# log(0) stand-in: finite, so unreachable states give exact zero gradients instead of the
# NaNs that exp(-inf - -inf) would make; a loss this large is an impossible alignment
_NEG = -1e30
_IMPOSSIBLE = 1e29
_CHECKING = " (while checking arguments for ctc_loss_allocate_outputs)"


def _as_list(lengths, name):
    if isinstance(lengths, TensorBase):
        lengths = lengths.reshape(-1).tolist()
    elif isinstance(lengths, int):
        lengths = [lengths]
    lengths = [int(v) for v in lengths]
    for v in lengths:
        if v < 0:
            raise RuntimeError(f"Expected {name} to have value at least 0, but got value "
                               f"{v}{_CHECKING}")
    return lengths


def _padded_labels(targets, target_lengths, blank, device):
    """(N, S) labels from padded (N, S') or concatenated 1-D targets; positions past a
    target's length hold ``blank`` (they are never read as a final state)."""
    n = len(target_lengths)
    longest = max(target_lengths, default=0)
    if targets.dim() == 1:
        total = sum(target_lengths)
        if targets.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                               f"size {targets.shape[0]} for argument #2 'targets'{_CHECKING}")
        starts, pos = [], 0
        for length in target_lengths:
            starts.append(pos)
            pos += length
        offsets = ember.tensor(starts, device=device).reshape(n, 1)
        idx = (offsets + ember.arange(longest, device=device).reshape(1, -1))
        labels = targets[idx.clamp_max(max(total - 1, 0))] if total else \
            ember.zeros((n, longest), dtype=ember.int64, device=device)
    else:
        if targets.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension "
                               f"1, but got size {targets.shape[1]} for argument #2 "
                               f"'targets'{_CHECKING}")
        labels = targets[:, :longest]
    labels = labels.to(ember.int64)
    lengths = ember.tensor(target_lengths, device=device).reshape(n, 1)
    inside = ember.arange(longest, device=device).reshape(1, -1) < lengths
    return ember.where(inside, labels, blank)


class _Impossible(Function):
    """A sample no alignment reaches: its loss inf and its gradient NaN, as PyTorch's (a
    run that diverges shows it), or both 0 under ``zero_infinity``."""

    @staticmethod
    def forward(ctx, nll, impossible, zero_infinity):
        ctx.save_for_backward(impossible)
        ctx.fill = 0.0 if zero_infinity else float("nan")
        return ember.where(impossible, 0.0 if zero_infinity else float("inf"), nll)

    @staticmethod
    def backward(ctx, g):
        impossible, = ctx.saved_tensors
        return ember.where(impossible, ctx.fill, g), None, None


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The negative log likelihood of ``targets`` under all alignments of the per-frame
    log-probabilities ``log_probs`` (T, N, C) or unbatched (T, C).  ``targets``: padded
    (N, S) or the targets concatenated (sum(target_lengths),).  'mean' divides each loss by
    its target length before averaging; ``zero_infinity`` zeroes impossible (infinite)
    losses and their gradients."""
    red = _reduction(reduction)
    _tensor_arg(log_probs, "ctc_loss", "log_probs")
    _tensor_arg(targets, "ctc_loss", "targets")
    if log_probs.dtype not in (ember.float32, ember.float64):
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for "
                                  f"'{log_probs.type()[6:-6]}'")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0)
    if log_probs.dim() != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs to be 2-D (T, C) or 3-D (T, N, C), "
                           f"got {log_probs.dim()}-D")
    frames, batch, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    in_len = _as_list(input_lengths, "input_lengths")
    tg_len = _as_list(target_lengths, "target_lengths")
    if len(in_len) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tg_len) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    for v in in_len:
        if v > frames:
            raise RuntimeError(f"Expected input_lengths to have value at most {frames}, but "
                               f"got value {v}{_CHECKING}")
    device = log_probs.device
    labels = _padded_labels(targets, tg_len, blank, device)          # (N, S)
    # the extended label sequence blank, l1, blank, l2, ..., blank: (N, 2S + 1)
    blanks = ember.full((batch, labels.shape[1]), blank, dtype=ember.int64, device=device)
    ext = ember.cat([ember.stack([blanks, labels], 2).reshape(batch, -1), blanks[:, :1]], 1)
    width = ext.shape[1]
    # a state may be entered from two back when it is a label differing from that one
    before2 = ember.cat([blanks[:, :1].expand(batch, 2), ext[:, :-2]], 1)
    skip = (ext != blank) & (ext != before2)
    emit = log_probs.gather(2, ext.unsqueeze(0).expand(frames, batch, width)).clamp_min(_NEG)

    pad = ember.full((batch, 2), _NEG, dtype=log_probs.dtype, device=device)
    # a virtual state before frame 0 with probability 1 leads into states 0 and 1
    alpha = ember.cat([ember.zeros((batch, 1), dtype=log_probs.dtype, device=device),
                       ember.full((batch, width - 1), _NEG, dtype=log_probs.dtype,
                                  device=device)], 1)
    lengths = ember.tensor(in_len, device=device).reshape(batch, 1)
    for t in range(max(in_len, default=0)):
        shifted = ember.cat([pad, alpha], 1)
        step = ember.stack([alpha, shifted[:, 1:width + 1],
                            ember.where(skip, shifted[:, :width], _NEG)], 0)
        alpha = ember.where(lengths > t, logsumexp(step, 0) + emit[t], alpha)

    # end in the last label or the trailing blank
    last = ember.tensor([2 * v for v in tg_len], device=device).reshape(batch, 1)
    has_label = last > 0
    end = ember.cat([alpha.gather(1, last),
                     ember.where(has_label, alpha.gather(1, (last - 1).clamp_min(0)), _NEG)],
                    1)
    nll = -logsumexp(end, 1)
    # PyTorch's ctc gradient w.r.t. log_probs is exp(log_probs) - posterior, the true one
    # plus exp(log_probs) on each sample's frames (the same once through log_softmax): add
    # a term that is 0 in value and has exactly that gradient
    frame = (ember.arange(frames, device=device).reshape(frames, 1, 1)
             < lengths.reshape(1, -1, 1))
    # (where, not a product with the frame mask: an impossible sample's NaN gradient stays
    # on its own frames, as PyTorch's)
    quirk = ember.where(frame, log_probs.detach().exp() * log_probs, 0).sum((0, 2))
    nll = nll + (quirk - quirk.detach())
    loss = _Impossible.apply(nll, nll.detach() > _IMPOSSIBLE, zero_infinity)
    if red == "mean":
        divisor = ember.tensor(tg_len, device=device).clamp_min(1).to(loss.dtype)
        return (loss / divisor).mean()
    if red == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss
