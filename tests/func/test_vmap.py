"""vmap: every op family's batching rule against the loop over the samples (and against
torch.func.vmap), with batched and shared operands, in_dims/out_dims pytrees, nested vmap,
chunks, randomness, the loop fallback and PyTorch's errors."""
import warnings

import ember.nn.functional as F
import numpy as np
import pytest
import torch

import ember
from ember.func import vmap

RNG = np.random.default_rng(5)
B = 3


def _arr(shape, low=-1.5, high=1.5):
    return RNG.uniform(low, high, size=shape).astype(np.float64)


def _loop(fn, args, in_dims):
    outs = []
    for i in range(B):
        sample = [a if d is None else a.select(d, i) for a, d in zip(args, in_dims)]
        outs.append(fn(*sample))
    if isinstance(outs[0], tuple):
        return tuple(ember.stack([o[k] for o in outs]) for k in range(len(outs[0])))
    return ember.stack(outs)


def _assert_close(a, b, atol=1e-10):
    if isinstance(a, tuple):
        for x, y in zip(a, b):
            _assert_close(x, y, atol)
        return
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=atol)


IDX = ember.tensor([[0, 2], [1, 1]])
# name: (function of per-sample tensors, per-sample shapes, in_dims (None: shared), range)
CASES = {
    # elementwise, broadcasting, shared operands
    "unary": (lambda a: a.exp() + a.sin() * a.tanh() - a.abs().sqrt(), [(3, 4)], (0,)),
    "binary_broadcast": (lambda a, b: a * b - a / (b.abs() + 1), [(3, 4), (4,)], (0, 0)),
    "binary_shared": (lambda a, b: ember.maximum(a, b) ** 2, [(3, 4), (3, 4)], (0, None)),
    "scalar": (lambda a: 2 - a * 3 + a ** 2, [(5,)], (0,)),
    "where": (lambda a, b: ember.where(a > 0, a, b), [(3, 4), (4,)], (0, None)),
    "clamp_relu": (lambda a: F.relu(a).clamp(max=0.5), [(6,)], (0,)),
    "compare": (lambda a, b: (a > b).to(a.dtype), [(3, 4), (3, 4)], (0, 0)),
    "inplace": (lambda a, b: a.clone().mul_(b).add_(1), [(3, 4), (4,)], (0, 0)),
    "gelu_sigmoid": (lambda a: F.gelu(a) + F.sigmoid(a) + F.silu(a), [(4,)], (0,)),
    "pow_atan2": (lambda a, b: ember.atan2(a, b) + a.abs() ** b, [(4,), (4,)], (0, 0)),
    # reductions and scans
    "sum_mean": (lambda a: a.sum() + a.mean(0).sum() + a.sum((0, 1)), [(3, 4)], (0,)),
    "prod_amax": (lambda a: a.prod(1) + a.amax(0).sum() + a.amin(-1), [(3, 4)], (0,)),
    "argmax": (lambda a: (a.argmax(1) + a.argmin() + a.argmax()).to(a.dtype), [(3, 4)],
               (0,)),
    "keepdim": (lambda a: a.sum(1, keepdim=True) * a.mean(keepdim=True, dim=0), [(3, 4)],
                (0,)),
    "scalar_reduce": (lambda a: a.sum() + a.sum(0), [()], (0,)),
    "var_std_norm": (lambda a: a.var(0) + a.std() + a.norm(), [(3, 4)], (0,)),
    "logsumexp": (lambda a: ember.logsumexp(a, 1), [(3, 4)], (0,)),
    "scans": (lambda a: a.cumsum(1) + a.cumprod(0) + ember.cummax(a, 1).values, [(3, 4)],
              (0,)),
    "softmax": (lambda a: F.softmax(a, -1) + F.log_softmax(a, 0), [(3, 4)], (0,)),
    # views and shapes
    "views": (lambda a: a.t()[1:, ::2].reshape(-1).unsqueeze(0).expand(2, -1), [(4, 3)],
              (0,)),
    "permute_flatten": (lambda a: a.permute(2, 0, 1).flatten(1).squeeze(), [(2, 1, 3)],
                        (0,)),
    "diagonal_narrow": (lambda a: a.diagonal() + a.narrow(1, 1, 3)[0], [(3, 4)], (0,)),
    "cat_stack": (lambda a, b: ember.cat([a, ember.stack([b, b])], 0), [(2, 3), (3,)],
                  (0, None)),
    "split_unbind": (lambda a: a.split(2, 1)[1] + a.unbind(0)[0].sum(), [(3, 4)], (0,)),
    "chunk_movedim": (lambda a: ember.movedim(a.chunk(2, 0)[0], 0, -1), [(4, 3)], (0,)),
    "getitem": (lambda a: a[1] + a[:, 1:2].squeeze(1).sum() + a[-1, None].sum(), [(3, 4)],
                (0,)),
    "as_strided": (lambda a: a.as_strided((2, 2), (1, 2)), [(4,)], (0,)),
    # products
    "matmul_shared": (lambda a, w: a @ w, [(3, 4), (4, 2)], (0, None)),
    "matmul_both": (lambda a, b: a @ b, [(2, 3, 4), (4, 5)], (0, 0)),
    "matmul_vec": (lambda a, b: a @ b, [(4,), (4, 3)], (0, 0)),
    "matvec": (lambda a, b: a @ b, [(3, 4), (4,)], (None, 0)),
    "dot": (lambda a, b: a @ b, [(4,), (4,)], (0, 0)),
    "bmm_addmm": (lambda a, b, c: ember.addmm(c, a, b) + ember.bmm(a[None], b[None])[0],
                  [(3, 4), (4, 2), (3, 2)], (0, None, 0)),
    "linear": (lambda x, w, b: F.linear(x, w, b), [(5, 4), (3, 4), (3,)], (0, None, None)),
    "einsum": (lambda a, b: ember.einsum("ij,jk->ik", a, b), [(3, 4), (4, 2)], (0, 0)),
    # indexing
    "gather": (lambda a: a.gather(1, IDX), [(2, 3)], (0,)),
    "gather_batched_index": (lambda a, i: a.gather(1, i), [(2, 3), None], (0, 0)),
    "scatter_add": (lambda a, b: a.scatter_add(1, IDX, b), [(2, 3), (2, 2)], (0, 0)),
    "index_select": (lambda a: a.index_select(1, ember.tensor([2, 0, 2])), [(2, 3)], (0,)),
    "index_add": (lambda a, b: a.index_add(0, ember.tensor([1, 0]), b), [(2, 3), (2, 3)],
                  (0, None)),
    "take": (lambda a: ember.take(a, ember.tensor([[0, -1], [3, 2]])), [(2, 3)], (0,)),
    "adv_index": (lambda a: a[ember.tensor([2, 0])] + a[:, ember.tensor([1, 1, 0])].sum(1)[:2, None],
                  [(3, 3)], (0,)),
    "setitem": (lambda a, b: _setitem(a, b), [(3, 4), (4,)], (0, 0)),
    "masked_fill": (lambda a: a.masked_fill(a > 0, 0.0), [(3, 4)], (0,)),
    # neural-network ops
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, padding=1), [(2, 3, 5, 5), (4, 3, 3, 3), (4,)],
               (0, None, None)),
    "conv2d_weights": (lambda x, w: F.conv2d(x, w, stride=2), [(2, 3, 5, 5), (4, 3, 3, 3)],
                       (None, 0)),
    "conv1d": (lambda x, w: F.conv1d(x, w), [(2, 3, 7), (4, 3, 3)], (0, 0)),
    "pools": (lambda x: F.max_pool2d(x, 2) + F.avg_pool2d(x, 2)
              + F.adaptive_avg_pool2d(x, 2), [(2, 2, 4, 4)], (0,)),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)],
                   (0, None, 0)),
    "batch_norm": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                   [(4, 3, 2), (3,), (3,)], (0, None, None)),
    "group_norm": (lambda x: F.group_norm(x, 2), [(2, 4, 3)], (0,)),
    "cross_entropy": (lambda x: F.cross_entropy(x, ember.tensor([0, 2, 1])), [(3, 4)], (0,)),
    "nll_none": (lambda x: F.nll_loss(x, ember.tensor([0, 2, 1]), reduction="none"),
                 [(3, 4)], (0,)),
    "cross_entropy_1d": (lambda x: F.cross_entropy(x, ember.tensor(1)), [(4,)], (0,)),
    "mse_l1": (lambda a, b: F.mse_loss(a, b) + F.l1_loss(a, b, reduction="sum"),
               [(3, 4), (3, 4)], (0, None)),
    "dropout_eval": (lambda a: F.dropout(a, 0.5, training=False), [(4,)], (0,)),
}


