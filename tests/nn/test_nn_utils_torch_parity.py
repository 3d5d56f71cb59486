"""ember.nn.utils against torch: the parametrization shape check, pad_sequence's result
dtype, the deprecated stateless.functional_call, the old spectral_norm's state-dict hooks
and metadata, and the modules' ``__all__``."""
import importlib
import sys
import warnings

import pytest
import torch

import ember


def _shape_changing(lib):
    class RightInverseDropsRows(lib.nn.Module):
        def forward(self, x):
            return x

        def right_inverse(self, x):
            return x[:2]
    return RightInverseDropsRows()


def test_register_parametrization_refuses_a_shape_change():
    messages = []
    for lib in (ember, torch):
        m = lib.nn.Linear(3, 3)
        with pytest.raises(ValueError) as info:
            lib.nn.utils.parametrize.register_parametrization(m, "weight", _shape_changing(lib))
        messages.append(str(info.value).replace(lib.__name__ + ".", ""))
        m = lib.nn.Linear(3, 3)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _shape_changing(lib),
                                                          unsafe=True)
        assert tuple(m.weight.shape) == (2, 3)
    assert messages[0] == messages[1]
    assert "unparametrized shape: Size([3, 3])" in messages[0]


@pytest.mark.parametrize("case", ["int-then-float", "float-then-int", "int-pad-value",
                                  "bool", "f64-then-f32"])
def test_pad_sequence_takes_the_first_sequence_dtype(case):
    def run(lib):
        seqs, kw = {
            "int-then-float": ([lib.tensor([1, 2]), lib.tensor([1.5])], {}),
            "float-then-int": ([lib.tensor([1.5, 2.5]), lib.tensor([3])], {}),
            "int-pad-value": ([lib.tensor([1, 2]), lib.tensor([3])], {"padding_value": 1.7}),
            "bool": ([lib.tensor([1, 2]), lib.tensor([True])],
                     {"batch_first": True, "padding_side": "left"}),
            "f64-then-f32": ([lib.tensor([1.0, 2.0], dtype=lib.float64), lib.tensor([3.0])],
                             {}),
        }[case]
        out = lib.nn.utils.rnn.pad_sequence(seqs, **kw)
        return str(out.dtype).split(".")[1], out.tolist()
    assert run(ember) == run(torch)


def test_pad_sequence_mixed_dtypes_backpropagate():
    grads = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0], dtype=lib.float64, requires_grad=True)
        lib.nn.utils.rnn.pad_sequence([x, y]).sum().backward()
        grads.append((x.grad.tolist(), str(y.grad.dtype).split(".")[1], y.grad.tolist()))
    assert grads[0] == grads[1]


def test_stateless_functional_call_is_deprecated_and_takes_one_dict():
    for lib in (ember, torch):
        m = lib.nn.Linear(2, 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = lib.nn.utils.stateless.functional_call(
                m, {"weight": lib.zeros(2, 2), "bias": lib.ones(2)}, (lib.ones(1, 2),))
        assert out.tolist() == [[1.0, 1.0]]
        assert [w.category for w in caught] == [FutureWarning]
        assert "deprecated as of PyTorch 2.0" in str(caught[0].message)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(AttributeError, match="'tuple' object has no attribute 'keys'"):
                lib.nn.utils.stateless.functional_call(m, ({},), (lib.ones(1, 2),))


def _spectral_state(lib):
    lib.manual_seed(0)
    m = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 4))
    sd = m.state_dict()
    return sorted(sd), dict(sd._metadata[""])


def test_spectral_norm_state_dict_records_its_version():
    assert _spectral_state(ember) == _spectral_state(torch)


def test_spectral_norm_loads_a_state_dict_saved_before_version_1():
    # such a dict holds ``weight`` and no ``weight_v``: the hook solves for v
    out = []
    for lib in (ember, torch):
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 4))
        w = lib.tensor([[1.0, 2.0, 0.5], [0.4, -1.0, 3.0], [2.0, 0.1, 0.2], [1.0, 1.0, 1.0]])
        u = lib.nn.functional.normalize(lib.tensor([1.0, 0.5, -0.2, 0.3]), dim=0)

        class Old(dict):
            pass
        old = Old(weight_orig=w, weight_u=u, weight=w / 3.7, bias=lib.zeros(4))
        old._metadata = {"": {"version": 1}}
        m.load_state_dict(old)
        out.append([round(x, 5) for x in m.weight_v.tolist()])
        lib.nn.utils.remove_spectral_norm(m)
        assert "spectral_norm" not in m.state_dict()._metadata[""]
    assert out[0] == out[1]


@pytest.mark.parametrize("module", ["", ".rnn", ".spectral_norm"])
def test_module_all_matches_torch(module):
    def names(lib):
        importlib.import_module(f"{lib.__name__}.nn.utils{module}")
        return sorted(sys.modules[f"{lib.__name__}.nn.utils{module}"].__all__)
    assert names(ember) == names(torch)
