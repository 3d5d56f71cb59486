"""DistributedDataParallel: training on 2 ranks equals single-process training on the
concatenated batch (each rank also trains the single-process reference itself), and the
options around it.  Run under ``mpiexec -n 2``."""
import datetime

import ember.distributed as dist
import ember.nn as nn
import numpy as np
from _harness import check, data, ddp_twins, mine, raises, report
from ember.nn.modules.utils import consume_prefix_in_state_dict_if_present
from ember.nn.parallel import DistributedDataParallel as DDP

import ember

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
R, W = dist.get_rank(), dist.get_world_size()
TOL = dict(rtol=2e-5, atol=2e-6)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 16), nn.ReLU())
        self.head = nn.Linear(16, 3)
        self.extra = nn.Linear(16, 3).to(ember.float64)   # a second dtype: its own bucket

    def forward(self, x, use_extra=True):
        h = self.body(x)
        out = self.head(h)
        if use_extra:
            out = out + self.extra(h.to(ember.float64)).to(ember.float32)
        return out


def twins(**ddp_kwargs):
    return ddp_twins(Net, 100, **ddp_kwargs)


def close(a, b):
    for (k, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        np.testing.assert_allclose(x.to(ember.float64).numpy(), y.to(ember.float64).numpy(),
                                   err_msg=k, **TOL)


def train(ddp_kwargs, steps=4, set_to_none=True, momentum=0.9):
    ddp, model, ref = twins(**ddp_kwargs)
    opt = ember.optim.SGD(ddp.parameters(), lr=0.05, momentum=momentum)
    ropt = ember.optim.SGD(ref.parameters(), lr=0.05, momentum=momentum)
    for step in range(steps):
        x, y = data(step)
        opt.zero_grad(set_to_none=set_to_none)
        ropt.zero_grad()
        ((ddp(mine(x)) - mine(y)) ** 2).mean().backward()
        opt.step()
        ((ref(x) - y) ** 2).mean().backward()
        ropt.step()
        for p, q in zip(model.parameters(), ref.parameters()):
            np.testing.assert_allclose(p.grad.to(ember.float64).numpy(),
                                       q.grad.to(ember.float64).numpy(), **TOL)
    close(model, ref)
    return ddp


@check("ddp.starts_from_rank0_weights")
def _():
    ember.manual_seed(100 + R)
    model = Net()
    DDP(model)
    every = [None] * W
    dist.all_gather_object(every, [p.detach().numpy().tolist() for p in model.parameters()])
    assert every[0] == every[1]


@check("ddp.equivalence.default")
def _():
    ddp = train({})
    assert len(ddp._reducer.buckets) == 2        # float32 and float64


@check("ddp.equivalence.small_buckets")
def _():
    ddp = train({"bucket_cap_mb": 0.0001})
    assert len(ddp._reducer.buckets) >= 4


@check("ddp.equivalence.gradient_as_bucket_view")
def _():
    for set_to_none in (True, False):
        ddp = train({"gradient_as_bucket_view": True, "bucket_cap_mb": 0.002},
                    set_to_none=set_to_none)
        r = ddp._reducer
        for i, p in enumerate(r.params):
            assert p.grad.data_ptr() == r.bucket_of[i].views[i].data_ptr()


@check("ddp.buckets_start_during_backward")
def _():
    ddp, model, _ = twins(bucket_cap_mb=0.001)
    r = ddp._reducer
    launches = []
    inner = r._all_reduce

    def spy(t, g):
        launches.append(sum(r.ready))
        return inner(t, g)
    r._all_reduce = spy
    x, y = data(0)
    ((ddp(mine(x)) - mine(y)) ** 2).mean().backward()
    assert len(launches) == len(r.buckets) and launches[0] < len(r.params), launches


@check("ddp.no_sync_accumulates_then_averages")
def _():
    ddp, model, ref = twins()
    micro = [data(10 + k) for k in range(3)]
    with ddp.no_sync():
        for x, y in micro[:2]:
            ((ddp(mine(x)) - mine(y)) ** 2).mean().backward()
    local = [p.grad.clone() for p in model.parameters()]
    x, y = micro[2]
    ((ddp(mine(x)) - mine(y)) ** 2).mean().backward()
    for x, y in micro:
        ((ref(x) - y) ** 2).mean().backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.to(ember.float64).numpy(),
                                   q.grad.to(ember.float64).numpy(), **TOL)
    every = [None] * W
    dist.all_gather_object(every, [g.to(ember.float64).numpy().sum() for g in local])
    assert every[0] != every[1]          # inside no_sync the gradients stayed local


