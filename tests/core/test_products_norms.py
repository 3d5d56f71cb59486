"""The products of core/products.py (mm, bmm, mv, dot, outer, kron, inner, tensordot,
addr, trace, the addmm family, einsum, cross) and the norms of core/norms.py
(vector_norm, norm, dist, cdist) against PyTorch; and as_tensor."""
import math

import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("expr", [
    "F.outer(a[0], b[1])", "F.dot(a[0], b[0])", "F.mm(a, b.t())", "F.mv(a, b[0])",
    "F.bmm(a.view(2, 2, 3), b.view(2, 3, 2))",
])
def test_products_match_torch(expr, device, oracle):
    oracle.expr_matches(expr, device)


@pytest.mark.parametrize("expr", [
    "F.trace(a)",
])
def test_trace(expr, device, oracle):
    oracle.expr_matches(expr, device, rtol=1e-5, atol=1e-6)


def test_product_errors(device):
    a = ember.ones(2, 3, device=device)
    with pytest.raises(RuntimeError, match="Expected size for first two dimensions of batch2"):
        ember.bmm(ember.ones(2, 2, 3), ember.ones(3, 3, 2))
    with pytest.raises(RuntimeError, match="must be a 2D tensor"):
        ember.mm(ember.ones(3), a)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_addmm_family(device, oracle, dtype):
    inp, tinp = oracle.normal_pair((3, 1), dtype, device)
    m1, t1 = oracle.normal_pair((3, 4), dtype, device, 1)
    m2, t2 = oracle.normal_pair((5, 4), dtype, device, 2)
    m2, t2 = m2.t(), t2.t()                                   # non-contiguous
    oracle.assert_matches(ember.addmm(inp, m1, m2, beta=0.5, alpha=2),
                          torch.addmm(tinp, t1, t2, beta=0.5, alpha=2))
    oracle.assert_matches(inp.addmm(m1, m2), tinp.addmm(t1, t2))
    v, tv = oracle.normal_pair((4,), dtype, device, 3)
    oracle.assert_matches(ember.addmv(inp.reshape(3), m1, v, alpha=3),
                          torch.addmv(tinp.reshape(3), t1, tv, alpha=3))
    b1, tb1 = oracle.normal_pair((2, 3, 4), dtype, device, 4)
    b2, tb2 = oracle.normal_pair((2, 4, 5), dtype, device, 5)
    i5, ti5 = oracle.normal_pair((3, 5), dtype, device, 6)
    oracle.assert_matches(ember.baddbmm(i5, b1, b2, beta=2), torch.baddbmm(ti5, tb1, tb2, beta=2))
    oracle.assert_matches(ember.addbmm(i5, b1, b2, alpha=0.5),
                          torch.addbmm(ti5, tb1, tb2, alpha=0.5))
    nan_in = ember.full((3, 5), math.nan, dtype=dtype, device=device)
    oracle.assert_matches(ember.addbmm(nan_in, b1, b2, beta=0),
                          torch.addbmm(torch.full((3, 5), math.nan, dtype=tb1.dtype), tb1,
                                       tb2, beta=0))
    out = ember.empty(2, 3, 5, dtype=dtype, device=device)
    assert ember.baddbmm(i5, b1, b2, out=out) is out
    e, te = oracle.normal_pair((0, 4), dtype, device)
    oracle.assert_matches(ember.addmm(ember.zeros(0, 2, dtype=dtype, device=device), e,
                                      m1.t()[:, :2]),
                          torch.addmm(torch.zeros(0, 2, dtype=te.dtype), te, t1.t()[:, :2]))


