"""ember.compile's façade: call and decorator forms, the Module wrapper, argument checks,
backends, ember.compiler."""
import ember.nn as nn
import pytest

import ember
from ember._dynamo.exc import InvalidBackend
from ember._dynamo.utils import counters


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(self.fc1(x).relu())


def test_call_and_decorator_forms(check):
    def f(x, y):
        return ember.sin(x) * y + 1
    x, y = ember.randn(3, 4), ember.randn(4)
    check(f, x, y, backend="eager")

    @ember.compile
    def g(x):
        return x.exp() - 1

    @ember.compile(backend="aot_eager", fullgraph=True)
    def h(x):
        return x.cos()
    assert (g(x) - (x.exp() - 1)).abs().max() == 0
    assert (h(x) - x.cos()).abs().max() == 0
    assert g.__name__ == "g" and g._torchdynamo_orig_callable.__name__ == "g"


def test_module_wrapper_keeps_orig_mod_and_state_dict_keys(close):
    m = MLP()
    cm = ember.compile(m, backend="eager")
    assert type(cm).__name__ == "OptimizedModule"
    assert type(cm).__module__ == "ember._dynamo.eval_frame"
    assert isinstance(cm, nn.Module) and cm._orig_mod is m
    keys = list(cm.state_dict())
    assert keys == [f"_orig_mod.{k}" for k in m.state_dict()]
    # scripts strip the prefix to load into a plain model
    plain = MLP()
    plain.load_state_dict({k.removeprefix("_orig_mod."): v for k, v in cm.state_dict().items()})
    x = ember.randn(5, 4)
    close(cm(x), plain(x))
    assert cm.fc1 is m.fc1                      # attributes read through the wrapper
    cm.eval()
    assert not m.training and not cm.training
    assert sorted(n for n, _ in cm.named_parameters())[0].startswith("_orig_mod.")


def test_module_compile_in_place(close):
    m = MLP()
    keys = list(m.state_dict())
    x = ember.randn(3, 4)
    ref = m(x)
    assert m.compile(backend="eager") is None
    close(m(x), ref)
    close(m(x), ref)
    assert list(m.state_dict()) == keys
    assert counters["stats"]["calls_captured"] == 1


def test_modes_and_options_are_checked():
    f = lambda x: x + 1   # noqa: E731
    for mode in ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs",
                 ember.compiler.CompileMode.MAX_AUTOTUNE):
        ember.compile(f, mode=mode)
    assert ember.CompileMode is ember.compiler.CompileMode
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast, should be one of: "
                       "default, reduce-overhead, max-autotune, max-autotune-no-cudagraphs"):
        ember.compile(f, mode="fast")
    with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
        ember.compile(f, mode="default", options={"fuse": True})
    with pytest.raises(RuntimeError, match="Unexpected optimization option nope"):
        ember.compile(f, options={"nope": 1})
    ember.compile(f, options={"max_autotune": True, "triton.cudagraphs": False})
    with pytest.raises(InvalidBackend, match="Invalid backend: 'nope'"):
        ember.compile(f, backend="nope")
    with pytest.raises(AssertionError, match="A callable function is expected"):
        ember.compile(3)
    with pytest.raises(TypeError, match="dynamic"):
        ember.compile(f, dynamic="yes")
    with pytest.raises(RuntimeError, match="Model can't be None"):
        ember.compile()(None)
    assert ember.compile(f, disable=True) is f


def test_callable_backend_gets_graph_module_and_example_inputs():
    seen = []

    def backend(gm, example_inputs):
        seen.append((gm, example_inputs))
        return gm.forward
    x = ember.randn(2, 3)
    out = ember.compile(lambda x: (x * 2).relu(), backend=backend)(x)
    assert (out - (x * 2).relu()).abs().max() == 0
    gm, example = seen[0]
    assert isinstance(gm, ember.fx.GraphModule)
    assert "ember.ops.ember.relu" in gm.code
    assert len(example) == 1 and example[0].shape == (2, 3)
    # training: the forward and the backward graph both go through the backend
    seen.clear()
    w = ember.randn(3, requires_grad=True)
    ember.compile(lambda x: (x * w).sum(), backend=backend)(x).backward()
    assert len(seen) == 2 and "tangent" in seen[1][0].code
    assert (w.grad - x.sum(0)).abs().max() < 1e-6


def test_backend_registry():
    assert "inductor" in ember.compiler.list_backends()
    assert "eager" not in ember.compiler.list_backends()
    assert {"eager", "aot_eager"} <= set(ember.compiler.list_backends(exclude_tags=()))

    @ember.compiler.register_backend(name="double_check")
    def double_check(gm, example_inputs):
        return gm.forward
    assert "double_check" in ember.compiler.list_backends()
    x = ember.randn(3)
    assert (ember.compile(lambda x: x + 1, backend="double_check")(x) - (x + 1)).abs().max() == 0


