"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict against torch."""
from collections import OrderedDict

import pytest
import torch

import ember
from ember import nn


def layers(lib, n=3):
    return [lib.nn.Linear(i + 1, i + 2) for i in range(n)]


def test_sequential_indexing_and_mutation(bridge):
    s = nn.Sequential(*layers(ember))
    assert len(s) == 3 and s[-1] is s[2] and [m.in_features for m in s] == [1, 2, 3]
    sub = s[1:]
    assert type(sub) is nn.Sequential and list(sub._modules) == ["1", "2"]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        s[3]
    s.append(nn.ReLU())
    s.insert(0, nn.Tanh())
    assert [type(m).__name__ for m in s] == ["Tanh", "Linear", "Linear", "Linear", "ReLU"]
    del s[0]
    assert list(s._modules) == ["0", "1", "2", "3"]
    s[3] = nn.Sigmoid()
    assert isinstance(s[3], nn.Sigmoid)
    s.extend(nn.Sequential(nn.Identity()))
    assert len(s) == 5 and isinstance(s.pop(4), nn.Identity)
    assert len(s + nn.Sequential(nn.ReLU())) == 5 and len(s * 2) == 8
    with pytest.raises(AssertionError):
        s.insert(0, 3)
    named = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert list(named.state_dict()) == ["fc.weight", "fc.bias"] and named.fc is named[0]


def test_sequential_forward_matches_torch(bridge):
    t = torch.nn.Sequential(*layers(torch), torch.nn.Tanh())
    e = nn.Sequential(*layers(ember), nn.Tanh())
    bridge.copy_weights(t, e)
    x = torch.randn(4, 1)
    bridge.close(e(bridge.from_torch(x)), t(x))
    assert bridge.torch_text(repr(e)) == repr(t)


def test_module_list():
    t = torch.nn.ModuleList(layers(torch) + [torch.nn.ReLU(), torch.nn.ReLU()])
    e = nn.ModuleList(layers(ember) + [nn.ReLU(), nn.ReLU()])
    assert repr(e) == repr(t)
    same = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert repr(same) == repr(torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)]))
    assert repr(nn.ModuleList()) == "ModuleList()"
    assert list(e.state_dict()) == list(t.state_dict())
    assert type(e[1:3]) is nn.ModuleList and len(e[1:3]) == 2
    e += [nn.Tanh()]
    e.insert(-1, nn.Sigmoid())
    assert [type(m).__name__ for m in e][-2:] == ["Sigmoid", "Tanh"]
    del e[0:2]
    assert list(e._modules) == [str(i) for i in range(len(e))]
    with pytest.raises(TypeError, match="should be called with an iterable"):
        e.extend(3)
    with pytest.raises(NotImplementedError, match="forward"):
        e(ember.ones(1))


def test_module_dict():
    d = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
    assert list(d) == ["b", "a"] and "a" in d and len(d) == 2
    d.update([("c", nn.Sigmoid())])
    d["e"] = nn.Identity()
    assert list(d.keys()) == ["b", "a", "c", "e"]
    assert isinstance(d.pop("c"), nn.Sigmoid) and "c" not in d
    assert repr(d) == repr(torch.nn.ModuleDict({"b": torch.nn.ReLU(), "a": torch.nn.Tanh(),
                                                "e": torch.nn.Identity()}))
    with pytest.raises(ValueError, match="has length 3; 2 is required"):
        d.update([("x", nn.ReLU(), 1)])
    with pytest.raises(TypeError, match="iterable of key/value pairs"):
        d.update(3)
    d.clear()
    assert len(d) == 0


def test_parameter_list(bridge):
    pl = nn.ParameterList([nn.Parameter(ember.ones(2, 3)), ember.ones(2, dtype=ember.float64)])
    assert all(isinstance(p, nn.Parameter) for p in pl)
    assert len(list(pl.parameters())) == 2 and list(pl.state_dict()) == ["0", "1"]
    pl.append("note")
    tl = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(2, 3)),
                                 torch.ones(2, dtype=torch.float64), "note"])
    assert bridge.torch_text(repr(pl)) == repr(tl)
    assert pl[-1] == "note" and len(pl[0:2]) == 2
    with pytest.raises(IndexError):
        pl[5]
    with pytest.raises(TypeError, match="should be called with an iterable"):
        pl.extend(ember.ones(2))
    with pytest.raises(RuntimeError, match="should not be called"):
        pl(1)


def test_parameter_dict(bridge):
    pd = nn.ParameterDict({"b": nn.Parameter(ember.ones(1)), "a": ember.ones(2)})
    td = torch.nn.ParameterDict({"b": torch.nn.Parameter(torch.ones(1)), "a": torch.ones(2)})
    assert list(pd) == list(td) == ["a", "b"]                 # plain dicts: sorted keys
    assert isinstance(pd["a"], nn.Parameter)
    assert bridge.torch_text(repr(pd)) == repr(td)
    assert list(pd.state_dict()) == list(td.state_dict())
    pd["c"] = nn.Parameter(ember.zeros(1))
    assert list(pd.keys()) == ["a", "b", "c"] and pd.get("z") is None
    assert "c" in pd and pd.pop("c") is not None and "c" not in pd
    with pytest.raises(TypeError, match="not a string"):
        pd[1] = ember.ones(1)
    merged = pd | {"z": ember.ones(3)}
    assert list(merged) == ["a", "b", "z"] and len(pd) == 2
