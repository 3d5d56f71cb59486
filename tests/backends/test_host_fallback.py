"""The host fallback and the kernel table's contract: a device whose plugin implements only
the memory core still runs every op (the primitives on the host through the CPU plugin,
the fused ops as the core's composites), counted, warned about once per op, and checked
against the CPU.  The devices here are the CPU plugin's own kernels cut down with
``table_subset``: their memory is host memory, so results must match the CPU's exactly."""
import subprocess
import sys
import warnings

import numpy as np
import pytest
from ember.backends import _abi
from ember.core import _device, _fallback

import ember
from ember.testing._devices import MEMORY_CORE, partial_device

pytest.importorskip("ember_cpu._kernels", reason="needs the CPU plugin")


def register(name, keep, **kw):
    return partial_device(name, keep, **kw)


@pytest.fixture(scope="module")
def memcore():
    """A device with the memory core only: every primitive falls back.  (Not the op tests'
    "memcore": this one declares everything unimplemented.)"""
    return register("hostonly", MEMORY_CORE, unimplemented=["*"])


@pytest.fixture(scope="module")
def binonly():
    """The memory core and the binary family."""
    return register("binonly", MEMORY_CORE + ("binary",))


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ember.backends.reset_host_fallbacks()
        yield


def same(e, expected):
    got = e.cpu().numpy()
    np.testing.assert_allclose(got, expected.cpu().numpy() if isinstance(expected, ember.Tensor)
                               else expected, rtol=1e-6, atol=1e-7)


def test_every_kind_of_op_runs_on_a_memory_core_device(memcore):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal(6)
    ea, eb = ember.tensor(a, device=memcore), ember.tensor(b, dtype=ember.float32, device=memcore)
    assert ea.device.type == memcore
    same(ea + eb, a + b.astype(np.float32))                     # broadcast
    same(ea.t() * 2 - 1, a.T * 2 - 1)                           # strided, host scalars
    same(ea[:, ::2].exp(), np.exp(a[:, ::2]))
    same(ea.sum(1), a.sum(1))
    same(ea.argmax(1), a.argmax(1))
    same(ea @ ea.t(), a @ a.T)
    same(ember.where(ea > 0, ea, eb), np.where(a > 0, a, b.astype(np.float32)))
    same(ea.cumsum(1), np.cumsum(a, 1))
    same(ea.cummax(1).indices, ember.tensor(a).cummax(1).indices)
    idx = ember.tensor([[0, 2], [1, 1], [5, 0], [3, 3]], device=memcore)
    same(ea.gather(1, idx), np.take_along_axis(a, idx.cpu().numpy(), 1))
    z = ember.zeros(4, 6, device=memcore).scatter_add_(1, idx, ember.ones(4, 2, device=memcore))
    same(z, ember.zeros(4, 6).scatter_add_(1, idx.cpu(), ember.ones(4, 2)))
    s = ember.tensor([0.0, 1.0, 2.0, 3.0], device=memcore)
    same(ember.searchsorted(s, ember.tensor([0.5, 2.0], device=memcore)), [1, 2])
    same(ea.softmax(1), ember.tensor(a).softmax(1))             # composite on the device
    same(ember.nn.functional.layer_norm(ea, (6,)),
         ember.nn.functional.layer_norm(ember.tensor(a), (6,)))
    same(ea.to(ember.int32), a.astype(np.int32))                 # a cast
    for dt in (ember.float16, ember.bfloat16, ember.int64, ember.bool):
        c = ember.tensor(a).to(dt)
        same((ea.to(dt) + ea.to(dt)).to(ember.float32), (c + c).float())
    empty = ember.empty(0, 3, device=memcore)
    assert (empty + 1).shape == (0, 3) and empty.sum().item() == 0.0
    counts = ember.backends.host_fallbacks(memcore)
    for key in ("binary.add[float32]", "unary.exp[float32]", "reduce.sum[float32]",
                "matmul[float32]", "where[float32]", "scan.cumsum[float32]",
                "index.gather[float32]", "index.scatter_add[float32]", "search.left[float32]",
                ):
        assert counts.get(key, 0) >= 1, (key, sorted(counts))
    assert not any(k.startswith("softmax") for k in counts)      # composites, not fallbacks


