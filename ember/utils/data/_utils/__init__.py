"""``ember.utils.data._utils``: PyTorch's ``torch.utils.data._utils`` path, which code that
extends the DataLoader imports (``torch.utils.data._utils.collate.default_collate``,
``..._utils.worker.get_worker_info``).  The implementations live in ``ember.utils.data``'s
``_collate`` and ``_worker``; these modules re-export them under PyTorch's names."""
import sys

from .. import _worker
from . import collate as collate
from . import worker as worker

__all__ = ["ExceptionWrapper", "HAS_NUMPY", "IS_WINDOWS", "MP_STATUS_CHECK_INTERVAL",
           "collate", "worker"]

IS_WINDOWS = sys.platform == "win32"
HAS_NUMPY = True                    # ember's CPU storage is NumPy memory
ExceptionWrapper = _worker.ExceptionWrapper
# how often a DataLoader checks its workers' status (seconds): ember's value, not PyTorch's 5
MP_STATUS_CHECK_INTERVAL = _worker.MP_STATUS_CHECK_INTERVAL
