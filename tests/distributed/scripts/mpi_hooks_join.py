"""Work.get_future, DistributedDataParallel's communication hooks and join() on 2 real MPI
ranks.  Run under ``mpiexec -n 2``."""
import datetime

import ember.distributed as dist
import ember.nn as nn
import numpy as np
from _harness import check, data, ddp_twins, mine, raises, report
from ember.distributed.algorithms.ddp_comm_hooks import default_hooks
from ember.nn.parallel import DistributedDataParallel as DDP

import ember
from ember.futures import Future, collect_all, wait_all

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
R, W = dist.get_rank(), dist.get_world_size()
TOL = dict(rtol=2e-5, atol=2e-6)


def net():
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))


def loss(model, x, y):
    return ((model(x) - y) ** 2).mean()


def twins(**kwargs):
    return ddp_twins(net, 50, **kwargs)


def grads(model):
    return [p.grad.to(ember.float64).numpy() for p in model.parameters()]


def step_grads(ddp, model, ref, seed):
    """One backward through DDP on this rank's half and the reference on the whole batch:
    (DDP's gradients, the reference's)."""
    for p in list(model.parameters()) + list(ref.parameters()):
        p.grad = None
    x, y = data(seed)
    loss(ddp, mine(x), mine(y)).backward()
    loss(ref, x, y).backward()
    return grads(model), grads(ref)


@check("futures.work_get_future")
def _():
    t = ember.full((5,), float(R + 1))
    work = dist.all_reduce(t, async_op=True)
    fut = work.get_future()
    assert isinstance(fut, Future)
    doubled = fut.then(lambda f: f.value()[0] * 2)
    assert doubled.wait().tolist() == [6.0] * 5
    assert fut.done() and fut.value()[0] is t and t.tolist() == [3.0] * 5
    # several operations in flight, collected
    a, b = ember.ones(3), ember.full((2,), 2.0)
    fa = dist.all_reduce(a, async_op=True).get_future()
    fb = dist.broadcast(b if R == 0 else ember.zeros(2), src=0, async_op=True).get_future()
    both = collect_all([fa, fb])
    got = both.wait()
    assert got == [fa, fb] and a.tolist() == [2.0] * 3
    assert [v[0].tolist() for v in wait_all([fa, fb])] == [[2.0] * 3, [2.0, 2.0]]
    # done() drives the operation: polling alone completes it
    c = ember.ones(4)
    fc = dist.all_reduce(c, async_op=True).get_future()
    while not fc.done():
        pass
    assert c.tolist() == [2.0] * 4


@check("futures.errors_reach_the_future")
def _():
    t = ember.ones(2 + R)               # shapes differ: the mismatch error is the future's
    fut = dist.all_reduce(t, async_op=True).get_future()
    chained = fut.then(lambda f: f.value())
    raises(RuntimeError, fut.wait, match="Detected mismatch between collectives")
    raises(RuntimeError, chained.wait, match="Got the following error when running the callback")
    ok = ember.ones(2)
    dist.all_reduce(ok)                 # the group is still usable
    assert ok.tolist() == [2.0, 2.0]


@check("hooks.allreduce_hook_equals_default")
def _():
    ddp, model, ref = twins(bucket_cap_mb=0.0002)
    ddp.register_comm_hook(None, default_hooks.allreduce_hook)
    assert len(ddp._reducer.buckets) >= 2
    opt = ember.optim.SGD(ddp.parameters(), lr=0.1)
    ropt = ember.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(3):
        got, want = step_grads(ddp, model, ref, step)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, **TOL)
        opt.step()
        ropt.step()


def check_compress(hook, dtype, rtol):
    ddp, model, ref = twins(bucket_cap_mb=0.0002)
    ddp.register_comm_hook(None, hook)
    got, want = step_grads(ddp, model, ref, 1)
    for p, a, b in zip(model.parameters(), got, want):
        assert p.grad.dtype == ember.float32
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * np.abs(b).max())
        # every value went through the compressed dtype
        assert ember.equal(p.grad, p.grad.to(dtype).float())


@check("hooks.fp16_compress_hook")
def _():
    check_compress(default_hooks.fp16_compress_hook, ember.float16, 2e-3)
    check_compress(default_hooks.fp16_compress_wrapper(default_hooks.allreduce_hook),
                   ember.float16, 2e-3)


@check("hooks.bf16_compress_hook")
def _():
    check_compress(default_hooks.bf16_compress_hook, ember.bfloat16, 1.6e-2)
    check_compress(default_hooks.bf16_compress_wrapper(default_hooks.allreduce_hook),
                   ember.bfloat16, 1.6e-2)


