"""ember.cond and ember.while_loop: eager against PyTorch, and kept whole by ember.compile."""
import numpy as np
import pytest

import ember
from ember._dynamo.exc import CondOpArgsMismatchError, UncapturedHigherOrderOpError, Unsupported
from ember._dynamo.utils import counters

torch = pytest.importorskip("torch")


def tt(x):
    return torch.from_numpy(np.array(x.detach().numpy()))


def close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)


def _capture(graphs):
    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    return backend


def _hop_nodes(gm, name):
    return [n for n in gm.graph.nodes if n.op == "call_function"
            and getattr(n.target, "_fx_qualname", "") == f"ember.ops.higher_order.{name}"]


# ---- eager cond --------------------------------------------------------------------------

@pytest.mark.parametrize("pred", [True, False, 1, 0.0])
def test_cond_python_pred(pred):
    x = np.random.randn(3).astype(np.float32)
    e = ember.cond(pred, lambda a: a.sin(), lambda a: a.cos(), (ember.tensor(x),))
    t = torch.cond(pred, lambda a: a.sin(), lambda a: a.cos(), (torch.tensor(x),))
    close(e, t)


@pytest.mark.parametrize("value", [[True], [False], [[1.5]], [0], [[[True]]]])
def test_cond_tensor_pred_and_grad(value):
    x = np.random.randn(4, 3).astype(np.float32)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ep, tp = ember.tensor(value), torch.tensor(value)
    e = ember.cond(ep, lambda a, b: (a * b).sin(), lambda a, b: a.exp() - b, [ex, ex * 2])
    t = torch.cond(tp, lambda a, b: (a * b).sin(), lambda a, b: a.exp() - b, [tx, tx * 2])
    close(e, t)
    e.sum().backward()
    t.sum().backward()
    close(ex.grad, tx.grad)


def test_cond_nested_operands_and_outputs():
    x = np.random.randn(2, 2).astype(np.float32)

    def br(scale):
        return lambda d, xs: {"out": (d["a"] * scale + xs[0], xs[1] - 1)}
    e = ember.cond(ember.tensor(False), br(2), br(3),
                   ({"a": ember.tensor(x)}, [ember.tensor(x), ember.tensor(x)]))
    t = torch.cond(torch.tensor(False), br(2), br(3),
                   ({"a": torch.tensor(x)}, [torch.tensor(x), torch.tensor(x)]))
    for a, b in zip(e["out"], t["out"]):
        close(a, b)


@pytest.mark.parametrize("case", ["two_elements", "string_pred", "not_callable", "int_operand",
                                  "operand_not_tuple"])
def test_cond_argument_errors_match_torch(case):
    def call(lib):
        x = lib.ones(3)
        pred = {"two_elements": lib.tensor([True, False]), "string_pred": "yes"}.get(
            case, lib.tensor(True))
        false_fn = 3 if case == "not_callable" else (lambda a, *r: a.cos())
        ops = {"int_operand": (x, 3), "operand_not_tuple": x}.get(case, (x,))
        return lib.cond(pred, lambda a, *r: a.sin(), false_fn, ops)
    with pytest.raises(Exception) as te:
        call(torch)
    with pytest.raises(Exception) as ee:
        call(ember)
    assert type(ee.value) is type(te.value) is RuntimeError
    assert str(ee.value)[:30] == str(te.value)[:30]


@pytest.mark.parametrize("fn", [lambda a: a.add_(1), lambda a: a, lambda a: a[:2]])
def test_cond_refuses_mutation_and_aliasing_while_recording_grad(fn):
    for lib, err in ((torch, torch._dynamo.exc.UncapturedHigherOrderOpError),
                     (ember, UncapturedHigherOrderOpError)):
        with pytest.raises(err, match="aliasing|mutation"):
            lib.cond(lib.tensor(True), fn, lambda a: a.cos(), (lib.ones(3),))
        with lib.no_grad():                 # allowed during inference, as in PyTorch
            lib.cond(lib.tensor(True), fn, lambda a: a.cos(), (lib.ones(3),))


# ---- cond under ember.compile ------------------------------------------------------------

W = ember.randn(3)


