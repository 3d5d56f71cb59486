"""ember.export against torch.export: programs that compute what eager computes, PyTorch's
signatures, dynamic shapes and errors."""
import copy

import ember.nn as enn
import ember.nn.functional as EF
import numpy as np
import pytest

import ember
from ember._dynamo.exc import Unsupported, UserError
from ember.export import Dim, dims, export
from ember.fx.experimental.symbolic_shapes import (
    ConstraintViolationError,
    GuardOnDataDependentSymNode,
)

torch = pytest.importorskip("torch")


def close(a, b, tol=1e-5):
    a = a.detach().numpy() if hasattr(a, "detach") else a
    b = b.detach().numpy() if hasattr(b, "detach") else b
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _twin(lib):
    """The same small MLP-with-state in ember and in PyTorch."""
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(4, 3)
            self.bn = lib.nn.BatchNorm1d(3)
            self.register_buffer("scale", lib.ones(3))
            self.register_buffer("tmp", lib.zeros(3), persistent=False)
            self.k = lib.tensor([2.0, 2.0, 2.0])

        def forward(self, x):
            return self.bn(self.fc(x)) * self.scale + self.k + self.tmp, x.sum()
    return M()


def _spec_rows(sig):
    return [(s.kind.name, s.arg.name, s.target, s.persistent) for s in sig.input_specs]


def test_signature_matches_torch():
    ep = export(_twin(ember), (ember.randn(5, 4),))
    tep = torch.export.export(_twin(torch), (torch.randn(5, 4),))
    assert _spec_rows(ep.graph_signature) == _spec_rows(tep.graph_signature)
    assert [s.kind.name for s in ep.graph_signature.output_specs] == \
        [s.kind.name for s in tep.graph_signature.output_specs]
    assert ep.graph_signature.parameters == tep.graph_signature.parameters
    assert ep.graph_signature.buffers == tep.graph_signature.buffers
    assert ep.graph_signature.inputs_to_parameters == tep.graph_signature.inputs_to_parameters
    assert ep.graph_signature.user_inputs == tep.graph_signature.user_inputs
    assert sorted(ep.state_dict) == sorted(tep.state_dict)
    assert sorted(ep.constants) == sorted(tep.constants)
    placeholders = [n.name for n in ep.graph.nodes if n.op == "placeholder"]
    assert placeholders == [n.name for n in tep.graph.nodes if n.op == "placeholder"]
    ep.validate()


def _mlp():
    return enn.Sequential(enn.Linear(6, 16), enn.ReLU(), enn.Linear(16, 16), enn.Tanh(),
                          enn.Linear(16, 2))


def test_mlp_reproduces_eager_and_shares_state():
    m = _mlp()
    ep = export(m, (ember.randn(8, 6),))
    mod = ep.module()
    x = ember.randn(8, 6)
    close(mod(x), m(x))
    assert ep.state_dict["0.weight"] is m[0].weight
    assert mod.get_submodule("0").weight is m[0].weight
    with ember.no_grad():
        m[0].weight.mul_(2)                     # the program reads the module's state
    close(mod(x), m(x))
    out = mod(x)
    out.sum().backward()                         # module() is differentiable as eager is
    assert m[0].weight.grad is not None
    with pytest.raises(RuntimeError, match="Unable to call ExportedProgram directly"):
        ep(x)


