"""The "inductor" backend: fused C kernels, their results, the disk cache."""
import math
import subprocess
import sys

import ember.nn.functional as F
import pytest
from ember.backends import kernel_cache

import ember


def _compiled(fn, *args, **kw):
    cf = ember.compile(fn, **kw)
    out = cf(*args)
    entry = cf._ember_compiled.entries[0]
    call = entry.forward.compiled
    return out, call


def _close(a, b, tol=1e-6):
    assert a.shape == b.shape and a.dtype == b.dtype
    d = (a.double() - b.double()).abs() / (b.double().abs() + 1)
    assert d.max().item() <= tol, d.max().item()


def test_elementwise_chain_is_one_kernel():
    x = ember.randn(100_000)
    out, call = _compiled(lambda x: ember.sin(x) + ember.cos(x) * 2, x)
    assert len(call.kernels) == 1 and call.externs == []
    _close(out, ember.sin(x) + ember.cos(x) * 2)
    src = ember.backends.kernel_codegen("cpu").source(call.kernels)
    assert "#pragma omp parallel for" in src and "ember_fast_sinf" in src


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.int32])
def test_sign_fuses_with_pytorch_values(dtype):
    # EMBER_UNARY_SIGN in the generated loop: NaN and -0.0 give 0, integers keep their dtype
    x = (ember.randn(1000) * 5).to(dtype)
    if dtype.is_floating_point:
        x[:3] = ember.tensor([float("nan"), -0.0, 0.0])
    out, call = _compiled(lambda x: x.sign() * 3 + x, x)
    assert len(call.kernels) == 1 and call.externs == []
    assert ember.equal(out.nan_to_num(7.0), (x.sign() * 3 + x).nan_to_num(7.0))
    assert ember.equal(out[:3].signbit(), (x.sign() * 3 + x)[:3].signbit())


def test_a_reshape_of_a_written_value_is_a_view_not_a_copy():
    """An extern (matmul) reading a reshape of a value a kernel writes anyway takes a view
    of that buffer: the elementwise kernel and the sum's, no third kernel copying y."""
    x, w = ember.randn(4, 8, 16), ember.randn(16, 5)

    def f(x, w):
        y = x.exp() * 2
        return y.reshape(32, 16) @ w, y.sum()
    (out, s), call = _compiled(f, x, w)
    assert len(call.kernels) == 2 and "matmul" in call.externs and "view" in call.source
    y = x.exp() * 2
    _close(out, y.reshape(32, 16) @ w, 1e-5)
    _close(s, y.sum(), 1e-5)


def test_a_transpose_of_a_reshape_of_a_written_value_is_a_view_not_a_copy():
    """A weight gradient's operand: the transpose of a reshape of a value a kernel writes
    anyway goes to matmul as strides of that buffer (it was a transposing copy kernel)."""
    x, g = ember.randn(4, 8, 16), ember.randn(32, 5)

    def f(x, g):
        y = x.exp() * 2
        return y.reshape(32, 16).t() @ g, y.sum()
    (out, s), call = _compiled(f, x, g)
    # one kernel reads x and writes y; the sum's kernel reads y (no transposed copy of y
    # computed from x beside it)
    assert len(call.kernels) == 2 and "matmul" in call.externs, call.source
    assert call.source.count("in_x.data_ptr()") == 1 and "view" in call.source, call.source
    y = x.exp() * 2
    _close(out, y.reshape(32, 16).t() @ g, 1e-5)
    _close(s, y.sum(), 1e-5)


@pytest.mark.parametrize("name", ["clone", "contiguous", "to", "float"])
def test_copies_and_casts_fuse(name):
    """clone, contiguous, .to(dtype) and .float() of a computed value are loads in the
    fused kernel, not op calls after it."""
    x = ember.randn(64, 32)
    copy = {"clone": lambda y: y.clone(), "contiguous": lambda y: y.t().contiguous(),
            "to": lambda y: y.to(ember.float64), "float": lambda y: y.double().float()}[name]

    def f(x):
        return copy(x.sin() + 1) * 3
    out, call = _compiled(f, x)
    assert len(call.kernels) == 1 and call.externs == [], call.source
    _close(out, copy(x.sin() + 1) * 3)


