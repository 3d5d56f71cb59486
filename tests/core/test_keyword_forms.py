"""PyTorch's keyword forms of method and factory arguments that research code passes by
name: ``x.view(dtype=)``/``view(size=)``, ``reshape(shape=)``, ``permute(dims=)``,
``expand(size=)``, ``repeat(repeats=)``, the dtype shorthands' ``memory_format=``, and
``layout=``/``pin_memory=`` on the factories; each compared with torch."""
import numpy as np
import pytest
import torch

import ember

CASES = [
    lambda m, x: x.view(dtype=m.int32),
    lambda m, x: x.view(size=(4, 3)),
    lambda m, x: x.view(size=[-1]),
    lambda m, x: x.reshape(shape=(2, 6)),
    lambda m, x: x.permute(dims=(1, 0)),
    lambda m, x: x[:1].expand(size=(5, 4)),
    lambda m, x: x.repeat(repeats=(2, 1)),
    lambda m, x: x.t().float(memory_format=m.contiguous_format),    # the same dtype: self
    lambda m, x: x.t().double(memory_format=m.contiguous_format),
    lambda m, x: x.double(memory_format=m.preserve_format),
    lambda m, x: x.long(memory_format=m.contiguous_format),
    lambda m, x: m.arange(5, layout=m.strided, pin_memory=False),
    lambda m, x: m.full((2,), 1.5, layout=m.strided, pin_memory=False),
    lambda m, x: m.zeros_like(x, layout=m.strided, pin_memory=False),
    lambda m, x: m.ones_like(x, pin_memory=False),
    lambda m, x: m.empty_like(x, layout=m.strided).fill_(2),
    lambda m, x: m.full_like(x, 2, layout=m.strided, memory_format=m.preserve_format),
    lambda m, x: m.randint(5, (3,), layout=m.strided, pin_memory=False).clamp(0, 0),
]


@pytest.mark.parametrize("case", CASES)
def test_keyword_forms_match_torch(case):
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    got, want = case(ember, ember.tensor(data)), case(torch, torch.tensor(data))
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype)[6:] == str(want.dtype)[6:]
    assert got.is_contiguous() == want.is_contiguous()
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("call", [
    lambda m, x: x.reshape((2, 6), shape=(2, 6)),       # given twice
    lambda m, x: x.permute(order=(1, 0)),               # not PyTorch's name
    lambda m, x: x.view(size=(4, 3), dtype=m.int32),
    lambda m, x: x.repeat((1, 1), repeats=(2, 1)),
])
def test_a_doubled_or_unknown_keyword_is_a_type_error(call):
    for m in (ember, torch):
        with pytest.raises(TypeError):
            call(m, m.ones(3, 4))
