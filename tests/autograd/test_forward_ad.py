"""Forward-mode AD (ember.autograd.forward_ad): the API against PyTorch's, forward
formulas against torch.autograd.forward_ad and against finite differences over the op
catalogue, custom Functions' jvp, forward-over-reverse and reverse-over-forward, in-place
ops and views, and the errors."""
import ember.nn.functional as F
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import ember
import ember.autograd.forward_ad as fwAD
from ember.autograd import gradcheck

RNG = np.random.default_rng(3)


def _arr(shape, low=-1.5, high=1.5):
    return RNG.uniform(low, high, size=shape)


def _both(fn_e, fn_t, primals, tangents, device="cpu"):
    """(ember's (primal, tangent) of fn's output, torch's), inputs float64."""
    with fwAD.dual_level():
        ins = [fwAD.make_dual(ember.tensor(p, device=device), ember.tensor(t, device=device))
               if t is not None else ember.tensor(p, device=device)
               for p, t in zip(primals, tangents)]
        out = fwAD.unpack_dual(fn_e(*ins))
        e = (out.primal.cpu().numpy(), None if out.tangent is None
             else out.tangent.cpu().numpy())
    with tfw.dual_level():
        ins = [tfw.make_dual(torch.tensor(p), torch.tensor(t)) if t is not None
               else torch.tensor(p) for p, t in zip(primals, tangents)]
        out = tfw.unpack_dual(fn_t(*ins))
        t = (out.primal.detach().numpy(), out.tangent.numpy())
    return e, t


def _check(fn_e, fn_t, shapes, *, low=-1.5, high=1.5, device="cpu", atol=1e-10):
    primals = [_arr(s, low, high) for s in shapes]
    tangents = [_arr(s) for s in shapes]
    (ep, et), (tp, tt) = _both(fn_e, fn_t, primals, tangents, device)
    np.testing.assert_allclose(ep, tp, rtol=1e-10, atol=atol)
    np.testing.assert_allclose(et, tt, rtol=1e-8, atol=atol)


# (ember function, torch function, input shapes[, (low, high)])
AGAINST_TORCH = {
    "sin_mul": (lambda a, b: (a * b).sin(), lambda a, b: (a * b).sin(), [(3, 4), (4,)]),
    "div_pow": (lambda a, b: a / b ** 2, lambda a, b: a / b ** 2, [(3, 4), (3, 4)], (0.5, 2)),
    "exp_log": (lambda a: a.exp() + a.log(), lambda a: a.exp() + a.log(), [(5,)], (0.5, 2)),
    "tanh_sigmoid": (lambda a: a.tanh() * a.sigmoid(), lambda a: a.tanh() * a.sigmoid(),
                     [(2, 3)]),
    "maximum": (ember.maximum, torch.maximum, [(4,), (4,)]),
    "where": (lambda a, b: ember.where(a > 0, a, b), lambda a, b: torch.where(a > 0, a, b),
              [(3, 3), (3, 3)]),
    "sum_mean": (lambda a: a.sum(1) + a.mean(1), lambda a: a.sum(1) + a.mean(1), [(3, 4)]),
    "prod": (lambda a: a.prod(0), lambda a: a.prod(0), [(3, 4)]),
    "amax": (lambda a: a.amax(1), lambda a: a.amax(1), [(3, 4)]),
    "cumprod": (lambda a: a.cumprod(1), lambda a: a.cumprod(1), [(3, 4)]),
    "views": (lambda a: a.t()[1:, ::2].reshape(-1).unsqueeze(0).expand(2, -1),
              lambda a: a.t()[1:, ::2].reshape(-1).unsqueeze(0).expand(2, -1), [(4, 3)]),
    "cat_stack": (lambda a, b: ember.cat([a, ember.stack([b, b])], 0),
                  lambda a, b: torch.cat([a, torch.stack([b, b])], 0), [(2, 3), (3,)]),
    "matmul": (lambda a, b: a @ b, lambda a, b: a @ b, [(2, 3, 4), (4, 5)]),
    "softmax": (lambda a: F.softmax(a, -1), lambda a: torch.softmax(a, -1), [(3, 5)]),
    "log_softmax": (lambda a: F.log_softmax(a, 0), lambda a: torch.log_softmax(a, 0),
                    [(3, 5)]),
    "layer_norm": (lambda a, w, b: F.layer_norm(a, (4,), w, b, 1e-5),
                   lambda a, w, b: torch.nn.functional.layer_norm(a, (4,), w, b, 1e-5),
                   [(3, 4), (4,), (4,)]),
    "batch_norm": (lambda a, w, b: F.batch_norm(a, None, None, w, b, training=True),
                   lambda a, w, b: torch.nn.functional.batch_norm(a, None, None, w, b,
                                                                  training=True),
                   [(4, 3, 2), (3,), (3,)]),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, padding=1),
               lambda x, w, b: torch.nn.functional.conv2d(x, w, b, padding=1),
               [(2, 3, 5, 5), (4, 3, 3, 3), (4,)]),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), lambda x: torch.nn.functional.max_pool2d(x, 2),
                   [(2, 2, 4, 4)]),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 2), lambda x: torch.nn.functional.avg_pool2d(x, 2),
                   [(2, 2, 4, 4)]),
    "cross_entropy": (lambda x: F.cross_entropy(x, ember.tensor([0, 2, 1], device=x.device)),
                      lambda x: torch.nn.functional.cross_entropy(x, torch.tensor([0, 2, 1])),
                      [(3, 4)]),
    "nll_loss": (lambda x: F.nll_loss(x, ember.tensor([0, 2, 1], device=x.device)),
                 lambda x: torch.nn.functional.nll_loss(x, torch.tensor([0, 2, 1])), [(3, 4)]),
    "mse_loss": (lambda a, b: F.mse_loss(a, b), lambda a, b: torch.nn.functional.mse_loss(a, b),
                 [(3, 4), (3, 4)]),
    "gelu": (F.gelu, torch.nn.functional.gelu, [(6,)]),
    "gather_index": (lambda a: a.gather(1, ember.tensor([[0, 2], [1, 1]], device=a.device))[
                         :, ember.tensor([1, 0], device=a.device)],
                     lambda a: a.gather(1, torch.tensor([[0, 2], [1, 1]]))[:, torch.tensor([1, 0])],
                     [(2, 3)]),
    "index_add_scatter": (lambda a, b: a.index_add(0, ember.tensor([1, 0], device=a.device), b)
                          .scatter_add(1, ember.tensor([[0, 0, 1], [1, 2, 2]], device=a.device),
                                       b),
                          lambda a, b: a.index_add(0, torch.tensor([1, 0]), b).scatter_add(
                              1, torch.tensor([[0, 0, 1], [1, 2, 2]]), b), [(2, 3), (2, 3)]),
    "inv_det": (lambda a: ember.linalg.inv(a) * ember.linalg.det(a),
                lambda a: torch.linalg.inv(a) * torch.linalg.det(a), [(3, 3)], (0.5, 2)),
    "sort": (lambda a: a.sort(1).values, lambda a: a.sort(1).values, [(3, 5)]),
}


