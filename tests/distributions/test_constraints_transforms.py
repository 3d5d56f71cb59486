"""Constraints (check, event_dim, is_discrete, repr) and transforms (forward, inverse,
log|det J|, shapes, caching, equality, pickling) against torch.distributions, and the
biject_to / transform_to registries."""
import pickle

import numpy as np
import pytest
import torch

import ember
from ember.distributions import constraints as EC
from ember.distributions import transforms as ET

TC = torch.distributions.constraints
TT = torch.distributions.transforms
G = np.random.default_rng(2)
VALUES = [np.array([-1.5, 0.0, 0.5, 1.0, 2.0, np.nan, np.inf]),
          G.dirichlet(np.ones(3), size=4), np.array([[0.2, 0.9], [0.5, 0.5], [-0.1, 1.1]]),
          np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), np.array([[2.0, 3.0, 0.0]])]
SPD = np.array([[[2.0, 0.5], [0.5, 1.0]], [[1.0, 2.0], [2.0, 1.0]], [[1.0, 0.3], [0.2, 1.0]]])
TRI = np.array([[[1.0, 0.0], [0.5, 2.0]], [[1.0, 0.3], [0.5, 2.0]], [[-1.0, 0.0], [0.5, 2.0]]])

SIMPLE = ["real", "positive", "nonnegative", "unit_interval", "boolean",
          "nonnegative_integer", "positive_integer", "simplex", "real_vector", "one_hot"]
MADE = [("interval", (-1.0, 1.0)), ("half_open_interval", (0.0, 1.0)),
        ("greater_than", (0.5,)), ("greater_than_eq", (0.5,)), ("less_than", (1.0,)),
        ("integer_interval", (0, 2)), ("multinomial", (3,))]
MATRIX = ["lower_triangular", "lower_cholesky", "positive_definite",
          "positive_semidefinite", "symmetric", "square", "corr_cholesky"]


def _check(ec, tc, value):
    got = ec.check(ember.tensor(value)).numpy()
    want = tc.check(torch.tensor(value)).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", SIMPLE)
def test_simple_constraints(name):
    ec, tc = getattr(EC, name), getattr(TC, name)
    assert (ec.is_discrete, ec.event_dim) == (tc.is_discrete, tc.event_dim)
    assert repr(ec) == repr(tc)
    for v in VALUES:
        if v.ndim >= ec.event_dim:
            _check(ec, tc, v)


@pytest.mark.parametrize("name,args", MADE, ids=[m[0] for m in MADE])
def test_parametrised_constraints(name, args):
    ec, tc = getattr(EC, name)(*args), getattr(TC, name)(*args)
    assert (ec.is_discrete, ec.event_dim) == (tc.is_discrete, tc.event_dim)
    assert repr(ec) == repr(tc)
    for v in VALUES:
        if v.ndim >= ec.event_dim:
            _check(ec, tc, v)


@pytest.mark.parametrize("name", MATRIX)
def test_matrix_constraints(name):
    ec, tc = getattr(EC, name), getattr(TC, name)
    assert (ec.event_dim, repr(ec)) == (tc.event_dim, repr(tc))
    for v in (SPD, TRI, np.linalg.cholesky(SPD[:1])):
        _check(ec, tc, v)
    unit = np.array([[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.6, 0.9]]])
    _check(ec, tc, unit)


def test_composite_constraints():
    v = np.array([[0.5, -1.0, 2.0], [0.1, 3.0, -2.0]])
    ec = EC.cat([EC.positive, EC.real], dim=1, lengths=[1, 2])
    tc = TC.cat([TC.positive, TC.real], dim=1, lengths=[1, 2])
    _check(ec, tc, v)
    ec = EC.stack([EC.positive, EC.real, EC.less_than(0.0)], dim=1)
    tc = TC.stack([TC.positive, TC.real, TC.less_than(0.0)], dim=1)
    _check(ec, tc, v)
    ec, tc = EC.independent(EC.positive, 1), TC.independent(TC.positive, 1)
    assert repr(ec) == repr(tc) and ec.event_dim == 1
    _check(ec, tc, v)
    with pytest.raises(ValueError, match="Expected value.dim\\(\\) >= 2"):
        EC.independent(EC.real, 2).check(ember.tensor([1.0]))


def test_dependent():
    assert EC.is_dependent(EC.dependent) and not EC.is_dependent(EC.real)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        EC.dependent.check(ember.tensor(1.0))
    with pytest.raises(NotImplementedError, match="cannot be determined statically"):
        EC.dependent.event_dim
    d = EC.dependent(is_discrete=True, event_dim=1)
    assert d.is_discrete and d.event_dim == 1
    support = ember.distributions.Uniform.support
    assert EC.is_dependent(support) and support.event_dim == 0
    assert repr(ember.distributions.Uniform(0.0, 2.0).support) == \
        "Interval(lower_bound=0.0, upper_bound=2.0)"


