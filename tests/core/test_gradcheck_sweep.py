"""A sweep of every differentiable public op through ember.autograd.gradcheck (float64,
small inputs), each also on a transposed (non-contiguous) input, and gradgradcheck over
the common ops.  The op-by-op comparisons with torch live in test_derivatives*.py; this
sweep checks each formula against finite differences of the op itself."""
import numpy as np
import pytest
from ember.core import activations as act

import ember
from ember.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(7)


def _x(shape, low=-1.5, high=1.5):
    return RNG.uniform(low, high, size=shape)


def _distinct(shape):
    """Values far apart (no ties for the selecting ops)."""
    n = int(np.prod(shape))
    return (RNG.permutation(n).reshape(shape) - n / 2) / 3.0


POS = (0.2, 2.0)
IDX = ember.tensor([[0, 2, 1], [2, 2, 0], [1, 0, 0]])
I1 = ember.tensor([2, 0, 2])
PERM = ember.tensor([[1, 2, 0], [0, 1, 2], [2, 0, 1]])      # each column a permutation
MASK = ember.tensor([[True, False, True], [False, True, True], [True, True, False]])

# name: (function of the inputs, input builders); every input is a 3x3 matrix so the
# transposed variant keeps the shapes
U = lambda lo=-1.5, hi=1.5: (lambda: _x((3, 3), lo, hi))       # noqa: E731
D = lambda: _distinct((3, 3))                                 # noqa: E731
OPS = {
    # unary
    "neg": (lambda a: -a, [U()]), "exp": (ember.exp, [U()]), "log": (ember.log, [U(*POS)]),
    "sqrt": (ember.sqrt, [U(*POS)]), "rsqrt": (ember.rsqrt, [U(*POS)]),
    "sin": (ember.sin, [U()]), "cos": (ember.cos, [U()]), "tan": (ember.tan, [U(-1, 1)]),
    "tanh": (ember.tanh, [U()]), "sigmoid": (ember.sigmoid, [U()]),
    "asin": (ember.asin, [U(-0.8, 0.8)]), "acos": (ember.acos, [U(-0.8, 0.8)]),
    "atan": (ember.atan, [U()]), "sinh": (ember.sinh, [U()]), "cosh": (ember.cosh, [U()]),
    "abs": (ember.abs, [U(*POS)]), "reciprocal": (ember.reciprocal, [U(*POS)]),
    "square": (ember.square, [U()]), "exp2": (ember.exp2, [U()]),
    "expm1": (ember.expm1, [U()]), "log2": (ember.log2, [U(*POS)]),
    "log10": (ember.log10, [U(*POS)]), "log1p": (ember.log1p, [U(*POS)]),
    "erf": (ember.erf, [U()]), "erfc": (ember.erfc, [U()]), "relu": (ember.relu, [U(*POS)]),
    "logit": (ember.logit, [U(0.1, 0.9)]), "sign_times": (lambda a: a * a.sign(), [U(*POS)]),
    # activations
    "gelu": (act.gelu, [U()]), "gelu_tanh": (lambda a: act.gelu(a, approximate="tanh"), [U()]),
    "softplus": (act.softplus, [U()]), "silu": (act.silu, [U()]), "mish": (act.mish, [U()]),
    "hardtanh": (act.hardtanh, [U(-0.9, 0.9)]), "elu": (act.elu, [U(*POS)]),
    "leaky_relu": (act.leaky_relu, [U(*POS)]),
    "softmax": (lambda a: ember.softmax(a, 1), [U()]),
    "log_softmax": (lambda a: ember.log_softmax(a, 0), [U()]),
    # binary, broadcasting
    "add": (lambda a, b: a + b[:1], [U(), U()]), "sub": (lambda a, b: a - b[:, :1], [U(), U()]),
    "mul": (lambda a, b: a * b[0], [U(), U()]), "div": (lambda a, b: a / b, [U(), U(*POS)]),
    "pow": (lambda a, b: a ** b, [U(*POS), U()]), "pow_scalar": (lambda a: a ** 3, [U()]),
    "rpow": (lambda a: 2 ** a, [U()]), "atan2": (ember.atan2, [U(), U(*POS)]),
    "maximum": (ember.maximum, [D, U()]), "minimum": (ember.minimum, [D, U()]),
    "fmax": (ember.fmax, [D, U()]), "fmod": (lambda a, b: ember.fmod(a, b), [U(), U(2, 3)]),
    "remainder": (lambda a, b: ember.remainder(a, b), [U(), U(2, 3)]),
    "where": (lambda a, b: ember.where(MASK, a, b), [U(), U()]),
    "lerp": (lambda a, b, w: ember.lerp(a, b, w), [U(), U(), U(0, 1)]),
    "addcmul": (lambda a, b, c: ember.addcmul(a, b, c, value=0.5), [U(), U(), U()]),
    "addcdiv": (lambda a, b, c: ember.addcdiv(a, b, c), [U(), U(), U(*POS)]),
    # D's values are k/3 - 1.5: bounds off that grid (finite differences halve a gradient
    # at a bound, where torch's clamp passes it whole)
    "clamp": (lambda a: ember.clamp(a, -0.6, 0.6), [D]),
    # reductions
    "sum": (lambda a: a.sum(), [U()]), "sum_dim": (lambda a: a.sum(1, keepdim=True), [U()]),
    "mean": (lambda a: a.mean(0), [U()]), "prod": (lambda a: a.prod(1), [U()]),
    "prod_all": (lambda a: a.prod(), [U(*POS)]), "amax": (lambda a: a.amax(1), [D]),
    "amin": (lambda a: a.amin((0, 1)), [D]), "std": (lambda a: a.std(1), [U()]),
    "var": (lambda a: a.var(0, keepdim=True), [U()]),
    "logsumexp": (lambda a: ember.logsumexp(a, 1), [U()]),
    "norm": (lambda a: a.norm(), [U()]), "vector_norm_1": (
        lambda a: ember.linalg.vector_norm(a, 3, 1), [U(*POS)]),
    "nansum": (ember.nansum, [U()]), "nanmean": (lambda a: ember.nanmean(a, 1), [U()]),
    "trace": (ember.trace, [U()]),
    # scans
    "cumsum": (lambda a: a.cumsum(1), [U()]), "cumprod": (lambda a: a.cumprod(0), [U()]),
    "cummax": (lambda a: ember.cummax(a, 1).values, [D]),
    "cummin": (lambda a: ember.cummin(a, 0).values, [D]),
    # selection
    "sort": (lambda a: ember.sort(a, 1).values, [D]), "topk": (lambda a: a.topk(2).values, [D]),
    "kthvalue": (lambda a: a.kthvalue(2, 0).values, [D]), "median": (ember.median, [D]),
    "median_dim": (lambda a: a.median(1).values, [D]), "mode": (lambda a: a.mode(0).values, [D]),
    "max_dim": (lambda a: a.max(1).values, [D]), "min": (lambda a: a.min(), [D]),
    "msort": (ember.msort, [D]),
    # views and shape ops
    "t": (lambda a: a.t() * 2, [U()]), "reshape": (lambda a: a.reshape(9), [U()]),
    "permute": (lambda a: a[None].permute(2, 0, 1), [U()]),
    "expand": (lambda a: a[:1].expand(3, 3) * a, [U()]),
    "squeeze": (lambda a: a[:, :1].squeeze(1), [U()]),
    "narrow": (lambda a: a.narrow(1, 1, 2), [U()]), "diagonal": (lambda a: a.diagonal(), [U()]),
    "slice_step": (lambda a: a[::2, 1:], [U()]), "select": (lambda a: a[1], [U()]),
    "flip": (lambda a: ember.flip(a, [0]), [U()]), "roll": (lambda a: ember.roll(a, 1, 1), [U()]),
    "tril": (ember.tril, [U()]), "triu": (lambda a: ember.triu(a, 1), [U()]),
    "cat": (lambda a, b: ember.cat([a, b], 1), [U(), U()]),
    "stack": (lambda a, b: ember.stack([a, b]), [U(), U()]),
    "tile": (lambda a: ember.tile(a, (2, 1)), [U()]),
    "repeat_interleave": (lambda a: ember.repeat_interleave(a, 2, 0), [U()]),
    "diag": (lambda a: ember.diag(a), [U()]),
    "diag_embed": (lambda a: ember.diag_embed(a), [U()]),
    # indexing
    "getitem_adv": (lambda a: a[ember.tensor([2, 0, 2]), 1:], [U()]),
    "getitem_mask": (lambda a: a[MASK], [U()]),
    "gather": (lambda a: ember.gather(a, 1, IDX), [U()]),
    "scatter": (lambda a, b: ember.scatter(a, 0, PERM, b), [U(), U()]),
    "scatter_add": (lambda a, b: ember.scatter_add(a, 1, IDX, b), [U(), U()]),
    "scatter_reduce": (lambda a, b: ember.scatter_reduce(a, 1, IDX, b, "prod"),
                       [U(*POS), U(*POS)]),
    "index_select": (lambda a: ember.index_select(a, 0, I1), [U()]),
    "index_add": (lambda a, b: ember.index_add(a, 1, I1, b), [U(), U()]),
    "index_copy": (lambda a, b: ember.index_copy(a, 0, ember.tensor([2, 0, 1]), b),
                   [U(), U()]),
    "take": (lambda a: ember.take(a, IDX), [U()]),
    "masked_fill": (lambda a: a.masked_fill(MASK, 0.0), [U()]),
    "setitem": (lambda a, b: _setitem(a, b), [U(), U()]),
    # products
    "matmul": (lambda a, b: a @ b, [U(), U()]), "mv": (lambda a, b: ember.mv(a, b[0]), [U(), U()]),
    "dot": (lambda a, b: ember.dot(a[0], b[1]), [U(), U()]),
    "outer": (lambda a, b: ember.outer(a[0], b[:, 1]), [U(), U()]),
    "bmm": (lambda a, b: ember.bmm(a[None], b[None]), [U(), U()]),
    "addmm": (lambda c, a, b: ember.addmm(c, a, b, beta=0.5), [U(), U(), U()]),
    "einsum": (lambda a, b: ember.einsum("ij,jk->ik", a, b), [U(), U()]),
    "cross": (lambda a, b: ember.cross(a, b, dim=1), [U(), U()]),
    # linalg
    "inv": (lambda a: ember.linalg.inv(a + 3 * ember.eye(3, dtype=a.dtype)), [U()]),
    "det": (lambda a: ember.linalg.det(a), [U()]),
    "slogdet": (lambda a: ember.linalg.slogdet(a + 3 * ember.eye(3, dtype=a.dtype))[1], [U()]),
    "solve": (lambda a, b: ember.linalg.solve(a + 3 * ember.eye(3, dtype=a.dtype), b),
              [U(), U()]),
    "cholesky": (lambda a: ember.linalg.cholesky(a @ a.mT + ember.eye(3, dtype=a.dtype)), [U()]),
    "qr": (lambda a: ember.linalg.qr(a + 3 * ember.eye(3, dtype=a.dtype)).R, [U()]),
    "eigvalsh": (lambda a: ember.linalg.eigvalsh(a + a.mT), [U()]),
    "svdvals": (lambda a: ember.linalg.svdvals(a), [U()]),
    "pinv": (lambda a: ember.linalg.pinv(a + 3 * ember.eye(3, dtype=a.dtype)), [U()]),
    "matrix_norm": (lambda a: ember.linalg.matrix_norm(a, "nuc"), [U()]),
}


