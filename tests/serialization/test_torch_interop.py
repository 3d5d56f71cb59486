"""PyTorch's checkpoints both ways, PyTorch 2.13 as the oracle: torch.save -> ember.load and
ember.save -> torch.load(weights_only=True), in the zip format and the legacy one."""
import collections
import io
import math
import pickle
import zipfile

import numpy as np
import pytest
import torch

import ember
from ember import nn

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64,
          torch.complex128]
LEGACY = [False, True]


def edtype(td):
    return getattr(ember, str(td).split(".")[1])


def bits(t):
    """An ember or torch tensor's values as a NumPy array with the exact bits."""
    if isinstance(t, torch.Tensor):
        t = t.detach().resolve_conj().resolve_neg()
        return (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy()
    t = t.detach()
    return np.asarray(t.view(ember.int16) if t.dtype == ember.bfloat16 else t)


def assert_same(e, t, layout=True):
    """ember tensor ``e`` matches torch tensor ``t``: dtype, shape, bits, requires_grad, and
    (``layout``) strides and storage offset."""
    assert e.dtype.name == str(t.dtype).split(".")[1]
    assert tuple(e.shape) == tuple(t.shape)
    assert e.requires_grad == t.requires_grad
    if layout:
        assert tuple(e.stride()) == tuple(t.stride()) and e.storage_offset() == t.storage_offset()
    np.testing.assert_array_equal(bits(e), bits(t))


def tsample(dtype, shape):
    n = int(np.prod(shape)) if shape else 1
    base = torch.arange(n, dtype=torch.float64).reshape(shape) * 1.37 - 3.2
    if dtype == torch.bool:
        return base.gt(0)
    if dtype.is_complex:
        return torch.complex(base, -base / 2).to(dtype)
    return base.to(dtype)


def tsave(obj, legacy=False):
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=not legacy)
    buf.seek(0)
    return buf


def esave(obj, legacy=False):
    buf = io.BytesIO()
    ember.save(obj, buf, _use_new_zipfile_serialization=not legacy)
    buf.seek(0)
    return buf


