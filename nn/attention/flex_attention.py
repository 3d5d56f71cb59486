"""ember.nn.attention.flex_attention (``torch.nn.attention.flex_attention``): attention
whose scores a user ``score_mod`` rewrites and whose sparsity a ``BlockMask`` (built by
``create_block_mask`` from a ``mask_mod``) describes.

ember computes it eagerly, as PyTorch does without ``torch.compile``: one batched matmul for
the scores, the mods evaluated once on the whole score tensor, a softmax and a second
matmul.  The mods receive broadcasting index tensors instead of vmapped scalars: ``b`` is
``[B, 1, 1, 1]``, ``h`` ``[1, H, 1, 1]``, ``q_idx`` ``[1, 1, Q, 1]`` and ``kv_idx``
``[1, 1, 1, KV]`` (int64), so elementwise arithmetic, comparisons, ``torch.where`` and
indexing captured tensors (``bias[h]``, ``doc[b, q_idx]``) give what PyTorch's
per-element evaluation gives.  Mods that branch in Python on an index value
(``if q_idx > 3:``) are not supported: that value is a tensor of many indices.

Unlike PyTorch's CPU path, gradients flow (to query, key, value and to tensors the
score_mod captures), ``AuxRequest(max_scores=True)`` works, and the blocks of a BlockMask
are honoured as the fused kernel honours them (a position counts only inside one of its
kv blocks; full blocks skip the mask_mod), which equals the mask_mod alone for masks that
create_block_mask made from it."""
from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable
from typing import Literal, NamedTuple, NotRequired, TypedDict

from ember.core.tensor import Tensor
from ember.nn.attention._flex_block_mask import (
    _DEFAULT_SPARSE_BLOCK_SIZE,
    _LARGE_SPARSE_BLOCK_SIZE,
    BlockMask,
    _cdiv,
    _dense_to_ordered,
    _dq_write_order,
    _sliced_mask_mod_error,
    noop_mask,
)

import ember

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions",
           "create_block_mask", "create_mask", "or_masks", "and_masks", "noop_mask"]

_score_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]
_mask_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]
_Backend = Literal["AUTO", "TRITON", "FLASH", "TRITON_DECODE"]

# PyTorch's switch for debugging mods without compilation; ember never compiles, so it
# changes nothing here and exists for code that sets it.
_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = False

# Public where PyTorch's are: these names belong to this module.
BlockMask.__module__ = noop_mask.__module__ = __name__

_WARNINGS_SHOWN: set = set()


def _warn_once(key, message, category=UserWarning):
    if key not in _WARNINGS_SHOWN:
        _WARNINGS_SHOWN.add(key)
        warnings.warn(message, category, stacklevel=3)


class FlexKernelOptions(TypedDict, total=False):
    """Tuning options of PyTorch's fused kernels (keys optionally prefixed ``fwd_`` /
    ``bwd_``).  ember's eager path has no kernel to tune: it checks ``BACKEND`` as PyTorch
    does and ignores the rest."""
    num_warps: NotRequired[int]
    num_stages: NotRequired[int]
    BLOCK_M: NotRequired[int]
    BLOCK_N: NotRequired[int]
    BLOCK_M1: NotRequired[int]
    BLOCK_N1: NotRequired[int]
    BLOCK_M2: NotRequired[int]
    BLOCK_N2: NotRequired[int]
    PRESCALE_QK: NotRequired[bool]
    ROWS_GUARANTEED_SAFE: NotRequired[bool]
    BLOCKS_ARE_CONTIGUOUS: NotRequired[bool]
    WRITE_DQ: NotRequired[bool]
    FORCE_USE_FLEX_ATTENTION: NotRequired[bool]
    USE_TMA: NotRequired[bool]
    kpack: NotRequired[int]
    matrix_instr_nonkdim: NotRequired[int]
    waves_per_eu: NotRequired[int]
    BACKEND: NotRequired[_Backend]


class AuxRequest(NamedTuple):
    """Which auxiliary outputs flex_attention should return (``return_aux=``)."""
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """flex_attention's auxiliary outputs; a field not requested is None."""
    lse: Tensor | None = None
    max_scores: Tensor | None = None


def _identity(score, batch, head, token_q, token_kv):
    return score



def _check_callables(mask_mods):
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")