def _setitem(a, b):
    r = a.clone()
    r[1] = b
    r[:, 0] = 0.0
    return r


def _inputs(shapes, in_dims):
    out = []
    for s, d in zip(shapes, in_dims):
        if s is None:                      # an index tensor batched per sample
            out.append(ember.tensor(RNG.integers(0, 3, size=(B, 2, 2))))
        elif d is None:
            out.append(ember.tensor(_arr(s)))
        else:
            out.append(ember.tensor(_arr((B,) + tuple(s))))
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_equals_the_loop(name):
    fn, shapes, in_dims = CASES[name]
    args = _inputs(shapes, in_dims)
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # no op of the catalogue falls back
        got = vmap(fn, in_dims=in_dims)(*args)
    _assert_close(got, _loop(fn, args, in_dims))


def test_vmap_matches_torch_vmap():
    x, w = _arr((4, 3, 5)), _arr((5, 2))

    def f_e(a):
        return (a @ ember.tensor(w)).softmax(-1).sum(0)

    def f_t(a):
        return (a @ torch.tensor(w)).softmax(-1).sum(0)
    _assert_close(vmap(f_e, in_dims=1, out_dims=1)(ember.tensor(x)),
                  ember.tensor(torch.func.vmap(f_t, in_dims=1, out_dims=1)(torch.tensor(x))
                               .numpy()))