@pytest.mark.parametrize("x_shape", [(6, 4), (2, 3, 4)])
def test_linear_gradients_come_in_the_layout_of_their_tensors(device, x_shape):
    """matmul's backward gives a column-major operand (weight.t()) its gradient in that
    layout, as PyTorch's mm backward does, so the gradient reaching the weight behind it is
    contiguous and accumulating it is a contiguous add.  Strides and values as PyTorch's."""
    rng = np.random.default_rng(0)
    xs, ws, bs = rng.standard_normal(x_shape), rng.standard_normal((5, 4)), \
        rng.standard_normal(5)
    got, want = [], []
    for lib, out in ((ember, got), (torch, want)):
        kw = {"device": device} if lib is ember else {}
        x = lib.tensor(xs, dtype=lib.float64, **kw).requires_grad_()
        w = lib.tensor(ws, dtype=lib.float64, **kw).requires_grad_()
        b = lib.tensor(bs, dtype=lib.float64, **kw).requires_grad_()
        strides = []
        for _ in range(2):                       # the second backward accumulates
            wt = w.t()
            wt.register_hook(lambda g: strides.append(tuple(g.stride())))
            (lib.matmul(x, wt) + b).pow(2).sum().backward()
        xt = lib.tensor(xs.reshape(-1, 4).T.copy(), dtype=lib.float64, **kw).requires_grad_()
        a = xt.t()                               # a column-major mat1
        a.register_hook(lambda g: strides.append(tuple(g.stride())))
        lib.mm(a, w.detach().t()).pow(2).sum().backward()
        out.append((strides, [x.grad, w.grad, b.grad, xt.grad]))
    assert got[0][0] == want[0][0] == [(1, 4)] * 2 + [(1, 6)]
    for g, t in zip(got[0][1], want[0][1]):
        np.testing.assert_allclose(g.cpu().numpy(), t.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", ["addmm", "addmv"])
@pytest.mark.parametrize("transform", ["vmap over the input", "forward AD on the input"])
def test_scaled_sums_with_a_wrapped_input(op, transform):
    """addmm/addmv add ``input`` into their own product in place only when both are plain
    tensors: a batched or dual input goes through the out-of-place add (an in-place write
    of a batched tensor into a plain one is vmap's error)."""
    x = ember.randn(3, 4)
    other = ember.randn(4, 5) if op == "addmm" else ember.randn(4)
    fn = getattr(ember, op)
    shape = (3, 5) if op == "addmm" else (3,)
    inputs, tangent = ember.randn(2, *shape), ember.randn(*shape)
    if transform.startswith("vmap"):
        got = ember.vmap(lambda b: fn(b, x, other))(inputs)
        want = ember.stack([fn(b, x, other) for b in inputs])
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    else:
        import ember.autograd.forward_ad as fwAD
        with fwAD.dual_level():
            y = fn(fwAD.make_dual(inputs[0], tangent), x, other)
            t = fwAD.unpack_dual(y).tangent
        np.testing.assert_allclose(t.numpy(), tangent.numpy())


def test_addmm_errors(device):
    a = ember.ones(2, 3, device=device)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        ember.addmm(ember.ones(2, 2, device=device), a, a)
    with pytest.raises(RuntimeError, match="mat1 must be a 2D"):
        ember.addmm(a, a[0], a)
    with pytest.raises(RuntimeError, match="batch2"):
        ember.baddbmm(a, a.reshape(1, 2, 3), a.reshape(1, 2, 3))
    with pytest.raises(RuntimeError, match="must match the size"):
        ember.addmm(ember.ones(3, device=device), a, a.t())
    with pytest.raises(TypeError, match="input"):
        ember.addmm([1.0], a, a.t())


EINSUM = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]),
          ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("i,i->", [(5,), (5,)]),
          ("i,j->ij", [(3,), (4,)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
          ("ij->ji", [(2, 3)]), ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
          ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("abc,cd->abd", [(2, 3, 0), (0, 2)]),
          ("i j , j -> i", [(2, 3), (3,)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
          ("iij->j", [(3, 3, 2)]), ("ij,ij->ij", [(1, 3), (2, 3)]), ("ba", [(2, 3)])]


@pytest.mark.parametrize("eq,shapes", EINSUM)
def test_einsum(device, oracle, eq, shapes):
    ops = [oracle.normal_pair(s, ember.float64, device, i) for i, s in enumerate(shapes)]
    oracle.assert_matches(ember.einsum(eq, *[e for e, _ in ops]),
                          torch.einsum(eq, *[t for _, t in ops]))
    oracle.assert_matches(ember.einsum(eq, [e for e, _ in ops]),
                          torch.einsum(eq, [t for _, t in ops]))


@pytest.mark.parametrize("shapes, sublists", [
    ([(3, 4), (4, 2)], [[0, 1], [1, 2]]),
    ([(3, 4), (4, 2)], [[0, 1], [1, 2], [0, 2]]),
    ([(2, 3, 4), (4, 5)], [[Ellipsis, 0, 1], [1, 2], [Ellipsis, 2, 0]]),
    ([(3, 3)], [[0, 0]]),
    ([(3, 4)], [[0, 1], []]),
    ([(3, 4), (4, 2)], [[51, 26], [26, 0], [0, 51]])])
def test_einsum_sublist_form(device, oracle, shapes, sublists):
    """einsum(op1, sublist1, op2, sublist2, ..., [output sublist])."""
    ops = [oracle.normal_pair(s, ember.float64, device, i) for i, s in enumerate(shapes)]
    args_e = [x for (e, _), sub in zip(ops, sublists) for x in (e, sub)]
    args_t = [x for (_, t), sub in zip(ops, sublists) for x in (t, sub)]
    out = sublists[len(ops):]                 # the output sublist, when given
    oracle.assert_matches(ember.einsum(*args_e, *out), torch.einsum(*args_t, *out))


def test_einsum_non_contiguous_and_int(device, oracle):
    a, ta = oracle.normal_pair((4, 3), ember.float32, device)
    oracle.assert_matches(ember.einsum("ji,jk->ik", a, a[:, ::2]),
                          torch.einsum("ji,jk->ik", ta, ta[:, ::2]))
    if device != "cpu":
        return                                # integer matmul is optional for a backend
    i = ember.tensor([[1, 2], [3, 4]], device=device)
    oracle.assert_matches(ember.einsum("ij,jk", i, i),
                          torch.einsum("ij,jk", *[torch.tensor([[1, 2], [3, 4]])] * 2))


def test_einsum_errors(device):
    a = ember.ones(2, 3, device=device)
    with pytest.raises(RuntimeError, match="more operands"):
        ember.einsum("ij", a, a)
    with pytest.raises(RuntimeError, match="does not broadcast"):
        ember.einsum("ij,ij->i", a, ember.ones(2, 4, device=device))
    with pytest.raises(RuntimeError, match="number of subscripts"):
        ember.einsum("i->i", a)
    with pytest.raises(RuntimeError, match="output subscript k"):
        ember.einsum("ij->k", a)
    with pytest.raises(RuntimeError, match="invalid subscript"):
        ember.einsum("i1->i", a)


def test_cross(device, oracle):
    a, ta = oracle.normal_pair((3, 4), ember.float32, device)
    b, tb = oracle.normal_pair((4, 3), ember.float32, device, 1)
    b, tb = b.t(), tb.t()
    oracle.assert_matches(ember.cross(a, b, dim=0), torch.cross(ta, tb, dim=0))
    oracle.assert_matches(a.cross(b, 0), ta.cross(tb, 0))
    c, tc = oracle.normal_pair((2, 3), ember.float64, device, 2)
    oracle.assert_matches(ember.cross(c, c[:1], dim=-1), torch.cross(tc, tc[:1], dim=-1))
    with pytest.warns(UserWarning, match="without specifying the dim"):
        r = ember.cross(a, b)
    oracle.assert_matches(r, torch.cross(ta, tb, dim=0))
    with pytest.raises(RuntimeError, match="must have length 3"):
        ember.cross(a, b, dim=1)
    with pytest.raises(RuntimeError, match="no dimension of size 3"), \
            pytest.warns(UserWarning):
        ember.cross(ember.ones(2, 4), ember.ones(2, 4))


@pytest.mark.parametrize("expr", [
    "F.linalg.vector_norm(a)", "F.linalg.vector_norm(a, 1, 1)",
    "F.linalg.vector_norm(a, float('inf'), 0)", "F.linalg.vector_norm(a, 0)",
    "F.linalg.vector_norm(a, 3.5, 1, True)", "F.linalg.vector_norm(a, -float('inf'))",
])
def test_vector_norm_matches_torch(expr, device, oracle):
    oracle.expr_matches(expr, device)


def test_vector_norm_value():
    assert math.isclose(ember.linalg.vector_norm(ember.tensor([3.0, 4.0])).item(), 5.0)


@pytest.mark.parametrize("p", ["fro", 1, 2, 3, 0.5, math.inf, -math.inf, 0, None])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), ((0, 1), True), (-1, True)])
def test_norm(device, oracle, p, dim, keepdim):
    a, ta = oracle.normal_pair((3, 4), ember.float32, device)
    oracle.assert_matches(ember.norm(a, p, dim, keepdim), torch.norm(ta, p, dim, keepdim))
    oracle.assert_matches(a.t().norm(p, dim), ta.t().norm(p, dim))