class _CNN(enn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = enn.Conv2d(3, 8, 3, padding=1)
        self.bn = enn.BatchNorm2d(8)
        self.c2 = enn.Conv2d(8, 4, 3)
        self.fc = enn.Linear(4 * 3 * 3, 10)

    def forward(self, x):
        x = EF.max_pool2d(EF.relu(self.bn(self.c1(x))), 2)
        x = ember.flatten(EF.relu(self.c2(x)), 1)
        return EF.log_softmax(self.fc(x), dim=1)


def test_cnn_with_dynamic_batch():
    m = _CNN().eval()
    ep = export(m, (ember.randn(4, 3, 10, 10),), dynamic_shapes=({0: Dim("batch", max=64)},))
    (sym, vr), = ep.range_constraints.items()
    assert (int(vr.lower), int(vr.upper)) == (2, 64)
    mod = ep.module()
    for n in (2, 5, 17):
        x = ember.randn(n, 3, 10, 10)
        close(mod(x), m(x))
    for bad, msg in ((ember.randn(65, 3, 10, 10), r"size\(\)\[0\] <= 64"),
                     (ember.randn(1, 3, 10, 10), r"size\(\)\[0\] >= 2"),
                     (ember.randn(4, 3, 11, 10), r"size\(\)\[2\] == 10"),
                     (ember.randn(4, 3, 10, 10).double(), "dtype")):
        with pytest.raises(AssertionError, match=msg):
            mod(bad)
    unchecked = ep.module(check_guards=False)
    close(unchecked(ember.randn(3, 3, 10, 10)).exp().sum(1), ember.ones(3))


def test_training_buffers_update_as_eager_and_export_changes_nothing():
    m = _CNN().train()
    ref = copy.deepcopy(m)
    ep = export(m, (ember.randn(4, 3, 10, 10),), dynamic_shapes=({0: Dim("b")},))
    close(m.bn.running_mean, ref.bn.running_mean)       # exporting ran nothing for real
    assert m.bn.num_batches_tracked.item() == 0
    mod = ep.module()
    for n in (4, 6):
        x = ember.randn(n, 3, 10, 10)
        close(mod(x), ref(x))
        close(m.bn.running_mean, ref.bn.running_mean)
        close(m.bn.running_var, ref.bn.running_var)
    assert m.bn.num_batches_tracked.item() == 2


def test_module_with_buffers_and_constants():
    m = _twin(ember).eval()
    ep = export(m, (ember.randn(5, 4),))
    assert ep.graph_signature.lifted_tensor_constants == ("k",)
    assert ep.graph_signature.non_persistent_buffers == ("tmp",)
    assert "tmp" in ep.constants and "tmp" not in ep.state_dict
    mod = ep.module()
    assert sorted(dict(mod.named_buffers())) == sorted(dict(m.named_buffers()))
    assert "tmp" not in mod.state_dict()        # still non-persistent
    x = ember.randn(5, 4)
    for a, b in zip(mod(x), m(x)):
        close(a, b)


class _Pair(enn.Module):
    def forward(self, x, y, *, scale=2.0):
        return {"sum": (x + y) * scale, "prod": x * y}


def test_function_of_two_inputs_with_a_shared_dynamic_batch():
    batch = Dim("batch")
    ep = export(_Pair(), (ember.randn(4, 3),), {"y": ember.randn(4, 3)},
                dynamic_shapes={"x": {0: batch}, "y": {0: batch}})
    mod = ep.module()
    for n in (2, 9):
        x, y = ember.randn(n, 3), ember.randn(n, 3)
        out = mod(x, y=y)
        close(out["sum"], (x + y) * 2.0)
        close(out["prod"], x * y)
    with pytest.raises(AssertionError, match="Guard failed"):
        mod(ember.randn(5, 3), y=ember.randn(6, 3))
    with pytest.raises(ValueError, match="tree spec"):
        mod(ember.randn(5, 3), ember.randn(5, 3))


def test_derived_dim_and_dims():
    class Fold(enn.Module):
        def forward(self, x, y):
            return y.view(2, -1, 2).sum(0) + x
    b = Dim("b")
    ep = export(Fold(), (ember.randn(3, 2), ember.randn(6, 2)),
                dynamic_shapes=({0: b}, {0: 2 * b}))
    x, y = ember.randn(5, 2), ember.randn(10, 2)
    close(ep.module()(x, y), Fold()(x, y))
    with pytest.raises(AssertionError):
        ep.module()(ember.ones(5, 2), ember.ones(9, 2))
    a, c = dims("a", "c", min=3)
    ta, tc = torch.export.dims("a", "c", min=3)
    assert (a.__name__, a.min, repr(a)) == (ta.__name__, ta.min, repr(ta))
    assert repr(2 * b + 1) == repr(2 * torch.export.Dim("b") + 1)


def test_dim_auto_specialises_and_static_constraints():
    class V(enn.Module):
        def forward(self, x):
            return x.view(4, -1)
    ep = export(V(), (ember.randn(4, 3),), dynamic_shapes=({0: Dim.AUTO},))
    assert ep.range_constraints == {}
    with pytest.raises(UserError, match="Constraints violated"):
        export(V(), (ember.randn(4, 3),), dynamic_shapes=({0: Dim("b")},))
    with pytest.raises(torch._dynamo.exc.UserError, match="Constraints violated"):
        torch.export.export(_TV(), (torch.randn(4, 3),), dynamic_shapes=({0: torch.export.Dim(
            "b")},))
    with pytest.raises(ConstraintViolationError, match="Static shape constraint"):
        export(V(), (ember.randn(4, 3),), dynamic_shapes=({0: 3},))
    with pytest.raises(ConstraintViolationError, match="not in range"):
        export(V(), (ember.randn(4, 3),), dynamic_shapes=({0: Dim("b", min=5)},))


class _TV(torch.nn.Module):
    def forward(self, x):
        return x.view(4, -1)


def test_two_dims_that_must_be_equal():
    class Add(enn.Module):
        def forward(self, x, y):
            return x + y

    class TAdd(torch.nn.Module):
        def forward(self, x, y):
            return x + y
    for lib, mod, err in ((ember, Add(), UserError), (torch, TAdd(), torch._dynamo.exc.UserError)):
        D = lib.export.Dim
        with pytest.raises(err, match="must always be equal"):
            lib.export.export(mod, (lib.randn(4, 3), lib.randn(4, 3)),
                              dynamic_shapes={"x": {0: D("b")}, "y": {0: D("c")}})
        with pytest.raises(err, match="specialized it to be a constant"):
            lib.export.export(mod, (lib.randn(1, 3), lib.randn(1, 3)),
                              dynamic_shapes={"x": {0: D("b")}, "y": {0: D("b")}})


class _Branch(enn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x.sin()
        return x.cos()


class _TBranch(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x.sin()
        return x.cos()


def test_data_dependent_control_flow_is_an_error():
    with pytest.raises(GuardOnDataDependentSymNode, match="data-dependent"):
        export(_Branch(), (ember.randn(3),))
    with pytest.raises(torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode):
        torch.export.export(_TBranch(), (torch.randn(3),))
    with pytest.raises(Unsupported, match="ember.cond"):
        export(_Branch(), (ember.randn(3),), strict=True)

    class Mask(enn.Module):
        def forward(self, x):
            return x[x > 0]
    with pytest.raises(RuntimeError, match="boolean mask|data"):
        export(Mask(), (ember.randn(3),))


@pytest.mark.parametrize("call,err", [
    (lambda: export(lambda x: x, (ember.randn(2),)), ValueError),
    (lambda: export(_mlp(), [ember.randn(2, 6)]), UserError),
    (lambda: export(_Pair(), (ember.randn(2, 3), ember.randn(2, 3)),
                    dynamic_shapes={"x": {0: Dim("b")}, "z": None}), UserError),
    (lambda: export(_Pair(), (ember.randn(2, 3), ember.randn(2, 3)),
                    dynamic_shapes=({0: Dim("b")},)), UserError),
    (lambda: export(_Pair(), (ember.randn(2, 3), ember.randn(2, 3)),
                    dynamic_shapes=({5: Dim("b")}, None)), UserError),
])
def test_bad_calls(call, err):
    with pytest.raises(err):
        call()


class _Gate(enn.Module):
    def __init__(self):
        super().__init__()
        self.lin = enn.Linear(3, 3)

    def forward(self, x):
        y = ember.cond(x.sum() > 0, lambda a: self.lin(a).relu(), lambda a: a.sin() * 2, (x,))
        n = ember.tensor(0)
        return ember.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 0.5 + 1), (n, y))[1]


def test_cond_and_while_loop_are_exported_whole():
    m = _Gate()
    ep = export(m, (ember.randn(2, 3),), dynamic_shapes=({0: Dim("b")},))
    names = {n for n, _ in ep.graph_module.named_children()}
    assert {"true_graph_0", "false_graph_0", "while_loop_cond_graph_0",
            "while_loop_body_graph_0"} <= names
    mod = ep.module()
    for n in (2, 7):
        x = ember.randn(n, 3)
        close(mod(x.abs()), m(x.abs()))
        close(mod(-x.abs()), m(-x.abs()))


def test_python_pred_in_export_warns_and_specialises():
    class P(enn.Module):
        def forward(self, x):
            return ember.cond(x.shape[0] > 100, lambda a: a + 1, lambda a: a - 1, (x,))
    with pytest.warns(UserWarning, match="Pred is a Python constant"):
        ep = export(P(), (ember.ones(3),))
    assert ep.module()(ember.ones(3)).tolist() == [0.0, 0.0, 0.0]


def test_run_decompositions_and_str():
    m = _mlp()
    ep = export(m, (ember.randn(3, 6),))
    ep2 = ep.run_decompositions()
    x = ember.randn(3, 6)
    close(ep2.module()(x), m(x))
    relu = ember.ops.ember.relu
    ep3 = ep.run_decompositions({relu: lambda a: ember.ops.ember.clamp_min(a, 0.0)
                                 if hasattr(ember.ops.ember, "clamp_min")
                                 else ember.where(a > 0, a, ember.zeros_like(a))})
    close(ep3.module()(x), m(x))
    assert not any(n.target is relu for n in ep3.graph.nodes)
    assert "Graph signature" in str(ep) and "p_0_weight: PARAMETER" in str(ep)