@pytest.mark.parametrize("fn, a_shape, i_shape, hi, shared", [
    (lambda a, i: a[i], (5,), (), 5, False),                # a batched 0-d index tensor
    (lambda a, i: a[i], (5, 3), (2,), 5, False),
    (lambda a, i: a[:, i], (5, 3), (), 3, False),           # the index block after a slice
    (lambda a, i: a[:, i], (5, 3), (2, 2), 3, False),
    (lambda a, i: a[i, 1:], (5, 3), (), 5, False),
    (lambda a, i: a[i, :, 2], (5, 3, 6), (2,), 5, False),
    (lambda a, i: a[1, i], (5, 3), (), 3, False),           # an int joins the block
    (lambda a, i: a[:, i, i], (2, 3, 3), (), 3, False),
    (lambda a, i: a[i, :, i], (3, 2, 3), (2,), 3, False),   # split blocks: index dims first
    (lambda a, i: a[i], (5,), (), 5, True),                 # a shared tensor, batched index
])
def test_indexing_with_batched_index_tensors(fn, a_shape, i_shape, hi, shared):
    """Per-sample indices (an embedding row per sample, a gather by a 0-d index) index in
    one call through the batched-index rule, as torch.func.vmap does; before, a 0-d
    batched index read its value as an int and raised."""
    a = _arr(a_shape if shared else (B,) + a_shape)
    i = RNG.integers(-hi, hi, (B,) + i_shape)
    in_dims = (None, 0) if shared else (0, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                     # no loop fallback
        got = vmap(fn, in_dims=in_dims)(ember.tensor(a), ember.tensor(i))
    want = torch.func.vmap(fn, in_dims=in_dims)(torch.tensor(a), torch.tensor(i))
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy())
    _assert_close(got, _loop(fn, [ember.tensor(a), ember.tensor(i)], in_dims))


