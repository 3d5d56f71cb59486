"""The composites of core/math_composites, shape_composites, statistics and special:
forward values against PyTorch over dtypes, broadcasting, non-contiguous and empty inputs,
and gradients of the differentiable ones, all from one table."""
import math

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)


def _data(shape, dtype, kind):
    if kind == "pos":
        a = RNG.uniform(0.2, 3.0, shape)
    elif kind == "prob":
        a = RNG.uniform(0, 1, shape)
    elif kind == "unit":
        a = RNG.uniform(-0.95, 0.95, shape)
    elif kind == "int":
        a = RNG.integers(-4, 5, shape)
    elif kind == "idx":
        a = RNG.integers(0, 3, shape)
    else:
        a = RNG.standard_normal(shape)
    return a.astype(dtype)


def _pair(arr, device, transpose, requires_grad=False):
    """The same values as an ember and a torch tensor (ember's non-contiguous when asked)."""
    if transpose:
        e = ember.tensor(np.ascontiguousarray(arr.T), device=device).t()
    else:
        e = ember.tensor(arr, device=device)
    t = torch.tensor(arr)
    if requires_grad:
        e.requires_grad_()
        t.requires_grad_()
    return e, t


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _compare(e_out, t_out, rtol):
    for e, t in zip(_flat(e_out), _flat(t_out), strict=True):
        rtol = max(rtol, 2e-6) if isinstance(t, torch.Tensor) and t.dtype == torch.float32 \
            else rtol
        if not isinstance(t, torch.Tensor):
            assert e == t
            continue
        got = torch.from_numpy(np.array(e.detach().numpy(force=True)))
        assert tuple(got.shape) == tuple(t.shape), (got.shape, t.shape)
        assert str(got.dtype) == str(t.dtype), (got.dtype, t.dtype)
        torch.testing.assert_close(got, t.detach(), rtol=rtol, atol=rtol, equal_nan=True)


