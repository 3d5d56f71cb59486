"""Hypothesis strategies shared by the property tests (test_properties_*.py): tensors of every
dtype with edge values, in contiguous and non-contiguous layouts, built as an identical
(ember, torch) pair; plus the oracle comparison. Loaded by path (tests/ is not a package)."""
import numpy as np
import torch
from hypothesis import settings
from hypothesis import strategies as st

import ember

# A profile of our own (not global config): reproducible in CI, no per-example deadline
# (the first call of an op compiles nothing but may import lazily).
settings.register_profile("ember-properties", deadline=None, derandomize=True,
                          print_blob=True)
PROFILE = settings.get_profile("ember-properties")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64",
          "float16", "bfloat16", "float32", "float64"]
FLOATS = DTYPES[6:]
INTS = DTYPES[1:6]

# Relative/absolute tolerance for results the two libraries compute with different
# (transcendental) code: float16/bfloat16 are computed in float32 and rounded, so a
# float32 result near a rounding boundary may land one half-precision ulp apart.
TOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-5, "float64": 1e-12}


def _specials(dt, huge):
    fi = torch.finfo(getattr(torch, dt))
    v = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, 2.5, -2.5,
         fi.tiny / 4, -fi.tiny / 2, fi.tiny, fi.eps, 1 + fi.eps]
    return np.array(v + [fi.max, -fi.max, fi.max / 3] if huge else v)


def _values(rng, n, dt, special):
    """`n` values of dtype `dt` as a torch tensor: random, with a fraction of edge values
    when `special` is true ("no-huge": all but the values near the dtype's max, for
    sums whose overflow would depend on the order of summation)."""
    if dt == "bool":
        return torch.from_numpy(rng.random(n) < 0.5)
    if dt in INTS:
        ii = np.iinfo(dt)
        v = rng.integers(-20 if ii.min < 0 else 0, 21, size=n)
        edges = np.array([ii.min, ii.max, 0, -1 if ii.min < 0 else 1, 1], dtype=dt)
        wide = rng.integers(ii.min, ii.max, size=n, endpoint=True, dtype=dt)
        v = np.where(rng.random(n) < 0.2, wide, v.astype(dt))
        if special:
            v = np.where(rng.random(n) < 0.3, rng.choice(edges, size=n), v)
        return torch.from_numpy(v.astype(dt))
    v = rng.standard_normal(n) * np.exp2(rng.integers(-3, 5, size=n))
    if special:
        v = np.where(rng.random(n) < 0.3,
                     rng.choice(_specials(dt, special != "no-huge"), size=n), v)
    return torch.from_numpy(v).to(getattr(torch, dt))


def to_ember(t):
    """The torch tensor `t` (any layout) as an ember tensor with the same values."""
    if t.dtype == torch.bfloat16:
        return ember.tensor(t.float().numpy()).to(ember.bfloat16)
    return ember.tensor(t.numpy())


def to_torch(e):
    if e.dtype == ember.bfloat16:
        return torch.from_numpy(np.array(e.float().numpy(force=True))).to(torch.bfloat16)
    return torch.from_numpy(np.array(e.numpy(force=True), copy=True))


shapes = st.lists(st.integers(0, 4) | st.just(1), min_size=0, max_size=4).map(tuple)


@st.composite
def broadcast_shapes(draw, n=2, max_dims=4):
    """`n` shapes that broadcast together: each keeps a suffix of one full shape and sets
    some of its dims to 1 (size-0 dims included)."""
    full = draw(st.lists(st.integers(0, 4), min_size=0, max_size=max_dims).map(tuple))
    out = []
    for _ in range(n):
        k = draw(st.integers(0, len(full)))
        out.append(tuple(1 if draw(st.integers(0, 3)) == 0 else s for s in full[len(full) - k:]))
    out[draw(st.integers(0, n - 1))] = full   # one of them sets the result's rank
    return out


@st.composite
def tensor_pair(draw, shape, dtype, special=None, layout=None):
    """An (ember, torch) pair of the given shape/dtype in a random layout: contiguous,
    transposed (a permutation of a contiguous buffer), strided slice (every other
    element) or expanded (broadcast from size-1 dims)."""
    if special is None:
        special = draw(st.booleans())
    layout = layout or draw(st.sampled_from(["contiguous", "transposed", "strided",
                                              "expanded"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    nd = len(shape)
    if layout == "transposed" and nd >= 2:
        perm = draw(st.permutations(range(nd)))
        inv = [perm.index(i) for i in range(nd)]
        base_shape = [shape[p] for p in perm]
        t = _values(rng, int(np.prod(base_shape)), dtype, special).reshape(base_shape)
        t = t.permute(inv)
        e = to_ember(t.permute(perm).contiguous()).permute(inv)
    elif layout == "strided" and nd >= 1:
        big = [2 * s + 1 for s in shape]
        t = _values(rng, int(np.prod(big)), dtype, special).reshape(big)
        sl = tuple(slice(1, None, 2) for _ in shape)
        e, t = to_ember(t)[sl], t[sl]
    elif layout == "expanded" and nd >= 1:
        small = [1 if draw(st.booleans()) else s for s in shape]
        t = _values(rng, int(np.prod(small)), dtype, special).reshape(small)
        e, t = to_ember(t).expand(*shape), t.expand(*shape)
    else:
        t = _values(rng, int(np.prod(shape)), dtype, special).reshape(shape)
        e = to_ember(t)
    assert tuple(e.shape) == tuple(t.shape)
    return e, t


# Python scalars of each kind (bool, int, float): they take part in type promotion only
# by category, and carry the edge values.
scalars = st.one_of(st.booleans(), st.sampled_from([0, 1, -1, 2, 3, -7, 100]),
                    st.sampled_from([0.5, -2.5, 3.0, 0.0, -0.0, float("inf"), float("nan"), 1e-3]))


def check(fe, ft, exact=False, rtol=None, atol=None):
    """Run `ft()` (torch) and `fe()` (ember): when torch raises, ember raises the same
    exception type; otherwise the results agree in dtype, shape and values (NaN where
    torch has NaN; exactly when `exact` or the result is integer/bool)."""
    try:
        want = ft()
    except Exception as ex:  # noqa: BLE001 - whichever type torch raises
        try:
            fe()
        except type(ex):
            return None
        except Exception as got:  # noqa: BLE001
            raise AssertionError(f"torch raised {type(ex).__name__}({ex}); ember raised "
                                 f"{type(got).__name__}({got})") from got
        raise AssertionError(f"torch raised {type(ex).__name__}({ex}); ember did not")
    got = fe()
    compare(got, want, exact, rtol, atol)
    return got


def compare(got, want, exact=False, rtol=None, atol=None):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            compare(g, w, exact, rtol, atol)
        return
    wd = str(want.dtype).replace("torch.", "")
    assert got.dtype.name == wd, f"dtype {got.dtype.name} != torch's {wd}"
    assert tuple(got.shape) == tuple(want.shape), f"shape {tuple(got.shape)} != {tuple(want.shape)}"
    g = to_torch(got)
    if exact or not want.is_floating_point():
        r = a = 0.0
    else:
        r = TOL[wd] if rtol is None else rtol
        a = r if atol is None else atol
    torch.testing.assert_close(g, want, rtol=r, atol=a, equal_nan=True)
