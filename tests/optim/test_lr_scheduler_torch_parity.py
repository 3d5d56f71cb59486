"""ember.optim.lr_scheduler against torch: MultiplicativeLR's first step, the
scheduler-order warnings, and the helper methods torch's schedulers expose
(SequentialLR.recursive_undo, OneCycleLR's anneal functions, CyclicLR's scale functions)."""
import math
import warnings

import pytest
import torch

import ember


def _opt(lib, lr=1.0):
    return lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=lr)


def _lrs(lib, build, steps=5):
    opt = _opt(lib)
    sched = build(lib, opt)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(steps):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr()[0])
    return out


def _sequential_multiplicative(lib, opt):
    L = lib.optim.lr_scheduler
    return L.SequentialLR(opt, [L.ConstantLR(opt, factor=0.5, total_iters=2),
                                L.MultiplicativeLR(opt, lambda e: 0.9)], milestones=[3])


def test_multiplicative_lr_restarted_by_sequential_lr():
    e, t = _lrs(ember, _sequential_multiplicative), _lrs(torch, _sequential_multiplicative)
    assert [round(x, 9) for x in e] == [round(x, 9) for x in t]


def test_multiplicative_lr_step_zero_multiplies():
    out = []
    for lib in (ember, torch):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.MultiplicativeLR(opt, lambda e: 0.5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt.step()
            sched.step(3)
            sched.step(0)
        out.append(sched.get_last_lr())
    assert out[0] == out[1] == [0.25]


def _warnings_of(lib, scenario):
    opt = _opt(lib, 0.1)
    if scenario == "optimizer stepped before the scheduler was built":
        opt.step()
    sched = lib.optim.lr_scheduler.ExponentialLR(opt, 0.5)
    if scenario == "step replaced after the scheduler was built":
        opt.step = lambda *a, **k: None
    if scenario == "ordered":
        opt.step()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched.step()
    return [str(w.message)[:60] for w in caught]


@pytest.mark.parametrize("scenario", ["optimizer stepped before the scheduler was built",
                                      "step replaced after the scheduler was built",
                                      "ordered", "not stepped"])
def test_order_warnings(scenario):
    assert _warnings_of(ember, scenario) == _warnings_of(torch, scenario)


def test_tracked_step_still_runs_hooks_and_returns_loss():
    for lib in (ember, torch):
        opt = _opt(lib)
        lib.optim.lr_scheduler.StepLR(opt, 2)
        calls = []
        opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
        assert opt.step(lambda: 2.5) == 2.5
        assert calls == ["pre"] and opt._opt_called is True


def test_sequential_lr_recursive_undo():
    out = []
    for lib in (ember, torch):
        opt = _opt(lib)
        L = lib.optim.lr_scheduler
        inner = L.LinearLR(opt)
        seq = L.SequentialLR(opt, [inner, L.ExponentialLR(opt, 0.9)], milestones=[2])
        before = inner.last_epoch
        seq.recursive_undo()
        seq.recursive_undo(inner)
        out.append((before, inner.last_epoch))
    assert out[0] == out[1]


def test_one_cycle_anneal_functions():
    for lib in (ember, torch):
        cls = lib.optim.lr_scheduler.OneCycleLR
        assert math.isclose(cls._annealing_cos(1.0, 0.0, 0.25), 0.8535533905932737)
        assert cls._annealing_linear(1.0, 3.0, 0.25) == 1.5
        for strategy, expect in (("cos", 0.8535533905932737), ("linear", 0.75)):
            sched = cls(_opt(lib), 1.0, total_steps=10, anneal_strategy=strategy)
            assert math.isclose(sched._anneal_func(1.0, 0.0, 0.25), expect)


def test_cyclic_scale_functions():
    for lib in (ember, torch):
        cls = lib.optim.lr_scheduler.CyclicLR
        assert cls._triangular_scale_fn(3) == 1.0
        assert cls._triangular2_scale_fn(3) == 0.25
        assert cls._exp_range_scale_fn(0.5, 3) == 0.125