def test_random_through_the_fallback_matches_the_cpu(memcore):
    ember.manual_seed(5)
    cpu = (ember.rand(3, 4), ember.randn(5))
    ember.manual_seed(5)
    dev = (ember.rand(3, 4, device=memcore), ember.randn(5, device=memcore))
    for c, d in zip(cpu, dev):
        assert d.device.type == memcore
        same(d, c)


def test_autograd_and_training_on_a_memory_core_device(memcore):
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Linear(8, 2))
    ref = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Linear(8, 2))
    ref.load_state_dict(model.state_dict())
    model.to(memcore)
    x, y = ember.randn(16, 4), ember.randint(0, 2, (16,))
    losses = []
    for net, xs, ys in ((model, x.to(memcore), y.to(memcore)), (ref, x, y)):
        opt = ember.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        for _ in range(5):
            opt.zero_grad()
            loss = ember.nn.functional.cross_entropy(net(xs), ys)
            loss.backward()
            opt.step()
        losses.append(loss.item())
        assert next(net.parameters()).grad.device.type == xs.device.type
    assert losses[0] == pytest.approx(losses[1], rel=1e-5)


def test_a_device_kernel_runs_and_only_the_rest_falls_back(binonly):
    x = ember.tensor([1.0, 2.0], device=binonly)
    same(x * x, [1.0, 4.0])
    assert "binary.mul[float32]" not in ember.backends.host_fallbacks(binonly)
    same(x.exp(), np.exp([1.0, 2.0]))
    assert ember.backends.host_fallbacks(binonly) == {"unary.exp[float32]": 1}
    info = ember.backends.coverage(binonly)
    assert "binary" not in info["host_fallback"] and "unary" in info["host_fallback"]
    assert "softmax" in info["composite"]
    assert info["abi"] == f"{_device.ABI_VERSION}.{_device.ABI_MINOR}"


def test_warns_once_per_op_and_counts(binonly):
    x = ember.tensor([4.0, 9.0], device=binonly)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        x.sqrt()
        x.sqrt()
        x.to(ember.float64).sqrt()
    msgs = [str(m.message) for m in w if "host" in str(m.message)]
    assert len(msgs) == 2, msgs
    assert msgs[0].startswith("unary.sqrt[float32] is not implemented by device 'binonly'")
    assert "unary.sqrt[float64]" in msgs[1]
    assert ember.backends.host_fallbacks(binonly)["unary.sqrt[float32]"] == 2
    ember.backends.reset_host_fallbacks()
    assert ember.backends.host_fallbacks(binonly) == {}


def test_a_warning_raised_as_an_error_propagates(binonly):
    x = ember.tensor([0.5], device=binonly)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        with pytest.raises(UserWarning, match=r"unary\.erfinv\[float32\]"):
            x.erfinv()
    same(x.erfinv(), ember.tensor([0.5]).erfinv())     # and the device still works


def test_data_errors_come_back_through_the_fallback(memcore):
    x = ember.tensor([1.0, 2.0, 3.0], device=memcore)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x.gather(0, ember.tensor([5], device=memcore))
    with pytest.raises(RuntimeError, match="probability tensor contains"):
        ember.multinomial(ember.tensor([-1.0, 1.0], device=memcore), 1)
    same(x * 2, [2.0, 4.0, 6.0])


def test_declared_unimplemented(memcore, binonly):
    assert ember.backends.unimplemented(memcore) == ["*"]
    assert ember.backends.is_declared_unimplemented(memcore, "binary.add[float32]")
    assert not ember.backends.is_declared_unimplemented(binonly, "unary.exp[float32]")