def _f(x, y):
    z = x * 2
    return ember.cond(x.sum() > 0, lambda a: a.sin() + W + z, lambda a: a.cos() * y, (x,)) + 1


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_compiled_cond_is_one_graph_with_both_branches(backend):
    graphs = []
    be = _capture(graphs) if backend == "eager" else "inductor"
    cf = ember.compile(_f, backend=be)
    y = ember.randn(3)
    for x in (ember.randn(3).abs(), -ember.randn(3).abs(), ember.randn(3).abs()):
        close(cf(x, y), _f(x, y))
    assert counters["stats"]["unique_graphs"] == 1
    assert not counters["graph_break"]
    if graphs:
        (node,) = _hop_nodes(graphs[0], "cond")
        true_gm, false_gm = node.args[1], node.args[2]
        assert "sin" in true_gm.code and "cos" in false_gm.code
        # both branches take the same inputs: the operand, then what they read from outside
        ph = [[n.name for n in g.graph.nodes if n.op == "placeholder"] for g in (true_gm,
                                                                              false_gm)]
        assert len(ph[0]) == len(ph[1]) == 4


def test_compiled_cond_untaken_branch_does_not_run():
    def f(x, buf):
        return ember.cond(x.sum() > 0, lambda a: a.mul(2), lambda a: buf.add_(1) * a, (x,))
    cf = ember.compile(f, backend="eager")
    with ember.no_grad():
        buf = ember.zeros(3)
        cf(ember.ones(3), buf)             # captured with the true branch taken
        assert buf.tolist() == [0.0, 0.0, 0.0]
        cf(-ember.ones(3), buf)            # replay: the false branch writes now
        assert buf.tolist() == [1.0, 1.0, 1.0]
    assert counters["stats"]["unique_graphs"] == 1


class _Gate(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = ember.nn.Linear(3, 3)

    def forward(self, x):
        return ember.cond(x.mean() > 0, lambda a: self.lin(a).relu(), lambda a: a * 2, (x,))


def test_compiled_cond_reads_parameters_in_a_branch():
    m = _Gate()
    cm = ember.compile(m, backend="eager")
    with ember.no_grad():
        x = ember.randn(2, 3).abs()
        close(cm(x), m(x))
        m.lin.weight.mul_(2)            # the graph reads the parameter, not a copy
        close(cm(x), m(x))
        close(cm(-x), m(-x))
    assert counters["stats"]["unique_graphs"] == 1


def test_compiled_cond_symbolic_pred_keeps_both_branches():
    def f(x):
        return ember.cond(x.shape[0] > 4, lambda a: a.sin(), lambda a: a.cos(), (x,)) * 2
    cf = ember.compile(f, dynamic=True, backend="eager")
    for n in (3, 5, 8, 2):
        x = ember.randn(n)
        close(cf(x), f(x))
    assert counters["stats"]["unique_graphs"] == 1


def test_compiled_cond_data_dependent_dynamic():
    def f(x, y):
        z = x * 2
        return ember.cond(x.sum() > 0, lambda a: a.sin() + z, lambda a: a.cos() * y, (x,)) + 1
    cf = ember.compile(f, dynamic=True, backend="eager")
    for n in (3, 6):
        x, y = ember.randn(n).abs(), ember.randn(n)
        close(cf(x, y), f(x, y))
        close(cf(-x, y), f(-x, y))
    assert counters["stats"]["unique_graphs"] == 1


def test_compiled_cond_with_grad_breaks_and_stays_exact():
    def g(x):
        return ember.cond(x.sum() > 0, lambda a: a.sin(), lambda a: a.cos(), (x,)) * 2
    x = ember.randn(3, requires_grad=True)
    tx = tt(x).requires_grad_()
    out = ember.compile(g, backend="eager")(x)
    out.sum().backward()
    tout = torch.cond(tx.sum() > 0, lambda a: a.sin(), lambda a: a.cos(), (tx,)) * 2
    tout.sum().backward()
    close(out, tout)
    close(x.grad, tx.grad)
    assert any("gradients would flow" in r for r in counters["graph_break"])
    with pytest.raises(Unsupported, match="gradients would flow"):
        ember.compile(g, backend="eager", fullgraph=True)(x)
    with ember.no_grad():
        ember.compile(g, backend="eager", fullgraph=True)(x)


def test_compiled_cond_branch_sizes_differ_breaks():
    def d(x):
        return ember.cond(x.sum() > 0, lambda a: a[:2] * 1, lambda a: a * 2, (x,))
    out = ember.compile(d, backend="eager")(ember.ones(3))
    assert out.tolist() == [1.0, 1.0]
    assert any("different sizes" in r for r in counters["graph_break"])


@pytest.mark.parametrize("branch,err", [
    (lambda a: a.double(), "dtype"),
    (lambda a: (a, a * 2), "spec"),
    (lambda a: a.unsqueeze(0), "dim"),
])
def test_compiled_cond_mismatched_branches_raise(branch, err):
    def f(x):
        return ember.cond(x.sum() > 0, lambda a: a * 2, branch, (x,))
    exc = CondOpArgsMismatchError if err == "spec" else UncapturedHigherOrderOpError
    with pytest.raises((exc, UncapturedHigherOrderOpError, CondOpArgsMismatchError),
                       match="number of outputs|spec|dtype|dim"):
        ember.compile(f, backend="eager")(ember.ones(3))


def test_cond_graph_form_is_an_op():
    from ember._higher_order_ops.cond import cond_op
    from ember._higher_order_ops.while_loop import while_loop_op
    assert ember.ops.higher_order.cond is cond_op
    assert ember.ops.higher_order.while_loop is while_loop_op
    assert ember._higher_order_ops.cond is ember.cond       # as torch._higher_order_ops.cond
    assert torch._higher_order_ops.cond is torch.cond


# ---- while_loop --------------------------------------------------------------------------

def _loop(lib, i0, x):
    return lib.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2 + 1), (i0, x))


