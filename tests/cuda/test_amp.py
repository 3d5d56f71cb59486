"""Mixed precision on the GPU: autocast with CUDA's op lists (float16 by default) and
GradScaler scaling for real, against PyTorch on the GPU."""
import ember.nn as nn
import numpy as np

import ember


def test_autocast_follows_cudas_op_lists(oracle):
    torch = oracle.torch
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 16)).astype(np.float32)
    ea, ta = ember.tensor(a, device="cuda"), torch.tensor(a, device=oracle.device)
    ew, tw = ea[:4] * 0.1, ta[:4] * 0.1
    with ember.autocast("cuda"), torch.autocast("cuda"):
        pairs = [(ea @ ea.t(), ta @ ta.t()),                                  # lower
                 (nn.functional.linear(ea, ew), torch.nn.functional.linear(ta, tw)),
                 ((ea @ ea.t()).exp(), (ta @ ta.t()).exp()),                  # fp32
                 (ember.softmax(ea @ ea.t(), -1), torch.softmax(ta @ ta.t(), -1)),
                 (nn.functional.layer_norm(ea.half(), (16,)),
                  torch.nn.functional.layer_norm(ta.half(), (16,))),
                 (ea + ea, ta + ta),                                          # fall through
                 (ember.cat([ea.half(), ea]), torch.cat([ta.half(), ta]))]    # promote
        for e, t in pairs:
            assert e.dtype.name == str(t.dtype).replace("torch.", ""), (e.dtype, t.dtype)
            oracle.assert_matches(e, t, rtol=2e-2, atol=2e-2)
    assert (ea @ ea.t()).dtype == ember.float32                               # off again
    with ember.autocast("cuda", dtype=ember.bfloat16):
        assert (ea @ ea.t()).dtype == ember.bfloat16


def test_grad_scaler_trains_in_float16():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).cuda()
    opt = ember.optim.SGD(model.parameters(), lr=0.3)
    scaler = ember.amp.GradScaler("cuda", init_scale=2.0 ** 14, growth_interval=5)
    assert scaler.is_enabled()
    x = ember.randn(256, 32, device="cuda")
    y = (x[:, :4] * 2).argmax(1)
    losses = []
    for _ in range(60):
        with ember.autocast("cuda"):
            out = model(x)
            assert out.dtype == ember.float16
            loss = nn.functional.cross_entropy(out, y)
        assert loss.dtype == ember.float32
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses[::10]
    assert scaler.get_scale() > 2.0 ** 14                      # grew after clean steps
    # an overflow skips the step and backs the scale off
    before = [p.detach().clone() for p in model.parameters()]
    scale = scaler.get_scale()
    with ember.autocast("cuda"):
        loss = model(x * 1e30).float().sum()
    opt.zero_grad()
    scaler.scale(loss).backward()
    assert scaler.step(opt) is None
    scaler.update()
    assert scaler.get_scale() == scale * 0.5
    for b, p in zip(before, model.parameters()):
        assert ember.equal(b, p)
