"""Corrupt, truncated or tampered checkpoints in ember's safetensors format raise RuntimeError
naming the file and the problem: never a crash, a hang or a silently wrong tensor. (PyTorch's
zip format: test_zip_safety.py.)"""
import base64
import io
import json
import pickle

import pytest

import ember


def _saved(obj):
    buf = io.BytesIO()
    ember.save(obj, buf, format="safetensors")
    return buf.getvalue()


def _split(raw):
    n = int.from_bytes(raw[:8], "little")
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def _join(header, data, pad=True):
    text = json.dumps(header).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + data


def _tampered(obj, edit):
    header, data = _split(_saved(obj))
    out = edit(header, data)
    return _join(header, data) if out is None else out


def _load_fails(tmp_path, raw, match):
    path = tmp_path / "bad.ckpt"
    path.write_bytes(raw)
    with pytest.raises(RuntimeError, match=match) as info:
        ember.load(path)
    assert "bad.ckpt" in str(info.value)
    with pytest.raises(RuntimeError, match=match):      # a file object too
        ember.load(io.BytesIO(raw))


SD = {"w": ember.arange(6, dtype=ember.float32).reshape(2, 3), "b": ember.ones(2, dtype=ember.int64)}


def _set_structure(structure):
    def edit(h, d):
        h["__metadata__"]["ember.structure"] = structure
    return edit


def _entry(name, **fields):
    def edit(h, d):
        h[name].update(fields)
    return edit


