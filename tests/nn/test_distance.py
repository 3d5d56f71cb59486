"""cosine_similarity, pairwise_distance, pdist and the CosineSimilarity / PairwiseDistance
modules against PyTorch: values and gradients, float32/float64, broadcasting, eps."""
import math

import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember

DTYPES = [ember.float32, ember.float64]


def pair(a, dtype):
    e = ember.tensor(a).to(dtype).requires_grad_()
    t = torch.tensor(a).to(getattr(torch, dtype.name)).requires_grad_()
    return e, t


def compare(e, t, leaves, dtype):
    tol = 2e-5 if dtype == ember.float32 else 1e-10
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)
    g = np.random.default_rng(1).normal(size=tuple(t.shape))
    e.backward(ember.tensor(g, device=e.device).to(e.dtype))
    t.backward(torch.tensor(g).to(t.dtype))
    for el, tl in leaves:
        np.testing.assert_allclose(el.grad.numpy(), tl.grad.numpy(), rtol=tol, atol=tol)


def run(fn, shapes, dtype, scale=(1.0, 1.0), **kwargs):
    rng = np.random.default_rng(len(shapes[0]) + len(shapes[1]))
    (x1, t1), (x2, t2) = [pair(rng.normal(size=s) * c, dtype) for s, c in zip(shapes, scale)]
    e = getattr(F, fn)(x1, x2, **kwargs)
    t = getattr(TF, fn)(t1, t2, **kwargs)
    compare(e, t, [(x1, t1), (x2, t2)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes,dim", [
    (((4, 5), (4, 5)), 1), (((4, 5), (4, 5)), 0), (((4, 5), (5,)), -1),
    (((2, 3, 4), (1, 3, 4)), 1), (((2, 3, 4), (3, 1)), 2), (((5,), (5,)), 0),
])
def test_cosine_similarity(dtype, shapes, dim):
    run("cosine_similarity", shapes, dtype, dim=dim)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cosine_similarity_small_norms_clamped_like_torch(dtype):
    # rows with norms below eps: divided by eps in value, the norm's gradient kept
    run("cosine_similarity", ((3, 4), (3, 4)), dtype, scale=(1e-3, 1.0), eps=0.05)
    x = ember.zeros(2, 3, dtype=dtype)
    assert np.all(F.cosine_similarity(x, x).numpy() == 0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, math.inf])
@pytest.mark.parametrize("shapes", [((4, 5), (4, 5)), ((4, 5), (5,)), ((2, 3, 4), (3, 4)),
                                    ((5,), (5,))])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance(dtype, p, shapes, keepdim):
    run("pairwise_distance", shapes, dtype, p=p, keepdim=keepdim)


def test_pairwise_distance_eps_and_scalars():
    run("pairwise_distance", ((3, 4), (3, 4)), ember.float64, eps=0.1)
    e = F.pairwise_distance(ember.tensor(1.0), ember.tensor(3.0))
    t = TF.pairwise_distance(torch.tensor(1.0), torch.tensor(3.0))
    assert e.shape == t.shape == () and np.isclose(float(e), float(t))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, math.inf])
@pytest.mark.parametrize("n", [1, 2, 5])
def test_pdist(dtype, p, n):
    x, t = pair(np.random.default_rng(n).normal(size=(n, 3)), dtype)
    compare(F.pdist(x, p), TF.pdist(t, p), [(x, t)], dtype)


def _raises(fn_e, fn_t):
    with pytest.raises(Exception) as te:
        fn_t()
    with pytest.raises(type(te.value)) as ee:
        fn_e()
    assert str(ee.value) == str(te.value)


a34 = np.random.default_rng(0).normal(size=(3, 4))
ERRORS = [
    lambda f, T: f.cosine_similarity(T(a34), T(np.ones((5, 4)))),
    lambda f, T: f.cosine_similarity(T(a34.astype(np.int32)), T(a34.astype(np.int32))),
    lambda f, T: f.cosine_similarity(T(a34), T(a34), dim=2),
    lambda f, T: f.pairwise_distance(T(a34), T(np.ones((5, 4)))),
    lambda f, T: f.pdist(T(np.ones((2, 3, 4)))),
    lambda f, T: f.pdist(T(a34), p=-1),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(case):
    _raises(lambda: ERRORS[case](F, ember.tensor), lambda: ERRORS[case](TF, torch.tensor))


@pytest.mark.parametrize("name,kwargs", [
    ("CosineSimilarity", {}), ("CosineSimilarity", {"dim": 0, "eps": 1e-6}),
    ("PairwiseDistance", {}), ("PairwiseDistance", {"p": 1.0, "eps": 0.0, "keepdim": True}),
])
def test_modules(name, kwargs):
    rng = np.random.default_rng(3)
    (x1, t1), (x2, t2) = pair(rng.normal(size=(4, 5)), ember.float64), \
        pair(rng.normal(size=(4, 5)), ember.float64)
    em, tm = getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    compare(em(x1, x2), tm(t1, t2), [(x1, t1), (x2, t2)], ember.float64)
    assert repr(em) == repr(tm)
