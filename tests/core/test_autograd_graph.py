"""autograd.graph (saved-tensor hooks, save_on_cpu, gradient edges, multi-grad hooks,
increment_version), Variable, grad-mode switches, checkpoint's extra names, amp's
custom_fwd/custom_bwd and testing.assert_allclose, against torch where it computes."""
import numpy as np
import pytest
import torch

import ember
from ember.autograd import graph


def _run(mod, x_np, hooks):
    x = mod.tensor(x_np, requires_grad=True)
    with hooks(mod):
        y = (x * x).exp().sum()
    y.backward()
    return x.grad


def test_saved_tensors_hooks_pack_and_unpack():
    x = np.array([0.5, -1.0, 2.0])
    log = {"ember": [0, 0], "torch": [0, 0]}

    def hooks(mod):
        key = "ember" if mod is ember else "torch"

        def pack(t):
            log[key][0] += 1
            return t.clone() * 1                # stored as something else

        def unpack(t):
            log[key][1] += 1
            return t
        return mod.autograd.graph.saved_tensors_hooks(pack, unpack)
    ge, gt = _run(ember, x, hooks), _run(torch, x, hooks)
    np.testing.assert_allclose(ge.numpy(), gt.numpy())
    assert log["ember"][0] > 0 and log["ember"][1] == log["ember"][0]
    assert ember.autograd.graph is graph and graph.saved_tensors_hooks.__module__ == \
        "ember.autograd.graph"


def test_unpack_hook_values_are_used():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t * 0 + 10):
        y = x * x                      # saves x twice: the gradient sees the unpacked 10s
    y.sum().backward()
    assert x.grad.tolist() == [20.0, 20.0]


def test_nested_hooks_innermost_wins_and_pack_runs_without_hooks():
    seen = []
    x = ember.tensor([1.0], requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: seen.append("outer") or t, lambda t: t):
        with graph.saved_tensors_hooks(lambda t: seen.append("inner") or (t * 1), lambda t: t):
            y = x.sin()
    y.backward()
    assert seen == ["inner"] and x.grad.item() == pytest.approx(np.cos(1.0))


def test_save_on_cpu_and_disable():
    x = ember.tensor([1.0, 3.0], requires_grad=True)
    with graph.save_on_cpu(pin_memory=False):
        y = (x ** 3).sum()
    y.backward()
    assert x.grad.tolist() == [3.0, 27.0]
    with graph.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):   # allowed again after
        pass


def test_gradient_edge_and_multi_grad_hook():
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = ember.tensor([3.0], requires_grad=True)
    y = a * 2
    edge = graph.get_gradient_edge(y)
    assert edge.node is y.grad_fn and edge.output_nr == 0
    assert graph.get_gradient_edge(a).node is not None
    with pytest.raises(RuntimeError, match="gradient edge"):
        graph.get_gradient_edge(ember.ones(1))
    calls = []
    handle = graph.register_multi_grad_hook((a, b), lambda grads: calls.append(
        [None if g is None else g.tolist() for g in grads]))
    (a.sum() * 2 + b.sum()).backward()
    assert calls == [[[2.0, 2.0], [1.0]]]
    a.grad = b.grad = None
    (a.sum()).backward()                    # b gets no gradient: None in its place
    assert calls[-1] == [[1.0, 1.0], None]
    handle.remove()
    a.sum().backward()
    assert len(calls) == 2
    got = []
    graph.register_multi_grad_hook((a, b), lambda g: got.append(g.tolist()), mode="any")
    (b * 5).sum().backward()
    assert got == [[5.0]]


def test_multi_grad_hook_matches_torch_all_mode():
    out = {}
    for mod in (ember, torch):
        a = mod.tensor([1.0, 2.0], requires_grad=True)
        b = mod.tensor([3.0], requires_grad=True)
        res = []
        mod.autograd.graph.register_multi_grad_hook(
            (a, b), lambda gs, res=res: res.append([g is None for g in gs]))
        (a * 3).sum().backward()
        out[mod.__name__] = res
    assert out["ember"] == out["torch"]


