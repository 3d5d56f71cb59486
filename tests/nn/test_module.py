"""nn.Module against torch.nn.Module: registration and its errors, walking, state_dict keys
and load errors, conversion, hooks, repr, pickling and deepcopy."""
import copy
import pickle
import re
from collections import OrderedDict

import pytest
import torch

import ember
from ember import nn


def build(lib):
    """The same architecture in either library: nested containers, a tied weight, a
    persistent and a non-persistent buffer."""
    return (TorchNet if lib is torch else EmberNet)(lib)


class _Net:
    def __init__(self, lib):
        super().__init__()
        self.embed = lib.nn.Embedding(7, 4, padding_idx=0)
        self.body = lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.GELU(),
                                      lib.nn.Linear(5, 4, bias=False))
        self.heads = lib.nn.ModuleDict({"a": lib.nn.Linear(4, 7)})
        self.heads["a"].weight = self.embed.weight          # tied
        self.register_buffer("steps", lib.zeros((), dtype=lib.int64))
        self.register_buffer("cache", lib.ones(3), persistent=False)

    def forward(self, idx):
        return self.heads["a"](self.body(self.embed(idx)))


class TorchNet(_Net, torch.nn.Module):
    pass


class EmberNet(_Net, nn.Module):
    pass


TorchNet.__name__ = EmberNet.__name__ = "Net"      # reprs and error texts name the class


@pytest.fixture
def pair(bridge):
    t = build(torch)
    e = build(ember)
    bridge.copy_weights(t, e)
    return e, t


def test_keys_match_torch(pair):
    e, t = pair
    assert list(e.state_dict()) == list(t.state_dict())
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in t.named_parameters(remove_duplicate=False)]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in e.named_children()] == [n for n, _ in t.named_children()]
    assert [n for n, _ in e.named_parameters(prefix="m", recurse=False)] == []
    assert [n for n, _ in e.body.named_parameters(prefix="m")] == \
        [n for n, _ in t.body.named_parameters(prefix="m")]
    assert dict(e.state_dict()._metadata) == dict(t.state_dict()._metadata)
    assert len(list(e.parameters())) == len(list(t.parameters())) == 5


def test_forward_and_grads_match(pair, bridge):
    e, t = pair
    idx = [[1, 0, 3], [6, 2, 0]]
    ye, yt = e(ember.tensor(idx)), t(torch.tensor(idx))
    bridge.close(ye, yt)
    ye.square().sum().backward()
    yt.square().sum().backward()
    for (name, pe), (_, pt) in zip(e.named_parameters(), t.named_parameters()):
        bridge.close(pe.grad, pt.grad, 1e-4)


def test_registration_errors():
    m = nn.Module()
    m.w = nn.Parameter(ember.ones(2))
    with pytest.raises(TypeError, match=re.escape(
            "cannot assign 'ember.FloatTensor' as parameter 'w' (torch.nn.Parameter or None "
            "expected)")):
        m.w = ember.ones(2)
    with pytest.raises(TypeError, match="object to parameter 'x'"):
        m.register_parameter("x", ember.ones(1))
    with pytest.raises(KeyError, match="contain"):
        m.register_parameter("a.b", None)
    with pytest.raises(KeyError, match="empty string"):
        m.register_buffer("", None)
    with pytest.raises(KeyError, match="attribute 'forward' already exists"):
        m.register_buffer("forward", ember.ones(1))
    with pytest.raises(TypeError, match="buffer name should be a string"):
        m.register_buffer(3, ember.ones(1))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("c", 3)
    with pytest.raises(ValueError, match="non-leaf"):
        m.register_parameter("y", _non_leaf_parameter())
    m.sub = nn.Linear(1, 1)
    with pytest.raises(TypeError, match="as child module 'sub'"):
        m.sub = 3
    m.sub = None
    assert m._modules["sub"] is None
    m.register_buffer("b", ember.ones(1))
    with pytest.raises(TypeError, match="as buffer 'b'"):
        m.b = 3
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        m.nope
    del m.w
    assert "w" not in m._parameters

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(ember.ones(1))
    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()
    with pytest.raises(TypeError, match="unexpected keyword argument 'x'"):
        nn.Module(x=1)


def _non_leaf_parameter():
    p = nn.Parameter(ember.ones(1))
    q = p * 2
    q.__class__ = nn.Parameter       # a Parameter object that has a grad_fn
    return q


