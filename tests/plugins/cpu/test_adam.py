"""ember-cpu's fused Adam/AdamW step (_optim_steps.pyx, abi.h's `adam` entry): the same bits as the
optimizer's per-tensor ops over every option, at 1 and 2 threads, and PyTorch's values."""
import ember.optim.adam as adam_module
import numpy as np
import pytest
import torch

import ember

VARIANTS = {
    "adam": dict(),
    "adam_decay": dict(weight_decay=0.1),
    "adamw": dict(weight_decay=0.1, decoupled=True),
    "amsgrad": dict(amsgrad=True, weight_decay=0.01),
    "maximize": dict(maximize=True),
    "beta1_low": dict(betas=(0.3, 0.99)),           # torch.lerp's other branch
}
SIZES = [(7,), (3, 5), (40_000,)]                   # the last one is cut among threads


def _run(variant, dtype, fused, threads, steps=3):
    opts = dict(VARIANTS[variant])
    cls = ember.optim.AdamW if opts.pop("decoupled", False) else ember.optim.Adam
    rng = np.random.default_rng(0)
    params = [ember.nn.Parameter(ember.tensor(rng.standard_normal(s).astype(dtype)))
              for s in SIZES]
    grads = [[rng.standard_normal(s).astype(dtype) for s in SIZES] for _ in range(steps)]
    opt = cls(params, lr=0.05, eps=1e-3, **opts)
    saved = ember.get_num_threads()
    ember.set_num_threads(threads)
    try:
        with pytest.MonkeyPatch.context() as mp:
            if not fused:
                mp.setattr(adam_module, "_fused_adam", lambda *a, **k: False)
            for gs in grads:
                for p, g in zip(params, gs):
                    p.grad = ember.tensor(g)
                opt.step()
    finally:
        ember.set_num_threads(saved)
    return [p.detach().numpy().copy() for p in params], grads, opt


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_fused_step_has_the_per_tensor_bits(variant, dtype):
    per_tensor, _, _ = _run(variant, dtype, fused=False, threads=1)
    for threads in (1, 2):
        fused, _, _ = _run(variant, dtype, fused=True, threads=threads)
        for a, b in zip(fused, per_tensor):
            assert a.tobytes() == b.tobytes(), (variant, dtype, threads)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_fused_step_matches_torch(variant):
    got, grads, _ = _run(variant, "float32", fused=True, threads=2)
    opts = dict(VARIANTS[variant])
    cls = torch.optim.AdamW if opts.pop("decoupled", False) else torch.optim.Adam
    rng = np.random.default_rng(0)
    params = [torch.nn.Parameter(torch.tensor(rng.standard_normal(s).astype("float32")))
              for s in SIZES]
    opt = cls(params, lr=0.05, eps=1e-3, foreach=False, **opts)
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = torch.tensor(g)
        opt.step()
    for a, p in zip(got, params):
        np.testing.assert_allclose(a, p.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_fused_step_runs_and_other_dtypes_fall_back():
    """The optimizer takes the fused entry on the cpu; bfloat16 parameters (not a dtype the
    kernel takes) run the per-tensor ops, with the same results as without the entry."""
    calls = []
    real = adam_module._fused_adam

    def spy(*args, **kwargs):
        done = real(*args, **kwargs)
        calls.append(done)
        return done
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(adam_module, "_fused_adam", spy)
        p = ember.nn.Parameter(ember.ones(4))
        p.grad = ember.ones(4)
        ember.optim.Adam([p]).step()
        q = ember.nn.Parameter(ember.ones(4, dtype=ember.bfloat16))
        q.grad = ember.ones(4, dtype=ember.bfloat16)
        ember.optim.Adam([q], lr=0.1).step()
    assert calls == [True, False]
    np.testing.assert_allclose(q.detach().float().numpy(), 0.9, rtol=1e-2)
