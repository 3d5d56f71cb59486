"""ember.fx against torch.fx: the same programs traced by both libraries must give the same
graphs (node ops, names, targets) and the same behaviour."""
import copy
import pickle

import pytest

import ember

torch = pytest.importorskip("torch")


def _libs():
    return [pytest.param(ember, id="ember"), pytest.param(torch, id="torch")]


def _nodes(gm):
    return [(n.op, n.name) for n in gm.graph.nodes]


def _trace_both(make_fn, **kwargs):
    """Trace ``make_fn(lib)`` with each library; returns (ember gm, torch gm)."""
    return (ember.fx.symbolic_trace(make_fn(ember), **kwargs),
            torch.fx.symbolic_trace(make_fn(torch), **kwargs))


def _split_fn(lib):
    def f(x):
        a, b = x.split(2, dim=1)
        return a * b + x.shape[0]
    return f


def test_tuple_unpacking_of_a_proxy_traces_getitems():
    egm, tgm = _trace_both(_split_fn)
    assert _nodes(egm) == _nodes(tgm)
    x = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]
    assert egm(ember.tensor(x)).tolist() == tgm(torch.tensor(x)).tolist()


@pytest.mark.parametrize("lib", _libs())
def test_iterating_a_proxy_in_a_loop_is_a_trace_error(lib):
    def f(x):
        for _ in x:
            pass
        return x
    with pytest.raises(lib.fx.proxy.TraceError, match="cannot be iterated"):
        lib.fx.symbolic_trace(f)


def test_int_of_a_proxy_is_a_type_error_as_in_torch():
    def f(x):
        return int(x)
    for lib in (ember, torch):
        with pytest.raises(TypeError):
            lib.fx.symbolic_trace(f)


def _flag_fn(lib):
    def f(x, flag):
        return x + 1 if flag else x - 1
    return f


def test_concrete_args_keep_the_parameter_and_guard_its_value():
    egm, tgm = _trace_both(_flag_fn, concrete_args={"flag": True})
    assert _nodes(egm) == _nodes(tgm)
    assert egm(ember.zeros(2), True).tolist() == tgm(torch.zeros(2), True).tolist()
    with pytest.raises(AssertionError, match="flag has been specialized to have value True"):
        egm(ember.zeros(2), False)


def test_concrete_none_is_guarded():
    def make(lib):
        def f(x, y=None):
            return x if y is None else x + y
        return f
    egm, tgm = _trace_both(make, concrete_args={"y": None})
    assert [n.op for n in egm.graph.nodes] == [n.op for n in tgm.graph.nodes]
    assert egm(ember.ones(2)).tolist() == [1.0, 1.0]
    with pytest.raises(AssertionError):
        egm(ember.ones(2), ember.ones(2))


def test_placeholders_inside_a_dict_concrete_arg():
    def make(lib):
        def f(d):
            return d["a"] + d["b"]
        return f
    ph = {"a": ember.fx.PH, "b": ember.fx.PH}
    egm = ember.fx.symbolic_trace(make(ember), concrete_args={"d": ph})
    tgm = torch.fx.symbolic_trace(make(torch),
                                  concrete_args={"d": {"a": torch.fx.PH, "b": torch.fx.PH}})
    e = egm({"a": ember.ones(2), "b": ember.ones(2) * 2})
    t = tgm({"a": torch.ones(2), "b": torch.ones(2) * 2})
    assert e.tolist() == t.tolist()


def test_varargs_and_varkwargs_become_placeholders():
    def make(lib):
        def f(*args, **kwargs):
            return args[0] + args[1]
        return f
    egm, tgm = _trace_both(make)
    assert [n.op for n in egm.graph.nodes] == [n.op for n in tgm.graph.nodes]
    assert egm(ember.ones(2), ember.ones(2)).tolist() == \
        tgm(torch.ones(2), torch.ones(2)).tolist()


def test_keyword_only_parameters_become_placeholders():
    def make(lib):
        def f(x, *, k=2):
            return x * k
        return f
    egm, tgm = _trace_both(make)
    assert _nodes(egm) == _nodes(tgm)
    assert "forward(self, x, k = 2)" in egm.code
    assert egm(ember.ones(2)).tolist() == tgm(torch.ones(2)).tolist()
    assert egm(ember.ones(2), k=3).tolist() == tgm(torch.ones(2), k=3).tolist()


def test_keyword_only_parameters_of_a_module_forward():
    def make(lib):
        class M(lib.nn.Module):
            def forward(self, x, *, b, k=2):
                return x * k + b
        return M()
    egm, tgm = _trace_both(make)
    assert _nodes(egm) == _nodes(tgm)
    assert egm(ember.ones(2), b=1, k=3).tolist() == tgm(torch.ones(2), b=1, k=3).tolist()


def test_node_names_keep_leading_underscores():
    def make(lib):
        c = lib.ones(2)

        def f(x):
            return x + c
        return f
    egm, tgm = _trace_both(make)
    assert _nodes(egm) == _nodes(tgm)


def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


def test_graph_module_pickles():
    gm = ember.fx.symbolic_trace(_net(ember))
    x = ember.randn(5, 3)
    back = pickle.loads(pickle.dumps(gm))
    assert (back(x) - gm(x)).abs().max().item() == 0
    assert back.code == gm.code
    assert sorted(back.state_dict()) == sorted(gm.state_dict())
    assert type(back).__name__ == type(gm).__name__
    assert [n.name for n in back.graph.nodes] == [n.name for n in gm.graph.nodes]
    assert (copy.deepcopy(back)(x) - gm(x)).abs().max().item() == 0