_COMPOSITES_CHECK = """
import numpy as np, warnings
import ember
from ember.testing._devices import MEMORY_CORE, partial_device
warnings.simplefilter("ignore", UserWarning)
dev = partial_device("lacking", MEMORY_CORE + ("unary", "binary", "reduce"),
                     unimplemented=["unary.sigmoid[*]", "unary.expm1[float32]",
                                    "binary.remainder[*]", "unary.gelu[*]"])
x = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
ex, cx = ember.tensor(x, device=dev), ember.tensor(x)
# (ember-cpu's GELU takes erf to an absolute 1.5e-7, as PyTorch's: the composite's is exact)
for f, atol in ((lambda t: t.sigmoid(), 1e-7), (lambda t: t.expm1(), 1e-7),
                (lambda t: t.remainder(0.7), 1e-7), (lambda t: ember.nn.functional.gelu(t), 1e-6),
                (lambda t: ember.remainder(t, t + 3), 1e-7),
                (lambda t: t.double().sigmoid(), 1e-7)):
    np.testing.assert_allclose(f(ex).cpu().numpy(), f(cx).numpy(), rtol=1e-6, atol=atol)
out = ember.empty(4, 5, device=dev)
assert ember.sigmoid(ex, out=out) is out
np.testing.assert_allclose(out.cpu().numpy(), cx.sigmoid().numpy(), rtol=1e-6)
assert ember.backends.host_fallbacks(dev) == {}, ember.backends.host_fallbacks(dev)
t = ember.tensor(x, device=dev).requires_grad_()
t.sigmoid().sum().backward()
c = ember.tensor(x).requires_grad_()
c.sigmoid().sum().backward()
np.testing.assert_allclose(t.grad.cpu().numpy(), c.grad.numpy(), rtol=1e-6)
composites = ember.core._device._backend_for_type(dev).composites
assert (False, 17, ember.float32) in composites          # expm1: only the dtype declared
assert (False, 17, ember.float64) not in composites
assert not any(k[2] == ember.int64 for k in composites)  # no integer composites
assert ember.backends.coverage(dev)["table_composites"] == [
    "binary.remainder", "unary.expm1", "unary.gelu", "unary.sigmoid"]
ei = ember.tensor([7, -7, 5], device=dev)
assert ember.remainder(ei, 3).cpu().tolist() == [1, 2, 2]
print("ok")
"""


