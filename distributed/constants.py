"""PyTorch's ``torch.distributed.constants``: the default timeout of process groups."""
from ._process_group import _DEFAULT_TIMEOUT

__all__ = ["default_pg_timeout"]

default_pg_timeout = _DEFAULT_TIMEOUT