def test_reassignment_moves_between_stores():
    m = nn.Module()
    m.x = nn.Parameter(ember.ones(1))
    with pytest.raises(TypeError, match="as parameter 'x'"):     # as in torch
        m.x = nn.Linear(1, 1)
    del m.x
    m.x = nn.Buffer(ember.ones(2))
    assert "x" not in m._parameters and "x" in m._buffers
    m.x = nn.Linear(1, 1)
    assert "x" not in m._buffers and "x" in m._modules
    m.x = nn.Parameter(ember.ones(1))
    assert "x" not in m._modules and "x" in m._parameters
    del m.x
    m.x = nn.Buffer(ember.ones(2), persistent=False)
    assert "x" in m._buffers and "x" not in m._modules and "x" in m._non_persistent_buffers_set
    assert "x" not in m.state_dict()
    m.x = ember.zeros(2)                   # stays a (non-persistent) buffer
    assert "x" in m._non_persistent_buffers_set
    m.register_buffer("x", ember.zeros(2))
    assert "x" in m.state_dict()


def test_load_state_dict_errors_match_torch(pair, bridge):
    e, t = pair
    bad_t = {k: v for k, v in t.state_dict().items() if k != "body.0.bias"}
    bad_t["body.0.weight"] = torch.zeros(3, 3)
    bad_t["extra.thing"] = torch.zeros(1)
    bad_e = {k: bridge.from_torch(v) for k, v in bad_t.items()}
    with pytest.raises(RuntimeError) as te:
        t.load_state_dict(bad_t)
    with pytest.raises(RuntimeError) as ee:
        e.load_state_dict(bad_e)
    assert bridge.torch_text(str(ee.value)) == str(te.value)
    r_e = e.load_state_dict(bad_e | {"body.0.weight": ember.zeros(5, 4)}, strict=False)
    r_t = t.load_state_dict(bad_t | {"body.0.weight": torch.zeros(5, 4)}, strict=False)
    assert r_e.missing_keys == r_t.missing_keys and r_e.unexpected_keys == r_t.unexpected_keys
    assert repr(e.load_state_dict(e.state_dict())) == "<All keys matched successfully>"
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        e.load_state_dict([1])


def test_load_copies_in_place_and_assign():
    m = nn.Linear(3, 2)
    w = m.weight
    sd = {"weight": ember.ones(2, 3, dtype=ember.float64), "bias": ember.zeros(2)}
    m.load_state_dict(sd)
    assert m.weight is w and m.weight.dtype == ember.float32
    assert m.weight.sum().item() == 6
    m.load_state_dict(sd, assign=True)
    assert m.weight is not w and isinstance(m.weight, nn.Parameter)
    assert m.weight.dtype == ember.float64 and m.weight.requires_grad


def test_extra_state_and_state_dict_hooks():
    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.value = 3

        def get_extra_state(self):
            return {"value": self.value}

        def set_extra_state(self, state):
            self.value = state["value"]
    outer = nn.Sequential(WithExtra())
    sd = outer.state_dict()
    assert list(sd) == ["0._extra_state"]
    fresh = nn.Sequential(WithExtra())
    fresh[0].value = 0
    fresh.load_state_dict(sd)
    assert fresh[0].value == 3
    with pytest.raises(RuntimeError, match='Missing key.*"0._extra_state"'):
        fresh.load_state_dict({})
    seen = []
    h = outer.register_state_dict_post_hook(lambda m, d, p, meta: seen.append(p))
    outer.register_load_state_dict_post_hook(lambda m, keys: keys.missing_keys.clear())
    outer.state_dict(prefix="top.")
    assert seen == ["top."]
    h.remove()
    outer.state_dict()
    assert seen == ["top."]
    assert outer.load_state_dict({}).missing_keys == []


def test_to_keeps_parameter_identity():
    m = nn.Sequential(nn.Linear(2, 3))
    m.register_buffer("count", ember.zeros(1, dtype=ember.int64))
    w = m[0].weight
    m(ember.randn(4, 2)).sum().backward()
    held = list(m.parameters())             # what an optimizer would hold
    assert m.to(ember.float64) is m
    assert m[0].weight is w and isinstance(w, nn.Parameter) and w.dtype == ember.float64
    assert w.grad.dtype == ember.float64 and held[0] is w
    assert m.count.dtype == ember.int64
    m.half()
    assert w.dtype == ember.float16
    m.float().to("cpu").cpu()
    assert w.dtype == ember.float32 and w.requires_grad and w.is_leaf
    m.to(ember.zeros(1, dtype=ember.float64))
    assert w.dtype == ember.float64
    m.to(device="cpu", dtype=ember.bfloat16)
    assert w.dtype == ember.bfloat16
    m.type(ember.float32)
    assert m.count.dtype == ember.float32
    with pytest.raises(TypeError, match="only accepts floating point"):
        m.to(ember.int32)