def test_declared_kernels_with_a_table_composite_run_on_the_device():
    """A device that declares elementwise kernels unimplemented runs the op table's
    composites for them on itself (its own exp, add, div, ...): no host round trip, the
    CPU's values, gradients through the op's own formula; an integer kernel it declares
    has no composite (the device's kernel is called, and would fall back to the host if it
    answered "not implemented").  In a fresh process: a test run has few backend dispatch
    keys left for new device types."""
    r = subprocess.run([sys.executable, "-c", _COMPOSITES_CHECK], capture_output=True,
                       text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_unknown_op_codes_are_not_implemented():
    answers = _fallback.unknown_op_answers(_device._backend_for_type("cpu"))
    assert set(answers) == {"unary", "binary", "reduce", "random", "scan", "index", "search",
                            "softmax", "activation", "ternary"}
    for entry, (rc, msg) in answers.items():
        assert rc == 5, (entry, rc, msg)                    # EMBER_ERR_NOT_IMPLEMENTED


def test_abi_ops_are_read_from_the_header():
    ops = ember.backends.abi_ops()
    assert ops["binary"][:3] == ("add", "sub", "mul") and ops["unary"][0] == "neg"
    assert ops["softmax"] == ("softmax", "log_softmax", "softmax_backward",
                              "log_softmax_backward")
    assert len(ops["index"]) == 6 and "wrap" not in ops["index"]


def test_the_fallback_needs_the_cpu_plugin():
    code = """
import types, pytest, ember
from ember.backends import DeviceSpec, hookimpl
from ember.core import _fallback
import ember_cpu._kernels as k
rt = types.ModuleType("rt")
rt.is_available = lambda: True; rt.device_count = lambda: 1; rt.current_device = lambda: 0
rt.set_device = lambda d: None; rt.synchronize = lambda d=None: None
m = types.ModuleType("m")
m.ember_devices = hookimpl(lambda: [DeviceSpec("lonely")])
m.ember_device_module = hookimpl(lambda device_type: rt)
m.ember_kernel_table = hookimpl(lambda device_type: _fallback.table_subset(
    k.kernel_table(), ("alloc", "free", "copy", "fill", "to_host", "from_host")))
ember.backends.register(m, name="lonely")
x = ember.ones(2, device="lonely")
try:
    x.exp()
except NotImplementedError as e:
    print("OK", e)
"""
    env = {"EMBER_DEVICE_BACKEND_AUTOLOAD": "0", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.startswith("OK unary.exp[float32] is not implemented by device "
                                 "'lonely'"), out.stdout + out.stderr
    assert "pip install ember-cpu" in out.stdout


def test_the_cli_lists_what_a_device_leaves_out(memcore):
    import contextlib
    import io

    from ember.backends.__main__ import print_coverage
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print_coverage(ember.backends.coverage(memcore))
    text = buf.getvalue()
    assert "host fallback for: unary, binary, reduce, matmul" in text
    assert "declared unimplemented: *" in text


# --- ABI versions: tables built for the previous and the next minor version ---------------

def test_a_table_built_for_the_previous_minor_version_loads():
    """A 6.0 plugin (its table ends before 6.1's `sort`) keeps working in a 6.1 core: the
    entries past its size read as NULL, so sort takes the core's host path."""
    base = ember.backends.kernel_table("reference")
    if base is None:
        pytest.skip("ember-reference is not installed")
    assert _device.ABI_MINOR >= 1
    old = (_device.ABI_VERSION, 0, _device.TABLE_SIZES[0])
    name = partial_device("abi60", _abi.ENTRIES, version=old,
                          base=base)
    x = ember.tensor([3.0, 1.0, 2.0, 1.0], device=name)
    table = _device._backend_for_type(name).kernel_table()
    assert table.abi == f"{_device.ABI_VERSION}.0" and "sort" not in table.entries()
    assert "unary" in table.entries() and "adam" in table.entries()
    got = x.sort()
    assert got.values.cpu().tolist() == [1.0, 1.0, 2.0, 3.0]
    assert got.indices.cpu().tolist() == [1, 3, 2, 0] and got.values.device.type == name
    assert ember.backends.coverage(name)["host_fallback"] == []


def test_a_table_built_for_6_1_runs_lstm_and_sgd_through_their_ops():
    """A 6.1 table ends before 6.2's `rnn` and 6.3's `sgd`: nn.LSTM on that device runs its
    per-step ops (no fused node in the graph) and gives the reference device's numbers; SGD
    and add_ with alpha run their per-tensor ops, with the fused entry's bits."""
    base = ember.backends.kernel_table("reference")
    if base is None:
        pytest.skip("ember-reference is not installed")
    assert _device.ABI_MINOR >= 2
    name = partial_device("abi61", _abi.ENTRIES, version=(_device.ABI_VERSION, 1,
                                                          _device.TABLE_SIZES[1]), base=base)
    table = _device._backend_for_type(name).kernel_table()
    assert "sort" in table.entries() and "rnn" not in table.entries()
    results = []
    for device in (name, "reference"):
        ember.manual_seed(0)
        m = ember.nn.LSTM(3, 4, 2).to(device)
        x = ember.randn(5, 2, 3).to(device).requires_grad_()
        out, (hn, cn) = m(x)
        (out.sum() + cn.sum()).backward()
        results.append([t.detach().cpu().numpy() for t in (out, hn, cn, x.grad)])
        last_layer = out.grad_fn.next_functions[0][0].next_functions[0][0]    # reshape, view
        fused = last_layer is not None and last_layer.name() == "_LSTMLayerBackward"
        assert fused == (device == "reference"), device
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert "sgd" not in table.entries()
    results = []
    for device in (name, "reference"):
        ember.manual_seed(0)
        p = ember.nn.Parameter(ember.randn(5, 4).to(device))
        opt = ember.optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
        for _ in range(3):
            p.grad = ember.randn(5, 4).to(device)
            opt.step()
        q = p.detach().clone().add_(ember.ones(5, 4).to(device), alpha=-0.3)
        results.append((p.detach().cpu().numpy(), q.cpu().numpy()))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("minor, size, why", [
    (_device.ABI_MINOR + 1, _device.TABLE_SIZE + 8, "the next minor version"),
    (0, _device.TABLE_SIZE, "a 6.0 header on a 6.1-sized table"),
    (_device.ABI_MINOR, _device.TABLE_SIZES[0], "a 6.1 header on a 6.0-sized table"),
])
def test_tables_that_do_not_fit_their_version_are_refused(minor, size, why):
    name = f"abi{minor}x{size}"
    partial_device(name, MEMORY_CORE, version=(_device.ABI_VERSION, minor, size))
    with pytest.raises(RuntimeError) as e:
        ember.zeros(1, device=name)
    msg = str(e.value)
    assert "\n" not in msg and f"partial-{name}" in msg
    assert f"built against ember ABI {_device.ABI_VERSION}.{minor} (kernel table of {size} " \
           f"bytes), this ember has ABI {_device.ABI_VERSION}.{_device.ABI_MINOR}" in msg, why
