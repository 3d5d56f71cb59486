"""Modes entered inside a compiled function (no_grad, enable_grad, inference_mode,
autocast) hold on every call, not only the capturing one; forward-mode AD tangents pass
through compiled graphs."""
import pytest

import ember
import ember.autograd.forward_ad as fwAD
from ember._dynamo.utils import counters
from ember.func import jvp

BACKENDS = ["eager", "aot_eager", "inductor"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_grad_decorator_inside_holds_on_replay(backend):
    @ember.compile(backend=backend)
    @ember.no_grad()
    def target(x, w):
        return x @ w
    x, w = ember.ones(2, 2), ember.ones(2, 2, requires_grad=True)
    for _ in range(3):
        w.grad = None
        t = target(x, w)
        (t * (x @ w)).sum().backward()
        assert not t.requires_grad
        assert w.grad[0, 0].item() == 4.0
    assert counters["stats"]["calls_captured"] == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_enable_grad_inside_a_call_under_no_grad(backend):
    def f(x):
        with ember.enable_grad():
            return x * 2
    cf = ember.compile(f, backend=backend)
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        outs = [cf(x) for _ in range(3)]
    assert all(o.requires_grad for o in outs)
    outs[-1].sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_inference_mode_inside_holds_on_replay(backend):
    def f(x):
        with ember.inference_mode():
            return x * 2
    cf = ember.compile(f, backend=backend)
    x = ember.ones(2, requires_grad=True)
    for _ in range(3):
        y = cf(x)
        assert y.is_inference() and not y.requires_grad


@pytest.mark.parametrize("backend", BACKENDS)
def test_modes_changing_between_ops_run_eagerly(backend, close):
    def f(x):
        with ember.no_grad():
            y = x * 2
        return y, x * 3
    cf = ember.compile(f, backend=backend)
    x = ember.ones(2, requires_grad=True)
    for _ in range(3):
        y, z = cf(x)
        assert not y.requires_grad and z.requires_grad
    assert any("grad mode changed between the ops" in r for r in counters["graph_break"])


def test_no_grad_over_tensors_not_requiring_grad_is_no_change():
    def f(x):
        with ember.no_grad():
            y = x * 2
        return y + 1
    cf = ember.compile(f, backend="eager")
    for _ in range(2):
        cf(ember.ones(2))
    assert not counters["graph_break"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_autocast_inside_holds_on_replay(backend):
    def f(x, w):
        with ember.autocast("cpu", dtype=ember.bfloat16):
            return x @ w
    cf = ember.compile(f, backend=backend)
    dtypes = [cf(ember.randn(2, 2), ember.randn(2, 2)).dtype for _ in range(3)]
    assert dtypes == [ember.bfloat16] * 3
    assert cf(ember.randn(2, 2), ember.randn(2, 2)).dtype == ember.bfloat16
    assert (ember.randn(2, 2) @ ember.randn(2, 2)).dtype == ember.float32


def test_autocast_ending_inside_the_call_runs_eagerly():
    def f(x, w):
        with ember.autocast("cpu", dtype=ember.bfloat16):
            y = x @ w
        return y.float() @ w
    cf = ember.compile(f, backend="eager")
    x, w = ember.randn(2, 2), ember.randn(2, 2)
    for _ in range(3):
        assert cf(x, w).dtype == ember.float32
    assert any("autocast changed" in r for r in counters["graph_break"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_jvp_through_a_compiled_function(backend, close):
    def f(x):
        return (x.sin() * x).sum()
    cf = ember.compile(f, backend=backend)
    x, t = ember.randn(3), ember.ones(3)
    expected = jvp(f, (x,), (t,))[1]
    for _ in range(3):
        close(jvp(cf, (x,), (t,))[1], expected)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        for _ in range(2):
            close(fwAD.unpack_dual(cf(d)).tangent, expected)
    close(cf(x), f(x))


class _Hundredfold(ember.autograd.Function):
    """A custom backward unlike the forward's derivative: the graph must keep it."""

    @staticmethod
    def forward(ctx, x):
        return x * x

    @staticmethod
    def backward(ctx, g):
        return g * 100


@pytest.mark.parametrize("backend", BACKENDS)
def test_what_autograd_switches_off_is_no_mode_change(backend):
    """The Autograd kernels' own exclusion of their key (the recorder sees most ops below
    it) and a custom Function's forward (no_grad by design) are no user no_grad: a model
    trains through one graph, with the custom backward."""
    lin = ember.nn.Linear(4, 6)

    def f(x):
        q, k = lin(x).split(3, dim=1)
        return (_Hundredfold.apply(q) + ember.nn.functional.gelu(k)).sum()
    counters.clear()
    cf = ember.compile(f, backend=backend)
    for _ in range(3):
        x = ember.randn(2, 4, requires_grad=True)
        cf(x).backward()
        got = x.grad.clone()
        x.grad = None
        f(x).backward()
        assert ember.allclose(got, x.grad, rtol=1e-5, atol=1e-6)
    assert not counters["graph_break"]
    assert counters["stats"]["calls_captured"] == 1