X = G.normal(size=(2, 3))
TRANSFORMS = [
    ("ExpTransform", (), X), ("SigmoidTransform", (), X), ("TanhTransform", (), X),
    ("SoftplusTransform", (), X), ("AbsTransform", (), X),
    ("AffineTransform", (1.5, -2.0), X), ("AffineTransform", (0.5, 3.0, 1), X),
    ("PowerTransform", (2.5,), np.abs(X) + 0.1),
    ("SoftmaxTransform", (), X), ("StickBreakingTransform", (), X),
    ("LowerCholeskyTransform", (), G.normal(size=(2, 3, 3))),
    ("PositiveDefiniteTransform", (), G.normal(size=(2, 3, 3))),
    ("CorrCholeskyTransform", (), G.normal(size=(2, 3))),
    ("ReshapeTransform", ((2, 3), (3, 2)), X),
]


def _make(name, args, lib):
    mod = ET if lib is ember else TT
    return getattr(mod, name)(*args)


@pytest.mark.parametrize("name,args,x", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_transforms(name, args, x):
    te, tt = _make(name, args, ember), _make(name, args, torch)
    xe, xt = ember.tensor(x), torch.tensor(x)
    ye, yt = te(xe), tt(xt)
    np.testing.assert_allclose(ye.numpy(), yt.numpy(), rtol=1e-10, atol=1e-12)
    assert te.bijective == tt.bijective
    assert (te.domain.event_dim, te.codomain.event_dim) == \
        (tt.domain.event_dim, tt.codomain.event_dim)
    assert bool(te.codomain.check(ye).all())
    inv = te.inv(ye)
    np.testing.assert_allclose(inv.numpy(), tt.inv(yt).numpy(), rtol=1e-8, atol=1e-10)
    assert te.inv.inv is te
    try:
        want = tt.log_abs_det_jacobian(xt, yt)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            te.log_abs_det_jacobian(xe, ye)
    else:
        np.testing.assert_allclose(te.log_abs_det_jacobian(xe, ye).numpy(), want.numpy(),
                                   rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(te.inv.log_abs_det_jacobian(ye, xe).numpy(),
                                   -want.numpy(), rtol=1e-9, atol=1e-10)
    shape = tuple(x.shape)
    assert tuple(te.forward_shape(shape)) == tuple(tt.forward_shape(shape))
    assert tuple(te.inverse_shape(tuple(yt.shape))) == tuple(tt.inverse_shape(yt.shape))
    assert (te == _make(name, args, ember)) == (tt == _make(name, args, torch))
    assert repr(te).split("(")[0] == repr(tt).split("(")[0]
    te2 = pickle.loads(pickle.dumps(te))
    np.testing.assert_allclose(te2(xe).numpy(), ye.numpy())


def test_cache_and_compose():
    t = ET.ExpTransform(cache_size=1)
    x = ember.tensor([0.5, 1.0])
    y = t(x)
    assert t.inv(y) is x and t(x) is y
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        ET.ExpTransform(cache_size=2)
    assert ET.ExpTransform().with_cache(1)._cache_size == 1
    c = ET.ComposeTransform([ET.AffineTransform(1.0, 2.0), ET.ExpTransform()])
    ct = TT.ComposeTransform([TT.AffineTransform(1.0, 2.0), TT.ExpTransform()])
    xe, xt = ember.tensor([0.1, -0.3]), torch.tensor([0.1, -0.3])
    np.testing.assert_allclose(c(xe).numpy(), ct(xt).numpy(), rtol=1e-6)
    np.testing.assert_allclose(c.log_abs_det_jacobian(xe, c(xe)).numpy(),
                               ct.log_abs_det_jacobian(xt, ct(xt)).numpy(), rtol=1e-6)
    np.testing.assert_allclose(c.inv(c(xe)).numpy(), xe.numpy(), rtol=1e-6)
    assert c.sign == 1 and c.bijective and repr(c.domain) == "Real()"
    assert ET.identity_transform(xe) is xe
    sb = ET.ComposeTransform([ET.ExpTransform(), ET.StickBreakingTransform()])
    assert sb.domain.event_dim == 1 and sb.codomain.event_dim == 1
    it = ET.IndependentTransform(ET.ExpTransform(), 1)
    ti = TT.IndependentTransform(TT.ExpTransform(), 1)
    np.testing.assert_allclose(it.log_abs_det_jacobian(xe, it(xe)).numpy(),
                               ti.log_abs_det_jacobian(xt, ti(xt)).numpy(), rtol=1e-6)


def test_cat_and_stack_transforms():
    x = G.normal(size=(4, 3))
    te = ET.CatTransform([ET.ExpTransform(), ET.AffineTransform(0.0, 3.0)], dim=1,
                         lengths=[1, 2])
    tt = TT.CatTransform([TT.ExpTransform(), TT.AffineTransform(0.0, 3.0)], dim=1,
                         lengths=[1, 2])
    xe, xt = ember.tensor(x), torch.tensor(x)
    np.testing.assert_allclose(te(xe).numpy(), tt(xt).numpy(), rtol=1e-12)
    np.testing.assert_allclose(te.inv(te(xe)).numpy(), x, rtol=1e-12)
    np.testing.assert_allclose(te.log_abs_det_jacobian(xe, te(xe)).numpy(),
                               tt.log_abs_det_jacobian(xt, tt(xt)).numpy(), rtol=1e-12)
    se = ET.StackTransform([ET.ExpTransform(), ET.SigmoidTransform(), ET.TanhTransform()], 1)
    st = TT.StackTransform([TT.ExpTransform(), TT.SigmoidTransform(), TT.TanhTransform()], 1)
    np.testing.assert_allclose(se(xe).numpy(), st(xt).numpy(), rtol=1e-12)
    np.testing.assert_allclose(se.log_abs_det_jacobian(xe, se(xe)).numpy(),
                               st.log_abs_det_jacobian(xt, st(xt)).numpy(), rtol=1e-12)
    np.testing.assert_allclose(se.inv(se(xe)).numpy(), x, rtol=1e-8)
    with pytest.raises(ValueError, match="in_shape, out_shape have different numbers"):
        ET.ReshapeTransform((2, 3), (4,))


REGISTRY = [("real", None), ("positive", None), ("nonnegative", None),
            ("unit_interval", None), ("simplex", None), ("real_vector", None),
            ("lower_cholesky", None), ("positive_definite", None), ("corr_cholesky", None),
            ("greater_than", (1.5,)), ("less_than", (-2.0,)), ("interval", (-1.0, 3.0)),
            ("half_open_interval", (0.0, 2.0))]


@pytest.mark.parametrize("name,args", REGISTRY, ids=[r[0] for r in REGISTRY])
def test_biject_to_and_transform_to(name, args):
    ec = getattr(EC, name) if args is None else getattr(EC, name)(*args)
    tc = getattr(TC, name) if args is None else getattr(TC, name)(*args)
    for reg_e, reg_t in ((ember.distributions.transform_to,
                          torch.distributions.transform_to),
                         (ember.distributions.biject_to, torch.distributions.biject_to)):
        try:
            t_t = reg_t(tc)
        except NotImplementedError:
            with pytest.raises(NotImplementedError, match="Cannot transform"):
                reg_e(ec)
            continue
        t_e = reg_e(ec)
        n = t_t.inverse_shape((2, 3, 3)) if t_t.codomain.event_dim == 2 else (2, 3)
        x = G.normal(size=tuple(n))
        ye, yt = t_e(ember.tensor(x)), t_t(torch.tensor(x))
        np.testing.assert_allclose(ye.numpy(), yt.numpy(), rtol=1e-9, atol=1e-12)
        assert bool(ec.check(ye).all())
        if t_t.bijective and name != "corr_cholesky":
            np.testing.assert_allclose(t_e.log_abs_det_jacobian(ember.tensor(x), ye).numpy(),
                                       t_t.log_abs_det_jacobian(torch.tensor(x), yt).numpy(),
                                       rtol=1e-9, atol=1e-12)


def test_registry_register():
    class _Odd(EC.Constraint):
        def check(self, value):
            return value % 2 == 1

    with pytest.raises(NotImplementedError, match="Cannot transform _Odd constraints"):
        ember.distributions.biject_to(_Odd())
    ember.distributions.transform_to.register(_Odd, lambda c: ET.AffineTransform(1.0, 2.0))
    assert isinstance(ember.distributions.transform_to(_Odd()), ET.AffineTransform)
    with pytest.raises(TypeError):
        ember.distributions.transform_to.register(int, lambda c: None)


def test_cumulative_distribution_transform():
    base_e = ember.distributions.Normal(ember.tensor([0.5]), ember.tensor([2.0]))
    base_t = torch.distributions.Normal(torch.tensor([0.5]), torch.tensor([2.0]))
    te = ET.CumulativeDistributionTransform(base_e)
    tt = TT.CumulativeDistributionTransform(base_t)
    x = np.array([[-1.0], [0.3], [2.5]], dtype=np.float32)
    xe, xt = ember.tensor(x), torch.tensor(x)
    np.testing.assert_allclose(te(xe).numpy(), tt(xt).numpy(), rtol=1e-6)
    np.testing.assert_allclose(te.inv(te(xe)).numpy(), x, rtol=1e-5)
    np.testing.assert_allclose(te.log_abs_det_jacobian(xe, te(xe)).numpy(),
                               tt.log_abs_det_jacobian(xt, tt(xt)).numpy(), rtol=1e-6)
    assert repr(te.codomain) == "Interval(lower_bound=0.0, upper_bound=1.0)"