@pytest.mark.parametrize("name", ["gather", "index_select", "take", "embedding"])
def test_a_batched_index_on_a_shared_tensor(name):
    """The index ops route on every tensor argument: a batched index beside a plain self
    reaches the batching rule (it read one sample's view of the index before)."""
    fns = {"gather": lambda lib, x, ix: x.gather(0, ix.unsqueeze(0)),
           "index_select": lambda lib, x, ix: x.index_select(0, ix),
           "take": lambda lib, x, ix: x.take(ix),
           "embedding": lambda lib, x, ix: lib.nn.functional.embedding(ix, x)}
    a = _arr((5, 4))
    i = RNG.integers(0, 4, (B, 4))
    w = ember.tensor(a).requires_grad_()           # a weight that requires grad, outside
    got = vmap(lambda ix: fns[name](ember, w, ix))(ember.tensor(i))
    want = torch.func.vmap(lambda ix: fns[name](torch, torch.tensor(a), ix))(torch.tensor(i))
    np.testing.assert_allclose(got.detach().numpy(), want.numpy())


def test_norms_and_losses_with_weights_that_require_grad():
    """An op whose autograd entry ran the raw kernel on a vmap wrapper (layer norm, batch
    norm, nll with class weights) read one sample's view of the batch: the entries route
    again now, so a weight that requires grad outside vmap gives every sample's result."""
    x = ember.tensor(_arr((B, 5, 4)))
    w, b = ember.tensor(_arr((4,))).requires_grad_(), ember.tensor(_arr((4,))).requires_grad_()
    cw = ember.tensor(_arr((4,), 0.5, 1.5)).requires_grad_()
    t = ember.tensor(RNG.integers(0, 4, (B, 5)))
    cases = [
        (lambda s: F.layer_norm(s * 2, (4,), w, b), (x,)),
        (lambda s: F.batch_norm(s.unsqueeze(0).transpose(1, 2), None, None, w, b,
                                training=True), (x,)),
        (lambda s, tt: F.nll_loss(F.log_softmax(s, -1), tt, weight=cw), (x, t)),
        (lambda s, tt: F.cross_entropy(s, tt, weight=cw), (x, t)),
    ]
    for fn, args in cases:
        got = vmap(fn)(*args)
        want = ember.stack([fn(*[a[k] for a in args]) for k in range(B)])
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6,
                                   atol=1e-10)
    # and the gradients reach the shared weight as the loop's do
    loss = lambda s: F.layer_norm(s, (4,), w, b).sin().sum()   # noqa: E731
    gw, = ember.autograd.grad(vmap(loss)(x).sum(), w)
    gl, = ember.autograd.grad(sum(loss(x[k]) for k in range(B)), w)
    np.testing.assert_allclose(gw.numpy(), gl.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("case", ["scalar", "batched_value", "after_slice", "shared_value",
                                  "accumulate", "then_slice", "ellipsis_loop"])
def test_index_put_with_batched_index_tensors(case):
    """c[i] = v with per-sample indices in one call (the value laid out as the physical
    result); an index the rule does not take (an Ellipsis) runs the loop, whose samples
    index with 0-d tensors (that loop used to crash)."""
    a = _arr((B, 4, 5))
    i = RNG.integers(0, 4, (B, 2))
    i0 = RNG.integers(0, 5, (B,))
    v = _arr((B, 4, 2))
    steps = {
        "scalar": (lambda c, i, i0, v: c.__setitem__(i0 % 4, 7.0)),
        "batched_value": (lambda c, i, i0, v: c.__setitem__(i, v.t()[:, :1])),
        "after_slice": (lambda c, i, i0, v: c.__setitem__((slice(None), i), v)),
        "shared_value": (lambda c, i, i0, v: c.__setitem__((slice(None), i0), 3.0)),
        "accumulate": (lambda c, i, i0, v: c.index_put_((i,), v.t()[:, :, None].sum(1),
                                                       accumulate=True)),
        "then_slice": (lambda c, i, i0, v: c.__setitem__((i0 % 4, slice(1, 3)), v[0, :2])),
        "ellipsis_loop": (lambda c, i, i0, v: c.__setitem__((Ellipsis, i0), -1.0)),
    }

    def f(a, i, i0, v):
        c = a.clone()
        steps[case](c, i, i0, v)
        return c
    args = [ember.tensor(a), ember.tensor(i), ember.tensor(i0), ember.tensor(v)]
    with warnings.catch_warnings():
        warnings.simplefilter("error" if case != "ellipsis_loop" else "ignore")
        got = vmap(f)(*args)
    _assert_close(got, _loop(f, args, (0, 0, 0, 0)))


def test_composites_that_read_values_run_sample_by_sample():
    """embedding_bag's bags read values on the host: as a composite op it runs sample by
    sample inside vmap (with PyTorch's warning) instead of raising."""
    def fn(lib, t):
        return lib.nn.functional.embedding_bag(t.unsqueeze(0), lib.arange(18.0).reshape(6, 3))
    x = RNG.integers(0, 6, (B, 4))
    with pytest.warns(UserWarning, match="performance drop"):
        got = vmap(lambda a: fn(ember, a))(ember.tensor(x))
    want = torch.stack([fn(torch, torch.tensor(x[k])) for k in range(B)])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-9)