def test_graph_module_with_concrete_args_pickles():
    gm = ember.fx.symbolic_trace(_flag_fn(ember), concrete_args={"flag": False})
    back = pickle.loads(pickle.dumps(gm))
    assert back(ember.ones(2), False).tolist() == [0.0, 0.0]


def test_replace_pattern_matches_torch():
    def make(lib):
        def f(x, y):
            a = lib.relu(x) + y
            return lib.relu(a) + y

        def pattern(a, b):
            return lib.relu(a) + b

        def replacement(a, b):
            return lib.sigmoid(a) - b
        return f, pattern, replacement
    results = []
    for lib in (ember, torch):
        f, pattern, replacement = make(lib)
        gm = lib.fx.symbolic_trace(f)
        from importlib import import_module
        rewriter = import_module(f"{lib.__name__}.fx.subgraph_rewriter")
        matches = rewriter.replace_pattern(gm, pattern, replacement)
        x = [0.5, -1.0]
        out = gm(lib.tensor(x), lib.tensor([1.0, 2.0]))
        results.append((len(matches), _nodes(gm), [round(v, 5) for v in out.tolist()],
                        [(k.name, v.name) for k, v in matches[0].nodes_map.items()]))
    assert results[0] == results[1]


def test_replace_pattern_skips_matches_whose_inner_values_escape():
    def f(x):
        r = ember.relu(x)
        return r + 1, r

    def pattern(a):
        return ember.relu(a) + 1

    def replacement(a):
        return a - 1
    from ember.fx.subgraph_rewriter import replace_pattern
    gm = ember.fx.symbolic_trace(f)
    assert replace_pattern(gm, pattern, replacement) == []


def test_graph_printing_matches_torch():
    def make(lib):
        def f(x):
            return x.relu(), getattr(x, "shape")
        return f
    egm, tgm = _trace_both(make)
    assert str(egm.graph).splitlines()[-1] == str(tgm.graph).splitlines()[-1]
    e_get = [n.format_node() for n in egm.graph.nodes if n.name == "getattr_1"]
    t_get = [n.format_node() for n in tgm.graph.nodes if n.name == "getattr_1"]
    assert e_get == t_get


def test_node_stack_trace_attribute():
    gm = ember.fx.symbolic_trace(_net(ember))
    node = next(iter(gm.graph.nodes))
    assert node.stack_trace is None
    node.stack_trace = "here"
    assert node.meta["stack_trace"] == "here"


def test_parameters_keep_their_names_when_nodes_are_renamed():
    # ``input`` shadows a builtin, so its node is ``input_1``; callers still say input=
    emod, tmod = _net(ember), _net(torch)
    egm, tgm = ember.fx.symbolic_trace(emod), torch.fx.symbolic_trace(tmod)
    assert _nodes(egm) == _nodes(tgm)
    x = [[1.0, 2.0, 3.0]]
    assert egm(input=ember.tensor(x)).tolist() == emod(ember.tensor(x)).tolist()
    assert tgm(input=torch.tensor(x)).tolist() == tmod(torch.tensor(x)).tolist()


def test_assert_is_recorded_and_kept():
    # torch._assert in a forward pass (timm's models call it) is a node, not a traced bool,
    # and dead-code elimination keeps it
    results = []
    for lib in (ember, torch):
        class M(lib.nn.Module):
            def forward(self, x):
                lib._assert(x.shape[0] > 1, "need a batch")
                return x * 2
        gm = lib.fx.symbolic_trace(M())
        gm.graph.eliminate_dead_code()
        gm.recompile()
        ops = [(n.op, getattr(n.target, "__name__", str(n.target))) for n in gm.graph.nodes]
        with pytest.raises(AssertionError, match="need a batch"):
            gm(lib.ones(1))
        results.append((ops, gm(lib.ones(3)).tolist()))
    assert results[0] == results[1]


def test_to_folder_writes_an_importable_module(tmp_path, monkeypatch):
    """GraphModule.to_folder: a package whose class rebuilds the module (a leaf submodule
    from its repr, a container from its saved file, own parameters and buffers from the
    saved state) and runs the same forward."""
    import importlib

    class M(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = ember.nn.Linear(3, 2)
            self.seq = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.Tanh())
            self.register_buffer("b", ember.ones(2))
            self.p = ember.nn.Parameter(ember.zeros(2) + 0.5)

        def forward(self, x):
            return ember.relu(self.seq(self.lin(x))) + self.b + self.p + x.sum(-1, True)

    gm = ember.fx.symbolic_trace(M())
    gm.to_folder(tmp_path / "exported", "Exported")
    assert sorted(p.name for p in (tmp_path / "exported").iterdir()) == [
        "__init__.py", "module.py", "seq.pt", "state_dict.pt"]
    monkeypatch.syspath_prepend(str(tmp_path))
    rebuilt = importlib.import_module("exported").Exported()
    assert type(rebuilt.lin) is ember.nn.Linear and isinstance(rebuilt.p, ember.nn.Parameter)
    x = ember.randn(4, 3)
    assert ember.equal(rebuilt(x), gm(x))