# (id, fn(lib, *inputs), [(shape, numpy dtype, kind)], differentiable)
F, D, L, B = "float32", "float64", "int64", "bool"
CASES = [
    ("hypot", lambda m, a, b: m.hypot(a, b), [((3, 4), D, "n"), ((4,), D, "n")], True),
    ("hypot_f32", lambda m, a, b: m.hypot(a, b), [((3, 4), F, "n"), ((3, 4), F, "n")], False),
    ("logaddexp", lambda m, a, b: m.logaddexp(a, b), [((3, 4), D, "n"), ((3, 1), D, "n")], True),
    ("logaddexp2", lambda m, a, b: m.logaddexp2(a, b), [((3, 4), D, "n"), ((4,), D, "n")],
     True),
    ("xlogy", lambda m, a, b: m.xlogy(a, b), [((3, 4), D, "int"), ((3, 4), D, "pos")], True),
    ("xlogy_scalar", lambda m, a: m.xlogy(2, a), [((3, 4), D, "pos")], True),
    ("xlogy_int", lambda m, a, b: m.xlogy(a, b), [((6,), L, "int"), ((6,), L, "idx")], False),
    ("copysign", lambda m, a, b: m.copysign(a, b), [((3, 4), D, "n"), ((4,), D, "n")], True),
    ("copysign_int", lambda m, a, b: m.copysign(a, b), [((3,), L, "int"), ((3,), L, "int")],
     False),
    ("signbit", lambda m, a: m.signbit(a), [((3, 4), D, "n")], False),
    ("signbit_int", lambda m, a: m.signbit(a), [((7,), L, "int")], False),
    ("heaviside", lambda m, a, b: m.heaviside(a, b), [((3, 4), D, "int"), ((4,), D, "n")],
     False),
    ("sinc", lambda m, a: m.sinc(a), [((3, 4), D, "int")], True),
    ("sinc_n", lambda m, a: m.sinc(a), [((3, 4), D, "n")], True),
    ("deg2rad", lambda m, a: m.deg2rad(a), [((3, 4), D, "n")], True),
    ("rad2deg", lambda m, a: m.rad2deg(a), [((3, 4), F, "n")], False),
    ("float_power", lambda m, a: m.float_power(a, 2.5), [((3, 4), F, "pos")], False),
    ("float_power_t", lambda m, a, b: m.float_power(a, b), [((3, 4), D, "pos"), ((4,), D, "n")],
     True),
    ("float_power_int", lambda m, a: m.float_power(a, 2), [((5,), L, "int")], False),
    ("absolute", lambda m, a: m.absolute(a), [((3, 4), L, "int")], False),
    ("arctan2", lambda m, a, b: m.arctan2(a, b), [((3, 4), D, "n"), ((4,), D, "n")], True),
    ("sgn", lambda m, a: m.sgn(a), [((3, 4), D, "int")], False),
    ("positive", lambda m, a: m.positive(a), [((3,), D, "n")], True),
    ("clamp_min", lambda m, a: m.clamp_min(a, 0.1), [((3, 4), D, "n")], True),
    ("clamp_max_t", lambda m, a, b: m.clamp_max(a, b), [((3, 4), D, "n"), ((4,), D, "n")], True),
    ("isposinf", lambda m, a: m.isposinf(a / 0), [((3, 4), D, "int")], False),
    ("isneginf", lambda m, a: m.isneginf(a / 0), [((3, 4), D, "int")], False),
    ("isreal", lambda m, a: m.isreal(a), [((3,), L, "int")], False),
    ("diff", lambda m, a: m.diff(a), [((3, 5), D, "n")], True),
    ("diff_n2_dim0", lambda m, a: m.diff(a, n=2, dim=0), [((4, 3), D, "n")], True),
    ("diff_pre_app", lambda m, a, b, c: m.diff(a, 1, -1, b, c),
     [((3, 4), D, "n"), ((3, 2), D, "n"), ((3, 1), D, "n")], True),
    ("diff_bool", lambda m, a: m.diff(a > 0), [((3, 5), D, "n")], False),
    ("diff_int", lambda m, a: m.diff(a, 3), [((6,), L, "int")], False),
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
    ("logcumsumexp", lambda m, a: m.logcumsumexp(a, 1), [((3, 5), D, "n")], True),
    ("logcumsumexp_wide", lambda m, a: m.logcumsumexp(a * 400, 0), [((6, 2), F, "n")], False),
    ("logcumsumexp_wide64", lambda m, a: m.logcumsumexp(a * 1000, 0), [((6, 2), D, "n")], True),
    ("erfinv", lambda m, a: m.erfinv(a), [((3, 4), D, "unit")], True),
    ("erfinv_f32", lambda m, a: m.erfinv(a), [((3, 4), F, "unit")], False),
    ("lgamma", lambda m, a: m.lgamma(a), [((3, 4), D, "n")], True),
    ("lgamma_int", lambda m, a: m.lgamma(a), [((3, 4), L, "idx")], False),
    ("digamma", lambda m, a: m.digamma(a), [((3, 4), D, "pos")], True),
    ("digamma_f32", lambda m, a: m.digamma(a), [((3, 4), F, "n")], False),
    ("polygamma1", lambda m, a: m.polygamma(1, a), [((3, 4), D, "pos")], True),
    ("polygamma3", lambda m, a: m.polygamma(3, a), [((3, 4), D, "pos")], True),
    ("polygamma2_neg", lambda m, a: m.polygamma(2, a - 3.5), [((3, 4), D, "unit")], False),
    ("mvlgamma", lambda m, a: m.mvlgamma(a + 2, 3), [((3, 4), D, "pos")], True),
    # shape composites
    ("broadcast_to", lambda m, a: m.broadcast_to(a, (2, 3, 4)), [((3, 1), D, "n")], True),
    ("broadcast_tensors", lambda m, a, b: m.broadcast_tensors(a, b),
     [((3, 1), D, "n"), ((4,), D, "n")], True),
    ("meshgrid_ij", lambda m, a, b: m.meshgrid(a, b, indexing="ij"),
     [((3,), D, "n"), ((4,), D, "n")], True),
    ("meshgrid_xy", lambda m, a, b, c: m.meshgrid(a, b, c, indexing="xy"),
     [((3,), D, "n"), ((4,), D, "n"), ((2,), D, "n")], True),
    ("atleast_1d", lambda m, a: m.atleast_1d(a), [((), D, "n")], True),
    ("atleast_2d", lambda m, a, b: m.atleast_2d(a, b), [((), D, "n"), ((3,), D, "n")], True),
    ("atleast_3d", lambda m, a, b, c: m.atleast_3d([a, b, c]),
     [((), D, "n"), ((3,), D, "n"), ((2, 3), D, "n")], True),
    ("tensor_split_n", lambda m, a: m.tensor_split(a, 3, dim=1), [((2, 7), D, "n")], True),
    ("tensor_split_idx", lambda m, a: m.tensor_split(a, [1, 5, 9]), [((7, 2), D, "n")], True),
    ("hsplit", lambda m, a: m.hsplit(a, 2), [((3, 4), D, "n")], True),
    ("hsplit_1d", lambda m, a: m.hsplit(a, [2]), [((5,), D, "n")], True),
    ("vsplit", lambda m, a: m.vsplit(a, [1]), [((3, 4), D, "n")], True),
    ("dsplit", lambda m, a: m.dsplit(a, 2), [((2, 3, 4), D, "n")], True),
    ("dstack", lambda m, a, b: m.dstack([a, b]), [((3,), D, "n"), ((3,), D, "n")], True),
    ("column_stack", lambda m, a, b: m.column_stack([a, b]),
     [((3,), D, "n"), ((3, 2), D, "n")], True),
    ("row_stack", lambda m, a, b: m.row_stack([a, b]), [((3,), D, "n"), ((2, 3), D, "n")], True),
    ("take_along_dim", lambda m, a, i: m.take_along_dim(a, i.long(), 1),
     [((3, 4), D, "n"), ((3, 2), L, "idx")], True),
    ("take_along_dim_bcast", lambda m, a, i: m.take_along_dim(a, i.long(), 0),
     [((3, 4), D, "n"), ((2, 1), L, "idx")], True),
    ("take_along_dim_flat", lambda m, a, i: m.take_along_dim(a, i.long()),
     [((3, 4), D, "n"), ((5,), L, "idx")], True),
    ("ravel", lambda m, a: m.ravel(a), [((3, 4), D, "n")], True),
    ("unfold", lambda m, a: a.unfold(1, 3, 1), [((2, 6), D, "n")], True),
    ("unfold_step", lambda m, a: a.unfold(0, 2, 2), [((5, 3), D, "n")], True),
    ("argwhere", lambda m, a: m.argwhere(a), [((3, 4), L, "idx")], False),
    ("msort", lambda m, a: m.msort(a), [((4, 3), D, "n")], True),
    ("rot90", lambda m, a: m.rot90(a), [((2, 3, 4), D, "n")], True),
    ("rot90_k3", lambda m, a: m.rot90(a, 3, [2, 0]), [((2, 3, 4), D, "n")], True),
    ("rot90_k2", lambda m, a: m.rot90(a, -2), [((2, 3), L, "int")], False),
    ("diagflat", lambda m, a: m.diagflat(a, -1), [((2, 2), D, "n")], True),
    ("block_diag", lambda m, a, b, c: m.block_diag(a, b, c),
     [((2, 3), D, "n"), ((), D, "n"), ((2,), D, "n")], True),
    ("block_diag_mixed", lambda m, a, b: m.block_diag(a, b), [((2, 2), L, "int"), ((1, 2), F, "n")],
     False),
    ("cartesian_prod", lambda m, a, b: m.cartesian_prod(a, b), [((3,), D, "n"), ((2,), D, "n")],
     True),
    ("combinations", lambda m, a: m.combinations(a), [((4,), D, "n")], True),
    ("combinations_r3", lambda m, a: m.combinations(a, 3, with_replacement=True),
     [((3,), L, "int")], False),
    # (torch's own vander backward trips over an in-place op: values only)
    ("vander", lambda m, a: m.vander(a), [((4,), D, "n")], False),
    ("vander_inc", lambda m, a: m.vander(a, 3, True), [((4,), L, "int")], False),
    ("isin", lambda m, a, b: m.isin(a, b), [((3, 4), L, "int"), ((5,), L, "int")], False),
    ("isin_invert", lambda m, a, b: m.isin(a, b, invert=True), [((3, 4), D, "int"),
                                                                 ((2, 2), L, "int")], False),
    # statistics
    ("aminmax", lambda m, a: tuple(m.aminmax(a)), [((3, 4), D, "n")], False),
    ("aminmax_dim", lambda m, a: tuple(m.aminmax(a, dim=1, keepdim=True)), [((3, 4), L, "int")],
     False),
    ("quantile", lambda m, a: m.quantile(a, 0.3), [((3, 5), D, "n")], True),
    ("quantile_dim", lambda m, a, q: m.quantile(a, q, dim=1, keepdim=True),
     [((3, 5), D, "n"), ((4,), D, "prob")], True),
    ("nanquantile", lambda m, a: m.nanquantile(m.where(a > 1, math.nan, a), 0.7, dim=0),
     [((5, 3), D, "n")], False),
    ("nanmedian", lambda m, a: m.nanmedian(m.where(a > 0.5, math.nan, a)), [((3, 5), D, "n")],
     False),
    ("nanmedian_dim", lambda m, a: tuple(m.nanmedian(m.where(a > 0.5, math.nan, a), 1)),
     [((3, 5), D, "n")], False),
    ("nanmedian_int", lambda m, a: tuple(m.nanmedian(a, 0, keepdim=True)), [((4, 3), L, "int")],
     False),
    ("cov", lambda m, a: m.cov(a), [((3, 6), D, "n")], True),
    ("cov_weights", lambda m, a, f, w: m.cov(a, correction=0, fweights=f.long() + 1,
                                             aweights=w),
     [((2, 5), D, "n"), ((5,), L, "idx"), ((5,), D, "pos")], True),
    ("cov_1d_int", lambda m, a: m.cov(a), [((6,), L, "int")], False),
    ("corrcoef", lambda m, a: m.corrcoef(a), [((3, 6), D, "n")], True),
    ("trapezoid", lambda m, a: m.trapezoid(a), [((3, 5), D, "n")], True),
    ("trapezoid_x", lambda m, a, x: m.trapezoid(a, x, dim=0), [((4, 3), D, "n"), ((4,), D, "n")],
     True),
    ("trapezoid_dx", lambda m, a: m.trapezoid(a, dx=0.5), [((3, 5), D, "n")], True),
    ("trapz_int", lambda m, a: m.trapz(a), [((5,), L, "int")], False),
    ("cumulative_trapezoid", lambda m, a, x: m.cumulative_trapezoid(a, x),
     [((3, 5), D, "n"), ((3, 5), D, "n")], True),
]
QUANTILE_MODES = ["linear", "lower", "higher", "midpoint", "nearest"]
CASES += [(f"quantile_{mode}", lambda m, a, mode=mode: m.quantile(a, a.new_tensor(
    [0.0, 0.25, 0.5, 0.9, 1.0]), dim=0, interpolation=mode),
    [((6, 3), D, "n")], mode != "nearest") for mode in QUANTILE_MODES]