def test_gradient_through_a_batched_index():
    x = ember.randn(4, 5, requires_grad=True)
    idx = ember.tensor([0, 4, 2, 2])
    g, = ember.autograd.grad(vmap(lambda a, i: a[i] * 2)(x, idx).sum(), x)
    want = ember.zeros(4, 5)
    want[ember.arange(4), idx] = 2.0
    assert ember.equal(g, want)


def test_nested_vmap_and_dims():
    x = ember.tensor(_arr((2, 3, 4)))
    y = ember.tensor(_arr((4, 3)))
    r = vmap(vmap(lambda a, b: a * b, in_dims=(0, 1)), in_dims=(0, None))(x, y)
    _assert_close(r, x * y.t()[None])
    r = vmap(vmap(lambda a: a.sum()), in_dims=2, out_dims=1)(x)
    _assert_close(r, x.sum(1))


def test_pytrees_out_dims_and_chunks():
    x, y = ember.tensor(_arr((3, 4))), ember.tensor(_arr((4, 3)))
    out = vmap(lambda d: {"s": d["a"] + d["b"], "p": (d["a"] * 2,)},
               in_dims=({"a": 0, "b": 1},), out_dims={"s": 1, "p": (0,)})({"a": x, "b": y})
    _assert_close(out["s"], (x + y.t()).t())
    _assert_close(out["p"][0], x * 2)
    r = vmap(lambda a: a.exp().sum(), chunk_size=2)(ember.tensor(_arr((5, 3))))
    assert r.shape == (5,)
    shared = vmap(lambda a: ember.ones(2), in_dims=0)(x)          # unbatched output
    assert shared.shape == (3, 2)


def test_randomness():
    x = ember.zeros(4, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda a: a + ember.rand(3))(x)
    same = vmap(lambda a: a + ember.rand(3), randomness="same")(x)
    assert bool((same == same[0]).all())
    diff = vmap(lambda a: a + ember.randn(3), randomness="different")(x)
    assert not bool((diff == diff[0]).all())
    d2 = vmap(lambda a: F.dropout(a + 1, 0.5), randomness="different")(x)
    assert d2.shape == (4, 3)
    with pytest.raises(RuntimeError, match="different inplace randomness on an unbatched"):
        vmap(lambda a: ember.zeros(3).normal_() + a, randomness="different")(x)
    inplace = vmap(lambda a: a.clone().uniform_(), randomness="same")(x)
    assert bool((inplace == inplace[0]).all())
    like = vmap(lambda a: ember.randn_like(a), randomness="different")(x)
    assert not bool((like == like[0]).all())
    nested = vmap(vmap(lambda a: ember.rand(()), randomness="different"),
                  randomness="different")(ember.zeros(3, 2))
    assert len(set(nested.reshape(-1).tolist())) == 6
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        vmap(lambda a: a, randomness="sometimes")


