"""``torch.utils.data._utils.worker``: what a DataLoader worker process runs
(ember.utils.data._worker's names, under PyTorch's path)."""
from .._worker import MP_STATUS_CHECK_INTERVAL as MP_STATUS_CHECK_INTERVAL
from .._worker import ExceptionWrapper as ExceptionWrapper
from .._worker import WorkerInfo as WorkerInfo
from .._worker import _IterableDatasetStopIteration as _IterableDatasetStopIteration
from .._worker import _ResumeIteration as _ResumeIteration
from .._worker import _worker_loop as _worker_loop
from .._worker import get_worker_info as get_worker_info

__all__ = ["ExceptionWrapper", "MP_STATUS_CHECK_INTERVAL", "WorkerInfo", "get_worker_info"]