def test_is_compiling_and_disable(close):
    seen = []

    def probe(x):
        seen.append(ember.compiler.is_compiling())
        return x + 1
    ember.compile(probe, backend="eager")(ember.randn(2))
    assert seen == [True] and not ember.compiler.is_compiling()

    @ember.compiler.disable
    def eager_only(x):
        return x * 3

    def f(x):
        return eager_only(x) + 1
    cf = ember.compile(f, backend="eager")
    x = ember.randn(3)
    close(cf(x), x * 3 + 1)
    close(cf(x), x * 3 + 1)
    assert any("ember.compiler.disable" in r for r in counters["graph_break"])
    assert ember.compiler.disable(cf)(x).shape == (3,)


def test_reset_forgets_graphs():
    cf = ember.compile(lambda x: x * 2, backend="eager")
    cf(ember.randn(2))
    assert counters["stats"]["calls_captured"] == 1
    ember.compiler.reset()
    assert not counters["stats"]
    cf(ember.randn(2))
    assert counters["stats"]["calls_captured"] == 1


def test_ops_namespace():
    x = ember.randn(3)
    assert (ember.ops.ember.add(x, x) - 2 * x).abs().max() == 0
    assert repr(ember.ops.ember.sin) == "ember.ops.ember.sin"
    with pytest.raises(AttributeError):
        ember.ops.ember.no_such_op