def test_trig_outside_the_fast_range_uses_libm():
    x = ember.tensor([0.5, -3.0, 1e5, 3e6, -1e30, math.inf, -math.inf, math.nan,
                      123456.789, 1e-30] * 500)
    out, _ = _compiled(lambda x: ember.sin(x) * ember.cos(x), x)
    ref = ember.sin(x) * ember.cos(x)
    assert ((out - ref).abs() <= 1e-6).logical_or(out.isnan() & ref.isnan()).all()


@pytest.mark.parametrize("fn, n_kernels", [
    (lambda x: F.softmax(x + 1, -1), 1),
    (lambda x: F.log_softmax(x * 2, -1) + 1, 1),
    (lambda x: F.layer_norm(x * 2, (x.shape[-1],)) * 3, 1),
    (lambda x: (x - x.mean(-1, keepdim=True)) / x.std(-1, keepdim=True), 2),
])
def test_reductions_fuse_with_their_consumers(fn, n_kernels):
    x = ember.randn(64, 50)
    with ember.no_grad():
        out, call = _compiled(fn, x)
    assert len(call.kernels) <= n_kernels, call.source
    _close(out, fn(x), 1e-5)


def test_a_layer_norm_writes_what_it_saves_in_its_own_kernel():
    """A training graph's layer norm saves its input (a residual sum) and its statistics:
    one kernel computes the row sums once and writes all four (the statistics and the
    input took two more kernels, the mean summed twice); an element of a tuple nobody
    reads from memory is not written."""
    a, b = ember.randn(64, 32), ember.randn(32)

    def f(a, b):
        x = a + b
        y, mean, rstd = ember.native_layer_norm(x, (32,), None, None, 1e-5)
        return y * 2, x, mean, rstd
    with ember.no_grad():
        out, call = _compiled(f, a, b)
    assert len(call.kernels) == 1 and call.externs == []
    assert call.source.count("_empty(") == 4, call.source
    for o, r in zip(out, f(a, b)):
        assert ember.equal(o, r)


def test_a_layer_norm_read_by_a_matmul_first_writes_its_statistics_too():
    """As in a training graph: the matmul needs the layer norm's output before anything
    asks for the saved input and statistics; the one kernel writing the output writes
    them too (1 / std, read once, took a kernel of its own summing each row again)."""
    a, b, w = ember.randn(64, 32), ember.randn(32), ember.randn(32, 8)

    def f(a, b, w):
        x = a + b
        y, mean, rstd = ember.native_layer_norm(x, (32,), None, None, 1e-5)
        return y @ w, x, mean, rstd
    with ember.no_grad():
        out, call = _compiled(f, a, b, w)
    assert len(call.kernels) == 1 and call.externs == ["matmul"], call.source
    for o, r in zip(out, f(a, b, w)):
        _close(o, r, 1e-5)


@pytest.mark.parametrize("shape, kept", [((64, 384), True), ((2, 20000), False)])
def test_a_rows_costly_values_are_kept_between_its_loops(shape, kept):
    """layer_norm(gelu(x)): the mean's loop computes gelu once and keeps it in a per-row
    array that the variance's and the output's loops read back (they computed it again,
    2.9x eager's time); a cheap value (x * 2 of a softmax) is computed again instead.  Rows
    longer than the stack arrays allow compute everything again, as before."""
    x = ember.randn(*shape)
    with ember.no_grad():
        out, call = _compiled(lambda x: (F.layer_norm(F.gelu(x), (shape[-1],)),
                                         F.softmax(x * 2, -1)), x)
    _close(out[0], F.layer_norm(F.gelu(x), (shape[-1],)), 1e-5)
    _close(out[1], F.softmax(x * 2, -1), 1e-5)
    src = ember.backends.kernel_codegen("cpu").source(call.kernels)
    assert ("keep_" in src) == kept
    if kept:
        assert src.count("ember_gelu_f(") == 1, src         # gelu once a row element
        assert src.count("ember_fast_expf(") == 1, src      # the softmax's exp too


