"""ember.load's options on PyTorch checkpoints -- mmap, map_location, pickle_module -- and the
rest of torch.serialization's surface: register_package, skip_data, byte order, CRC options."""
import io
import mmap as _mmap
import os
import pickle
import types
import warnings
import zipfile

import numpy as np
import pytest
import torch

import ember
from ember import serialization
from ember.serialization import _locations


def _mapped_files():
    with open("/proc/self/maps") as f:
        return {line.split()[-1] for line in f if len(line.split()) >= 6}


@pytest.fixture
def torch_file(tmp_path):
    path = tmp_path / "weights.pt"
    t = torch.arange(12.0).reshape(3, 4)
    torch.save({"w": t, "col": t[:, 1], "b": torch.ones(3, dtype=torch.float64)}, path)
    return path


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs Linux's /proc")
def test_mmap_views_the_file_copy_on_write(torch_file):
    before = torch_file.read_bytes()
    out = ember.load(torch_file, mmap=True)
    assert str(torch_file) in _mapped_files()           # tensors live in a map of the file
    assert out["w"].tolist() == torch.arange(12.0).reshape(3, 4).tolist()
    out["w"][0, 1] = -1.0
    assert out["col"][0].item() == -1.0                 # views still share
    assert torch_file.read_bytes() == before            # private: the file is unchanged
    assert ember.load(torch_file)["w"][0, 1].item() == 1.0      # and stays readable
    assert torch.load(torch_file, weights_only=True)["w"][0, 1].item() == 1.0
    del out
    assert ember.load(torch_file, mmap=True, map_location="cpu")["b"].dtype == ember.float64


@pytest.mark.skipif(serialization._options.MAP_SHARED is None, reason="no MAP_SHARED")
def test_mmap_shared_writes_through(torch_file):
    with serialization.set_default_mmap_options(_mmap.MAP_SHARED):
        assert serialization.get_default_mmap_options() == _mmap.MAP_SHARED
        out = ember.load(torch_file, mmap=True)
        out["b"].fill_(7.0)
        out["b"].untyped_storage()          # keep the map alive until the write is visible
        assert torch.load(torch_file, weights_only=True)["b"].tolist() == [7.0, 7.0, 7.0]
        assert ember.load(torch_file, mmap=True)["b"].tolist() == [7.0, 7.0, 7.0]
    with pytest.raises(RuntimeError, match="changed after saving"):     # the CRC says so
        ember.load(torch_file)
    assert serialization.get_default_mmap_options() == _mmap.MAP_PRIVATE
    with pytest.raises(ValueError, match="MAP_PRIVATE or mmap.MAP_SHARED"):
        serialization.set_default_mmap_options(12345)


def test_mmap_needs_a_path_and_a_zip(tmp_path, torch_file):
    with pytest.raises(ValueError, match="file path"):
        ember.load(io.BytesIO(torch_file.read_bytes()), mmap=True)
    legacy = tmp_path / "legacy.pt"
    torch.save(torch.ones(2), legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="mmap can only be used"):
        ember.load(legacy, mmap=True)


def test_map_location_callable_gets_each_storage_as_an_untyped_storage(torch_file):
    def seen_by(lib):
        seen = []

        def fn(storage, location):
            seen.append((location, type(storage).__name__, storage.size(), storage.nbytes(),
                         storage.device.type))
            return storage
        return seen, lib.load(torch_file, map_location=fn)
    (seen, out), (want, _) = seen_by(ember), seen_by(torch)
    assert sorted(seen) == sorted(want) == [("cpu", "UntypedStorage", 24, 24, "cpu"),
                                            ("cpu", "UntypedStorage", 48, 48, "cpu")]
    assert out["col"].tolist() == [1.0, 5.0, 9.0]
    out = ember.load(torch_file, map_location=lambda storage, loc: None)   # None: the default
    assert out["b"].tolist() == [1.0, 1.0, 1.0]
    out = ember.load(torch_file, map_location=lambda storage, loc: storage.cpu())
    assert out["col"].tolist() == [1.0, 5.0, 9.0]
    with pytest.raises(TypeError, match="map_location must return the storage"):
        ember.load(torch_file, map_location=lambda storage, loc: ember.UntypedStorage(3))


@pytest.mark.parametrize("where", ["cpu", ember.device("cpu"), {"cpu": "cpu"}, b"cpu"])
def test_map_location_to_the_cpu(torch_file, where):
    assert ember.load(torch_file, map_location=where)["w"].device.type == "cpu"


