"""The autograd engine and API: graph attributes, accumulation, retain_graph, hooks, grad
modes, in-place/version-counter rules, autograd.Function, functional, checkpoint."""
import gc
import threading

import numpy as np
import pytest

import ember
from ember import autograd

torch = pytest.importorskip("torch")


def leaf(*values):
    return ember.tensor(list(values), requires_grad=True)


def test_graph_attributes():
    a, b = leaf(1.0, 2.0), leaf(3.0, 4.0)
    y = (a * b).sum()
    assert a.is_leaf and a.grad_fn is None and a.requires_grad
    assert not y.is_leaf and y.grad_fn.name() == "SumBackward0"
    (mul, nr), = y.grad_fn.next_functions
    assert mul.name() == "MulBackward0" and nr == 0
    accs = [f for f, _ in mul.next_functions]
    assert [f.name() for f in accs] == ["torch::autograd::AccumulateGrad"] * 2
    assert accs[0].variable is a
    assert ember.ones(2).requires_grad is False and (a.detach().requires_grad is False)


def test_accumulates_and_reuses_leaves():
    x = leaf(1.0, 2.0, 3.0)
    (x * x + x).sum().backward()                   # a diamond through reuse
    assert x.grad.tolist() == [3.0, 5.0, 7.0]
    (x * 2).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0, 9.0]      # accumulated


def test_grad_is_not_aliased_with_user_gradient():
    a, b = leaf(1.0, 2.0), leaf(1.0, 2.0)
    g = ember.ones(2)
    (a + b).backward(g)
    a.grad.add_(1)
    assert g.tolist() == [1.0, 1.0] and b.grad.tolist() == [1.0, 1.0]


def test_retain_graph_and_second_backward_error():
    x = leaf(1.0, 2.0)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert np.allclose(x.grad.numpy(), 2 * (np.exp([1.0, 2.0]) * (1 + np.array([1.0, 2.0]))))
    z = (x.exp() * x).sum()
    z.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        z.backward()


def test_errors_match_torch():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        ember.ones(2).sum().backward()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0].mul_(2)
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        ember.ones(2, dtype=ember.int64).requires_grad_()
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.add(x, x, out=ember.empty(2))
    y = x * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf"):
        y.requires_grad = False


def test_modified_by_inplace_operation():
    x = leaf(1.0, 2.0)
    y = x * 1
    z = (y * y).sum()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*is at version 1; "
                                           "expected version 0"):
        z.backward()


def test_inplace_and_view_rebase_match_torch():
    def run(m):
        x = m.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        y = x * 2
        y[1:3].mul_(y[0:2].detach() + 1)
        y.add_(1)
        w = y.view(2, 2)
        w[:, 0] = x[:2] * 3
        (w * w).sum().backward()
        return x.grad.tolist()
    assert np.allclose(run(ember), run(torch))


def test_autograd_grad_and_create_graph():
    x = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    y = (x ** 3).sum()
    (g,) = autograd.grad(y, x, create_graph=True)
    assert g.tolist() == [3.0, 12.0] and g.requires_grad
    (h,) = autograd.grad(g.sum(), x)
    assert h.tolist() == [6.0, 12.0] and x.grad is None
    u = leaf(1.0)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd.grad((x * 2).sum(), [x, u])
    assert autograd.grad((x * 2).sum(), [x, u], allow_unused=True)[1] is None
    assert autograd.grad((x * 2).sum(), [u, x], materialize_grads=True)[0].tolist() == [0.0]


def test_backward_inputs_only_accumulates_there():
    a, b = leaf(1.0), leaf(2.0)
    c = a * b
    (c * c).backward(inputs=[a, c])
    assert a.grad is not None and b.grad is None and c.grad.tolist() == [4.0]


