"""ember.optim against torch.optim: 100 steps of every option combination on a random
problem (the gradient depends on the parameters, so errors would feed back), in float32
and float64; plus the Optimizer base's param-group, state_dict, hook and error behaviour."""
import copy
import itertools
import pickle

import ember.optim as eoptim
import numpy as np
import pytest
import torch

import ember

SHAPES = [(5, 3), (3,), (4, 1, 2)]
DTYPES = [("float32", 1e-6), ("float64", 1e-12)]


def _grad(x, step):
    """A gradient that depends on the parameter (weakly, so neither minimizing nor
    maximizing diverges and amplifies rounding) plus a drifting bounded term."""
    return (0.2 * np.sin(x) + np.cos(0.37 * step + np.arange(x.size).reshape(x.shape))
            ).astype(x.dtype)


def _run(name, kwargs, dtype, steps=100, lr_tensor=False, seed=0):
    """Step ember's and torch's optimizer `name` side by side; return both param lists."""
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    e_params = [ember.tensor(a.copy(), requires_grad=True) for a in init]
    t_params = [torch.tensor(a.copy(), requires_grad=True) for a in init]
    e_kw, t_kw = dict(kwargs), dict(kwargs)
    if lr_tensor:
        e_kw["lr"] = ember.tensor(kwargs.get("lr", 1e-3))
        t_kw["lr"] = torch.tensor(kwargs.get("lr", 1e-3))
    e_opt = getattr(eoptim, name)(e_params, **e_kw)
    t_opt = getattr(torch.optim, name)(t_params, **t_kw)
    for step in range(steps):
        for ep, tp in zip(e_params, t_params):
            ep.grad = ember.tensor(_grad(ep.detach().numpy(), step))
            tp.grad = torch.tensor(_grad(tp.detach().numpy(), step))
        e_opt.step()
        t_opt.step()
    return e_params, t_params, e_opt, t_opt


def _assert_match(name, kwargs, dtype, tol, **run_kw):
    e_params, t_params, e_opt, t_opt = _run(name, kwargs, dtype, **run_kw)
    for ep, tp in zip(e_params, t_params):
        assert ep.dtype == getattr(ember, dtype)
        np.testing.assert_allclose(ep.detach().numpy(), tp.detach().numpy(), rtol=tol,
                                   atol=tol, err_msg=f"{name} {kwargs}")
    # the state carries the same entries, and the same values
    e_sd, t_sd = e_opt.state_dict(), t_opt.state_dict()
    assert e_sd["state"].keys() == t_sd["state"].keys()
    for i, t_state in t_sd["state"].items():
        assert e_sd["state"][i].keys() == t_state.keys()
        for key, tv in t_state.items():
            np.testing.assert_allclose(e_sd["state"][i][key].numpy(), tv.numpy(),
                                       rtol=tol * 10, atol=tol)
    t_groups = [{k: v for k, v in g.items() if k != "lr"} for g in t_sd["param_groups"]]
    e_groups = [{k: v for k, v in g.items() if k != "lr"} for g in e_sd["param_groups"]]
    assert e_groups == t_groups


def _combos(**options):
    keys = list(options)
    return [dict(zip(keys, vals)) for vals in itertools.product(*options.values())]


SGD_CASES = [c for c in _combos(lr=[0.05], momentum=[0, 0.9], dampening=[0, 0.3],
                                nesterov=[False, True], weight_decay=[0, 0.1],
                                maximize=[False, True])
             if not c["nesterov"] or (c["momentum"] > 0 and c["dampening"] == 0)]
ADAM_CASES = _combos(lr=[0.01], betas=[(0.9, 0.999), (0.3, 0.9)], weight_decay=[0, 0.1],
                     amsgrad=[False, True], maximize=[False, True])
RMSPROP_CASES = _combos(lr=[0.01], alpha=[0.99, 0.4], weight_decay=[0, 0.1], momentum=[0, 0.5],
                        centered=[False, True], maximize=[False, True])
ADAGRAD_CASES = _combos(lr=[0.05], lr_decay=[0, 0.01], weight_decay=[0, 0.1],
                        initial_accumulator_value=[0, 0.5], maximize=[False, True])
