"""The BlockMask of ``ember.nn.attention.flex_attention`` and its block layout helpers
(split from flex_attention.py, which re-exports the public names)."""
import itertools
import math

from ember.core.tensor import Tensor

import ember

_DEFAULT_SPARSE_BLOCK_SIZE = 128
# The block size of the one-block mask that stands for "no block mask".
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30


def noop_mask(batch, head, token_q, token_kv):
    """A mask_mod that keeps every position."""
    return batch.new_ones((), dtype=ember.bool)


def _sliced_mask_mod_error(batch, head, token_q, token_kv):
    """The mask_mod of a sliced BlockMask: slicing drops the link between the blocks and
    the original mask_mod, so calling it is an error."""
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask. Slicing a BlockMask with [] resets "
        "its mask_mod; assign one built from the original BlockMask's mask_mod, e.g. "
        "sliced.mask_mod = my_offset(base_mask.mask_mod, offset).")


# -- the ordered block layout ------------------------------------------------------------
# A block row holds the count of its blocks and their column indices first, in ascending
# order, then the remaining columns (ignored) - the order a stable descending argsort of
# the dense 0/1 row gives, which is how PyTorch lays the tensors out.

def _dense_to_ordered(dense):
    dense = dense.to(ember.int32)
    counts = dense.sum(dim=-1).to(ember.int32).contiguous()
    order = ember.argsort(dense, dim=-1, descending=True, stable=True)
    return counts, order.to(ember.int32).contiguous()


def _ordered_to_dense(counts, indices, num_cols):
    """The dense 0/1 int32 block grid ``[..., rows, num_cols]`` of an ordered layout."""
    width = indices.shape[-1]
    used = ember.arange(width, device=indices.device) < counts.unsqueeze(-1)
    # Unused slots write to an extra column that is cut off afterwards.
    target = ember.where(used, indices.to(ember.int64), num_cols)
    grid = ember.zeros(*indices.shape[:-1], num_cols + 1, dtype=ember.int32,
                       device=indices.device)
    return grid.scatter(-1, target, 1)[..., :num_cols].contiguous()


def _transpose_ordered(counts, indices):
    dense = _ordered_to_dense(counts, indices, indices.shape[-1])
    return _dense_to_ordered(dense.transpose(-2, -1))


