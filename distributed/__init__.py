"""ember.distributed: PyTorch's ``torch.distributed`` on MPI (mpi4py).

Launch with ``mpiexec -n N python train.py`` or ``python -m ember.distributed.run
--nproc-per-node N train.py`` (torchrun's flags and environment variables).  Importing this
package does not import mpi4py; ``is_available()`` says whether it can be used.
"""
from . import _mpi
from . import constants as constants
from ._faults import DistBackendError as DistBackendError
from ._faults import DistError as DistError
from ._faults import DistNetworkError as DistNetworkError
from ._faults import DistStoreError as DistStoreError
from ._grad_bucket import GradBucket as GradBucket
from .distributed_c10d import Backend as Backend
from .distributed_c10d import GroupMember as GroupMember
from .distributed_c10d import P2POp as P2POp
from .distributed_c10d import ProcessGroup as ProcessGroup
from .distributed_c10d import ReduceOp as ReduceOp
from .distributed_c10d import Work as Work
from .distributed_c10d import all_gather as all_gather
from .distributed_c10d import all_gather_into_tensor as all_gather_into_tensor
from .distributed_c10d import all_gather_object as all_gather_object
from .distributed_c10d import all_reduce as all_reduce
from .distributed_c10d import all_to_all as all_to_all
from .distributed_c10d import all_to_all_single as all_to_all_single
from .distributed_c10d import barrier as barrier
from .distributed_c10d import batch_isend_irecv as batch_isend_irecv
from .distributed_c10d import broadcast as broadcast
from .distributed_c10d import broadcast_object_list as broadcast_object_list
from .distributed_c10d import destroy_process_group as destroy_process_group
from .distributed_c10d import gather as gather
from .distributed_c10d import gather_object as gather_object
from .distributed_c10d import get_backend as get_backend
from .distributed_c10d import get_global_rank as get_global_rank
from .distributed_c10d import get_group_rank as get_group_rank
from .distributed_c10d import get_process_group_ranks as get_process_group_ranks
from .distributed_c10d import get_rank as get_rank
from .distributed_c10d import get_world_size as get_world_size
from .distributed_c10d import group as group
from .distributed_c10d import init_process_group as init_process_group
from .distributed_c10d import irecv as irecv
from .distributed_c10d import is_backend_available as is_backend_available
from .distributed_c10d import is_gloo_available as is_gloo_available
from .distributed_c10d import is_initialized as is_initialized
from .distributed_c10d import is_mpi_available as is_mpi_available
from .distributed_c10d import is_nccl_available as is_nccl_available
from .distributed_c10d import is_torchelastic_launched as is_torchelastic_launched
from .distributed_c10d import isend as isend
from .distributed_c10d import monitored_barrier as monitored_barrier
from .distributed_c10d import new_group as new_group
from .distributed_c10d import recv as recv
from .distributed_c10d import reduce as reduce
from .distributed_c10d import reduce_scatter as reduce_scatter
from .distributed_c10d import reduce_scatter_tensor as reduce_scatter_tensor
from .distributed_c10d import scatter as scatter
from .distributed_c10d import scatter_object_list as scatter_object_list
from .distributed_c10d import send as send

__all__ = [
    "Backend", "DistBackendError", "DistError", "DistNetworkError", "DistStoreError",
    "GradBucket", "GroupMember", "P2POp", "ProcessGroup", "ReduceOp", "Work", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all",
    "all_to_all_single", "barrier", "batch_isend_irecv", "broadcast", "broadcast_object_list",
    "destroy_process_group", "gather", "gather_object", "get_backend", "get_global_rank",
    "get_group_rank", "get_node_local_rank", "get_process_group_ranks", "get_rank",
    "get_world_size", "group", "init_process_group", "irecv", "is_available",
    "is_backend_available", "is_gloo_available", "is_initialized", "is_mpi_available",
    "is_nccl_available", "is_torchelastic_launched", "isend", "monitored_barrier",
    "new_group", "recv", "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter",
    "scatter_object_list", "send",
]


def __getattr__(name):
    if name == "algorithms":              # the join context manager and DDP's comm hooks
        import importlib
        return importlib.import_module("ember.distributed.algorithms")
    raise AttributeError(f"module 'ember.distributed' has no attribute '{name}'")


def is_available():
    """Whether ember.distributed can run: mpi4py is installed (checked without importing
    it, so this never fails and never starts MPI)."""
    return _mpi.available()


def get_node_local_rank(fallback_rank=None):
    """This process's rank on its node (LOCAL_RANK, set by the launcher), else
    ``fallback_rank``."""
    import os
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank "
                       "to allow `get_node_local_rank` to work, assuming you are not running "
                       "in a multi-device context and want the code to run locally instead.")
