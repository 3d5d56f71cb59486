"""ember-cpu's float cumsum scans eight rows in lockstep (_scan.pyx cumsum_lanes): the same
double-precision running sums as one row at a time, so every layout and row count gives
NumPy's float64 cumsum rounded once, as PyTorch's CPU cumsum."""
import numpy as np
import pytest
import torch

import ember


def _want(x, dim):
    return np.cumsum(x.astype(np.float64), axis=dim).astype(x.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", [((1000, 37), 0), ((37, 1000), 1), ((5, 7, 9), 0),
                                       ((5, 7, 9), 1), ((5, 7, 9), 2), ((8, 3), 1),
                                       ((17,), 0), ((3, 0), 0), ((0, 3), 1)])
def test_cumsum_is_the_double_running_sum(dtype, shape, dim):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype) * 100
    np.testing.assert_array_equal(ember.cumsum(ember.tensor(x), dim).numpy(), _want(x, dim))


@pytest.mark.parametrize("view", ["transposed", "every other row", "every other column"])
def test_cumsum_of_strided_views(view):
    x = np.random.default_rng(1).standard_normal((40, 30)).astype(np.float32)
    t = ember.tensor(x)
    v, xv = {"transposed": (t.t(), x.T), "every other row": (t[::2], x[::2]),
             "every other column": (t[:, ::2], x[:, ::2])}[view]
    for dim in (0, 1):
        np.testing.assert_array_equal(ember.cumsum(v, dim).numpy(), _want(xv, dim))
        out = ember.empty(xv.shape[::-1]).t()                     # a strided output
        ember.cumsum(v, dim, out=out)
        np.testing.assert_array_equal(out.numpy(), _want(xv, dim))


def test_cumsum_does_not_depend_on_the_thread_count():
    x = ember.randn(301, 257)
    before = ember.get_num_threads()
    try:
        outs = []
        for n in (1, 2):
            ember.set_num_threads(n)
            outs.append([ember.cumsum(x, 0).numpy(), ember.cumsum(x, 1).numpy()])
    finally:
        ember.set_num_threads(before)
    for a, b in zip(*outs):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,dim", [((200_003,), 0), ((3, 50_257), -1), ((11, 700), 1),
                                       ((700, 5), 0)])
def test_float_cumsum_rows_left_over_run_in_double_in_order(shape, dim, dtype):
    # rows beyond the lockstep groups of 8 (a single long row, 3 rows, 11 = 8 + 3) take
    # the one-row loop: PyTorch's sequential double sum, bit for bit
    rng = np.random.default_rng(9)
    data = rng.standard_normal(shape).astype(dtype)
    got = ember.tensor(data).cumsum(dim).numpy()
    want = np.cumsum(data.astype(np.float64), axis=dim).astype(dtype)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, torch.tensor(data).cumsum(dim).numpy())
