"""Layers at PyTorch's module paths (pickles and safe-globals lists name them there), the
global module hooks, and the deprecated spellings PyTorch still accepts."""
import importlib
import pickle

import numpy as np
import pytest
import torch

import ember
from ember import nn

MOVED = [("activation", "MultiheadAttention"), ("linear", "NonDynamicallyQuantizableLinear"),
         ("linear", "LazyLinear"), ("conv", "LazyConv1d"), ("conv", "LazyConvTranspose3d"),
         ("loss", "CTCLoss"), ("loss", "TripletMarginLoss"), ("loss", "MultiLabelMarginLoss"),
         ("module", "Module"), ("pooling", "FractionalMaxPool2d"), ("pooling", "LPPool1d"),
         ("pooling", "MaxUnpool3d"), ("padding", "ReflectionPad2d")]


@pytest.mark.parametrize("module,name", MOVED)
def test_class_at_pytorchs_path(module, name):
    cls = getattr(importlib.import_module(f"ember.nn.modules.{module}"), name)
    tcls = getattr(importlib.import_module(f"torch.nn.modules.{module}"), name)
    assert cls.__module__ == tcls.__module__.replace("torch", "ember")
    assert cls.__qualname__ == tcls.__qualname__


def test_pickled_model_records_pytorch_paths():
    model = nn.Sequential(nn.MultiheadAttention(4, 2), nn.CTCLoss(), nn.ZeroPad2d(1))
    data = pickle.dumps(model)
    assert b"ember.nn.modules.activation" in data and b"ember.nn.modules.loss" in data
    again = pickle.loads(data)
    assert type(again[0].out_proj).__name__ == "NonDynamicallyQuantizableLinear"


@pytest.mark.parametrize("name,args", [("LazyConv3d", (2, 3)), ("LazyConvTranspose1d", (4, 2)),
                                       ("LazyConvTranspose2d", (4, 2, 2)),
                                       ("LazyConvTranspose3d", (3, 2, 2))])
def test_lazy_conv_variants_match_torch_shapes(name, args):
    nd = int(name[-2])
    shape = (2, 3) + (5,) * nd
    layer = getattr(nn, name)(*args)
    out = layer(ember.randn(*shape))
    tout = getattr(torch.nn, name)(*args)(torch.randn(*shape))
    assert tuple(out.shape) == tuple(tout.shape)
    assert type(layer).__name__ == name.replace("Lazy", "")
    assert tuple(layer.weight.shape) == tuple(getattr(torch.nn, name[4:])(
        3, *args).weight.shape)


def test_global_forward_hook_with_kwargs_and_backward_pre_hook():
    seen = []
    h1 = nn.modules.module.register_module_forward_hook(
        lambda m, args, kwargs, out: seen.append(("fwd", type(m).__name__, kwargs)),
        with_kwargs=True)
    h2 = nn.modules.module.register_module_full_backward_pre_hook(
        lambda m, grad_out: seen.append(("bwd", type(m).__name__)))
    try:
        lin = nn.Linear(3, 2)
        lin(ember.randn(4, 3, requires_grad=True)).sum().backward()
    finally:
        h1.remove()
        h2.remove()
    assert ("fwd", "Linear", {}) in seen and ("bwd", "Linear") in seen
    seen.clear()
    nn.Linear(3, 2)(ember.randn(1, 3))
    assert not seen


def test_deprecated_spellings_warn_and_work():
    t = ember.empty(3, 4)
    with pytest.warns(FutureWarning, match="nn.init.normal` is now deprecated"):
        nn.init.normal(t, 0.0, 1.0)
    with pytest.warns(FutureWarning, match="min_value"):
        layer = nn.Hardtanh(min_value=-2.0)
    assert layer.min_val == -2.0
    with pytest.raises(AssertionError, match=r"max_val \(1.0\) must be greater than min_val"):
        nn.Hardtanh(2.0, 1.0)
    with pytest.warns(FutureWarning, match="NLLLoss2d"):
        nn.NLLLoss2d()
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        nn.utils.clip_grad_norm([], 1.0)
    with pytest.warns(FutureWarning, match="apply_permutation"):
        out = nn.modules.rnn.apply_permutation(ember.arange(6).reshape(2, 3),
                                               ember.tensor([2, 0, 1]))
    assert out.tolist() == [[2, 0, 1], [5, 3, 4]]


