"""Every common nn layer and loss on the GPU gives the CPU's outputs and gradients (same
weights, same inputs): the composites written once in the core run on any device, and the
fused CUDA kernels agree with the CPU's."""
import copy

import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest

import ember


def _inputs(shape, seed=0, kind="float"):
    rng = np.random.default_rng(seed)
    if kind == "long":
        return ember.tensor(rng.integers(0, shape[-1], shape[:-1]))
    return ember.tensor(rng.standard_normal(shape).astype(np.float32))


MODULES = {
    "linear": (lambda: nn.Linear(6, 5), [(4, 6)]),
    "bilinear": (lambda: nn.Bilinear(3, 4, 2), [(5, 3), (5, 4)]),
    "conv1d": (lambda: nn.Conv1d(3, 4, 3, padding=1, stride=2), [(2, 3, 9)]),
    "conv2d": (lambda: nn.Conv2d(3, 4, 3, padding=1, groups=1, dilation=2), [(2, 3, 8, 7)]),
    "conv2d_groups": (lambda: nn.Conv2d(4, 6, 3, groups=2, padding="same"), [(2, 4, 6, 6)]),
    "conv3d": (lambda: nn.Conv3d(2, 3, 2), [(1, 2, 4, 4, 4)]),
    "conv_transpose2d": (lambda: nn.ConvTranspose2d(3, 2, 3, stride=2), [(2, 3, 4, 4)]),
    "maxpool2d": (lambda: nn.MaxPool2d(3, stride=2, padding=1), [(2, 3, 7, 7)]),
    "avgpool2d": (lambda: nn.AvgPool2d(2, ceil_mode=True), [(2, 3, 5, 5)]),
    "adaptive_avg": (lambda: nn.AdaptiveAvgPool2d((2, 3)), [(2, 3, 5, 7)]),
    "adaptive_max": (lambda: nn.AdaptiveMaxPool1d(3), [(2, 3, 8)]),
    "maxpool3d": (lambda: nn.MaxPool3d(2), [(1, 2, 4, 4, 4)]),
    "batchnorm1d": (lambda: nn.BatchNorm1d(5), [(8, 5)]),
    "batchnorm2d": (lambda: nn.BatchNorm2d(3), [(4, 3, 5, 5)]),
    "layernorm": (lambda: nn.LayerNorm(7), [(3, 4, 7)]),
    "groupnorm": (lambda: nn.GroupNorm(2, 4), [(3, 4, 5)]),
    "instancenorm": (lambda: nn.InstanceNorm2d(3, affine=True), [(2, 3, 4, 4)]),
    "rmsnorm": (lambda: nn.RMSNorm(6), [(3, 6)]),
    "embedding": (lambda: nn.Embedding(10, 4, padding_idx=0), [((5, 10), "long")]),
    "embedding_bag": (lambda: nn.EmbeddingBag(10, 4, mode="mean"), [((3, 4, 10), "long")]),
    "rnn": (lambda: nn.RNN(4, 5, num_layers=2, batch_first=True), [(3, 6, 4)]),
    "lstm": (lambda: nn.LSTM(4, 5, bidirectional=True), [(6, 3, 4)]),
    "gru": (lambda: nn.GRU(4, 5), [(6, 3, 4)]),
    "mha": (lambda: nn.MultiheadAttention(8, 2, batch_first=True), [(2, 5, 8)] * 3),
    "transformer_layer": (lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                              batch_first=True), [(2, 5, 8)]),
    "activations": (lambda: nn.Sequential(nn.GELU(), nn.SiLU(), nn.Mish(), nn.ELU(),
                                          nn.Softplus(), nn.Hardswish(), nn.LeakyReLU(0.1),
                                          nn.PReLU()), [(4, 6)]),
    "pixel_shuffle": (lambda: nn.PixelShuffle(2), [(1, 8, 3, 3)]),
    "upsample": (lambda: nn.Upsample(scale_factor=2, mode="bilinear"), [(1, 2, 3, 3)]),
}


def _run(module, args, device):
    m = copy.deepcopy(module).to(device)
    xs = [a.detach().clone().to(device).requires_grad_(a.is_floating_point()) for a in args]
    out = m(*xs)
    out = out[0] if isinstance(out, tuple) else out
    (out.float() * out.float().detach().cos()).sum().backward()
    grads = [x.grad for x in xs if x.is_floating_point()] + \
        [p.grad for p in m.parameters() if p.grad is not None]
    return out, grads


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_matches_the_cpu(name):
    make, shapes = MODULES[name]
    ember.manual_seed(0)
    module = make()
    args = [_inputs(s[0], i, s[1]) if isinstance(s[0], tuple) else _inputs(s, i)
            for i, s in enumerate(shapes)]
    out_c, grads_c = _run(module, args, "cpu")
    out_g, grads_g = _run(module, args, "cuda")
    assert out_g.device.type == "cuda" and out_g.shape == out_c.shape
    np.testing.assert_allclose(out_g.detach().cpu().numpy(), out_c.detach().numpy(),
                               rtol=1e-4, atol=1e-4)
    assert len(grads_g) == len(grads_c)
    for gg, gc in zip(grads_g, grads_c):
        assert gg.device.type == "cuda"
        np.testing.assert_allclose(gg.cpu().numpy(), gc.numpy(), rtol=1e-3, atol=1e-4)


