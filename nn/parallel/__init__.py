"""``ember.nn.parallel``: DataParallel and DistributedDataParallel."""
from ember.nn.parallel.data_parallel import DataParallel
from ember.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