def test_map_location_meta_reads_no_data(torch_file):
    out = ember.load(torch_file, map_location="meta")
    assert all(v.device.type == "meta" for v in out.values())
    assert out["col"].shape == (3,) and out["col"].stride() == (4,)


def test_map_location_to_another_device(torch_file):
    dev = "reference"
    if not ember.get_device_module(dev).is_available():
        pytest.skip("the reference plugin (ember-reference) is not installed")
    for where in (dev, {"cpu": dev}, lambda s, loc: s.to(device=dev)):
        out = ember.load(torch_file, map_location=where)
        assert out["w"].device.type == dev and out["col"].tolist() == [1.0, 5.0, 9.0]
        out["w"].mul_(2)
        assert out["col"].tolist() == [2.0, 10.0, 18.0]     # one storage on the device too


@pytest.fixture
def cuda_tagged(tmp_path):
    """A checkpoint whose storage is tagged 'cuda:0', written through a registered tagger."""
    entry = (1, lambda obj: "cuda:0", lambda obj, location: None)
    _locations._package_registry.insert(0, entry)
    try:
        path = tmp_path / "gpu.pt"
        ember.save({"x": ember.ones(2)}, path)
    finally:
        _locations._package_registry.remove(entry)
    return path


@pytest.mark.skipif(ember.cuda.is_available(), reason="needs a machine without CUDA")
def test_a_missing_device_says_to_use_map_location(cuda_tagged):
    with zipfile.ZipFile(cuda_tagged) as z:
        assert b"cuda:0" in z.read("gpu/data.pkl")
    with pytest.raises(RuntimeError, match="map_location"):
        ember.load(cuda_tagged)
    assert ember.load(cuda_tagged, map_location="cpu")["x"].tolist() == [1.0, 1.0]
    assert ember.load(cuda_tagged, map_location={"cuda:0": "cpu"})["x"].tolist() == [1.0, 1.0]
    out = torch.load(cuda_tagged, map_location="cpu", weights_only=True)
    assert out["x"].tolist() == [1.0, 1.0]


def test_register_package_deserializer_runs_first(cuda_tagged):
    calls = []

    def deserialize(obj, location):
        calls.append(location)
        return obj if location.startswith("cuda") else None
    serialization.register_package(5, lambda obj: None, deserialize)
    try:
        out = ember.load(cuda_tagged)
    finally:
        _locations._package_registry[:] = [e for e in _locations._package_registry
                                           if e[2] is not deserialize]
    assert calls == ["cuda:0"] and out["x"].device.type == "cpu"
    with pytest.raises(TypeError, match="callable"):
        serialization.register_package(1, "tagger", deserialize)


def test_location_helpers():
    t = ember.ones(2)
    assert serialization.location_tag(t) == "cpu"
    assert serialization.default_restore_location(t, "cpu") is t
    assert serialization.default_restore_location(t, "meta").device.type == "meta"
    with pytest.raises(RuntimeError, match="don't know how to restore"):
        serialization.default_restore_location(t, "nowhere:0")
    if not ember.cuda.is_available():
        with pytest.raises(RuntimeError, match="is_available"):
            serialization.validate_cuda_device("cuda:0")


def test_skip_data_writes_and_reads_no_bytes(tmp_path):
    path = tmp_path / "s.pt"
    with serialization.skip_data():
        ember.save({"w": ember.full((4,), 3.0), "v": ember.ones(2, 2).t()}, path)
    out = torch.load(path, weights_only=True)
    assert out["w"].tolist() == [0.0] * 4 and out["v"].stride() == (1, 2)
    ember.save({"w": ember.full((4,), 3.0)}, path)
    with serialization.skip_data():
        skipped = ember.load(path)
    assert skipped["w"].shape == (4,) and skipped["w"].tolist() == [0.0] * 4
    assert ember.load(path)["w"].tolist() == [3.0] * 4