@check("hooks.custom_state_and_grad_bucket")
def _():
    ddp, model, _ = twins(bucket_cap_mb=0.0002)
    seen = {"calls": 0, "buckets": []}

    def local(state, bucket: dist.GradBucket) -> Future[ember.Tensor]:
        # no communication: the gradients stay this rank's own
        state["calls"] += 1
        params = bucket.parameters()
        assert len(bucket.gradients()) == len(params)
        assert bucket.buffer().numel() == sum(p.numel() for p in params)
        state["buckets"].append((bucket.index(), bucket.is_last()))
        fut = Future()
        fut.set_result(bucket.buffer())
        return fut

    ddp.register_comm_hook(seen, local)
    n = len(ddp._reducer.buckets)
    alone = net()
    alone.load_state_dict(model.state_dict())
    x, y = data(4)
    loss(ddp, mine(x), mine(y)).backward()
    loss(alone, mine(x), mine(y)).backward()
    assert seen["calls"] == n and seen["buckets"] == [(i, i == n - 1) for i in range(n)]
    for a, b in zip(grads(model), grads(alone)):
        np.testing.assert_allclose(a, b, **TOL)


@check("hooks.errors")
def _():
    ddp, _, _ = twins()
    raises(TypeError, lambda: ddp.register_comm_hook(None, 3), match="must be callable")

    def bad_bucket(state, bucket: int):
        return None
    raises(ValueError, lambda: ddp.register_comm_hook(None, bad_bucket),
           match="bucket annotation")

    def bad_return(state, bucket) -> int:
        return None
    raises(ValueError, lambda: ddp.register_comm_hook(None, bad_return),
           match="return annotation")
    ddp.register_comm_hook(None, default_hooks.allreduce_hook)
    raises(RuntimeError, lambda: ddp.register_comm_hook(None, default_hooks.allreduce_hook),
           match="can only be called once")

    def wrong_size(state, bucket):
        fut = Future()
        fut.set_result(ember.zeros(1))
        return fut
    ddp2, _, _ = twins()
    ddp2.register_comm_hook(None, wrong_size)
    x, y = data(0)
    raises(RuntimeError, lambda: loss(ddp2, mine(x), mine(y)).backward(),
           match="must hold one tensor")


def uneven(n_batches, divide_by_initial_world_size=True, **ddp_kwargs):
    """Train under join() with n_batches[rank] batches; the reference replays it: a step
    averages the gradients of the ranks still training (a joined rank adds zeros)."""
    ddp, model, ref = twins(**ddp_kwargs)
    opt = ember.optim.SGD(ddp.parameters(), lr=0.1)
    with ddp.join(divide_by_initial_world_size=divide_by_initial_world_size):
        for step in range(n_batches[R]):
            opt.zero_grad()
            x, y = data(step)
            loss(ddp, mine(x), mine(y)).backward()
            opt.step()
    ropt = ember.optim.SGD(ref.parameters(), lr=0.1)
    k = 8 // W
    for step in range(max(n_batches)):
        ropt.zero_grad()
        x, y = data(step)
        active = [r for r in range(W) if n_batches[r] > step]
        div = W if divide_by_initial_world_size else len(active)
        for r in active:
            (loss(ref, x[r * k:(r + 1) * k], y[r * k:(r + 1) * k]) / div).backward()
        ropt.step()
    return model, ref


@check("join.uneven_inputs")
def _():
    for divide in (True, False):
        model, ref = uneven([3, 5], divide)
        for (name, a), b in zip(model.state_dict().items(), ref.state_dict().values()):
            np.testing.assert_allclose(a.numpy(), b.numpy(), err_msg=f"{name} {divide}", **TOL)
    # with a comm hook, and the other rank running out first
    model, ref = uneven([4, 2], bucket_cap_mb=0.0002)
    every = [None] * W
    dist.all_gather_object(every, [p.detach().numpy().tolist() for p in model.parameters()])
    assert every[0] == every[1]
    for a, b in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **TOL)


@check("join.buffers_and_comm_hook")
def _():
    ember.manual_seed(9)
    model = nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5), nn.Linear(5, 3))
    ddp = DDP(model)
    ddp.register_comm_hook(None, default_hooks.allreduce_hook)
    with ddp.join():
        for step in range(2 + 2 * R):
            x, y = data(step)
            loss(ddp, mine(x), mine(y)).backward()
    every = [None] * W
    dist.all_gather_object(every, {k: v.tolist() for k, v in model.state_dict().items()})
    assert every[0] == every[1]            # the final model came from the last joiner


def _train_until_exhausted(ddp, n):
    with ddp.join(throw_on_early_termination=True):
        for step in range(n):
            x, y = data(step)
            loss(ddp, mine(x), mine(y)).backward()


@check("join.throw_on_early_termination")
def _():
    ddp, _, _ = twins()
    msg = raises(RuntimeError, lambda: _train_until_exhausted(ddp, 2 + 2 * R))
    want = "exhausted all inputs" if R == 0 else "Detected at least one rank that exhausted"
    assert want in msg, msg
    t = ember.ones(1)
    dist.all_reduce(t)                     # still in step with each other
    assert t.item() == 2.0


report(R)
