"""Values read into Python during a capture (``if x.sum() > 0``, ``int(n)``): PyTorch breaks
the graph there and resumes after it; ember's graph goes on for the values read and checks
them after it runs.  Results are always eager's; a replay whose values differ is dropped
and another graph (or a new capture) answers."""
import ember.nn as nn
import pytest

import ember
from ember._dynamo import eval_frame
from ember._dynamo.convert import EagerEntry, GraphEntry
from ember._dynamo.exc import Unsupported
from ember._dynamo.utils import counters


def _entries(cf):
    compiled = cf.__dict__["_compiled"] if isinstance(cf, nn.Module) else cf._ember_compiled
    return [type(e) for e in compiled.entries]


def _branchy(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_each_branch_gets_a_graph_and_later_calls_replay(backend, close):
    cf = ember.compile(_branchy, backend=backend)
    pos, neg = ember.rand(5) + 0.1, -ember.rand(5) - 0.1
    for x in (pos, neg, pos, neg, pos, neg):
        close(cf(x), _branchy(x))
    assert _entries(cf) == [GraphEntry, GraphEntry]
    assert counters["stats"]["calls_captured"] == 2           # four calls replayed
    assert counters["stats"]["value_guard_misses"] >= 1
    # PyTorch's accounting: the read is a graph break, and logged as one
    assert any(r.startswith("data-dependent: item()") for r in counters["graph_break"])


def test_an_integer_read_sizes_the_rest_of_the_graph(close):
    def f(x, lengths):
        n = int(lengths.max())
        return x[:, :n].sum(1), x[:, :n] * 2
    cf = ember.compile(f, backend="eager")
    x = ember.randn(3, 8)
    for n in (5, 7, 5, 7):
        lengths = ember.tensor([2, n, 1])
        close(cf(x, lengths), f(x, lengths))
    assert _entries(cf) == [GraphEntry, GraphEntry]


def test_values_that_keep_changing_end_in_eager_calls(close):
    def f(x):
        return x * x.max().item()
    cf = ember.compile(f, backend="eager")
    for _ in range(eval_frame.VALUE_PATHS_MAX + 3):
        x = ember.randn(6)
        close(cf(x), f(x))
    assert _entries(cf) == [EagerEntry]
    assert not cf._ember_compiled.value_guards
    ember._dynamo.reset()
    assert cf._ember_compiled.value_guards


def test_a_graph_writing_outside_itself_or_drawing_random_numbers_breaks(close):
    def writes(x, buf):
        buf.add_(1)
        return x * 2 if x.sum() > 0 else x
    cf = ember.compile(writes, backend="eager")
    b1, b2 = ember.zeros(3), ember.zeros(3)
    x = ember.ones(3)
    close(cf(x, b1), writes(x, b2))
    close(cf(x, b1), writes(x, b2))
    close(b1, b2)                        # one write per call, as eager
    assert _entries(cf) == [EagerEntry]
    assert "writes into a tensor from outside" in cf._ember_compiled.entries[0].reason

    def draws(x):
        y = x + ember.rand(3)
        return y if y.sum() > 0 else -y
    cd = ember.compile(draws, backend="eager")
    cd(x)
    assert _entries(cd) == [EagerEntry]


def test_training_through_both_branches_matches_eager_gradients(close):
    class Clip(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            y = self.lin(x)
            if y.abs().max() > 3:
                y = y / 10
            return y.tanh().sum()

    ember.manual_seed(0)
    m = Clip()
    cm = ember.compile(m, backend="eager")
    for scale in (1.0, 100.0, 1.0, 100.0):
        x = ember.randn(2, 4) * scale
        m.zero_grad()
        ref = m(x)
        ref.backward()
        want = [p.grad.clone() for p in m.parameters()]
        m.zero_grad()
        out = cm(x)
        out.backward()
        close(out, ref)
        for p, g in zip(m.parameters(), want):
            close(p.grad, g)
    assert _entries(cm) == [GraphEntry, GraphEntry]


def test_fullgraph_still_raises_at_the_read():
    with pytest.raises(Unsupported, match="data-dependent: item"):
        ember.compile(_branchy, backend="eager", fullgraph=True)(ember.ones(3))


def test_large_and_numpy_reads_still_break(close):
    def big(x):
        return x + sum(x.tolist())
    cf = ember.compile(big, backend="eager")
    x = ember.randn(100)
    close(cf(x), big(x))
    assert _entries(cf) == [EagerEntry]
