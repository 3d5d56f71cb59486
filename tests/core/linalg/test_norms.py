"""matrix_norm/norm/pinv/matrix_rank/cross/multi_dot/vecdot and the aliases against
torch.linalg over float32/float64, batches, non-contiguous and empty inputs, and errors."""
import math

import numpy as np
import pytest
import torch

import ember
import ember.linalg as LA


def pair(shape, device, dtype="float64", seed=0, transpose=False):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    e, t = ember.tensor(a, device=device), torch.tensor(a)
    if transpose:
        e, t = e.transpose(-1, -2), t.transpose(-1, -2)
    return e, t


def check(got, want, oracle):
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            check(g, w, oracle)
        return
    r = 1e-4 if want.dtype == torch.float32 else None
    oracle.assert_matches(got, want, rtol=r, atol=r)


ORDS = ["fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2]


@pytest.mark.parametrize("ord", ORDS)
@pytest.mark.parametrize("shape,dim", [((3, 4), (-2, -1)), ((2, 3, 4), (-2, -1)),
                                       ((3, 4, 2), (0, 2)), ((3, 4, 2), (2, 0))])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matrix_norm_matches_torch(ord, shape, dim, keepdim, dtype, device, oracle):
    a, ta = pair(shape, device, dtype, transpose=True)
    check(LA.matrix_norm(a, ord, dim, keepdim), torch.linalg.matrix_norm(ta, ord, dim, keepdim),
          oracle)
    check(LA.norm(a, ord, dim, keepdim), torch.linalg.norm(ta, ord, dim, keepdim), oracle)


@pytest.mark.parametrize("ord", ["fro", 1, math.inf, 2, "nuc"])
def test_matrix_norm_of_empty_matrices_is_zero(ord, device, oracle):
    for shape in [(0, 3), (2, 0, 3)]:
        a, ta = pair(shape, device)
        check(LA.matrix_norm(a, ord), torch.linalg.matrix_norm(ta, ord), oracle)


@pytest.mark.parametrize("args", [dict(), dict(ord=3), dict(ord=1.5, dim=1), dict(dim=0),
                                  dict(dim=(0, 1)), dict(ord=math.inf), dict(ord=0, dim=-1),
                                  dict(keepdim=True), dict(ord="fro"), dict(ord=-2)])
@pytest.mark.parametrize("shape", [(5,), (3, 4)])
def test_norm_picks_vector_or_matrix_norm_like_torch(args, shape, device, oracle):
    a, ta = pair(shape, device)
    try:
        want = torch.linalg.norm(ta, **args)
    except (RuntimeError, IndexError) as e:
        with pytest.raises(type(e)):
            LA.norm(a, **args)
        return
    check(LA.norm(a, **args), want, oracle)
    check(LA.norm(a.float(), **args, dtype=ember.float64), torch.linalg.norm(
        ta.float(), **args, dtype=torch.float64), oracle)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3), (0, 3, 2), (3, 0)])
@pytest.mark.parametrize("kwargs", [dict(), dict(atol=0.5), dict(rtol=0.3),
                                    dict(atol=0.1, rtol=0.2), dict(hermitian=True)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pinv_and_matrix_rank_match_torch(shape, kwargs, dtype, device, oracle):
    if kwargs.get("hermitian") and shape[-1] != shape[-2]:
        pytest.skip("hermitian needs square matrices")
    a, ta = pair(shape, device, dtype, seed=1, transpose=True)
    if kwargs.get("hermitian"):
        a, ta = a + a.transpose(-1, -2), ta + ta.transpose(-1, -2)
    check(LA.pinv(a, **kwargs), torch.linalg.pinv(ta, **kwargs), oracle)
    check(LA.matrix_rank(a, **kwargs), torch.linalg.matrix_rank(ta, **kwargs), oracle)


def test_pinv_rank_deficient_and_legacy_names(device, oracle):
    a = np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 0.5])
    e, t = ember.tensor(a, device=device), torch.tensor(a)
    check(LA.pinv(e), torch.linalg.pinv(t), oracle)
    check(ember.pinverse(e), torch.pinverse(t), oracle)
    check(e.pinverse(1e-3), t.pinverse(1e-3), oracle)
    check(LA.matrix_rank(e), torch.linalg.matrix_rank(t), oracle)
    assert LA.matrix_rank(e).item() == 1 and LA.matrix_rank(e).dtype == ember.int64
    tol = ember.tensor([100.0], dtype=ember.float64, device=device)
    assert LA.matrix_rank(e, atol=tol).tolist() == [0]


