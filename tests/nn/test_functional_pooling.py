"""max_pool3d, avg_pool3d, adaptive_avg/max_pool3d and their layers against PyTorch 2.13:
values, indices and input gradients over kernel, stride, padding, dilation, ceil_mode,
count_include_pad and divisor_override, float32/float64, unbatched inputs, and errors."""
import ember.nn as enn
import ember.nn.functional as EF
import numpy as np
import pytest

import ember

MAX = [
    (2, {}),
    ((2, 3, 2), dict(stride=(1, 2, 3), padding=(1, 1, 0), dilation=(2, 1, 2))),
    (3, dict(stride=2, padding=1, ceil_mode=True)),
    ((3, 2, 2), dict(stride=(2, 1, 3), ceil_mode=True, dilation=(1, 2, 1))),
    (2, dict(stride=1, padding=1)),
]


@pytest.mark.parametrize("kernel,kw", MAX)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("unbatched", [False, True])
def test_max_pool3d(compare_functional, oracle, device, kernel, kw, dtype, unbatched):
    shape = (3, 5, 6, 7) if unbatched else (2, 3, 5, 6, 7)
    compare_functional(oracle, device, "max_pool3d", [shape], dtype, kernel,
                       return_indices=True, **kw)
    compare_functional(oracle, device, "max_pool3d", [shape], dtype, kernel, **kw)


AVG = [
    (2, {}),
    ((3, 2, 3), dict(stride=(2, 1, 2), padding=1, ceil_mode=True)),
    ((3, 2, 3), dict(stride=(2, 1, 2), padding=1, ceil_mode=True, count_include_pad=False)),
    (3, dict(stride=2, padding=1, divisor_override=5)),
    ((2, 3, 2), dict(stride=1, padding=(1, 0, 1), count_include_pad=False)),
]


@pytest.mark.parametrize("kernel,kw", AVG)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("unbatched", [False, True])
def test_avg_pool3d(compare_functional, oracle, device, kernel, kw, dtype, unbatched):
    shape = (3, 5, 6, 7) if unbatched else (2, 3, 5, 6, 7)
    compare_functional(oracle, device, "avg_pool3d", [shape], dtype, kernel, **kw)


@pytest.mark.parametrize("size", [2, (3, 4, 2), (None, 4, 1), (5, 6, 7), (1, 1, 1)])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("unbatched", [False, True])
def test_adaptive_pool3d(compare_functional, oracle, device, size, dtype, unbatched):
    shape = (3, 5, 6, 7) if unbatched else (2, 3, 5, 6, 7)
    compare_functional(oracle, device, "adaptive_avg_pool3d", [shape], dtype, size)
    compare_functional(oracle, device, "adaptive_max_pool3d", [shape], dtype, size,
                       return_indices=True)


def test_with_indices_spellings_and_top_level(compare_functional, oracle, device):
    compare_functional(oracle, device, "max_pool3d_with_indices", [(1, 2, 4, 4, 4)],
                       ember.float64, 2)
    compare_functional(oracle, device, "adaptive_max_pool3d_with_indices", [(1, 2, 4, 4, 4)],
                       ember.float64, 3)
    assert ember.max_pool3d is EF.max_pool3d


def test_max_pool3d_picks_the_first_maximum():
    x = ember.zeros(1, 1, 2, 2, 2)
    v, i = EF.max_pool3d(x, 2, return_indices=True)
    assert float(v) == 0 and int(i) == 0


def _x(*shape):
    return ember.randn(*shape)


ERRORS = [
    ("max_pool3d", (_x(1, 2, 4, 4, 4), (2, 2)), {}),
    ("avg_pool3d", (_x(1, 2, 4, 4, 4), (2, 2)), {}),
    ("max_pool3d", (_x(1, 2, 4, 4, 4), 2), dict(stride=(1, 2))),
    ("avg_pool3d", (_x(1, 2, 4, 4, 4), 2), dict(stride=(1, 2))),
    ("max_pool3d", (_x(1, 2, 4, 4, 4), 2), dict(padding=(1, 2))),
    ("max_pool3d", (_x(1, 2, 4, 4, 4), 2), dict(padding=2)),
    ("avg_pool3d", (_x(1, 2, 4, 4, 4), 2), dict(padding=2)),
    ("max_pool3d", (_x(1, 2, 4, 4, 4), 0), {}),
    ("max_pool3d", (_x(1, 2, 4, 4, 4), 2), dict(stride=0)),
    ("max_pool3d", (_x(1, 2, 4, 4, 4), 2), dict(dilation=0)),
    ("max_pool3d", (_x(1, 2, 4, 4, 4), 2), dict(padding=-1)),
    ("avg_pool3d", (_x(1, 2, 4, 4, 4), 2), dict(padding=-1)),
    ("max_pool3d", (_x(2, 3), 2), {}),
    ("avg_pool3d", (_x(2, 3), 2), {}),
    ("max_pool3d", (_x(1, 1, 1, 4, 4), 2), {}),
    ("avg_pool3d", (_x(1, 1, 1, 4, 4), 2), {}),
    ("avg_pool3d", (_x(1, 2, 4, 4, 4), 2), dict(divisor_override=0)),
    ("max_pool3d", (_x(1, 0, 2, 2, 2), 2), {}),
    ("avg_pool3d", (_x(1, 0, 2, 2, 2), 2), {}),
    ("adaptive_avg_pool3d", (_x(1, 2, 3), 2), {}),
    ("adaptive_max_pool3d", (_x(1, 2, 3), 2), {}),
    ("adaptive_avg_pool3d", (_x(1, 2, 4, 4, 4), (1, 2)), {}),
    ("adaptive_avg_pool3d", (_x(1, 2, 0, 3, 3), 2), {}),
]


