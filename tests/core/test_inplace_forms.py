"""In-place forms of the composites, the distribution fills, the small factories and the
error cases of the math, shape and statistics composites, against PyTorch."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(1)


@pytest.fixture(autouse=True)
def _on_device(request):
    """Tensors the tests create without a device land on the tested one."""
    dev = request.getfixturevalue("device") if "device" in request.fixturenames else None
    ember.set_default_device(dev)
    yield
    ember.set_default_device(None)

INPLACE = [
    ("addcmul_", lambda x, m: x.addcmul_(m.tensor([1.0, 2.0, 3.0], dtype=m.float64),
                                         m.tensor([2.0, 0.5, -1.0], dtype=m.float64), value=2)),
    ("addcdiv_", lambda x, m: x.addcdiv_(m.tensor([1.0, 2.0, 3.0], dtype=m.float64),
                                         m.tensor([2.0, 0.5, -1.0], dtype=m.float64))),
    ("lerp_", lambda x, m: x.lerp_(m.tensor([1.0, 2.0, 3.0], dtype=m.float64), 0.25)),
    ("clamp_", lambda x, m: x.clamp_(-0.5, 0.5)),
    ("clamp_min_", lambda x, m: x.clamp_min_(0.1)),
    ("clamp_max_", lambda x, m: x.clamp_max_(0.1)),
    ("clip_", lambda x, m: x.clip_(max=0.2)),
    ("sign_", lambda x, m: x.sign_()),
    ("sgn_", lambda x, m: x.sgn_()),
    ("nan_to_num_", lambda x, m: (x / 0).nan_to_num_(posinf=7.0)),
    ("hypot_", lambda x, m: x.hypot_(m.tensor(2.0, dtype=m.float64))),
    ("xlogy_", lambda x, m: x.xlogy_(3.0)),
    ("copysign_", lambda x, m: x.copysign_(-1.0)),
    ("sinc_", lambda x, m: x.sinc_()),
    ("deg2rad_", lambda x, m: x.deg2rad_()),
    ("erfinv_", lambda x, m: (x * 0.3).erfinv_()),
    ("lgamma_", lambda x, m: x.lgamma_()),
    ("float_power_", lambda x, m: x.abs().float_power_(2.5)),
]


@pytest.mark.parametrize("case", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_matches_torch_and_differentiates(case, device):
    name, fn = case
    base = RNG.standard_normal(3)
    e_leaf = ember.tensor(base, device=device, requires_grad=True)
    t_leaf = torch.tensor(base, requires_grad=True)
    e_x, t_x = e_leaf * 1, t_leaf * 1
    v = e_x._version
    e_r, t_r = fn(e_x, ember), fn(t_x, torch)
    assert e_r is e_x or fn(e_x, ember) is not None
    np.testing.assert_allclose(e_r.detach().numpy(force=True), t_r.detach().numpy(force=True), rtol=1e-9)
    if e_r is e_x:
        assert e_x._version > v
    e_r.sum().backward()
    t_r.sum().backward()
    e_grad = np.zeros(3) if e_leaf.grad is None else e_leaf.grad.numpy(force=True)   # sign: no grad
    np.testing.assert_allclose(e_grad, t_leaf.grad.numpy(force=True), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["clamp_", "sign_", "tril_", "lgamma_"])
def test_inplace_on_a_leaf_requiring_grad_raises(name, device):
    x = ember.ones(2, 2, device=device, requires_grad=True)
    args = {"clamp_": (0,)}.get(name, ())
    with pytest.raises(RuntimeError, match="leaf Variable"):
        getattr(x, name)(*args)


def test_inplace_dtype_and_shape_rules(device):
    i = ember.tensor([1, -2, 3], device=device)
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.clamp_(0.5)
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.tensor([1, -2, 3]).clamp_(0.5)
    assert i.clamp_(0).tolist() == [1, 0, 3]
    x = ember.zeros(3, device=device)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        x.addcmul_(ember.ones(2, 3), ember.ones(2, 3))
    m = ember.tensor(RNG.standard_normal((3, 3)), device=device)
    r = m.clone().triu_(1)
    np.testing.assert_array_equal(r.numpy(force=True), np.triu(m.numpy(force=True), 1))
    a = ember.tensor(RNG.standard_normal((2, 3)), device=device)
    b = ember.tensor(RNG.standard_normal((3, 4)), device=device)
    c = ember.zeros(2, 4, dtype=ember.float64, device=device)
    np.testing.assert_allclose(c.addmm_(a, b, alpha=2).numpy(force=True), 2 * a.numpy(force=True) @ b.numpy(force=True))
    with pytest.raises(RuntimeError, match="float_power_"):
        ember.ones(2).float_power_(2)


def test_inplace_top_level_functions(device):
    x = ember.tensor([-2.0, 0.5, 3.0], device=device)
    assert ember.clamp_(x, -1, 1) is x and x.tolist() == [-1.0, 0.5, 1.0]
    assert ember.clamp_min_(x, 0).tolist() == [0.0, 0.5, 1.0]
    assert ember.rad2deg_(ember.deg2rad_(x)).tolist() == pytest.approx([0.0, 0.5, 1.0])


# --- distribution fills -----------------------------------------------------------------

def test_fills_follow_the_generator_and_their_distributions(device):
    g = ember.Generator().manual_seed(3)
    a = ember.empty(20000, dtype=ember.float64, device=device).exponential_(2.0, generator=g)
    g.manual_seed(3)
    b = ember.empty(20000, dtype=ember.float64, device=device).exponential_(2.0, generator=g)
    assert ember.equal(a, b)
    assert a.min().item() >= 0 and abs(a.mean().item() - 0.5) < 0.02
    geo = ember.empty(20000, device=device).geometric_(0.25)
    assert geo.min().item() >= 1 and abs(geo.mean().item() - 4) < 0.15
    assert float(geo.frac().abs().max()) == 0
    c = ember.empty(20001, dtype=ember.float64, device=device).cauchy_(1.0, 2.0)
    assert abs(c.median().item() - 1.0) < 0.1
    ln = ember.empty(20000, dtype=ember.float64, device=device).log_normal_(0.5, 0.25)
    assert abs(ln.log().mean().item() - 0.5) < 0.01 and abs(ln.log().std().item() - 0.25) < 0.01


def test_random_(device):
    r = ember.empty(5000, dtype=ember.int64, device=device).random_(3, 7)
    assert set(r.tolist()) == {3, 4, 5, 6}
    assert set(ember.empty(2000, device=device).random_(4).tolist()) == {0.0, 1.0, 2.0, 3.0}
    assert set(ember.empty(200, dtype=ember.bool, device=device).random_().tolist()) == \
        {False, True}
    f = ember.empty(1000, device=device).random_()
    assert f.min().item() >= 0 and f.max().item() <= 2 ** 24
    u8 = ember.empty(3000, dtype=ember.uint8, device=device).random_()
    assert u8.max().item() > 200
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        ember.empty(3).random_(5, 5)


@pytest.mark.parametrize("call, exc", [
    (lambda t: t.exponential_(0.0), RuntimeError), (lambda t: t.geometric_(1.5), RuntimeError),
    (lambda t: t.cauchy_(0.0, -1.0), RuntimeError), (lambda t: t.log_normal_(1.0, 0.0),
                                                     RuntimeError)])
def test_fill_argument_errors(call, exc, device):
    with pytest.raises(exc):
        call(torch.empty(3))
    with pytest.raises(exc):
        call(ember.empty(3, device=device))


def test_fill_on_a_leaf_requiring_grad_raises():
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ember.zeros(3, requires_grad=True).exponential_()


# --- metadata, factories, helpers ---------------------------------------------------------

def test_methods_and_properties(device):
    m = ember.tensor(RNG.standard_normal((2, 3, 4)), device=device)
    assert m.mH.shape == (2, 4, 3) and m[0].H.shape == (4, 3)
    with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices"):
        m.H
    with pytest.raises(RuntimeError, match="tensor.mH"):
        m[0, 0].mH
    assert m.type_as(ember.ones(1, dtype=ember.float32)).dtype == ember.float32
    assert m.swapaxes(0, 2).shape == (4, 3, 2) and m.swapdims(1, 2).shape == (2, 4, 3)
    x = ember.tensor([0.5, 1.5, 2.5], dtype=ember.float64)
    np.testing.assert_allclose(x.polygamma(2).numpy(force=True),
                               torch.tensor([0.5, 1.5, 2.5], dtype=torch.float64).polygamma(2))


def test_unfold_is_a_view_and_checks_arguments(device):
    x = ember.arange(10.0, device=device)
    w = x.unfold(0, 4, 3)
    assert w.tolist() == torch.arange(10.0).unfold(0, 4, 3).tolist()
    w[0, 0] = 100.0
    assert x[0].item() == 100.0
    for args in ((0, 11, 1), (0, 2, 0)):
        with pytest.raises(RuntimeError):
            torch.arange(10.0).unfold(*args)
        with pytest.raises(RuntimeError):
            x.unfold(*args)
    with pytest.raises(IndexError):
        x.unfold(1, 2, 1)


def test_factories_and_casting_rules(device):
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        r = ember.range(1, 4, 0.5)
    with pytest.warns(UserWarning):
        t = torch.range(1, 4, 0.5)
    assert r.tolist() == t.tolist() and r.dtype == ember.float32
    s = ember.scalar_tensor(3)
    assert s.dim() == 0 and s.dtype == ember.float32 and s.item() == 3
    e = ember.empty_strided((2, 3), (1, 2), device=device)
    assert e.shape == (2, 3) and e.stride() == (1, 2)
    for a in ("float32", "int64", "bool", "uint8"):
        for b in ("float32", "int64", "bool", "int8"):
            assert ember.can_cast(getattr(ember, a), getattr(ember, b)) == \
                torch.can_cast(getattr(torch, a), getattr(torch, b))
    assert ember.broadcast_shapes((3, 1), (4,), 1) == torch.broadcast_shapes((3, 1), (4,), 1)
    for off in (-2, 0, 1):
        assert ember.tril_indices(4, 3, off).tolist() == torch.tril_indices(4, 3, off).tolist()
        assert ember.triu_indices(3, 5, off).tolist() == torch.triu_indices(3, 5, off).tolist()
    assert ember.tril_indices(0, 3).shape == (2, 0)


def test_meshgrid_warns_without_indexing():
    a = ember.arange(3)
    with pytest.warns(UserWarning, match="indexing argument"):
        ember.meshgrid(a, a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.meshgrid(a, a, indexing="xy")


def test_empty_inputs(device):
    e = ember.empty(0, 3, dtype=ember.float64, device=device)
    assert ember.diff(e, dim=0).shape == (0, 3)
    assert ember.logcumsumexp(e, 0).shape == (0, 3)
    assert ember.hypot(e, e).shape == (0, 3)
    assert ember.tensor_split(e, 2, 1)[1].shape == (0, 1)
    assert ember.cdist(e, ember.ones(2, 3, dtype=ember.float64)).shape == (0, 2)
    assert ember.isin(ember.empty(0, dtype=ember.int64), ember.tensor([1])).shape == (0,)
    assert ember.trapezoid(ember.empty(3, 0, dtype=ember.float64)).tolist() == [0.0] * 3
    assert math.isnan(ember.nanmedian(ember.empty(0)).item())


@pytest.mark.parametrize("call", [
    lambda m: m.diff(m.tensor(1.0)),
    lambda m: m.diff(m.ones(3), n=-1),
    lambda m: m.hypot(m.tensor([1]), m.tensor([2])),
    lambda m: m.logaddexp(m.tensor([1]), m.tensor([2])),
    lambda m: m.heaviside(m.tensor([1.0]), m.tensor([1])),
    lambda m: m.vdot(m.ones(2), m.ones(3)),
    lambda m: m.vdot(m.ones(2, 2), m.ones(2, 2)),
    lambda m: m.inner(m.ones(2, 3), m.ones(2)),
    lambda m: m.tensordot(m.ones(2, 3), m.ones(2, 3), 1),
    lambda m: m.cdist(m.ones(3), m.ones(3, 3)),
    lambda m: m.cdist(m.ones(2, 3), m.ones(2, 4)),
    lambda m: m.cdist(m.ones(2, 3), m.ones(2, 3), -1.0),
    lambda m: m.cdist(m.ones(2, 3, dtype=m.int64), m.ones(2, 3, dtype=m.int64)),
    lambda m: m.quantile(m.ones(3), 1.5),
    lambda m: m.quantile(m.ones(3), m.tensor([0.5, 2.0])),
    lambda m: m.quantile(m.ones(3, dtype=m.int64), 0.5),
    lambda m: m.quantile(m.ones(3), 0.5, interpolation="cubic"),
    lambda m: m.quantile(m.ones(3), m.tensor([0.5], dtype=m.float64)),
    lambda m: m.aminmax(m.ones(0)),
    lambda m: m.polygamma(-1, m.ones(2)),
    lambda m: m.mvlgamma(m.ones(2), 0),
    lambda m: m.rot90(m.ones(2, 2), 1, [0, 0]),
    lambda m: m.rot90(m.ones(2), 1),
    lambda m: m.tensor_split(m.tensor(1.0), 2),
    lambda m: m.tensor_split(m.ones(3), 0),
    lambda m: m.hsplit(m.ones(3, 5), 2),
    lambda m: m.vsplit(m.ones(3), 1),
    lambda m: m.take_along_dim(m.ones(3, 2), m.zeros(3, 2, dtype=m.int64)[0], 1),
    lambda m: m.block_diag(m.ones(1, 1, 1)),
    lambda m: m.cartesian_prod(m.ones(2, 2)),
    lambda m: m.combinations(m.ones(2, 2)),
    lambda m: m.meshgrid(m.ones(2), m.ones(2), indexing="ab"),
    lambda m: m.cov(m.ones(2, 3), fweights=m.ones(3)),
    lambda m: m.cov(m.ones(2, 3), fweights=m.ones(2, dtype=m.int64)),
    lambda m: m.kron(m.ones(2), [1]),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(expected.type):
        call(ember)


def test_special_functions_at_their_edges():
    x = [1.0, -1.0, 1.5, -0.0, 1 - 1e-15, 1e-300]
    np.testing.assert_allclose(ember.erfinv(ember.tensor(x, dtype=ember.float64)).numpy(force=True),
                               torch.erfinv(torch.tensor(x, dtype=torch.float64)), rtol=1e-13)
    x = [0.0, -0.0, -1.0, -2.5, 1e-8, 1e6, 30.5, math.inf]
    for name in ("lgamma", "digamma"):
        np.testing.assert_allclose(
            getattr(ember, name)(ember.tensor(x, dtype=ember.float64)).numpy(force=True),
            getattr(torch, name)(torch.tensor(x, dtype=torch.float64)), rtol=1e-12)
    grid = np.linspace(0.05, 40, 5000)
    np.testing.assert_allclose(ember.digamma(ember.tensor(grid)).numpy(force=True),
                               torch.digamma(torch.tensor(grid)), rtol=1e-13, atol=1e-14)
    from scipy import special as sp  # torch's trigamma is only good to ~1e-10
    for n in (1, 2, 4):
        got = ember.polygamma(n, ember.tensor(grid)).numpy(force=True)
        np.testing.assert_allclose(got, sp.polygamma(n, grid), rtol=1e-13)
        np.testing.assert_allclose(got, torch.polygamma(n, torch.tensor(grid)), rtol=1e-9)
    u = np.linspace(-0.999999, 0.999999, 5001)
    np.testing.assert_allclose(ember.erfinv(ember.tensor(u)).numpy(force=True),
                               torch.erfinv(torch.tensor(u)), rtol=1e-13, atol=1e-15)
    assert ember.lgamma(ember.tensor([3], dtype=ember.int64)).dtype == ember.float32
    for dt in ("float16", "bfloat16"):
        v = ember.tensor([0.5, 2.0]).to(getattr(ember, dt))
        np.testing.assert_allclose(ember.digamma(v).float().numpy(force=True),
                                   torch.digamma(torch.tensor([0.5, 2.0]).to(getattr(torch, dt)))
                                   .float(), rtol=1e-2)


def test_special_gradchecks():
    x = ember.tensor([0.3, 1.7, 4.2], dtype=ember.float64, requires_grad=True)
    for f in (ember.lgamma, ember.digamma, lambda t: ember.polygamma(2, t),
              lambda t: ember.erfinv(t / 5), lambda t: ember.vander(t, 4)):
        assert ember.autograd.gradcheck(f, (x,))
    assert ember.autograd.gradgradcheck(ember.lgamma, (x,))


# --- in-place view ops: self changes shape (and history) -----------------------------------

@pytest.mark.parametrize("op,args", [
    ("t_", ()), ("transpose_", (0, 1)), ("swapdims_", (1, 0)), ("swapaxes_", (0, -1)),
    ("unsqueeze_", (1,)), ("unsqueeze_", (-1,)), ("squeeze_", ()), ("squeeze_", (0,)),
    ("as_strided_", ((3, 2), (1, 3))),
])
def test_inplace_view_ops_match_torch(op, args):
    e_leaf = ember.arange(6.).view(1, 2, 3)[0].requires_grad_()
    t_leaf = torch.arange(6.).view(1, 2, 3)[0].requires_grad_()
    if op.startswith("squeeze_"):
        e_leaf = ember.arange(6.).view(1, 2, 3).requires_grad_()
        t_leaf = torch.arange(6.).view(1, 2, 3).requires_grad_()
    e, t = e_leaf * 2, t_leaf * 2
    assert getattr(e, op)(*args) is e
    getattr(t, op)(*args)
    assert tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride()
    assert e.tolist() == t.tolist()
    w = torch.arange(float(t.numel())).view(t.shape)
    (e * ember.tensor(w.numpy())).sum().backward()
    (t * w).sum().backward()
    assert e_leaf.grad.tolist() == t_leaf.grad.tolist()


def test_inplace_view_ops_errors_and_no_grad():
    leaf = ember.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.t_()
    with ember.no_grad():
        assert leaf.t_().shape == (3, 2) and leaf.is_leaf
    x = ember.ones(2, 3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.unsqueeze_(5)
    assert x.shape == (2, 3)
    v = ember.arange(6.).view(2, 3)
    row = v[1]
    row.unsqueeze_(0)
    row.mul_(10)                      # still a view: writes reach the base
    assert v.tolist() == [[0., 1., 2.], [30., 40., 50.]]


_SPECIALS = [math.nan, math.inf, -math.inf, 1.5, -2.0, 3e38, -3e38, 0.0, -0.0]


@pytest.mark.parametrize("kwargs", [{}, {"nan": 7.0}, {"posinf": 5.0}, {"neginf": -1e300},
                                    {"nan": 1, "posinf": 1e300}])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_nan_to_num_and_its_in_place_form(kwargs, dtype, layout, device):
    # default infinities take one clamp pass and a NaN fill; any other bound the composite
    data = np.stack([np.array(_SPECIALS), np.array(_SPECIALS)[::-1]])
    got = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        host = data.astype(dtype)
    for m in (ember, torch):
        x = m.tensor(host)
        if layout == "transposed":
            x = x.t()
        out = m.nan_to_num(x, **kwargs)
        v = x._version
        assert x.nan_to_num_(**kwargs) is x and x._version > v
        got.append((out, x))
    for e, t in zip(*got):
        np.testing.assert_array_equal(e.cpu().numpy(), t.numpy())


def test_nan_to_num_keeps_its_gradient_rule():
    x = ember.tensor([math.nan, math.inf, -math.inf, 2.0], requires_grad=True)
    ember.nan_to_num(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize("diagonal", [-9, -2, 0, 1, 9])
@pytest.mark.parametrize("name", ["tril_", "triu_"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_triangle_in_place_zeroes_what_it_drops(name, diagonal, dtype):
    data = np.random.default_rng(4).standard_normal((3, 5, 7)) * 4
    data[0, 0, 0] = np.nan if dtype == "float32" else 1
    host = data.astype(dtype)
    for view in (lambda t: t, lambda t: t.transpose(1, 2)):
        e, t = view(ember.tensor(host)), view(torch.tensor(host))
        assert getattr(e, name)(diagonal) is e
        getattr(t, name)(diagonal)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        getattr(ember.zeros(3), name)()


@pytest.mark.parametrize("decimals", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_round_in_place_writes_self(decimals, dtype):
    data = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 1.49, 12.25, -7.75, 3.0] * 3)
    if dtype.startswith("float"):
        data[:2] = [np.nan, np.inf]
    host = data.astype(dtype)
    for view in (lambda t: t, lambda t: t[::2]):
        e, t = view(ember.tensor(host)), view(torch.tensor(host))
        if dtype == "int64":          # PyTorch refuses int64 (and bool), takes int32
            for m, x in ((ember, e), (torch, t)):
                with pytest.raises(NotImplementedError):
                    x.round_(decimals=decimals)
            continue
        v = e._version
        assert e.round_(decimals=decimals) is e and e._version > v
        t.round_(decimals=decimals)
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)
