"""Advanced indexing against PyTorch: t[idx] and t[idx] = v with int/bool tensors, lists
and arrays mixed with ints, slices, None and Ellipsis (adjacent advanced indices keep their
place, separated ones move to the front), plus the composites of core/index_ops.py: flip,
repeat_interleave, bincount, histc, masked_select, masked_scatter, take_along_dim and
argwhere."""
import numpy as np
import pytest
import torch

import ember

T = torch.arange(2 * 3 * 4 * 5, dtype=torch.float32).reshape(2, 3, 4, 5)


def i(*v):
    return torch.tensor(v)


INDICES = [
    lambda m: m[[1, 0, 1]],
    lambda m: m[:, [2, 0]],
    lambda m: m[:, [0, 1], :, [1, 2]],                    # separated: moved to the front
    lambda m: m[:, [0, 1], [1, 2]],                       # adjacent: kept in place
    lambda m: m[[0], :, [1]],
    lambda m: m[None, ..., [1, 2], 0],
    lambda m: m[[[0, 1], [1, 0]], 1:, [[3], [2]]],        # broadcast index tensors
    lambda m: m[..., [-1, -5]],                           # negative indices wrap
    lambda m: m[1, [2, 0], ::2],
    lambda m: m[m > 100],                                 # a full mask
    lambda m: m[:, m[0, :, 0, 0] > 20],                   # a 1-d mask inside
    lambda m: m[True],
    lambda m: m[False],
    lambda m: m[[]],
]


@pytest.mark.parametrize("k", range(len(INDICES)))
def test_getitem(k, device, oracle):
    oracle.assert_matches(INDICES[k](ember.tensor(T.numpy(), device=device)), INDICES[k](T))


def test_getitem_tensor_and_array_indices(device, oracle):
    e = ember.tensor(T.numpy(), device=device)
    oracle.assert_matches(e[ember.tensor([1, 0], device=device)], T[i(1, 0)])
    oracle.assert_matches(e[np.array([1, 0])], T[np.array([1, 0])])
    oracle.assert_matches(e[:, ember.tensor([2], dtype=ember.int32, device=device)],
                          T[:, torch.tensor([2], dtype=torch.int32)])
    oracle.assert_matches(e.t()[[0, 2]] if e.dim() == 2 else e.permute(3, 2, 1, 0)[[0, 2]],
                          T.permute(3, 2, 1, 0)[[0, 2]])                  # non-contiguous
    oracle.assert_matches(e[ember.tensor([True, False], device=device)],
                          T[torch.tensor([True, False])])
    b = ember.zeros(3, dtype=ember.bfloat16, device=device)
    oracle.assert_matches(b[[2, 2]], torch.zeros(3, dtype=torch.bfloat16)[[2, 2]])


def test_getitem_errors(device):
    e = ember.tensor(T.numpy(), device=device)
    with pytest.raises(IndexError, match="index 2 is out of bounds for dimension 0 with size 2"):
        e[[2]]
    with pytest.raises(IndexError, match="index -3 is out of bounds"):
        e[[-3]]
    with pytest.raises(IndexError, match="index 9 is out of bounds for dimension 1 with size 4"):
        e[0, [0, 1], [1, 9]]
    with pytest.raises(IndexError, match="must be long, int, byte or bool"):
        e[ember.tensor([0.0], device=device)]
    with pytest.raises(IndexError, match="shape of the mask"):
        e[ember.tensor([True, False, True], device=device)]
    with pytest.raises(IndexError, match="too many indices"):
        e[0, 0, 0, 0, [0]]


SETS = [
    lambda m, v: m.__setitem__(([1, 0],), v),
    lambda m, v: m.__setitem__((slice(None), [0, 2], slice(None), [1, 4]), v),
    lambda m, v: m.__setitem__((Ellipsis, [3, 3]), v),               # duplicates: last wins
    lambda m, v: m.__setitem__((m > 50,), v),
    lambda m, v: m.__setitem__((0, [1, 2], [0, 3]), v),
]