@check("ddp.find_unused_parameters")
def _():
    ddp, model, ref = twins(find_unused_parameters=True)
    for step in range(2):
        x, y = data(20 + step)
        for p in model.parameters():
            p.grad = None
        # extra is used on rank 0 only: its gradient is rank 0's divided by the world size
        ((ddp(mine(x), use_extra=R == 0) - mine(y)) ** 2).mean().backward()
    ref.zero_grad()
    k = x.shape[0] // W
    for r in range(W):
        ((ref(x[r * k:(r + 1) * k], use_extra=r == 0) - y[r * k:(r + 1) * k]) ** 2).mean() \
            .div(W).backward()
    for (n, p), q in zip(model.named_parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.to(ember.float64).numpy(),
                                   q.grad.to(ember.float64).numpy(), err_msg=n, **TOL)
    # unused everywhere: the gradient stays None
    for p in model.parameters():
        p.grad = None
    ((ddp(mine(x), use_extra=False) - mine(y)) ** 2).mean().backward()
    assert model.extra.weight.grad is None and model.head.weight.grad is not None


@check("ddp.unused_without_find_unused_raises")
def _():
    ddp, model, _ = twins()
    x, y = data(0)
    ((ddp(mine(x), use_extra=False) - mine(y)) ** 2).mean().backward()
    raises(RuntimeError, lambda: ddp(mine(x)), match="Expected to have finished reduction")


@check("ddp.broadcast_buffers")
def _():
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)
            self.register_buffer("count", ember.zeros(1))

        def forward(self, x):
            self.count.add_(R + 1)
            return self.lin(x)

    for flag, want in ((True, [2.0, 3.0]), (False, [2.0, 4.0])):
        m = Counter()
        ddp = DDP(m, broadcast_buffers=flag)
        for _ in range(2):
            ddp(ember.ones(1, 2)).sum().backward()
        assert m.count.item() == want[R], (flag, m.count.item())


@check("ddp.no_grad_forward_does_not_arm")
def _():
    ddp, model, ref = twins()
    with ember.no_grad():
        ddp(ember.ones(2, 6))
    x, y = data(3)
    ((ddp(mine(x)) - mine(y)) ** 2).mean().backward()
    ((ref(x) - y) ** 2).mean().backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.to(ember.float64).numpy(),
                                   q.grad.to(ember.float64).numpy(), **TOL)


@check("ddp.state_dict_and_module")
def _():
    ddp, model, _ = twins()
    assert ddp.module is model
    sd = ddp.state_dict()
    assert all(k.startswith("module.") for k in sd) and "module.head.weight" in sd
    consume_prefix_in_state_dict_if_present(sd, "module.")
    fresh = Net()
    fresh.load_state_dict(sd)
    close(fresh, model)


@check("ddp.on_another_device")
def _():
    # a module on the reference device (memory the host cannot read): buckets live there and
    # travel through the host; device_ids moves CPU inputs to the module's device
    ember.manual_seed(100 + R)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)).to("reference")
    ddp = DDP(model, device_ids=[0])
    ref = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
    ref.load_state_dict({k: v.cpu() for k, v in model.state_dict().items()})
    x, y = data(5)
    ((ddp(mine(x)) - mine(y).to("reference")) ** 2).mean().backward()
    ((ref(x) - y) ** 2).mean().backward()
    assert str(model[0].weight.grad.device) == "reference:0"
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.numpy(), **TOL)


@check("ddp.errors")
def _():
    raises(RuntimeError, lambda: DDP(nn.ReLU()), match="doesn't have any parameter")
    raises(ValueError, lambda: DDP(nn.Linear(2, 2), device_ids=[0]), match="device_ids")
    raises(RuntimeError, lambda: DDP(nn.Linear(2, 2 + R)), match="DDP expects same model")


report(R)
