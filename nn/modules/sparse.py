"""Embedding and EmbeddingBag (``torch.nn.modules.sparse``): lookup tables of learned
vectors, one per index or reduced over bags of indices."""
from ember.core import _tensor as _T
from ember.nn import init
from ember.nn._functional.sparse import embedding, embedding_bag
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

from ember.autograd.grad_mode import no_grad

__all__ = ["Embedding", "EmbeddingBag"]


def _padding_index(padding_idx, num_embeddings, label):
    """``padding_idx`` checked against the table and made non-negative."""
    if padding_idx is not None:
        if not -num_embeddings <= padding_idx < max(num_embeddings, 1):
            raise AssertionError(f"{label} must be within num_embeddings")
        if padding_idx < 0:
            padding_idx += num_embeddings
    return padding_idx


def _fill_padding_row(module):
    if module.padding_idx is not None:
        with no_grad():
            module.weight[module.padding_idx].fill_(0)


class Embedding(Module):
    """``num_embeddings`` vectors of size ``embedding_dim``, initialised from N(0, 1);
    the ``padding_idx`` row starts at zero and receives no gradient."""

    __constants__ = ["num_embeddings", "embedding_dim", "padding_idx", "max_norm",
                     "norm_type", "scale_grad_by_freq", "sparse"]

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _padding_index(padding_idx, num_embeddings, "Padding_idx")
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(_T.empty((num_embeddings, embedding_dim), device=device,
                                             dtype=dtype), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        """N(0, 1), then the padding row to zero."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        _fill_padding_row(self)

    def forward(self, input):
        return embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                         self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        parts = [f"{self.num_embeddings}, {self.embedding_dim}"]
        if self.padding_idx is not None:
            parts.append(f"padding_idx={self.padding_idx}")
        if self.max_norm is not None:
            parts.append(f"max_norm={self.max_norm}")
        if self.norm_type != 2:
            parts.append(f"norm_type={self.norm_type}")
        if self.scale_grad_by_freq is not False:
            parts.append("scale_grad_by_freq=True")
        if self.sparse is not False:
            parts.append("sparse=True")
        return ", ".join(parts)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is ``embeddings`` (2-D), frozen unless ``freeze`` is
        False."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                   _freeze=freeze, padding_idx=padding_idx, max_norm=max_norm,
                   norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    """Sums, means or maxes of bags of embeddings, without materialising the per-index
    rows: ``EmbeddingBag(num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
    scale_grad_by_freq=False, mode='mean', sparse=False, _weight=None,
    include_last_offset=False, padding_idx=None, device=None, dtype=None)``; the weight is
    initialised from N(0, 1), the ``padding_idx`` row at zero."""

    __constants__ = ["num_embeddings", "embedding_dim", "max_norm", "norm_type",
                     "scale_grad_by_freq", "mode", "sparse", "include_last_offset",
                     "padding_idx"]

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _padding_index(padding_idx, num_embeddings, "padding_idx")
        if _weight is None:
            self.weight = Parameter(_T.empty((num_embeddings, embedding_dim), device=device,
                                             dtype=dtype))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight)
        self.mode, self.sparse = mode, sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self):
        """N(0, 1), then the padding row to zero."""
        init.normal_(self.weight)
        _fill_padding_row(self)

    def _fill_padding_idx_with_zero(self):
        _fill_padding_row(self)

    def forward(self, input, offsets=None, per_sample_weights=None):
        """One row per bag, (B, embedding_dim); see ember.nn.functional.embedding_bag."""
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse,
                             per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):
        """An EmbeddingBag whose weight is ``embeddings`` (2-D), frozen unless ``freeze``
        is False."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                  max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