def test_hooks_and_retain_grad():
    x = leaf(1.0, 2.0)
    seen = []
    h = x.register_hook(lambda g: g * 10)
    y = x * 3
    y.retain_grad()
    y.register_hook(lambda g: seen.append(g.tolist()))
    post = []
    x.register_post_accumulate_grad_hook(lambda t: post.append(t.grad.tolist()))
    node_seen = []
    y.grad_fn.register_prehook(lambda gout: node_seen.append("pre"))
    y.grad_fn.register_hook(lambda gin, gout: node_seen.append("post"))
    y.sum().backward()
    assert x.grad.tolist() == [30.0, 30.0] and y.grad.tolist() == [1.0, 1.0]
    assert seen == [[1.0, 1.0]] and post == [[30.0, 30.0]] and node_seen == ["pre", "post"]
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_grad_modes_are_thread_local_and_decorators():
    x = leaf(1.0)
    with ember.no_grad():
        assert not ember.is_grad_enabled() and not (x * 2).requires_grad
        with ember.enable_grad():
            assert (x * 2).requires_grad
        other = []
        t = threading.Thread(target=lambda: other.append(ember.is_grad_enabled()))
        t.start()
        t.join()
        assert other == [True]
    with ember.inference_mode():
        assert ember.is_inference_mode_enabled() and not (x * 2).requires_grad
    assert ember.is_grad_enabled() and not ember.is_inference_mode_enabled()

    @ember.no_grad()
    def f(t):
        return t * 2
    assert not f(x).requires_grad
    ember.set_grad_enabled(False)
    assert not ember.is_grad_enabled()
    ember.set_grad_enabled(True)
    with ember.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad


def test_long_chain_runs_and_frees_without_recursion():
    x = leaf(1.0)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad.tolist() == [1.0]
    del y
    gc.collect()


def test_memory_does_not_grow_over_iterations():
    w = ember.randn(64, 64, requires_grad=True)
    x = ember.randn(32, 64)

    def step():
        loss = (x @ w).relu().square().mean()
        loss.backward()
        w.grad = None
    step()
    before = ember.cpu.memory_allocated()
    for _ in range(20):
        step()
    assert ember.cpu.memory_allocated() <= before


class Exp(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        r = x.exp()
        ctx.save_for_backward(r)
        return r

    @staticmethod
    def backward(ctx, g):
        (r,) = ctx.saved_tensors
        return g * r


class MulConst(autograd.Function):
    @staticmethod
    def forward(x, k):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]

    @staticmethod
    @autograd.once_differentiable
    def backward(ctx, g):
        return g * ctx.k, None


def test_custom_function_both_styles():
    x = ember.tensor([0.5, 1.0], dtype=ember.float64, requires_grad=True)
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward" and y.grad_fn.needs_input_grad == (True,)
    (MulConst.apply(y, 3.0)).sum().backward()
    assert np.allclose(x.grad.numpy(), 3 * np.exp([0.5, 1.0]))
    assert autograd.gradcheck(Exp.apply, (x,))


