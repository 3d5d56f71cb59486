"""The losses beyond test_functional_loss.py, against PyTorch: huber, margin ranking, hinge and
cosine embedding, soft margin, multilabel soft margin, multi margin, triplet (with and
without a distance function), Poisson and Gaussian NLL, CTC; their modules; PReLU and
alpha dropout.  Forward values and gradients, every reduction, float32/float64."""
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember

REDUCTIONS = ["none", "mean", "sum"]
DTYPES = [ember.float32, ember.float64]


def tol(dtype):
    return 2e-5 if dtype == ember.float32 else 1e-10


def to_pair(a, dtype, grad):
    """ember and torch tensors of numpy array ``a``: floats in ``dtype`` (requiring grad
    when ``grad``), integers as int64."""
    if np.issubdtype(np.asarray(a).dtype, np.integer):
        return ember.tensor(a), torch.tensor(a)
    e = ember.tensor(a).to(dtype)
    t = torch.tensor(a).to(getattr(torch, dtype.name))
    if grad:
        e.requires_grad_()
        t.requires_grad_()
    return e, t


def compare(e, t, leaves, dtype):
    """Same values, and the same gradients for a random upstream gradient."""
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol(dtype),
                               atol=tol(dtype))
    g = np.random.default_rng(9).normal(size=tuple(t.shape))
    e.backward(ember.tensor(g, device=e.device).to(e.dtype))
    t.backward(torch.tensor(g).to(t.dtype))
    for el, tl in leaves:
        assert el.grad is not None
        np.testing.assert_allclose(el.grad.numpy(), tl.grad.numpy(), rtol=tol(dtype),
                                   atol=tol(dtype))


def check(name, arrays, dtype, grads=None, **kwargs):
    """F.<name>(*arrays, **kwargs) against torch's, forward and backward; ``grads`` says
    which arrays require grad (all floating ones by default)."""
    grads = grads or [True] * len(arrays)
    pairs = [to_pair(a, dtype, g) for a, g in zip(arrays, grads)]
    ekw, tkw = dict(kwargs), dict(kwargs)
    for k, v in kwargs.items():            # array keywords (weight): constants
        if isinstance(v, np.ndarray):
            ekw[k], tkw[k] = to_pair(v, dtype, False)
    e = getattr(F, name)(*[p[0] for p in pairs], **ekw)
    t = getattr(TF, name)(*[p[1] for p in pairs], **tkw)
    leaves = [p for p, g in zip(pairs, grads) if g and p[0].is_floating_point()]
    compare(e, t, leaves, dtype)


rng = np.random.default_rng(0)


def normal(*shape):
    return rng.normal(size=shape)


def signs(*shape):
    return rng.choice([-1.0, 1.0], size=shape)


