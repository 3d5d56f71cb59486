"""vmap's batching rules against torch.func.vmap where they once differed: type promotion
with a 0-d-per-sample operand, batch norm with running statistics batched like the samples
(model ensembles), index_fill / masked_fill with a batched value, and the LU family."""

import warnings

import numpy as np
import pytest
import torch

import ember
from ember.func import vmap

RNG = np.random.default_rng(7)
B = 4
LIBS = (ember, torch)


def _arr(shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


def _dt(lib, name):
    return getattr(lib, name)


def _close(e, t, rtol=1e-6, atol=1e-7):
    if isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _close(a, b, rtol, atol)
        return
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (e.dtype, t.dtype)
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    np.testing.assert_allclose(e.detach().numpy().astype(np.float64),
                               t.detach().numpy().astype(np.float64), rtol=rtol, atol=atol)


def _both(fn, arrays, in_dims, **kw):
    """fn(lib) vmapped by ember and by torch on copies of ``arrays``: (ember's result, its
    inputs), (torch's result, its inputs)."""
    out = []
    for lib in LIBS:
        ts = [lib.tensor(a.copy()) for a in arrays]
        out.append((lib.func.vmap(fn(lib), in_dims=in_dims, **kw)(*ts), ts))
    return out


# --- 1. type promotion with a 0-d-per-sample operand ----------------------------------------

BINARY = {
    "add": lambda lib: lambda a, b: a + b,
    "mul": lambda lib: lambda a, b: b * a,
    "maximum": lambda lib: lambda a, b: lib.maximum(a, b),
    "sub_alpha": lambda lib: lambda a, b: lib.sub(b, a, alpha=2),
    "div": lambda lib: lambda a, b: a / (b.abs() + 1),
    "gt": lambda lib: lambda a, b: a > b,
}
PAIRS = [("float32", "float64"), ("float16", "float32"), ("int32", "int64"),
         ("int32", "float64"), ("float64", "float32")]


@pytest.mark.parametrize("in_dims", [(0, 0), (1, 0), (None, 0)])
@pytest.mark.parametrize("dts", PAIRS, ids="-".join)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_a_0d_sample_promotes_as_a_0d_tensor(name, dts, in_dims):
    """a: [3] per sample, b: 0-d per sample (batched); torch promotes as each sample does."""
    if name == "div" and "int" in dts[0] and "int" in dts[1]:
        pytest.skip("abs/div of two integer tensors: covered by the other pairs")
    shape = {(0, 0): (B, 3), (1, 0): (3, B), (None, 0): (3,)}[in_dims]
    a = (_arr(shape) * 3).astype(dts[0])
    b = (_arr((B,)) * 3).astype(dts[1])
    (e, _), (t, _) = _both(BINARY[name], [a, b], in_dims)
    tol = 2e-3 if "float16" in dts else 1e-6
    _close(e, t, rtol=tol, atol=tol)


@pytest.mark.parametrize("in_dims", [(0, 0), (1, 0)])
@pytest.mark.parametrize("dts", [("float32", "float64"), ("int32", "int64"),
                                 ("float16", "float32")], ids="-".join)
@pytest.mark.parametrize("op", ["add_", "mul_"])
def test_in_place_with_a_0d_sample_computes_in_self_dtype(op, dts, in_dims):
    a = (_arr((B, 3) if in_dims[0] == 0 else (3, B)) * 3).astype(dts[0])
    b = (_arr((B,)) * 3).astype(dts[1])
    (e, eins), (t, tins) = _both(lambda lib: lambda x, y: getattr(x, op)(y), [a, b], in_dims)
    tol = 2e-3 if "float16" in dts else 1e-6
    _close(e, t, rtol=tol, atol=tol)
    _close(eins[0], tins[0], rtol=tol, atol=tol)


def test_a_0d_sample_beside_a_shared_0d_tensor():
    """Both 0-d in every sample: the shared float64 one does promote the batched float32."""
    for fn in (lambda a, c: a + c, lambda a, c: c * a):
        e = vmap(fn, in_dims=(0, None))(ember.ones(B), ember.tensor(2.0, dtype=ember.float64))
        t = torch.func.vmap(fn, in_dims=(0, None))(torch.ones(B),
                                                   torch.tensor(2.0, dtype=torch.float64))
        _close(e, t)


def test_no_promotion_work_when_dtypes_agree():
    (e, _), (t, _) = _both(lambda lib: lambda a, b: a * b + 1, [_arr((B, 3)), _arr((B,))],
                           (0, 0))
    _close(e, t)


@pytest.mark.parametrize("in_dims", [(0, 0), (1, 0), (0, None)])
def test_where_with_a_0d_sample_follows_the_samples(in_dims):
    """ember's where promotes as every sample would outside vmap (float32 here); torch.func's
    where rule promotes the physical tensors (float64) - ember keeps the per-sample dtype."""
    x = _arr((B, 3) if in_dims[0] == 0 else (3, B), "float32")
    y = _arr((B,)) if in_dims[1] == 0 else _arr(())
    e = vmap(lambda a, c: ember.where(a > 0, a, c), in_dims=in_dims)(ember.tensor(x),
                                                                     ember.tensor(y))
    xs = x if in_dims[0] == 0 else x.T
    ref = torch.stack([torch.where(torch.tensor(xs[i]) > 0, torch.tensor(xs[i]),
                                   torch.tensor(y[i] if in_dims[1] == 0 else y))
                       for i in range(B)])
    assert ref.dtype == torch.float32
    _close(e, ref)


# --- 2. batch norm with batched running statistics ------------------------------------------

def _bn(training, affine=True, momentum=0.3):
    def fn(lib):
        def f(x, m, v, w):
            return lib.nn.functional.batch_norm(x, m, v, w if affine else None, None,
                                                training=training, momentum=momentum)
        return f
    return fn


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x_dim", [0, None])
@pytest.mark.parametrize("w_dim", [0, None])
@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_with_batched_running_stats(training, w_dim, x_dim, dtype):
    x = _arr((B, 5, 3, 2) if x_dim == 0 else (5, 3, 2), dtype)
    m, v = _arr((B, 3), dtype), np.abs(_arr((B, 3), dtype)) + 0.5
    w = _arr((B, 3) if w_dim == 0 else (3,), dtype)
    (e, eins), (t, tins) = _both(_bn(training), [x, m, v, w], (x_dim, 0, 0, w_dim))
    tol = 1e-4 if dtype == "float32" else 1e-10
    _close(e, t, rtol=tol, atol=tol)
    _close(eins[1:3], tins[1:3], rtol=tol, atol=tol)      # updated per sample in training
    if not training:
        np.testing.assert_array_equal(eins[1].numpy(), m)


@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_with_running_stats_batched_along_dim_1(training):
    """Statistics stored [C, B] (in_dims=1): the updates reach every sample's column (torch's
    rule drops them for a strided batch, so the reference is the loop over the samples)."""
    x = _arr((B, 6, 3))
    m, v = _arr((3, B)), np.abs(_arr((3, B))) + 0.5
    em, ev = ember.tensor(m), ember.tensor(v)
    e = vmap(lambda a, rm, rv: ember.nn.functional.batch_norm(a, rm, rv, training=training),
             in_dims=(0, 1, 1))(ember.tensor(x), em, ev)
    tm, tv = torch.tensor(m), torch.tensor(v)
    ref = torch.stack([torch.nn.functional.batch_norm(torch.tensor(x[i]), tm[:, i], tv[:, i],
                                                      training=training) for i in range(B)])
    _close(e, ref, rtol=1e-10, atol=1e-10)
    _close((em, ev), (tm, tv), rtol=1e-10, atol=1e-10)


def test_batch_norm_training_with_shared_running_stats_raises():
    with pytest.raises(RuntimeError, match="batch_norm with running statistics in training"):
        vmap(lambda a: ember.nn.functional.batch_norm(a, ember.zeros(3), ember.ones(3),
                                                      training=True))(ember.ones(B, 5, 3))
    with pytest.raises(RuntimeError, match="batch_norm with running statistics in training"):
        vmap(lambda a, m: ember.nn.functional.batch_norm(a, m, ember.ones(3), training=True))(
            ember.ones(B, 5, 3), ember.zeros(B, 3))


def test_gradients_through_batch_norm_with_batched_running_stats():
    x, m, v, w = _arr((5, 3)), _arr((B, 3)), np.abs(_arr((B, 3))) + 0.5, _arr((B, 3))
    res = []
    for lib in LIBS:
        def f(a, rm, rv, wt):
            return lib.nn.functional.batch_norm(a, rm, rv, wt, None,
                                                training=False).pow(2).sum()
        T = [lib.tensor(z) for z in (x, m, v, w)]
        inner = lib.func.vmap(lib.func.grad(f, argnums=(0, 3)), in_dims=(None, 0, 0, 0))(*T)
        outer = lib.func.grad(lambda a, wt: lib.func.vmap(f, in_dims=(None, 0, 0, 0))(
            a, T[1], T[2], wt).sum(), argnums=(0, 1))(T[0], T[3])
        res.append((inner, outer))
    _close(res[0], res[1], rtol=1e-10, atol=1e-10)


def test_model_ensembling_with_batch_norm_in_eval():
    """stack_module_state + vmap(functional_call) of a model with BatchNorm1d in eval mode,
    the input shared (BatchNorm first) or per model."""
    res = []
    for lib in LIBS:
        nn = lib.nn
        models = [nn.Sequential(nn.BatchNorm1d(4), nn.Linear(4, 3), nn.BatchNorm1d(3))
                  for _ in range(3)]
        g = np.random.default_rng(3)
        for mdl in models:
            for k, p in {**dict(mdl.named_parameters()), **dict(mdl.named_buffers())}.items():
                if p.dtype == lib.float32:
                    vals = g.standard_normal(tuple(p.shape)).astype(np.float32)
                    p.data.copy_(lib.tensor(np.abs(vals) + 0.5 if "var" in k else vals))
            mdl.eval()
        params, buffers = lib.func.stack_module_state(models)
        x = lib.tensor(g.standard_normal((6, 4)).astype(np.float32))

        def call(p, b, a, m=models[0]):
            return lib.func.functional_call(m, (p, b), (a,))
        shared = lib.func.vmap(call, in_dims=(0, 0, None))(params, buffers, x)
        per = lib.func.vmap(call)(params, buffers, x.expand(3, 6, 4) * 2)
        res.append((shared, per))
    _close(res[0], res[1], rtol=1e-5, atol=1e-5)


# --- 3. a batched value for index_fill / masked_fill ----------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x_dim", [0, 1])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("inplace", [False, True])
def test_index_fill_with_a_batched_value(inplace, dim, x_dim, dtype):
    x = _arr((B, 3, 4) if x_dim == 0 else (3, B, 4), dtype)
    val = _arr((B,))                               # float64 values into a float32 x too

    def fn(lib):
        idx = lib.tensor([0, -1])
        return lambda a, c: (a.index_fill_ if inplace else a.index_fill)(dim, idx, c)
    (e, eins), (t, tins) = _both(fn, [x, val], (x_dim, 0))
    _close(e, t)
    _close(eins[0], tins[0])


@pytest.mark.parametrize("value", ["shared_0d", "number"])
def test_index_fill_with_a_shared_value(value):
    x = _arr((B, 3))

    def fn(lib):
        c = lib.tensor(2.5) if value == "shared_0d" else 2.5
        return lambda a: a.index_fill(0, lib.tensor([1]), c)
    (e, _), (t, _) = _both(fn, [x], (0,))
    _close(e, t)


def test_index_fill_with_a_bad_index_still_raises():
    with pytest.raises((IndexError, RuntimeError)):
        vmap(lambda a, c: a.index_fill(0, ember.tensor([7]), c))(ember.ones(B, 3),
                                                                 ember.ones(B))


@pytest.mark.parametrize("x_dim", [0, 1])
@pytest.mark.parametrize("inplace", [False, True])
def test_masked_fill_with_a_batched_value(inplace, x_dim):
    x = _arr((B, 3) if x_dim == 0 else (3, B), "float32")

    def fn(lib):
        return lambda a, c: (a.masked_fill_ if inplace else a.masked_fill)(a > 0, c)
    (e, eins), (t, tins) = _both(fn, [x, _arr((B,))], (x_dim, 0))
    _close(e, t)
    _close(eins[0], tins[0])


# --- 4. the LU family -----------------------------------------------------------------------

def _one_call(fn, **kw):
    """ember's vmap of ``fn``, refusing the loop fallback (its warning)."""
    def run(*args):
        with warnings.catch_warnings():
            warnings.filterwarnings("error", "There is a performance drop")
            return vmap(fn, **kw)(*args)
    return run


@pytest.mark.parametrize("in_dims", [0, 1])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["lu_factor", "lu_factor_ex", "lu"])
def test_lu_factorizations(name, dtype, in_dims):
    A = _arr((B, 3, 3) if in_dims == 0 else (3, B, 3), dtype)
    got = _one_call(getattr(ember.linalg, name), in_dims=in_dims)(ember.tensor(A))
    want = torch.func.vmap(getattr(torch.linalg, name), in_dims=in_dims)(torch.tensor(A))
    tol = 1e-4 if dtype == "float32" else 1e-10
    _close(tuple(got), tuple(want), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lu_solve_unpack_and_the_legacy_forms(dtype):
    A, Bm = _arr((B, 3, 3), dtype), _arr((B, 3, 2), dtype)
    LUe, Pe = ember.linalg.lu_factor(ember.tensor(A))
    LUt, Pt = torch.linalg.lu_factor(torch.tensor(A))
    tol = 1e-4 if dtype == "float32" else 1e-10
    T = torch.func.vmap
    _close(_one_call(ember.linalg.lu_solve)(LUe, Pe, ember.tensor(Bm)),
           T(torch.linalg.lu_solve)(LUt, Pt, torch.tensor(Bm)), rtol=tol, atol=tol)
    _close(_one_call(ember.linalg.lu_solve, in_dims=(None, None, 0))(LUe[0], Pe[0],
                                                                      ember.tensor(Bm)),
           T(torch.linalg.lu_solve, in_dims=(None, None, 0))(LUt[0], Pt[0], torch.tensor(Bm)),
           rtol=tol, atol=tol)
    _close(tuple(_one_call(ember.lu_unpack)(LUe, Pe)), tuple(T(torch.lu_unpack)(LUt, Pt)),
           rtol=tol, atol=tol)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.filterwarnings("ignore", "torch.lu is deprecated")
        _close(_one_call(ember.lu_solve)(ember.tensor(Bm), LUe, Pe),
               torch.linalg.lu_solve(LUt, Pt, torch.tensor(Bm)), rtol=tol, atol=tol)
        _close(tuple(_one_call(lambda a: ember.lu(a, get_infos=True))(ember.tensor(A))),
               tuple(torch.linalg.lu_factor_ex(torch.tensor(A))), rtol=tol, atol=tol)


def test_lu_solve_with_more_batch_dims_in_b_than_in_lu():
    # torch's own lu_solve mis-broadcasts size-1 batch dims of LU against B: the reference
    # is the loop
    A2, Bb = _arr((B, 3, 3)), _arr((B, 5, 3, 2))
    LUe, Pe = ember.linalg.lu_factor(ember.tensor(A2))
    LUt, Pt = torch.linalg.lu_factor(torch.tensor(A2))
    _close(_one_call(ember.linalg.lu_solve)(LUe, Pe, ember.tensor(Bb)),
           torch.stack([torch.linalg.lu_solve(LUt[i], Pt[i], torch.tensor(Bb[i]))
                        for i in range(B)]), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ["index_add", "index_copy"])
@pytest.mark.parametrize("dim", [0, -2])
def test_index_update_with_an_index_per_sample(name, dim):
    """One call with the batch folded into the indexed dim, no loop (an embedding's
    backward in per-sample gradients took the loop, with its warning)."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((B, 5, 3))
    if name == "index_add":
        idx, src, kw = rng.integers(0, 5, (B, 6)), rng.standard_normal((B, 6, 3)), {"alpha": 2.0}
    else:
        idx = np.stack([rng.permutation(5)[:3] for _ in range(B)])
        src, kw = rng.standard_normal((B, 3, 3)), {}

    def run(lib):
        return lib.vmap(lambda x, i, s: getattr(x, name)(dim, i, s, **kw))(
            lib.tensor(a), lib.tensor(idx), lib.tensor(src))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        got = run(ember)
    _close(got, run(torch), rtol=1e-12, atol=1e-12)


def test_per_sample_embedding_gradients_take_no_loop():
    rng = np.random.default_rng(3)
    w, toks = rng.standard_normal((10, 4)), rng.integers(0, 10, (B, 7))

    def run(lib):
        loss = lambda wt, t: (lib.nn.functional.embedding(t, wt) ** 2).sum()  # noqa: E731
        return lib.vmap(lib.func.grad(loss), in_dims=(None, 0))(lib.tensor(w),
                                                                 lib.tensor(toks))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        got = run(ember)
    _close(got, run(torch), rtol=1e-12, atol=1e-12)


def test_index_add_with_an_out_of_range_index_per_sample_raises():
    a, src = ember.zeros(B, 5), ember.ones(B, 2)
    idx = ember.tensor([[0, 1]] * (B - 1) + [[0, 7]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(IndexError, match="out of bounds"):
            vmap(lambda x, i, s: x.index_add(0, i, s))(a, idx, src)


@pytest.mark.parametrize("name", ["randint", "randperm"])
def test_random_integers_per_sample(name):
    """randomness="different" draws randint and randperm per sample (randint raised the
    in-place-randomness error, randperm repeated one permutation); "same" repeats one."""
    draw = (lambda x: x + ember.randint(0, 1000, (6,))) if name == "randint" else \
        (lambda x: x + ember.randperm(6))
    x = ember.zeros(4, 6, dtype=ember.int64)
    ember.manual_seed(0)
    diff = vmap(draw, randomness="different")(x)
    same = vmap(draw, randomness="same")(x)
    assert len({tuple(r) for r in diff.tolist()}) > 1
    assert len({tuple(r) for r in same.tolist()}) == 1
    for r in diff.tolist():
        assert all(0 <= v < 1000 for v in r) if name == "randint" else \
            sorted(r) == list(range(6))
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(draw)(x)


# --- searchsorted and one_hot: one call for every sample, no loop -----------------------------

def _no_loop(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # the loop fallback warns
        return vmap(fn, **kw)(*args)


SEARCHES = {
    # (sequence per sample, values per sample, in_dims)
    "shared_1d_seq": ((5,), (3, 2), (None, 0)),
    "batched_1d_seq": ((5,), (3, 2), (0, 0)),
    "batched_1d_seq_shared_values": ((5,), (4,), (0, None)),
    "batched_1d_seq_0d_value": ((5,), (), (0, 0)),
    "batched_nd_seq": ((3, 5), (3, 2), (0, 0)),
    "nd_seq_batched_values": ((3, 5), (3, 2), (None, 1)),
}


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("case", sorted(SEARCHES))
def test_searchsorted(case, dtype, side):
    seq_shape, val_shape, in_dims = SEARCHES[case]
    seq = np.sort(RNG.integers(0, 10, ((B,) if in_dims[0] == 0 else ()) + seq_shape), -1)
    vals = RNG.integers(-1, 11, val_shape[:1] + (B,) + val_shape[1:] if in_dims[1] == 1 else
                        ((B,) if in_dims[1] == 0 else ()) + val_shape)
    seq, vals = seq.astype(dtype), vals.astype(dtype)
    ts = [ember.tensor(seq), ember.tensor(vals)]
    got = _no_loop(lambda s, v: ember.searchsorted(s, v, side=side), *ts, in_dims=in_dims)
    want = torch.func.vmap(lambda s, v: torch.searchsorted(s, v, side=side), in_dims=in_dims)(
        torch.tensor(seq), torch.tensor(vals))
    _close(got, want)


@pytest.mark.parametrize("seq_dim", [0, None])
def test_searchsorted_with_a_sorter_a_number_and_int32(seq_dim):
    seq = RNG.standard_normal((B, 6) if seq_dim == 0 else (6,)).astype("float32")
    sorter = np.argsort(seq, -1)
    vals = RNG.standard_normal((B, 3)).astype("float32")
    for lib in LIBS:
        s, so, v = lib.tensor(seq), lib.tensor(sorter), lib.tensor(vals)
        fns = [lambda a, b, o: lib.searchsorted(a, b, sorter=o),
               lambda a, b, o: lib.searchsorted(a, 0.25, sorter=o, out_int32=True) + b[:1].int(),
               lambda a, b, o: lib.searchsorted(a, b, sorter=o, right=True)]
        res = [(_no_loop if lib is ember else lambda f, *a, **k: lib.func.vmap(f, **k)(*a))(
            f, s, v, so, in_dims=(seq_dim, 0, seq_dim)) for f in fns]
        if lib is ember:
            got = res
    for e, t in zip(got, res):
        _close(e, t)


def test_searchsorted_shape_error_names_the_op():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="searchsorted.*first N-1 dimensions"):
            vmap(ember.searchsorted)(ember.zeros(B, 3, 5), ember.zeros(B, 2, 1))


def test_one_hot():
    x = RNG.integers(0, 5, (B, 3))
    got = _no_loop(lambda t: ember.nn.functional.one_hot(t, 6), ember.tensor(x))
    want = torch.func.vmap(lambda t: torch.nn.functional.one_hot(t, 6))(torch.tensor(x))
    _close(got, want)
    empty = _no_loop(lambda t: ember.nn.functional.one_hot(t, 4), ember.zeros(B, 0).long())
    assert tuple(empty.shape) == (B, 0, 4)


def test_one_hot_errors():
    """PyTorch's message for an inferred class count; a class out of range raises one_hot's
    own error (PyTorch's rule gives a row of zeros)."""
    with pytest.raises(RuntimeError, match="explicit positive num_classes"):
        vmap(lambda t: ember.nn.functional.one_hot(t))(ember.zeros(B, 2).long())
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        vmap(lambda t: ember.nn.functional.one_hot(t, 3))(ember.tensor([[0, 1], [2, 3]]))
    with pytest.raises(RuntimeError, match="non-negative"):
        vmap(lambda t: ember.nn.functional.one_hot(t, 3))(ember.tensor([[0, 1], [2, -1]]))


def test_rules_reach_ops_of_modules_imported_after_the_first_vmap():
    """vmap installs its rules on the first call; a composite defined by a module imported
    later (nn.functional's one_hot) gets its rule too, instead of the loop."""
    import subprocess
    import sys
    code = ("import warnings, ember\n"
            "ember.func.vmap(lambda x: x + 1)(ember.ones(2))\n"
            "import ember.nn.functional as F\n"
            "warnings.simplefilter('error')\n"
            "print(ember.func.vmap(lambda t: F.one_hot(t, 3))(ember.tensor([[0], [2]])).tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[[[1, 0, 0]], [[0, 0, 1]]]"
