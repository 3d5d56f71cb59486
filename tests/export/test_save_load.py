"""ember.export.save/load: .pt2 round trips; damaged, foreign and tampered archives."""
import io
import json
import zipfile

import ember.nn as enn
import numpy as np
import pytest

import ember
from ember.export import Dim, export, load, save

torch = pytest.importorskip("torch")


def close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)


class _Net(enn.Module):
    def __init__(self):
        super().__init__()
        self.fc = enn.Linear(4, 3)
        self.bn = enn.BatchNorm1d(3)
        self.register_buffer("tmp", ember.zeros(3), persistent=False)
        self.k = ember.tensor([1.0, 2.0, 3.0])

    def forward(self, x, n=2):
        y = self.bn(self.fc(x)) + self.k + self.tmp + ember.tensor([0.5, 0.5, 0.5])
        y = ember.cond(x.sum() > 0, lambda a: a * 2, lambda a: a.sin(), (y,))
        return {"y": y, "s": x.sum() * n}


@pytest.fixture
def program():
    m = _Net().eval()
    return m, export(m, (ember.randn(5, 4),), dynamic_shapes={"x": {0: Dim("b", max=50)}})


def _check_same(m, ep, ep2):
    assert [str(s) for s in ep2.graph_signature.input_specs] == \
        [str(s) for s in ep.graph_signature.input_specs]
    assert {str(k): (int(v.lower), int(v.upper)) for k, v in ep2.range_constraints.items()} == \
        {str(k): (int(v.lower), int(v.upper)) for k, v in ep.range_constraints.items()}
    assert type(ep2.state_dict["fc.weight"]) is enn.Parameter
    assert sorted(ep2.constants) == sorted(ep.constants)
    for n in (3, 11):
        for x in (ember.randn(n, 4).abs(), -ember.randn(n, 4).abs()):
            a, b = ep2.module()(x), m(x)
            close(a["y"], b["y"])
            close(a["s"], b["s"])
    with pytest.raises(AssertionError, match="<= 50"):
        ep2.module()(ember.randn(51, 4))


def test_round_trip_in_memory_with_extra_files(program):
    m, ep = program
    buf = io.BytesIO()
    save(ep, buf, extra_files={"note.txt": "hello", "raw": b"\x00\x01"})
    buf.seek(0)
    extra = {"note.txt": ""}
    ep2 = load(buf, extra_files=extra)
    assert extra == {"note.txt": "hello"}
    _check_same(m, ep, ep2)
    args, kwargs = ep2.example_inputs
    close(args[0], ep.example_inputs[0][0])


def test_round_trip_through_a_file(program, tmp_path):
    m, ep = program
    path = tmp_path / "net.pt2"
    save(ep, str(path))
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
    assert "net/archive_format" in names and "net/models/model.json" in names
    _check_same(m, ep, load(path))


def test_torch_and_ember_archives_are_told_apart(program, tmp_path):
    class T(torch.nn.Module):
        def forward(self, x):
            return x + 1
    tpath = tmp_path / "t.pt2"
    torch.export.save(torch.export.export(T(), (torch.randn(2),)), str(tpath))
    with pytest.raises(RuntimeError, match="not written by ember.export.save"):
        load(tpath)
    epath = tmp_path / "e.pt2"
    save(program[1], str(epath))
    with pytest.raises(Exception):
        torch.export.load(str(epath))


def _rewrite_model(buf, change):
    """A copy of the archive in ``buf`` with model.json edited by ``change``."""
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("models/model.json"):
                model = json.loads(data)
                change(model)
                data = json.dumps(model).encode()
            dst.writestr(info.filename, data)
    out.seek(0)
    return out


def test_loading_never_calls_what_the_file_names(program, monkeypatch):
    buf = io.BytesIO()
    save(program[1], buf)
    calls = []
    monkeypatch.setattr("os.system", lambda *a: calls.append(a))

    def evil(model):
        node = next(n for n in model["graph"] if n["op"] == "call_function")
        node["target"] = "os.system"
        node["args"] = {"tuple": ["echo pwned"]}
    with pytest.raises(RuntimeError, match="not an operator ember's programs may call"):
        load(_rewrite_model(buf, evil))
    assert calls == []

    def bad_arg(model):
        node = next(n for n in model["graph"] if n["op"] == "call_function")
        node["args"] = {"pickle": "cos\nsystem\n"}
    with pytest.raises(RuntimeError, match="unknown graph argument"):
        load(_rewrite_model(buf, bad_arg))


def test_damaged_archives_raise(program):
    buf = io.BytesIO()
    save(program[1], buf)
    data = buf.getvalue()
    with pytest.raises(RuntimeError):
        load(io.BytesIO(data[: len(data) // 2]))
    with pytest.raises(RuntimeError):
        load(io.BytesIO(b"not a zip at all"))

    def drop_graph(model):
        del model["graph"]
    with pytest.raises(RuntimeError, match="invalid"):
        load(_rewrite_model(buf, drop_graph))


def test_save_refuses_what_it_cannot_describe(program):
    m, ep = program
    ep2 = ep.run_decompositions({ember.ops.ember.sin: lambda a: ember.ops.ember.sin(a)})
    with pytest.raises(TypeError, match="cannot save a call to"):
        save(ep2, io.BytesIO())
    with pytest.raises(TypeError, match="ExportedProgram"):
        save(m, io.BytesIO())