def or_masks(*mask_mods):
    """A mask_mod keeping a position that any of ``mask_mods`` keeps."""
    _check_callables(mask_mods)

    def or_mask(b, h, q_idx, kv_idx):
        out = b.new_zeros((), dtype=ember.bool)
        for mod in mask_mods:
            out = out | mod(b, h, q_idx, kv_idx)
        return out
    return or_mask


def and_masks(*mask_mods):
    """A mask_mod keeping a position that every one of ``mask_mods`` keeps."""
    _check_callables(mask_mods)

    def and_mask(b, h, q_idx, kv_idx):
        out = b.new_ones((), dtype=ember.bool)
        for mod in mask_mods:
            out = out & mod(b, h, q_idx, kv_idx)
        return out
    return and_mask


def _num_required_positional(fn):
    """Positional parameters without a default: 5 for a score_mod, 4 for a mask_mod."""
    params = inspect.signature(fn).parameters.values()
    return sum(1 for p in params if p.default is p.empty
               and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _is_score_mod(fn):
    n = _num_required_positional(fn)
    if n not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {n}")
    return n == 5


def _default_device(device):
    if device is None:
        return ember.accelerator.current_accelerator() or "cpu"
    return device


def _index_grid(B, H, Q, KV, device):
    """The (b, h, q_idx, kv_idx) index tensors, each along its own axis of [B, H, Q, KV]."""
    return (ember.arange(B, device=device).view(B, 1, 1, 1),
            ember.arange(H, device=device).view(1, H, 1, 1),
            ember.arange(Q, device=device).view(1, 1, Q, 1),
            ember.arange(KV, device=device).view(1, 1, 1, KV))


def _as_tensor(x, like):
    return x if isinstance(x, Tensor) else ember.as_tensor(x, device=like.device)


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """The dense ``(B, H, Q_LEN, KV_LEN)`` bool mask of ``mod_fn``: a mask_mod's values, or
    for a score_mod the positions it does not set to -inf (scoring zeros).  ``B`` / ``H``
    None mean 1; ``device`` defaults to the current accelerator, else the CPU."""
    device = _default_device(device)
    B, H = B or 1, H or 1
    grid = _index_grid(B, H, Q_LEN, KV_LEN, device)
    if _is_score_mod(mod_fn):
        zeros = ember.zeros(B, H, Q_LEN, KV_LEN, device=device)
        out = _as_tensor(mod_fn(zeros, *grid), zeros)
        return ember.logical_not(ember.isneginf(out)).expand(B, H, Q_LEN, KV_LEN).contiguous()
    out = _as_tensor(mod_fn(*grid), grid[0])
    return out.expand(B, H, Q_LEN, KV_LEN).contiguous()


def _blocks_from_mask(mask, q_block, kv_block, separate_full_blocks):
    """Classify every (q_block x kv_block) tile of the bool ``mask`` [B, H, Q, KV] as
    partial or full (int32 grids; full None unless ``separate_full_blocks``).  Tiles
    sticking out past Q or KV count the outside as masked, so they are never full."""
    if mask.dtype != ember.bool:
        raise AssertionError(f"mask_mod must return a bool tensor, got {mask.dtype}")
    B, H, Q, KV = mask.shape
    nq, nkv = _cdiv(Q, q_block), _cdiv(KV, kv_block)
    if nq * q_block != Q or nkv * kv_block != KV:
        mask = ember.nn.functional.pad(mask, (0, nkv * kv_block - KV, 0, nq * q_block - Q))
    kept = mask.reshape(B, H, nq, q_block, nkv, kv_block).sum(dim=(3, 5))
    if not separate_full_blocks:
        return (kept > 0).to(ember.int32), None
    full = kept == q_block * kv_block
    partial = (kept > 0) & ember.logical_not(full)
    return partial.to(ember.int32), full.to(ember.int32)


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None,
                      BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, _compile=False,
                      separate_full_blocks=True, compute_dq_write_order=False,
                      dq_kv_order=True):
    """The BlockMask of ``mask_mod(b, h, q_idx, kv_idx) -> bool`` (True keeps the
    position) for ``B`` batches and ``H`` query heads (None: one, broadcast over all) and
    ``Q_LEN`` x ``KV_LEN`` positions, on ``device`` (default: the current accelerator,
    else the CPU), in ``BLOCK_SIZE`` tiles (an int, or ``(Q_BLOCK_SIZE, KV_BLOCK_SIZE)``).
    ``separate_full_blocks`` lists fully kept tiles apart; ``compute_dq_write_order``
    (with ``dq_kv_order``: descending when True) adds the metadata of PyTorch's
    deterministic FLASH backward.  ``_compile`` is deprecated in PyTorch and ignored.

    The mask_mod is evaluated once on broadcasting index tensors, so it must not branch
    in Python on index values."""
    device = _default_device(device)
    if _is_score_mod(mask_mod):
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    if _compile:
        warnings.warn("create_block_mask's _compile flag is deprecated (it worked around a "
                      "torch.compile limitation); ember builds block masks eagerly and "
                      "ignores it.", DeprecationWarning, stacklevel=2)
    if not isinstance(dq_kv_order, bool):
        raise ValueError("dq_kv_order must be a bool when using create_block_mask")
    q_block, kv_block = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    partial, full = _blocks_from_mask(mask, q_block, kv_block, separate_full_blocks)
    full_layout = _dense_to_ordered(full) if full is not None else (None, None)
    block_mask = BlockMask.from_kv_blocks(*_dense_to_ordered(partial), *full_layout,
                                          BLOCK_SIZE=(q_block, kv_block), mask_mod=mask_mod,
                                          seq_lengths=(Q_LEN, KV_LEN))
    if compute_dq_write_order:
        block_mask.dq_write_order, block_mask.dq_write_order_full = _dq_write_order(
            block_mask, dq_kv_order)
        block_mask.dq_kv_order_spt = dq_kv_order
    block_mask._derived_from = _derivation(block_mask)
    return block_mask