def _setitem(a, b):
    r = a * 1
    r[1:, ::2] = b[:2, :2]
    return r


def _leaves(builders, transpose):
    """Float64 inputs; with ``transpose`` the op sees non-contiguous (transposed) views."""
    leaves = [ember.tensor(make(), dtype=ember.float64, requires_grad=True) for make in builders]
    return leaves, [x.t() if transpose else x for x in leaves]


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("name", sorted(OPS))
def test_gradcheck(name, transpose):
    fn, builders = OPS[name]
    leaves, args = _leaves(builders, transpose)
    if transpose:           # differentiate w.r.t. the leaves through the transposed views
        assert gradcheck(lambda *xs: fn(*(x.t() for x in xs)), tuple(leaves))
    else:
        assert gradcheck(fn, tuple(args))


SECOND_ORDER = ["exp", "log", "sin", "tanh", "sigmoid", "mul", "div", "pow", "softmax",
                "log_softmax", "sum_dim", "mean", "prod", "std", "logsumexp", "norm",
                "cumsum", "cumprod", "matmul", "gather", "index_select", "getitem_adv",
                "gelu", "softplus", "inv", "solve", "det", "svdvals", "cholesky", "sort"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_gradgradcheck(name):
    fn, builders = OPS[name]
    leaves, _ = _leaves(builders, False)
    assert gradgradcheck(fn, tuple(leaves))