def test_increment_version_and_variable():
    x = ember.ones(2)
    v = x._version
    graph.increment_version(x)
    graph.increment_version([x, x])
    assert x._version == v + 3
    assert isinstance(ember.ones(1), ember.autograd.Variable)
    var = ember.autograd.Variable(ember.ones(2), requires_grad=True)
    assert var.requires_grad and isinstance(var, ember.Tensor)


def test_grad_mode_switches():
    ag = ember.autograd
    with ag.set_multithreading_enabled(False):
        x = ember.ones(1, requires_grad=True)
        (x * 2).backward()
    assert x.grad.item() == 2.0
    assert ember.is_grad_enabled()
    with ag.grad_mode.set_grad_enabled(False):
        assert not ember.is_grad_enabled()
    assert ember.is_grad_enabled()


def test_checkpoint_extras():
    from ember.utils import checkpoint as ck
    lin = ember.nn.Linear(3, 3)
    x = ember.randn(2, 3, requires_grad=True)
    ctx_fn = lambda: ck.create_selective_checkpoint_contexts(   # noqa: E731
        lambda ctx, op, *a, **k: ck.CheckpointPolicy.PREFER_RECOMPUTE)
    y = ck.checkpoint(lambda t: lin(t).relu().sum(), x, use_reentrant=False, context_fn=ctx_fn)
    y.backward()
    g = x.grad.clone()
    x.grad = None
    lin(x).relu().sum().backward()
    np.testing.assert_allclose(g.numpy(), x.grad.numpy(), rtol=1e-6)
    assert issubclass(ck.CheckpointError, RuntimeError)
    assert {p.name for p in ck.CheckpointPolicy} == {p.name for p in
                                                     torch.utils.checkpoint.CheckpointPolicy}
    with pytest.raises(TypeError):
        ck.create_selective_checkpoint_contexts(3)
    a, b = ck.noop_context_fn()
    with a, b:
        pass
    x2 = ember.randn(2, 3, requires_grad=True)
    out = ck.CheckpointFunction.apply(lambda t: (t * t).sum(), True, x2)
    out.backward()
    np.testing.assert_allclose(x2.grad.numpy(), 2 * x2.detach().numpy(), rtol=1e-6)
    d = ck.detach_variable((ember.ones(1, requires_grad=True),))
    assert d[0].requires_grad and d[0].grad_fn is None


def test_custom_fwd_bwd():
    from ember.amp import custom_bwd, custom_fwd
    seen = {}

    class Mul(ember.autograd.Function):
        @staticmethod
        @custom_fwd(device_type="cpu", cast_inputs=ember.float32)
        def forward(ctx, a, b):
            seen["fwd"] = (a.dtype, ember.is_autocast_enabled("cpu"))
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        @custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["bwd"] = ember.is_autocast_enabled("cpu")
            a, b = ctx.saved_tensors
            return g * b, g * a

    a = ember.ones(2, dtype=ember.bfloat16, requires_grad=True)
    b = ember.ones(2, dtype=ember.bfloat16)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        out = Mul.apply(a, b)
    assert seen["fwd"] == (ember.float32, False) and out.dtype == ember.float32
    out.sum().backward()
    assert seen["bwd"] is False and a.grad.dtype == ember.bfloat16

    class Plain(ember.autograd.Function):
        @staticmethod
        @custom_fwd(device_type="cpu")
        def forward(ctx, a):
            seen["plain"] = ember.is_autocast_enabled("cpu")
            return a * 2

        @staticmethod
        @custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["plain_bwd"] = ember.is_autocast_enabled("cpu")
            return g * 2

    x = ember.ones(2, requires_grad=True)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        y = Plain.apply(x)
    y.sum().backward()
    assert seen["plain"] is True and seen["plain_bwd"] is True