def test_errors_match_pytorch():
    x = ember.ones(3, 2)
    with pytest.raises(ValueError, match="expected `in_dims` to be int or a"):
        vmap(lambda a: a, in_dims=[0])(x)
    with pytest.raises(ValueError, match="in_dims is not compatible with the structure"):
        vmap(lambda a, b: a, in_dims=(0,))(x, x)
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        vmap(lambda a, b: a, in_dims=(0, 0))(x, 1.0)
    with pytest.raises(ValueError, match=r"expected in_dim to satisfy -2 <= in_dim < 2"):
        vmap(lambda a: a, in_dims=2)(x)
    with pytest.raises(ValueError, match="Expected all tensors to have the same size"):
        vmap(lambda a, b: a + b)(x, ember.ones(4, 2))
    with pytest.raises(ValueError, match="Expected at least one Tensor to vmap over"):
        vmap(lambda a: a, in_dims=(None,))(x)
    with pytest.raises(ValueError, match="got no inputs"):
        vmap(lambda: 1)()
    with pytest.raises(ValueError, match="must only return Tensors"):
        vmap(lambda a: 1.0)(x)
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        vmap(lambda a: a, out_dims=None)(x)
    with pytest.raises(RuntimeError, match="calling .item"):
        vmap(lambda a: a.sum().item())(x)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        vmap(lambda a: a if a.sum() > 0 else -a)(x)
    with pytest.raises(RuntimeError, match="inplace arithmetic"):
        vmap(lambda a: ember.zeros(2).add_(a))(x)
    with pytest.raises(ValueError, match="chunk_size should be None or greater than 0"):
        vmap(lambda a: a, chunk_size=0)


def test_fallback_loops_with_a_warning():
    """An op without a batching rule runs sample by sample, warning once with its name."""
    x = ember.tensor(_arr((3, 4)))
    with pytest.warns(UserWarning, match="batching rule for put"):
        r = vmap(lambda a: a.put(ember.tensor([0, 2]), ember.tensor([5.0, 6.0], dtype=ember.float64)))(x)
    _assert_close(r, _loop(lambda a: a.put(ember.tensor([0, 2]), ember.tensor([5.0, 6.0], dtype=ember.float64)),
                           [x], (0,)))