@pytest.mark.parametrize("k", range(len(SETS)))
@pytest.mark.parametrize("tensor_value", [False, True])
def test_setitem(k, tensor_value, device, oracle):
    e, t = ember.tensor(T.numpy(), device=device), T.clone()
    v = ember.tensor(-1.0, device=device) if tensor_value else -1.0
    SETS[k](e, v)
    SETS[k](t, torch.tensor(-1.0) if tensor_value else -1.0)
    oracle.assert_matches(e, t)
    if k == 3:      # a lone mask with a one-element value: torch's masked_fill, which casts
        SETS[k](e, ember.tensor(1.0, dtype=ember.float64, device=device))
        SETS[k](t, torch.tensor(1.0, dtype=torch.float64))
        oracle.assert_matches(e, t)
        return
    with pytest.raises(RuntimeError, match="dtypes match"):      # as torch: no silent cast
        SETS[k](e, ember.tensor(1.0, dtype=ember.float64, device=device))


def test_setitem_broadcast_values_and_views(device, oracle):
    e, t = ember.tensor(T.numpy(), device=device), T.clone()
    e[:, [0, 2]] = ember.arange(5, dtype=ember.float32, device=device)
    t[:, [0, 2]] = torch.arange(5, dtype=torch.float32)
    oracle.assert_matches(e, t)
    p, tp = e.permute(3, 1, 2, 0), t.permute(3, 1, 2, 0)                 # a strided view
    p[[1, 4], 2] = 7.0
    tp[[1, 4], 2] = 7.0
    oracle.assert_matches(e, t)
    v0 = e._version
    e[[0]] = 1.0
    assert e._version > v0
    with pytest.raises(RuntimeError, match="shape mismatch"):
        e[[0, 1]] = ember.zeros(3, device=device)
    with pytest.raises(IndexError, match="out of bounds"):
        e[[0, 7]] = 1.0


def test_index_put_accumulate_duplicates(device, oracle):
    for dt in ("float32", "int64", "float16"):
        e = ember.zeros(4, 3, dtype=getattr(ember, dt), device=device)
        t = torch.zeros(4, 3, dtype=getattr(torch, dt))
        idx = [0, 3, 0, 0, 3]
        vals = torch.arange(15).reshape(5, 3).to(t.dtype)
        e.index_put_((ember.tensor(idx, device=device),),
                     ember.tensor(vals.float().numpy(), device=device).to(e.dtype),
                     accumulate=True)
        oracle.assert_matches(e, t.index_put_((torch.tensor(idx),), vals, accumulate=True))


# --- composites --------------------------------------------------------------------------------

def test_flip(device, oracle):
    e = ember.tensor(T.numpy(), device=device)
    oracle.assert_matches(ember.flip(e, (0, -1)), torch.flip(T, (0, -1)))
    oracle.assert_matches(e[0].fliplr(), T[0].fliplr())
    oracle.assert_matches(e.flipud(), T.flipud())
    # the method takes dims as ints, one sequence or the keyword
    for args, kwargs in (((0, -1), {}), (([0, 1],), {}), ((2,), {}), ((), {"dims": (1,)})):
        oracle.assert_matches(e.flip(*args, **kwargs), T.flip(*args, **kwargs))
    with pytest.raises(TypeError, match="dims"):
        e.flip()
    with pytest.raises(RuntimeError, match="multiple times"):
        ember.flip(e, (0, 0))
    with pytest.raises(RuntimeError, match=">= 2-d"):
        ember.fliplr(e[0, 0, 0])


