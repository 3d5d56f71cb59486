"""PyTorch zip checkpoints that must not load: malicious pickles (refused with nothing run,
as torch refuses them), allow-list semantics, and truncated, tampered or foreign archives
(a clear RuntimeError or pickle.UnpicklingError, never a crash or a wrong tensor)."""
import builtins
import collections
import io
import os
import pickle
import re
import subprocess
import zipfile

import numpy as np
import pytest
import torch

import ember
from ember import serialization
from ember.serialization import _torch_save, _zipfile

LOAD_ERRORS = (RuntimeError, pickle.UnpicklingError)


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


class Payload:
    """Pickles as a call of ``func(*args)``: what a malicious checkpoint holds."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def zip_checkpoint(data_pkl, records=None, version=b"3\n", drop=()):
    """A zip checkpoint assembled with the standard zipfile (not ember's writer)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        items = {"data.pkl": data_pkl, "byteorder": b"little", **(records or {})}
        if version is not None:
            items["version"] = version
        for name, data in items.items():
            if name not in drop:
                z.writestr(f"archive/{name}", data)
    return buf.getvalue()


def _saved(obj, **kwargs):
    buf = io.BytesIO()
    ember.save(obj, buf, **kwargs)
    return buf.getvalue()


def _records(raw):
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        return {n.split("/", 1)[1]: z.read(n) for n in z.namelist()}


def _payloads(marker):
    touch = f"open({str(marker)!r}, 'w').close()"
    return {
        "os.system": Payload(os.system, f"touch {marker}"),
        "builtins.eval": Payload(builtins.eval, touch),
        "builtins.exec": Payload(builtins.exec, touch),
        "subprocess.call": Payload(subprocess.call, ["touch", str(marker)]),
        "getattr chain": Payload(builtins.getattr, Payload(builtins.__import__, "os"), "system"),
    }


@pytest.mark.parametrize("protocol", [2, 4])
@pytest.mark.parametrize("name", list(_payloads("m")))
def test_malicious_pickle_is_refused_with_nothing_run(tmp_path, name, protocol):
    marker = tmp_path / "pwned"
    payload = _payloads(marker)[name]
    raw = zip_checkpoint(pickle.dumps({"w": payload}, protocol=protocol))
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed") as info:
        ember.load(io.BytesIO(raw))
    assert not marker.exists()
    assert "ember.serialization.add_safe_globals" in str(info.value) or \
        "blocked" in str(info.value)
    with pytest.raises(pickle.UnpicklingError):        # torch refuses it too
        torch.load(io.BytesIO(raw), weights_only=True)
    assert not marker.exists()
    if name != "getattr chain":        # the payload is real: a trusting load runs it
        ember.load(io.BytesIO(raw), weights_only=False)
        assert marker.exists()


def test_blocked_modules_stay_blocked_even_when_allow_listed(tmp_path):
    marker = tmp_path / "pwned"
    raw = zip_checkpoint(pickle.dumps(_payloads(marker)["os.system"], protocol=2))
    with serialization.safe_globals([os.system, (os.system, "posix.system")]):
        with pytest.raises(pickle.UnpicklingError, match="whose module posix is blocked"):
            ember.load(io.BytesIO(raw))
    assert not marker.exists()


HAND_WRITTEN = {
    # protocol 0: INST names a class and calls it
    "INST": (b"(S'touch pwned'\nios\nsystem\n.", "GLOBAL os.system|blocked"),
    # REDUCE of something no GLOBAL produced
    "REDUCE on a list": (b"\x80\x02])R.", "unrecognized function"),
    # BUILD on an allow-listed class object itself (would monkeypatch it)
    "BUILD on a class": (b"\x80\x02ctorch\nTensor\nN}X\x04\x00\x00\x00evilK\x01s\x86b.",
                         "Can only build"),
    "APPEND to a set": (b"\x80\x02cbuiltins\nset\n)RK\x01a.", "Can only append"),
    "SETITEM on a list": (b"\x80\x02]K\x00K\x01s.", "Can only SETITEM"),
    "EXT1": (b"\x80\x02\x82\x01.", "extension"),
    "persistent id not a storage": (b"\x80\x02X\x04\x00\x00\x00evilQ.", "storage"),
    "NEWOBJ of a dtype": (b"\x80\x02ctorch\nfloat32\n)\x81.", "Can only create new object"),
}


@pytest.mark.parametrize("case", list(HAND_WRITTEN))
def test_hand_written_opcodes_are_refused(case):
    data, match = HAND_WRITTEN[case]
    raw = zip_checkpoint(data)
    with pytest.raises(pickle.UnpicklingError, match=match):
        ember.load(io.BytesIO(raw))
    with pytest.raises((pickle.UnpicklingError, RuntimeError, TypeError)):
        torch.load(io.BytesIO(raw), weights_only=True)


def test_unlisted_class_is_refused_like_torch_and_allow_listing_admits_it():
    buf = io.BytesIO()
    torch.save({"p": Point(1, 2), "w": torch.ones(2)}, buf)
    raw = buf.getvalue()
    with pytest.raises(pickle.UnpicklingError) as ours:
        ember.load(io.BytesIO(raw))
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(io.BytesIO(raw), weights_only=True)
    pattern = r"GLOBAL (\S+) was not an allowed global by default"
    assert re.search(pattern, str(ours.value))[1] == re.search(pattern, str(theirs.value))[1]
    msg = str(ours.value)
    assert "Point" in msg and "weights_only=False" in msg and "BytesIO" in msg
    assert "ember.serialization.safe_globals" in msg
    with serialization.safe_globals([Point]):
        out = ember.load(io.BytesIO(raw))
    assert type(out["p"]) is Point and (out["p"].x, out["p"].y) == (1, 2)
    assert serialization.get_safe_globals() == []
    serialization.add_safe_globals([(Point, f"{Point.__module__}.Point")])
    assert ember.load(io.BytesIO(raw))["w"].tolist() == [1.0, 1.0]
    serialization.clear_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        ember.load(io.BytesIO(raw))


def test_get_unsafe_globals_in_checkpoint_matches_torch(tmp_path):
    path = tmp_path / "c.pt"
    torch.save({"p": Point(1, 2), "c": collections.Counter("ab"), "t": torch.ones(1),
                "e": Payload(os.system, "true")}, path)
    ours = serialization.get_unsafe_globals_in_checkpoint(path)
    assert sorted(ours) == sorted(torch.serialization.get_unsafe_globals_in_checkpoint(path))
    assert f"{Point.__module__}.Point" in ours and "posix.system" in ours
    with serialization.safe_globals([Point]):
        assert f"{Point.__module__}.Point" not in \
            serialization.get_unsafe_globals_in_checkpoint(str(path))
    raw = zip_checkpoint(pickle.dumps([Point(1, 2)], protocol=4))    # STACK_GLOBAL too
    assert serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(raw)) == \
        [f"{Point.__module__}.Point"]
    with pytest.raises(ValueError, match="torch.save"):
        serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(b"not a zip"))