def _cdiv(a, b):
    return -(-a // b)


def _dq_write_order(block_mask, descending):
    """The dQ write-order metadata of PyTorch's deterministic FLASH backward: for each
    (kv block, q block) pair of the q layouts, the q block row's rank of that kv block
    among the row's blocks (ascending, or descending when ``descending``)."""
    if block_mask.q_num_blocks is None or block_mask.q_indices is None:
        raise ValueError("BlockMask must have q_num_blocks and q_indices to compute "
                         "dq_write_order")
    kv_idx, q_idx = block_mask.kv_indices, block_mask.q_indices
    pairs = [(block_mask.kv_num_blocks, kv_idx)]
    if block_mask.full_kv_num_blocks is not None:
        pairs.append((block_mask.full_kv_num_blocks, block_mask.full_kv_indices))
    shapes = [kv_idx.shape[:2], q_idx.shape[:2]]
    shapes += [t.shape[:2] for t in (block_mask.full_kv_indices, block_mask.full_q_indices)
               if t is not None]
    B, H = ember.broadcast_shapes(*shapes)
    num_m, num_n = kv_idx.shape[2], q_idx.shape[2]
    dense = sum(_ordered_to_dense(c.expand(B, H, *c.shape[2:]), i.expand(B, H, *i.shape[2:]),
                                  num_n) for c, i in pairs).clamp(max=1)
    running = dense.cumsum(dim=-1)
    rank = running - dense
    if descending:
        rank = running[..., -1:] - 1 - rank
    rank = rank.to(ember.int32)
    dev = kv_idx.device

    def gather(q_layout):
        b = ember.arange(B, device=dev).view(B, 1, 1, 1)
        h = ember.arange(H, device=dev).view(1, H, 1, 1)
        n = ember.arange(q_layout.shape[2], device=dev).view(1, 1, -1, 1)
        return rank[b, h, q_layout.to(ember.int64).clamp(0, num_m - 1), n].to(ember.int32)

    full = None
    if len(pairs) == 2 and block_mask.full_q_indices is not None:
        full = gather(block_mask.full_q_indices)
    return gather(q_idx), full


class BlockMask:
    """A block-sparse attention mask: the attention matrix cut into
    ``BLOCK_SIZE = (Q_BLOCK_SIZE, KV_BLOCK_SIZE)`` tiles, each empty, partial (the mask_mod
    decides inside it) or full (every position kept), stored per (batch, head) row of q
    blocks in an ordered layout:

    - ``kv_num_blocks`` ``[B, H, Q_BLOCKS]`` / ``kv_indices`` ``[B, H, Q_BLOCKS, KV_BLOCKS]``:
      the partial blocks of each q-block row (count, then their kv-block indices first);
    - ``full_kv_num_blocks`` / ``full_kv_indices``: the same for the full blocks (optional);
    - ``q_num_blocks`` / ``q_indices`` and ``full_q_num_blocks`` / ``full_q_indices``: the
      transposed layouts (per kv-block column), which the backward pass of a fused kernel
      walks;
    - ``seq_lengths`` ``(Q_LEN, KV_LEN)``, ``BLOCK_SIZE`` and ``mask_mod``.

    All index tensors are int32.  Build one with ``create_block_mask`` or
    ``BlockMask.from_kv_blocks``."""

    _TENSOR_ATTRS = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
                     "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices",
                     "dq_write_order", "dq_write_order_full", "dq_kv_order"]
    _CONTEXT_ATTRS = ["seq_lengths", "BLOCK_SIZE", "mask_mod", "dq_kv_order_spt"]

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                 full_kv_indices, q_num_blocks, q_indices, full_q_num_blocks, full_q_indices,
                 BLOCK_SIZE=(_DEFAULT_SPARSE_BLOCK_SIZE, _DEFAULT_SPARSE_BLOCK_SIZE),
                 mask_mod=noop_mask, *, dq_write_order=None, dq_write_order_full=None,
                 dq_kv_order=None, dq_kv_order_spt=None):
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if kv_num_blocks is None:
            raise AssertionError("kv_num_blocks must be provided")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both "
                                 "provided or omitted")
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError("full_q_num_blocks and full_q_indices must be both "
                                 "provided or omitted")
        if dq_write_order_full is not None and dq_write_order is None:
            raise ValueError("dq_write_order_full requires dq_write_order")
        self.seq_lengths = seq_lengths
        self.kv_num_blocks = kv_num_blocks
        self.kv_indices = kv_indices
        self.full_kv_num_blocks = full_kv_num_blocks
        self.full_kv_indices = full_kv_indices
        self.q_num_blocks = q_num_blocks
        self.q_indices = q_indices
        self.full_q_num_blocks = full_q_num_blocks
        self.full_q_indices = full_q_indices
        self.dq_write_order = dq_write_order
        self.dq_write_order_full = dq_write_order_full
        self.dq_kv_order = dq_kv_order
        self.dq_kv_order_spt = dq_kv_order_spt
        self.BLOCK_SIZE = BLOCK_SIZE
        self.mask_mod = mask_mod
        # Set by create_block_mask: what the blocks were derived from (flex_attention.py
        # skips the per-block pass while they are unchanged).
        self._derived_from = None

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None,
                       full_kv_indices=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                       mask_mod=None, seq_lengths=None, compute_q_blocks=True, *,
                       dq_write_order=None, dq_write_order_full=None, dq_kv_order=None):
        """A BlockMask from its kv layouts (``kv_num_blocks``, ``kv_indices`` and optionally
        ``full_kv_num_blocks``, ``full_kv_indices``), deriving the q layouts when
        ``compute_q_blocks``.  ``BLOCK_SIZE`` an int means square tiles; ``mask_mod``
        defaults to noop_mask and ``seq_lengths`` to the block grid's extent.
        ``dq_kv_order`` is a bool (a built-in scheduler order) or a tensor."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both "
                                 "provided or omitted")
        q_num = q_idx = full_q_num = full_q_idx = None
        if compute_q_blocks:
            q_num, q_idx = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                full_q_num, full_q_idx = _transpose_ordered(full_kv_num_blocks,
                                                            full_kv_indices)
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0],
                           kv_indices.shape[-1] * BLOCK_SIZE[1])
        if dq_kv_order is not None and not isinstance(dq_kv_order, (bool, Tensor)):
            raise ValueError("dq_kv_order must be a bool, Tensor, or None")
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                   full_kv_indices, q_num, q_idx, full_q_num, full_q_idx,
                   BLOCK_SIZE=BLOCK_SIZE,
                   mask_mod=mask_mod if mask_mod is not None else noop_mask,
                   dq_write_order=dq_write_order, dq_write_order_full=dq_write_order_full,
                   dq_kv_order=dq_kv_order if isinstance(dq_kv_order, Tensor) else None,
                   dq_kv_order_spt=dq_kv_order if isinstance(dq_kv_order, bool) else None)

    def as_tuple(self, flatten=True):
        """The fields as a tuple, PyTorch's order; ``flatten`` spreads ``seq_lengths`` and
        ``BLOCK_SIZE`` into their two ints."""
        seq = tuple(self.seq_lengths) if flatten else (self.seq_lengths,)
        block = tuple(self.BLOCK_SIZE) if flatten else (self.BLOCK_SIZE,)
        return (*seq, *(getattr(self, a) for a in self._TENSOR_ATTRS), self.dq_kv_order_spt,
                *block, self.mask_mod)

    @property
    def shape(self):
        """``(*batch_dims, Q_LEN, KV_LEN)``."""
        return tuple(self.kv_indices.shape[:-2]) + tuple(self.seq_lengths)

    def numel(self):
        """The number of positions the mask covers (sparsity not counted)."""
        return math.prod(self.shape)

    def sparsity(self):
        """The percentage of the attention matrix in no block (never computed).  Blocks
        count whole, so a mask whose lengths are not multiples of BLOCK_SIZE can come out
        negative, as in PyTorch."""
        computed = int(self.kv_num_blocks.sum().item())
        if self.full_kv_num_blocks is not None:
            computed += int(self.full_kv_num_blocks.sum().item())
        covered = computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - covered / self.numel())

    def to_dense(self):
        """The block grid as a dense int32 tensor ``[..., Q_BLOCKS, KV_BLOCKS]``: 1 for a
        partial or full block, 0 for an empty one."""
        dense = _ordered_to_dense(self.kv_num_blocks, self.kv_indices,
                                  self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            dense = dense | _ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices,
                                              self.full_kv_indices.shape[-1])
        return dense

    def to_string(self, grid_size=(20, 20), limit=4):
        """A text picture of the block grid per (batch, head) - ``█`` all blocks present,
        ``░`` some, blank none - shrunk to at most ``grid_size`` cells (``-1``: unshrunk),
        for the first ``limit`` (batch, head) pairs."""
        dense = self.to_dense()
        *batch_dims, rows, cols = dense.shape
        if grid_size == -1:
            max_rows, max_cols = rows, cols
        elif isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        else:
            max_rows, max_cols = grid_size
        rstep, cstep = max(1, _cdiv(rows, max_rows)), max(1, _cdiv(cols, max_cols))
        nr, nc = _cdiv(rows, rstep), _cdiv(cols, cstep)
        # Count the present blocks of every cell at once (zero padding adds none).
        padded = ember.nn.functional.pad(dense, (0, nc * cstep - cols, 0, nr * rstep - rows))
        present = padded.reshape(*batch_dims, nr, rstep, nc, cstep).sum(dim=(-3, -1))
        row_sizes = [min(rstep, rows - r * rstep) for r in range(nr)]
        col_sizes = [min(cstep, cols - c * cstep) for c in range(nc)]
        pictures = []
        for n, idx in enumerate(itertools.product(*(range(d) for d in batch_dims))):
            if n == limit:
                pictures += ["...", "To print out more, set BlockMask.to_string(limit=N)",
                             "You can also index (BlockMask[batch, head]) to choose a "
                             "specific batch or head"]
                break
            counts = present[idx].tolist()
            lines = [f"{idx}\n"]
            for r, row in enumerate(counts):
                cells = ("█" if k == row_sizes[r] * col_sizes[c] else " " if k == 0 else "░"
                         for c, k in enumerate(row))
                lines.append("".join(ch * 2 for ch in cells) + "\n")
            pictures.append("".join(lines))
        return "\n".join(pictures)

    def __str__(self):
        return (f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n"
                f"{self.to_string().strip()}\n)")

    def __repr__(self):
        def shape_of(t):
            return None if t is None else t.shape
        name = getattr(self.mask_mod, "__name__", self.mask_mod)
        return ("BlockMask(\n"
                f"    kv_num_blocks={self.kv_num_blocks.shape},\n"
                f"    kv_indices={self.kv_indices.shape},\n"
                f"    full_kv_num_blocks={shape_of(self.full_kv_num_blocks)},\n"
                f"    full_kv_indices={shape_of(self.full_kv_indices)},\n"
                f"    q_num_blocks={shape_of(self.q_num_blocks)},\n"
                f"    q_indices={shape_of(self.q_indices)},\n"
                f"    full_q_num_blocks={shape_of(self.full_q_num_blocks)},\n"
                f"    full_q_indices={shape_of(self.full_q_indices)},\n"
                f"    BLOCK_SIZE={self.BLOCK_SIZE},\n"
                f"    shape={self.shape},\n"
                f"    sparsity={self.sparsity():.2f}%,\n"
                f"    mask_mod={name}\n"
                ")")

    def _with_dq_metadata_of(self, new):
        """Carry the dQ write-order settings over to ``new`` (a slice or a crop)."""
        new.dq_kv_order_spt = self.dq_kv_order_spt
        if self.dq_write_order is not None:
            new.dq_write_order, new.dq_write_order_full = _dq_write_order(
                new, bool(new.dq_kv_order_spt))
        return new

    def __getitem__(self, index):
        """The BlockMask of a part of the (batch, head, q-block) grid.  An int keeps its
        dimension (``bm[0]`` has batch size 1); slices and index tensors pass through.  The
        result's mask_mod raises: reassign it from the original's."""
        if self.dq_kv_order is not None:
            raise NotImplementedError("Slicing a BlockMask with a tensor dq_kv_order is not "
                                      "supported; build the sliced BlockMask directly.")
        index = index if isinstance(index, tuple) else (index,)
        index = (*index, slice(None), slice(None), slice(None))[:3]
        index = tuple(
            slice(i % n, i % n + 1) if isinstance(i, int) and -n <= i < n
            else slice(i, i + 1) if isinstance(i, int) else i
            for i, n in zip(index, self.kv_num_blocks.shape[:3]))
        full_num = full_idx = None
        if self.full_kv_num_blocks is not None:
            full_num, full_idx = self.full_kv_num_blocks[index], self.full_kv_indices[index]
        new = BlockMask.from_kv_blocks(
            self.kv_num_blocks[index], self.kv_indices[index], full_num, full_idx,
            BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=_sliced_mask_mod_error,
            seq_lengths=self.seq_lengths, compute_q_blocks=self.q_indices is not None)
        return self._with_dq_metadata_of(new)

    def _adjust(self, new_q_len, new_kv_len):
        """This mask cropped to its top-left ``(new_q_len, new_kv_len)`` corner (right for
        mask_mods that do not depend on the lengths, such as causal)."""
        if self.dq_kv_order is not None:
            raise NotImplementedError("Adjusting a BlockMask with a tensor dq_kv_order is "
                                      "not supported; build the new BlockMask directly.")
        rows = _cdiv(new_q_len, self.BLOCK_SIZE[0])
        cols = _cdiv(new_kv_len, self.BLOCK_SIZE[1])

        def crop(counts, indices):
            # Rebuilt from the dense grid, so blocks past the new edge drop out wherever
            # they sat in the row.
            width = max(indices.shape[-1], cols)
            dense = _ordered_to_dense(counts, indices, width)[..., :rows, :cols]
            return _dense_to_ordered(dense)

        kv = crop(self.kv_num_blocks, self.kv_indices)
        full = (None, None)
        if self.full_kv_num_blocks is not None:
            full = crop(self.full_kv_num_blocks, self.full_kv_indices)
        new = self.from_kv_blocks(*kv, *full, BLOCK_SIZE=self.BLOCK_SIZE,
                                  mask_mod=self.mask_mod, seq_lengths=(new_q_len, new_kv_len),
                                  compute_q_blocks=self.q_indices is not None)
        return self._with_dq_metadata_of(new)

    def to(self, device):
        """A BlockMask with every tensor moved to ``device`` (this one is left as is)."""
        moved = {a: None if getattr(self, a) is None else getattr(self, a).to(device)
                 for a in self._TENSOR_ATTRS}
        return BlockMask(seq_lengths=self.seq_lengths, BLOCK_SIZE=self.BLOCK_SIZE,
                         mask_mod=self.mask_mod, dq_kv_order_spt=self.dq_kv_order_spt,
                         **moved)

    def _block_grids(self, q_len, kv_len):
        """The partial and full block grids (bool, None when absent) cut to the blocks
        covering ``q_len`` x ``kv_len``, with 4 dimensions."""
        rows, cols = _cdiv(q_len, self.BLOCK_SIZE[0]), _cdiv(kv_len, self.BLOCK_SIZE[1])

        def grid(counts, indices):
            if counts is None:
                return None
            dense = _ordered_to_dense(counts, indices, max(cols, indices.shape[-1]))
            dense = dense[..., :rows, :cols].to(ember.bool)
            while dense.dim() < 4:
                dense = dense.unsqueeze(0)
            return dense

        return (grid(self.kv_num_blocks, self.kv_indices),
                grid(self.full_kv_num_blocks, self.full_kv_indices))