def test_repeat_interleave(device, oracle):
    e = ember.tensor([[1, 2], [3, 4]], device=device)
    t = torch.tensor([[1, 2], [3, 4]])
    oracle.assert_matches(ember.repeat_interleave(e, 2), torch.repeat_interleave(t, 2))
    oracle.assert_matches(e.repeat_interleave(ember.tensor([1, 3], device=device), dim=0),
                          t.repeat_interleave(torch.tensor([1, 3]), dim=0))
    oracle.assert_matches(e.repeat_interleave(3, dim=-1), t.repeat_interleave(3, dim=-1))
    oracle.assert_matches(ember.repeat_interleave(ember.tensor([2, 0, 1], device=device)),
                          torch.repeat_interleave(torch.tensor([2, 0, 1])))
    oracle.assert_matches(e.repeat_interleave(ember.tensor([0, 2], device=device), dim=1,
                                              output_size=2),
                          t.repeat_interleave(torch.tensor([0, 2]), dim=1, output_size=2))
    with pytest.raises(RuntimeError, match="negative"):
        ember.repeat_interleave(e, ember.tensor([1, -1], device=device), dim=0)


def test_bincount_histc(device, oracle):
    x = torch.tensor([1, 4, 1, 0, 9, 4, 4])
    e = ember.tensor(x.numpy(), device=device)
    oracle.assert_matches(ember.bincount(e), torch.bincount(x))
    oracle.assert_matches(e.bincount(minlength=12), x.bincount(minlength=12))
    w = torch.linspace(0, 1, 7)
    oracle.assert_matches(ember.bincount(e, ember.tensor(w.numpy(), device=device)),
                          torch.bincount(x, w))
    oracle.assert_matches(ember.bincount(e, ember.tensor(x.numpy(), dtype=ember.int32,
                                                         device=device)),
                          torch.bincount(x, x.int()))
    oracle.assert_matches(ember.bincount(ember.tensor([], dtype=ember.int64, device=device)),
                          torch.bincount(torch.tensor([], dtype=torch.long)))
    with pytest.raises(RuntimeError, match="non-negative"):
        ember.bincount(ember.tensor([-1], device=device))
    f = torch.tensor([0.1, 0.5, 2.0, 3.7, -1.0, 2.5, 4.0, 0.25])
    ef = ember.tensor(f.numpy(), device=device)
    oracle.assert_matches(ember.histc(ef, bins=4, min=0, max=4), torch.histc(f, 4, 0, 4))
    oracle.assert_matches(ef.histc(bins=5), f.histc(bins=5))
    with pytest.raises(NotImplementedError):
        ember.histc(e)


def test_masked_select_scatter(device, oracle):
    e = ember.tensor(T[0].numpy(), device=device)
    m = e > 30
    oracle.assert_matches(ember.masked_select(e, m), torch.masked_select(T[0], T[0] > 30))
    row = ember.tensor([True, False, True, False, True], device=device)
    oracle.assert_matches(e.masked_select(row), T[0].masked_select(torch.tensor(
        [True, False, True, False, True])))
    src = ember.arange(60, dtype=ember.float32, device=device).neg()
    oracle.assert_matches(e.masked_scatter(m, src), T[0].masked_scatter(T[0] > 30,
                                                                      -torch.arange(60.)))
    c, tc = e.clone(), T[0].clone()
    assert c.masked_scatter_(row, src) is c
    oracle.assert_matches(c, tc.masked_scatter_(torch.tensor([True, False, True, False, True]),
                                                -torch.arange(60.)))
    with pytest.raises(RuntimeError, match="BoolTensor"):
        e.masked_select(ember.tensor([1, 0, 1, 0, 1], device=device))
    with pytest.raises(RuntimeError, match="Number of elements of source"):
        e.masked_scatter(m, src[:2])
    oracle.assert_matches(ember.nonzero(m), torch.nonzero(T[0] > 30))


@pytest.mark.parametrize("form", ["fresh_self", "self_requires_grad", "inplace",
                                  "broadcast", "self_written_later"])