CASES = ([("SGD", c) for c in SGD_CASES] + [("Adam", c) for c in ADAM_CASES]
         + [("AdamW", c) for c in ADAM_CASES] + [("RMSprop", c) for c in RMSPROP_CASES]
         + [("Adagrad", c) for c in ADAGRAD_CASES])
ADADELTA_CASES = _combos(lr=[1.0, 0.5], rho=[0.9, 0.5], weight_decay=[0, 0.1],
                         maximize=[False, True])
ADAMAX_CASES = _combos(lr=[0.01], betas=[(0.9, 0.999), (0.3, 0.9)], weight_decay=[0, 0.1],
                       maximize=[False, True])
NADAM_CASES = _combos(lr=[0.01], betas=[(0.9, 0.999), (0.5, 0.9)], weight_decay=[0, 0.1],
                      momentum_decay=[4e-3, 0.1], decoupled_weight_decay=[False, True],
                      maximize=[False, True])
RADAM_CASES = _combos(lr=[0.01], betas=[(0.9, 0.999), (0.5, 0.9)], weight_decay=[0, 0.1],
                      decoupled_weight_decay=[False, True], maximize=[False, True])
CASES += ([("Adadelta", c) for c in ADADELTA_CASES] + [("Adamax", c) for c in ADAMAX_CASES]
          + [("NAdam", c) for c in NADAM_CASES] + [("RAdam", c) for c in RADAM_CASES])


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("name,kwargs", CASES, ids=lambda v: str(v) if isinstance(v, dict) else v)
def test_matches_torch_over_100_steps(name, kwargs, dtype, tol):
    if kwargs.get("centered") and kwargs["alpha"] < 0.5 and dtype == "float32":
        # a short average makes square_avg - grad_avg**2 cancel; the 1-ulp differences of
        # torch's own sqrt/fma come back ~20x larger
        tol = 1e-5
    _assert_match(name, kwargs, dtype, tol)


@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.05, "momentum": 0.9}),
                                         ("Adam", {"lr": 0.01}), ("AdamW", {"lr": 0.01}),
                                         ("RMSprop", {"lr": 0.01}), ("Adagrad", {"lr": 0.05}),
                                         ("Adadelta", {"lr": 0.5}), ("Adamax", {"lr": 0.01}),
                                         ("NAdam", {"lr": 0.01, "weight_decay": 0.1,
                                                    "decoupled_weight_decay": True}),
                                         ("RAdam", {"lr": 0.01, "weight_decay": 0.1,
                                                    "decoupled_weight_decay": True})])
@pytest.mark.parametrize("dtype,tol", DTYPES)
def test_lr_as_tensor(name, kwargs, dtype, tol):
    _assert_match(name, kwargs, dtype, tol, lr_tensor=True)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta",
                                  "Adamax", "NAdam", "RAdam", "LBFGS"])
def test_defaults_match_torch(name):
    p, tp = ember.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True)
    e = getattr(eoptim, name)([p]).defaults
    t = getattr(torch.optim, name)([tp]).defaults
    assert e == t


def test_step_is_a_tensor_and_params_without_grad_are_skipped():
    a, b = ember.ones(3, requires_grad=True), ember.ones(2, requires_grad=True)
    opt = eoptim.Adam([a, b], lr=0.1)
    a.grad = ember.ones(3)
    opt.step()
    assert isinstance(opt.state[a]["step"], ember.Tensor)
    assert opt.state[a]["step"].item() == 1.0 and opt.state[a]["step"].dtype == ember.float32
    assert b not in opt.state and b.tolist() == [1.0, 1.0]
    assert a.tolist() != [1.0, 1.0, 1.0]


class _Momentum(eoptim.Optimizer):
    """An optimizer written against the base's walk: only its state and its update."""

    def __init__(self, params, lr=0.1, weight_decay=0, maximize=False,
                 decoupled_weight_decay=False):
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, maximize=maximize,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _init_state(self, p, group):
        return {"step": ember.tensor(0.0), "buf": ember.zeros_like(p)}

    def _update(self, p, grad, state, group):
        state["buf"].mul_(0.5).add_(grad)
        p.add_(state["buf"], alpha=-group["lr"])


