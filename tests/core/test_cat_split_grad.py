"""cat / stack / split / chunk / unbind / tensor_split under autograd: first and second
order gradients against PyTorch 2.13, one autograd node per call (backward linear in the
number of pieces), and PyTorch's view semantics for the multi-output view ops."""
import time

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(0)


def _fns(lib):
    return lib, (lib.float64 if lib is torch else ember.float64)


# name -> (input shapes, fn(lib, leaves) -> tuple of outputs, indices of the outputs used)
CASES = {
    "cat_dim0_uneven": ([(2, 3), (4, 3), (1, 3)], lambda L, x: (L.cat(x, 0),), None),
    "cat_dim1_noncontig": ([(3, 2), (3, 4)], lambda L, x: (L.cat([x[0].t().t(), x[1][:, ::2]],
                                                                  1),), None),
    "cat_neg_dim_transposed": ([(4, 3), (3, 2)], lambda L, x: (L.cat([x[0].t(), x[1]], -1),),
                               None),
    "cat_empty_piece": ([(2, 0, 3), (2, 2, 3)], lambda L, x: (L.cat(x, 1),), None),
    "cat_legacy_1d_empty": ([(0,), (2, 3), (1, 3)], lambda L, x: (L.cat(x, 0),), None),
    "cat_same_input_twice": ([(3,)], lambda L, x: (L.cat([x[0], x[0] * 2, x[0]]),), None),
    "stack_dim0": ([(2, 3)] * 3, lambda L, x: (L.stack(x, 0),), None),
    "stack_dim2": ([(2, 3)] * 3, lambda L, x: (L.stack(x, 2),), None),
    "stack_neg_noncontig": ([(3, 2)] * 2, lambda L, x: (L.stack([t.t() for t in x], -2),),
                            None),
    "hstack_1d": ([(2,), (3,)], lambda L, x: (L.hstack(x),), None),
    "hstack_2d": ([(2, 1), (2, 3)], lambda L, x: (L.hstack(x),), None),
    "vstack_1d": ([(3,), (3,)], lambda L, x: (L.vstack(x),), None),
    "vstack_2d": ([(1, 3), (2, 3)], lambda L, x: (L.vstack(x),), None),
    "split_int_uneven": ([(7, 2)], lambda L, x: x[0].split(3), None),
    "split_dim1": ([(2, 5)], lambda L, x: L.split(x[0], 2, dim=1), None),
    "split_sizes_with_zero": ([(6, 2)], lambda L, x: x[0].split([2, 0, 4]), None),
    "split_unused_outputs": ([(8, 3)], lambda L, x: x[0].split(2), [1, 3]),
    "split_noncontig": ([(3, 6)], lambda L, x: x[0].t().split([1, 2, 3], 0), None),
    "chunk_uneven": ([(3, 7)], lambda L, x: x[0].chunk(3, -1), None),
    "chunk_unused": ([(6,)], lambda L, x: L.chunk(x[0], 3), [2]),
    "unbind_dim0": ([(3, 2)], lambda L, x: x[0].unbind(0), None),
    "unbind_dim1_unused": ([(2, 4, 3)], lambda L, x: L.unbind(x[0], 1), [0, 2]),
    "unbind_neg_noncontig": ([(3, 4)], lambda L, x: x[0].t().unbind(-1), None),
    "tensor_split_sections": ([(7, 2)], lambda L, x: L.tensor_split(x[0], 3), None),
    "tensor_split_indices": ([(2, 8)], lambda L, x: L.tensor_split(x[0], [1, 5], dim=1), None),
    "tensor_split_unused": ([(9,)], lambda L, x: x[0].tensor_split([2, 2, 7]), [0, 3]),
    "tensor_split_decreasing": ([(6,)], lambda L, x: x[0].tensor_split([4, 2]), None),
    "split_then_cat": ([(4, 6)], lambda L, x: (L.cat(x[0].split(2, 1)[::-1], 1),), None),
}


def _run(lib, shapes, fn, use, arrays, weights, vs, dtype_name):
    dt = getattr(lib, dtype_name)
    leaves = [lib.tensor(a, dtype=dt).requires_grad_() for a in arrays]
    outs = fn(lib, leaves)
    idx = range(len(outs)) if use is None else use
    loss = sum(((outs[i] ** 3) * lib.tensor(weights[i], dtype=dt)).sum() for i in idx)
    grads = lib.autograd.grad(loss, leaves, create_graph=True)
    second = sum((g * lib.tensor(v, dtype=dt)).sum() for g, v in zip(grads, vs))
    grads2 = lib.autograd.grad(second, leaves)
    return [o.detach().numpy() for o in outs], [g.detach().numpy() for g in grads], \
        [g.numpy() for g in grads2]


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_first_and_second_order_grads_match_torch(name, dtype_name):
    shapes, fn, use = CASES[name]
    arrays = [RNG.uniform(-1.5, 1.5, s) for s in shapes]
    outs_t = fn(torch, [torch.tensor(a) for a in arrays])
    weights = [RNG.standard_normal(tuple(o.shape)) for o in outs_t]
    vs = [RNG.standard_normal(s) for s in shapes]
    want = _run(torch, shapes, fn, use, arrays, weights, vs, dtype_name)
    got = _run(ember, shapes, fn, use, arrays, weights, vs, dtype_name)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype_name == "float32" else dict(rtol=1e-12,
                                                                        atol=1e-12)
    for part_got, part_want in zip(got, want):
        assert len(part_got) == len(part_want)
        for a, b in zip(part_got, part_want):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, **tol)