def _run(fn, lib, tensors):
    return fn(lib, *tensors)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("transpose", [False, True], ids=["contig", "strided"])
def test_forward_and_grad(case, transpose, device):
    _, fn, specs, differentiable = case
    arrays = [_data(shape, dtype, kind) for shape, dtype, kind in specs]
    grad = differentiable and not transpose
    pairs = [_pair(a, device, transpose and a.ndim == 2,
                   grad and a.dtype == np.float64) for a in arrays]
    try:
        e_out = _run(fn, ember, [p[0] for p in pairs])
    except NotImplementedError as e:        # the special functions are optional kernels
        if device == "cpu":
            raise
        pytest.skip(f"{device}: {e}")
    t_out = _run(fn, torch, [p[1] for p in pairs])
    rtol = 1e-4 if any(a.dtype == np.float32 for a in arrays) else 1e-9
    _compare(e_out, t_out, rtol)
    if not grad:
        return
    e_outs, t_outs = _flat(e_out), _flat(t_out)
    weights = [RNG.standard_normal(tuple(t.shape)) for t in t_outs]
    e_loss = sum((o * ember.tensor(w, device=device)).sum() for o, w in zip(e_outs, weights))
    t_loss = sum((o * torch.tensor(w)).sum() for o, w in zip(t_outs, weights))
    e_loss.backward()
    t_loss.backward()
    for (e, t) in pairs:
        if t.requires_grad:
            # torch's explicit zero gradients (copysign's `other`) are None here
            e_grad = e.grad if e.grad is not None else ember.zeros(tuple(e.shape),
                                                                   dtype=ember.float64)
            _compare(e_grad, t.grad, 1e-7)
