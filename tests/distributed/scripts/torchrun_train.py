"""A training script written for torchrun, with only the import changed: it reads torchrun's
environment, joins with env://, shards a dataset with DistributedSampler, trains a
DistributedDataParallel model and has rank 0 save a checkpoint behind a barrier.
``python -m ember.distributed.run --nproc-per-node 2 torchrun_train.py OUT [die|raise]``."""
import json
import os
import sys

import ember.distributed as dist
from ember.nn.parallel import DistributedDataParallel as DDP

import ember as torch
from ember.utils.data import DataLoader, DistributedSampler, TensorDataset

ENV = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
       "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT",
       "OMP_NUM_THREADS"]


def main():
    out = sys.argv[1]
    env = {k: os.environ.get(k) for k in ENV}
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group(backend="gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    mode = sys.argv[2] if len(sys.argv) > 2 else ""
    if mode == "die" and rank == 1:
        os._exit(3)
    if mode == "raise" and rank == 1:
        raise RuntimeError("rank 1 cannot read its shard")
    torch.manual_seed(0)
    x = torch.randn(64, 4)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]])
    sampler = DistributedSampler(TensorDataset(x, y), shuffle=True, seed=1)
    loader = DataLoader(TensorDataset(x, y), batch_size=8, sampler=sampler, num_workers=1,
                        persistent_workers=True)     # forked workers next to MPI
    model = DDP(torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    seen, losses = [], []
    for epoch in range(3):
        sampler.set_epoch(epoch)
        seen.append(list(sampler))
        for xb, yb in loader:
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
        losses.append(loss.item())
    if rank == 0:
        torch.save(model.module.state_dict(), os.path.join(out, "model.pt"))
    dist.barrier()
    weights = [None] * world
    dist.all_gather_object(weights, model.module.weight.detach().numpy().tolist())
    with open(os.path.join(out, f"rank{rank}.json"), "w") as fh:
        json.dump({"env": env, "local_rank": local_rank, "rank": rank, "world": world,
                   "seen": seen, "losses": losses, "weights": weights,
                   "launched": dist.is_torchelastic_launched()}, fh)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
