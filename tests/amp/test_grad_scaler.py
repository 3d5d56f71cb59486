"""ember.amp.GradScaler against torch.amp.GradScaler('cpu'): scaling, unscaling, skipping
the step on inf/NaN gradients, backoff and growth, state_dict round trips, misuse errors,
and the deprecated CUDA spelling without CUDA."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember


def setup(lib, **kw):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 4)).astype("float32")
    lin = lib.nn.Linear(4, 3)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(w))
        lin.bias.zero_()
    opt = lib.optim.SGD(lin.parameters(), lr=0.1)
    return lin, opt, lib.amp.GradScaler("cpu", **kw)


def train(lib, bad_steps, steps=6, **kw):
    lin, opt, scaler = setup(lib, **kw)
    x = lib.tensor(np.random.default_rng(1).standard_normal((5, 4)).astype("float32"))
    log = []
    for i in range(steps):
        opt.zero_grad()
        loss = lin(x).pow(2).mean()
        scaled = scaler.scale(loss)
        log.append(scaled.item())
        scaled.backward()
        if i in bad_steps:
            lin.weight.grad[0, 0] = math.inf if i % 2 else math.nan
        ret = scaler.step(opt)
        scaler.update()
        log.append((ret, scaler.get_scale(), scaler._get_growth_tracker(),
                    lin.weight.detach().numpy().copy()))
    return log, scaler.state_dict()


@pytest.mark.parametrize("bad", [(), (1,), (0, 3), (2, 4)])
def test_training_with_inf_and_nan_gradients_matches_torch(bad):
    le, se = train(ember, set(bad), growth_interval=2, init_scale=2.0 ** 10)
    lt, st = train(torch, set(bad), growth_interval=2, init_scale=2.0 ** 10)
    assert se == st
    for a, b in zip(le, lt):
        if isinstance(a, float):
            assert a == pytest.approx(b, rel=1e-5)
        else:
            assert a[:3] == b[:3]
            np.testing.assert_allclose(a[3], b[3], rtol=1e-5, atol=1e-6)


def test_skipped_step_leaves_parameters_unchanged():
    lin, opt, scaler = setup(ember)
    before = lin.weight.detach().clone()
    scaler.scale(lin(ember.ones(2, 4)).sum()).backward()
    lin.bias.grad[1] = math.inf
    assert scaler.step(opt) is None
    assert ember.equal(lin.weight, before)
    scaler.update()
    assert scaler.get_scale() == 2.0 ** 15


def test_unscale_then_clip_then_step():
    lin, opt, scaler = setup(ember, init_scale=8.0)
    scaler.scale(lin(ember.ones(2, 4)).sum()).backward()
    raw = lin.weight.grad.clone()
    scaler.unscale_(opt)
    ember.testing.assert_close(lin.weight.grad, raw / 8)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="after step"):
        scaler.unscale_(opt)
    scaler.update()
    with pytest.raises(RuntimeError, match="Closure"):
        scaler.step(opt, closure=lambda: 0)


def test_state_dict_round_trip_and_update_with_new_scale():
    _, _, s = setup(ember, init_scale=4.0, growth_factor=3.0, backoff_factor=0.25,
                    growth_interval=7)
    assert s.get_scale() == 4.0 and s.state_dict() == {
        "scale": 4.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 7,
        "_growth_tracker": 0}
    s2 = ember.amp.GradScaler("cpu")
    s2.load_state_dict(s.state_dict())
    assert s2.state_dict() == s.state_dict()
    s2.scale(ember.ones(1))
    s2.update(16.0)
    assert s2.get_scale() == 16.0
    s2.update(ember.tensor([2.0]))
    assert s2.get_scale() == 2.0
    with pytest.raises(RuntimeError, match="empty"):
        s2.load_state_dict({})


def test_disabled_scaler_is_a_pass_through():
    lin, opt, _ = setup(ember)
    s = ember.amp.GradScaler("cpu", enabled=False)
    loss = lin(ember.ones(1, 4)).sum()
    assert s.scale(loss) is loss and s.get_scale() == 1.0 and s.state_dict() == {}
    loss.backward()
    s.unscale_(opt)
    s.step(opt)
    s.update()
    assert not s.is_enabled()


def test_scale_of_iterables_and_bad_factors():
    s = ember.amp.GradScaler("cpu", init_scale=2.0)
    a, b = s.scale([ember.ones(2), ember.full((1,), 3.0)])
    assert a.tolist() == [2.0, 2.0] and b.tolist() == [6.0]
    assert s.scale(ember.ones(2, dtype=ember.bfloat16)).dtype == ember.bfloat16
    with pytest.raises(ValueError, match="growth factor"):
        ember.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(ValueError, match="backoff factor"):
        ember.amp.GradScaler("cpu", backoff_factor=1.0)


def test_cuda_scalers_without_cuda_disable_with_a_warning():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        import ember.cuda.amp
        old = ember.cuda.amp.GradScaler()
        new = ember.amp.GradScaler("cuda")
    assert not old.is_enabled() and not new.is_enabled()
    msgs = [(x.category, str(x.message)) for x in w]
    assert any(c is FutureWarning and "deprecated" in m for c, m in msgs)
    assert sum(c is UserWarning and "CUDA is not available" in m for c, m in msgs) == 2
