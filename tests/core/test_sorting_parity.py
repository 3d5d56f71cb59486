"""PyTorch parity of core/sorting.py and the named result tuples (core/_results.py): mode
of rows holding NaN, median/nanmedian of no elements in integer dtypes, out= pairs of
sort/topk/kthvalue/mode/median, and torch.return_types' printed form.  Each case runs with
ember and with torch (``lib``)."""
import math
import pickle
import random

import pytest
import torch

import ember

NAN = math.nan


def _pair(r):
    """(values, indices) of a result as lists, NaN as the string 'nan' (comparable)."""
    return [["nan" if isinstance(x, float) and math.isnan(x) else x for x in
             (t.reshape(-1).tolist())] for t in r]


@pytest.mark.parametrize("row", [[NAN, NAN, 1.0], [1.0, NAN, NAN], [NAN, 1.0, NAN, 1.0],
                                 [2.0, NAN, 2.0, NAN, 1.0, NAN], [NAN], [NAN, NAN],
                                 [math.inf, NAN, math.inf, NAN], [1.0, 1.0, NAN, NAN, 2.0]])
def test_mode_of_rows_with_nan(row):
    assert _pair(ember.tensor(row).mode()) == _pair(torch.tensor(row).mode())


@pytest.mark.parametrize("seed", range(6))
def test_mode_with_nan_matches_on_long_rows(seed):
    # past 16 elements torch's sort partitions: where NaN lands decides the runs
    rng = random.Random(seed)
    rows = [[NAN if rng.random() < p else float(rng.randrange(k)) for _ in range(n)]
            for n, k, p in ((17, 3, 0.3), (40, 5, 0.1), (200, 4, 0.6), (33, 2, 0.9))]
    for row in rows:
        assert _pair(ember.tensor(row).mode()) == _pair(torch.tensor(row).mode()), row


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("dim,keepdim", [(1, False), (0, True), (-1, True)])
def test_mode_with_nan_along_dims(dtype, dim, keepdim):
    data = [[NAN, NAN, 1.0], [1.0, 1.0, NAN], [NAN, 2.0, NAN]]
    got = ember.tensor(data, dtype=getattr(ember, dtype)).mode(dim, keepdim)
    want = torch.tensor(data, dtype=getattr(torch, dtype)).mode(dim, keepdim)
    assert _pair(got) == _pair(want)
    assert list(got.values.shape) == list(want.values.shape)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "uint16",
                                   "uint32", "uint64", "bool", "float16", "float32"])
@pytest.mark.parametrize("op", ["median", "nanmedian"])
@pytest.mark.parametrize("shape", [(0,), (0, 3)])
def test_median_of_no_elements(dtype, op, shape):
    want = getattr(torch.zeros(shape, dtype=getattr(torch, dtype)), op)()
    got = getattr(ember.zeros(shape, dtype=getattr(ember, dtype)), op)()
    assert got.dtype.name == dtype and _pair([got]) == _pair([want])


_OUT_CALLS = {"sort": lambda lib, t, out: lib.sort(t, 1, True, out=out),
              "topk": lambda lib, t, out: lib.topk(t, 2, out=out),
              "kthvalue": lambda lib, t, out: lib.kthvalue(t, 2, out=out),
              "mode": lambda lib, t, out: lib.mode(t, out=out),
              "median": lambda lib, t, out: lib.median(t, 1, out=out)}


@pytest.mark.parametrize("op", sorted(_OUT_CALLS))
def test_values_indices_out(op):
    results = []
    for lib in (ember, torch):
        t = lib.tensor([[3, 1, 2], [0, 5, 4]])
        out = (lib.empty(0, dtype=lib.long), lib.empty(0, dtype=lib.long))
        r = _OUT_CALLS[op](lib, t, out)
        assert r.values is out[0] and r.indices is out[1]
        assert type(r).__name__ == f"{op}_out"
        results.append(_pair(r))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", ["values_dtype", "one_tensor", "short", "grad", "no_dim"])
def test_values_indices_out_errors(case):
    def error(lib):
        t = lib.tensor([3.0, 1.0, 2.0], requires_grad=case == "grad")
        long_ = lib.empty(0, dtype=lib.long)
        out = {"values_dtype": (lib.empty(0, dtype=lib.float64), long_),
               "one_tensor": long_, "short": (lib.empty(0),)}.get(case, (lib.empty(0), long_))
        with pytest.raises(Exception) as info:
            lib.median(t, out=out) if case == "no_dim" else lib.sort(t, out=out)
        return type(info.value)
    assert error(ember) is error(torch)


@pytest.mark.parametrize("call", ["t.max(0)", "t.sort()", "t.topk(1)", "t.kthvalue(1)",
                                  "t.mode()", "t.median(0)", "t.aminmax()", "t.nanmedian(0)",
                                  "lib.linalg.slogdet(m)", "lib.linalg.qr(m)"])
def test_return_types_print_as_torch(call):
    def text(lib):
        env = {"lib": lib, "t": lib.tensor([[3.0, 1.0], [2.0, 5.0]]),
               "m": lib.tensor([[2.0, 1.0], [1.0, 3.0]])}
        return repr(eval(call, env)).replace("torch.", "").replace("ember.", "")
    assert text(ember) == text(torch)
    assert str(eval(call, {"lib": ember, "t": ember.tensor([[3.0, 1.0], [2.0, 5.0]]),
                           "m": ember.eye(2)})).startswith("ember.return_types.")


def test_return_types_resolve_and_pickle():
    r = ember.tensor([[3.0, 1.0], [2.0, 5.0]]).max(0)
    assert type(r) is ember.return_types.max
    back = pickle.loads(pickle.dumps(r))
    assert type(back) is type(r) and back.values.tolist() == r.values.tolist()


@pytest.mark.parametrize("call", ["t.median(dim=(0,))", "t.nanmedian(dim=(0,))",
                                  "t.mode(dim=(0,))", "t.kthvalue(1, dim=(0,))",
                                  "t.topk(1, dim=(0,))", "t.median(dim=0.5)"])
def test_dim_must_be_an_int(oracle, call):
    oracle.same_error(call, TypeError, lambda lib: {"t": lib.tensor([[1.0, 2.0]])})


@pytest.mark.parametrize("call", ["lib.tensor([1, 2]).var()", "lib.tensor([1, 2]).std(0)",
                                  "lib.var_mean(lib.tensor([1, 2]))",
                                  "lib.std_mean(lib.tensor([True]))"])
def test_moments_of_integers_refused_as_torch(oracle, call):
    oracle.same_error(call, RuntimeError, lambda lib: {"lib": lib})
