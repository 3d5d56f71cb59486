"""``DistributedSampler``: each rank of a data-parallel job reads its own share of a dataset
(PyTorch's ``torch.utils.data.distributed``)."""
import math

import ember

from .sampler import Sampler, _T_co

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler[_T_co]):
    """The indices of ``dataset`` that rank ``rank`` of ``num_replicas`` reads.

    Args:
        dataset (Dataset): what is sampled (only its length is used).
        num_replicas (int, optional): how many ranks share it (default: the world size of
            the default process group).
        rank (int, optional): this rank (default: its rank in the default group).
        shuffle (bool): a new permutation every epoch, the same on every rank (default True).
        seed (int): the permutation's seed, plus the epoch (default 0): equal on all ranks.
        drop_last (bool): drop the tail that does not divide evenly (default False: pad by
            repeating indices from the start, so every rank reads as many samples).

    Call ``set_epoch(epoch)`` at the start of each epoch, before creating the DataLoader
    iterator, or every epoch reads the same order.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            import ember.distributed as dist
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = ember.Generator()
            g.manual_seed(self.seed + self.epoch)
            order = ember.randperm(n, generator=g).tolist()
        else:
            order = list(range(n))
        if self.drop_last:
            order = order[:self.total_size]
        else:
            missing = self.total_size - n
            order += (order * math.ceil(missing / n))[:missing] if missing > 0 and n else []
        return iter(order[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Make the next iteration use the permutation of ``epoch`` (with ``shuffle``)."""
        self.epoch = epoch