@pytest.mark.parametrize("maximize,decoupled", [(False, False), (True, False), (False, True)])
def test_base_walk_gives_update_the_decayed_signed_grad(maximize, decoupled):
    a, b = ember.tensor([1.0, 2.0], requires_grad=True), ember.ones(2, requires_grad=True)
    opt = _Momentum([a, b], lr=0.1, weight_decay=0.5, maximize=maximize,
                    decoupled_weight_decay=decoupled)
    a.grad = ember.tensor([1.0, -1.0])
    opt.step()
    opt.step()
    sign, x = (-1.0 if maximize else 1.0), np.array([1.0, 2.0])
    buf = np.zeros(2)
    for _ in range(2):
        grad = sign * np.array([1.0, -1.0])
        if decoupled:
            x = x * (1 - 0.1 * 0.5)
        else:
            grad = grad + 0.5 * x
        buf = 0.5 * buf + grad
        x = x - 0.1 * buf
    assert a.tolist() == pytest.approx(x.tolist())
    assert opt.state[a]["step"].item() == 2.0 and b not in opt.state
    assert b.tolist() == [1.0, 1.0]


def test_step_runs_without_grad_and_returns_closure_loss():
    w = ember.tensor([1.0, -2.0], requires_grad=True)
    opt = eoptim.SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == pytest.approx(5.0)
    assert w.grad_fn is None and w.is_leaf
    assert w.tolist() == pytest.approx([0.8, -1.6])


def test_zero_grad():
    w = ember.ones(3, requires_grad=True)
    opt = eoptim.SGD([w], lr=0.1)
    w.grad = ember.ones(3)
    g = w.grad
    opt.zero_grad(set_to_none=False)
    assert w.grad is g and w.grad.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None


def test_param_groups_and_options():
    a, b = ember.ones(2, requires_grad=True), ember.ones(3, requires_grad=True)
    opt = eoptim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["params"] == [b] and opt.param_groups[1]["momentum"] == 0.9
    c = ember.ones(1, requires_grad=True)
    opt.add_param_group({"params": [c], "lr": 0.01})
    assert len(opt.param_groups) == 3 and opt.param_groups[2]["momentum"] == 0.9
    named = eoptim.SGD([("w", a), ("b", b)], lr=0.1)
    assert named.param_groups[0]["param_names"] == ["w", "b"]
    assert named.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]
    assert "Parameter Group 0" in repr(opt) and "lr: 0.5" in repr(opt)


