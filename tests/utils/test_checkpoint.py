"""ember.utils.checkpoint against torch's non-reentrant checkpoint: first and higher order,
under backward() (the leaves the function closes over accumulate) and under grad()
(only the inputs' gradients, nothing reaches .grad)."""
import pytest
import torch

import ember


def _run(L, case):
    cp = L.utils.checkpoint
    w = L.tensor([0.5, -1.], requires_grad=True)
    x = L.tensor([1., 2.], requires_grad=True)

    def fn(t):
        return (L.tanh(t * w) ** 2).sum()
    out = cp.checkpoint(fn, x, use_reentrant=False)
    got = []
    if case == "penalty":                   # a gradient penalty (WGAN-GP)
        gx, = L.autograd.grad(out, x, create_graph=True)
        got.append(w.grad)
        ((gx.norm() - 1) ** 2).backward()
    elif case == "create_graph":
        out.backward(create_graph=True)
        got.append(w.grad.requires_grad)
        (w.grad.sum() * x.grad.sum()).backward()
    elif case == "grad":
        got.append(L.autograd.grad(out, x)[0].tolist())
    else:
        out.backward()
    return got + [None if t.grad is None else t.grad.tolist() for t in (w, x)]


@pytest.mark.parametrize("case", ["penalty", "create_graph", "grad", "backward"])
def test_checkpoint_gradients_match_torch(case):
    want, got = _run(torch, case), _run(ember, case)
    assert len(want) == len(got)
    for a, b in zip(want, got):
        if isinstance(a, list):
            assert b == pytest.approx(a, rel=1e-6)
        else:
            assert a == b


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_recomputation_runs_under_the_forward_autocast(use_reentrant):
    # the backward's recomputation ran in float32 while the forward ran in bfloat16, so the
    # gradients were of a different function (PyTorch keeps the forward's autocast state)
    lin = ember.nn.Linear(8, 8)
    x = ember.randn(4, 8, requires_grad=True)
    seen = []

    def f(a):
        y = lin(a)
        seen.append(y.dtype)
        return y.float().sin()

    with ember.autocast("cpu", dtype=ember.bfloat16):
        out = ember.utils.checkpoint.checkpoint(f, x, use_reentrant=use_reentrant)
    out.sum().backward()
    assert seen == [ember.bfloat16, ember.bfloat16]
    g_ckpt = x.grad.clone()
    x.grad = None
    with ember.autocast("cpu", dtype=ember.bfloat16):
        out = f(x)
    out.sum().backward()
    assert ember.equal(x.grad, g_ckpt)
    assert not ember.is_autocast_enabled("cpu")


def _first_block(L, reentrant):
    """A first checkpointed block: no input requires grad, the parameters do."""
    L.manual_seed(0)
    lin = L.nn.Linear(3, 2)
    with L.no_grad():
        lin.weight.copy_(L.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]))
        lin.bias.copy_(L.tensor([0.1, -0.2]))
    y = L.utils.checkpoint.checkpoint(lin, L.ones(2, 3), use_reentrant=reentrant)
    if y.requires_grad:
        (y * y).sum().backward()
    return y.requires_grad, None if lin.weight.grad is None else lin.weight.grad.tolist()


@pytest.mark.parametrize("reentrant", [True, False])
def test_parameters_of_a_block_whose_inputs_need_no_grad(reentrant):
    """Without reentrance the region is recorded as usual (the parameters get gradients;
    ember's one Function gave the output no graph); the reentrant form gives none and
    warns, as PyTorch's."""
    import warnings
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = _first_block(ember, reentrant)
    assert got == _first_block(torch, reentrant)
    assert any("None of the inputs" in str(w.message) for w in seen) == reentrant


@pytest.mark.parametrize("reentrant", [True, False])
def test_non_tensor_outputs_and_keywords(reentrant):
    x = ember.tensor([0.5, 1.0], requires_grad=True)
    out = ember.utils.checkpoint.checkpoint(lambda a: (a.exp() * 2, 7), x,
                                            use_reentrant=reentrant)
    assert out[1] == 7
    out[0].sum().backward()
    assert ember.allclose(x.grad, x.detach().exp() * 2)
    if reentrant:
        with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
            ember.utils.checkpoint.checkpoint(lambda a, scale: a * scale, x, scale=3.0,
                                              use_reentrant=True)
    else:
        y = ember.utils.checkpoint.checkpoint(lambda a, scale: a * scale, x, scale=3.0,
                                              use_reentrant=False)
        assert y.tolist() == [1.5, 3.0]


def test_use_reentrant_not_given_warns_and_is_reentrant():
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
        y = ember.utils.checkpoint.checkpoint(lambda a: a * 2,
                                              ember.ones(2, requires_grad=True))
    assert y.grad_fn is not None


@pytest.mark.parametrize("kind", ["mlp_dropout", "lstm", "transformer_dropout"])
def test_non_reentrant_recomputation_gives_the_plain_gradients(kind):
    """Dropout's masks are redrawn from the forward's RNG state: the same bits as without
    checkpointing."""
    def run(checkpointed):
        ember.manual_seed(0)
        nn = ember.nn
        if kind == "mlp_dropout":
            m = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Dropout(0.3), nn.Linear(8, 3))
        elif kind == "lstm":
            m = nn.LSTM(4, 5, batch_first=True)
        else:
            m = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.2, batch_first=True)
        f = (lambda t: m(t)[0]) if kind == "lstm" else m
        x = ember.randn(2, 3, 4)
        ember.manual_seed(5)
        y = ember.utils.checkpoint.checkpoint(f, x, use_reentrant=False) if checkpointed \
            else f(x)
        (y * y).sum().backward()
        return [y.detach()] + [p.grad for p in m.parameters()]
    for a, b in zip(run(True), run(False)):
        assert ember.equal(a, b)


def test_a_recomputation_that_differs_raises_checkpoint_error():
    from ember.utils.checkpoint import CheckpointError
    calls = []

    def changing(a):
        calls.append(1)
        return (a[: 3 - len(calls) % 2] * 2).exp().sum()
    x = ember.ones(3, requires_grad=True)
    out = ember.utils.checkpoint.checkpoint(changing, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="different metadata"):
        out.backward()