@pytest.mark.parametrize("start", [0, 2, 5])
def test_while_loop_eager_matches_torch(start):
    x = np.random.randn(3).astype(np.float32)
    ei, ex = _loop(ember, ember.tensor(start), ember.tensor(x))
    ti, tx = _loop(torch, torch.tensor(start), torch.tensor(x))
    assert ei.item() == ti.item()
    close(ex, tx)


def test_while_loop_zero_trips_returns_copies_and_grad():
    x = ember.ones(3)
    _, out = _loop(ember, ember.tensor(7), x)
    assert out is not x and out.tolist() == x.tolist()
    x = ember.ones(3, requires_grad=True)
    tx = torch.ones(3, requires_grad=True)
    _loop(ember, ember.tensor(0), x)[1].sum().backward()
    _loop(torch, torch.tensor(0), tx)[1].sum().backward()
    close(x.grad, tx.grad)


def test_while_loop_nested_carry_and_ints():
    out = ember.while_loop(lambda i, xs: i < 3, lambda i, xs: (i + 1, (xs[0] * 2, xs[1] + 1)),
                           (0, (ember.ones(2), ember.zeros(2))))
    assert out[0] == 3 and out[1][0].tolist() == [8.0, 8.0] and out[1][1].tolist() == [3., 3.]


@pytest.mark.parametrize("case", ["not_callable", "bad_carry", "bad_pred", "bad_count",
                                  "bad_dtype"])
def test_while_loop_errors(case):
    def call(lib):
        i = lib.tensor(0)
        cond = {"not_callable": 3, "bad_pred": lambda i, x: i + 3}.get(case, lambda i, x: i < 3)
        body = {"bad_count": lambda i, x: (i + 1,),
                "bad_dtype": lambda i, x: (i + 1, x.double())}.get(case, lambda i, x: (i + 1, x))
        carry = (i, lib.ones(2), "s") if case == "bad_carry" else (i, lib.ones(2))
        return lib.while_loop(cond, body, carry)
    with pytest.raises(Exception) as te:
        call(torch)
    with pytest.raises(RuntimeError):
        call(ember)
    assert isinstance(te.value, (RuntimeError, AssertionError))


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_compiled_while_loop_one_graph_any_trip_count(backend):
    graphs = []
    be = _capture(graphs) if backend == "eager" else backend
    ch = ember.compile(lambda i, x: _loop(ember, i, x), backend=be)
    for k in (0, 2, 5, 1):
        a, b = ch(ember.tensor(k), ember.ones(4)), _loop(ember, ember.tensor(k), ember.ones(4))
        assert a[0].item() == b[0].item()
        close(a[1], b[1])
    assert counters["stats"]["unique_graphs"] == 1
    if graphs:
        assert len(_hop_nodes(graphs[0], "while_loop")) == 1


def test_compiled_while_loop_int_carry_breaks():
    def h(x):
        return ember.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (0, x))
    out = ember.compile(h, backend="eager")(ember.ones(2))
    assert out[0] == 3 and out[1].tolist() == [8.0, 8.0]
    assert any("Python int" in r for r in counters["graph_break"])