def test_host_composites_never_read_one_sample():
    """Functions reading values on the host: linalg runs once on the batch (it takes leading
    batch dims), the order statistics find their positions once on the batch, others (fft)
    run sample by sample with the fallback's warning - none sees sample 0 alone."""
    x = ember.tensor(_arr((3, 4, 4)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        inv = vmap(ember.linalg.inv)(x + 3 * ember.eye(4, dtype=ember.float64))
        s = vmap(lambda a: ember.sort(a, 0).values + a.topk(2).values.sum())(x)
        med = vmap(lambda a: ember.median(a))(x)
    _assert_close(inv, ember.linalg.inv(x + 3 * ember.eye(4, dtype=ember.float64)), atol=1e-8)
    _assert_close(s, ember.sort(x, 1).values + x.topk(2).values.sum((1, 2), keepdim=True))
    _assert_close(med, ember.stack([ember.median(x[i]) for i in range(3)]))
    with pytest.warns(UserWarning, match="batching rule for fft_rfft"):
        r = vmap(lambda a: ember.fft.rfft(a).abs())(x)
    _assert_close(r, ember.fft.rfft(x).abs(), atol=1e-8)


def test_repr_of_a_batched_tensor():
    seen = []
    vmap(lambda a: seen.append(repr(a)) or a)(ember.ones(2, 3))
    assert seen[0].startswith("BatchedTensor(lvl=") and "bdim=0" in seen[0]


class _Square(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g


def test_custom_function_and_grad_inside_vmap():
    from ember.func import grad
    x = ember.tensor(_arr((4, 3)))
    _assert_close(vmap(_Square.apply)(x), x * x)
    _assert_close(vmap(grad(lambda a: _Square.apply(a).sum()))(x), 2 * x)
    # keyword arguments are passed to every sample as they are
    _assert_close(vmap(lambda a, *, scale: a * scale)(x, scale=3.0), x * 3.0)


def test_an_escaped_wrapper_refuses_to_run():
    leaked = []
    vmap(lambda a: leaked.append(a) or a)(ember.ones(2, 3))
    with pytest.raises(RuntimeError, match="escaped the vmap"):
        leaked[0] + 1


@pytest.mark.parametrize("draw", [ember.randn_like, ember.rand_like,
                                  lambda a: ember.randn(4), lambda a: ember.rand(4)])
def test_randomness_same_shares_one_draw(draw):
    """randomness="same": every sample gets the same values, rand_like/randn_like too (they
    had drawn per sample); "different": each its own."""
    ember.manual_seed(0)
    same = ember.func.vmap(lambda a: draw(a) + a, randomness="same")(ember.zeros(3, 4))
    assert same.shape == (3, 4) and bool((same == same[0]).all())
    other = ember.func.vmap(lambda a: draw(a) + a, randomness="different")(ember.zeros(3, 4))
    assert not bool((other[0] == other[1]).all())


_MORE = {       # ops that had crashed in vmap, or (complex, polar) repeated sample 0
    "diag": (lambda lib, a, b: lib.diag(a), (4,)),
    "diag_offset": (lambda lib, a, b: lib.diag(a, -1), (4,)),
    "diagflat": (lambda lib, a, b: lib.diagflat(a.reshape(2, 2)), (4,)),
    "block_diag": (lambda lib, a, b: lib.block_diag(a.reshape(2, 2), b[:3]), (4,)),
    "tile_varargs": (lambda lib, a, b: a.tile(2), (4,)),
    "histc": (lambda lib, a, b: lib.histc(a, bins=4, min=-2, max=2), (6,)),
    "bincount": (lambda lib, a, b: lib.bincount((a.abs() * 2).long(), minlength=6), (4,)),
    "logcumsumexp": (lambda lib, a, b: lib.logcumsumexp(a, 0), (4,)),
    "masked_scatter": (lambda lib, a, b: a.masked_scatter(a > 0, b), (4,)),
    "complex": (lambda lib, a, b: lib.view_as_real(lib.complex(a, b)), (4,)),
    "polar": (lambda lib, a, b: lib.view_as_real(lib.polar(a.abs(), b)), (4,)),
    "real_imag": (lambda lib, a, b: lib.complex(a, b).imag * 2 + lib.complex(b, a).real, (4,)),
    "view_as_complex": (lambda lib, a, b: lib.view_as_complex(
        lib.stack([a, b], -1)).abs(), (4,)),
}


@pytest.mark.parametrize("name", sorted(_MORE))
def test_more_ops_match_torch_vmap(name):
    fn, shape = _MORE[name]
    a, b = _arr((3,) + shape), _arr((3,) + shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # sample-by-sample fallbacks are exact
        got = vmap(lambda x, y: fn(ember, x, y))(ember.tensor(a), ember.tensor(b))
    want = torch.func.vmap(lambda x, y: fn(torch, x, y))(torch.tensor(a), torch.tensor(b))
    _assert_close(got, ember.tensor(want.numpy()))


def test_kernels_refuse_a_wrapper():
    """A wrapper looks like its first sample to code below the dispatcher: a kernel handed
    one refuses (it would have read sample 0 only), and the composite falls back to the
    loop."""
    from ember.core import _tensor as _T
    seen = []

    def f(x):
        with pytest.raises(RuntimeError, match="data-dependent control flow"):
            _T._complex_out(x, x, ember.complex128, None, "complex")
        seen.append(1)
        return x
    vmap(f)(ember.ones(3, 2, dtype=ember.float64))
    assert seen == [1]


def test_vmap_results_return_their_memory():
    # vmap's wrappers sat in reference cycles, and a block freed by the cycle collector was
    # never returned (the storage's backend was cleared first): 18 MB a call of the
    # per-sample gradients benchmark leaked.  tests/test_no_reference_cycles.py checks
    # that a vmap call leaves no cycle.
    import gc
    x = ember.randn(8, 1 << 15)

    def run():
        vmap(lambda u: u * 2)(x)
        vmap(ember.func.grad(lambda u: (u * u).sum()))(x)

    run()
    gc.collect()
    base = ember.cpu.memory_allocated()
    for _ in range(3):
        run()
    gc.collect()
    assert ember.cpu.memory_allocated() == base