CASES = {
    "empty": (lambda: b"", "no data"),
    "short length": (lambda: b"\x10\x00\x00", "truncated"),
    "huge header length": (lambda: (2 ** 62).to_bytes(8, "little") + b"{}", "exceeds"),
    "header past the end": (lambda: (1000).to_bytes(8, "little") + b"{}", "truncated|past the end"),
    "not json": (lambda: _join(None, b"")[:8] + b"{not json", "not valid JSON|truncated"),
    "header not json": (lambda: (8).to_bytes(8, "little") + b"{nope!!}", "not valid JSON"),
    "header a list": (lambda: _join([], b""), "not a JSON object"),
    "truncated data": (lambda: _saved(SD)[:-5], "truncated"),
    "unknown dtype": (lambda: _tampered(SD, _entry("w", dtype="F8_E4M3")), "unsupported dtype"),
    "dtype not a string": (lambda: _tampered(SD, _entry("w", dtype=[1])), "unsupported dtype"),
    "size mismatch": (lambda: _tampered(SD, _entry("w", shape=[3, 3])), "needs 36 bytes"),
    "negative shape": (lambda: _tampered(SD, _entry("w", shape=[-2, -3])), "invalid shape"),
    "bool shape": (lambda: _tampered(SD, _entry("w", shape=[True, 6])), "invalid shape"),
    "offsets reversed": (lambda: _tampered(SD, _entry("w", data_offsets=[24, 0])), "invalid data_offsets"),
    "offsets out of range": (lambda: _tampered(SD, _entry("b", data_offsets=[1000, 1016])), "gap|truncated"),
    "offsets overlap": (lambda: _tampered(SD, _entry("w", data_offsets=[8, 32])), "overlaps"),
    "metadata not strings": (lambda: _tampered(SD, lambda h, d: h.update({"__metadata__": {"a": 1}})), "map of strings"),
    "entry not object": (lambda: _tampered(SD, lambda h, d: h.update({"w": 3})), "not a JSON object"),
    "missing tensor": (lambda: _tampered(SD, _set_structure(json.dumps({"tensor": {"id": 0, "key": "nope"}}))), "does not hold"),
    "structure not json": (lambda: _tampered(SD, _set_structure("{")), "structure metadata is not valid JSON"),
    "structure NaN literal": (lambda: _tampered(SD, _set_structure("NaN")), "not valid JSON"),
    "unknown node": (lambda: _tampered(SD, _set_structure('{"exec": "os.system"}')), "unknown structure node"),
    "bad record": (lambda: _tampered(SD, _set_structure('{"tensor": 3}')), "invalid tensor record"),
    "record id clash": (lambda: _tampered(SD, _set_structure(json.dumps({"list": [{"tensor": {"id": 0, "key": "w"}}, {"tensor": {"id": 0, "key": "b"}}]}))), "names both"),
    "bad requires_grad": (lambda: _tampered(SD, _set_structure(json.dumps({"tensor": {"id": 0, "key": "w", "requires_grad": "yes"}}))), "requires_grad"),
    "unknown tensor type": (lambda: _tampered(SD, _set_structure(json.dumps({"tensor": {"id": 0, "key": "w", "type": "os.system"}}))), "unknown tensor type"),
    "unhashable key": (lambda: _tampered(SD, _set_structure(json.dumps({"items": [[{"list": []}, 1]]}))), "invalid dict key"),
    "bad float": (lambda: _tampered(SD, _set_structure('{"float": "1e999x"}')), "invalid 'float'"),
    "bad dtype node": (lambda: _tampered(SD, _set_structure('{"dtype": "complex512"}')), "invalid 'dtype'"),
    "bad device node": (lambda: _tampered(SD, _set_structure('{"device": "nowhere:x"}')), "invalid 'device'"),
    "extra node keys": (lambda: _tampered(SD, _set_structure('{"list": [], "x": 1}')), "invalid structure node"),
    "deep nesting": (lambda: _tampered(SD, _set_structure('{"list": [' * 5000 + "]}" * 5000)), "nested too deeply|not valid JSON"),
    "future format": (lambda: _tampered(SD, lambda h, d: h["__metadata__"].update({"ember.format": "tree", "ember.format_version": "9"})), "unsupported ember checkpoint format"),
    "bad base64": (lambda: _tampered({"s": {1}}, lambda h, d: h["__metadata__"].update({"ember.pickle": "!!!"})), "not valid base64"),
    "truncated pickle": (lambda: _tampered({"s": {1}}, lambda h, d: h["__metadata__"].update({"ember.pickle": base64.b64encode(pickle.dumps({1}, 4)[:-3]).decode()})), "pickle stream is corrupt"),
    "bool bytes": (lambda: _tampered({"m": ember.tensor([True, False])}, lambda h, d: _join(h, b"\x02\x00")), "BOOL"),
    "meta record": (lambda: _tampered(SD, _set_structure(json.dumps({"tensor": {"id": 0, "key": None, "dtype": "float32", "shape": [-1]}}))), "invalid meta"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_corrupt_file_raises_runtime_error(tmp_path, case):
    make, match = CASES[case]
    _load_fails(tmp_path, make(), match)


def test_trailing_bytes_are_refused_in_a_file_but_not_in_a_stream(tmp_path):
    path = tmp_path / "t.ckpt"
    path.write_bytes(_saved(SD) + b"junk")
    with pytest.raises(RuntimeError, match="followed by unexpected bytes"):
        ember.load(path)
    stream = io.BytesIO(_saved(SD) + b"junk")       # a stream may hold more after it
    assert ember.load(stream)["w"].shape == (2, 3)
    assert stream.read() == b"junk"


def test_duplicate_header_keys(tmp_path):
    raw = _saved(SD)
    header, data = _split(raw)
    text = json.dumps(header)
    dup = text[:-1] + ', "w": ' + json.dumps(header["w"]) + "}"
    dup = dup.encode() + b" " * (-len(dup) % 8)
    _load_fails(tmp_path, len(dup).to_bytes(8, "little") + dup + data, "duplicate key")


def test_every_truncation_point_is_caught(tmp_path):
    raw = _saved({"w": ember.randn(3, 3), "n": [1, 2], "o": {"s": {1}}})
    for cut in range(0, len(raw), max(1, len(raw) // 60)):
        with pytest.raises(RuntimeError):
            ember.load(io.BytesIO(raw[:cut]))


def test_unpadded_header_from_other_writers_is_accepted():
    header, data = _split(_saved(SD))
    out = ember.load(io.BytesIO(_join(header, data, pad=False)))
    assert out["w"].tolist() == SD["w"].tolist()


def test_valid_json_structure_with_untrusted_strings_runs_nothing(tmp_path):
    # a tree never imports or calls what it names: class-like strings stay strings
    structure = {"dict": {"cls": "os.system", "args": {"tuple": ["echo pwned"]}}}
    raw = _tampered(SD, _set_structure(json.dumps(structure)))
    assert ember.load(io.BytesIO(raw)) == {"cls": "os.system", "args": ("echo pwned",)}