LOSSES = {
    "cross_entropy": lambda x, t, w: F.cross_entropy(x, t, weight=w, label_smoothing=0.1),
    "cross_entropy_ignore": lambda x, t, w: F.cross_entropy(x, t, ignore_index=2),
    "nll": lambda x, t, w: F.nll_loss(F.log_softmax(x, 1), t, weight=w),
    "mse": lambda x, t, w: F.mse_loss(x, x.detach().roll(1, 0)),
    "l1": lambda x, t, w: F.l1_loss(x, x.detach() * 0.5),
    "smooth_l1": lambda x, t, w: F.smooth_l1_loss(x, x.detach().flip(0)),
    "huber": lambda x, t, w: F.huber_loss(x, x.detach().flip(1)),
    "bce_logits": lambda x, t, w: F.binary_cross_entropy_with_logits(x, (x.detach() > 0).float()),
    "bce": lambda x, t, w: F.binary_cross_entropy(x.sigmoid(), (x.detach() > 0).float()),
    "kl_div": lambda x, t, w: F.kl_div(F.log_softmax(x, 1), F.softmax(x.detach().flip(0), 1),
                                       reduction="batchmean"),
    "multi_margin": lambda x, t, w: F.multi_margin_loss(x, t),
    "cosine_embedding": lambda x, t, w: F.cosine_embedding_loss(
        x, x.detach().flip(0), (t % 2) * 2 - 1),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_matches_the_cpu(name):
    x = _inputs((6, 5), 1)
    t = ember.tensor(np.random.default_rng(2).integers(0, 5, 6))
    w = ember.tensor(np.linspace(0.5, 2, 5).astype(np.float32))
    res = {}
    for dev in ("cpu", "cuda"):
        xd = x.detach().clone().to(dev).requires_grad_(True)
        loss = LOSSES[name](xd, t.to(dev), w.to(dev))
        loss.backward()
        res[dev] = (loss.item(), xd.grad.cpu().numpy())
    assert res["cuda"][0] == pytest.approx(res["cpu"][0], rel=1e-4, abs=1e-5)
    np.testing.assert_allclose(res["cuda"][1], res["cpu"][1], rtol=1e-3, atol=1e-5)


def test_optimizers_step_the_same_on_both_devices():
    for make in (lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
                 lambda p: ember.optim.Adam(p, lr=0.01, amsgrad=True),
                 lambda p: ember.optim.Adam(p, lr=0.01, weight_decay=0.1, maximize=True),
                 lambda p: ember.optim.AdamW(p, lr=0.01, weight_decay=0.1),
                 lambda p: ember.optim.AdamW(p, lr=0.01, betas=(0.3, 0.9), amsgrad=True),
                 lambda p: ember.optim.RMSprop(p, lr=0.01, centered=True),
                 lambda p: ember.optim.Adagrad(p, lr=0.1)):
        res = {}
        for dev in ("cpu", "cuda"):
            ember.manual_seed(0)
            m = nn.Linear(4, 3).to(dev)
            opt = make(m.parameters())
            x = _inputs((8, 4), 3).to(dev)
            for _ in range(5):
                opt.zero_grad()
                m(x).pow(2).mean().backward()
                opt.step()
            res[dev] = [p.detach().cpu().numpy() for p in m.parameters()]
        for a, b in zip(res["cpu"], res["cuda"]):
            np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def test_state_dict_round_trip_through_the_gpu(tmp_path):
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).cuda()
    m(ember.randn(5, 3, device="cuda"))
    path = tmp_path / "m.pt"
    ember.save(m.state_dict(), path)
    sd = ember.load(path)
    assert all(v.device.type == "cuda" for v in sd.values())
    cpu_sd = ember.load(path, map_location="cpu")
    assert all(v.device.type == "cpu" for v in cpu_sd.values())
    m2 = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    m2.load_state_dict(cpu_sd)
    for (k, a), b in zip(m.state_dict().items(), m2.state_dict().values()):
        np.testing.assert_array_equal(a.cpu().numpy(), b.numpy(), err_msg=k)


def test_adam_runs_one_fused_kernel_per_step():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).cuda()
    opt = ember.optim.AdamW(model.parameters(), lr=1e-2)
    x = ember.randn(32, 8, device="cuda")
    for step in range(2):
        opt.zero_grad()
        model(x).square().mean().backward()
        with ember.cuda.profile_kernels() as prof:
            opt.step()
        kernels = [(n, c) for n, c, _ in prof.summary() if n != "memset"]   # state zeros
        assert kernels == [("optim.float32:adam_step", 1)], kernels
    assert all(float(s["step"]) == 2 for s in opt.state.values())
