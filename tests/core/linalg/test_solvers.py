"""linalg solve/inv/det/slogdet/triangular and Cholesky solves/lstsq/matrix_power against
torch.linalg: float32/float64, batches (broadcast), non-contiguous and empty inputs, errors."""
import numpy as np
import pytest
import torch

import ember
import ember.linalg as LA


def pair(shape, device, dtype="float64", seed=0, transpose=False, spd=False):
    """The same random matrices as an ember and a torch tensor (well conditioned)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if spd:
        a = a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
    elif len(shape) >= 2 and shape[-1] == shape[-2]:
        a = a + shape[-1] * np.eye(shape[-1])
    a = a.astype(dtype)
    e, t = ember.tensor(a, device=device), torch.tensor(a)
    if transpose:                   # a non-contiguous view holding the transposed values
        e, t = e.transpose(-1, -2), t.transpose(-1, -2)
    return e, t


def check(got, want, oracle):
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            check(g, w, oracle)
        return
    if want.dtype == torch.float32:
        oracle.assert_matches(got, want, rtol=1e-4, atol=1e-4)
    else:
        oracle.assert_matches(got, want)


SQUARE = [(3, 3), (2, 4, 4), (2, 1, 3, 3), (0, 3, 3), (0, 0)]


@pytest.mark.parametrize("shape", SQUARE)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("expr", ["L.inv(a)", "L.det(a)", "L.slogdet(a)", "L.inv_ex(a)",
                                  "F.inverse(a)", "F.det(a)", "F.logdet(a)", "F.slogdet(a)",
                                  "a.inverse()", "a.det()", "a.slogdet()", "a.logdet()",
                                  "L.matrix_power(a, 3)", "L.matrix_power(a, 0)",
                                  "L.matrix_power(a, -2)", "a.matrix_power(1)"])
def test_square_ops_match_torch(expr, shape, dtype, transpose, device, oracle):
    a, ta = pair(shape, device, dtype, transpose=transpose)
    got = eval(expr, {"L": LA, "F": ember, "a": a})
    want = eval(expr, {"L": torch.linalg, "F": torch, "a": ta})
    check(got, want, oracle)
    if "inv_ex" in expr:
        assert got.info.dtype == ember.int32 and type(got).__name__ == "linalg_inv_ex"


@pytest.mark.parametrize("a_shape,b_shape", [((3, 3), (3, 2)), ((3, 3), (3,)), ((2, 3, 3), (3, 4)),
                                             ((2, 3, 3), (2, 3)), ((1, 3, 3), (4, 3, 1)),
                                             ((0, 2, 2), (2, 1)), ((2, 2, 2), (2, 2))])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_solve_matches_torch(a_shape, b_shape, left, dtype, device, oracle):
    a, ta = pair(a_shape, device, dtype, seed=1, transpose=True)
    b, tb = pair(b_shape, device, dtype, seed=2)
    if not left and len(b_shape) > 1 and b_shape[-1] != a_shape[-1]:
        b, tb = b.transpose(-1, -2), tb.transpose(-1, -2)
    try:
        want = torch.linalg.solve(ta, tb, left=left)
    except RuntimeError as e:           # torch takes no vector B with left=False
        with pytest.raises(RuntimeError, match=str(e).replace("(", r"\(").replace(")", r"\)")):
            LA.solve(a, b, left=left)
        return
    check(LA.solve(a, b, left=left), want, oracle)
    check(LA.solve_ex(a, b, left=left), torch.linalg.solve_ex(ta, tb, left=left), oracle)


def test_singular_matrices_raise_linalg_error(device):
    assert issubclass(LA.LinAlgError, RuntimeError)
    eye, ones = ember.eye(3, dtype=ember.float64), ember.ones(3, 3, dtype=ember.float64)
    stack = ember.stack([eye, ones])
    with pytest.raises(LA.LinAlgError, match=r"^linalg.inv: The diagonal element 2 is zero, "
                       r"the inversion could not be completed because the input matrix is "
                       r"singular.$"):
        LA.inv(ones.to(device))
    with pytest.raises(LA.LinAlgError, match=r"linalg.inv: \(Batch element 1\): The diagonal "
                                             r"element 2 is zero"):
        LA.inv(stack.to(device))
    with pytest.raises(LA.LinAlgError, match=r"^torch.linalg.solve: \(Batch element 1\): The "
                       r"solver failed because the input matrix is singular.$"):
        LA.solve(stack.to(device), ember.ones(2, 3, dtype=ember.float64, device=device))
    inverse, info = LA.inv_ex(stack.to(device))
    assert info.tolist() == [0, 2]
    assert inverse[0].tolist() == eye.tolist()
    x, info = LA.solve_ex(stack.to(device), ember.ones(2, 3, dtype=ember.float64, device=device))
    assert info.tolist() == [0, 2] and x[0].tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(LA.LinAlgError):
        LA.inv_ex(ones, check_errors=True)
    assert LA.det(ones).item() == 0.0
    sign, logabsdet = LA.slogdet(ones)
    assert sign.item() == 0.0 and logabsdet.item() == float("-inf")


@pytest.mark.parametrize("call,err,msg", [
    ("L.inv(ember.ones(3, 3, dtype=ember.int64))", RuntimeError,
     "linalg.inv: Expected a floating point or complex tensor as input. Got Long"),
    ("L.inv(ember.ones(3, 3, dtype=ember.float16))", RuntimeError,
     "linalg.inv: Low precision dtypes not supported. Got Half"),
    ("L.inv(ember.ones(3, 3, dtype=ember.bfloat16))", RuntimeError,
     "linalg.inv: Low precision dtypes not supported. Got BFloat16"),
    ("L.inv(ember.ones(3, 4))", RuntimeError,
     "linalg.inv: A must be batches of square matrices, but they are 3 by 4 matrices"),
    ("L.inv(ember.ones(3))", RuntimeError,
     "linalg.inv: The input tensor A must have at least 2 dimensions."),
    ("L.det(ember.ones(3, 4))", RuntimeError,
     "linalg.det: A must be batches of square matrices, but they are 3 by 4 matrices"),
    ("L.det(ember.ones(3, 3, dtype=ember.int64))", RuntimeError,
     "linalg.det: Expected a floating point or complex tensor as input. Got Long"),
    ("L.slogdet(ember.ones(3, 4))", RuntimeError,
     "linalg.slogdet: A must be batches of square matrices, but they are 3 by 4 matrices"),
    ("L.solve(ember.eye(3), ember.ones(4))", RuntimeError,
     "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x1)"),
    ("L.solve(ember.eye(3), ember.ones(4), left=False)", RuntimeError,
     "linalg.solve: Incompatible shapes of A and B for the equation XA = B (3x3 and 4x1)"),
    ("L.solve(ember.eye(3), ember.ones(3, dtype=ember.float64))", RuntimeError,
     "linalg.solve: Expected A and B to have the same dtype, but found A of type Float and B "
     "of type Double instead"),
    ("L.solve(ember.ones(3, 4), ember.ones(3))", RuntimeError,
     "linalg.solve: A must be batches of square matrices, but they are 3 by 4 matrices"),
    ("L.solve(ember.ones(2, 3, 3), ember.ones(4, 3, 1))", RuntimeError,
     "The size of tensor a (4) must match the size of tensor b (2) at non-singleton dimension 0"),
    ("L.solve_triangular(ember.ones(3, 3), ember.ones(3), upper=True)", RuntimeError,
     "linalg.solve_triangular: The input tensor B must have at least 2 dimensions."),
    ("L.solve_triangular(ember.ones(3, 3), ember.ones(2, 3), upper=True)", RuntimeError,
     "linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B (3x3 and "
     "2x3)"),
    ("L.matrix_power(ember.ones(3, 4), 2)", RuntimeError,
     "linalg.matrix_power: A must be batches of square matrices, but they are 3 by 4 matrices"),
    ("L.matrix_power(ember.ones(3), 2)", RuntimeError,
     "linalg.matrix_power: The input tensor A must have at least 2 dimensions."),
    ("L.matrix_power(ember.ones(3, 3, dtype=ember.int64), -1)", RuntimeError,
     "linalg.inv: Expected a floating point or complex tensor as input. Got Long"),
    ("L.matrix_power(ember.ones(3, 3), 1.5)", TypeError, "argument 'n' must be int"),
    ("L.lstsq(ember.ones(2, 3, 2), ember.ones(3, 1))", RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    ("L.lstsq(ember.ones(3, 4), ember.ones(2, 1))", RuntimeError,
     "torch.linalg.lstsq: input.size(-2) should match other.size(-2)"),
    ("L.lstsq(ember.ones(3, 2), ember.ones(2, 3, 1))", RuntimeError,
     "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
     "(input.dim() - other.dim()) <= 1"),
    ("L.lstsq(ember.ones(3, 4, dtype=ember.int64), ember.ones(3, 1))", RuntimeError,
     "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
     "dtype Long and other's dtype Float"),
    ("L.lstsq(ember.ones(3, 4), ember.ones(3, 1), driver='x')", RuntimeError,
     "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"),
    ("ember.cholesky_inverse(ember.ones(3, 4))", RuntimeError,
     "cholesky_inverse: A must be batches of square matrices, but they are 3 by 4 matrices"),
    ("L.inv([[1.0]])", TypeError, "linalg.inv(): argument 'A' (position 1) must be Tensor"),
])
def test_errors_match_torch(call, err, msg):
    with pytest.raises(err) as got:
        eval(call, {"L": LA, "ember": ember})
    assert msg in str(got.value)
    torch_call = call.replace("ember.int64", "torch.int64").replace("ember.", "torch.")
    torch_call = torch_call.replace("L.", "torch.linalg.")
    if "1.5" not in call and "[[1.0]]" not in call:     # torch words these two differently
        with pytest.raises(err) as want:
            eval(torch_call, {"torch": torch})
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("a_shape,b_shape", [((4, 4), (4, 2)), ((2, 3, 3), (3, 5)),
                                             ((3, 3), (2, 3, 1)), ((0, 3, 3), (3, 1))])
@pytest.mark.parametrize("upper,left,unit", [(True, True, False), (False, True, False),
                                             (True, False, True), (False, False, False)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_solve_triangular_matches_torch(a_shape, b_shape, upper, left, unit, dtype, device,
                                        oracle):
    a, ta = pair(a_shape, device, dtype, seed=3, transpose=True)
    b, tb = pair(b_shape, device, dtype, seed=4)
    if not left:
        b, tb = b.transpose(-1, -2), tb.transpose(-1, -2)
    check(LA.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit),
          torch.linalg.solve_triangular(ta, tb, upper=upper, left=left, unitriangular=unit),
          oracle)


def test_solve_triangular_with_a_zero_pivot_gives_inf_like_torch(device):
    a = ember.triu(ember.ones(3, 3, device=device)) - ember.eye(3, device=device)
    b = ember.ones(3, 2, device=device)
    got = LA.solve_triangular(a, b, upper=True)
    want = torch.linalg.solve_triangular(torch.ones(3, 3).triu() - torch.eye(3),
                                         torch.ones(3, 2), upper=True)
    assert np.array_equal(got.numpy(force=True), want.numpy(force=True), equal_nan=True)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shape,b_shape", [((3, 3), (3, 2)), ((2, 4, 4), (4, 1)),
                                           ((0, 2, 2), (2, 3))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cholesky_solve_and_inverse_match_torch(upper, shape, b_shape, dtype, device, oracle):
    a, ta = pair(shape, device, dtype, seed=5, spd=True)
    b, tb = pair(b_shape, device, dtype, seed=6)
    factor, tfactor = LA.cholesky(a, upper=upper), torch.linalg.cholesky(ta, upper=upper)
    check(ember.cholesky_solve(b, factor, upper), torch.cholesky_solve(tb, tfactor, upper), oracle)
    check(b.cholesky_solve(factor, upper), tb.cholesky_solve(tfactor, upper), oracle)
    check(ember.cholesky_inverse(factor, upper), torch.cholesky_inverse(tfactor, upper), oracle)
    check(factor.cholesky_inverse(upper), torch.cholesky_inverse(tfactor, upper), oracle)


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd", "gelss", "gels"])
@pytest.mark.parametrize("a_shape,b_shape", [((5, 3), (5, 2)), ((2, 6, 4), (1, 6, 3)),
                                             ((5, 3), (5,)), ((2, 5, 3), (2, 5)),
                                             ((0, 4, 2), (0, 4, 1))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lstsq_matches_torch(driver, a_shape, b_shape, dtype, device, oracle):
    a, ta = pair(a_shape[:-2] + a_shape[:-3:-1], device, dtype, seed=7, transpose=True)
    b, tb = pair(b_shape, device, dtype, seed=8)
    got = LA.lstsq(a, b, driver=driver)
    want = torch.linalg.lstsq(ta, tb, driver=driver)
    assert type(got).__name__ == "linalg_lstsq"
    for name in ("solution", "residuals", "rank", "singular_values"):
        check(getattr(got, name), getattr(want, name), oracle)


def test_lstsq_rank_deficient_and_wide(device, oracle):
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    b = np.arange(6.0).reshape(3, 2)
    for driver in ("gelsy", "gelsd", "gelss"):
        got = LA.lstsq(ember.tensor(a, device=device), ember.tensor(b, device=device),
                       driver=driver)
        want = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
        check(got.solution, want.solution, oracle)
        assert got.rank.tolist() == want.rank.tolist() == 1
        assert tuple(got.residuals.shape) == tuple(want.residuals.shape) == (0,)
    wide = np.random.default_rng(0).standard_normal((2, 4))
    got = LA.lstsq(ember.tensor(wide, device=device), ember.tensor(b[:2], device=device),
                   rcond=1e-3, driver="gelsd")
    check(got, torch.linalg.lstsq(torch.tensor(wide), torch.tensor(b[:2]), rcond=1e-3,
                                  driver="gelsd"), oracle)


def test_results_stay_on_the_input_device_and_dtype(device):
    a, _ = pair((2, 3, 3), device, "float32")
    for r in (LA.inv(a), LA.det(a), LA.solve(a, a), LA.matrix_power(a, 2)):
        assert r.device == a.device and r.dtype == ember.float32


def test_out_argument_is_written_or_refused():
    A = ember.tensor([[2.0, 1.0], [1.0, 3.0]])
    out = ember.empty(2, 2)
    assert ember.linalg.inv(A, out=out) is out
    assert ember.allclose(out, ember.linalg.inv(A))
    with pytest.raises(RuntimeError, match="expected out tensor of shape"):
        ember.linalg.inv(A, out=ember.empty(3))


@pytest.mark.parametrize("driver", ["gelsd", "gelss", "gels"])
@pytest.mark.parametrize("vector", [False, True])
def test_lstsq_residuals_carry_gradients(driver, vector):
    # the residuals came back detached (backward through them raised)
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5) if vector else (2, 5, 2))
    grads = []
    for lib in (ember, torch):
        A, B = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        r = lib.linalg.lstsq(A, B, driver=driver)
        (r.residuals.sum() + r.solution.sum()).backward()
        grads.append((r.residuals.detach().numpy(), A.grad.numpy(), B.grad.numpy()))
    for e, t in zip(*grads):
        np.testing.assert_allclose(e, t, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("fn", ["svd", "svdvals", "pinv", "matrix_rank"])
def test_svd_that_does_not_converge_raises_linalg_error(fn):
    nan = ember.tensor([[float("nan"), 1.0], [1.0, 1.0]])
    with pytest.raises(ember.linalg.LinAlgError, match="linalg.svd: The algorithm failed to "
                       "converge because the input matrix contained non-finite values"):
        getattr(ember.linalg, fn)(nan)