def test_masked_scatter_gradients(form, device, oracle):
    # the scatter's node must not keep a tensor that is written afterwards (put_ saved self)
    grads = []
    for m in (ember, torch):
        dev = device if m is ember else "cpu"
        x = m.tensor([1.0, 2.0, 3.0], device=dev, requires_grad=True)
        b = m.tensor([5.0, 6.0, 7.0], device=dev, requires_grad=True)
        mask = m.tensor([True, True, False], device=dev)
        if form == "fresh_self":
            r = m.zeros(3, device=dev).masked_scatter(mask, x)
        elif form == "self_requires_grad":
            r = (b * 1).masked_scatter(mask, x * 2)
        elif form == "inplace":
            r = (b * 1).masked_scatter_(m.tensor([True, False, True], device=dev), x)
        elif form == "broadcast":
            rows = m.tensor([[True, False, True], [False, False, True]], device=dev)
            r = b.masked_scatter(rows, x.repeat(2)) * m.arange(6.0, device=dev).reshape(2, 3)
        else:
            z = m.zeros(3, device=dev)
            r = z.masked_scatter(mask, x)
            z.add_(1)
        grads.append(m.autograd.grad((r * r).sum(), (x, b), allow_unused=True))
    for g, w in zip(*grads):
        assert (g is None) == (w is None)
        if w is not None:
            oracle.assert_matches(g, w)


# values and gradients over dtypes, broadcasting, non-contiguous and empty inputs, one
# row per case (conftest.py's check_table_case)
F, D, L, B = "float32", "float64", "int64", "bool"
CASES = [
    ("take_along_dim", lambda m, a, i: m.take_along_dim(a, i.long(), 1),
     [((3, 4), D, "n"), ((3, 2), L, "idx")], True),
    ("take_along_dim_bcast", lambda m, a, i: m.take_along_dim(a, i.long(), 0),
     [((3, 4), D, "n"), ((2, 1), L, "idx")], True),
    ("take_along_dim_flat", lambda m, a, i: m.take_along_dim(a, i.long()),
     [((3, 4), D, "n"), ((5,), L, "idx")], True),
    ("argwhere", lambda m, a: m.argwhere(a), [((3, 4), L, "idx")], False),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("transpose", [False, True], ids=["contig", "strided"])
def test_forward_and_grad(case, transpose, device, table_case):
    table_case(case, transpose, device)


def test_the_index_ops_with_only_zero_dim_integer_indices():
    """index / index_put called with 0-d integer index tensors only (what a vmap loop's
    samples of a batched index are) index like ints; the plan for advanced indices used to
    read the first of no advanced dims and crash."""
    x = ember.arange(6.).reshape(2, 3)
    got = ember.ops.ember.index(x, (ember.tensor(1),))
    assert ember.equal(got, ember.tensor([3.0, 4.0, 5.0]))
    got[0] = -1.0                               # a copy, as the index op's result is
    assert x[1, 0].item() == 3.0
    y = x.clone()
    ember.ops.ember.index_put(y, (ember.tensor(1),), ember.tensor(9.0))
    assert ember.equal(y[1], ember.full((3,), 9.0)) and ember.equal(y[0], x[0])
    y = x.clone()
    ember.ops.ember.index_put(y, (ember.tensor(0), ember.tensor(2)), ember.tensor(9.0), True)
    assert y[0, 2].item() == 11.0


@pytest.mark.parametrize("data,kw", [
    ([1.0, float("inf"), 2.0], {}), ([1.0, float("-inf"), 2.0], {}),
    ([1.0, float("nan"), 2.0], {}), ([1.0, 2.0], {"min": 0, "max": float("inf")}),
    ([1.0, 2.0], {"min": float("nan"), "max": 3}),
])
def test_histc_refuses_a_range_that_is_not_finite(data, kw):
    with pytest.raises(RuntimeError, match="torch.histc: range of .* is not finite"):
        torch.histc(torch.tensor(data), bins=2, **kw)
    with pytest.raises(RuntimeError, match="torch.histc: range of .* is not finite"):
        ember.histc(ember.tensor(data), bins=2, **kw)