@pytest.mark.parametrize("name", sorted(AGAINST_TORCH))
def test_forward_formulas_match_torch(name, device):
    fn_e, fn_t, shapes, *rng = AGAINST_TORCH[name]
    low, high = rng[0] if rng else (-1.5, 1.5)
    _check(fn_e, fn_t, shapes, low=low, high=high, device=device)


# the catalogue's ops with no forward formula in PyTorch either (or none here yet)
_NO_FORWARD = set()


@pytest.mark.parametrize("transpose", [False, True])
def test_forward_ad_over_the_op_catalogue(op_catalogue, transpose):
    """check_forward_ad: forward AD's Jacobian of every catalogued op against finite
    differences (the same sweep gradcheck runs in reverse mode), also on transposed
    (non-contiguous) inputs."""
    ops, leaves = op_catalogue
    failed = []
    for name in sorted(ops):
        if name in _NO_FORWARD:
            continue
        fn, builders = ops[name]
        xs, args = leaves(builders, transpose)
        f = (lambda *a, fn=fn: fn(*(x.t() for x in a))) if transpose else fn
        if not gradcheck(f, tuple(xs if transpose else args), check_forward_ad=True,
                         check_backward_ad=False, raise_exception=False):
            failed.append(name)
    assert not failed


def test_every_op_with_a_backward_formula_has_a_forward_one():
    from ember.core import _dispatch
    from ember.core.forward_formulas import FORWARD_FORMULAS
    missing = {n for n, op in _dispatch.all_ops().items() if op.derivative is not None}
    assert missing - set(FORWARD_FORMULAS) == set()


def test_api_matches_pytorch():
    x, t = ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0])
    assert fwAD.unpack_dual(x) == (x, None)
    with fwAD.dual_level() as level:
        assert level == 0
        d = fwAD.make_dual(x, t)
        p, tan = fwAD.unpack_dual(d)
        assert type(fwAD.unpack_dual(d)).__name__ == "UnpackedDualTensor"
        assert fwAD.unpack_dual(d)._fields == ("primal", "tangent")
        assert tan is t and p._base is x and fwAD.unpack_dual(p).tangent is None
        assert "tangent=tensor([3., 4.])" in repr(d)
        y = d * 3
        assert fwAD.unpack_dual(d.detach()).tangent is None
    assert fwAD.unpack_dual(y).tangent is None       # the level ended: its tangents are gone
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(x, t)
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(x, ember.ones(3))
        with pytest.raises(ValueError, match="Expected primal to be floating point"):
            fwAD.make_dual(ember.tensor([1, 2]), t)
        with pytest.raises(RuntimeError, match="not the last one"):
            fwAD.exit_dual_level(level=3)