@pytest.mark.parametrize("make,err,msg", [
    (lambda O, T, p: O.SGD([], lr=0.1), ValueError, "optimizer got an empty parameter list"),
    (lambda O, T, p: O.SGD(p, lr=0.1), TypeError, "should be an iterable of Tensors or dicts"),
    (lambda O, T, p: O.SGD([{"params": [p]}, {"params": [p]}]), ValueError,
     "some parameters appear in more than one parameter group"),
    (lambda O, T, p: O.SGD([p * 2]), ValueError, "can't optimize a non-leaf Tensor"),
    (lambda O, T, p: O.SGD([1.0]), TypeError, "optimizer can only optimize Tensors"),
    (lambda O, T, p: O.SGD([{"params": {p}}]), TypeError, "ordered collections"),
    (lambda O, T, p: O.SGD([p], lr=-1), ValueError, "Invalid learning rate: -1"),
    (lambda O, T, p: O.SGD([p], momentum=-0.5), ValueError, "Invalid momentum value: -0.5"),
    (lambda O, T, p: O.SGD([p], weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
    (lambda O, T, p: O.SGD([p], momentum=0.9, dampening=0.1, nesterov=True), ValueError,
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda O, T, p: O.Adam([p], lr=-1), ValueError, "Invalid learning rate: -1"),
    (lambda O, T, p: O.Adam([p], eps=-1), ValueError, "Invalid epsilon value: -1"),
    (lambda O, T, p: O.Adam([p], betas=(1.0, 0.9)), ValueError,
     "Invalid beta parameter at index 0: 1.0"),
    (lambda O, T, p: O.Adam([p], betas=(0.9, -0.1)), ValueError,
     "Invalid beta parameter at index 1: -0.1"),
    (lambda O, T, p: O.AdamW([p], weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
    (lambda O, T, p: O.Adam([p], lr=T([0.1, 0.2])), ValueError,
     "Tensor lr must be 1-element"),
    (lambda O, T, p: O.Adam([p], fused=True, foreach=True), RuntimeError,
     "`fused` and `foreach` cannot be `True` together."),
    (lambda O, T, p: O.RMSprop([p], alpha=-1), ValueError, "Invalid alpha value: -1"),
    (lambda O, T, p: O.Adagrad([p], lr_decay=-1), ValueError, "Invalid lr_decay value: -1"),
    (lambda O, T, p: O.Adadelta([p], rho=1.5), ValueError, "Invalid rho value: 1.5"),
    (lambda O, T, p: O.Adadelta([p], eps=-1), ValueError, "Invalid epsilon value: -1"),
    (lambda O, T, p: O.Adamax([p], betas=(1.0, 0.9)), ValueError,
     "Invalid beta parameter at index 0: 1.0"),
    (lambda O, T, p: O.NAdam([p], momentum_decay=-1), ValueError,
     "Invalid momentum_decay value: -1"),
    (lambda O, T, p: O.NAdam([p], betas=(0.9, 1.0)), ValueError,
     "Invalid beta parameter at index 1: 1.0"),
    (lambda O, T, p: O.RAdam([p], weight_decay=-1), ValueError, "Invalid weight_decay value"),
    (lambda O, T, p: O.LBFGS([p], lr=-1), ValueError, "Invalid learning rate: -1"),
    (lambda O, T, p: O.LBFGS([{"params": [p]}, {"params": [T([1.0])]}]), ValueError,
     "LBFGS doesn't support per-parameter options (parameter groups)"),
])
def test_errors_match_torch(make, err, msg):
    """ember raises what torch raises, with torch's text."""
    for optim, tensor in ((eoptim, ember.tensor), (torch.optim, torch.tensor)):
        with pytest.raises(err) as info:
            make(optim, tensor, tensor([1.0, 2.0], requires_grad=True))
        assert msg in str(info.value), optim


def test_duplicate_params_warn():
    p = ember.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        eoptim.SGD([p, p], lr=0.1)


def _trained(opt_cls, params, steps=3, **kw):
    opt = opt_cls(params, **kw)
    for i in range(steps):
        for p in params:
            p.grad = ember.full_like(p, 0.1 * (i + 1))
        opt.step()
    return opt


def test_state_dict_structure_matches_torch():
    e = [ember.ones(2, 2, requires_grad=True), ember.ones(3, requires_grad=True)]
    t = [torch.ones(2, 2, requires_grad=True), torch.ones(3, requires_grad=True)]
    e_opt = eoptim.Adam([{"params": [e[0]]}, {"params": [e[1]], "lr": 0.1}], amsgrad=True)
    t_opt = torch.optim.Adam([{"params": [t[0]]}, {"params": [t[1]], "lr": 0.1}], amsgrad=True)
    for ps in (e, t):
        for p in ps:
            p.grad = p.detach() * 0.5
    e_opt.step()
    t_opt.step()
    e_sd, t_sd = e_opt.state_dict(), t_opt.state_dict()
    assert e_sd["param_groups"] == t_sd["param_groups"]
    assert list(e_sd["state"]) == list(t_sd["state"]) == [0, 1]
    assert list(e_sd["state"][0]) == list(t_sd["state"][0])
    assert e_sd["state"][0]["step"].dtype == ember.float32
    assert e_sd["state"][0]["step"].shape == t_sd["state"][0]["step"].shape == ()


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta",
                                  "Adamax", "NAdam", "RAdam"])
def test_load_state_dict_resumes_identically(name):
    kw = {"SGD": {"lr": 0.1, "momentum": 0.9}}.get(name, {"lr": 0.01})
    a = [ember.ones(3, requires_grad=True), ember.ones(2, requires_grad=True)]
    opt = _trained(getattr(eoptim, name), a, **kw)
    b = [p.detach().clone().requires_grad_(True) for p in a]
    opt2 = getattr(eoptim, name)(b, **kw)
    sd = opt.state_dict()
    opt2.load_state_dict(sd)
    # as in torch, the loaded state shares the tensors it can (opt's own): a resume that
    # steps both optimizers loads a copy
    opt2.load_state_dict(copy.deepcopy(sd))
    for i in range(3):
        for p, q in zip(a, b):
            p.grad = ember.full_like(p, -0.2 * i)
            q.grad = ember.full_like(q, -0.2 * i)
        opt.step()
        opt2.step()
    for p, q in zip(a, b):
        assert p.tolist() == q.tolist()
    # a deep-copied state dict: stepping opt2 did not touch opt's tensors
    key = next(iter(opt.state[a[0]]))
    assert opt.state[a[0]][key] is not opt2.state[b[0]][key]


def test_load_state_dict_casts_to_param_dtype_but_not_step():
    a = [ember.ones(3, requires_grad=True)]
    opt = _trained(eoptim.Adam, a)
    b = [ember.ones(3, dtype=ember.float64, requires_grad=True)]
    opt2 = eoptim.Adam(b)
    opt2.load_state_dict(opt.state_dict())
    st = opt2.state[b[0]]
    assert st["exp_avg"].dtype == ember.float64 and st["step"].dtype == ember.float32
    assert st["step"].item() == 3.0


def test_load_state_dict_errors():
    a = [ember.ones(3, requires_grad=True), ember.ones(2, requires_grad=True)]
    sd = _trained(eoptim.SGD, a, lr=0.1).state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        eoptim.SGD([{"params": [a[0]]}, {"params": [a[1]]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="that doesn't match the size of optimizer's group"):
        eoptim.SGD([a[0]], lr=0.1).load_state_dict(sd)


def test_load_state_dict_restores_group_options():
    a = [ember.ones(3, requires_grad=True)]
    sd = _trained(eoptim.SGD, a, lr=0.5, momentum=0.9).state_dict()
    opt = eoptim.SGD([ember.ones(3, requires_grad=True)], lr=0.1)
    opt.load_state_dict(sd)
    assert opt.param_groups[0]["lr"] == 0.5 and opt.param_groups[0]["momentum"] == 0.9


def test_step_hooks():
    p = ember.ones(2, requires_grad=True)
    opt = eoptim.SGD([p], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", o is opt)))
    opt.register_step_post_hook(lambda o, a, k: calls.append(("post", o is opt)))
    p.grad = ember.ones(2)
    opt.step()
    assert calls == [("pre", True), ("post", True)]
    h1.remove()
    opt.step()
    assert calls[-1] == ("post", True) and len(calls) == 3


def test_state_dict_hooks():
    p = ember.ones(2, requires_grad=True)
    opt = eoptim.SGD([p], lr=0.1)
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    assert opt.state_dict()["extra"] == 1
    seen = []
    opt.register_load_state_dict_post_hook(lambda o: seen.append(o))
    opt.load_state_dict(opt.state_dict())
    assert seen == [opt]


def test_optimizer_pickles():
    p = ember.ones(2, requires_grad=True)
    opt = _trained(eoptim.SGD, [p], lr=0.1, momentum=0.9)
    again = pickle.loads(pickle.dumps(opt))
    assert again.param_groups[0]["momentum"] == 0.9


def test_subclass_step_hook_runs_once():
    class MySGD(eoptim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    p = ember.ones(2, requires_grad=True)
    opt = MySGD([p], lr=0.1)
    calls = []
    opt.register_step_pre_hook(lambda *a: calls.append(1))
    p.grad = ember.ones(2)
    opt.step()
    assert calls == [1]


def test_import_ember_loads_neither_optim_nor_data():
    import subprocess
    import sys
    code = ("import sys, ember; print(any(m.startswith(('ember.optim', 'ember.utils.data')) "
            "for m in sys.modules)); ember.optim.SGD; import ember.utils; ember.utils.data.DataLoader")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
