"""Variable-length sequences (``torch.nn.utils.rnn``): padding, packing and PackedSequence.

A PackedSequence holds the valid time steps of a batch sorted by decreasing length, time
step after time step: ``data`` is (sum(lengths), *) and ``batch_sizes[t]`` says how many
sequences are still running at step t.  Packing and unpacking are one ``index_select``
each, so both are differentiable."""
from collections import namedtuple

from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name
from ember.core.shapes import cat, stack
from ember.core.tensor import Tensor

# PackedSequence_ and bind exist (as in torch) but, as there, are not exported
__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence",
           "pad_packed_sequence", "pad_sequence", "unpack_sequence", "unpad_sequence"]


PackedSequence_ = namedtuple("PackedSequence_",
                             ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def bind(optional, fn):
    """``fn(optional)``, or None when ``optional`` is None."""
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """The packed form of a batch of variable-length sequences (build it with
    :func:`pack_padded_sequence` or :func:`pack_sequence`, not by hand).

    ``sorted_indices[i]`` is the original batch position of the i-th packed sequence;
    ``unsorted_indices`` is its inverse.  Both are None when the batch came sorted."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:                  # PackedSequence((data, batch_sizes))
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """Move/convert ``data`` like ``Tensor.to``; the index tensors follow its device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        indices = [None if t is None else t.to(device=data.device)
                   for t in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(data, self.batch_sizes, *indices)

    def cpu(self):
        return self.to(device="cpu")

    def double(self):
        return self.to(dtype=_dtype_by_name["float64"])

    def float(self):
        return self.to(dtype=_dtype_by_name["float32"])

    def half(self):
        return self.to(dtype=_dtype_by_name["float16"])

    def long(self):
        return self.to(dtype=_dtype_by_name["int64"])

    def int(self):
        return self.to(dtype=_dtype_by_name["int32"])

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        """Whether ``data`` is in pinned memory."""
        return self.data.is_pinned()


def invert_permutation(permutation):
    """The inverse of a permutation tensor (None stays None)."""
    if permutation is None:
        return None
    return permutation.argsort()


def _index(values, device):
    return _T.tensor(values, dtype=_dtype_by_name["int64"], device=device)


def _batch_sizes(sorted_lengths):
    """Sequences still running at each step, for lengths in decreasing order."""
    sizes, n = [], len(sorted_lengths)
    for t in range(sorted_lengths[0] if sorted_lengths else 0):
        while n and sorted_lengths[n - 1] <= t:
            n -= 1
        sizes.append(n)
    return sizes


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch ``input`` of shape (T, B, *) ((B, T, *) with ``batch_first``)
    whose b-th sequence has ``lengths[b]`` valid steps.  With ``enforce_sorted`` the
    lengths must decrease; otherwise the batch is sorted here and the permutation kept."""
    if isinstance(lengths, Tensor):
        lengths = lengths.tolist()
    lengths = [int(n) for n in lengths]
    batch_dim = 0 if batch_first else 1
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` "
                               "to pack_padded_sequence and/or pack_sequence to sidestep this "
                               "requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        order = sorted(range(len(lengths)), key=lambda b: -lengths[b])    # stable
        lengths = [lengths[b] for b in order]
        sorted_indices = _index(order, input.device)
        input = input.index_select(batch_dim, sorted_indices)
    if input.dim() < 2:
        raise RuntimeError(f"pack_padded_sequence(): expected input of at least 2 "
                           f"dimensions, got {input.dim()}")
    steps, batch = input.shape[1 - batch_dim], input.shape[batch_dim]
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={batch})")
    if batch and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if batch and lengths[0] > steps:
        raise RuntimeError(f"pack_padded_sequence(): a length of {lengths[0]} exceeds the "
                           f"padded sequence length {steps}")
    batch_sizes = _batch_sizes(lengths)
    rest = tuple(input.shape[2:])
    if batch_first:                           # rows of a (B*T, *) view: b*T + t
        rows = [b * steps + t for t, n in enumerate(batch_sizes) for b in range(n)]
    else:                                     # rows of a (T*B, *) view: t*B + b
        rows = [t * batch + b for t, n in enumerate(batch_sizes) for b in range(n)]
    data = input.reshape((steps * batch,) + rest).index_select(0, _index(rows, input.device))
    return PackedSequence(data, _index(batch_sizes, "cpu"), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo :func:`pack_padded_sequence`: returns the padded batch (T, B, *) ((B, T, *) with
    ``batch_first``; T = ``total_length`` when given) and the lengths, both in the original
    batch order."""
    data = sequence.data
    batch_sizes = sequence.batch_sizes.tolist()
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    batch = batch_sizes[0] if batch_sizes else 0
    lengths = [sum(1 for n in batch_sizes if n > b) for b in range(batch)]
    order = list(range(batch))
    if sequence.unsorted_indices is not None:
        order = sequence.unsorted_indices.tolist()   # original position j <- sorted order[j]
    offsets = [0]
    for n in batch_sizes:
        offsets.append(offsets[-1] + n)
    pad_row = data.shape[0]                  # the appended padding row

    def row(t, b):
        return offsets[t] + b if t < lengths[b] else pad_row

    if batch_first:
        rows = [row(t, b) for b in order for t in range(steps)]
        shape = (batch, steps)
    else:
        rows = [row(t, b) for t in range(steps) for b in order]
        shape = (steps, batch)
    rest = tuple(data.shape[1:])
    pad = _T.full((1,) + rest, padding_value, dtype=data.dtype, device=data.device)
    padded = cat([data, pad]).index_select(0, _index(rows, data.device)).reshape(shape + rest)
    return padded, _index([lengths[b] for b in order], "cpu")


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of shape (L_i, *) into one (T, B, *) tensor ((B, T, *) with
    ``batch_first``), T = max L_i, filling with ``padding_value`` on ``padding_side``."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if any(s.dim() == 0 for s in sequences):
        raise RuntimeError("pad_sequence(): expected every sequence to have at least 1 "
                           "dimension, but got a 0-dim tensor")
    steps = max(s.shape[0] for s in sequences)
    rest = tuple(sequences[0].shape[1:])
    # torch fills an output made like the first sequence: its dtype wins, with no promotion
    dtype = sequences[0].dtype
    padded = []
    for s in sequences:
        if s.dtype != dtype:
            s = s.to(dtype)
        if tuple(s.shape[1:]) != rest:      # torch copies into the output: broadcasting
            for d, (want, got) in enumerate(zip(rest, s.shape[1:])):
                if got not in (want, 1):
                    raise RuntimeError(f"The size of tensor a ({want}) must match the size "
                                       f"of tensor b ({got}) at non-singleton dimension "
                                       f"{d + 1}")
            s = s.expand((s.shape[0],) + rest)
        n = steps - s.shape[0]
        if n:
            pad = _T.full((n,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype,
                          device=s.device)
            s = cat([s, pad] if padding_side == "right" else [pad, s])
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into its sequences (a list of (L_i, *) tensors)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    if isinstance(lengths, Tensor):
        lengths = lengths.tolist()
    return [seq.narrow(0, 0, int(n)) for seq, n in zip(padded_sequences.unbind(0), lengths)]


def unpack_sequence(packed_sequences):
    """Split a PackedSequence back into its sequences, in the original batch order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of (L_i, *) tensors: ``pack_padded_sequence(pad_sequence(sequences),
    lengths)``."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)
