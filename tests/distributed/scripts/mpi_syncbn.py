"""SyncBatchNorm on 2 real MPI ranks: outputs, input and parameter gradients and running
statistics equal PyTorch's BatchNorm on the concatenated batch (ranks hold different batch
sizes, or none); eval mode, one-rank groups and non-members are BatchNorm; inside DDP.
Run under ``mpiexec -n 2``."""
import datetime

import ember.distributed as dist
import ember.nn as nn
import numpy as np
import torch
from _harness import check, report
from ember.distributed._process_group import _world
from ember.nn.parallel import DistributedDataParallel as DDP

import ember

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
R, W = dist.get_rank(), dist.get_world_size()
TOL = {ember.float64: dict(rtol=1e-10, atol=1e-12), ember.float32: dict(rtol=2e-5, atol=2e-5),
       ember.float16: dict(rtol=2e-2, atol=2e-2)}


def close(a, b, dtype, what=""):
    a = a.detach().to(ember.float64).numpy() if isinstance(a, ember.Tensor) else a
    b = b.detach().double().numpy() if isinstance(b, torch.Tensor) else b
    np.testing.assert_allclose(a, b, err_msg=what, **TOL[dtype])


def summed(t, like):
    """``t`` (None: zeros like ``like``) summed over the ranks, in float64."""
    t = ember.zeros_like(like) if t is None else t
    t = t.detach().to(ember.float64).clone()
    dist.all_reduce(t)
    return t


def batches(sizes, shape, dtype, seed):
    """Every rank's slice of one global batch: (this rank's input, the whole batch)."""
    g = np.random.default_rng(seed)
    whole = g.standard_normal((sum(sizes),) + shape) * 3 + 1.5
    start = sum(sizes[:R])
    mine = whole[start:start + sizes[R]]
    return ember.tensor(mine, dtype=dtype).requires_grad_(), whole


def compare_training(sizes, shape, dtype, momentum=0.1, affine=True, steps=3):
    """SyncBatchNorm on this rank's slice vs torch's BatchNorm on the whole batch."""
    c = shape[0]
    torch_dtype = torch.float64 if dtype == ember.float64 else torch.float32
    ref = {2: torch.nn.BatchNorm1d, 3: torch.nn.BatchNorm1d, 4: torch.nn.BatchNorm2d,
           5: torch.nn.BatchNorm3d}[len(shape) + 1](c, momentum=momentum, affine=affine)
    ref = ref.to(torch_dtype)
    sbn = nn.SyncBatchNorm(c, momentum=momentum, affine=affine, dtype=dtype)
    if affine:
        g = np.random.default_rng(7)
        w, b = g.standard_normal(c) + 1, g.standard_normal(c)
        with torch.no_grad():
            ref.weight.copy_(torch.tensor(w))
            ref.bias.copy_(torch.tensor(b))
        with ember.no_grad():
            sbn.weight.copy_(ember.tensor(w))
            sbn.bias.copy_(ember.tensor(b))
    start = sum(sizes[:R])
    for step in range(steps):
        x, whole = batches(sizes, shape, dtype, seed=step)
        gy = np.random.default_rng(100 + step).standard_normal(whole.shape)
        y = sbn(x)
        (y * ember.tensor(gy[start:start + sizes[R]], dtype=dtype)).sum().backward()
        tx = torch.tensor(whole, dtype=torch_dtype, requires_grad=True)
        ty = ref(tx)
        (ty * torch.tensor(gy, dtype=torch_dtype)).sum().backward()
        sl = slice(start, start + sizes[R])
        close(y, ty[sl], dtype, f"output, step {step}")
        if sizes[R]:
            close(x.grad, tx.grad[sl], dtype, f"input grad, step {step}")
        else:
            assert y.shape == x.shape and (x.grad is None or x.grad.numel() == 0)
        if affine:
            close(summed(sbn.weight.grad, sbn.weight), ref.weight.grad, dtype, "weight grad")
            close(summed(sbn.bias.grad, sbn.bias), ref.bias.grad, dtype, "bias grad")
            sbn.weight.grad = sbn.bias.grad = None
            ref.weight.grad = ref.bias.grad = None
        close(sbn.running_mean, ref.running_mean, dtype, "running_mean")
        close(sbn.running_var, ref.running_var, dtype, "running_var")
        assert sbn.num_batches_tracked.item() == step + 1
    return sbn


