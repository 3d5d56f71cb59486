"""ember.optim.lr_scheduler against torch's: the lr (and momentum) sequences over many
steps, chained schedulers, state_dict round trips, warnings and errors."""
import math
import warnings

import ember.optim as eoptim
import pytest
import torch
from ember.optim import lr_scheduler as els

import ember


def _pair(opt_name="SGD", groups=2, **opt_kw):
    """The same optimizer (two param groups with different lrs) in ember and torch."""
    opt_kw = {"lr": 0.1, **opt_kw}

    def make(mod, lib):
        ps = [{"params": [lib.zeros(2, requires_grad=True)], "lr": 0.1 * (i + 1)}
              for i in range(groups)]
        return getattr(mod, opt_name)(ps, **opt_kw)
    return make(eoptim, ember), make(torch.optim, torch)


def _lrs(opt):
    return [g["lr"] for g in opt.param_groups]


def _sequence(opt, scheds, steps, metric=None):
    """The groups' lrs and every scheduler's get_last_lr() after each step, flattened."""
    out = _lrs(opt)
    for i in range(steps):
        opt.step()
        for s in scheds:
            s.step(metric(i)) if metric else s.step()
        out += _lrs(opt) + [lr for s in scheds for lr in s.get_last_lr()]
    return out


def _compare(make_e, make_t, steps=60, opt_name="SGD", rel=1e-12, metric=None, **opt_kw):
    e_opt, t_opt = _pair(opt_name, **opt_kw)
    e_s, t_s = make_e(e_opt), make_t(t_opt)
    e_s = e_s if isinstance(e_s, list) else [e_s]
    t_s = t_s if isinstance(t_s, list) else [t_s]
    e_seq = _sequence(e_opt, e_s, steps, metric)
    t_seq = _sequence(t_opt, t_s, steps, metric)
    assert e_seq == pytest.approx(t_seq, rel=rel, abs=1e-15)
    return e_opt, t_opt


CASES = {
    "StepLR": lambda m, o: m.StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[5, 12, 12, 30], gamma=0.3),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, gamma=0.95),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=13, eta_min=0.001),
    "CosineAnnealingLR0": lambda m, o: m.CosineAnnealingLR(o, T_max=10),
    "LambdaLR": lambda m, o: m.LambdaLR(o, lambda e: 1.0 / (e + 1)),
    "LambdaLRlist": lambda m, o: m.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: e % 3 + 1]),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=9),
    "LinearLRdefault": lambda m, o: m.LinearLR(o),
    "OneCycleLR": lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=61),
    "OneCycleLRlinear": lambda m, o: m.OneCycleLR(o, max_lr=[0.5, 2.0], total_steps=61,
                                                   anneal_strategy="linear", pct_start=0.4),
    "OneCycleLR3": lambda m, o: m.OneCycleLR(o, max_lr=1.0, epochs=6, steps_per_epoch=11,
                                             three_phase=True, cycle_momentum=False),
    "Chained": lambda m, o: [m.ExponentialLR(o, gamma=0.9), m.StepLR(o, 4, gamma=0.5)],
    "ChainedCosine": lambda m, o: [m.CosineAnnealingLR(o, T_max=10),
                                   m.MultiStepLR(o, [7, 20])],
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=20, power=2.0),
    "PolynomialLRdefault": lambda m, o: m.PolynomialLR(o),
    "PolynomialLRsqrt": lambda m, o: m.PolynomialLR(o, total_iters=70, power=0.5),
    "WarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=7, eta_min=0.01),
    "WarmRestartsMult": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler([m.ExponentialLR(o, gamma=0.95),
                                                        m.PolynomialLR(o, 30, 2.0)]),
    "ChainedSchedulerOpt": lambda m, o: m.ChainedScheduler(
        [m.MultiStepLR(o, [3, 9], gamma=0.5), m.CosineAnnealingWarmRestarts(o, 5, 2)],
        optimizer=o),
}


