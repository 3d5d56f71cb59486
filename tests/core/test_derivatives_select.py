"""Gradients of the value-selecting ops against PyTorch 2.13: order statistics (sort, topk,
kthvalue, median, mode, msort, max/min with dim route the gradient to the chosen index;
amax/amin and full max/min/median split it between ties), cummax/cummin, cumprod with
zeros, scatter_reduce, tan."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


def leaves(a):
    return (ember.tensor(a, dtype=ember.float64, requires_grad=True),
            torch.tensor(a, dtype=torch.float64, requires_grad=True))


def backward_both(fn_e, fn_t, a, seed=0):
    """Forward + backward of the same values; returns (ember grad, torch grad)."""
    e, t = leaves(a)
    out_e, out_t = fn_e(e), fn_t(t)
    g = np.random.default_rng(seed).standard_normal(tuple(out_t.shape))
    np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy())
    out_e.backward(ember.tensor(g, device=out_e.device, dtype=ember.float64))
    out_t.backward(torch.tensor(g))
    return e.grad.numpy(), t.grad.numpy()


DISTINCT = np.random.default_rng(1).permutation(24).reshape(4, 6) / 7.0 - 1.0
TIES = np.array([[1.0, 3.0, 3.0, 0.0, 2.0], [2.0, 2.0, 1.0, 5.0, 5.0]])

SELECT = {
    "sort": lambda m, x: m.sort(x, 1).values,
    "sort_desc_dim0": lambda m, x: m.sort(x, 0, descending=True).values,
    "argsort_values": lambda m, x: x.gather(1, m.argsort(x, 1)),
    "topk": lambda m, x: m.topk(x, 3).values,
    "topk_smallest_dim0": lambda m, x: m.topk(x, 2, 0, largest=False).values,
    "kthvalue": lambda m, x: m.kthvalue(x, 2, 1).values,
    "kthvalue_keepdim": lambda m, x: m.kthvalue(x, 3, 0, keepdim=True).values,
    "median_dim": lambda m, x: m.median(x, 1).values,
    "median_keepdim": lambda m, x: m.median(x, 0, keepdim=True).values,
    "median_full": lambda m, x: m.median(x),
    "mode": lambda m, x: m.mode(x, 1).values,
    "msort": lambda m, x: m.msort(x),
    "max_dim": lambda m, x: m.max(x, 1).values,
    "min_dim_keepdim": lambda m, x: m.min(x, 0, keepdim=True).values,
    "max_full": lambda m, x: m.max(x),
    "amax": lambda m, x: m.amax(x, 1),
    "amin_all": lambda m, x: m.amin(x, (0, 1)),
}


@pytest.mark.parametrize("name", sorted(SELECT))
def test_selection_grad_matches_torch(name):
    fn = SELECT[name]
    ge, gt = backward_both(lambda x: fn(ember, x), lambda x: fn(torch, x), DISTINCT)
    np.testing.assert_allclose(ge, gt)
    assert gradcheck(lambda x: fn(ember, x), (leaves(DISTINCT)[0],))


# with ties, torch routes a dim reduction's gradient to the returned index and splits a
# full max/min/median and amax/amin evenly
TIE_OPS = ["max_dim", "min_dim_keepdim", "median_dim", "median_full", "mode", "max_full",
           "amax", "amin_all"]


@pytest.mark.parametrize("name", TIE_OPS)
def test_selection_with_ties_matches_torch(name):
    fn = SELECT[name]
    ge, gt = backward_both(lambda x: fn(ember, x), lambda x: fn(torch, x), TIES)
    np.testing.assert_allclose(ge, gt)


def test_selection_indices_need_no_grad_and_zero_dim():
    x = ember.tensor([[3.0, 1.0], [0.0, 2.0]], requires_grad=True)
    r = ember.sort(x, 1)
    assert r.values.requires_grad and not r.indices.requires_grad
    with ember.no_grad():
        assert not ember.topk(x, 1).values.requires_grad
    s = ember.tensor(2.0, dtype=ember.float64, requires_grad=True)
    ember.kthvalue(s, 1).values.backward()
    assert s.grad.item() == 1.0


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("dim", [0, 1])
def test_cummax_cummin_grad(name, dim):
    for a in (DISTINCT, TIES):
        ge, gt = backward_both(lambda x: getattr(ember, name)(x, dim).values,
                               lambda x: getattr(torch, name)(x, dim).values, a)
        np.testing.assert_allclose(ge, gt)
    assert gradcheck(lambda x: getattr(ember, name)(x, dim).values, (leaves(DISTINCT)[0],))


ZEROS = [np.array([[2.0, 0.0, 3.0, 0.5, 4.0], [1.0, 2.0, 0.0, 3.0, 0.0]]),
         np.array([[0.0, 1.5, 2.0], [3.0, 0.0, 0.0]]), np.array([[1.5, -2.0, 0.5]])]


@pytest.mark.parametrize("case", range(len(ZEROS)))
def test_cumprod_with_zeros_matches_torch(case):
    a = ZEROS[case]
    for dim in (0, 1):
        ge, gt = backward_both(lambda x: ember.cumprod(x, dim), lambda x: torch.cumprod(x, dim),
                               a)
        np.testing.assert_allclose(ge, gt, atol=1e-12)
    assert gradcheck(lambda x: ember.cumprod(x, 1), (leaves(a)[0],))


def test_cumprod_single_zero_gradgrad():
    x = leaves(np.array([3.0, 1.0, 4.0, 1.5, 5.0, 0.0, 2.0]))[0]
    assert gradgradcheck(lambda t: ember.cumprod(t, 0), (x,))


INDEX = [[0, 1, 0, 4], [2, 2, 2, 2], [1, 0, 3, 3]]


@pytest.mark.parametrize("reduce", ["sum", "mean", "prod", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("zeros", [False, True])
def test_scatter_reduce_grad_matches_torch(reduce, include_self, zeros):
    rng = np.random.default_rng(2)
    a, s = rng.uniform(0.5, 2, (3, 5)), rng.uniform(0.5, 2, (3, 4))
    if zeros:
        a[0, 0] = a[1, 2] = s[1, 1] = s[2, 0] = s[2, 2] = s[2, 3] = 0.0
    ae, at = leaves(a)
    se, st = leaves(s)
    ie, it = ember.tensor(INDEX), torch.tensor(INDEX)
    out_e = ember.scatter_reduce(ae, 1, ie, se, reduce, include_self=include_self)
    out_t = torch.scatter_reduce(at, 1, it, st, reduce, include_self=include_self)
    g = rng.standard_normal((3, 5))
    out_e.backward(ember.tensor(g, device=out_e.device, dtype=ember.float64))
    out_t.backward(torch.tensor(g))
    np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy())
    np.testing.assert_allclose(ae.grad.numpy(), at.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(se.grad.numpy(), st.grad.numpy(), atol=1e-12)
    if not (zeros and reduce in ("amax", "amin")):
        assert gradcheck(lambda x, y: ember.scatter_reduce(x, 1, ie, y, reduce,
                                                           include_self=include_self),
                         (leaves(a)[0], leaves(s)[0]))


def test_tan_grad():
    a = np.linspace(-1.2, 1.2, 12).reshape(3, 4)
    ge, gt = backward_both(ember.tan, torch.tan, a)
    np.testing.assert_allclose(ge, gt)
    assert gradgradcheck(ember.tan, (leaves(a)[0],))