def test_testing_assert_allclose():
    ember.testing.assert_allclose(ember.tensor([1.0, 2.0]), [1.0, 2.0 + 1e-9])
    with pytest.raises(AssertionError):
        ember.testing.assert_allclose(ember.tensor([1.0]), ember.tensor([1.1]))
    ember.testing.assert_allclose(ember.tensor([1.0]), ember.tensor([1.05]), rtol=0.1, atol=0)
    with pytest.raises(ValueError):
        ember.testing.assert_allclose(ember.ones(1), ember.ones(1), rtol=0.1)


# An op's output changed in place afterwards (``ReLU(inplace=True)`` after BatchNorm or a
# pooling layer): PyTorch allows it where the backward does not read that output, and raises
# where it does.  ember must agree both ways: never a false error, never a gradient dropped.
_INPLACE_AFTER = [
    ("batch_norm", lambda F, x: F.batch_norm(x, None, None, training=True), True),
    ("layer_norm", lambda F, x: F.layer_norm(x, x.shape[-1:]), True),
    ("max_pool2d", lambda F, x: F.max_pool2d(x, 2), True),
    ("adaptive_max_pool2d", lambda F, x: F.adaptive_max_pool2d(x, 2), True),
    ("cross_entropy(none)", lambda F, x: F.cross_entropy(
        x.flatten(1), x.new_zeros(x.shape[0]).long(), reduction="none"), True),
    ("cummax", lambda F, x: x.cummax(1).values, True),
    ("softmax", lambda F, x: F.softmax(x, -1), False),
    ("vector_norm", lambda F, x: x.norm(dim=1), False),
]


@pytest.mark.parametrize("name,make,allowed", _INPLACE_AFTER, ids=[c[0] for c in _INPLACE_AFTER])
def test_output_changed_in_place_as_pytorch(name, make, allowed):
    import numpy as np
    import torch
    arr = np.random.default_rng(0).standard_normal((2, 3, 4, 4))
    results = []
    for lib in (ember, torch):
        x = lib.tensor(arr, requires_grad=True)
        y = make(lib.nn.functional, x)
        y.mul_(2)
        try:
            (y * y).sum().backward()
        except RuntimeError as e:
            assert "modified by an inplace operation" in str(e)
            results.append(None)
            continue
        assert x.grad is not None, f"{lib.__name__}: the gradient was dropped"
        results.append(x.grad.detach().numpy())
    if allowed:
        np.testing.assert_allclose(results[0], results[1], rtol=1e-6, atol=1e-8)
    else:
        assert results == [None, None]


@pytest.mark.parametrize("write", [
    lambda y, b: y.add_(b), lambda y, b: y.mul_(2.0), lambda y, b: y.mul_(b),
    lambda y, b: y.div_(b), lambda y, b: y.sigmoid_(), lambda y, b: y.__iadd__(b),
    lambda y, b: y[:, :2].mul_(2.0), lambda y, b: y.clamp_(-1, 1)])
def test_in_place_write_on_a_graph_leaves_no_reference_cycle(write):
    """A graph is freed when its last tensor goes, not when the garbage collector runs:
    an in-place write's node must not hold the tensor it wrote (`out=self`)."""
    import gc
    x = ember.randn(4, 5, requires_grad=True)
    b = ember.randn(5, requires_grad=True)
    write(x * 1, b)                      # warm up lazy imports
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        y = x * 1
        write(y, b)
        del y
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def test_mul_in_place_by_a_number_keeps_no_copy_of_self():
    """mul_/div_ read self only for the other operand's gradient (SELF_FOR_OTHERS): with a
    number or a tensor without grad there is nothing to keep; with one there is."""
    x = ember.randn(3, 4, requires_grad=True)
    for other, saved in [(2.0, False), (ember.randn(4), False),
                         (ember.randn(4, requires_grad=True), True)]:
        y = x * 1
        y.mul_(other)
        assert (y.grad_fn.args[0] is not None) == saved
        y.sum().backward()
        ref = other if isinstance(other, float) else other.detach()
        np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(
            np.asarray(ref, np.float32), (3, 4)), rtol=1e-6)
        x.grad = None