def test_norm_dtype_and_errors(device, oracle):
    a, ta = oracle.normal_pair((3, 4), ember.float32, device)
    oracle.assert_matches(ember.norm(a, dtype=ember.float64), torch.norm(ta, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="floating point"):
        ember.norm(ember.tensor([1, 2], device=device))
    with pytest.raises(RuntimeError, match="2-tuple"):
        ember.norm(ember.ones(2, 2, 2, device=device), "fro", (0, 1, 2))
    oracle.assert_matches(ember.norm(a, "nuc"), torch.norm(ta, "nuc"), rtol=1e-5)
    b, tb = oracle.normal_pair((2, 3, 4), ember.float64, device)
    oracle.assert_matches(b.norm("nuc", (1, 2), True), tb.norm("nuc", (1, 2), True))
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple. Got 0 1 2"):
        ember.norm(b, "nuc")
    with pytest.raises(RuntimeError, match="unsupported p"):
        ember.norm(a, "max")


def test_as_tensor_shares_memory():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ember.as_tensor(arr)
    arr[0, 0] = 42
    assert t[0, 0].item() == 42
    assert ember.as_tensor(t) is t
    assert ember.as_tensor(t, dtype=ember.float32, device="cpu") is t
    d = ember.as_tensor(arr, dtype=ember.float64)
    assert d.dtype == ember.float64 and d[0, 0].item() == 42
    r = ember.as_tensor(arr[:, ::-1])                   # negative strides: a copy
    assert r.tolist() == arr[:, ::-1].tolist()
    assert ember.as_tensor([1, 2]).dtype == ember.int64
    assert ember.as_tensor([1.5], dtype=ember.float16).dtype == ember.float16
    assert ember.as_tensor(t, dtype=ember.int32).tolist() == t.to(ember.int32).tolist()
    assert ember.as_tensor(3.0).shape == ()


@pytest.mark.parametrize("ord,dim,keepdim", [(2, None, False), (2, 1, False), (3, (0, 1), True),
                                             (0.5, 0, False), (2, -1, True)])
def test_vector_norm_gradient_matches_torch_at_zero_rows(ord, dim, keepdim):
    """PyTorch's derivative x |x|^(p-2) / norm^(p-1), and zero (not NaN) where a norm is
    zero; gradients of gradients through it too."""
    torch = pytest.importorskip("torch")
    a = np.array([[3.0, -4.0, 1.0], [0.0, 0.0, 0.0]])
    if ord < 1:
        a = a + 1.0                                   # |x|^(p-2) is infinite at 0 for p < 1
    x, tx = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    kw = {} if dim is None else {"dim": dim}
    y = ember.linalg.vector_norm(x, ord, keepdim=keepdim, **kw)
    ty = torch.linalg.vector_norm(tx, ord, keepdim=keepdim, **kw)
    assert y.grad_fn.name() == ty.grad_fn.name()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    g, = ember.autograd.grad(y.sum(), x, create_graph=True)
    tg, = torch.autograd.grad(ty.sum(), tx, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-12, atol=1e-12)
    if ord != 2 or dim is None:
        return
    (g * g).sum().backward()                           # second order, away from the zero row
    (tg * tg).sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[0], tx.grad.numpy()[0], rtol=1e-10, atol=1e-12)


