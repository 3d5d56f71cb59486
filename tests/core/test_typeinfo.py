"""finfo and iinfo (core/typeinfo.py) against PyTorch."""
import torch

import ember


def test_finfo_of_complex_dtypes_and_equality_as_torch():
    for name in ("complex64", "complex128"):
        got, want = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
        assert (got.dtype, got.bits, got.eps, got.max) == (str(want.dtype), want.bits,
                                                          want.eps, want.max)
    assert ember.finfo(ember.float32) == ember.finfo(ember.float32)
    assert ember.finfo(ember.float32) != ember.finfo(ember.float64)
