"""Everyday calls leave no reference cycles: a cycle holds its tensors until the cyclic
collector runs (a nested function calling itself is the usual cause: function -> cell ->
function), so memory that should be back after a call stays in use."""
import gc

import ember.nn as nn
import pytest

import ember
import ember.func as func

x = ember.randn(4, 3)
w = ember.randn(3, 2)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Sequential(nn.Linear(4, 1)))
opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scaler = ember.amp.GradScaler("cpu")


def _train_step():
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()


CALLS = {
    "multi_dot": lambda: ember.linalg.multi_dot([x, w, w.t(), w]),
    "grad_scaler_scale_list": lambda: scaler.scale([x.sum(), (x * 2).sum()]),
    "vmap_pytree": lambda: func.vmap(lambda d: d["a"] @ w, in_dims=({"a": 0},))({"a": x}),
    "vmap_grad": lambda: func.vmap(func.grad(lambda v: (v * v).sum()))(x),
    "grad": lambda: func.grad(lambda v: (x @ v).sin().sum())(w),
    "jacrev": lambda: func.jacrev(lambda v: x @ v)(w),
    "train_step": _train_step,
    "load_state_dict": lambda: model.load_state_dict(model.state_dict()),
}


@pytest.mark.parametrize("name", CALLS)
def test_no_reference_cycles(name):
    call = CALLS[name]
    call()                                  # lazy imports and first-call caches
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        call()
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()