def test_modes_grads_and_walking():
    m = nn.Sequential(nn.Linear(2, 2), nn.Dropout(), nn.Sequential(nn.ReLU()))
    assert all(x.training for x in m.modules())
    assert m.eval() is m and not any(x.training for x in m.modules())
    with pytest.raises(ValueError, match="boolean"):
        m.train("yes")
    m.train()
    m(ember.randn(3, 2)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert m[0].weight.grad.abs().sum().item() == 0
    m.zero_grad()
    assert m[0].weight.grad is None
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    names = []
    m.apply(lambda mod: names.append(type(mod).__name__))
    assert names == ["Linear", "Dropout", "ReLU", "Sequential", "Sequential"]
    assert m.get_submodule("2.0").__class__.__name__ == "ReLU"
    assert m.get_parameter("0.bias") is m[0].bias
    with pytest.raises(AttributeError, match="has no attribute `9`"):
        m.get_submodule("9")
    with pytest.raises(AttributeError, match="not an nn.Parameter"):
        m.get_parameter("0.in_features")
    assert "weight" in dir(m[0]) and "0" not in dir(m) and "forward" in dir(m)


def test_repr_matches_torch(pair, bridge):
    e, t = pair
    assert bridge.torch_text(repr(e)) == repr(t)
    assert repr(nn.Module()) == "Module()"

    class Multi(nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"
    assert repr(Multi()) == "Multi(\n  a=1\n  b=2\n)"


def test_forward_hooks():
    m = nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: calls.append("pre") or (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append("post") or out + 1)
    h3 = m.register_forward_pre_hook(lambda mod, args: calls.append("first"), prepend=True)
    out = m(ember.randn(3, 2))
    assert calls == ["first", "pre", "post"]
    assert ember.allclose(out, m.bias.detach().expand(3, 2) + 1)
    for h in (h1, h2, h3):
        h.remove()
    calls.clear()
    m(ember.randn(1, 2))
    assert calls == []

    def kw_pre(mod, args, kwargs):
        return args, {"scale": 2}

    class Scaled(nn.Module):
        def forward(self, x, scale=1):
            return x * scale
    s = Scaled()
    s.register_forward_pre_hook(kw_pre, with_kwargs=True)
    s.register_forward_hook(lambda mod, args, kwargs, out: out + kwargs["scale"],
                            with_kwargs=True)
    assert s(ember.ones(1)).item() == 4
    s.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None"):
        s(ember.ones(1))


def test_always_call_hook_runs_when_forward_raises():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")
    b = Boom()
    seen = []
    b.register_forward_hook(lambda m, a, o: seen.append("always"), always_call=True)
    b.register_forward_hook(lambda m, a, o: seen.append("normal"))
    with pytest.raises(ValueError, match="boom"):
        b(ember.ones(1))
    assert seen == ["always"]


def test_global_forward_hook():
    from ember.nn.modules.module import register_module_forward_hook
    seen = []
    h = register_module_forward_hook(lambda m, a, o: seen.append(type(m).__name__))
    try:
        nn.Sequential(nn.ReLU())(ember.ones(1))
    finally:
        h.remove()
    assert seen == ["ReLU", "Sequential"]


def test_full_backward_hooks_match_torch(bridge):
    records = {}

    def make(lib, key):
        m = lib.nn.Linear(3, 2)
        records[key] = []
        m.register_full_backward_pre_hook(lambda mod, go: records[key].append(("pre", go)))
        m.register_full_backward_hook(
            lambda mod, gi, go: records[key].append(("full", gi, go)) or
            tuple(None if g is None else g * 2 for g in gi))
        return m
    t, e = make(torch, "t"), make(ember, "e")
    bridge.copy_weights(t, e)
    xt = torch.randn(4, 3, requires_grad=True)
    xe = bridge.from_torch(xt).requires_grad_()
    (t(xt) ** 2).sum().backward()
    (e(xe) ** 2).sum().backward()
    assert [r[0] for r in records["e"]] == [r[0] for r in records["t"]] == ["pre", "full"]
    bridge.close(records["e"][0][1][0], records["t"][0][1][0])
    bridge.close(records["e"][1][1][0], records["t"][1][1][0])
    bridge.close(xe.grad, xt.grad)                 # doubled by the hook in both
    bridge.close(e.weight.grad, t.weight.grad)


def test_backward_hook_without_input_grad():
    m = nn.Linear(2, 1)
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go)))
    m(ember.ones(3, 2)).sum().backward()
    assert seen[0][0] == (None,) and tuple(seen[0][1][0].shape) == (3, 1)


