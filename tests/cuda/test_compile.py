"""ember.compile on "cuda": the default backend fuses through ember-cuda's code generator
(CUDA C compiled by nvcc), and compiled results and gradients equal eager ones on the GPU."""
import ember.nn as nn
import ember.nn.functional as F
import pytest

import ember


def _r(*shape, dtype=ember.float32, grad=False, scale=1.0):
    g = ember.Generator().manual_seed(sum(shape) + len(shape))
    t = ember.randn(*shape, generator=g, dtype=dtype) * scale
    return t.to("cuda").requires_grad_(grad)


def _close(a, b, tol):
    assert a.shape == b.shape and a.dtype == b.dtype and a.device == b.device
    if a.numel():
        a, b = a.detach().cpu().double(), b.detach().cpu().double()
        bad = ((a - b).abs() > tol * (b.abs() + 1)) & ~(a.isnan() & b.isnan())
        assert not bad.any().item(), f"max difference {(a - b).abs().max().item()}"


def _call(cf):
    entry = cf._ember_compiled.entries[0]
    return entry.forward.compiled if entry.joint is None else entry.joint.fw.compiled


# name -> (fn, a function making its inputs: no GPU is touched at collection)
CASES = {
    "unary_chain": (lambda x: (x.sin() + x.cos() * 2).exp().tanh(), lambda: [_r(1000, 33)]),
    "broadcast_strided": (lambda x, b: (x - b) * (x + 1) / (b.abs() + 1),
                          lambda: [_r(300, 200).t(), _r(300)]),
    "activations": (lambda x: ember.sigmoid(x) + F.gelu(x) + F.relu(x) - F.silu(x),
                    lambda: [_r(4097)]),
    "math": (lambda x: (x.clamp(-0.5, 0.5), x.erf(), x.abs().log1p(), x.floor(), x.exp2(),
                        ember.atan2(x, x + 2), (x.abs() + 0.5).pow(x), x.rsqrt().nan_to_num()),
             lambda: [_r(5000)]),
    "where_masks": (lambda x: ember.where(x > 0, x, 0.1 * x) + (x < 0.5).float(),
                    lambda: [_r(3, 777)]),
    "reductions": (lambda x: (x.sum(), x.sum(-1), x.mean(1, keepdim=True), x.amax(-1),
                              x.amin(dim=(0, 1))), lambda: [_r(64, 300)]),
    "long_rows": (lambda x: ((x * 2).sum(), (x - 1).amax(), x.abs().mean(-1)),
                  lambda: [_r(3, 200_000)]),
    "reduce_dim0": (lambda x: x.sum(0) + x.mean(0), lambda: [_r(50, 60)]),
    "nan_max": (lambda x: (x.log().amax(-1), x.log().amin(-1)), lambda: [_r(8, 100)]),
    "softmax": (lambda x: (F.softmax(x * 2, -1), F.log_softmax(x + 1, dim=-1)),
                lambda: [_r(512, 1000)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(F.gelu(x), (384,), w, b),
                   lambda: [_r(256, 384), _r(384), _r(384)]),
    # register tiles with a ragged last column, and rows too long for a tile (strided loops)
    "ragged_tile_rows": (lambda x: (F.softmax(x, -1), F.layer_norm(x.sigmoid(), (1500,))),
                         lambda: [_r(70, 1500)]),
    "wide_rows": (lambda x: (F.softmax(x * 3, -1), F.layer_norm(F.gelu(x), (5000,))),
                  lambda: [_r(200, 5000)]),
    "statistics": (lambda x: (x.var(-1), x.std(0), ember.logsumexp(x, -1), x.norm()),
                   lambda: [_r(40, 600)]),
    "integers": (lambda x, y: (x * 3 - y, x.amax(-1), x.amin(-1), x.sum(-1),
                               (x > y) | (x < 0), ember.maximum(x, y), x.abs()),
                 lambda: [_r(50, 70, scale=100).int(), _r(50, 70, scale=100).int()]),
    "int64_and_bool": (lambda x: ((x > 0).sum(-1), x.long() * 3 - 1, (x > 0) & (x < 1)),
                       lambda: [_r(40, 50)]),
    "float64": (lambda x: F.softmax(x * 1.5, -1) * x.exp(),
                lambda: [_r(30, 400, dtype=ember.float64)]),
    "casts": (lambda x: x.double().sum() + x.to(ember.float64).exp().float().sum(),
              lambda: [_r(999)]),
    "views": (lambda x: (x.t() * 2, x.reshape(60, 40).sum(-1), x[1:, ::2].cos(),
                         x.permute(1, 0).contiguous() + 1), lambda: [_r(40, 60)]),
    "extern_mix": (lambda x, w: F.linear(x.relu(), w).softmax(-1).sum(0),
                   lambda: [_r(128, 64), _r(32, 64)]),
}


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("name", list(CASES))
def test_compiled_matches_eager_on_cuda(name, backend):
    fn, make = CASES[name]
    inputs = make()
    cf = ember.compile(fn, backend=backend)
    for _ in range(2):
        out, ref = cf(*inputs), fn(*inputs)
        outs = out if isinstance(out, tuple) else (out,)
        refs = ref if isinstance(ref, tuple) else (ref,)
        for o, r in zip(outs, refs):
            _close(o, r, 1e-4)
    if backend == "inductor":
        assert _call(cf).kernels, "nothing was fused"


def test_the_kernels_are_cuda_ones():
    x = _r(100_000)
    cf = ember.compile(lambda x: ember.sin(x) + ember.cos(x) * 2)
    y = cf(x)
    call = _call(cf)
    assert len(call.kernels) == 1 and call.externs == []
    assert y.device.type == "cuda"
    src = ember.backends.kernel_codegen("cuda").source(call.kernels)
    assert "__global__" in src and "f_unary(U_SIN" in src


def test_training_graph_gradients_match_eager():
    w = _r(64, grad=True)
    b = _r(64, grad=True)
    x = _r(256, 64)

    def f(x):
        return (F.layer_norm(F.gelu(x * w), (64,), bias=b).softmax(-1) * x).sum()
    cf = ember.compile(f)
    for _ in range(2):
        cf(x).backward()
        gw, gb = w.grad.clone(), b.grad.clone()
        w.grad = b.grad = None
        f(x).backward()
        _close(gw, w.grad, 1e-4)
        _close(gb, b.grad, 1e-4)
        w.grad = b.grad = None
    joint = cf._ember_compiled.entries[0].joint
    assert joint.fw.compiled.kernels and joint.bw.compiled.kernels


def test_a_compiled_model_trains_like_the_eager_one():
    def run(compiled):
        ember.manual_seed(0)
        model = nn.Sequential(nn.Linear(32, 128), nn.GELU(), nn.LayerNorm(128),
                              nn.Linear(128, 10)).to("cuda")
        step_model = ember.compile(model) if compiled else model
        opt = ember.optim.AdamW(model.parameters(), lr=1e-2)
        x, y = _r(256, 32), (_r(256).abs() * 3).long().clamp(0, 9)
        losses = []
        for _ in range(10):
            loss = F.cross_entropy(step_model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses
    eager, compiled = run(False), run(True)
    assert compiled[-1] < compiled[0]
    for a, b in zip(eager, compiled):
        assert abs(a - b) <= 1e-3 * (abs(b) + 1), (eager, compiled)


def test_a_cpu_scalar_beside_gpu_tensors_runs_op_by_op():
    """A 0-d CPU tensor may meet GPU tensors in PyTorch; a kernel could not read it, so such
    a graph runs op by op (and still gives eager's values)."""
    x, s = _r(1000), ember.tensor(2.5)
    cf = ember.compile(lambda x, s: (x * s).exp())
    _close(cf(x, s), (x * s).exp(), 1e-5)
    assert not getattr(_call(cf), "kernels", None)


def test_under_a_stream_the_kernels_follow_it():
    x = _r(1 << 20)
    cf = ember.compile(lambda x: (x * 2).sin() + 1)
    want = cf(x)
    s = ember.cuda.Stream()
    with ember.cuda.stream(s):
        got = cf(x)
    s.synchronize()
    _close(got, want, 0)


def test_symbolic_shapes_are_fused_per_shape_on_cuda():
    """dynamic=True: the first call of each shape runs op by op, later ones through the
    CUDA kernels compiled for that shape."""
    from ember._inductor.specialize import SpecializingGraph
    w = _r(16)

    def f(x):
        return F.layer_norm(F.gelu(x * w), (16,)).sum(-1)
    cf = ember.compile(f, dynamic=True)
    for n in (4, 4, 9, 9):
        x = _r(n, 16)
        _close(cf(x), f(x), 1e-4)
    graph = _call(cf)
    assert isinstance(graph, SpecializingGraph) and len(graph.compiled) == 2
    assert all(c.kernels for c in graph.compiled.values())