def _big_endian(raw, dtypes):
    """A copy of checkpoint ``raw`` with byteorder 'big' and the storages byte-swapped."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            name = info.filename.split("/", 1)[1]
            if name == "byteorder":
                data = b"big"
            elif name.startswith("data/"):
                dtype = dtypes[name[5:]]
                data = np.frombuffer(data, dtype).byteswap().tobytes()
            dst.writestr(info.filename, data)
    return out.getvalue()


def test_big_endian_checkpoints_are_swapped_like_torch():
    obj = {"f": torch.arange(4.0), "z": torch.tensor([1 + 2j, 3 - 4j]),
           "h": torch.tensor([1, -2], dtype=torch.int16), "b": torch.tensor([1, 2], dtype=torch.uint8)}
    buf = io.BytesIO()
    torch.save(obj, buf)
    raw = _big_endian(buf.getvalue(), {"0": ">f4", "1": ">f4", "2": ">i2", "3": "u1"})
    ref = torch.load(io.BytesIO(raw), weights_only=True)
    out = ember.load(io.BytesIO(raw))
    for k, v in obj.items():
        assert ref[k].tolist() == v.tolist()
        assert out[k].tolist() == v.tolist()


def test_default_load_endianness_for_files_without_a_byteorder_record():
    buf = io.BytesIO()
    ember.save(ember.tensor([1.0, 2.0]), buf, _disable_byteorder_record=True)
    with zipfile.ZipFile(buf) as z:
        assert "archive/byteorder" not in z.namelist()
    buf.seek(0)
    assert ember.load(buf).tolist() == [1.0, 2.0]       # little endian by default
    try:
        serialization.set_default_load_endianness(serialization.LoadEndianness.BIG)
        assert serialization.get_default_load_endianness() is serialization.LoadEndianness.BIG
        buf.seek(0)
        swapped = ember.load(buf)
        assert swapped.tolist() == np.array([1.0, 2.0], "<f4").view(">f4").tolist()
    finally:
        serialization.set_default_load_endianness(None)
    with pytest.raises(TypeError, match="set_default_load_endianness"):
        serialization.set_default_load_endianness("big")


def test_crc32_option():
    try:
        serialization.set_crc32_options(False)
        assert serialization.get_crc32_options() is False
        buf = io.BytesIO()
        ember.save({"w": ember.arange(5.0)}, buf)
    finally:
        serialization.set_crc32_options(True)
    with zipfile.ZipFile(buf) as z:
        assert {info.CRC for info in z.infolist()} == {0}
    assert ember.load(io.BytesIO(buf.getvalue()))["w"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert torch.load(io.BytesIO(buf.getvalue()), weights_only=True)["w"].tolist()[-1] == 4.0


class Counted:
    pass


def test_pickle_module_and_weights_only_defaults(torch_file):
    class Unpickler(pickle.Unpickler):
        calls = 0

        def load(self):
            Unpickler.calls += 1
            return super().load()
    module = types.SimpleNamespace(Unpickler=Unpickler, Pickler=pickle._Pickler)
    out = ember.load(torch_file, pickle_module=module)       # weights_only defaults to False
    assert Unpickler.calls > 0 and out["w"].shape == (3, 4)
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        ember.load(torch_file, pickle_module=module, weights_only=True)
    with pytest.warns(UserWarning, match="pickle_load_args only works"):
        ember.load(torch_file, encoding="latin-1")
    buf = io.BytesIO()
    ember.save([Counted(), ember.ones(1)], buf, pickle_module=module)
    buf.seek(0)
    assert type(ember.load(buf, weights_only=False)[0]) is Counted
    with pytest.raises(ValueError, match="pickle_module"):
        ember.save(1, io.BytesIO(), pickle_module=types.SimpleNamespace(Pickler=object))


def test_non_seekable_stream_is_read_whole(torch_file):
    class Stream(io.RawIOBase):
        def __init__(self, data):
            self._data = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            return self._data.readinto(b)
    out = ember.load(io.BufferedReader(Stream(torch_file.read_bytes())))
    assert out["col"].tolist() == [1.0, 5.0, 9.0]


def test_torch_serialization_names_exist():
    missing = [n for n in torch.serialization.__all__ if not hasattr(serialization, n)]
    assert missing == []
    for name in ("DEFAULT_PROTOCOL", "MAGIC_NUMBER", "PROTOCOL_VERSION", "STORAGE_KEY_SEPARATOR"):
        assert getattr(serialization, name) == getattr(torch.serialization, name)
    assert serialization.StorageType("HalfStorage").dtype is ember.float16
    assert str(serialization.StorageType("FloatStorage")) == "StorageType(dtype=ember.float32)"
    assert issubclass(serialization.SourceChangeWarning, Warning)
    assert [e.name for e in serialization.LoadEndianness] == ["NATIVE", "LITTLE", "BIG"]
    assert serialization.check_module_version_greater_or_equal(np, (1, 0))
    assert not serialization.check_module_version_greater_or_equal(np, (999,))
    bad = types.SimpleNamespace(__name__="bad", __version__="x.y")
    with pytest.raises(RuntimeError, match="malformed"):
        serialization.check_module_version_greater_or_equal(bad, (1,))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert serialization.check_module_version_greater_or_equal(bad, (1,), False)
    with serialization.mkdtemp() as d:
        assert os.path.isdir(d)
    assert not os.path.exists(d)
