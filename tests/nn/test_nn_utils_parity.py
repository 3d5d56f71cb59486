"""ember.nn.utils odds and ends against torch: pad_sequence broadcasting and errors,
PackedSequence.is_pinned, parameters_to_vector over a tensor, parametrize messages."""
import numpy as np
import pytest
import torch

import ember


def test_pad_sequence_broadcasts_trailing_dims_like_torch():
    e = ember.nn.utils.rnn.pad_sequence([ember.zeros(2, 3), ember.ones(1, 1)])
    t = torch.nn.utils.rnn.pad_sequence([torch.zeros(2, 3), torch.ones(1, 1)])
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_pad_sequence_mismatch_and_0d_errors():
    with pytest.raises(RuntimeError) as te:
        torch.nn.utils.rnn.pad_sequence([torch.zeros(2, 3), torch.zeros(1, 4)])
    with pytest.raises(RuntimeError) as ee:
        ember.nn.utils.rnn.pad_sequence([ember.zeros(2, 3), ember.zeros(1, 4)])
    assert str(ee.value) == str(te.value)
    with pytest.raises(RuntimeError):
        torch.nn.utils.rnn.pad_sequence([torch.tensor(1.0)])
    with pytest.raises(RuntimeError):
        ember.nn.utils.rnn.pad_sequence([ember.tensor(1.0)])


def test_packed_sequence_is_pinned():
    p = ember.nn.utils.rnn.pack_sequence([ember.ones(3, 2), ember.ones(1, 2)])
    q = torch.nn.utils.rnn.pack_sequence([torch.ones(3, 2), torch.ones(1, 2)])
    assert p.is_pinned() == q.is_pinned()


def test_parameters_to_vector_iterates_a_tensor():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    e = ember.nn.utils.parameters_to_vector(ember.tensor(a))
    t = torch.nn.utils.parameters_to_vector(torch.tensor(a))
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_parametrize_shape_error_message():
    def run(lib):
        class Head(lib.nn.Module):
            def forward(self, x):
                return x[:2]
        with pytest.raises(ValueError) as info:
            lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(3, 3), "weight",
                                                              Head())
        return str(info.value).replace("torch.", "").replace("ember.", "")
    assert run(ember) == run(torch)
