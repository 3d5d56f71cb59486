"""weights_only loading: only allow-listed globals; ember.serialization's allow-list API."""
import base64
import collections
import io
import json
import os
import pickle

import pytest

import ember
from ember import serialization


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


def make_point():
    return Point(1, 2)


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


def _buf(fmt, obj):
    """``obj`` saved in format ``fmt``, as a stream to load from."""
    buf = io.BytesIO()
    ember.save(obj, buf, format=fmt)
    buf.seek(0)
    return buf


def test_unlisted_class_is_refused_with_guidance(fmt):
    with pytest.raises(pickle.UnpicklingError) as info:
        ember.load(_buf(fmt, {"p": Point(1, 2), "w": ember.ones(1)}))
    msg = str(info.value)
    assert "Point" in msg and "add_safe_globals" in msg and "weights_only=False" in msg
    assert "BytesIO" in msg


def test_malicious_pickle_is_refused_and_never_runs(tmp_path, monkeypatch):
    saved = _buf("torch", [Evil()])
    stream = pickle.dumps(Evil(), protocol=2)
    ran = []
    monkeypatch.setattr(os, "system", lambda cmd: ran.append(cmd))
    with pytest.raises(pickle.UnpicklingError, match="system"):
        ember.load(saved)
    # a hand-written pickle stream in a checkpoint is refused too
    header = {"__metadata__": {"ember.format": "pickle", "ember.format_version": "1",
                               "ember.pickle": base64.b64encode(stream).decode()}}
    text = json.dumps(header).encode()
    raw = len(text).to_bytes(8, "little") + text
    with pytest.raises(pickle.UnpicklingError, match="weights_only"):
        ember.load(io.BytesIO(raw))
    with pytest.raises(pickle.UnpicklingError):
        ember.load(io.BytesIO(raw), weights_only=None)      # None means the default, True
    assert ran == []


def test_weights_only_false_loads_anything(fmt):
    out = ember.load(_buf(fmt, {"p": Point(3, 4)}), weights_only=False)
    assert isinstance(out["p"], Point) and (out["p"].x, out["p"].y) == (3, 4)


def test_add_safe_globals_and_get_clear(fmt):
    assert serialization.get_safe_globals() == []
    serialization.add_safe_globals([Point])
    assert serialization.get_safe_globals() == [Point]
    out = ember.load(_buf(fmt, [Point(1, 2), ember.ones(2)]))
    assert out[0].y == 2 and out[1].tolist() == [1.0, 1.0]
    serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError):
        ember.load(_buf(fmt, Point(1, 2)))


def test_safe_globals_context_manager_restores(fmt):
    serialization.add_safe_globals([make_point])
    with serialization.safe_globals([Point]):
        assert serialization.get_safe_globals() == [make_point, Point]
        assert ember.load(_buf(fmt, Point(5, 6))).x == 5
    assert serialization.get_safe_globals() == [make_point]
    with pytest.raises(pickle.UnpicklingError):
        ember.load(_buf(fmt, Point(5, 6)))


def test_tuple_entry_names_a_global(fmt):
    serialization.add_safe_globals([(Point, f"{__name__}.Point")])
    assert ember.load(_buf(fmt, Point(7, 8))).x == 7


def test_add_safe_globals_rejects_bad_input():
    with pytest.raises(TypeError, match="list"):
        serialization.add_safe_globals(Point)
    with pytest.raises(TypeError):
        serialization.add_safe_globals([3])
    with pytest.raises(TypeError):
        serialization.add_safe_globals([(Point, 3)])


def test_safe_builtins_load_by_default(fmt):
    obj = {"od": collections.OrderedDict(a=1), "counter": collections.Counter("aab"),
           "set": {1, 2}, "fs": frozenset({3}), "c": 1 + 2j, "ba": bytearray(b"xy"),
           "sl": slice(1, 5, 2), "r": range(3), "size": ember.Size([1, 2]),
           "dtype": ember.float16, "dev": ember.device("cpu"), "cls": ember.Tensor}
    for protocol in (2, 4, pickle.HIGHEST_PROTOCOL):
        buf = io.BytesIO()
        ember.save(obj, buf, pickle_protocol=protocol, format=fmt)
        buf.seek(0)
        assert ember.load(buf) == obj


def test_unregistered_tensor_subclass_needs_allow_listing(fmt):
    class Marked(ember.Tensor):
        pass
    globals()["Marked"] = Marked
    Marked.__qualname__ = "Marked"
    try:
        m = ember.Tensor._make_subclass(Marked, ember.randn(2))
        with pytest.raises(pickle.UnpicklingError, match="Marked"):
            ember.load(_buf(fmt, {"m": m}))
        assert type(ember.load(_buf(fmt, {"m": m}), weights_only=False)["m"]) is Marked
        with serialization.safe_globals([Marked]):
            out = ember.load(_buf(fmt, {"m": m}))
        assert type(out["m"]) is Marked and out["m"].tolist() == m.tolist()
    finally:
        del globals()["Marked"]


def test_save_refuses_other_pickle_modules():
    import copyreg
    with pytest.raises(ValueError, match="pickle_module"):
        ember.save({"s": {1}}, io.BytesIO(), pickle_module=copyreg)