@pytest.mark.parametrize("name", CASES)
def test_lr_sequence_matches_torch(name):
    make = CASES[name]
    _compare(lambda o: make(els, o), lambda o: make(torch.optim.lr_scheduler, o),
             opt_name="SGD", momentum=0.9)


def test_one_cycle_cycles_adam_beta1():
    make = CASES["OneCycleLR"]
    e_opt, t_opt = _compare(lambda o: make(els, o), lambda o: make(torch.optim.lr_scheduler, o),
                            opt_name="Adam")
    e_b = [b for g in e_opt.param_groups for b in g["betas"]]
    t_b = [b for g in t_opt.param_groups for b in g["betas"]]
    assert e_b == pytest.approx(t_b, rel=1e-12)


def test_one_cycle_momentum_sequence():
    def run(mod, opt):
        s = mod.OneCycleLR(opt, max_lr=1.0, total_steps=30)
        out = []
        for _ in range(29):
            opt.step()
            s.step()
            out += [g["momentum"] for g in opt.param_groups]
        return out
    e_opt, t_opt = _pair("SGD", momentum=0.9)
    assert run(els, e_opt) == pytest.approx(run(torch.optim.lr_scheduler, t_opt), rel=1e-12)


def test_one_cycle_errors():
    e_opt, _ = _pair("SGD", momentum=0.9)
    s = els.OneCycleLR(e_opt, max_lr=1.0, total_steps=3)
    for _ in range(2):
        e_opt.step()
        s.step()
    e_opt.step()
    with pytest.raises(ValueError, match="Tried to step 4 times"):
        s.step()
        s.step()
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        els.OneCycleLR(e_opt, max_lr=1.0)
    with pytest.raises(ValueError, match="anneal_strategy must be one of"):
        els.OneCycleLR(e_opt, max_lr=1.0, total_steps=5, anneal_strategy="exp")
    with pytest.raises(ValueError, match="optimizer must support momentum"):
        els.OneCycleLR(eoptim.Adagrad([ember.zeros(1, requires_grad=True)]), 1.0,
                       total_steps=5)


def test_sequential_lr_matches_torch():
    def make(m, o):
        return m.SequentialLR(o, [m.LinearLR(o, start_factor=0.1, total_iters=5),
                                  m.ExponentialLR(o, gamma=0.9),
                                  m.CosineAnnealingLR(o, T_max=8)], milestones=[6, 20])
    _compare(lambda o: make(els, o), lambda o: make(torch.optim.lr_scheduler, o), steps=50)


def test_reduce_lr_on_plateau_matches_torch():
    losses = [1.0, 0.9, 0.9, 0.95, 0.91, 0.92, 0.93, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6] * 4
    for kw in ({"patience": 2}, {"patience": 1, "cooldown": 2, "factor": 0.5},
               {"mode": "max", "patience": 2, "threshold_mode": "abs", "threshold": 0.05},
               {"patience": 0, "min_lr": [0.02, 0.05]}):
        _compare(lambda o: els.ReduceLROnPlateau(o, **kw),
                 lambda o: torch.optim.lr_scheduler.ReduceLROnPlateau(o, **kw),
                 steps=len(losses), metric=lambda i: losses[i])


def test_initial_lr_and_base_lrs():
    e_opt, _ = _pair()
    s = els.StepLR(e_opt, 3)
    assert [g["initial_lr"] for g in e_opt.param_groups] == [0.1, 0.2]
    assert s.base_lrs == [0.1, 0.2] and s.last_epoch == 0 and s.get_last_lr() == [0.1, 0.2]
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified"):
        els.StepLR(_pair()[0], 3, last_epoch=5)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        els.StepLR(object(), 3)


