"""PyTorch parity of edge cases: isclose/allclose with infinities, var/std(_mean) with
``unbiased`` by position, vdot of complex vectors, can_cast with complex dtypes, complex
float_power, cdist/dist gradients at zero differences, nanmedian's gradient over ties,
linalg.cond of singular matrices, slogdet/logdet gradients of singular matrices, addmm and
its kin with beta=0, max/min(other=...) and signbit of a negative NaN.  Each case runs the
same code with ember and with torch (``lib``) and compares values, dtypes, gradients or the
exception type."""
import math
import warnings

import pytest
import torch

import ember
import ember.linalg  # noqa: F401  (lib.linalg below)

INF, NAN = math.inf, math.nan


def _outcome(lib, fn):
    """fn(lib), or the name of the exception it raised (warnings silenced)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(lib)
    except Exception as e:
        return type(e).__name__


def _same(oracle, fn, rtol=1e-7, atol=1e-12):
    """fn gives the same with ember as with torch: tensors (or tuples of them, or other
    values) alike in shape, dtype and values (NaN where NaN), or the same exception type."""
    got, want = _outcome(ember, fn), _outcome(torch, fn)
    if isinstance(want, (tuple, list)) and want and isinstance(want[0], torch.Tensor):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            oracle.assert_matches(g.detach(), w.detach(), rtol=rtol, atol=atol)
    elif isinstance(want, torch.Tensor):
        assert isinstance(got, ember.Tensor), (got, want)
        oracle.assert_matches(got.detach(), want.detach(), rtol=rtol, atol=atol)
    else:
        assert got == want, (got, want)


def _grads(lib, fn, *data):
    """The gradients of sum(fn(lib, *leaves) * w) for float64 leaves holding ``data`` (w:
    1, 2, 3, ... so that a misplaced gradient shows), with the value."""
    leaves = [lib.tensor(d, dtype=lib.float64, requires_grad=True) for d in data]
    out = fn(lib, *leaves)
    w = lib.arange(1, out.numel() + 1, dtype=lib.float64).reshape(out.shape)
    (out * w).sum().backward()
    return (out.detach(), *(x.grad for x in leaves))


def _same_grads(oracle, fn, *data, rtol=1e-7, atol=1e-12):
    _same(oracle, lambda lib: _grads(lib, fn, *data), rtol, atol)


# --- 1. isclose / allclose -----------------------------------------------------------------

_CLOSE_A = [1.0, 0.0, INF, -INF, INF, NAN, NAN, 1.0, 2.0, -0.0]
_CLOSE_B = [INF, -INF, INF, -INF, -INF, NAN, 1.0, 1.0 + 1e-6, 2.1, 0.0]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("kw", [{}, {"equal_nan": True}, {"rtol": 0, "atol": 0},
                                {"atol": INF}, {"rtol": 0.1}, {"rtol": INF, "equal_nan": True}])
def test_isclose_infinities_only_close_to_themselves(oracle, dtype, kw):
    def run(lib):
        a = lib.tensor(_CLOSE_A, dtype=getattr(lib, dtype))
        b = lib.tensor(_CLOSE_B, dtype=getattr(lib, dtype))
        return lib.isclose(a, b, **kw), a.isclose(b, **kw), lib.isclose(b, a, **kw)
    _same(oracle, run)
    for i in range(len(_CLOSE_A)):            # allclose, function and method, element by element
        _same(oracle, lambda lib: lib.allclose(lib.tensor(_CLOSE_A[i:i + 1]),
                                               lib.tensor(_CLOSE_B[i:i + 1]), **kw))
        _same(oracle, lambda lib: lib.tensor(_CLOSE_A[i:i + 1]).allclose(
            lib.tensor(_CLOSE_B[i:i + 1]), **kw))


@pytest.mark.parametrize("case", [
    lambda lib: lib.isclose(lib.tensor([complex(1, INF), complex(NAN, 0), 1 + 1j, 1 + 0j]),
                            lib.tensor([complex(1, INF), complex(NAN, 0), 1 + 1.000001j,
                                        complex(INF, 0)]), equal_nan=True),
    lambda lib: lib.isclose(lib.tensor([complex(1, INF), 1 + 0j]),
                            lib.tensor([complex(2, INF), complex(1, 1e-9)])),
    lambda lib: lib.isclose(lib.tensor([1, 5, -128], dtype=lib.int8),
                            lib.tensor([2, 5, 127], dtype=lib.int8), atol=1),
    lambda lib: lib.isclose(lib.tensor([1, 5]), lib.tensor([2, 5])),
    lambda lib: lib.isclose(lib.tensor([True, False]), lib.tensor([True, True]), atol=1),
    lambda lib: lib.isclose(lib.tensor([1.0]), lib.tensor([1.0]), rtol=-1.0),
    lambda lib: lib.isclose(lib.tensor([1.0]), lib.tensor([1.0]), atol=-1e-3),
    lambda lib: lib.isclose(lib.tensor([1.0]), lib.tensor([1.0], dtype=lib.float64)),
])
def test_isclose_other_dtypes_and_errors(oracle, case):
    _same(oracle, case)


def test_isclose_messages():
    a = ember.tensor([1.0])
    with pytest.raises(RuntimeError, match="^rtol must be greater than or equal to zero, "
                                           "but got -1$"):
        ember.isclose(a, a, rtol=-1.0)
    with pytest.raises(RuntimeError, match="^Float did not match Double$"):
        ember.isclose(a, a.double())


# --- 2. var / std / var_mean / std_mean: the unbiased overloads ---------------------------

@pytest.mark.parametrize("expr", [
    "F.std(x, False)", "x.var(False)", "F.std(x, 0, True)", "x.std(0, False)",
    "F.var(x, 1, False, True)", "F.std_mean(x, 0, False)", "F.var_mean(x, unbiased=False)",
    "F.var_mean(x, 1, False, True)", "F.std_mean(x, False)", "F.var_mean(x, False)",
    "F.std(x, None, False)", "F.std(x, [0, 1], False)", "F.std(x, (1,), False, keepdim=True)",
    "F.std(x, 0, unbiased=False)", "F.std(x, dim=0, unbiased=False, keepdim=True)",
    "F.std(x, dim=None, unbiased=False)", "F.var(x, unbiased=True)", "x.var(1, True, True)",
    "F.var(x, 0, False, False)", "F.var(x, -1, False)", "F.var(x, 0, keepdim=True)",
    "F.std(x, 0, correction=2, keepdim=True)", "F.var(x, correction=0.5)",
    "F.var(x, 0, correction=None)", "F.var(x, 0, correction=True)", "F.var_mean(x, 0, correction=0)",
    "F.std(x, axis=0, unbiased=False)", "F.std(x, 0, False, keepdims=True)",
    "F.var(F.tensor(3.0, dtype=F.float64), False)", "F.std(x, 1, True, False)",
    "F.std(x, 0, True, out=F.empty(4, dtype=F.float64))",
    "F.var(x, 1, False, out=F.empty(3, dtype=F.float64))",
    # PyTorch's parser refuses these: TypeError
    "F.std(x, True, 0)", "F.std(x, 0, 1)", "F.std(x, 0, 0.0)", "F.std(x, unbiased=False, correction=0)",
    "F.std(x, 0, False, correction=0)", "F.std(x, True, keepdim=True)", "F.std(x, True, dim=0)",
    "F.var(x, 0, True, True, True)", "F.std(x, unbiased=1)", "F.std(x, False, axis=0)",
    "F.std(x, False, out=F.empty((), dtype=F.float64))", "x.std(False, True)",
    "F.var_mean(x, 0, False, out=None)",
])
def test_var_std_overloads(oracle, expr):
    def run(lib):
        x = lib.arange(12, dtype=lib.float64).reshape(3, 4) ** 1.5
        return eval(expr, {"F": lib, "x": x})
    _same(oracle, run)


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.std(x, 0, False), lambda lib, x: x.var(False).reshape(1),
    lambda lib, x: lib.var(x, 1, False, True), lambda lib, x: lib.std_mean(x, 1, False)[0],
    lambda lib, x: lib.var_mean(x, 0, True, True)[0],
])
def test_var_std_unbiased_gradients(oracle, fn):
    _same_grads(oracle, fn, [[1.0, 2.5, -1.0, 4.0], [0.5, 0.5, 3.0, -2.0], [2.0, 1.0, 0.0, 1.5]])


# --- 3. vdot --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float64", "int64"])
def test_vdot_conjugates_its_first_argument(oracle, dtype):
    def run(lib):
        dt = getattr(lib, dtype)
        re = dtype.startswith("float") or dtype.startswith("int")
        a = lib.tensor([1, 3, -2] if re else [1 + 2j, 3 - 1j, -2j], dtype=dt)
        b = lib.tensor([3, 1, 4] if re else [3 + 0j, 1 + 1j, 2 - 5j], dtype=dt)
        out = lib.empty((), dtype=dt)
        lib.vdot(a, b, out=out)
        return lib.vdot(a, b), a.vdot(b), lib.vdot(b, a), out
    _same(oracle, run, rtol=1e-6)
    _same(oracle, lambda lib: lib.vdot(lib.tensor([1 + 2j]), lib.tensor([3 + 0j])))


# --- 4. can_cast ----------------------------------------------------------------------------

_CAST_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32",
                "uint64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("from_", _CAST_DTYPES)
def test_can_cast_follows_the_category_order(from_):
    for to in _CAST_DTYPES:
        assert ember.can_cast(getattr(ember, from_), getattr(ember, to)) == \
            torch.can_cast(getattr(torch, from_), getattr(torch, to)), (from_, to)


@pytest.mark.parametrize("args", [("float", "float32"), ("float32", "x"), (1, "float32"),
                                  ("complex64", "float")])
def test_can_cast_python_types_and_errors(oracle, args):
    def run(lib):
        return lib.can_cast(*(a if a in (1, "x") else getattr(lib, a) if a != "float"
                              else float for a in args))
    _same(oracle, run)


# --- 5. float_power -------------------------------------------------------------------------

@pytest.mark.parametrize("expr", [
    "F.float_power(z, 2)", "F.float_power(x, 1j)", "F.float_power(x, z)",
    "F.float_power(2, z)", "F.float_power(1j, x)", "F.float_power(z, F.tensor([2, 3]))",
    "F.float_power(F.tensor([2, 3]), 0.5)", "F.float_power(x, F.tensor(2 + 0j))",
    "F.float_power(F.tensor(2 + 0j), x)", "F.float_power(x.float(), 2j)", "z.float_power(2)",
    "F.float_power(z, 2, out=F.empty(2, dtype=F.complex128))",
    "F.float_power(z, 2, out=F.empty(2, dtype=F.complex64))",
    "F.float_power(z, 2, out=F.empty(2, dtype=F.float64))",
    "F.float_power(x, 2, out=F.empty(2, dtype=F.complex128))",
    "z.clone().float_power_(2)", "x.clone().float_power_(1j)", "x.float().float_power_(2)",
    "z.to(F.complex128).float_power_(2)", "x.clone().float_power_(3)",
])
def test_float_power_of_complex_input(oracle, expr):
    def run(lib):
        z = lib.tensor([1 + 2j, -1 + 0.5j])
        x = lib.tensor([2.0, 3.0], dtype=lib.float64)
        return eval(expr, {"F": lib, "z": z, "x": x})
    _same(oracle, run, rtol=1e-12)


def test_float_power_messages():
    with pytest.raises(RuntimeError, match="has dtype ComplexFloat but the operation's result "
                                           "requires dtype ComplexDouble"):
        ember.float_power(ember.tensor([1j]), 2, out=ember.empty(1, dtype=ember.complex64))


def test_float_power_real_gradient(oracle):
    _same_grads(oracle, lambda lib, x, y: lib.float_power(x, y), [1.5, 2.0, 0.5], [2.0, -1.0, 3.0])


# --- 6. cdist / dist gradients --------------------------------------------------------------

_X1 = [[0.0, 1.0, 2.0], [1.0, 1.0, -3.0], [2.0, 0.0, 0.0]]
_X2 = [[0.0, 3.0, 2.0], [1.0, 1.0, -3.0], [0.0, 1.0, 0.0]]       # zero differences, a zero distance


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, INF])
def test_cdist_gradient_at_zero_differences(oracle, p):
    _same_grads(oracle, lambda lib, a, b: lib.cdist(a, b, p), _X1, _X2)
    _same_grads(oracle, lambda lib, a, b: lib.cdist(a, b, p), [[0.0, 0.0]], [[0.0, 0.0]])
    # batched, one column
    _same_grads(oracle, lambda lib, a, b: lib.cdist(a, b, p), [[[1.0], [2.0]]], [[[2.0], [5.0]]])


@pytest.mark.parametrize("p", [0.5, 1, 1.5, 2, 3, INF, -1, -INF])
def test_dist_gradient_at_zero_differences(oracle, p):
    _same_grads(oracle, lambda lib, a, b: lib.dist(a, b, p).reshape(1), _X1, _X2)
    _same_grads(oracle, lambda lib, a: lib.dist(a, lib.zeros(3, dtype=lib.float64), p)
                .reshape(1), [1.0, -2.0, 0.0])
    _same_grads(oracle, lambda lib, a: a.dist(lib.zeros(3, dtype=lib.float64), p).reshape(1),
                [0.0, 0.0, 0.0])


def test_cdist_and_dist_inf_norm_ties(oracle):
    # cdist passes the whole gradient to every tied maximum, dist splits it (PyTorch)
    _same_grads(oracle, lambda lib, a: lib.cdist(a, lib.zeros(1, 3, dtype=lib.float64), INF),
                [[1.0, -1.0, 0.5]])
    _same_grads(oracle, lambda lib, a: lib.dist(a, lib.zeros(3, dtype=lib.float64), INF)
                .reshape(1), [1.0, -1.0, 0.5])


def test_dist_p0_values_integer_error_and_p0_zero_gradient(oracle):
    _same(oracle, lambda lib: lib.dist(lib.tensor(_X1), lib.tensor(_X2), 0))
    _same(oracle, lambda lib: lib.dist(lib.tensor([1, 2]), lib.tensor([1, 3])))
    with pytest.raises(RuntimeError, match="^norm\\(\\): input dtype should be either floating "
                                           "point or complex. Got Long instead.$"):
        ember.dist(ember.tensor([1, 2]), ember.tensor([1, 3]))
    # the count is recorded, but its backward passes nothing on: a.grad stays None (torch)
    for lib in (ember, torch):
        a = lib.tensor(_X1, dtype=lib.float64, requires_grad=True)
        lib.dist(a, lib.tensor(_X2, dtype=lib.float64), 0).backward()
        assert a.grad is None


@pytest.mark.parametrize("p", [0.5, 1.5, 3])
def test_cdist_gradcheck_off_zero(p):
    a = ember.tensor([[0.3, 1.2], [1.1, -0.7]], dtype=ember.float64, requires_grad=True)
    b = ember.tensor([[0.9, 0.1], [-0.4, 2.0], [1.6, 0.5]], dtype=ember.float64,
                     requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, y: ember.cdist(x, y, p), (a, b))


# --- 7. nanmedian of all elements: the gradient over ties ---------------------------------

@pytest.mark.parametrize("data", [[1.0, 2.0, 2.0, 3.0, NAN, 2.0], [NAN, NAN],
                                  [2.0, -INF, -INF, NAN, 5.0], [3.0], [INF, INF, NAN, 1.0],
                                  [1.0, 1.0, 1.0, 1.0], [[1.0, 2.0], [2.0, NAN]]])
@pytest.mark.parametrize("op", ["nanmedian", "median"])
def test_median_of_all_elements_spreads_the_gradient_over_ties(oracle, data, op):
    _same_grads(oracle, lambda lib, x: getattr(lib, op)(x).reshape(1), data)
    _same_grads(oracle, lambda lib, x: getattr(x, op)().reshape(1), data)


@pytest.mark.parametrize("op", ["nanmedian", "median"])
def test_median_of_empty_input(oracle, op):
    def run(lib):
        x = lib.zeros(0, dtype=lib.float64, requires_grad=True)
        r = getattr(lib, op)(x)
        r.backward()
        return r, x.grad, lib.tensor(r.requires_grad)
    _same(oracle, run)


# --- 8. linalg.cond -------------------------------------------------------------------------

_ORDS = [None, "fro", "nuc", INF, -INF, 1, -1, 2, -2]
# singular in exact arithmetic and in LU/SVD (exact zero pivots and singular values)
_SINGULAR = [[[0.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 0.0]], [[0.0, 1.0], [0.0, 0.0]],
             [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0]]]


@pytest.mark.parametrize("ord", _ORDS)
def test_cond_of_singular_matrices(oracle, ord):
    for m in _SINGULAR:
        _same(oracle, lambda lib: lib.linalg.cond(lib.tensor(m, dtype=lib.float64), ord))
    # [[1, 2], [2, 4]]: no inverse, so the orders that invert give inf (the SVD-based ones
    # give about 1 / eps, rounding-dependent)
    A = ember.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=ember.float64)
    r = ember.linalg.cond(A, ord).item()
    assert r == INF if ord in ("fro", INF, -INF, 1, -1) else r > 1e15 or (ord == -2 and r < 1e-15)


@pytest.mark.parametrize("ord", _ORDS + [3, "bad"])
def test_cond_of_regular_batched_and_empty_matrices(oracle, ord):
    for m in ([[2.0, 1.0], [1.0, 3.0]], [[[2.0, 1.0], [1.0, 3.0]], [[0.0, 0.0], [0.0, 0.0]]],
              [[4.0, -2.0, 1.0], [0.5, 3.0, 2.0], [1.0, 1.0, 5.0]]):
        _same(oracle, lambda lib: lib.linalg.cond(lib.tensor(m, dtype=lib.float64), ord),
              rtol=1e-10)
    for shape in [(2, 3), (0, 3), (3, 0, 0), (0, 0)]:       # non-square (full rank), empty
        _same(oracle, lambda lib: lib.linalg.cond(
            lib.arange(math.prod(shape), dtype=lib.float64).reshape(shape) ** 2, ord),
            rtol=1e-10)


@pytest.mark.parametrize("ord", [None, "nuc", 2, -2])
def test_cond_gradient(oracle, ord):
    _same_grads(oracle, lambda lib, A: lib.linalg.cond(A, ord).reshape(1),
                [[2.0, 1.0], [1.0, 3.0]], rtol=1e-9)


# --- 9. slogdet / logdet gradients of singular matrices -----------------------------------

_SLOGDET = _SINGULAR[:3] + [[[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0],
                                                        [7.0, 8.0, 9.0]],
                            [[2.0, 1.0], [1.0, -3.0]], [[2.0, 1.0], [1.0, 3.0]]]


@pytest.mark.parametrize("m", _SLOGDET)
@pytest.mark.parametrize("op", ["linalg.slogdet", "slogdet", "logdet", "method"])
def test_slogdet_and_logdet_gradient_without_raising(oracle, m, op):
    def fn(lib, A):
        if op == "logdet":
            return lib.logdet(A).reshape(1)
        if op == "method":
            return A.slogdet()[1].reshape(1)
        return (lib.linalg.slogdet if op == "linalg.slogdet" else lib.slogdet)(A)[1].reshape(1)
    _same_grads(oracle, fn, m, rtol=1e-10)


def test_slogdet_gradient_batched_and_twice(oracle):
    _same_grads(oracle, lambda lib, A: lib.linalg.slogdet(A)[1],
                [[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [1.0, 3.0]]], rtol=1e-10)
    A = ember.tensor([[2.0, 1.0], [0.5, 3.0]], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda A: ember.linalg.slogdet(A)[1], (A,))

    def twice(lib):                    # create_graph: the inverse, which fails when singular
        A = lib.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(lib.linalg.slogdet(A)[1], A, create_graph=True)
        return g
    assert isinstance(_outcome(ember, twice), str) and isinstance(_outcome(torch, twice), str)


# --- 10. addmm, addbmm, baddbmm, addmv, addr with beta=0 ------------------------------------

_ADD_SHAPES = {"addmm": ((2, 3), (2, 4), (4, 3)), "addbmm": ((2, 3), (4, 2, 5), (4, 5, 3)),
               "baddbmm": ((4, 2, 3), (4, 2, 5), (4, 5, 3)), "addmv": ((2,), (2, 5), (5,)),
               "addr": ((2, 3), (2,), (3,))}


@pytest.mark.parametrize("op", list(_ADD_SHAPES))
@pytest.mark.parametrize("fill", [1.0, NAN, INF])
def test_beta_zero_ignores_input_but_keeps_it_in_the_graph(oracle, op, fill):
    s_in, s1, s2 = _ADD_SHAPES[op]

    def run(lib, grad_others):
        x = lib.full(s_in, fill, dtype=lib.float64, requires_grad=True)
        m1 = lib.linspace(-1, 2, math.prod(s1), dtype=lib.float64).reshape(s1)
        m2 = lib.linspace(0.5, -1.5, math.prod(s2), dtype=lib.float64).reshape(s2)
        m1.requires_grad_(grad_others)
        r = getattr(lib, op)(x, m1, m2, beta=0, alpha=1.5)
        r.sum().backward()
        return r, x.grad, m1.grad if grad_others else x.grad
    _same(oracle, lambda lib: run(lib, True))
    _same(oracle, lambda lib: run(lib, False))


def test_addmm_beta_zero_examples(oracle):
    def run(lib):
        a = lib.tensor([[NAN, INF]], requires_grad=True)
        r = lib.addmm(a, lib.ones(1, 1), lib.ones(1, 2), beta=0)
        r.sum().backward()
        b = lib.full((1, 2), NAN)
        b.addmm_(lib.ones(1, 1), lib.ones(1, 2), beta=0)
        out = lib.empty(1, 2)
        lib.addmm(lib.full((1, 2), NAN), lib.ones(1, 1), lib.ones(1, 2), beta=0, out=out)
        return r, a.grad, b, out
    _same(oracle, run)


@pytest.mark.parametrize("op", list(_ADD_SHAPES))
@pytest.mark.parametrize("kw", [{"beta": 0.5}, {"beta": 0}, {"beta": 2}, {"beta": -1.5},
                                {"alpha": 0.5}, {"alpha": 2.0}, {"beta": 1.7, "alpha": 2}])
def test_integer_operands_truncate_beta_and_alpha(oracle, op, kw):
    def run(lib):
        ints = [lib.arange(1, math.prod(s) + 1).reshape(s) for s in _ADD_SHAPES[op]]
        return getattr(lib, op)(*ints, **kw)
    _same(oracle, run)


def test_addr_mixed_dtypes_promote(oracle):
    _same(oracle, lambda lib: lib.addr(lib.ones(2, 3, dtype=lib.float32), lib.ones(2, dtype=lib.int64),
                                       lib.ones(3, dtype=lib.int64), beta=0.5))


# --- 11. max / min with other= ------------------------------------------------------------

@pytest.mark.parametrize("expr", [
    "F.max(t, other=u)", "F.min(t, other=u)", "F.max(input=t, other=u)", "t.max(other=u)",
    "t.min(other=u)", "F.min(f, other=F.tensor([0.0, 0.0, 5.0]))", "F.max(t, other=5)",
    "F.max(t, 0, other=u)", "F.max(t, u)", "F.max(t, dim=0)",
])
def test_max_min_other_keyword(oracle, expr):
    def run(lib):
        t, u = lib.tensor([3, -2, 4]), lib.tensor([1, 5, 2])
        f = lib.tensor([1.5, -2.0, 4.0])
        return eval(expr, {"F": lib, "t": t, "u": u, "f": f})
    _same(oracle, run)


def test_max_other_keyword_gradient(oracle):
    _same_grads(oracle, lambda lib, a, b: lib.max(a, other=b), [1.0, 2.0, 3.0], [0.0, 2.0, 4.0])


# --- 12. signbit ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16", "int64", "bool"])
def test_signbit_reads_the_sign_bit(oracle, dtype):
    # (bfloat16: torch's float -> bfloat16 conversion drops a NaN's sign, so no -NaN there)
    vals = [-NAN, NAN, -0.0, 0.0, -1.0, 1.0, -INF, INF, 1e-45, -1e-45]
    if dtype == "bfloat16":
        vals = vals[1:]

    def run(lib):
        x = lib.tensor(vals, dtype=lib.float64).to(getattr(lib, dtype))
        out = lib.empty(len(vals), dtype=lib.bool)
        lib.signbit(x, out=out)
        return lib.signbit(x), x.signbit(), lib.signbit(x[::2]), out
    _same(oracle, run)


def test_signbit_of_a_tensor_requiring_grad_and_copysign(oracle):
    _same(oracle, lambda lib: lib.signbit(lib.tensor([-NAN, -0.0, 2.0], requires_grad=True)))
    _same(oracle, lambda lib: lib.copysign(lib.tensor([1.0, 1.0]), lib.tensor([-NAN, NAN])))


def test_nan_to_num_derivative_is_torchs_both_ways():
    """grad and tangent times isfinite(input), so a NaN tangent at a replaced element stays
    NaN (forward mode gave 0 where reverse mode gave NaN); the node is NanToNumBackward0."""
    import numpy as np
    out = {}
    for lib in (ember, torch):
        x = lib.tensor([-1.0, 4.0, float("inf"), 2.0], dtype=lib.float64)
        t = lib.ones(4, dtype=lib.float64)
        tangent = lib.func.jvp(lambda v: v.sqrt().nan_to_num(), (x,), (t,))[1]
        xr = x.clone().requires_grad_()
        y = xr.sqrt().nan_to_num(posinf=3.0)
        y.sum().backward()
        out[lib] = (tangent.numpy(), xr.grad.numpy(), y.detach().numpy(), y.grad_fn.name())
    for a, b in zip(out[ember], out[torch]):
        if isinstance(a, str):
            assert a == b
        else:
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("case", ["std_constant", "std_rows", "std_one_element", "std_mean",
                                  "std_jvp", "atan2_origin", "angle_origin"])
def test_gradients_at_degenerate_points_are_torchs(case):
    """std of a constant row (sqrt's derivative at 0 gave NaN; PyTorch's std gives 0, on a
    StdBackward0 node) and atan2 / angle at the origin (0 in PyTorch, NaN before)."""
    import numpy as np

    def run(lib):
        if case == "std_jvp":
            return lib.func.jvp(lambda v: v.std(1), (lib.tensor([[1., 1.], [1., 3.]]),),
                                (lib.ones(2, 2),))[1].numpy()
        if case in ("atan2_origin", "angle_origin"):
            a = lib.tensor([0., 0, 1, 0.3], requires_grad=True)
            b = lib.tensor([0., 1, 0, 0.7], requires_grad=True)
            if case == "atan2_origin":
                (lib.atan2(a, b) * lib.tensor([1., 2, 3, 1.7])).sum().backward()
            else:
                lib.view_as_complex(lib.stack([b, a], -1)).angle().sum().backward()
            return np.concatenate([a.grad.numpy(), b.grad.numpy()])
        x = lib.tensor({"std_constant": [2., 2., 2.], "std_rows": [[1., 1., 1.], [1., 2., 4.]],
                        "std_one_element": [3.], "std_mean": [[1., 2.], [3., 3.]]}[case],
                       dtype=lib.float64, requires_grad=True)
        if case == "std_rows":
            y = x.std(1).sum()
        elif case == "std_one_element":
            y = x.std(correction=0)
        elif case == "std_mean":
            s, m = lib.std_mean(x, 1)
            y = s.sum() + m.sum()
        else:
            y = x.std()
            assert y.grad_fn.name() == "StdBackward0"
        y.backward()
        return x.grad.numpy()
    e, t = run(ember), run(torch)
    np.testing.assert_array_equal(np.signbit(e), np.signbit(t))
    np.testing.assert_allclose(e, t, rtol=1e-12, atol=0)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.cross_entropy(lib.randn(2, 5), 5),
    lambda lib: lib.nn.CrossEntropyLoss()(lib.randn(2, 5), 5),
    lambda lib: lib.nn.functional.nll_loss(lib.randn(2, 5), 5),
    lambda lib: lib.nn.functional.cross_entropy(5, lib.tensor([1, 2]))])
def test_losses_refuse_a_number_for_a_tensor_as_torch(call):
    """A TypeError naming the argument (ember raised AttributeError)."""
    messages = []
    for lib in (ember, torch):
        with pytest.raises(TypeError) as err:
            call(lib)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