def _derivation(block_mask):
    """The mask_mod and the block tensors, to tell later (by identity) whether they are
    still the ones create_block_mask derived together."""
    return (block_mask.mask_mod, block_mask.kv_num_blocks, block_mask.kv_indices,
            block_mask.full_kv_num_blocks, block_mask.full_kv_indices)


def _allowed(block_mask, grid, shape):
    """The bool tensor (broadcastable to ``shape`` [B, H, L, S]) of the positions attention
    may use, or None for all of them."""
    mask_mod = block_mask.mask_mod
    mod_mask = None
    if mask_mod is not noop_mask:
        mod_mask = _as_tensor(mask_mod(*grid), grid[0]).to(ember.bool)
    no_blocks = block_mask.BLOCK_SIZE == (_LARGE_SPARSE_BLOCK_SIZE, _LARGE_SPARSE_BLOCK_SIZE)
    # Blocks that create_block_mask derived from this very mask_mod keep exactly what the
    # mask_mod keeps: the per-block pass would change nothing.
    derived = getattr(block_mask, "_derived_from", None)
    if no_blocks or (derived is not None and all(
            a is b for a, b in zip(derived, _derivation(block_mask)))):
        return mod_mask
    B, H, L, S = shape
    partial, full = block_mask._block_grids(L, S)
    for grid_ in (partial, full):
        if grid_ is not None and (grid_.shape[0] not in (1, B) or grid_.shape[1] not in (1, H)):
            raise ValueError(f"block_mask's batch and head sizes {tuple(grid_.shape[:2])} "
                             f"do not broadcast to the query's ({B}, {H})")
    # Expand the block grids to positions by indexing with each position's block number.
    dev = partial.device
    q_blk = (ember.arange(L, device=dev) // block_mask.BLOCK_SIZE[0]).view(L, 1)
    kv_blk = (ember.arange(S, device=dev) // block_mask.BLOCK_SIZE[1]).view(1, S)
    allowed = partial[:, :, q_blk, kv_blk]
    if mod_mask is not None:
        allowed = allowed & mod_mask
    if full is not None:
        allowed = allowed | full[:, :, q_blk, kv_blk]
    return allowed


def _check_inputs(query, key, value, block_mask, enable_gqa):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.is_nested:
            raise NotImplementedError("flex_attention does not support NestedTensor inputs; "
                                      "convert them to dense tensors first.")
        if t.dim() != 4:
            raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if query.device != key.device or query.device != value.device:
        raise ValueError(f"Expected query, key, and value to have the same device type, but "
                         f"got query.device: {query.device}, key.device: {key.device}, and "
                         f"value.device: {value.device} instead.")
    if query.size(-1) != key.size(-1):
        raise ValueError(f"Expect query and key/value to have the same embedding dimension "
                         f"but got E={query.size(-1)} and E={key.size(-1)}.")
    if key.shape[:3] != value.shape[:3]:
        raise ValueError(f"Expect key and value to agree in batch, heads and length, but got "
                         f"key {tuple(key.shape)} and value {tuple(value.shape)}.")
    Hq, Hkv = query.size(1), key.size(1)
    if not enable_gqa and Hq != Hkv:
        raise ValueError(f"Expect query and key/value to have the same number of heads but "
                         f"got Hq={Hq} and Hkv={Hkv}. Try setting enable_gqa=True for GQA.")
    if enable_gqa and Hq % Hkv != 0:
        raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA "
                         f"but got Hq={Hq} and Hkv={Hkv}.")
    Bq, Bkv = query.size(0), key.size(0)
    if Bq != Bkv:
        if block_mask is None:
            raise ValueError(f"Expect query and key/value to have the same batch size, or "
                             f"non-none block_mask, but got block_mask=None, Bq={Bq}, and "
                             f"Bkv={Bkv}.")
        if block_mask.kv_num_blocks.size(0) != Bq:
            raise ValueError(f"Expect query and key/value to have the same batch size, or "
                             f"block_mask and query to have the same batch size, but got "
                             f"Bq={Bq}, Bkv={Bkv}, "
                             f"B_block_mask={block_mask.kv_num_blocks.size(0)}.")
        if Bkv != 1:
            raise RuntimeError(f"Bq and Bkv must broadcast. Got Bq={Bq} and Bkv={Bkv}")


def _check_block_mask(block_mask, query, key):
    if block_mask.mask_mod is _sliced_mask_mod_error:
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
    if block_mask.BLOCK_SIZE != (_LARGE_SPARSE_BLOCK_SIZE, _LARGE_SPARSE_BLOCK_SIZE):
        mq, mkv = block_mask.shape[-2:]
        L, S = query.size(-2), key.size(-2)
        if L > mq or S > mkv:
            raise ValueError(
                f"block_mask was created for block_mask.shape={block_mask.shape} but got "
                f"q_len={L} and kv_len={S}. As the block mask was created for a smaller "
                "length than you're using it for, you likely need to create a new block mask.")
        if L < mq or S < mkv:
            raise ValueError(
                f"block_mask was created for block_mask.shape={block_mask.shape} but got "
                f"q_len={L} and kv_len={S}. As the block mask was created for a larger length "
                "than you're using it for, you can either 1. create a new block mask with the "
                "correct length, or 2. 'adjust' the existing block mask to the correct length "
                "by calling block_mask._adjust(q_len, kv_len). This essentially 'crops' the "
                "block mask to the upper left corner, which does not work for all mask_mods!")
    if query.device != block_mask.kv_num_blocks.device:
        raise RuntimeError(f"Expect q/k/v and block_mask to be on the same device but got "
                           f"{query.device} and {block_mask.kv_num_blocks.device}.")


def _check_kernel_options(kernel_options):
    options = dict(kernel_options or {})
    if "BACKEND" in options:
        if options.get("FORCE_USE_FLEX_ATTENTION", False):
            raise RuntimeError("BACKEND cannot be combined with legacy "
                               "FORCE_USE_FLEX_ATTENTION; specify only BACKEND.")
        valid = ("AUTO", "TRITON", "FLASH", "TRITON_DECODE")
        if options["BACKEND"] not in valid:
            raise ValueError(f"Invalid BACKEND value '{options['BACKEND']}'. Must be one of "
                             f"{valid}")
    for internal in ("OUTPUT_LOGSUMEXP", "OUTPUT_MAX"):
        if internal in options:
            raise AssertionError(f"{internal} must not be in kernel_options")
    return options


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None,
                   enable_gqa=False, return_lse=False, kernel_options=None, *,
                   return_aux=None):
    """Scaled dot-product attention with a score modification and a block-sparse mask.

    ``query`` ``(B, Hq, L, E)``, ``key`` ``(B, Hkv, S, E)``, ``value`` ``(B, Hkv, S, Ev)``
    (key/value may have batch 1 when ``block_mask`` has the query's batch).  The scores
    ``query @ key^T * scale`` (``scale`` defaults to ``1/sqrt(E)``) pass through
    ``score_mod(score, b, h, q_idx, kv_idx)``; positions ``block_mask`` excludes become
    -inf; a softmax over the keys weights ``value``.  A query that keeps no key gets a
    zero output row (and -inf logsumexp).  ``enable_gqa`` lets Hq be a multiple of Hkv
    (query head h reads kv head ``h // (Hq // Hkv)``).  Scores are computed in float32
    (float64 for float64 queries); the output has the query's dtype.

    Returns the output ``(B, Hq, L, Ev)``; with ``return_aux=AuxRequest(...)`` the pair
    ``(output, AuxOutput(lse, max_scores))`` (fields not requested are None); with the
    deprecated ``return_lse=True`` the pair ``(output, lse)``.  ``lse`` (natural log) and
    ``max_scores`` (the largest modified score, -inf where all are masked) are
    ``(B, Hq, L)`` in the working precision.  ``kernel_options`` tune fused kernels only:
    ember checks ``BACKEND`` and ignores them.

    The mods run once, on broadcasting index tensors (b ``[B,1,1,1]``, h ``[1,Hq,1,1]``,
    q_idx ``[1,1,L,1]``, kv_idx ``[1,1,1,S]``, int64): Python control flow on their values
    is not supported."""
    _check_inputs(query, key, value, block_mask, enable_gqa)
    if block_mask is not None:
        _check_block_mask(block_mask, query, key)
    _check_kernel_options(kernel_options)
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is "
                         "deprecated, please use return_aux=AuxRequest(lse=True) instead.")
    if return_lse:
        _warn_once("deprecated_return_lse", "return_lse is deprecated and will be removed "
                   "in v2.10. Please use return_aux=AuxRequest(lse=True) instead.",
                   FutureWarning)
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    want_max = return_aux is not None and return_aux.max_scores

    B, Hq, L, E = query.shape
    Hkv, S, Ev = key.size(1), key.size(2), value.size(-1)
    group = Hq // Hkv
    work = ember.float64 if query.dtype == ember.float64 else ember.float32
    q, k = query.to(work), key.to(work)
    if group > 1:
        # Query heads grouped under their kv head: the kv tensors broadcast, no copies.
        scores = ember.matmul(q.reshape(B, Hkv, group, L, E),
                              k.unsqueeze(2).transpose(-2, -1)).reshape(B, Hq, L, S)
    else:
        scores = ember.matmul(q, k.transpose(-2, -1))
    scores = scores * scale

    grid = _index_grid(B, Hq, L, S, query.device)
    post = scores
    if score_mod is not None:
        post = _as_tensor(score_mod(scores, *grid), scores)
        if tuple(post.shape) != (B, Hq, L, S):
            post = post.expand(B, Hq, L, S)
    if block_mask is not None:
        allowed = _allowed(block_mask, grid, (B, Hq, L, S))
        if allowed is not None:
            post = ember.where(allowed, post,
                               ember.tensor(-math.inf, dtype=work, device=query.device))

    row_max = post.amax(dim=-1, keepdim=True)
    dead = ember.isneginf(row_max)
    any_dead = bool(dead.any())
    if any_dead:
        # Rows with nothing to attend to: softmax them over zeros (finite values, finite
        # gradients) and zero their outputs below, instead of letting NaNs through.
        post = ember.where(dead, 0.0, post)
    probs = ember.softmax(post, dim=-1).to(query.dtype)
    v = value.to(query.dtype)
    if group > 1:
        out = ember.matmul(probs.reshape(B, Hkv, group, L, S), v.unsqueeze(2))
        out = out.reshape(B, Hq, L, Ev)
    else:
        out = ember.matmul(probs, v)
    if any_dead:
        out = ember.where(dead, 0.0, out)

    lse = max_scores = None
    if want_lse:
        lse = ember.logsumexp(post, dim=-1)
        if any_dead:
            lse = ember.where(dead.squeeze(-1), -math.inf, lse)
    if want_max:
        max_scores = row_max.squeeze(-1)
    if return_aux is not None:
        return out, AuxOutput(lse=lse, max_scores=max_scores)
    if return_lse:
        return out, lse
    return out