def test_unsupported_ops_raise_pytorchs_error():
    a = ember.tensor([1.0, -2.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(a, ember.ones(2))
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with heaviside"):
            ember.heaviside(d, ember.tensor([0.5, 0.5]))
        with pytest.raises(RuntimeError, match="Trying to use forward AD with add_out"):
            ember.add(d, d, out=ember.empty(2))
        # piecewise-constant ops have a zero tangent, as in PyTorch
        assert fwAD.unpack_dual(d.sign()).tangent.tolist() == [0.0, 0.0]
        assert fwAD.unpack_dual(d.floor()).tangent.tolist() == [0.0, 0.0]


class _Cube(ember.autograd.Function):
    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        ctx.save_for_forward(x)
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 3 * x ** 2 * g

    @staticmethod
    def jvp(ctx, t):
        x, = ctx.saved_tensors
        return 3 * x ** 2 * t


class _NoJvp(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_custom_function_jvp():
    x = ember.tensor([1.0, 2.0], dtype=ember.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ember.tensor([1.0, 0.5], dtype=ember.float64))
        assert fwAD.unpack_dual(_Cube.apply(d)).tangent.tolist() == [3.0, 6.0]
        with pytest.raises(NotImplementedError, match="must implement the jvp function"):
            _NoJvp.apply(d)
    assert gradcheck(_Cube.apply, (x.requires_grad_(),), check_forward_ad=True)


def test_forward_over_reverse_gives_hessian_vector_products():
    """The tangent of a gradient: saved tensors keep their tangents (the output too)."""
    a = np.array([0.3, -0.7, 1.1])
    v = np.array([1.0, 2.0, -1.0])

    def f(x):
        return (x.exp() * x.tanh()).sum() + (x ** 3).sum()

    x = ember.tensor(a, requires_grad=True)
    with fwAD.dual_level():
        xd = fwAD.make_dual(x, ember.tensor(v))
        g, = ember.autograd.grad(f(xd), xd)
        hv = fwAD.unpack_dual(g).tangent.numpy()
    xt = torch.tensor(a)
    expected = torch.autograd.functional.hvp(lambda t: (t.exp() * t.tanh()).sum()
                                             + (t ** 3).sum(), xt, torch.tensor(v))[1]
    np.testing.assert_allclose(hv, expected.numpy(), rtol=1e-10)


def test_reverse_over_forward():
    """A tangent computed from tensors that require grad records its own graph."""
    x = ember.tensor([0.5, 1.5], dtype=ember.float64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ember.ones(2, dtype=ember.float64))
        t = fwAD.unpack_dual((d * d).sin()).tangent          # 2 x cos(x^2)
        g, = ember.autograd.grad(t.sum(), x)
    xv = x.detach().numpy()
    np.testing.assert_allclose(g.numpy(), 2 * np.cos(xv ** 2) - 4 * xv ** 2 * np.sin(xv ** 2),
                               rtol=1e-12)


def test_inplace_ops_and_views():
    base = ember.zeros(2, 3, dtype=ember.float64)
    with fwAD.dual_level():
        v = fwAD.make_dual(ember.ones(3, dtype=ember.float64),
                           ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64))
        base[1].copy_(v * 2)                 # a view of a tensor without a tangent
        t = fwAD.unpack_dual(base).tangent
        assert t.tolist() == [[0.0, 0.0, 0.0], [2.0, 4.0, 6.0]]
        base.mul_(v)                         # in place, the old values read
        assert fwAD.unpack_dual(base).tangent.tolist() == [[0.0, 0.0, 0.0],
                                                           [4.0, 8.0, 12.0]]
        row = base[1]                        # a view's tangent is a view of the tangent
        row.add_(v)
        assert fwAD.unpack_dual(base).tangent[1].tolist() == [5.0, 10.0, 15.0]


def test_nested_levels_through_jvp_of_jvp():
    """Two tangent levels (as ember.func.jvp nests them): the second derivative."""
    from ember.core import _autograd as _ag
    outer, inner = _ag._new_level(True), _ag._new_level(True)
    try:
        x = fwAD._make_dual(ember.tensor([0.7], dtype=ember.float64),
                            ember.ones(1, dtype=ember.float64), outer)
        x = fwAD._make_dual(x, ember.ones(1, dtype=ember.float64), inner)
        y = x.sin() * x
        t_inner = fwAD._unpack_dual(y, inner).tangent          # d/dx (x sin x)
        d2 = fwAD._unpack_dual(t_inner, outer).tangent         # d2/dx2
    finally:
        _ag._end_level(inner)
        _ag._end_level(outer)
    x0 = 0.7
    assert t_inner.item() == pytest.approx(np.sin(x0) + x0 * np.cos(x0), rel=1e-12)
    assert d2.item() == pytest.approx(2 * np.cos(x0) - x0 * np.sin(x0), rel=1e-12)
