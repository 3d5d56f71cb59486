"""ASGD, Rprop, Adafactor, Muon, the swa_utils and the ConstantLR/MultiplicativeLR/CyclicLR
schedulers against torch: the same parameters and gradients, step for step."""
import warnings

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)


def _run(name, kw, shapes=((4, 3), (5,)), steps=5, dtype=np.float64, tol=1e-12):
    params = [RNG.standard_normal(s).astype(dtype) for s in shapes]
    tp = [torch.tensor(p.copy(), requires_grad=True) for p in params]
    ep = [ember.tensor(p.copy(), requires_grad=True) for p in params]
    topt, eopt = getattr(torch.optim, name)(tp, **kw), getattr(ember.optim, name)(ep, **kw)
    for _ in range(steps):
        for t, e in zip(tp, ep):
            g = RNG.standard_normal(t.shape).astype(dtype)
            t.grad, e.grad = torch.tensor(g), ember.tensor(g)
        topt.step()
        eopt.step()
    for t, e in zip(tp, ep):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=tol, rtol=tol)
    assert sorted(eopt.state_dict()["state"][0]) == sorted(topt.state_dict()["state"][0])
    return topt, eopt


@pytest.mark.parametrize("kw", [dict(lr=0.1, t0=2, weight_decay=0.01),
                                dict(lr=0.05, lambd=0.01, alpha=0.5, maximize=True)])
def test_asgd(kw):
    _run("ASGD", kw)


@pytest.mark.parametrize("kw", [dict(lr=0.1), dict(lr=0.05, etas=(0.3, 1.5),
                                                   step_sizes=(1e-3, 0.2), maximize=True)])
def test_rprop(kw):
    _run("Rprop", kw, steps=8)


@pytest.mark.parametrize("kw", [dict(lr=0.1, weight_decay=0.01), dict(maximize=True),
                                dict(eps=(1e-30, 1e-3), d=2.0, beta2_decay=-0.5)])
def test_adafactor(kw):
    _run("Adafactor", kw, shapes=((4, 3), (5,), (2, 3, 4)))


@pytest.mark.parametrize("kw", [dict(lr=0.02), dict(lr=0.02, nesterov=False,
                                                    adjust_lr_fn="match_rms_adamw"),
                                dict(lr=0.01, weight_decay=0.0, ns_steps=3)])
def test_muon(kw):
    # the Newton-Schulz steps run in bfloat16, where one rounding differing from PyTorch's
    # (its fused kernels round at other points) moves the update by about 1e-4
    _run("Muon", kw, shapes=((4, 3), (3, 5)), dtype=np.float32, tol=2e-3)


def test_constructor_errors():
    p = [ember.nn.Parameter(ember.zeros(2, 2))]
    with pytest.raises(ValueError, match="Invalid eta values: 1.5, 1.2"):
        ember.optim.Rprop(p, etas=(1.5, 1.2))
    with pytest.raises(ValueError, match="beta2_decay should be <= 0"):
        ember.optim.Adafactor(p, beta2_decay=0.5)
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        ember.optim.Muon([ember.nn.Parameter(ember.zeros(3))])
    with pytest.raises(ValueError, match="Adjust learning rate function foo"):
        ember.optim.Muon(p, adjust_lr_fn="foo")
    with pytest.raises(ValueError, match="Invalid learning rate"):
        ember.optim.ASGD(p, lr=-1)


def test_adamw_module_path_and_old_import():
    assert ember.optim.AdamW.__module__ == "ember.optim.adamw"
    from ember.optim.adam import AdamW
    assert AdamW is ember.optim.AdamW


def _lrs(mod, make, opt="SGD", kw=None, steps=12):
    p = [mod.nn.Parameter(mod.zeros(2))]
    o = getattr(mod.optim, opt)(p, lr=0.1, **(kw or {}))
    s = make(mod, o)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(steps):
            o.step()
            s.step()
            g = o.param_groups[0]
            out.append((g["lr"], g.get("momentum", g.get("betas", (0,))[0])))
    return out, s


@pytest.mark.parametrize("make,opt,kw", [
    (lambda m, o: m.optim.lr_scheduler.ConstantLR(o, 0.5, 4), "SGD", {}),
    (lambda m, o: m.optim.lr_scheduler.MultiplicativeLR(o, lambda e: 0.9), "SGD", {}),
    (lambda m, o: m.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, step_size_up=3), "SGD",
     {"momentum": 0.9}),
    (lambda m, o: m.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, step_size_up=2, step_size_down=3,
                                                mode="triangular2"), "Adam", {}),
    (lambda m, o: m.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, step_size_up=2, mode="exp_range",
                                                gamma=0.9, cycle_momentum=False), "SGD", {}),
    (lambda m, o: m.optim.swa_utils.SWALR(o, 0.05, anneal_epochs=3), "SGD", {}),
    (lambda m, o: m.optim.swa_utils.SWALR(o, 0.05, anneal_epochs=4, anneal_strategy="linear"),
     "SGD", {}),
])
def test_schedulers_match_torch(make, opt, kw):
    want, _ = _lrs(torch, make, opt, kw)
    got, sched = _lrs(ember, make, opt, kw)
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-12)
    assert type(sched).__module__ in ("ember.optim.lr_scheduler", "ember.optim.swa_utils")


def test_scheduler_errors_and_state():
    p = [ember.nn.Parameter(ember.zeros(2))]
    o = ember.optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="between 0 and 1"):
        ember.optim.lr_scheduler.ConstantLR(o, factor=2)
    with pytest.raises(ValueError, match="momentum or beta1"):
        ember.optim.lr_scheduler.CyclicLR(ember.optim.Adagrad(p), 0.01, 0.1)
    s = ember.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, cycle_momentum=False)
    state = s.state_dict()
    s.load_state_dict(state)
    assert s.scale_fn(3) == 1.0


def test_averaged_model_swa_and_ema():
    for mod in (torch, ember):
        model = mod.nn.Linear(3, 2)
        with mod.no_grad():
            model.weight.zero_()
        swa = mod.optim.swa_utils.AveragedModel(model)
        ema = mod.optim.swa_utils.AveragedModel(
            model, multi_avg_fn=mod.optim.swa_utils.get_ema_multi_avg_fn(0.5))
        for _ in range(3):
            with mod.no_grad():
                model.weight.add_(1.0)
            swa.update_parameters(model)
            ema.update_parameters(model)
        assert float(swa.module.weight[0, 0]) == 2.0         # mean of 1, 2, 3
        assert float(ema.module.weight[0, 0]) == 2.25        # 1 -> 1.5 -> 2.25
        assert int(swa.n_averaged) == 3
    with pytest.raises(ValueError, match="Invalid decay value"):
        ember.optim.swa_utils.get_ema_avg_fn(2.0)


def test_update_bn():
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    data = [ember.randn(8, 3) for _ in range(3)]
    ember.optim.swa_utils.update_bn(data, model)
    with ember.no_grad():
        full = model[0](ember.cat(data))
    np.testing.assert_allclose(model[1].running_mean.numpy(), full.mean(0).numpy(), atol=1e-5)
    assert model[1].momentum == 0.1 and model.training


def test_swap_in_optimizer_params_and_state():
    p = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = ember.ones(2)
    opt.step()
    other = ember.zeros(2)
    other.grad = ember.ones(2)
    sd = opt.state_dict()
    with ember.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, sd):
        opt.step()
    assert other.tolist() != [0.0, 0.0]
    assert opt.param_groups[0]["params"][0] is p
