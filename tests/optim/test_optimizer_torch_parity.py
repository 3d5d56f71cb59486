"""ember.optim.Optimizer behaviour against torch: complex parameters (updated through
view_as_real), old checkpoints (AdamW's decoupled decay, number-valued ``step``),
load_state_dict sharing, step hooks (global ones too), argument checks, capturable on the
CPU, the abstract base step, repr and SparseAdam."""
import copy
import math

import pytest
import torch

import ember

_OPTIMIZERS = {
    "Adam": {"lr": 0.1}, "Adam-amsgrad": {"lr": 0.1, "amsgrad": True, "weight_decay": 0.1},
    "AdamW": {"lr": 0.1}, "AdamW-amsgrad": {"lr": 0.1, "amsgrad": True},
    "Adagrad": {"lr": 0.1, "initial_accumulator_value": 0.1}, "Adadelta": {},
    "Adamax": {"lr": 0.1}, "NAdam": {"lr": 0.1}, "RAdam": {"lr": 0.1},
    "RMSprop": {"lr": 0.01}, "RMSprop-centered": {"lr": 0.01, "centered": True,
                                                  "momentum": 0.9},
    "Rprop": {"lr": 0.1}, "SGD": {"lr": 0.1, "momentum": 0.9, "nesterov": True},
    "ASGD": {"lr": 0.1, "t0": 2}, "Adam-maximize": {"lr": 0.1, "maximize": True},
}


def _make(lib, key, params):
    return getattr(lib.optim, key.split("-")[0])(params, **_OPTIMIZERS[key])


def _close(a, b, rtol=1e-5):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert math.isclose(x, y, rel_tol=rtol, abs_tol=1e-6), (a, b)


def _complex_run(lib, key):
    p = lib.tensor([1 + 2j, 3 - 1j, -0.5 + 0.25j], requires_grad=True)
    q = lib.tensor([1.0, -2.0], requires_grad=True)
    opt = _make(lib, key, [p, q])
    for i in range(8):
        loss = (p * p.conj()).real.sum() * 0.3 + (p.real * (i - 3)).sum() + (q ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    state = {k: (lib.view_as_real(v) if v.is_complex() else v).flatten().tolist()
             for k, v in opt.state[p].items() if isinstance(v, lib.Tensor)}
    return lib.view_as_real(p.detach()).flatten().tolist(), q.detach().tolist(), state


@pytest.mark.parametrize("key", sorted(_OPTIMIZERS))
def test_complex_params_update_as_torch(key):
    # torch treats real and imaginary parts as independent reals (view_as_real)
    e_p, e_q, e_state = _complex_run(ember, key)
    t_p, t_q, t_state = _complex_run(torch, key)
    _close(e_p, t_p)
    _close(e_q, t_q)
    assert sorted(e_state) == sorted(t_state)
    for k in t_state:
        _close(e_state[k], t_state[k])


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_complex_params(line_search_fn):
    def run(lib):
        p = lib.tensor([1 + 2j, 3 - 1j], dtype=lib.complex128, requires_grad=True)
        q = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([p, q], lr=0.5, max_iter=10, line_search_fn=line_search_fn)

        def closure():
            opt.zero_grad()
            loss = (((p - (0.3 + 0.7j)).abs() ** 2).sum() + (p.real * q.sum()).sum()
                    + (q ** 4).sum())
            loss.backward()
            return loss
        for _ in range(3):
            opt.step(closure)
        return lib.view_as_real(p.detach()).flatten().tolist() + q.tolist()
    _close(run(ember), run(torch), rtol=1e-9)


def test_adamw_old_checkpoint_keeps_decoupled_decay():
    out = []
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
        opt = lib.optim.AdamW([p], lr=0.1, weight_decay=0.5)
        sd = opt.state_dict()
        del sd["param_groups"][0]["decoupled_weight_decay"]     # a pre-2.x AdamW layout
        opt.load_state_dict(sd)
        p.grad = lib.tensor([0.1, 0.1])
        opt.step()
        out.append((opt.param_groups[0]["decoupled_weight_decay"], p.detach().tolist()))
    assert out[0][0] is out[1][0] is True
    _close(out[0][1], out[1][1])


_LEGACY = ["Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "RMSprop",
           "Rprop", "ASGD"]


@pytest.mark.parametrize("name", _LEGACY)
def test_number_valued_step_in_old_checkpoint(name):
    # torch < 1.12 saved ``step`` (and NAdam's mu_product, ASGD's eta and mu) as numbers
    out = []
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.tensor([1.0, -2.0, 0.5]))
        opt = getattr(lib.optim, name)([p], lr=0.1)
        p.grad = lib.tensor([0.3, -0.2, 1.0])
        opt.step()
        sd = opt.state_dict()
        st = sd["state"][0]
        for key in ("step", "mu_product", "eta", "mu"):
            if key in st:
                st[key] = int(st[key]) if key == "step" else float(st[key])
        opt.load_state_dict(sd)
        opt.step()
        st = opt.state[p]
        out.append((p.detach().tolist(),
                    {k: (str(v.dtype).split(".")[1], v.shape == ()) for k, v in st.items()
                     if k in ("step", "mu_product", "eta", "mu")}))
    _close(out[0][0], out[1][0])
    assert out[0][1] == out[1][1]


