"""ember-cuda's code generator for ember.compile, where no GPU runs it: the kernels of
graphs captured on the CPU (the IR is device-neutral) become CUDA C that nvcc accepts for
sm_90, with the eager kernels' math and a block reduction per row.  tests/cuda runs the
generated kernels on a GPU against eager."""
import dataclasses
import os

import ember.nn.functional as F
import pytest

import ember

pytest.importorskip("ember_cuda", reason="ember-cuda is not installed")
from ember_cuda import _modules  # noqa: E402
from ember_cuda.codegen import CudaKernelCodegen, block_threads  # noqa: E402

from ember._inductor.ir import Arg, Kernel, Store  # noqa: E402

_g = ember.Generator().manual_seed(0)


def _r(*shape, dtype=ember.float32, grad=False):
    return ember.randn(*shape, generator=_g, dtype=dtype).requires_grad_(grad)


# graphs whose kernels cover the IR: flat and row kernels, every reduction kind, integer
# and bool values, float64, strided loads, a training graph's backward
GRAPHS = {
    "chain": (lambda x: (x.sin() + x.cos() * 2).exp().tanh() + F.gelu(x), [_r(64, 33)]),
    "broadcast_strided": (lambda x, b: (x + b).relu().sigmoid() * 2, [_r(40, 30).t(), _r(40)]),
    "softmax_layer_norm": (lambda x, w: (F.softmax(x * 2, -1), F.log_softmax(x + 1, -1),
                                         F.layer_norm(x.relu(), (9,), w)), [_r(4, 9), _r(9)]),
    "reductions": (lambda x: (x.sum(), x.amax(-1), x.amin(0), x.mean(1, keepdim=True),
                              x.var(-1)), [_r(6, 7)]),
    "integers": (lambda x, y: (x * 3 - y, x.amax(-1), x.amin(-1), x.sum(-1), (x > y) | (x < 0),
                               ember.maximum(x, y), x.abs()),
                 [(_r(5, 6) * 10).int(), (_r(5, 6) * 10).int()]),
    "float64_where": (lambda x: ember.where(x > 0, x.log1p().atan(), x.pow(2) / 3).sum(-1),
                      [_r(3, 8, dtype=ember.float64)]),
    "casts_and_masks": (lambda x: ((x > 0).float() * x.double().exp().float(),
                                   x.masked_fill(x < 0, float("-inf")).amax(-1)), [_r(4, 5)]),
    "training": (lambda x, w: F.layer_norm(F.gelu(x * w), (16,)).sum(),
                 [_r(8, 16), _r(16, grad=True)]),
}


def _kernels(fn, inputs):
    cf = ember.compile(fn)
    out = cf(*inputs)
    entry = cf._ember_compiled.entries[0]
    calls = [entry.forward.compiled] if entry.joint is None else \
        [entry.joint.fw.compiled, entry.joint.bw.compiled]
    if entry.joint is not None:
        out.backward()
    return [k for c in calls for k in c.kernels]


@pytest.fixture(scope="module")
def captured():
    """{graph name: its kernels}, captured on the CPU."""
    return {name: _kernels(fn, inputs) for name, (fn, inputs) in GRAPHS.items()}


def test_every_kernel_is_supported_and_rendered(captured):
    cg = CudaKernelCodegen()
    for name, kernels in captured.items():
        assert kernels, name
        assert all(cg.supports(k) for k in kernels), name
        src = cg.source(kernels)
        for k in kernels:
            assert "void __launch_bounds__(" in src and f" {k.name}(" in src
    src = cg.source(captured["chain"])
    # the eager kernels' math, by op code
    assert "f_unary(U_SIN" in src and "f_unary(U_GELU" in src and "f_binary(B_ADD" in src
    rows = cg.source(captured["softmax_layer_norm"])
    assert "block_reduce(" in rows and "cg_max<float>" in rows and "cg_sum<" in rows
    ints = cg.source(captured["integers"])
    assert "INT32_MIN" in ints and "INT32_MAX" in ints          # int32 max/min start there


def test_unsupported_ops_run_op_by_op():
    """An op scalar_ops.cuh has no integer form for (true division stays float in PyTorch,
    so the IR never asks; a hand-made kernel does) makes supports() False: the backend then
    runs the graph op by op instead of failing."""
    cg = CudaKernelCodegen()
    value = ("op", "div", "int64", ("load", 0, ("var", "j"), "int64"), ("const", 2, "int64"))
    k = Kernel("k1", (), (8,), [Arg(0, "int64"), Arg(1, "int64", True)],
               [], [Store(1, ("var", "j"), value, "inner")])
    assert not cg.supports(k)
    half = Kernel("k2", (), (8,), [Arg(0, "float16"), Arg(1, "float16", True)], [],
                  [Store(1, ("var", "j"), ("load", 0, ("var", "j"), "float16"), "inner")])
    assert not cg.supports(half)


def test_short_rows_are_register_tiles():
    """A softmax row of 1024 is read from memory once and its exp computed once: each
    thread keeps its 4 elements in registers between the row's three loops; a row of 5000
    is too long for a tile and its loops read it again."""
    cg = CudaKernelCodegen()
    tile = cg.source(_kernels(lambda x: F.softmax(x * 2, -1), [_r(64, 1024)]))
    body = tile[tile.index('extern "C"'):]
    assert body.count("a0[") == 1 and body.count("U_EXP") == 1
    assert "keep_" in body and "for (int t = 0; t < 4; t++)" in body
    assert "__launch_bounds__(256)" in body
    wide = cg.source(_kernels(lambda x: F.softmax(x * 2, -1), [_r(200, 5000)]))
    body = wide[wide.index('extern "C"'):]
    assert "keep_" not in body and body.count("a0[") == 3
    # 384 elements: two a thread over 192 threads (not 256 threads, half idle the 2nd time)
    ln = cg.source(_kernels(lambda x: F.layer_norm(F.gelu(x), (384,)), [_r(8, 384)]))
    assert "__launch_bounds__(192)" in ln and ln.count("U_GELU, ") == 1


def test_block_threads_are_whole_warps():
    assert [block_threads(n) for n in (1, 31, 33, 200, 256, 10**6)] == [32, 32, 64, 224, 256,
                                                                         256]


@pytest.mark.skipif(_modules.nvcc_path() is None, reason="nvcc is not installed")
def test_nvcc_compiles_the_generated_module(captured, tmp_path, monkeypatch):
    """Every kernel above in one module (renamed apart), through nvcc for sm_90, into the
    inductor cache (a second build finds it there)."""
    from ember.backends import kernel_cache
    monkeypatch.setenv("EMBER_INDUCTOR_CACHE_DIR", str(tmp_path))
    cg = CudaKernelCodegen()
    kernels = [dataclasses.replace(k, name=f"{name}_{i}_{k.name}")   # a training graph's
               for name, ks in captured.items() for i, k in enumerate(ks)]  # two k5s
    before = dict(kernel_cache.stats)
    path = kernel_cache.build(cg.source(kernels), cg.command("sm_90"), suffix=".cu",
                              output=".cubin")
    assert path.endswith(".cubin") and os.path.getsize(path) > 0
    with open(path, "rb") as f:
        image = f.read()
    assert image[:4] == b"\x7fELF"
    for k in kernels:
        assert k.name.encode() in image
    assert kernel_cache.build(cg.source(kernels), cg.command("sm_90"), suffix=".cu",
                              output=".cubin") == path
    assert kernel_cache.stats["built"] == before["built"] + 1
    assert kernel_cache.stats["cached"] == before["cached"] + 1