# values and gradients over dtypes, broadcasting, non-contiguous and empty inputs, one
# row per case (conftest.py's check_table_case): products, then norms and distances
F, D, L, B = "float32", "float64", "int64", "bool"
CASES = [
    ("kron", lambda m, a, b: m.kron(a, b), [((2, 3), D, "n"), ((3, 2), D, "n")], True),
    ("kron_nd", lambda m, a, b: m.kron(a, b), [((2,), L, "int"), ((2, 3, 2), L, "int")], False),
    ("inner", lambda m, a, b: m.inner(a, b), [((2, 3), D, "n"), ((4, 3), D, "n")], True),
    ("inner_0d", lambda m, a, b: m.inner(a, b), [((), D, "n"), ((4, 3), D, "n")], True),
    ("vdot", lambda m, a, b: m.vdot(a, b), [((5,), D, "n"), ((5,), D, "n")], True),
    ("tensordot", lambda m, a, b: m.tensordot(a, b, 1), [((2, 3), D, "n"), ((3, 4), D, "n")],
     True),
    ("tensordot_lists", lambda m, a, b: m.tensordot(a, b, ([0, 2], [1, 0])),
     [((2, 3, 4), D, "n"), ((4, 2, 5), D, "n")], True),
    ("tensordot_0", lambda m, a, b: m.tensordot(a, b, 0), [((2,), D, "n"), ((3,), D, "n")],
     True),
    ("ger", lambda m, a, b: m.ger(a, b), [((3,), D, "n"), ((4,), D, "n")], True),
    ("addr", lambda m, a, b, c: m.addr(a, b, c, beta=0.5, alpha=2),
     [((3, 4), D, "n"), ((3,), D, "n"), ((4,), D, "n")], True),
    ("dist", lambda m, a, b: m.dist(a, b), [((3, 4), D, "n"), ((4,), D, "n")], True),
    ("dist_p1", lambda m, a, b: m.dist(a, b, 1), [((3, 4), D, "n"), ((3, 4), D, "n")], True),
    ("dist_p3", lambda m, a, b: m.dist(a, b, 3.5), [((3, 4), D, "n"), ((3, 4), D, "n")], True),
    ("dist_pinf", lambda m, a, b: m.dist(a, b, math.inf), [((3, 4), D, "n"), ((3, 4), D, "n")],
     True),
    ("dist_p0", lambda m, a, b: m.dist(a, b, 0), [((3, 4), D, "int"), ((3, 4), D, "int")],
     False),
    ("dist_same", lambda m, a: m.dist(a, a * 1), [((3,), D, "n")], True),
    ("cdist", lambda m, a, b: m.cdist(a, b), [((4, 3), D, "n"), ((5, 3), D, "n")], True),
    ("cdist_batch_p1", lambda m, a, b: m.cdist(a, b, 1.0),
     [((2, 4, 3), D, "n"), ((2, 5, 3), D, "n")], True),
    ("cdist_p3", lambda m, a, b: m.cdist(a, b, 3.0), [((4, 3), D, "n"), ((5, 3), D, "n")], True),
    ("cdist_pinf", lambda m, a, b: m.cdist(a, b, math.inf), [((4, 3), D, "n"), ((5, 3), D, "n")],
     True),
    ("cdist_p0", lambda m, a, b: m.cdist(a, b, 0.0), [((4, 3), D, "int"), ((5, 3), D, "int")],
     False),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("transpose", [False, True], ids=["contig", "strided"])
def test_forward_and_grad(case, transpose, device, table_case):
    table_case(case, transpose, device)


@pytest.mark.parametrize("ord", [0.5, -1.0, 1.5, 3.0])
def test_vector_norm_gradient_is_zero_at_zero_entries(ord):
    """For p < 2 the derivative's |x|^(p-2) is infinite at a zero entry: PyTorch's
    subgradient there is 0 (it was NaN)."""
    grads = []
    for L in (ember, torch):
        x = L.tensor([0., 1., -2.], dtype=L.float64, requires_grad=True)
        L.linalg.vector_norm(x, ord=ord).backward()
        grads.append(x.grad.tolist())
    assert grads[0] == pytest.approx(grads[1])
    x = ember.tensor([0., 1.], requires_grad=True)
    assert ember.linalg.vector_norm(x, ord=0).requires_grad      # a count, recorded


@pytest.mark.parametrize("eq,names", [
    ("i,i->i", "ab"), ("i,j->ij", "ab"), ("ij,j->ij", "Ma"), ("i,i,i->i", "aba"),
    ("ij,kj->ikj", "MM"), ("...,...->...", "ab"), ("i,i->i", "an"),
])
def test_einsum_of_bool_operands(eq, names, oracle):
    # nothing summed: a product, as torch's (a contraction needs bmm, which bool lacks)
    def run(lib):
        ops = {"a": lib.tensor([True, False]), "b": lib.tensor([True, True]),
               "M": lib.tensor([[True, False], [True, True]]), "n": lib.tensor([1, 2])}
        return lib.einsum(eq, *[ops[k] for k in names])
    assert oracle.outcome(ember, run) == oracle.outcome(torch, run)


@pytest.mark.parametrize("fn", [
    lambda L, x: L.linalg.vector_norm(x, 0), lambda L, x: x.norm(0),
    lambda L, x: L.linalg.vector_norm(x * 2, 0, dim=1, keepdim=True),
])
def test_vector_norm_ord_zero_records_but_passes_no_gradient(fn):
    # torch: the count has a LinalgVectorNormBackward0 node, and x.grad stays None
    for lib in (ember, torch):
        x = lib.tensor([[1.0, 0.0, -2.0], [0.0, 0.0, 3.0]], requires_grad=True)
        out = fn(lib, x)
        assert out.grad_fn.name() == "LinalgVectorNormBackward0"
        out.sum().backward()
        assert x.grad is None, lib


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_vector_norm_without_autograd_matches_the_recorded_one(dtype):
    # nothing differentiates it (clip_grad_norm_'s norms): the ops alone, PyTorch's values
    x = torch.randn(7, 9).to(getattr(torch, dtype))
    e = ember.tensor(x.float().numpy()).to(getattr(ember, dtype)).requires_grad_()
    for kw in ({}, {"dim": 1}, {"dim": (0, 1), "keepdim": True}):
        with ember.no_grad():
            plain = ember.linalg.vector_norm(e, **kw)
        recorded = ember.linalg.vector_norm(e, **kw)
        assert plain.grad_fn is None and recorded.grad_fn is not None
        want = torch.linalg.vector_norm(x, **kw)
        assert plain.dtype == recorded.dtype == getattr(ember, dtype)
        assert tuple(plain.shape) == tuple(want.shape)
        tol = 2e-3 if dtype == "float16" else 1e-6
        np.testing.assert_allclose(plain.float().numpy(), want.float().numpy(), rtol=tol)
        np.testing.assert_allclose(plain.float().numpy(), recorded.detach().float().numpy(),
                                   rtol=tol)
