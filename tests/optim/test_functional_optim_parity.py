"""The functional optimizer forms (``torch.optim.adam.adam``, ``sgd.sgd``, ...) against
torch: same signatures, in-place updates of the parameters and of every state list, real
and complex parameters."""
import importlib
import math

import pytest
import torch

import ember

# module, function, state lists (name -> how each entry starts), keyword arguments
_CASES = {
    "adam": ("adam", "adam", ["zeros", "zeros", "zeros", "steps"],
             dict(amsgrad=True, beta1=0.9, beta2=0.99, lr=0.1, weight_decay=0.1, eps=1e-8,
                  maximize=False)),
    "adam-maximize": ("adam", "adam", ["zeros", "zeros", "empty", "steps"],
                      dict(amsgrad=False, beta1=0.9, beta2=0.99, lr=0.1, weight_decay=0.0,
                           eps=1e-8, maximize=True)),
    "adamw": ("adamw", "adamw", ["zeros", "zeros", "empty", "steps"],
              dict(amsgrad=False, beta1=0.9, beta2=0.99, lr=0.1, weight_decay=0.1, eps=1e-8,
                   maximize=False)),
    "sgd": ("sgd", "sgd", ["none"], dict(weight_decay=0.1, momentum=0.9, lr=0.1,
                                         dampening=0.0, nesterov=True, maximize=False)),
    "sgd-plain": ("sgd", "sgd", ["none"], dict(weight_decay=0.0, momentum=0.0, lr=0.1,
                                               dampening=0.0, nesterov=False, maximize=False)),
    "adagrad": ("adagrad", "adagrad", ["zeros", "steps"],
                dict(lr=0.1, weight_decay=0.1, lr_decay=0.01, eps=1e-10, maximize=False)),
    "adadelta": ("adadelta", "adadelta", ["zeros", "zeros", "steps"],
                 dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False)),
    "adamax": ("adamax", "adamax", ["zeros", "zeros", "steps"],
               dict(eps=1e-8, beta1=0.9, beta2=0.999, lr=0.1, weight_decay=0.0)),
    "nadam": ("nadam", "nadam", ["zeros", "zeros", "ones", "steps"],
              dict(beta1=0.9, beta2=0.999, lr=0.1, weight_decay=0.1, momentum_decay=4e-3,
                   eps=1e-8, decoupled_weight_decay=True)),
    "radam": ("radam", "radam", ["zeros", "zeros", "steps"],
              dict(beta1=0.9, beta2=0.999, lr=0.1, weight_decay=0.0, eps=1e-8)),
    "rmsprop": ("rmsprop", "rmsprop", ["zeros", "zeros", "zeros", "steps"],
                dict(lr=0.01, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.9,
                     centered=True)),
    "rmsprop-plain": ("rmsprop", "rmsprop", ["zeros", "empty", "empty", "steps"],
                      dict(lr=0.01, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
                           centered=False)),
    "rprop": ("rprop", "rprop", ["zeros", "step_sizes", "steps"],
              dict(step_size_min=1e-6, step_size_max=50, etaminus=0.5, etaplus=1.2)),
    "asgd": ("asgd", "asgd", ["zeros", "ones", "lrs", "steps"],
             dict(lambd=1e-4, lr=0.01, t0=1.0, alpha=0.75, weight_decay=0.0)),
}


def _entry(lib, how, p, kw):
    return {"zeros": lambda: lib.zeros_like(p), "none": lambda: None,
            "steps": lambda: lib.tensor(0.0), "ones": lambda: lib.ones(()),
            "lrs": lambda: lib.tensor(kw["lr"]),
            "step_sizes": lambda: lib.full_like(p, complex(0.1, 0.1) if p.is_complex()
                                                else 0.1)}[how]()


def _flat(lib, t):
    if t is None:
        return None
    return (lib.view_as_real(t) if t.is_complex() else t).flatten().tolist()


def _run(lib, case, with_complex):
    module, name, lists, kw = _CASES[case]
    fn = getattr(importlib.import_module(f"{lib.__name__}.optim.{module}"), name)
    params = [lib.tensor([1.0, -2.0, 0.5]), lib.tensor([0.25, 3.0])]
    if with_complex:
        params.append(lib.tensor([1 + 2j, -0.5 + 0.3j]))
    state = [[] if how == "empty" else [_entry(lib, how, p, kw) for p in params]
             for how in lists]
    for i in range(3):
        grads = [(p * 0.5 + (i + 1) * 0.1).detach() for p in params]
        with lib.no_grad():
            fn(params, grads, *state, **kw)
    return [_flat(lib, p) for p in params], [[_flat(lib, t) for t in s] for s in state]


def _close(a, b):
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
    elif isinstance(a, float):
        assert math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6)
    else:
        assert a == b


@pytest.mark.parametrize("with_complex", [False, True])
@pytest.mark.parametrize("case", sorted(_CASES))
def test_functional_form_matches_torch(case, with_complex):
    _close(_run(ember, case, with_complex), _run(torch, case, with_complex))


def test_functional_adafactor_matches_torch():
    def run(lib):
        fn = importlib.import_module(f"{lib.__name__}.optim._adafactor").adafactor
        params = [lib.tensor([[1.0, -2.0, 0.5], [0.3, 0.2, -0.7]]), lib.tensor([0.25, 3.0])]
        rows = [lib.zeros(2, 1), None]
        cols = [lib.zeros(1, 3), None]
        variances = [None, lib.zeros(2)]
        steps = [lib.tensor(0.0), lib.tensor(0.0)]
        for i in range(3):
            grads = [p * 0.5 + (i + 1) * 0.1 for p in params]
            fn(params, grads, rows, cols, variances, steps, d=1.0, lr=0.01, beta2_decay=-0.8,
               weight_decay=0.0, eps1=None, eps2=1e-3, maximize=False)
        return [_flat(lib, t) for t in params + rows + cols + variances + steps]
    _close(run(ember), run(torch))


def test_functional_sgd_fills_momentum_buffers_and_names_in_all():
    for lib in (ember, torch):
        mod = importlib.import_module(f"{lib.__name__}.optim.sgd")
        p = lib.tensor([1.0, 2.0])
        bufs = [None]
        mod.sgd([p], [lib.ones(2)], bufs, weight_decay=0.0, momentum=0.9, lr=0.1,
                dampening=0.0, nesterov=False, maximize=False)
        assert isinstance(bufs[0], lib.Tensor) and bufs[0].tolist() == [1.0, 1.0]
        assert "sgd" in mod.__all__
        assert "adam" in importlib.import_module(f"{lib.__name__}.optim.adam").__all__


def test_functional_refuses_number_steps_and_grad_scale():
    for lib in (ember, torch):
        adam = importlib.import_module(f"{lib.__name__}.optim.adam").adam
        p = lib.tensor([1.0])
        kw = dict(amsgrad=False, beta1=0.9, beta2=0.99, lr=0.1, weight_decay=0.0, eps=1e-8,
                  maximize=False)
        with pytest.raises(RuntimeError, match="API has changed, `state_steps` argument "
                           "must contain a list of singleton tensors"):
            adam([p], [lib.ones(1)], [lib.zeros(1)], [lib.zeros(1)], [], [0], **kw)
        with pytest.raises(AssertionError, match="Expected grad_scale and found_inf to be "
                           "None"):
            adam([p], [lib.ones(1)], [lib.zeros(1)], [lib.zeros(1)], [], [lib.tensor(0.0)],
                 grad_scale=lib.tensor(1.0), **kw)