def test_symbolic_graphs_are_fused_per_concrete_shape(monkeypatch):
    """A graph with symbolic sizes (dynamic=True, or recaptured after a size changed) used to
    run op by op for good: now each new shape runs op by op once, recording its sizes, and
    later calls of that shape run fused kernels (up to LIMIT shapes)."""
    from ember._inductor import specialize

    def f(x, w):
        return F.layer_norm(F.gelu(x * w), (16,)).sum(-1)
    cf = ember.compile(f, dynamic=True)
    w = ember.randn(16)
    for n in (4, 4, 9, 9, 4):
        x = ember.randn(n, 16)
        _close(cf(x, w), f(x, w), 1e-5)
    graph = cf._ember_compiled.entries[0].forward.compiled
    assert isinstance(graph, specialize.SpecializingGraph)
    assert sorted(next(a[0][0] for a in k if isinstance(a, tuple))
                  for k in graph.compiled) == [4, 9]
    assert all(c.kernels for c in graph.compiled.values())
    # past the limit a new shape runs op by op, still eager's values
    monkeypatch.setattr(specialize, "LIMIT", 2)
    x = ember.randn(5, 16)
    _close(cf(x, w), f(x, w), 1e-5)
    assert len(graph.compiled) == 2


def test_a_recapture_on_fake_tensors_uses_the_real_strides():
    """After a size change the recapture runs on fake tensors, whose strides are their own
    (contiguous) and which the guards do not check: compiled for those strides, the kernel
    read a transposed input as if contiguous and returned wrong values, silently.  Such
    graphs are now compiled per real shape and strides."""
    f = lambda x: x.exp() + 1            # noqa: E731
    cf = ember.compile(f)
    a = ember.randn(4, 3)
    cf(a)
    for x in (a.t(), a.t(), ember.randn(5, 6), ember.randn(6, 5).t(), ember.randn(6, 5).t()):
        _close(cf(x), f(x))


def test_a_module_recaptured_after_a_batch_size_change_stays_fused():
    """Inference with a changing batch size: the second shape recaptures the module with a
    symbolic batch (automatic dynamic shapes), and that graph is fused per batch size."""
    from ember._inductor import specialize
    model = ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.GELU(), ember.nn.LayerNorm(16))
    cm = ember.compile(model)
    with ember.no_grad():
        for n in (4, 5, 5, 6, 6):
            x = ember.randn(n, 8)
            _close(cm(x), model(x), 1e-5)
    graph = cm._compiled.entries[0].forward.compiled
    assert isinstance(graph, specialize.SpecializingGraph) and len(graph.compiled) == 2
    assert all(c.kernels for c in graph.compiled.values())


def test_broadcasting_strides_and_dtypes():
    x, b = ember.randn(40, 30).t(), ember.randn(40)
    out, call = _compiled(lambda x, b: (x + b).relu() * 2, x, b)
    _close(out, (x + b).relu() * 2)
    assert len(call.kernels) == 1
    k = call.kernels[0]
    assert k.outer == (30,) and k.inner == (40,)          # rows of the last dim
    for dt in (ember.float64, ember.int64, ember.int32):
        y = (ember.randn(7, 5) * 10).to(dt)
        out, _ = _compiled(lambda y: (y * 3 - 1, (y > 2) | (y < -2)), y)
        _close(out[0], y * 3 - 1)
        assert (out[1] == ((y > 2) | (y < -2))).all()