@check("syncbn.uneven_batches.float64")
def _():
    compare_training([3, 5], (4, 3, 2), ember.float64)


@check("syncbn.uneven_batches.float32")
def _():
    compare_training([5, 2], (3, 4), ember.float32)
    compare_training([1, 6], (2,), ember.float32, affine=False)


@check("syncbn.cumulative_average_and_3d")
def _():
    compare_training([2, 3], (2, 2, 2, 3), ember.float64, momentum=None)


@check("syncbn.empty_batch_on_one_rank")
def _():
    compare_training([4, 0], (3, 5), ember.float64)
    compare_training([0, 3], (2, 2, 2), ember.float32)


@check("syncbn.float16_input")
def _():
    # statistics in float32, output in float16 (the reference is float32 BatchNorm)
    sbn = nn.SyncBatchNorm(3)
    x, whole = batches([4, 4], (3, 5), ember.float16, seed=3)
    y = sbn(x)
    assert y.dtype == ember.float16
    y.float().sum().backward()
    assert x.grad.dtype == ember.float16
    ref = torch.nn.BatchNorm1d(3)
    ty = ref(torch.tensor(whole, dtype=torch.float16).float())     # the same rounded input
    close(y, ty[R * 4:(R + 1) * 4], ember.float16)
    close(sbn.running_var, ref.running_var, ember.float32)


@check("syncbn.eval_one_rank_groups_and_non_members_are_batchnorm")
def _():
    pg = _world.default_pg
    x = ember.randn(6, 3, 4)
    sbn = nn.SyncBatchNorm(3)
    sbn.running_mean.fill_(0.5)
    sbn.running_var.fill_(2.0)
    bn = nn.BatchNorm1d(3)
    bn.load_state_dict(sbn.state_dict())
    sbn.eval()
    bn.eval()
    seq = pg._seq
    close(sbn(x), bn(x).detach().double().numpy(), ember.float32, "eval")
    assert pg._seq == seq, "eval mode communicated"
    alone = dist.new_group([0])        # rank 0: a group of one; rank 1: not a member
    for group in (alone,):
        s, b = nn.SyncBatchNorm(3, process_group=group), nn.BatchNorm1d(3)
        seq = pg._seq
        out = s(x)
        close(out, b(x).detach().double().numpy(), ember.float32, f"group {group}")
        close(s.running_var, b.running_var.double().numpy(), ember.float32)
        assert pg._seq == seq


@check("syncbn.process_group")
def _():
    both = dist.new_group([0, 1])
    sbn = nn.SyncBatchNorm(2, process_group=both, dtype=ember.float64)
    x, whole = batches([3, 4], (2, 3), ember.float64, seed=9)
    y = sbn(x)
    ref = torch.nn.BatchNorm1d(2).double()
    close(y, ref(torch.tensor(whole))[sum([3, 4][:R]):][:[3, 4][R]], ember.float64)
    close(sbn.running_mean, ref.running_mean, ember.float64)


@check("syncbn.ddp_converted_model_equals_single_process")
def _():
    def net():
        return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                             nn.Flatten(), nn.Linear(4 * 5 * 5, 3))

    ember.manual_seed(3)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(net())
    assert isinstance(model[1], nn.SyncBatchNorm)
    ref = net()
    ref.load_state_dict(model.state_dict())
    ddp = DDP(model)
    opt = ember.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    ropt = ember.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        g = ember.Generator()
        g.manual_seed(step)
        x, t = ember.randn(8, 2, 5, 5, generator=g), ember.randn(8, 3, generator=g)
        opt.zero_grad()
        ropt.zero_grad()
        ((ddp(x[R * 4:(R + 1) * 4]) - t[R * 4:(R + 1) * 4]) ** 2).mean().backward()
        ((ref(x) - t) ** 2).mean().backward()
        opt.step()
        ropt.step()
    for (k, a), b in zip(model.state_dict().items(), ref.state_dict().values()):
        close(a, b.to(ember.float64).numpy(), ember.float32, k)


report(R)