def test_every_truncation_point_is_caught(tmp_path):
    sd = collections.OrderedDict(w=ember.randn(8, 8), b=ember.arange(8), n={"s": "x"})
    for raw in (_saved(sd), _saved(sd, _use_new_zipfile_serialization=False)):
        for cut in range(0, len(raw), max(1, len(raw) // 97)):
            with pytest.raises(LOAD_ERRORS):
                ember.load(io.BytesIO(raw[:cut]))
        path = tmp_path / "cut.pt"
        path.write_bytes(raw[:len(raw) // 2])
        with pytest.raises(RuntimeError, match="cut.pt"):
            ember.load(path)


def _crafted(reduce_fn, args_of_ref, data=None):
    """A zip checkpoint whose pickle calls ``torch._utils.<reduce_fn>(*args)`` with a storage of
    four float32 elements (``args_of_ref(ref)`` builds the arguments)."""
    storages = _torch_save._Storages()
    ref = storages.ref(ember.ones(4))
    buf = io.BytesIO()
    payload = Payload(_torch_save._utils(reduce_fn), *args_of_ref(ref))
    _torch_save._pickler_class(pickle)(buf, 2, storages).dump(payload)
    return zip_checkpoint(buf.getvalue(), {"data/0": bytes(16 if data is None else data)})


BAD = {
    "view out of bounds": (lambda: _crafted("_rebuild_tensor_v2", lambda r: (
        r, 2, (100,), (1,), False, collections.OrderedDict())), RuntimeError, "out of bounds"),
    "negative stride": (lambda: _crafted("_rebuild_tensor_v2", lambda r: (
        r, 0, (2,), (-1,), False, collections.OrderedDict())), RuntimeError, "negative"),
    "size not ints": (lambda: _crafted("_rebuild_tensor_v2", lambda r: (
        r, 0, ("2",), (1,), False, collections.OrderedDict())), pickle.UnpicklingError,
        "tuple of ints"),
    "storage too short": (lambda: _crafted("_rebuild_tensor_v2", lambda r: (
        r, 0, (4,), (1,), False, collections.OrderedDict()), data=8), RuntimeError,
        "holds 8 bytes"),
    "missing storage record": (lambda: zip_checkpoint(_records(_saved(ember.ones(3)))["data.pkl"]),
                               RuntimeError, "data/0: file not found"),
    "missing data.pkl": (lambda: zip_checkpoint(b"", drop=("data.pkl",)), RuntimeError,
                         "data.pkl: file not found"),
    "missing version": (lambda: zip_checkpoint(pickle.dumps(1, 2), version=None), RuntimeError,
                        "version: file not found"),
    "version too new": (lambda: zip_checkpoint(pickle.dumps(1, 2), version=b"99\n"),
                        RuntimeError, "maximum supported version"),
    "version garbage": (lambda: zip_checkpoint(pickle.dumps(1, 2), version=b"x"), RuntimeError,
                        "not a number"),
    "truncated pickle": (lambda: zip_checkpoint(pickle.dumps([1, 2, 3], 2)[:-3]),
                         pickle.UnpicklingError, "corrupt"),
    "unknown opcode": (lambda: zip_checkpoint(b"\x80\x02\xff."), pickle.UnpicklingError,
                       "corrupt"),
    "bad zip": (lambda: b"PK\x03\x04" + bytes(60), RuntimeError, "zip archive"),
    "zip without a folder": (lambda: _flat_zip(), RuntimeError, "folder of records"),
}


def _flat_zip():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("data.pkl", pickle.dumps(1))
    return buf.getvalue()


@pytest.mark.parametrize("case", list(BAD))
def test_damaged_archive_raises_a_clear_error(tmp_path, case):
    make, error, match = BAD[case]
    raw = make()
    with pytest.raises(error, match=match):
        ember.load(io.BytesIO(raw))
    path = tmp_path / "bad.pt"
    path.write_bytes(raw)
    with pytest.raises(error, match=match):
        ember.load(path)


def test_crafted_out_of_bounds_view_is_refused_by_torch_too():
    raw = BAD["view out of bounds"][0]()
    with pytest.raises(RuntimeError):
        torch.load(io.BytesIO(raw), weights_only=True)


def _data_offset(raw, name):
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        info = z.getinfo(name)
    n, m = int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28], "little"), \
        int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
    return info.header_offset + 30 + n + m, info.file_size


def test_flipped_storage_byte_fails_the_crc_check():
    raw = bytearray(_saved({"w": ember.arange(16.0)}))
    start, size = _data_offset(bytes(raw), "archive/data/0")
    raw[start + 5] ^= 0xFF
    with pytest.raises(RuntimeError, match="CRC-32"):
        ember.load(io.BytesIO(bytes(raw)))


def test_records_are_aligned_and_readable_by_zip_tools():
    raw = _saved({"a": ember.ones(3, dtype=ember.uint8), "b": ember.ones(5, dtype=ember.float64),
                  "c": ember.ones(7, dtype=ember.complex128)})
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        assert z.testzip() is None
        names = z.namelist()
    assert names[:4] == ["archive/data.pkl", "archive/.format_version",
                         "archive/.storage_alignment", "archive/byteorder"]
    assert names[-2:] == ["archive/version", "archive/.data/serialization_id"]
    for name in names:
        assert _data_offset(raw, name)[0] % 64 == 0, name


def test_zip64_records_read_in_torch_and_ember(monkeypatch):
    monkeypatch.setattr(_zipfile, "ZIP64_LIMIT", 100)
    sd = {f"w{i}": ember.arange(40.0) + i for i in range(3)}
    raw = _saved(sd)
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        assert z.testzip() is None
        assert any(info.extract_version >= 45 for info in z.infolist())
    out = torch.load(io.BytesIO(raw), weights_only=True)
    assert out["w2"].tolist() == (np.arange(40.0) + 2).tolist()
    assert ember.equal(ember.load(io.BytesIO(raw))["w1"], sd["w1"])


def test_torchscript_archive_is_named():
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), buf)
    with pytest.raises(RuntimeError, match="TorchScript"):
        ember.load(io.BytesIO(buf.getvalue()))


def test_unknown_byteorder_is_a_value_error_as_in_torch():
    raw = zip_checkpoint(pickle.dumps(1, 2), {"byteorder": b"middle"})
    with pytest.raises(ValueError, match="Unknown endianness type: middle"):
        ember.load(io.BytesIO(raw))


def test_corrupt_pickle_with_weights_only_false_is_an_unpickling_error():
    raw = zip_checkpoint(pickle.dumps({"a": [1, 2]}, 2)[:-4])
    with pytest.raises(pickle.UnpicklingError):
        ember.load(io.BytesIO(raw), weights_only=False)