def test_consume_prefix_in_state_dict():
    tm = torch.nn.Sequential(torch.nn.Linear(2, 2))
    em = nn.Sequential(nn.Linear(2, 2))
    for m, util in ((tm, torch.nn.modules.utils), (em, nn.modules.utils)):
        sd = {f"module.{k}": v for k, v in m.state_dict().items()}
        util.consume_prefix_in_state_dict_if_present(sd, "module.")
        assert sorted(sd) == ["0.bias", "0.weight"]


def test_packed_sequence_base_and_bind():
    from ember.nn.utils import rnn
    assert issubclass(rnn.PackedSequence, rnn.PackedSequence_)
    assert rnn.bind(None, len) is None and rnn.bind([1, 2], len) == 2


def test_module_to_empty_from_meta():
    layer = nn.Linear(3, 4, device="meta").to_empty(device="cpu")
    assert layer.weight.device.type == "cpu" and isinstance(layer.weight, nn.Parameter)
    skipped = nn.utils.skip_init(nn.Linear, 5, 2)
    assert tuple(skipped.weight.shape) == (2, 5)
    with pytest.raises(RuntimeError, match="Expected a Module"):
        nn.utils.skip_init(int)


def test_memory_format_conversion():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU())
    nn.utils.convert_conv2d_weight_memory_format(model, ember.channels_last)
    assert model[0].weight.is_contiguous(memory_format=ember.channels_last)
    assert np.allclose(model[0](ember.ones(1, 3, 5, 5)).shape, (1, 4, 3, 3))


def test_padding_layers_match_torch():
    rng = np.random.default_rng(0)
    for name, pad, dims in [("ReflectionPad1d", 2, 3), ("ReflectionPad2d", (1, 2, 0, 1), 4),
                            ("ReflectionPad3d", 1, 5), ("ReplicationPad1d", (3, 1), 2),
                            ("ReplicationPad2d", 2, 3), ("ReplicationPad3d", (1, 0, 2, 1, 0, 1), 5),
                            ("CircularPad1d", 1, 3), ("CircularPad2d", (1, 2, 2, 0), 4),
                            ("CircularPad3d", 1, 5), ("ConstantPad1d", 2, 3),
                            ("ConstantPad2d", (1, 0, 2, 3), 4), ("ConstantPad3d", 1, 4),
                            ("ZeroPad1d", (0, 2), 2), ("ZeroPad2d", 1, 4), ("ZeroPad3d", 2, 5)]:
        x = rng.standard_normal((2, 3, 4, 5, 6)[:dims])
        args = (pad, 1.5) if name.startswith("Constant") else (pad,)
        e_layer, t_layer = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
        assert repr(e_layer) == repr(t_layer)
        ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        e, t = e_layer(ex), t_layer(tx)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy())
        (e * e).sum().backward()
        (t * t).sum().backward()
        np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy())
    with pytest.raises(ValueError, match="expected 3D or 4D input"):
        nn.CircularPad2d(1)(ember.ones(2, 2))


@pytest.mark.parametrize("module,name,sub", [("pooling", "_AdaptiveAvgPoolNd", "AdaptiveAvgPool2d"),
                                             ("pooling", "_AvgPoolNd", "AvgPool1d"),
                                             ("utils", "_quadruple", None)])
def test_private_bases_third_party_code_imports(module, name, sub):
    obj = getattr(importlib.import_module(f"ember.nn.modules.{module}"), name)
    tobj = getattr(importlib.import_module(f"torch.nn.modules.{module}"), name)
    if sub is None:
        assert obj(3) == tobj(3) and obj((1, 2, 3, 4)) == tobj((1, 2, 3, 4))
    else:
        assert issubclass(getattr(nn, sub), obj) and issubclass(getattr(torch.nn, sub), tobj)