@pytest.mark.parametrize("name", ["Adam", "SGD", "RMSprop"])
def test_load_state_dict_shares_tensors_like_torch(name):
    found = []
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.zeros(2))
        kw = {"lr": 0.1, "momentum": 0.9} if name == "SGD" else {"lr": 0.1}
        opt = getattr(lib.optim, name)([p], **kw)
        p.grad = lib.ones(2)
        opt.step()
        q = lib.nn.Parameter(lib.zeros(2))
        opt2 = getattr(lib.optim, name)([q], **kw)
        opt2.load_state_dict(opt.state_dict())
        found.append({k: opt2.state[q][k] is v for k, v in opt.state[p].items()})
        # a float64 parameter gets cast copies, but ``step`` keeps its tensor
        r = lib.nn.Parameter(lib.zeros(2, dtype=lib.float64))
        opt3 = getattr(lib.optim, name)([r], **kw)
        opt3.load_state_dict(opt.state_dict())
        found.append({k: opt3.state[r][k] is v for k, v in opt.state[p].items()})
    assert found[0] == found[2] and found[1] == found[3]


def test_step_hooks_get_the_optimizer_in_args():
    seen = []
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.zeros(2))
        opt = lib.optim.SGD([p], lr=0.1)
        log = []
        opt.register_step_pre_hook(lambda o, args, kw: log.append(("pre", args[0] is o, kw)))
        opt.register_step_post_hook(lambda o, args, kw: log.append(("post", len(args), kw)))
        p.grad = lib.ones(2)
        opt.step()
        opt.step(closure=None)
        seen.append(log)
    assert seen[0] == seen[1]


def test_step_pre_hook_may_replace_args_and_bad_return_raises():
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.zeros(2))
        opt = lib.optim.SGD([p], lr=0.1)
        opt.register_step_pre_hook(lambda o, args, kw: (args, {"closure": lambda: 7.0}))
        p.grad = lib.ones(2)
        assert opt.step() == 7.0
        opt2 = lib.optim.SGD([p], lr=0.1)
        opt2.register_step_pre_hook(lambda o, args, kw: 5)
        with pytest.raises(RuntimeError, match=r"SGD.step at .* must return None or a tuple "
                           r"of \(new_args, new_kwargs\), but got 5\."):
            opt2.step()


def test_global_step_hooks_run_around_instance_hooks():
    logs = []
    for lib in (ember, torch):
        mod = __import__(lib.__name__ + ".optim.optimizer", fromlist=["x"])
        log = []
        handles = [mod.register_optimizer_step_pre_hook(lambda o, a, k: log.append("gpre")),
                   mod.register_optimizer_step_post_hook(lambda o, a, k: log.append("gpost"))]
        try:
            p = lib.nn.Parameter(lib.zeros(2))
            opt = lib.optim.Adam([p])
            opt.register_step_pre_hook(lambda o, a, k: log.append("pre"))
            opt.register_step_post_hook(lambda o, a, k: log.append("post"))
            p.grad = lib.ones(2)
            opt.step()
        finally:
            for h in handles:
                h.remove()
        opt.step()
        logs.append(log)
        assert "register_optimizer_step_pre_hook" in mod.__all__
    assert logs[0] == logs[1] == ["gpre", "pre", "post", "gpost", "pre", "post"]