def test_training_graphs_fuse_forward_and_backward():
    w = ember.randn(16, requires_grad=True)
    x = ember.randn(32, 16)
    cf = ember.compile(lambda x: F.layer_norm(F.gelu(x * w), (16,)).sum())
    cf(x).backward()
    g = w.grad.clone()
    w.grad = None
    F.layer_norm(F.gelu(x * w), (16,)).sum().backward()
    _close(g, w.grad, 1e-4)
    joint = cf._ember_compiled.entries[0].joint
    fw, bw = joint.fw.compiled, joint.bw.compiled
    assert fw.kernels and bw.kernels


def test_a_backward_graph_keeps_no_allocation_it_only_writes():
    """The engine's zeros for the gradients of layer norm's mean and rstd (which its formula
    ignores) were captured as empty + fill_ pairs nothing read; dead code elimination kept
    them (writes are impure) and every compiled backward allocated and filled them."""
    w = ember.randn(16, requires_grad=True)
    cf = ember.compile(lambda x: F.layer_norm(x * w, (16,)).sum(), backend="aot_eager")
    cf(ember.randn(8, 16)).backward()
    bgm = cf._ember_compiled.entries[0].graphs[1]
    names = [getattr(n.target, "__name__", "") for n in bgm.graph.nodes]
    assert "fill_" not in names and "empty" not in names, bgm.code
    g = w.grad.clone()
    w.grad = None
    x = ember.randn(8, 16)
    cf(x).backward()
    g2 = w.grad.clone()
    w.grad = None
    F.layer_norm(x * w, (16,)).sum().backward()
    _close(g2, w.grad, 1e-5)
    assert g.shape == g2.shape


def test_options_and_profiler_see_the_ops(capsys):
    x = ember.randn(8)
    out, call = _compiled(lambda x: x.exp() + 1, x, options={"fuse": False})
    assert not hasattr(call, "kernels")            # ran op by op
    ember.compile(lambda x: x.exp() * 3, options={"debug": True})(x)
    assert "void k" in capsys.readouterr().out
    # under the profiler the compiled code runs (as PyTorch's does): one event for the
    # region and one per fused kernel, not a replay of the captured ops
    cf = ember.compile(lambda x: x.sin() + 2)
    cf(x)                       # the capture: eager's values (the kernel's sin may differ
    want = cf(x)                # by an ulp); then the compiled code's
    with ember.profiler.profile() as prof:
        got = cf(x)
    names = {e.key for e in prof.key_averages()}
    assert "CompiledFunction" in names
    assert any(n.startswith("ember_fused_k") for n in names)
    assert not {"ember::sin", "ember::add"} & names
    assert ember.equal(got, want)
    # another mode key (autocast) still sees each op
    with ember.autocast("cpu", dtype=ember.bfloat16):
        assert ember.allclose(cf(x), want)


def test_disk_cache_second_process_compiles_nothing(_kernel_cache):
    code = ("import ember; from ember.backends import kernel_cache; "
            "f = ember.compile(lambda x: (x * 1.2345).tanh() - 0.678); "
            "x = ember.randn(1000); r = f(x); "
            "assert (r - ((x * 1.2345).tanh() - 0.678)).abs().max() < 1e-6; "
            "print(kernel_cache.stats['built'], kernel_cache.stats['cached'])")
    env = dict(__import__("os").environ, EMBER_INDUCTOR_CACHE_DIR=_kernel_cache)
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, check=True).stdout.split()
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, check=True).stdout.split()
    assert first == ["1", "0"] and second == ["0", "1"]
    assert kernel_cache.cache_dir() == _kernel_cache


def test_a_real_tensor_capture_does_not_load_sympy():
    """The warm first call stays fast: fusing a graph captured on real tensors must not
    import the fake-tensor machinery (which loads sympy, ~0.25 s)."""
    import subprocess
    import sys
    code = ("import sys, ember\n"
            "f = ember.compile(lambda x: x.sin() + x.cos() * 2)\n"
            "f(ember.randn(100))\n"
            "print('sympy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "False", out.stderr