def test_issue_double_backward_through_cat():
    x = ember.randn(3, requires_grad=True)
    y = ember.cat([x, x])
    g, = ember.autograd.grad((y ** 2).sum(), x, create_graph=True)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 4.0))


def test_cat_mixed_dtypes_grads_keep_input_dtypes():
    a = ember.randn(2, dtype=ember.float32, requires_grad=True)
    b = ember.randn(3, dtype=ember.float64, requires_grad=True)
    y = ember.cat([a, b])
    assert y.dtype == ember.float64
    (y * ember.arange(5, dtype=ember.float64)).sum().backward()
    assert a.grad.dtype == ember.float32 and b.grad.dtype == ember.float64
    np.testing.assert_allclose(a.grad.numpy(), [0, 1])
    np.testing.assert_allclose(b.grad.numpy(), [2, 3, 4])


@pytest.mark.parametrize("fn", [
    lambda x: ember.cat([x[:2], x[2:]], 0),
    lambda x: ember.stack(x.unbind(1), 1),
    lambda x: ember.cat(x.split([1, 0, 2], 0)[::-1], 0),
    lambda x: ember.cat(x.chunk(2, 1), 0),
    lambda x: ember.cat(ember.tensor_split(x, 2, dim=1), 1),
])
def test_gradcheck_and_gradgradcheck(fn):
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda t: fn(t) ** 2, (x,))
    assert gradgradcheck(lambda t: fn(t) ** 2, (x,))


# --- one node per call: backward linear in the number of pieces ----------------------

def _graph_nodes(root):
    seen, stack = set(), [root]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        stack.extend(f for f, _ in n.next_functions)
    return len(seen)


def test_one_node_per_call():
    xs = [ember.randn(2, requires_grad=True) for _ in range(50)]
    y = ember.cat(xs)
    assert y.grad_fn.name() == "CatBackward0"
    assert _graph_nodes(y.grad_fn) == 51                 # cat + 50 AccumulateGrad
    x = ember.randn(100, requires_grad=True)
    for pieces in (x.split(2), x.chunk(50), x.unbind(), x.tensor_split(50)):
        assert len({id(p.grad_fn) for p in pieces}) == 1
        assert _graph_nodes(pieces[0].grad_fn) == 2      # the split + AccumulateGrad


def _backward_seconds(n, op):
    best = float("inf")
    for _ in range(3):
        if op == "cat":
            xs = [ember.randn(8, 64, requires_grad=True) for _ in range(n)]
            loss = ember.cat(xs).sum()
        else:
            x = ember.randn(n * 8, 64, requires_grad=True)
            loss = ember.stack([p.sum() for p in x.split(8)]).sum()
        t = time.perf_counter()
        loss.backward()
        best = min(best, time.perf_counter() - t)
    return best


@pytest.mark.parametrize("op", ["cat", "split"])
def test_backward_scales_linearly_in_pieces(op):
    # 10x the pieces: linear costs ~10x, the old quadratic backward ~100x (0.7 s / 2.3 s
    # for 1600 pieces); 40x leaves room for a busy machine
    small, large = _backward_seconds(200, op), _backward_seconds(2000, op)
    assert large < max(40 * small, 0.05), (small, large)


# --- views stay views; PyTorch's in-place rules for multi-output views ----------------

def test_pieces_are_views_of_the_input():
    x = ember.zeros(6, 2)
    for pieces in (x.split(2), x.split([1, 5]), x.chunk(3), x.unbind(), x.tensor_split(4)):
        for p in pieces:
            assert p._base is x
        pieces[-1].fill_(7.0)
        assert float(x[-1, 0]) == 7.0
        x.zero_()
    leaf = ember.randn(6, requires_grad=True)
    pieces = (leaf * 1).split(2)
    assert all(p._base is not None for p in pieces)
    assert pieces[0].data_ptr() + 2 * pieces[0].element_size() == pieces[1].data_ptr()


def _error(lib, fn):
    try:
        fn(lib)
    except (RuntimeError, TypeError) as e:
        return str(e)
    return None