def test_compile_is_lazy_at_import():
    import subprocess
    import sys
    code = ("import sys, ember; assert 'ember._dynamo' not in sys.modules; "
            "assert 'ember.fx' not in sys.modules; ember.compile; "
            "assert 'ember._dynamo' in sys.modules; assert 'sympy' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_private_packages_and_inductor_knobs_as_pytorch_scripts_use_them():
    """``torch._dynamo`` and ``torch._inductor.config`` are reached as attributes after a
    bare ``import torch`` (PyTorch imports them on first use), and the knobs scripts such as
    gpt-fast set exist with PyTorch's defaults (accepted, ignored)."""
    import subprocess
    import sys
    code = ("import sys, ember as torch; assert 'ember._dynamo' not in sys.modules; "
            "c = torch._inductor.config; c.coordinate_descent_tuning = True; "
            "c.triton.unique_kernel_names = True; c.fx_graph_cache = True; "
            "assert c.triton.cudagraphs is False and c.epilogue_fusion is True; "
            "torch._dynamo.config.cache_size_limit = 16; "
            "print(torch.compile(lambda x: x * 2)(torch.ones(2)).tolist())")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    assert out.strip() == "[2.0, 2.0]"
    ember.compile(lambda x: x + 1, options={"triton.unique_kernel_names": True,
                                             "fx_graph_cache": False})(ember.ones(2))


def test_explain_reports_graphs_ops_breaks_and_guards():
    x = ember.randn(4, 8)
    e = ember._dynamo.explain(lambda a: a.sin() + 1)(x)
    assert (e.graph_count, e.graph_break_count, e.op_count) == (1, 0, 2)
    assert [op.__name__ for op in e.ops_per_graph[0]] == ["sin", "add"]
    assert "L[0].shape == (4, 8)" in e.out_guards
    text = str(e)
    assert "Graph Count: 1" in text and "Ops per Graph:" in text
    # a Module with parameters: one (forward) graph, as PyTorch's dynamo reports
    lin = ember.nn.Linear(8, 3)
    assert ember._dynamo.explain(lin)(x).graph_count == 1

    def branchy(a):
        if a.sum() > 0:             # a tensor's value as a Python bool: a break in PyTorch;
            return a + 1            # ember's graph goes on, guarded by the value
        return a - 1
    e = ember._dynamo.explain(branchy)(x)
    assert e.graph_count == 1 and e.graph_break_count == 1
    assert "data-dependent" in e.break_reasons[0].reason

    def printing(a):
        print("side effect")        # a break that ends ember's graph: no graph
        return a - 1
    e = ember._dynamo.explain(printing)(x)
    assert e.graph_count == 0 and e.graph_break_count == 1
    with pytest.warns(FutureWarning, match="explain\\(f\\)\\(\\*args"):
        assert ember._dynamo.explain(lambda a: a * 2, x).graph_count == 1


def test_set_stance_as_function_context_and_decorator():
    def f(x):                   # PyTorch's tutorial: +1 compiled, -1 eager
        return x + 1 if ember.compiler.is_compiling() else x - 1
    cf = ember.compile(f, backend="eager")
    x = ember.ones(2)

    def ran_compiled(y=x):
        return cf(y)[0].item() == 2.0
    assert ran_compiled()
    with ember.compiler.set_stance("force_eager"):
        assert not ran_compiled()

    @ember.compiler.set_stance("force_eager")
    def run():
        return ran_compiled()
    assert ran_compiled()       # the decorator leaves the stance as it was outside
    assert not run()
    ember.compiler.set_stance("force_eager")
    try:
        assert not ran_compiled()
    finally:
        ember.compiler.set_stance("default")
    assert ran_compiled()
    # recompiles
    with ember.compiler.set_stance("eager_on_recompile"):
        assert cf(ember.ones(3, 3)).shape == (3, 3)
        assert len(cf._ember_compiled.entries) == 1
        cf(x)                   # the graph made before still serves
    with ember.compiler.set_stance("fail_on_recompile"):
        with pytest.raises(RuntimeError, match="Detected recompile when torch.compile stance "
                           "is 'fail_on_recompile'. filename: .* function name: 'f'"):
            cf(ember.ones(4, 4, 4))
    with ember.compiler.set_stance("eager_then_compile"):
        g = ember.compile(lambda x: x * 2, backend="eager")
        g(x)
        assert g._ember_compiled.entries == []
        g(x)
        assert len(g._ember_compiled.entries) == 1
    with pytest.raises(RuntimeError, match="non-default stance cannot have force_backend"):
        ember.compiler.set_stance("force_eager", force_backend="eager")
    with pytest.raises(RuntimeError, match="invalid torch.compile stance 'nope'"):
        ember.compiler.set_stance("nope")
    assert ember._dynamo.set_stance is ember.compiler.set_stance


def test_set_stance_can_force_a_backend():
    seen = []

    def mine(gm, example_inputs):
        seen.append(gm)
        return gm.forward
    with ember.compiler.set_stance("default", force_backend=mine):
        ember.compile(lambda x: x.sin() + 1)(ember.ones(3))
    assert len(seen) == 1


def test_graph_break_and_suppress_errors():
    def f(x):
        y = x + 1
        ember._dynamo.graph_break()
        return y * 2
    cf = ember.compile(f)
    assert ember.equal(cf(ember.ones(2)), ember.full((2,), 4.0))
    assert any("graph_break() called" in r for r in ember._dynamo.counters["graph_break"])
    with pytest.raises(Exception, match="graph_break\\(\\) called"):
        ember.compile(f, fullgraph=True)(ember.ones(2))
    ember._dynamo.graph_break()           # outside a capture: nothing

    def broken(gm, example_inputs):
        raise ValueError("no code for you")
    from ember._dynamo.exc import BackendCompilerFailed
    with pytest.raises(BackendCompilerFailed, match="no code for you"):
        ember.compile(lambda x: x + 1, backend=broken)(ember.ones(2))
    ember._dynamo.config.suppress_errors = True
    try:
        g = ember.compile(lambda x: x + 1, backend=broken)
        with pytest.warns(RuntimeWarning, match="no code for you.*run eagerly"):
            assert ember.equal(g(ember.ones(2)), ember.full((2,), 2.0))
        assert ember.equal(g(ember.ones(2)), ember.full((2,), 2.0))   # eager, no new warning
    finally:
        ember._dynamo.config.suppress_errors = False


def test_static_address_constant_results_and_logs(caplog):
    import logging
    x = ember.ones(3)
    ember._dynamo.mark_static_address(x)
    with pytest.raises(TypeError, match="mark_static_address expects a tensor"):
        ember._dynamo.mark_static_address([1.0])
    const = ember.compiler.assume_constant_result(lambda: 3)
    assert const() == 3 and const._dynamo_marked_constant
    ember._logging.set_logs(graph_breaks=True, recompiles=True)
    try:
        with caplog.at_level(logging.INFO, logger="ember._dynamo"):
            cf = ember.compile(lambda a: a * 2 if a.sum() > 0 else a)
            cf(x)
            g = ember.compile(lambda a: a + 1)
            g(x)
            g(ember.ones(2, 2))
        text = caplog.text
        assert "Graph break: data-dependent" in text
        assert "Recompiling function" in text and "size mismatch" in text
    finally:
        ember._logging.set_logs()


def helper_timing(x):
    import time
    time.perf_counter()                  # the monitor would call this a side effect
    return x * 2


def test_allow_in_graph_trusts_a_function():
    f = lambda x: helper_timing(x) + 1     # noqa: E731
    cf = ember.compile(f, backend="eager")
    cf(ember.ones(2))
    assert any("perf_counter" in r for r in counters["graph_break"])
    ember.compiler.reset()
    assert ember.compiler.allow_in_graph(helper_timing) is helper_timing
    cf = ember.compile(f, backend="eager")
    cf(ember.ones(2))
    assert not counters["graph_break"] and counters["stats"]["unique_graphs"] == 1


def test_nested_structures_and_kwargs(close):
    def f(x, *, scale, extra=None):
        return {"y": x * scale, "pair": (x.sum(), [x.max(), 3])}, extra
    cf = ember.compile(f, backend="aot_eager")
    x = ember.randn(4, requires_grad=True)
    out, extra = cf(x, scale=2.0, extra="tag")
    ref, _ = f(x, scale=2.0)
    close(out, ref)
    assert extra == "tag" and out["pair"][1][1] == 3
    out["y"].sum().backward()
    close(x.grad, ember.full((4,), 2.0))
