"""ember.fx: graphs, generated code, symbolic tracing, interpreters, passes."""
import operator

import ember.nn as nn
import ember.nn.functional as F
import pytest

import ember
import ember.fx as fx
from ember.fx.passes.dialect.common.cse_pass import CSEPass
from ember.fx.passes.shape_prop import ShapeProp


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.scale = nn.Parameter(ember.randn(3))

    def forward(self, x, k=2):
        h = F.relu(self.lin(x)) * self.scale
        return ember.sigmoid(h.sum(dim=-1, keepdim=True) * k).view(-1), h[0]


def _close(a, b):
    return (a - b).abs().max().item() < 1e-6


def test_symbolic_trace_records_modules_attributes_methods_and_functions():
    m = Net()
    gm = fx.symbolic_trace(m)
    ops = [(n.op, n.target if isinstance(n.target, str) else n.target.__name__)
           for n in gm.graph.nodes]
    assert ops[:3] == [("placeholder", "x"), ("placeholder", "k"), ("call_module", "lin")]
    assert ("get_attr", "scale") in ops and ("call_method", "sum") in ops
    assert ("call_function", "relu") in ops and ("call_function", "getitem") in ops
    x = ember.randn(5, 4)
    for a, b in zip(gm(x), m(x)):
        assert _close(a, b)
    assert _close(gm(x, 3)[0], m(x, 3)[0])


def test_generated_code_is_readable_python():
    gm = fx.symbolic_trace(Net())
    code = gm.code
    assert code.startswith("def forward(self, x, k = 2):")
    assert "lin = self.lin(x);  x = None" in code
    assert "ember.nn.functional.relu(lin)" in code and "getitem = mul[0]" in code
    assert code.rstrip().endswith("return (view, getitem)")
    assert "class Net(ember.nn.Module)" in gm.print_readable(print_output=False)


def test_graph_built_by_hand_and_graph_module_from_a_dict():
    g = fx.Graph()
    x = g.placeholder("x")
    w = g.get_attr("w")
    y = g.call_function(operator.mul, (x, w))
    z = g.call_method("exp", (y,))
    g.output(z)
    g.lint()
    w_value = ember.randn(3)
    gm = fx.GraphModule({"w": w_value}, g)
    x_value = ember.randn(3)
    assert _close(gm(x_value), (x_value * w_value).exp())
    assert "mul = x * w" in gm.code
    assert [n.name for n in g.nodes] == ["x", "w", "mul", "exp", "output"]
    assert set(y.users) == {z} and z.all_input_nodes == [y]


def test_print_tabular_and_str(capsys):
    gm = fx.symbolic_trace(lambda a, b: ember.add(a, b).relu())
    gm.graph.print_tabular()
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert any("call_function" in line and "ember.add" in line for line in out)
    assert "call_method[target=relu]" in str(gm.graph)


def test_dead_code_elimination_keeps_side_effects():
    g = fx.Graph()
    x = g.placeholder("x")
    g.call_function(ember.sin, (x,))                         # unused: removed
    p = g.call_function(print, ("side effect",))              # impure: kept
    g.output(g.call_function(ember.cos, (x,)))
    assert g.eliminate_dead_code()
    targets = [n.target for n in g.nodes if n.op == "call_function"]
    assert ember.sin not in targets and print in targets and p in g.nodes
    assert not g.eliminate_dead_code()


def test_erase_replace_insert():
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(ember.sin, (x,))
    b = g.call_function(ember.neg, (a,))
    g.output(b)
    with pytest.raises(RuntimeError, match="still had 1 users"):
        g.erase_node(a)
    with g.inserting_before(b):
        c = g.call_function(ember.cos, (x,))
    a.replace_all_uses_with(c)
    g.erase_node(a)
    gm = fx.GraphModule(nn.Module(), g)
    v = ember.randn(4)
    assert _close(gm(v), -v.cos())
    assert [n.name for n in g.nodes] == ["x", "cos", "neg", "output"]


def test_lint_catches_use_before_definition():
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(ember.sin, (x,))
    g.output(a)
    with g.inserting_before(a):
        g.call_function(ember.cos, (a,))
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()


def test_interpreter_runs_and_can_be_overridden():
    m = Net()
    gm = fx.symbolic_trace(m)
    x = ember.randn(2, 4)
    assert _close(fx.Interpreter(gm).run(x)[0], m(x)[0])

    class NegRelu(fx.Interpreter):
        def call_function(self, target, args, kwargs):
            if target is F.relu:
                return -super().call_function(target, args, kwargs)
            return super().call_function(target, args, kwargs)
    h = NegRelu(gm).run(x)[1]
    assert _close(h, (-F.relu(m.lin(x)) * m.scale)[0])


def test_transformer_rewrites_calls():
    gm = fx.symbolic_trace(lambda x: ember.sigmoid(x) + 1)

    class ToTanh(fx.Transformer):
        def call_function(self, target, args, kwargs):
            return super().call_function(ember.tanh if target is ember.sigmoid else target,
                                         args, kwargs)
    new = ToTanh(gm).transform()
    x = ember.randn(5)
    assert _close(new(x), ember.tanh(x) + 1)
    assert "ember.tanh" in new.code and "sigmoid" not in new.code


def test_cse_pass_merges_identical_pure_nodes():
    def f(x):
        return ember.sin(x) + ember.sin(x) + ember.rand_like(x) * 0
    gm = fx.symbolic_trace(f)
    res = CSEPass(banned_ops={ember.rand_like})(gm)
    assert res.modified
    sins = [n for n in res.graph_module.graph.nodes if n.target is ember.sin]
    assert len(sins) == 1
    x = ember.randn(4)
    assert _close(res.graph_module(x), 2 * ember.sin(x))


def test_shape_prop_records_tensor_meta():
    gm = fx.symbolic_trace(Net())
    ShapeProp(gm).propagate(ember.randn(6, 4))
    lin = next(n for n in gm.graph.nodes if n.op == "call_module")
    assert lin.meta["tensor_meta"].shape == (6, 3)
    assert lin.meta["tensor_meta"].dtype is ember.float32


def test_control_flow_on_proxies_raises_trace_error():
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    with pytest.raises(fx.proxy.TraceError, match="control flow"):
        fx.symbolic_trace(f)
    with pytest.raises(RuntimeError, match="'len' is not supported"):
        fx.symbolic_trace(lambda x: len(x))


def leaf_helper(x):
    return x.relu() * 2


fx.wrap("leaf_helper")


def test_wrap_keeps_a_function_as_one_node():
    gm = fx.symbolic_trace(lambda x: leaf_helper(x) + 1)
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"][0].__name__ == \
        "leaf_helper"
    x = ember.randn(3)
    assert _close(gm(x), x.relu() * 2 + 1)


def test_sequential_is_traced_through_and_submodules_copied():
    seq = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))
    gm = fx.symbolic_trace(seq)
    assert [n.target for n in gm.graph.nodes if n.op == "call_module"] == ["0", "1", "2"]
    assert "getattr(self, '0')(" in gm.code
    x = ember.randn(4, 3)
    assert _close(gm(x), seq(x))
    assert set(dict(gm.named_parameters())) == set(dict(seq.named_parameters()))