@pytest.mark.parametrize("fn", [
    lambda L: (L.randn(4, requires_grad=True) * 1).split(2)[0].mul_(2),
    lambda L: L.randn(4, requires_grad=True).split([1, 3])[1].add_(1),
    lambda L: (L.randn(3, 2, requires_grad=True) * 1).unbind(1)[1].zero_(),
    lambda L: (L.randn(4, requires_grad=True) * 1).chunk(2)[1].copy_(L.ones(2)),
])
def test_inplace_on_a_multi_output_view_raises_like_torch(fn):
    msg = _error(torch, fn)
    assert msg is not None and _error(ember, fn) == msg


def test_use_after_base_modified_raises_like_torch():
    def fn(L):
        x = L.randn(4, requires_grad=True) * 1
        p = x.split(2)
        x.mul_(2)
        return p[0] * 2
    msg = _error(torch, fn)
    assert "its base or another view of its base has been modified inplace" in msg
    assert _error(ember, fn) == msg


def test_multi_output_views_without_grad_are_writable():
    x = ember.zeros(4)
    x.split(2)[1].add_(1)            # nothing requires grad: no node, no restriction
    x0 = ember.randn(4, requires_grad=True)
    with ember.no_grad():
        (x0 * 1).split(2)[0].mul_(2)
    np.testing.assert_allclose(x.numpy(), [0, 0, 1, 1])


def test_tensor_split_pieces_may_be_written_in_place_like_torch():
    def fn(L):
        x0 = L.tensor(np.arange(5.0)).requires_grad_()
        x = x0 * 1
        p = x.tensor_split(2)
        p[0].mul_(3)
        ((p[0] ** 2).sum() + (p[1] ** 2).sum()).backward()
        return x0.grad.numpy(), x.detach().numpy()
    for a, b in zip(fn(ember), fn(torch)):
        np.testing.assert_allclose(a, b)


def test_create_graph_grad_of_cat_input_owns_its_memory():
    x = ember.randn(3, requires_grad=True)
    (ember.cat([x, x]) ** 2).sum().backward(create_graph=True)
    assert x.grad._base is None
    x.grad.zero_()                   # a plain tensor, not a multi-output view


def test_cat_out_with_grad_refuses_like_torch():
    def fn(L):
        L.cat([L.randn(2, requires_grad=True)], out=L.empty(2))
    assert _error(ember, fn) is not None and "out=" in _error(ember, fn)
    assert "out=" in _error(torch, fn)


@pytest.mark.parametrize("fn", [
    lambda L: L.tensor(1.0).unbind(), lambda L: L.tensor(1.0).split(1),
    lambda L: L.tensor(1.0).chunk(1), lambda L: L.randn(4).split([-1, 5]),
    lambda L: L.randn(4, requires_grad=True).split([1, 2]),
    lambda L: L.randn(4, requires_grad=True).unbind(1),
])
def test_bad_arguments_raise_like_torch(fn):
    errors = []
    for lib in (torch, ember):
        with pytest.raises((RuntimeError, IndexError)) as info:
            fn(lib)
        errors.append((info.type, str(info.value)))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("fn", [
    # a legacy 1-D empty tensor is left out of the shape but counts in the dtype
    lambda L: L.cat([L.tensor([], dtype=L.float64), L.ones(2, dtype=L.int32)]),
    lambda L: L.cat([L.zeros(0), L.ones(2, 3, dtype=L.int64)]),
    # out= is resized (with a warning when it held elements) and cast-checked
    lambda L: L.cat([L.ones(2), L.ones(3)], out=L.zeros(1)),
    lambda L: L.cat([L.ones(2), L.ones(3)], out=L.zeros(2, 2)),
    lambda L: L.cat([L.ones(2), L.ones(3)], out=L.zeros(0, dtype=L.float64)),
    lambda L: L.cat([L.ones(2), L.ones(3)], out=L.zeros(0, dtype=L.int64)),
])
def test_cat_dtype_and_out_as_torch(fn):
    def run(L):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(L)
        return r.tolist(), str(r.dtype).split(".")[-1]
    want = _error(torch, run)
    assert (_error(ember, run) is None) is (want is None)
    if want is None:
        assert run(ember) == run(torch)


@pytest.mark.parametrize("size, stride, offset", [
    ((3, 3), (1, 1), 0), ((2, 2), (2, 1), 1), ((4,), (0,), 2), ((2, 3), (1, 2), 0)])
def test_as_strided_gradient_sums_overlapping_reads(size, stride, offset):
    w = np.arange(1.0, 1.0 + int(np.prod(size))).reshape(size)
    grads = []
    for lib in (ember, torch):
        x = lib.zeros(7, dtype=lib.float64, requires_grad=True)
        (x.as_strided(size, stride, offset) * lib.tensor(w)).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]
