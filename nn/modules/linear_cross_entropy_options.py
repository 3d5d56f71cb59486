"""LinearCrossEntropyOptions (``torch.nn.modules.linear_cross_entropy_options``): how
``F.linear_cross_entropy`` splits the batch so the full logits are never kept."""
import dataclasses
import re

__all__ = ["LinearCrossEntropyOptions"]

_POLICIES = ("accurate", "balanced", "compact", "auto")
_METHOD = re.compile(r"^(auto|aspect_ratio(:[1-9][0-9]*)?)$")


@dataclasses.dataclass
class LinearCrossEntropyOptions:
    """Chunking for ``linear_cross_entropy``: ``batch_chunk_size`` rows per chunk, or a
    ``chunking_method`` ('auto', 'aspect_ratio' or 'aspect_ratio:N') that sizes a chunk's
    logits like the input; ``acc_policy``/``acc_dtype`` name PyTorch's precision trade-offs
    (ember accumulates in the input's dtype under every policy)."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and not _METHOD.match(self.chunking_method):
            raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if size is not None and (not isinstance(size, int) or isinstance(size, bool)
                                 or size <= 0):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size}")

    def _chunk_rows(self, rows, classes, features):
        """Rows per chunk for a (rows, features) input and ``classes`` logits per row."""
        if self.batch_chunk_size is not None:
            return self.batch_chunk_size
        if self.chunking_method is None:
            return rows
        method = "aspect_ratio:2" if self.chunking_method == "auto" else self.chunking_method
        divisor = int(method.partition(":")[2] or 1)
        ratio = -(-classes // max(features, 1))
        target = max(-(-rows // ratio) // divisor, 1)
        return 1 << (target - 1).bit_length()          # the next power of two