@pytest.mark.parametrize("shapes,dim", [(((3,), (3,)), -1), (((4, 3), (4, 3)), -1),
                                        (((3, 5), (3, 5)), 0), (((2, 1, 3), (1, 4, 3)), -1),
                                        (((0, 3), (0, 3)), -1)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_cross_matches_torch(shapes, dim, dtype, device, oracle):
    (a, ta), (b, tb) = (pair(s, device, "float64", seed=i) for i, s in enumerate(shapes))
    if dtype == "int64":
        a, ta, b, tb = (x * 10 for x in (a, ta, b, tb))
    a, b = a.to(getattr(ember, dtype)), b.to(getattr(ember, dtype))
    ta, tb = ta.to(getattr(torch, dtype)), tb.to(getattr(torch, dtype))
    check(LA.cross(a, b, dim=dim), torch.linalg.cross(ta, tb, dim=dim), oracle)


@pytest.mark.parametrize("shapes", [[(3,), (3, 4)], [(2, 3), (3,)], [(3,), (3,)],
                                    [(5, 2), (2, 8), (8, 3), (3, 1)], [(4,), (4, 9), (9, 2), (2,)],
                                    [(2, 30), (30, 2), (2, 30)]])
def test_multi_dot_matches_torch(shapes, device, oracle):
    pairs = [pair(s, device, seed=i) for i, s in enumerate(shapes)]
    check(LA.multi_dot([p[0] for p in pairs]), torch.linalg.multi_dot([p[1] for p in pairs]),
          oracle)


def test_vecdot_diagonal_matmul_aliases(device, oracle):
    a, ta = pair((2, 3, 4), device)
    b, tb = pair((4,), device, seed=1)
    check(LA.vecdot(a, b), torch.linalg.vecdot(ta, tb), oracle)
    check(LA.vecdot(a, a, dim=1), torch.linalg.vecdot(ta, ta, dim=1), oracle)
    check(LA.diagonal(a), torch.linalg.diagonal(ta), oracle)
    check(LA.diagonal(a, offset=1, dim1=0, dim2=2), torch.linalg.diagonal(ta, offset=1, dim1=0,
                                                                          dim2=2), oracle)
    check(LA.matmul(a, b), torch.linalg.matmul(ta, tb), oracle)
    check(LA.vector_norm(a, 3, dim=1), torch.linalg.vector_norm(ta, 3, dim=1), oracle)


@pytest.mark.parametrize("call,err,msg", [
    ("L.matrix_norm(T.ones(3))", RuntimeError,
     "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."),
    ("L.matrix_norm(T.ones(3, 3), ord=3)", RuntimeError, "linalg.matrix_norm: Order 3 not supported."),
    ("L.matrix_norm(T.ones(3, 3), ord='x')", RuntimeError, "linalg.matrix_norm: Order x not supported."),
    ("L.matrix_norm(T.ones(3, 3, dtype=T.int64))", RuntimeError,
     "linalg.matrix_norm: Expected a floating point or complex tensor as input. Got Long"),
    ("L.matrix_norm(T.ones(3, 3), ord=1, dim=(0, 0))", RuntimeError,
     "linalg.matrix_norm: dims must be different. Got (0, 0)"),
    ("L.matrix_norm(T.ones(3, 3), dim=(0,))", RuntimeError,
     "linalg.matrix_norm: dim must be a 2-tuple. Got 0"),
    ("L.matrix_norm(T.ones(3, 3), dim=(0, 5))", IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    ("L.norm(T.ones(3, 3, 3), ord=2)", RuntimeError,
     "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D."),
    ("L.norm(T.ones(3, 3), dim=(0, 1, 1))", RuntimeError,
     "linalg.norm: If dim is specified, it must be of length 1 or 2. Got [0, 1, 1]"),
    ("L.norm(T.ones(3), ord='fro')", RuntimeError,
     "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."),
    ("L.pinv(T.ones(3, 3, dtype=T.int64))", RuntimeError,
     "linalg.pinv(Long{[3, 3]}): expected a tensor with 2 or more dimensions of float, double, "
     "cfloat or cdouble types"),
    ("L.cross(T.ones(3, 2), T.ones(3, 2))", RuntimeError,
     "linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2"),
    ("L.multi_dot([T.ones(3)])", RuntimeError, "multi_dot(): expected at least 2 tensors but got 1"),
    ("L.multi_dot([])", RuntimeError, "multi_dot(): expected at least 2 tensors but got 0"),
    ("L.multi_dot([T.ones(3), T.ones(3, 3, 3)])", RuntimeError,
     "multi_dot(): the last tensor must be 1D or 2D but got 3D"),
    ("L.multi_dot([T.ones(2, 3), T.ones(2, 3)])", RuntimeError,
     "multi_dot(): tensors 0 and 1 with shapes [2, 3] and [2, 3] cannot be multiplied"),
    ("L.vecdot(T.ones(2, 3), T.ones(3, dtype=T.int64))", RuntimeError,
     "linalg.vecdot: Expected x and y to have the same dtype, but found x of type Float and y of "
     "type Long instead"),
])
def test_errors_match_torch(call, err, msg):
    with pytest.raises(err) as got:
        eval(call, {"L": LA, "T": ember})
    assert str(got.value) == msg
    with pytest.raises(err) as want:
        eval(call, {"L": torch.linalg, "T": torch})
    assert str(want.value) == msg


def test_matrix_rank_and_cross_refuse_what_torch_refuses():
    with pytest.raises(RuntimeError, match="linalg.matrix_rank: Expected a floating point"):
        LA.matrix_rank(ember.ones(3, 3, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="linalg.cross: Expected input and other to have "
                                           "the same dtype"):
        LA.cross(ember.ones(3), ember.ones(3, dtype=ember.int64))