# (name, arrays, which require grad, kwargs)
CASES = [
    ("huber_loss", [normal(3, 4) * 2, normal(3, 4)], None, {}),
    ("huber_loss", [normal(3, 4) * 2, normal(3, 4)], None, {"delta": 0.4}),
    ("huber_loss", [normal(3, 4) * 2, normal(3, 4)], None,
     {"delta": 1.5, "weight": rng.uniform(0.1, 2, (3, 4))}),
    ("margin_ranking_loss", [normal(6), normal(6), signs(6)], [True, True, False], {}),
    ("margin_ranking_loss", [normal(3, 4), normal(1, 4), signs(3, 1)], [True, True, False],
     {"margin": 0.3}),
    ("hinge_embedding_loss", [normal(3, 4), signs(3, 4)], [True, False], {}),
    ("hinge_embedding_loss", [normal(3, 4), signs(4)], [True, False], {"margin": 0.5}),
    ("soft_margin_loss", [normal(3, 4) * 3, signs(3, 4)], [True, False], {}),
    ("soft_margin_loss", [normal(2, 3, 4), signs(4)], [True, False], {}),
    ("multilabel_soft_margin_loss", [normal(3, 5) * 3, rng.integers(0, 2, (3, 5)) * 1.0],
     [True, False], {}),
    ("multilabel_soft_margin_loss", [normal(2, 3, 5), rng.integers(0, 2, (2, 3, 5)) * 1.0,
                                     rng.uniform(0.2, 2, 5)], [True, False, False], {}),
    ("cosine_embedding_loss", [normal(4, 5), normal(4, 5), signs(4)], [True, True, False], {}),
    ("cosine_embedding_loss", [normal(4, 5), normal(4, 5), signs(4)], [True, True, False],
     {"margin": 0.2}),
    ("cosine_embedding_loss", [normal(5), normal(5), np.array(-1.0)], [True, True, False],
     {"margin": -0.5}),
    ("multi_margin_loss", [normal(4, 5), rng.integers(0, 5, 4)], None, {}),
    ("multi_margin_loss", [normal(4, 5), rng.integers(0, 5, 4)], None,
     {"p": 2, "margin": 0.7}),
    ("multi_margin_loss", [normal(4, 5), rng.integers(0, 5, 4)], None,
     {"p": 1, "weight": rng.uniform(0.2, 2, 5)}),
    ("multi_margin_loss", [normal(5), np.array(3)], None, {"margin": 2.0}),
    ("triplet_margin_loss", [normal(4, 5), normal(4, 5), normal(4, 5)], None, {}),
    ("triplet_margin_loss", [normal(4, 5), normal(4, 5), normal(4, 5)], None,
     {"p": 1, "swap": True, "margin": 2.0}),
    ("triplet_margin_loss", [normal(4, 5), normal(4, 5), normal(4, 5)], None,
     {"p": 3, "eps": 1e-3, "swap": True, "margin": 3.0}),
    ("triplet_margin_loss", [normal(5), normal(5), normal(5)], None, {"margin": 3.0}),
    ("triplet_margin_with_distance_loss", [normal(4, 5), normal(4, 5), normal(4, 5)], None,
     {"margin": 2.0}),
    ("triplet_margin_with_distance_loss", [normal(4, 5), normal(4, 5), normal(4, 5)], None,
     {"swap": True, "margin": 3.0}),
    ("poisson_nll_loss", [normal(3, 4), rng.poisson(2, (3, 4)) * 1.0], [True, False], {}),
    ("poisson_nll_loss", [normal(3, 4), rng.poisson(2, (3, 4)) * 1.0], [True, False],
     {"full": True}),
    ("poisson_nll_loss", [rng.uniform(0, 3, (3, 4)), rng.poisson(2, (3, 4)) * 1.0],
     [True, False], {"log_input": False, "full": True, "eps": 1e-3}),
    ("gaussian_nll_loss", [normal(3, 4), normal(3, 4), rng.uniform(0.1, 2, (3, 4))], None, {}),
    ("gaussian_nll_loss", [normal(3, 4), normal(3, 4), rng.uniform(0.1, 2, 3)], None,
     {"full": True}),
    ("gaussian_nll_loss", [normal(3, 4), normal(3, 4), rng.uniform(0.1, 2, (3, 1))], None, {}),
    ("gaussian_nll_loss", [normal(2, 3, 4), normal(2, 3, 4), rng.uniform(0.1, 2, (2, 1, 4))],
     None, {}),
    # variances below eps: clamped in value, the gradient passes as PyTorch's does
    ("gaussian_nll_loss", [normal(3, 4), normal(3, 4),
                           np.where(rng.random((3, 4)) < 0.5, 1e-9, 0.5)], None,
     {"eps": 1e-3}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", range(len(CASES)),
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_loss_matches_torch(case, reduction, dtype):
    name, arrays, grads, kwargs = CASES[case]
    check(name, arrays, dtype, grads, reduction=reduction, **kwargs)


def test_custom_distance_function():
    arrays = [normal(4, 5), normal(4, 5), normal(4, 5)]
    pairs = [to_pair(a, ember.float64, True) for a in arrays]
    e = F.triplet_margin_with_distance_loss(
        *[p[0] for p in pairs], swap=True,
        distance_function=lambda x, y: 1.0 - F.cosine_similarity(x, y))
    t = TF.triplet_margin_with_distance_loss(
        *[p[1] for p in pairs], swap=True,
        distance_function=lambda x, y: 1.0 - TF.cosine_similarity(x, y))
    compare(e, t, pairs, ember.float64)


def test_gaussian_nll_float_var():
    check("gaussian_nll_loss", [normal(3, 4), normal(3, 4)], ember.float64, var=0.7)


@pytest.mark.parametrize("name,arrays,grads", [
    ("soft_margin_loss", [normal(3, 4), signs(3, 4)], [True, False]),
    ("margin_ranking_loss", [normal(5), normal(5), signs(5)], [True, True, False]),
    ("hinge_embedding_loss", [normal(3, 4), signs(3, 4)], [True, False]),
    ("multi_margin_loss", [normal(4, 5), rng.integers(0, 5, 4)], None),
    ("poisson_nll_loss", [normal(3, 4), rng.poisson(2, (3, 4)) * 1.0], [True, False]),
])
@pytest.mark.parametrize("size_average,reduce", [(False, None), (None, False), (True, True)])
@pytest.mark.filterwarnings("ignore:size_average and reduce args")
def test_legacy_reduction_flags(name, arrays, grads, size_average, reduce):
    check(name, arrays, ember.float64, grads, size_average=size_average, reduce=reduce)


def _raises(fn_e, fn_t):
    """Both raise the same exception type with the same message (PyTorch's spelling)."""
    with pytest.raises(Exception) as te:
        fn_t()
    with pytest.raises(type(te.value)) as ee:
        fn_e()
    assert str(ee.value).replace("ember.", "torch.") == str(te.value)


a34, a4, a5 = normal(3, 4), normal(4), normal(5)
ERRORS = [
    lambda f, T: f.huber_loss(T(a34), T(a34), delta=0.0),
    lambda f, T: f.huber_loss(T(a34), T(a34), weight=T(a4)),
    lambda f, T: f.huber_loss(T(a34), T(a34), reduction="bad"),
    lambda f, T: f.margin_ranking_loss(T(a34), T(a34), T(a4)),
    lambda f, T: f.margin_ranking_loss(T(a4), T(a4), T(a4), reduction="avg"),
    lambda f, T: f.cosine_embedding_loss(T(a34), T(a34), T(np.ones((3, 1)))),
    lambda f, T: f.cosine_embedding_loss(T(a34), T(a34), T(np.array(1.0))),
    lambda f, T: f.cosine_embedding_loss(T(a4), T(a4), T(np.ones(3))),
    lambda f, T: f.multi_margin_loss(T(a34), T(np.array([0, 1, 2])), p=3),
    lambda f, T: f.multi_margin_loss(T(a34), T(np.array([0, 1, 2])), weight=T(np.ones((2, 2)))),
    lambda f, T: f.multi_margin_loss(T(a34), T(np.array([0, 1, 7]))),
    lambda f, T: f.multi_margin_loss(T(a34), T(np.array([0, 1]))),
    lambda f, T: f.triplet_margin_loss(T(a34), T(a34), T(a4)),
    lambda f, T: f.triplet_margin_loss(T(a34), T(a34), T(a34), margin=0),
    lambda f, T: f.triplet_margin_with_distance_loss(T(a34), T(a34), T(a34), margin=-1.0),
    lambda f, T: f.triplet_margin_with_distance_loss(T(a34), T(a4), T(a34)),
    lambda f, T: f.triplet_margin_with_distance_loss(T(a34), T(a34), T(a34), reduction="x"),
    lambda f, T: f.gaussian_nll_loss(T(a34), T(a34), -1.0),
    lambda f, T: f.gaussian_nll_loss(T(a34), T(a34), T(-np.ones((3, 4)))),
    lambda f, T: f.gaussian_nll_loss(T(a34), T(a34), T(np.ones((2, 4)))),
    lambda f, T: f.gaussian_nll_loss(T(a34), T(a34), T(np.ones((3, 4))), reduction="x"),
    lambda f, T: f.poisson_nll_loss(T(a34), T(a34), reduction="x"),
    lambda f, T: f.soft_margin_loss(T(a34), T(a34), reduction="x"),
    lambda f, T: f.hinge_embedding_loss(T(a34), T(a34), reduction="x"),
    lambda f, T: f.multilabel_soft_margin_loss(T(a34), T(a34), reduction="x"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(case):
    _raises(lambda: ERRORS[case](F, ember.tensor), lambda: ERRORS[case](TF, torch.tensor))


# --- CTC

def ctc_inputs(seed, frames, batch, classes, blank, target_lengths, padded_width=None):
    """Random logits and targets avoiding ``blank``, with repeats so the skip rule matters."""
    r = np.random.default_rng(seed)
    logits = r.normal(size=(frames, batch, classes))
    labels = [c for c in range(classes) if c != blank]
    width = padded_width or max(target_lengths, default=0)
    targets = r.choice(labels, size=(batch, width))
    if width > 1:
        targets[:, 1] = targets[:, 0]        # a repeated label needs a blank between
    return logits, targets


def run_ctc(logits, targets, il, tl, dtype, concat=False, lengths_as_tensors=False, **kw):
    x, tx = to_pair(logits, dtype, True)
    if concat:
        targets = np.concatenate([row[:n] for row, n in zip(targets, tl)]).astype(np.int64)
    et, tt = ember.tensor(targets), torch.tensor(targets)
    eil, etl, til, ttl = il, tl, il, tl
    if lengths_as_tensors:
        eil, etl = ember.tensor(il), ember.tensor(tl)
        til, ttl = torch.tensor(il), torch.tensor(tl)
    dim = x.dim() - 1
    e = F.ctc_loss(x.log_softmax(dim), et, eil, etl, **kw)
    t = TF.ctc_loss(tx.log_softmax(dim), tt, til, ttl, **kw)
    return e, t, (x, tx)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("blank", [0, 2, 5])
@pytest.mark.parametrize("concat", [False, True])
def test_ctc_matches_torch(dtype, reduction, blank, concat):
    tl = [3, 4, 1, 0]
    il = [8, 6, 3, 5]
    logits, targets = ctc_inputs(blank, 8, 4, 6, blank, tl, padded_width=5)
    e, t, leaves = run_ctc(logits, targets, il, tl, dtype, concat=concat, blank=blank,
                           reduction=reduction, lengths_as_tensors=concat)
    compare(e, t, [leaves], dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_ctc_unbatched(reduction):
    logits, targets = ctc_inputs(1, 6, 1, 4, 0, [3])
    logits, targets = logits[:, 0], targets[0]
    x, tx = to_pair(logits, ember.float64, True)
    e = F.ctc_loss(x.log_softmax(1), ember.tensor(targets), ember.tensor(6), ember.tensor(3),
                   reduction=reduction)
    t = TF.ctc_loss(tx.log_softmax(1), torch.tensor(targets), torch.tensor(6),
                    torch.tensor(3), reduction=reduction)
    compare(e, t, [(x, tx)], ember.float64)


def test_ctc_gradient_wrt_log_probs_is_pytorchs():
    """PyTorch's gradient w.r.t. the log-probabilities themselves (not through a
    log_softmax) carries an extra exp(log_probs) on each sample's frames; so does ember's."""
    logits, targets = ctc_inputs(3, 5, 2, 4, 0, [2, 2])
    lp = torch.tensor(logits).log_softmax(2).numpy()
    x, tx = to_pair(lp, ember.float64, True)
    e = F.ctc_loss(x, ember.tensor(targets), [5, 3], [2, 2], reduction="sum")
    t = TF.ctc_loss(tx, torch.tensor(targets), [5, 3], [2, 2], reduction="sum")
    compare(e, t, [(x, tx)], ember.float64)


@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_ctc_impossible_alignments(zero_infinity, reduction):
    # sample 0: 3 labels with a repeat need >= 4 frames but get 3; sample 2: no frames
    tl, il = [3, 2, 0], [3, 5, 0]
    logits, targets = ctc_inputs(4, 5, 3, 5, 0, tl)
    e, t, leaves = run_ctc(logits, targets, il, tl, ember.float64, reduction=reduction,
                           zero_infinity=zero_infinity)
    if zero_infinity:
        compare(e, t, [leaves], ember.float64)
    else:
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10)
        assert np.isinf(e.detach().numpy()).any()


def test_ctc_module_and_float32_lengths_tensor():
    logits, targets = ctc_inputs(5, 7, 2, 5, 4, [3, 2])
    x, tx = to_pair(logits, ember.float32, True)
    e = nn.CTCLoss(blank=4, zero_infinity=True)(x.log_softmax(2), ember.tensor(targets),
                                                 ember.tensor([7, 5]), ember.tensor([3, 2]))
    t = torch.nn.CTCLoss(blank=4, zero_infinity=True)(tx.log_softmax(2),
                                                      torch.tensor(targets),
                                                      torch.tensor([7, 5]),
                                                      torch.tensor([3, 2]))
    compare(e, t, [(x, tx)], ember.float32)
    assert repr(nn.CTCLoss()) == "CTCLoss()"


lp362 = np.log(np.full((6, 2, 4), 0.25))
tg = np.array([[1, 2], [3, 1]])
CTC_ERRORS = [
    lambda f, T: f.ctc_loss(T(lp362), T(tg), [6, 5], [2, 2], blank=4),
    lambda f, T: f.ctc_loss(T(lp362), T(tg), [6, 7], [2, 2]),
    lambda f, T: f.ctc_loss(T(lp362), T(tg), [6], [2, 2]),
    lambda f, T: f.ctc_loss(T(lp362), T(tg), [6, 5], [2]),
    lambda f, T: f.ctc_loss(T(lp362), T(tg), [6, 5], [2, 3]),
    lambda f, T: f.ctc_loss(T(lp362), T(np.array([1, 2, 3])), [6, 5], [2, 2]),
    lambda f, T: f.ctc_loss(T(lp362), T(tg), [6, 5], [2, -1]),
    lambda f, T: f.ctc_loss(T(lp362), T(tg), [6, -1], [2, 1]),
    lambda f, T: f.ctc_loss(T(lp362), T(tg), [6, 5], [2, 2], reduction="bad"),
    lambda f, T: f.ctc_loss(T(lp362.astype(np.int32)), T(tg), [6, 5], [2, 2]),
]


@pytest.mark.parametrize("case", range(len(CTC_ERRORS)))
def test_ctc_errors_match_torch(case):
    _raises(lambda: CTC_ERRORS[case](F, ember.tensor),
            lambda: CTC_ERRORS[case](TF, torch.tensor))


# --- modules

MODULES = [
    ("HuberLoss", {"delta": 0.5}, [normal(3, 4) * 2, normal(3, 4)], None),
    ("MarginRankingLoss", {"margin": 0.2}, [normal(5), normal(5), signs(5)],
     [True, True, False]),
    ("HingeEmbeddingLoss", {"margin": 0.5, "reduction": "sum"}, [normal(3, 4), signs(3, 4)],
     [True, False]),
    ("SoftMarginLoss", {}, [normal(3, 4), signs(3, 4)], [True, False]),
    ("MultiLabelSoftMarginLoss", {}, [normal(3, 5), rng.integers(0, 2, (3, 5)) * 1.0],
     [True, False]),
    ("CosineEmbeddingLoss", {"margin": 0.1}, [normal(4, 5), normal(4, 5), signs(4)],
     [True, True, False]),
    ("MultiMarginLoss", {"p": 2, "reduction": "none"}, [normal(4, 5), rng.integers(0, 5, 4)],
     None),
    ("TripletMarginLoss", {"margin": 2.0, "swap": True},
     [normal(4, 5), normal(4, 5), normal(4, 5)], None),
    ("TripletMarginWithDistanceLoss", {"margin": 2.0},
     [normal(4, 5), normal(4, 5), normal(4, 5)], None),
    ("PoissonNLLLoss", {"full": True}, [normal(3, 4), rng.poisson(2, (3, 4)) * 1.0],
     [True, False]),
    ("GaussianNLLLoss", {"full": True}, [normal(3, 4), normal(3, 4),
                                         rng.uniform(0.1, 1, (3, 4))], None),
    ("CosineSimilarity", {"dim": 0}, [normal(4, 3), normal(4, 3)], None),
    ("PairwiseDistance", {"p": 1.0, "keepdim": True}, [normal(4, 3), normal(4, 3)], None),
]


@pytest.mark.parametrize("case", range(len(MODULES)), ids=[m[0] for m in MODULES])
def test_modules_match_torch(case):
    name, kwargs, arrays, grads = MODULES[case]
    grads = grads or [True] * len(arrays)
    pairs = [to_pair(a, ember.float64, g) for a, g in zip(arrays, grads)]
    em, tm = getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    e, t = em(*[p[0] for p in pairs]), tm(*[p[1] for p in pairs])
    compare(e, t, [p for p, g in zip(pairs, grads) if g and p[0].is_floating_point()],
            ember.float64)
    assert em.extra_repr() == tm.extra_repr()


def test_legacy_module_flags_warn():
    with pytest.warns(UserWarning, match="reduction='sum'"):
        m = nn.SoftMarginLoss(size_average=False)
    assert m.reduction == "sum"
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert nn.MultiMarginLoss(reduce=False).reduction == "none"


def test_huber_broadcast_warns_like_torch():
    x, tx = to_pair(normal(3, 4), ember.float64, True)
    y, ty = to_pair(normal(4), ember.float64, False)
    with pytest.warns(UserWarning, match="different to the input size"):
        e = F.huber_loss(x, y, reduction="none")
    with pytest.warns(UserWarning, match="different to the input size"):
        t = TF.huber_loss(tx, ty, reduction="none")
    compare(e, t, [(x, tx)], ember.float64)


def test_module_constructor_errors():
    for cls, kwargs in [("MultiMarginLoss", {"p": 3}),
                        ("MultiMarginLoss", {"weight": np.ones((2, 2))}),
                        ("TripletMarginLoss", {"margin": 0}),
                        ("TripletMarginWithDistanceLoss", {"margin": -1.0})]:
        w = kwargs.get("weight")
        ek = dict(kwargs, weight=ember.tensor(w)) if w is not None else kwargs
        tk = dict(kwargs, weight=torch.tensor(w)) if w is not None else kwargs
        _raises(lambda: getattr(nn, cls)(**ek), lambda: getattr(torch.nn, cls)(**tk))


# --- PReLU

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,num", [((2, 3, 4), 3), ((2, 3, 4), 1), ((5,), 1),
                                       ((2, 3), 3), ((), 1), ((2, 3, 2, 2), 3)])
def test_prelu_matches_torch(dtype, shape, num):
    x, tx = to_pair(normal(*shape), dtype, True)
    w, tw = to_pair(rng.uniform(-0.5, 0.5, num), dtype, True)
    compare(F.prelu(x, w), TF.prelu(tx, tw), [(x, tx), (w, tw)], dtype)


def test_prelu_module():
    m, tm = nn.PReLU(3, init=0.1), torch.nn.PReLU(3, init=0.1)
    assert repr(m) == repr(tm) == "PReLU(num_parameters=3)"
    assert m.weight.shape == (3,) and np.allclose(m.weight.detach().numpy(), 0.1)
    x, tx = to_pair(normal(2, 3, 4), ember.float32, True)
    compare(m(x), tm(tx), [(x, tx), (m.weight, tm.weight)], ember.float32)
    assert nn.PReLU(dtype=ember.float64).weight.dtype == ember.float64


def test_prelu_errors():
    for x, w in [(a34, np.array([0.1, 0.2])), (a34, np.ones((2, 2))),
                 (a4, np.ones(4)), (a4, np.ones(3))]:
        _raises(lambda: F.prelu(ember.tensor(x), ember.tensor(w)),
                lambda: TF.prelu(torch.tensor(x), torch.tensor(w)))


# --- alpha dropout

_ALPHA = 1.7580993408473766


@pytest.mark.parametrize("feature", [False, True])
@pytest.mark.parametrize("p", [0.2, 0.5])
def test_alpha_dropout_values(feature, p):
    """Kept units map to a x + a alpha p, dropped ones to a alpha (p - 1); a whole channel
    at once for the feature variant; zero mean / unit variance are kept."""
    ember.manual_seed(0)
    x = ember.randn(64, 32, 4, 4, dtype=ember.float64)
    fn = F.feature_alpha_dropout if feature else F.alpha_dropout
    y = fn(x, p, training=True).numpy()
    xn = x.numpy()
    a = 1.0 / np.sqrt((_ALPHA ** 2 * p + 1) * (1 - p))
    kept = np.isclose(y, a * xn + _ALPHA * a * p)
    dropped = np.isclose(y, _ALPHA * a * (p - 1))
    assert (kept | dropped).all()
    assert abs(dropped.mean() - p) < 0.05
    if feature:
        assert (dropped.all(axis=(2, 3)) | ~dropped.any(axis=(2, 3))).all()
    assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05


def test_alpha_dropout_identity_and_errors():
    x = ember.randn(3, 4)
    assert F.alpha_dropout(x, 0.5) is x                    # training defaults to False
    assert F.alpha_dropout(x, 0.0, training=True) is x
    assert np.all(F.alpha_dropout(x, 1.0, training=True).numpy() == 0)
    y = x.clone()
    out = F.alpha_dropout(y, 0.3, training=True, inplace=True)
    assert out is y
    x.requires_grad_()
    F.feature_alpha_dropout(x, 0.3, training=True).sum().backward()
    assert x.grad.shape == (3, 4)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        F.alpha_dropout(x, 1.5)
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        F.feature_alpha_dropout(ember.randn(4), 0.5, training=True)


def test_alpha_dropout_modules():
    m = nn.AlphaDropout(0.3)
    assert repr(m) == repr(torch.nn.AlphaDropout(0.3))
    x = ember.randn(8, 4)
    assert np.array_equal(m.eval()(x).numpy(), x.numpy())
    assert not np.array_equal(m.train()(x).numpy(), x.numpy())
    f = nn.FeatureAlphaDropout(0.5).train()
    assert repr(f) == repr(torch.nn.FeatureAlphaDropout(0.5))
    assert f(ember.randn(2, 3, 4)).shape == (2, 3, 4)


# inputs exactly at each hinge's kink: the clamp_min losses pass the whole gradient there,
# the fused margin kernels (multi margin, multilabel margin) none; never a max tie's half
TIE_CASES = [
    ("margin_ranking_loss", [np.array([0.0, 1.0, 2.0]), np.zeros(3), np.array([1.0, 1, -1])],
     [True, True, False], {}),
    ("hinge_embedding_loss", [np.array([0.0, 1.0, 2.0]), np.array([-1.0, -1, 1])],
     [True, False], {}),
    ("cosine_embedding_loss", [np.eye(2), np.array([[1.0, 0], [1, 0]]), np.array([-1.0, -1])],
     [True, True, False], {"margin": 0.0}),
    ("triplet_margin_loss", [np.zeros((1, 2)), np.array([[1.0, 0]]), np.array([[2.0, 0]])],
     None, {"eps": 0.0}),
    ("multi_margin_loss", [np.array([[0.0, 1, 0], [0, 1, 0.5]]), np.array([1, 1])],
     [True, False], {}),
    ("multi_margin_loss", [np.array([[0.0, 1, 0], [0, 1, 0.5]]), np.array([1, 1])],
     [True, False], {"p": 2}),
    ("multilabel_margin_loss", [np.array([[0.0, 1, 0]]), np.array([[1, -1, 0]])],
     [True, False], {}),
    ("soft_margin_loss", [np.array([0.0, 1.0]), np.array([1.0, -1.0])], [True, False], {}),
]


@pytest.mark.parametrize("case", TIE_CASES, ids=[c[0] for c in TIE_CASES])
def test_gradient_at_the_margin(case):
    name, arrays, grads, kwargs = case
    check(name, arrays, ember.float64, grads, reduction="sum", **kwargs)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_gradient_of_an_impossible_sample(zero_infinity):
    """NaN where no alignment reaches the target (PyTorch's: a diverging run shows it), 0
    under zero_infinity; the possible sample's gradient as PyTorch's."""
    grads = []
    for m in (ember, torch):
        lp = m.zeros(3, 2, 3, dtype=m.float64).log_softmax(-1).detach().requires_grad_()
        loss = m.nn.CTCLoss(reduction="none", zero_infinity=zero_infinity)(
            lp, m.tensor([[1, 1, 1], [1, 2, 0]]), m.tensor([3, 3]), m.tensor([3, 2]))
        loss.sum().backward()
        grads.append(lp.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, equal_nan=True)
    assert np.isnan(grads[0][:, 0]).all() != zero_infinity


def test_ctc_impossible_sample_nan_stays_on_its_frames():
    # PyTorch's gradient of an infinite loss is NaN on the sample's input_length frames and
    # 0 on the frames after them
    grads = []
    for m in (ember, torch):
        lp = m.tensor(np.random.default_rng(4).standard_normal((6, 2, 5))).log_softmax(2)
        lp = lp.detach().requires_grad_()
        m.nn.functional.ctc_loss(lp, m.tensor([[1, 1, 1, 1], [2, 3, 0, 0]]), m.tensor([3, 5]),
                                 m.tensor([4, 2]), reduction="sum").backward()
        grads.append(lp.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, equal_nan=True)
    assert np.isnan(grads[0][:3, 0]).all() and (grads[0][3:, 0] == 0).all()
