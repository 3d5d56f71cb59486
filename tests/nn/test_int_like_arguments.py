"""Int arguments of nn.functional (kernel_size, stride, padding, dilation, output sizes)
take what PyTorch's take: ints, NumPy integers and integer tensors, alone or in tuples,
and reject floats and bools with TypeError (core/_errors.py's _int_like / _int_tuple)."""
import numpy as np
import pytest
import torch

import ember

CASES = {
    "max_pool1d": lambda lib, v: lib.nn.functional.max_pool1d(lib.ones(1, 2, 8), v),
    "max_pool2d": lambda lib, v: lib.nn.functional.max_pool2d(lib.ones(1, 2, 8, 8), v),
    "avg_pool2d_stride": lambda lib, v: lib.nn.functional.avg_pool2d(lib.ones(1, 2, 8, 8), 2, v),
    "avg_pool3d": lambda lib, v: lib.nn.functional.avg_pool3d(lib.ones(1, 2, 6, 6, 6), v),
    "max_pool3d": lambda lib, v: lib.nn.functional.max_pool3d(lib.ones(1, 2, 6, 6, 6), v),
    "lp_pool2d": lambda lib, v: lib.nn.functional.lp_pool2d(lib.ones(1, 2, 8, 8), 2, v),
    "conv2d_padding": lambda lib, v: lib.nn.functional.conv2d(lib.ones(1, 2, 8, 8),
                                                              lib.ones(3, 2, 3, 3), padding=v),
    "conv1d_dilation": lambda lib, v: lib.nn.functional.conv1d(lib.ones(1, 2, 8),
                                                               lib.ones(3, 2, 3), dilation=v),
    "conv_transpose2d_stride": lambda lib, v: lib.nn.functional.conv_transpose2d(
        lib.ones(1, 2, 4, 4), lib.ones(2, 3, 3, 3), stride=v),
    "unfold": lambda lib, v: lib.nn.functional.unfold(lib.ones(1, 2, 8, 8), v),
    "fold": lambda lib, v: lib.nn.functional.fold(lib.ones(1, 8, 9), (4, 4), v),
    "interpolate_size": lambda lib, v: lib.nn.functional.interpolate(lib.ones(1, 2, 8, 8),
                                                                     size=v),
    "MaxPool2d": lambda lib, v: lib.nn.MaxPool2d(3, padding=v)(lib.ones(1, 2, 8, 8)),
    "AvgPool2d": lambda lib, v: lib.nn.AvgPool2d(v)(lib.ones(1, 2, 8, 8)),
    "Upsample": lambda lib, v: lib.nn.Upsample(size=v)(lib.ones(1, 2, 8, 8)),
}

VALUES = {
    "np.int64": lambda lib: np.int64(1 + 1),
    "np.int32": lambda lib: np.int32(2),
    "tuple of np": lambda lib: (np.int64(2), np.int16(2)),
    "tuple of tensors": lambda lib: (lib.tensor(2), lib.tensor(2)),
    "bool": lambda lib: True,
    "tuple with a float": lambda lib: (2.0, 2),
}


def outcome(lib, case, value):
    try:
        return tuple(CASES[case](lib, VALUES[value](lib)).shape)
    except (TypeError, RuntimeError, ValueError) as e:
        return type(e).__name__


@pytest.mark.parametrize("case", CASES)
def test_int_like_arguments_as_torch(case):
    for value in VALUES:
        assert outcome(ember, case, value) == outcome(torch, case, value), value


def test_interpolate_takes_integer_tensor_sizes():
    data = np.random.default_rng(0).standard_normal((1, 2, 6, 7)).astype(np.float32)
    for size in (lambda lib: (lib.tensor(3), lib.tensor(5)), lambda lib: lib.tensor(3),
                 lambda lib: [lib.tensor([4]), np.int32(2)]):
        got = ember.nn.functional.interpolate(ember.tensor(data), size=size(ember),
                                              mode="bilinear")
        want = torch.nn.functional.interpolate(torch.tensor(data), size=size(torch),
                                               mode="bilinear")
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
