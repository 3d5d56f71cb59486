"""ember.futures against torch.futures (futures set by hand; the futures of MPI operations
are tested in tests/distributed)."""
import pytest

import ember
from ember import futures as ef

torch = pytest.importorskip("torch")
tf = torch.futures


@pytest.mark.parametrize("mod", [ef, tf], ids=["ember", "torch"])
def test_then_chains_values_in_order(mod):
    f = mod.Future()
    order = []
    g = f.then(lambda fut: order.append("then") or fut.value() + 1)
    f.add_done_callback(lambda fut: order.append("callback"))
    h = g.then(lambda fut: fut.wait() * 10)
    assert not f.done() and not g.done()
    f.set_result(4)
    assert f.done() and g.done() and h.done()
    assert (f.wait(), f.value(), g.value(), h.wait()) == (4, 4, 5, 50)
    assert order == ["then", "callback"]
    # a callback added after completion runs at once
    late = []
    f.add_done_callback(lambda fut: late.append(fut.value()))
    assert late == [4] and f.then(lambda fut: fut.value() * 2).wait() == 8


@pytest.mark.parametrize("mod", [ef, tf], ids=["ember", "torch"])
def test_errors(mod):
    f = mod.Future()
    f.set_exception(ValueError("boom"))
    with pytest.raises(ValueError, match="boom"):
        f.wait()
    with pytest.raises(ValueError, match="boom"):
        f.value()
    # the callback still runs; a callback reading the value fails the chained future
    assert f.then(lambda fut: 1).wait() == 1
    with pytest.raises(RuntimeError, match="Got the following error when running the callback: "
                                           "ValueError: boom"):
        f.then(lambda fut: fut.value()).wait()
    ok = mod.Future()
    ok.set_result(1)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ok.then(lambda fut: 1 / 0).wait()
    with pytest.raises(RuntimeError, match="can only be marked completed once"):
        ok.set_result(2)
    with pytest.raises(AssertionError, match="not an Exception"):
        mod.Future().set_exception(3)
    with pytest.raises(RuntimeError):
        mod.Future().value()              # not completed yet


@pytest.mark.parametrize("mod", [ef, tf], ids=["ember", "torch"])
def test_collect_all_and_wait_all(mod):
    a, b = mod.Future(), mod.Future()
    both = mod.collect_all([a, b])
    a.set_result(1)
    assert not both.done()
    b.set_result(ember.ones(2) if mod is ef else torch.ones(2))
    got = both.wait()
    assert both.done() and len(got) == 2 and got[0].value() == 1
    assert got[1].value().tolist() == [1.0, 1.0]
    assert mod.wait_all([a, b])[0] == 1
    c = mod.Future()
    c.set_exception(KeyError("k"))
    with pytest.raises(KeyError):
        mod.wait_all([a, c])
    with pytest.raises(KeyError):
        mod.collect_all([a, c]).wait()
    assert mod.collect_all([]).wait() == []


def test_type_errors_and_names():
    with pytest.raises(TypeError):
        ef.collect_all([1])
    assert ef.__all__ == tf.__all__ == ["Future", "collect_all", "wait_all"]
    assert ember.futures.Future[ember.Tensor] == ef.Future[ember.Tensor]


def test_waiting_on_a_future_nothing_can_complete_raises():
    # PyTorch would block forever here
    with pytest.raises(RuntimeError, match="not tied to an operation"):
        ef.Future().wait()