def test_custom_function_non_differentiable_and_dirty():
    class SortLike(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = ember.tensor([1, 0])
            ctx.mark_non_differentiable(idx)
            return x * 1, idx

        @staticmethod
        def backward(ctx, g, gi):
            return g

    class AddOneInPlace(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = leaf(1.0, 2.0)
    v, i = SortLike.apply(x)
    assert v.requires_grad and not i.requires_grad
    y = x * 1
    z = AddOneInPlace.apply(y)
    assert z is y and y.tolist() == [2.0, 3.0]
    (z * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        AddOneInPlace.apply(x)


class _SavesItsOutput(Exp):
    """Exp, which saves its own output for backward (as an LSTM layer saves its gates), and
    saves it for jvp too."""

    @staticmethod
    def forward(ctx, x):
        r = Exp.forward(ctx, x)
        ctx.save_for_forward(r)
        return r

    jvp = staticmethod(Exp.backward)        # both multiply by exp(x): the saved output


class _DirtiesItsInput(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return x.mul_(2)

    @staticmethod
    def backward(ctx, g):
        return g * 2


@pytest.mark.parametrize("case", ["saved output", "saved output, backward", "dirty",
                                  "forward AD"])
def test_custom_function_leaves_no_reference_cycle(case):
    """A custom Function's outputs and their node are freed with the last reference, not at
    the next full garbage collection: the ctx keeps what forward saved only as saved
    tensors (outputs without their grad_fn).  Kept raw, a saved output held its node,
    which held the output, and an LSTM program's saved gates piled up (~5 MB a step)."""
    from ember.autograd import forward_ad as fwAD
    x = ember.randn(64, 64, requires_grad=True)

    def run():
        if case == "dirty":
            _DirtiesItsInput.apply(x * 1).sum().backward()
        elif case == "forward AD":
            with fwAD.dual_level():
                y = _SavesItsOutput.apply(fwAD.make_dual(x.detach(), ember.ones(64, 64)))
                assert fwAD.unpack_dual(y).tangent is not None
        else:
            y = _SavesItsOutput.apply(x)
            if case.endswith("backward"):
                y.sum().backward()

    run()                                    # warm up lazy imports
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        before = ember.cpu.memory_allocated()
        run()
        assert ember.cpu.memory_allocated() - before <= 64 * 64 * 4   # at most x.grad
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def test_functional_jacobian_hessian_vjp_jvp():
    from ember.autograd import functional as F
    x = ember.tensor([1.0, 2.0], dtype=ember.float64)
    j = F.jacobian(lambda t: t ** 2, x)
    assert j.tolist() == [[2.0, 0.0], [0.0, 4.0]]
    h = F.hessian(lambda t: (t ** 3).sum(), x)
    assert h.tolist() == [[6.0, 0.0], [0.0, 12.0]]
    out, v = F.vjp(lambda t: t ** 2, x, ember.ones(2, dtype=ember.float64))
    assert v.tolist() == [2.0, 4.0]
    out, jv = F.jvp(lambda t: t ** 2, x, ember.ones(2, dtype=ember.float64))
    assert jv.tolist() == [2.0, 4.0]
    _, hv = F.hvp(lambda t: (t ** 3).sum(), x, ember.ones(2, dtype=ember.float64))
    assert hv.tolist() == [6.0, 12.0]


def test_detect_anomaly_names_the_forward_op():
    x = leaf(-1.0, 1.0)
    with autograd.detect_anomaly():
        y = x.sqrt()
        with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values"):
            y.sum().backward()


def test_checkpoint_matches_and_saves_memory():
    from ember.utils.checkpoint import checkpoint
    w = ember.randn(256, 256, requires_grad=True)

    def block(t):
        for _ in range(6):
            t = (t @ w).tanh()
        return t

    x = ember.randn(128, 256, requires_grad=True)   # reentrant checkpoint needs one
    ember.cpu.reset_peak_memory_stats()
    base = ember.cpu.memory_allocated()
    out = block(x).sum()
    plain = ember.cpu.memory_allocated() - base
    out.backward()
    g_plain = w.grad.clone()
    w.grad = None
    del out
    base = ember.cpu.memory_allocated()
    out = checkpoint(block, x).sum()
    ckpt = ember.cpu.memory_allocated() - base
    out.backward()
    assert ember.allclose(w.grad, g_plain, rtol=1e-4, atol=1e-5)
    assert ckpt < plain / 3            # six saved activations against none


def test_tensor_data_and_detach():
    x = leaf(1.0, 2.0)
    d = x.detach()
    d.add_(1)                           # shares data and version counter
    assert x.tolist() == [2.0, 3.0] and x._version == d._version
    x.data = ember.tensor([5.0, 6.0])
    assert x.requires_grad and x.tolist() == [5.0, 6.0]


def test_position_and_sampling_ops_pass_through_without_grad():
    """argmax, searchsorted and multinomial accept inputs that require grad, as torch does;
    their integer results never require grad."""
    p = ember.tensor([0.2, 0.5, 0.3], requires_grad=True)
    sorted_p = ember.sort(p).values
    for r in (p.argmax(), ember.searchsorted(sorted_p, p),
              ember.multinomial(p, 2, generator=ember.Generator().manual_seed(0))):
        assert r.dtype == ember.int64 and not r.requires_grad and r.grad_fn is None


class _ReentrantDouble(autograd.Function):
    """x * 2 whose backward runs autograd.grad over a recomputation that shares the graph
    above x with the running backward (as a fused kernel's double-backward path does)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        with ember.enable_grad():
            return autograd.grad(x * 2, x, g, create_graph=True)[0]


@pytest.mark.parametrize("create_graph", [False, True])
def test_reentrant_grad_over_a_shared_graph_matches_torch(create_graph):
    """A backward that calls autograd.grad on a graph sharing nodes with the outer run
    leaves the outer run's pending gradients alone (the engine keeps per-run state)."""
    torch = pytest.importorskip("torch")

    class TorchDouble(torch.autograd.Function):
        forward = staticmethod(lambda ctx, x: (ctx.save_for_backward(x), x * 2)[1])

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            with torch.enable_grad():
                return torch.autograd.grad(x * 2, x, g, create_graph=True)[0]

    for lib, fn in ((ember, _ReentrantDouble), (torch, TorchDouble)):
        a = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        x = a * 3
        y = fn.apply(x) + x * x                       # x also feeds the outer run directly
        g, = lib.autograd.grad(y.sum(), a, create_graph=create_graph)
        assert g.tolist() == [24.0, -30.0, 60.0]       # 6 + 18 a


def test_grad_of_a_non_leaf_does_not_run_its_node():
    """autograd.grad w.r.t. a non-leaf captures its gradient without running the node that
    made it (so a retain_graph=False call leaves that node's saved tensors for later)."""
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    x = a.exp()
    y = (x * x).sum()
    gx, = autograd.grad(y, x)
    assert gx.tolist() == pytest.approx((2 * np.exp([1.0, 2.0])).tolist())
    x.sum().backward()                                 # exp's node still has its output
    assert a.grad.tolist() == pytest.approx(np.exp([1.0, 2.0]).tolist())


@pytest.mark.parametrize("case", ["scalar", "unrelated_tensor", "scalar_first"])
def test_mul_keeps_self_only_when_another_input_needs_it(case):
    # PyTorch saves self for mul/div only when the other operand requires grad: writing
    # into b after b[1] * 3 must not break the backward (ember's had raised the in-place
    # version error)
    def f(lib):
        a = lib.tensor([0.3, -1.2, 0.8], dtype=lib.float64, requires_grad=True)
        w = lib.tensor(2.0, dtype=lib.float64)
        b = a.clone()
        v = b[1]
        b[0] = {"scalar": v * 3, "unrelated_tensor": v * w / w, "scalar_first": 3 * v}[case]
        b.sum().backward()
        return a.grad.numpy()
    np.testing.assert_allclose(f(ember), f(torch))
    # when the other operand requires grad, self is saved and the write is caught
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = a.clone()
    c = b[1] * a[0]
    b[0] = 5.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.backward()


@pytest.mark.parametrize("exponent", [0.0, 0])
def test_pow_zero_exponent_gradient_is_zero_at_zero(exponent):
    x = ember.tensor([0.0, 1.0, -2.0], dtype=ember.float64, requires_grad=True)
    (x ** exponent).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]        # not NaN at 0 (0 * 0**-1)


def test_masked_fill_value_tensor_gets_its_gradient():
    # the 0-d value was read into a Python number, so its gradient was lost
    x = ember.tensor([[1.0, -2.0], [3.0, -4.0]], requires_grad=True)
    v = ember.tensor(5.0, requires_grad=True)
    x.masked_fill(x > 0, v).sum().backward()
    assert v.grad.item() == 2.0 and x.grad.tolist() == [[0.0, 1.0], [0.0, 1.0]]


@pytest.mark.parametrize("expr", ["x * x", "x * 2", "2 * x", "x / 2", "x.exp()", "x + 2",
                                  "x.sum(0)"])
def test_a_second_backward_through_a_released_graph_is_refused_as_torch(expr):
    # x * 2 keeps no tensor in ember (nothing reads it), but PyTorch saves the wrapped 2:
    # a second backward raises there, and must not double the gradient here
    outcome = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = eval(expr).sum()
        y.backward()
        try:
            y.backward()
            outcome.append(x.grad.tolist())
        except RuntimeError as e:
            outcome.append("backward through the graph a second time" in str(e))
    assert outcome[0] == outcome[1]