def test_pickle_and_deepcopy_keep_classes_and_ties(pair, bridge):
    e, _ = pair
    for clone in (copy.deepcopy(e), pickle.loads(pickle.dumps(e))):
        assert type(clone) is type(e)
        assert isinstance(clone.embed.weight, nn.Parameter)
        assert clone.heads["a"].weight is clone.embed.weight
        assert clone.embed.weight is not e.embed.weight
        assert "cache" in clone._non_persistent_buffers_set
        for (k, a), (_, b) in zip(clone.state_dict().items(), e.state_dict().items()):
            assert ember.equal(a, b), k
        idx = ember.tensor([[1, 2]])
        bridge.close(clone(idx), e(idx))


def test_parameter_and_buffer_classes():
    p = nn.Parameter(ember.ones(2, 3))
    assert p.is_leaf and p.requires_grad and isinstance(p, ember.Tensor)
    for r in (p * 2, p[0], p.t(), p.detach(), p.data, p.clone(), p.sum(), ember.relu(p)):
        assert type(r) is ember.Tensor
    assert repr(p) == "Parameter containing:\n" + repr(torch.nn.Parameter(torch.ones(2, 3))) \
        .split("\n", 1)[1]
    assert not nn.Parameter(ember.ones(1), requires_grad=False).requires_grad
    assert tuple(nn.Parameter().shape) == (0,)
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q is not p
    p.tag = "x"
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is nn.Parameter and r.tag == "x" and ember.equal(r, p)
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(ember.ones(2, dtype=ember.int64))
    with pytest.raises(AttributeError, match="'list' object has no attribute 'detach'"):
        nn.Parameter([1.0])             # as PyTorch, which calls data.detach() first
    b = nn.Buffer(ember.ones(2), persistent=False)
    assert isinstance(b, nn.Buffer) and not isinstance(ember.ones(2), nn.Buffer)
    assert type(b) is ember.Tensor and b.persistent is False


def test_custom_load_from_state_dict_hook():
    class Renamed(nn.Linear):
        def _load_from_state_dict(self, state_dict, prefix, *args):
            if prefix + "w" in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
            super()._load_from_state_dict(state_dict, prefix, *args)
    m = nn.Sequential(OrderedDict(layer=Renamed(2, 2)))
    m.load_state_dict({"layer.w": ember.ones(2, 2), "layer.bias": ember.zeros(2)})
    assert m.layer.weight.sum().item() == 4


def test_import_ember_does_not_import_nn():
    import subprocess
    import sys
    code = "import sys, ember; print('ember.nn' in sys.modules); ember.nn; " \
           "print('ember.nn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True"]


@pytest.mark.parametrize("make, fmt", [
    (lambda L: L.nn.Conv2d(3, 8, 3), "channels_last"),
    (lambda L: L.nn.Conv3d(3, 4, 3), "channels_last_3d"),
    (lambda L: L.nn.Linear(3, 3), "channels_last"),
    (lambda L: L.nn.Conv2d(3, 8, 3), "channels_last_3d")])
def test_to_memory_format_lays_out_4d_and_5d_parameters(make, fmt):
    def run(L):
        try:
            m = make(L).to(L.float64, memory_format=getattr(L, fmt))
        except RuntimeError as e:
            return str(e)
        return m.weight.stride(), str(m.weight.dtype)[6:], type(m.weight).__name__
    assert run(ember) == run(torch)


def test_register_backward_hook_gives_grad_output_as_torch():
    """The deprecated hook Grad-CAM code registers: grad_output as PyTorch's."""
    import numpy as np
    x0 = np.random.default_rng(0).standard_normal((1, 1, 5, 5)).astype(np.float32)
    seen = []
    for L in (ember, torch):
        conv = L.nn.Conv2d(1, 2, 3)
        with L.no_grad():
            conv.weight.copy_(L.tensor(np.arange(18, dtype=np.float32).reshape(2, 1, 3, 3)))
            conv.bias.copy_(L.tensor([0.5, -40.]))
        got = []
        conv.register_backward_hook(lambda m, gi, go: got.append(go[0].tolist()))
        (conv(L.tensor(x0)).relu() ** 2).sum().backward()
        seen.append(got)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks"):
            conv.register_full_backward_hook(lambda *a: None)
    assert len(seen[0]) == len(seen[1]) == 1
    np.testing.assert_allclose(seen[0][0], seen[1][0], rtol=1e-5)


def test_share_memory_moves_parameters_and_buffers_in_place():
    m = ember.nn.BatchNorm1d(3)
    w = m.weight
    assert m.share_memory() is m and m.weight is w
    assert all(t.is_shared() for t in list(m.parameters()) + list(m.buffers()))


def test_load_state_dict_leaves_no_reference_cycle():
    # its walk over the submodules was a nested function calling itself: a cycle that kept
    # the metadata and the key lists (and, after an error, the frames) until a collection
    import gc
    m = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.Sequential(ember.nn.Linear(3, 1)))
    sd = m.state_dict()
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        m.load_state_dict(sd)
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()