def test_state_dict_round_trip():
    e_opt, _ = _pair()
    s = els.CosineAnnealingLR(e_opt, T_max=10)
    for _ in range(4):
        e_opt.step()
        s.step()
    sd = s.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 4
    e_opt2, _ = _pair()
    s2 = els.CosineAnnealingLR(e_opt2, T_max=10)
    s2.load_state_dict(sd)
    for g, lr in zip(e_opt2.param_groups, s.get_last_lr()):
        g["lr"] = lr
    for _ in range(5):
        for o, sch in ((e_opt, s), (e_opt2, s2)):
            o.step()
            sch.step()
    assert s.get_last_lr() == s2.get_last_lr()


def test_lambda_state_dict_keeps_callable_objects_state():
    class Factor:
        def __init__(self):
            self.k = 0.5

        def __call__(self, epoch):
            return self.k ** epoch

    e_opt, _ = _pair(groups=1)
    f = Factor()
    s = els.LambdaLR(e_opt, f)
    f.k = 0.25
    sd = s.state_dict()
    assert sd["lr_lambdas"] == [{"k": 0.25}]
    g = Factor()
    s2 = els.LambdaLR(_pair(groups=1)[0], g)
    s2.load_state_dict(sd)
    assert g.k == 0.25
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
        els.LambdaLR(e_opt, [f, f])


def test_warns_when_scheduler_steps_before_optimizer():
    e_opt, _ = _pair()
    s = els.StepLR(e_opt, 3)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before"):
        s.step()
    e_opt2, _ = _pair()
    s2 = els.StepLR(e_opt2, 3)
    e_opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s2.step()


def test_tensor_lr_is_filled_in_place():
    p = ember.zeros(2, requires_grad=True)
    lr = ember.tensor(0.1)
    opt = eoptim.Adam([p], lr=lr)
    s = els.ExponentialLR(opt, gamma=0.5)
    opt.step()
    s.step()
    assert opt.param_groups[0]["lr"] is lr
    assert math.isclose(lr.item(), 0.05, rel_tol=1e-6)
    last = s.get_last_lr()[0]
    assert isinstance(last, ember.Tensor) and last is not lr


def test_linear_lr_errors():
    e_opt, _ = _pair()
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        els.LinearLR(e_opt, start_factor=0)
    with pytest.raises(ValueError, match="Ending multiplicative factor"):
        els.LinearLR(e_opt, end_factor=1.5)


@pytest.mark.parametrize("T_mult", [1, 2, 3])
def test_warm_restarts_fractional_epochs_match_torch(T_mult):
    """step(epoch) with fractional epochs (the per-batch form), jumping back and forth."""
    epochs = [i / 4 for i in range(0, 120)] + [0.0, 50.5, 3.0, 13.99, 14.0, 2.5]

    def run(mod, lib):
        e_opt, t_opt = _pair()
        opt = e_opt if mod is els else t_opt
        s = mod.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=T_mult, eta_min=0.001)
        out = []
        for ep in epochs:
            opt.step()
            s.step(ep)
            out += _lrs(opt) + s.get_last_lr() + [s.last_epoch, s.T_i, s.T_cur]
        return out
    assert run(els, ember) == pytest.approx(run(torch.optim.lr_scheduler, torch), rel=1e-12)


def test_warm_restarts_errors():
    e_opt, _ = _pair()
    for kw, msg in (({"T_0": 0}, "Expected positive integer T_0, but got 0"),
                    ({"T_0": 2.0}, "Expected positive integer T_0"),
                    ({"T_0": 2, "T_mult": 0}, "Expected integer T_mult >= 1, but got 0"),
                    ({"T_0": 2, "eta_min": "x"}, "Expected float or int eta_min")):
        with pytest.raises(ValueError, match=msg):
            els.CosineAnnealingWarmRestarts(e_opt, **kw)
    s = els.CosineAnnealingWarmRestarts(e_opt, 2)
    with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
        s.step(-1)