@pytest.mark.parametrize("legacy", LEGACY, ids=["zip", "legacy"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_torch_tensors_load_bit_exact(dtype, legacy):
    base = tsample(dtype, (4, 6))
    obj = {"t": base, "scalar": tsample(dtype, ()), "empty": tsample(dtype, (0, 3)),
           "tr": base.t(), "col": base[:, 2], "step": base[::2, 1::3], "tail": base[1:, 3:]}
    out = ember.load(tsave(obj, legacy))
    assert list(out) == list(obj)
    for k, v in obj.items():
        assert_same(out[k], v, layout=k != "empty")


@pytest.mark.parametrize("legacy", LEGACY, ids=["zip", "legacy"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_ember_tensors_load_bit_exact_in_torch(dtype, legacy):
    base = ember.from_numpy(bits(tsample(dtype, (4, 6))))
    if dtype == torch.bfloat16:
        base = base.view(ember.bfloat16)
    obj = {"t": base, "scalar": base[1, 1].clone(), "empty": ember.zeros(0, 3, dtype=edtype(dtype)),
           "tr": base.t(), "col": base[:, 2], "step": base[::2, 1::3], "tail": base[1:, 3:]}
    out = torch.load(esave(obj, legacy), weights_only=True)
    assert list(out) == list(obj)
    for k, v in obj.items():
        assert_same(v, out[k], layout=k != "empty")


def test_views_of_one_storage_stay_views_both_ways():
    t = torch.arange(12.0).reshape(3, 4)
    obj = {"base": t, "row": t[1], "col": t[:, 2], "tr": t.t(), "block": t[1:, 1:3]}
    out = ember.load(tsave(obj))
    storages = {id(v.untyped_storage()) for v in out.values()}
    assert len(storages) == 1
    out["base"].mul_(-1)
    assert out["row"].tolist() == [-4.0, -5.0, -6.0, -7.0]
    assert out["col"].tolist() == [-2.0, -6.0, -10.0] and out["tr"][3, 2].item() == -11.0
    assert out["block"].tolist() == [[-5.0, -6.0], [-9.0, -10.0]]

    e = ember.arange(12.0).reshape(3, 4)
    back = torch.load(esave({"base": e, "row": e[1], "tr": e.t(), "block": e[1:, 1:3]}),
                      weights_only=True)
    assert len({v.untyped_storage().data_ptr() for v in back.values()}) == 1
    back["base"].mul_(-1)
    assert back["row"].tolist() == [-4.0, -5.0, -6.0, -7.0]
    assert back["block"].tolist() == [[-5.0, -6.0], [-9.0, -10.0]]
    names = zipfile.ZipFile(esave({"a": e, "b": e[1:], "c": e.t()})).namelist()
    assert [n for n in names if "/data/" in n] == ["archive/data/0"]   # written once


def test_views_of_one_storage_as_different_dtypes_are_refused():
    e = ember.zeros(4)
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        ember.save([e, e.view(ember.int32)], io.BytesIO())


@pytest.mark.parametrize("legacy", LEGACY, ids=["zip", "legacy"])
def test_parameters_and_requires_grad_both_ways(legacy):
    obj = {"p": torch.nn.Parameter(torch.randn(3)),
           "frozen": torch.nn.Parameter(torch.randn(2), requires_grad=False),
           "leaf": torch.randn(2, requires_grad=True), "plain": torch.randn(2)}
    out = ember.load(tsave(obj, legacy))
    assert type(out["p"]) is nn.Parameter and out["p"].requires_grad and out["p"].is_leaf
    assert type(out["frozen"]) is nn.Parameter and not out["frozen"].requires_grad
    assert type(out["leaf"]) is ember.Tensor and out["leaf"].requires_grad
    assert type(out["plain"]) is ember.Tensor and not out["plain"].requires_grad
    for k, v in obj.items():
        assert_same(out[k], v)
    back = torch.load(esave(out, legacy), weights_only=True)
    for k, v in obj.items():
        assert type(back[k]) is type(v)
        assert_same(out[k], back[k])


class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.norm = torch.nn.LayerNorm(4 * 5 * 5)
        self.fc = torch.nn.Linear(4 * 5 * 5, 3)
        self.fc.weight = torch.nn.Parameter(self.fc.weight.detach().clone())

    def forward(self, x):
        return self.fc(self.norm(torch.relu(self.bn(self.conv(x))).flatten(1)))


class EmberNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.norm = nn.LayerNorm(4 * 5 * 5)
        self.fc = nn.Linear(4 * 5 * 5, 3)

    def forward(self, x):
        return self.fc(self.norm(ember.relu(self.bn(self.conv(x))).flatten(1)))


def _trained_torch_net():
    torch.manual_seed(0)
    tnet = TorchNet()
    for _ in range(2):                  # running stats and num_batches_tracked move
        tnet(torch.randn(6, 2, 5, 5))
    return tnet.eval()


def test_torch_weights_load_into_the_ember_model():
    tnet = _trained_torch_net()
    sd = ember.load(tsave(tnet.state_dict()))
    assert type(sd) is collections.OrderedDict and list(sd) == list(tnet.state_dict())
    assert sd._metadata == tnet.state_dict()._metadata
    assert sd["bn.num_batches_tracked"].dtype == ember.int64
    enet = EmberNet().eval()
    enet.load_state_dict(sd)
    x = np.random.default_rng(0).standard_normal((4, 2, 5, 5)).astype(np.float32)
    with torch.no_grad():
        expected = tnet(torch.from_numpy(x)).numpy()
    with ember.no_grad():
        got = enet(ember.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_ember_weights_load_into_the_torch_model():
    tnet = _trained_torch_net()
    enet = EmberNet().eval()
    enet.load_state_dict(ember.load(tsave(tnet.state_dict())))
    with ember.no_grad():
        for p in enet.parameters():     # move away from torch's values, then send them back
            p.mul_(1.5)
    fresh = TorchNet().eval()
    fresh.load_state_dict(torch.load(esave(enet.state_dict()), weights_only=True))
    x = np.random.default_rng(1).standard_normal((4, 2, 5, 5)).astype(np.float32)
    with torch.no_grad():
        expected = fresh(torch.from_numpy(x)).numpy()
    with ember.no_grad():
        got = enet(ember.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def _steps(params, opt, inputs, lib):
    for x in inputs:
        opt.zero_grad()
        loss = sum((p * lib.from_numpy(x[:p.numel()].reshape(p.shape))).sum() ** 2
                   for p in params)
        loss.backward()
        opt.step()


@pytest.mark.parametrize("name", ["Adam", "SGD"])
def test_optimizer_state_continues_across_frameworks(name):
    rng = np.random.default_rng(2)
    init = [rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)]
    inputs = [rng.standard_normal(12).astype(np.float32) for _ in range(4)]
    kwargs = {"lr": 0.01} if name == "Adam" else {"lr": 0.01, "momentum": 0.9}
    tp = [torch.nn.Parameter(torch.from_numpy(a.copy())) for a in init]
    topt = getattr(torch.optim, name)(tp, **kwargs)
    _steps(tp, topt, inputs[:2], torch)
    # torch -> ember: ember continues where torch stopped
    ep = [nn.Parameter(ember.from_numpy(p.detach().numpy().copy())) for p in tp]
    eopt = getattr(ember.optim, name)(ep, **kwargs)
    eopt.load_state_dict(ember.load(tsave(topt.state_dict())))
    _steps(ep, eopt, inputs[2:], ember)
    _steps(tp, topt, inputs[2:], torch)
    for a, b in zip(ep, tp):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    # ember -> torch
    sd = torch.load(esave(eopt.state_dict()), weights_only=True)
    assert sd["param_groups"][0]["params"] == [0, 1]
    topt2 = getattr(torch.optim, name)([torch.nn.Parameter(p.detach().clone()) for p in tp],
                                       **kwargs)
    topt2.load_state_dict(sd)
    for i, st in topt.state_dict()["state"].items():
        for k, v in st.items():
            if isinstance(v, torch.Tensor):
                np.testing.assert_allclose(sd["state"][i][k].numpy(), v.numpy(), rtol=1e-5,
                                           atol=1e-6)


VALUES = {"none": None, "t": True, "i": -7, "big": 2 ** 100, "float": 0.1, "inf": math.inf,
          "s": "ünï", "bytes": b"\x00\xff", "tuple": (1, (2.5, "x"), []),
          "od": collections.OrderedDict(b=1, a=2), "int_keys": {0: "a", 3: "b"},
          "set": {1, 2}, "complex": 1 + 2j, "bytearray": bytearray(b"ab")}


@pytest.mark.parametrize("legacy", LEGACY, ids=["zip", "legacy"])
def test_python_values_and_nesting_both_ways(legacy):
    tobj = dict(VALUES, size=torch.Size([2, 3]), dtype=torch.bfloat16, device=torch.device("cpu"),
                nested=[{"w": torch.ones(2)}, (torch.zeros(1, dtype=torch.int64),)])
    out = ember.load(tsave(tobj, legacy))
    for k, v in VALUES.items():
        assert out[k] == v and type(out[k]) is type(v), k
    assert out["size"] == ember.Size([2, 3]) and type(out["size"]) is ember.Size
    assert out["dtype"] is ember.bfloat16 and out["device"] == ember.device("cpu")
    assert out["nested"][0]["w"].tolist() == [1.0, 1.0]
    assert out["nested"][1][0].dtype == ember.int64
    back = torch.load(esave(out, legacy), weights_only=True)
    for k, v in VALUES.items():
        assert back[k] == v and type(back[k]) is type(v), k
    assert back["size"] == torch.Size([2, 3]) and type(back["size"]) is torch.Size
    assert back["dtype"] is torch.bfloat16 and back["device"] == torch.device("cpu")
    assert torch.equal(back["nested"][0]["w"], torch.ones(2))
    nan = ember.load(tsave({"nan": math.nan}))["nan"]
    assert math.isnan(nan)


def test_same_tensor_twice_is_one_object_both_ways():
    t = torch.randn(3)
    out = ember.load(tsave({"a": t, "b": [t, (t,)]}))
    assert out["a"] is out["b"][0] is out["b"][1][0]
    back = torch.load(esave(out), weights_only=True)
    assert back["a"] is back["b"][0] is back["b"][1][0]


def test_conj_and_neg_bits_load_as_values():
    z = torch.tensor([1 + 2j, -3 + 0.5j])
    obj = {"conj": z.conj(), "plain": z}
    out = ember.load(tsave(obj))
    for k, v in obj.items():
        assert_same(out[k], v, layout=False)
    neg = z.conj().imag                 # a float view with the neg bit (saved on its own:
    assert_same(ember.load(tsave(neg)), neg, layout=False)     # torch refuses mixed views)


def test_meta_tensors_both_ways():
    out = ember.load(tsave({"m": torch.empty(2, 3, dtype=torch.float16, device="meta")}))
    assert out["m"].device.type == "meta" and out["m"].shape == (2, 3)
    assert out["m"].dtype == ember.float16
    back = torch.load(esave({"m": ember.empty(4, 1, device="meta")}), weights_only=True)
    assert back["m"].is_meta and back["m"].shape == (4, 1)


def test_tensor_attributes_and_subclasses():
    t = torch.ones(2)
    t.note = "kept"
    out = ember.load(tsave(t))
    assert type(out) is ember.Tensor and out.note == "kept" and out.tolist() == [1.0, 1.0]
    e = ember.zeros(2)
    e.note = "back"
    back = torch.load(esave(e), weights_only=True)
    assert back.note == "back" and back.tolist() == [0.0, 0.0]


def test_a_dtype_ember_lacks_is_named():
    name = next(n for n in ("float8_e4m3fn", "float8_e5m2") if not hasattr(ember, n))
    obj = {"t": torch.zeros(2, dtype=getattr(torch, name))}
    with pytest.raises(RuntimeError, match=f"torch.{name}"):
        ember.load(tsave(obj))


def test_pickled_torch_module_loads_as_an_ember_module():
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.GELU(), torch.nn.Linear(4, 2))
    buf = tsave(tnet)
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.container.Sequential"):
        ember.load(buf)
    buf.seek(0)
    enet = ember.load(buf, weights_only=False)
    assert type(enet) is nn.Sequential and type(enet[0]) is nn.Linear and type(enet[1]) is nn.GELU
    assert type(enet[0].weight) is nn.Parameter and enet[0].in_features == 3
    x = np.random.default_rng(3).standard_normal((5, 3)).astype(np.float32)
    with torch.no_grad():
        expected = tnet(torch.from_numpy(x)).numpy()
    with ember.no_grad():
        np.testing.assert_allclose(enet(ember.from_numpy(x)).numpy(), expected, rtol=1e-5,
                                   atol=1e-6)
    again = ember.load(esave(enet), weights_only=False)      # ember's own module pickles
    assert type(again) is nn.Sequential and ember.equal(again[2].bias, enet[2].bias)
    # allow-listing ember's classes admits PyTorch's names for them under weights_only
    buf.seek(0)
    with ember.serialization.safe_globals([nn.Sequential, nn.Linear, nn.GELU, set]):
        assert type(ember.load(buf)[0]) is nn.Linear


def test_legacy_storage_views_and_module_records():
    # the legacy pickle names module classes by persistent id ("module", cls, file, source)
    tnet = torch.nn.Linear(2, 2)
    out = ember.load(tsave(tnet, legacy=True), weights_only=False)
    assert type(out) is nn.Linear
    assert ember.equal(out.weight.detach(), ember.from_numpy(tnet.weight.detach().numpy()))


def test_checkpoint_on_another_device_names_its_location():
    dev = "reference"
    if not ember.get_device_module(dev).is_available():
        pytest.skip("the reference plugin (ember-reference) is not installed")
    e = ember.arange(4.0, device=dev)
    buf = esave({"x": e, "view": e[1:]})
    with zipfile.ZipFile(buf) as z:
        assert b"reference:0" in z.read("archive/data.pkl")
    buf.seek(0)
    out = ember.load(buf)
    assert out["x"].device == e.device and out["view"].tolist() == [1.0, 2.0, 3.0]
    buf.seek(0)
    back = torch.load(buf, map_location="cpu", weights_only=True)
    assert back["view"].tolist() == [1.0, 2.0, 3.0]