@pytest.mark.parametrize("name,args,kw", ERRORS)
def test_errors_match_torch(oracle, same_functional_error, name, args, kw):
    same_functional_error(oracle, name, args, kw)


def test_empty_batch():
    assert EF.max_pool3d(_x(0, 2, 4, 4, 4), 2).shape == (0, 2, 2, 2, 2)
    assert EF.avg_pool3d(_x(0, 2, 4, 4, 4), 2).shape == (0, 2, 2, 2, 2)


@pytest.mark.parametrize("name,args,kw", [
    ("MaxPool3d", (2,), {}),
    ("MaxPool3d", (3,), dict(stride=2, padding=1, dilation=1, ceil_mode=True,
                             return_indices=True)),
    ("AvgPool3d", ((2, 3, 2),), dict(stride=1, padding=1, count_include_pad=False)),
    ("AvgPool3d", (3,), dict(stride=2, ceil_mode=True, divisor_override=4)),
    ("AdaptiveAvgPool3d", ((2, None, 3),), {}),
    ("AdaptiveMaxPool3d", (2,), dict(return_indices=True)),
])
def test_layers(oracle, device, name, args, kw):
    import torch
    tm, em = getattr(torch.nn, name)(*args, **kw), getattr(enn, name)(*args, **kw)
    assert repr(em) == repr(tm)
    tx = torch.randn(2, 3, 5, 6, 4, dtype=torch.float64)
    ex = oracle.from_torch(tx, device).requires_grad_(True)
    tx.requires_grad_(True)
    t, e = tm(tx), em(ex)
    if isinstance(t, tuple):
        oracle.assert_matches(e[1], t[1])
        t, e = t[0], e[0]
    oracle.assert_matches(e.detach(), t.detach())
    t.sum().backward()
    e.sum().backward()
    oracle.assert_matches(ex.grad, tx.grad)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1)])
def test_max_pool3d_indices_with_ties_and_nans_match_torch(kw):
    """The first maximum wins, and a NaN beats any number: the last NaN of the window, as
    PyTorch's kernel (`max(dim)` alone would give the first)."""
    import torch
    import torch.nn.functional as F
    g = torch.Generator().manual_seed(0)
    t = torch.randint(0, 3, (2, 3, 6, 7, 8), generator=g).float()
    t[torch.rand(t.shape, generator=g) < 0.05] = float("nan")
    for name, args in [("max_pool3d", kw), ("adaptive_max_pool3d", dict(output_size=(2, 3, 3)))]:
        tv, ti = getattr(F, name)(t, return_indices=True, **args)
        v, i = getattr(EF, name)(ember.tensor(t.numpy()), return_indices=True, **args)
        assert (i.numpy() == ti.numpy()).all(), name
        np.testing.assert_array_equal(v.numpy(), tv.numpy())


@pytest.mark.parametrize("size, kw", [
    ((6, 1, 5), dict(kernel_size=(2, 3, 1), stride=(2, 3, 1), padding=(1, 1, 0),
                     dilation=2, ceil_mode=True)),
    ((1, 5, 3), dict(kernel_size=(2, 2, 1), stride=(1, 2, 3), padding=(1, 1, 0),
                     dilation=(2, 1, 1))),
])
def test_max_pool3d_edge_windows_match_torch(size, kw):
    """ceil_mode windows longer than the input, and windows with no tap inside the volume
    (-inf at the first tap past the padding), as PyTorch's kernel."""
    import torch
    import torch.nn.functional as F
    t = torch.randn(1, 2, *size)
    tv, ti = F.max_pool3d(t, return_indices=True, **kw)
    v, i = EF.max_pool3d(ember.tensor(t.numpy()), return_indices=True, **kw)
    assert (i.numpy() == ti.numpy()).all()
    np.testing.assert_array_equal(v.numpy(), tv.numpy())


@pytest.mark.parametrize("name,args", [
    ("avg_pool3d", ((4, 4, 3), (3, 3, 2), (0, 2, 1), True)),
    ("avg_pool3d", ((3, 3, 3), 1, 1)),
    ("lp_pool3d", (2, (4, 4, 3), (3, 3, 2), True)),
])
def test_pool3d_input_smaller_than_kernel(oracle, same_functional_error, name, args):
    # PyTorch's 3-d average pools check the input against the kernel, padding aside
    import torch
    x = oracle.from_torch(torch.randn(1, 1, 2, 8, 8))
    same_functional_error(oracle, name, [x, *args], {})