def test_chained_scheduler_errors_and_last_lr():
    e_opt, _ = _pair()
    other, _ = _pair()
    with pytest.raises(ValueError, match="expects at least one scheduler to be chained"):
        els.ChainedScheduler([])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        els.ChainedScheduler([els.ReduceLROnPlateau(e_opt)])
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same"):
        els.ChainedScheduler([els.StepLR(e_opt, 2), els.StepLR(other, 2)])
    with pytest.raises(TypeError, match="should have `optimizer` as its attribute"):
        els.ChainedScheduler([els.StepLR(e_opt, 2), object()])
    s = els.ChainedScheduler([els.StepLR(e_opt, 2), els.ExponentialLR(e_opt, 0.5)])
    assert s.optimizer is e_opt and s.get_last_lr() == [0.1, 0.2]


@pytest.mark.parametrize("name", ["MultiStepLR", "ExponentialLR", "PolynomialLR",
                                  "CosineAnnealingWarmRestarts", "SequentialLR",
                                  "ChainedScheduler", "ReduceLROnPlateau"])
def test_state_dict_resumes_like_torch(name):
    """state_dict() after a few steps, loaded into a fresh scheduler, continues the same lr
    sequence as the original (and as torch's); the saved public keys are torch's."""
    def make(m, o):
        if name == "SequentialLR":
            return m.SequentialLR(o, [m.ExponentialLR(o, 0.9), m.PolynomialLR(o, 6)], [4])
        if name == "ChainedScheduler":
            return m.ChainedScheduler([m.ExponentialLR(o, 0.9), m.MultiStepLR(o, [2, 7])])
        if name == "ReduceLROnPlateau":
            return m.ReduceLROnPlateau(o, patience=1)
        return m.__dict__[name](o, *{"MultiStepLR": ([3, 5, 5], 0.5), "ExponentialLR": (0.9,),
                                     "PolynomialLR": (8, 1.5),
                                     "CosineAnnealingWarmRestarts": (3, 2, 0.01)}[name])

    def step(s, i):
        s.step(1.0 / (i + 1) if i % 3 else 5.0) if name == "ReduceLROnPlateau" else s.step()

    results = {}
    for m, lib in ((els, ember), (torch.optim.lr_scheduler, torch)):
        opt = _pair()[0 if lib is ember else 1]
        s = make(m, opt)
        for i in range(5):
            opt.step()
            step(s, i)
        sd = s.state_dict()
        opt2 = _pair()[0 if lib is ember else 1]
        s2 = make(m, opt2)
        s2.load_state_dict(sd)
        for g, lr in zip(opt2.param_groups, s.get_last_lr()):
            g["lr"] = lr
        seq = []
        for i in range(5, 15):
            for o, sch in ((opt, s), (opt2, s2)):
                o.step()
                step(sch, i)
            assert sch.get_last_lr() == s.get_last_lr()
            seq += s.get_last_lr()
        # the public keys match; private bookkeeping differs (torch's get_lr warning flag)
        results[lib] = (seq, {k for k in sd if not k.startswith("_")} | {"_last_lr" in sd})
    assert results[ember][0] == pytest.approx(results[torch][0], rel=1e-12)
    assert results[ember][1] == results[torch][1]


def test_one_cycle_state_dict_crosses_libraries():
    """A OneCycleLR state saved by PyTorch resumes in ember, and the reverse."""
    def make(L):
        o = L.optim.SGD([L.nn.Parameter(L.ones(2))], lr=0.1, momentum=0.9)
        return o, L.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=10,
                                                  three_phase=True)
    (eo, es), (to, ts) = make(ember), make(torch)
    for _ in range(3):
        eo.step(), es.step(), to.step(), ts.step()
    (eo2, es2), (to2, ts2) = make(ember), make(torch)
    es2.load_state_dict(ts.state_dict())
    ts2.load_state_dict(es.state_dict())
    for _ in range(4):
        eo2.step(), es2.step(), to2.step(), ts2.step()
    assert es2.get_last_lr() == pytest.approx(ts2.get_last_lr())