def test_base_optimizer_step_is_abstract():
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.zeros(2))
        p.grad = lib.ones(2)
        with pytest.raises(NotImplementedError):
            lib.optim.Optimizer([p], {"lr": 0.1}).step()


@pytest.mark.parametrize("name,kw", [
    ("Adam", {"lr": math.nan}), ("Adam", {"eps": math.nan}),
    ("Adam", {"weight_decay": math.nan}), ("AdamW", {"lr": math.nan}),
    ("Adagrad", {"lr": math.nan}), ("Adagrad", {"lr_decay": math.nan}),
    ("RMSprop", {"alpha": math.nan}), ("NAdam", {"momentum_decay": math.nan}),
    ("ASGD", {"lr": math.nan}), ("LBFGS", {"lr": math.nan}), ("SGD", {"lr": math.nan}),
    ("SGD", {"momentum": math.nan}),
])
def test_nan_hyperparameters(name, kw):
    outcome = []
    for lib in (ember, torch):
        try:
            getattr(lib.optim, name)([lib.nn.Parameter(lib.zeros(2))], **kw)
            outcome.append("ok")
        except ValueError as e:
            outcome.append(str(e))
    assert outcome[0] == outcome[1]


@pytest.mark.parametrize("kw", [
    {"lr": "T", "foreach": True}, {"lr": "T", "foreach": True, "capturable": True},
    {"betas": "T", "foreach": True}, {"betas": "T", "foreach": False},
])
def test_tensor_hyperparameters_with_foreach(kw):
    outcome = []
    for lib in (ember, torch):
        args = dict(kw)
        if args.get("lr") == "T":
            args["lr"] = lib.tensor(0.01)
        if args.get("betas") == "T":
            args["betas"] = (lib.tensor(0.9), lib.tensor(0.99))
        try:
            lib.optim.Adam([lib.nn.Parameter(lib.zeros(2))], **args)
            outcome.append("ok")
        except ValueError as e:
            outcome.append(str(e))
    assert outcome[0] == outcome[1]


@pytest.mark.parametrize("name", ["Adam", "AdamW", "Adadelta", "Adamax", "ASGD", "NAdam",
                                  "RAdam", "RMSprop", "Rprop"])
def test_capturable_refused_on_cpu(name):
    messages = []
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.zeros(2))
        opt = getattr(lib.optim, name)([p], capturable=True)
        p.grad = lib.ones(2)
        with pytest.raises(AssertionError) as info:
            opt.step()
        messages.append(str(info.value))
        assert float(opt.state[p]["step"]) == 0.0
    assert messages[0] == messages[1]


def test_repr_separates_groups_like_torch():
    texts = []
    for lib in (ember, torch):
        opt = lib.optim.SGD([{"params": [lib.nn.Parameter(lib.zeros(1))]},
                             {"params": [lib.nn.Parameter(lib.zeros(1))], "lr": 0.5}], lr=0.1)
        texts.append(repr(opt))
    assert texts[0] == texts[1]


def test_sparse_adam_exists_and_refuses_dense_gradients():
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.zeros(2))
        opt = lib.optim.SparseAdam([p])
        assert opt.step(lambda: 3.0) == 3.0          # no gradient: nothing to refuse
        p.grad = lib.ones(2)
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense "
                           "gradients, please consider Adam instead"):
            opt.step()
        for kw, msg in (({"lr": 0.0}, "Invalid learning rate: 0.0"),
                        ({"eps": 0.0}, "Invalid epsilon value: 0.0"),
                        ({"betas": (1.0, 0.5)}, "Invalid beta parameter at index 0: 1.0")):
            with pytest.raises(ValueError, match=msg):
                lib.optim.SparseAdam([p], **kw)
        c = lib.zeros(2, dtype=lib.complex64, requires_grad=True)
        with pytest.raises(ValueError, match=r"Complex params at indices \[\[0, 1\]\]"):
            lib.optim.SparseAdam([p, c])
        assert "SparseAdam" in lib.optim.__all__
        sd = copy.deepcopy(lib.optim.SparseAdam([p], lr=0.01).state_dict())
        assert sd["param_groups"][0]["lr"] == 0.01
