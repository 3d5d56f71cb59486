"""Where checkpoints go: paths, file objects, atomic saves, mmap; ember's safetensors format
and the safetensors library (NumPy and PyTorch flavours) in both directions."""
import collections
import io
import os
import pathlib

import numpy as np
import pytest
import torch
from safetensors.numpy import load_file as np_load_file
from safetensors.numpy import save_file as np_save_file
from safetensors.torch import load_file as torch_load_file
from safetensors.torch import save_file as torch_save_file

import ember
from ember.serialization import _container

TORCH_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
                torch.float16, torch.bfloat16, torch.float32, torch.float64]


def _torch_sample(dtype, shape):
    base = torch.arange(int(np.prod(shape)), dtype=torch.float64).reshape(shape) * 1.37 - 3.2
    return base.gt(0) if dtype == torch.bool else base.to(dtype)


def _as_torch(t):
    """An ember tensor as torch, bit for bit (bfloat16 through its int16 pattern)."""
    if t.dtype == ember.bfloat16:
        return torch.from_numpy(np.asarray(t.contiguous().view(ember.int16)).copy()).view(
            torch.bfloat16)
    return torch.from_numpy(np.asarray(t).copy())


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_torch_safetensors_file_loads_as_flat_dict(tmp_path, dtype):
    tensors = {"layer.weight": _torch_sample(dtype, (3, 4)), "bias": _torch_sample(dtype, (4,)),
               "scalar": _torch_sample(dtype, ()), "empty": _torch_sample(dtype, (0, 2))}
    path = tmp_path / "t.safetensors"
    torch_save_file(tensors, str(path), metadata={"format": "pt"})
    out = ember.load(path)
    assert type(out) is dict and set(out) == set(tensors)
    with open(path, "rb") as f:
        header = _container.read(f)[1]
    assert list(out) == list(header)                # data-offset order
    for k, v in tensors.items():
        assert out[k].dtype.name == str(v.dtype).split(".")[1]
        assert tuple(out[k].shape) == tuple(v.shape)
        assert torch.equal(_as_torch(out[k]), v)


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_ember_checkpoint_reads_in_safetensors_torch(tmp_path, dtype):
    edtype = getattr(ember, str(dtype).split(".")[1])
    sd = {"a.weight": ember.arange(12, dtype=ember.float64).reshape(3, 4).mul(0.7).to(edtype),
          "a.bias": ember.ones(4, dtype=edtype).t(), "nested": {"x": ember.zeros(2, dtype=edtype)}}
    path = tmp_path / "e.safetensors"
    ember.save(sd, path, format="safetensors")
    out = torch_load_file(str(path))
    assert set(out) == {"a.weight", "a.bias", "nested.x"}     # entries named by tree path
    assert torch.equal(out["a.weight"], _as_torch(sd["a.weight"]))
    assert torch.equal(out["nested.x"], _as_torch(sd["nested"]["x"]))


def test_numpy_safetensors_both_ways(tmp_path):
    arrays = {"f": np.linspace(-1, 1, 7, dtype=np.float32), "i": np.arange(6).reshape(2, 3),
              "b": np.array([True, False]), "h": np.array([1.5, -2], np.float16)}
    np_save_file(arrays, str(tmp_path / "n.safetensors"))
    out = ember.load(str(tmp_path / "n.safetensors"))
    for k, v in arrays.items():
        np.testing.assert_array_equal(np.asarray(out[k]), v)
    ember.save({k: ember.from_numpy(v) for k, v in arrays.items()}, tmp_path / "m.safetensors",
               format="safetensors")
    back = np_load_file(str(tmp_path / "m.safetensors"))
    for k, v in arrays.items():
        np.testing.assert_array_equal(back[k], v)
        assert back[k].dtype == v.dtype


def test_pickle_checkpoint_tensors_are_visible_to_safetensors(tmp_path):
    ember.save({"s": {1}, "w": ember.ones(2, 2)}, tmp_path / "p.safetensors", format="safetensors")
    out = torch_load_file(str(tmp_path / "p.safetensors"))
    assert list(out.values())[0].tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_header_is_padded_and_tensors_aligned():
    buf = io.BytesIO()
    ember.save({"a": ember.ones(3, dtype=ember.uint8), "b": ember.ones(3, dtype=ember.float64),
                "c": ember.ones(1, dtype=ember.int16)}, buf, format="safetensors")
    raw = buf.getvalue()
    n = int.from_bytes(raw[:8], "little")
    assert n % 8 == 0
    _, entries, _ = _container.read(io.BytesIO(raw))
    for e in entries.values():
        itemsize = np.dtype(_container.DTYPES[e.dtype][1]).itemsize
        assert e.begin % itemsize == 0


def test_paths_and_file_objects(tmp_path, fmt):
    t = ember.randn(3)
    for target in (str(tmp_path / "a.ckpt"), tmp_path / "b.ckpt"):
        ember.save({"t": t}, target, format=fmt)
        assert ember.equal(ember.load(target)["t"], t)
    with open(tmp_path / "c.ckpt", "wb") as f:
        ember.save(t, f, format=fmt)
    with open(tmp_path / "c.ckpt", "rb") as f:
        assert ember.equal(ember.load(f), t)
    # reading starts at the current position
    buf = io.BytesIO()
    buf.write(b"prefix")
    ember.save({"x": 1}, buf, format=fmt)
    buf.seek(6)
    assert ember.load(buf) == {"x": 1}


def test_safetensors_checkpoints_share_one_stream():
    buf = io.BytesIO()
    buf.write(b"prefix")
    ember.save({"x": 1}, buf, format="safetensors")
    ember.save([ember.ones(2)], buf, format="safetensors")
    buf.seek(6)
    assert ember.load(buf) == {"x": 1}
    assert ember.load(buf)[0].tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="no data"):
        ember.load(buf)


def test_bad_targets():
    # as torch: AttributeError for an object that is neither a path nor a file
    with pytest.raises(AttributeError, match="file-like object with a 'write'"):
        ember.save(ember.ones(1), 42)
    with pytest.raises(AttributeError, match="read"):
        ember.load(42)
    with pytest.raises(ValueError, match="mmap"):
        ember.load(io.BytesIO(), mmap=True)
    with pytest.raises(FileNotFoundError):
        ember.load("/nonexistent/ckpt.pt")
    with pytest.raises(RuntimeError, match="pickle_module"):
        ember.load(io.BytesIO(), pickle_module=__import__("pickle"), weights_only=True)
    with pytest.raises(ValueError, match="format"):
        ember.save(ember.ones(1), io.BytesIO(), format="npz")


def test_text_mode_file_is_refused(tmp_path, fmt):
    ember.save(ember.ones(1), tmp_path / "x", format=fmt)
    with open(tmp_path / "x", encoding="latin-1") as f, pytest.raises(TypeError, match="binary"):
        ember.load(f)


def test_mmap_loads_safetensors_mapped_copy_on_write(tmp_path):
    path = tmp_path / "m.ckpt"
    t = ember.arange(10, dtype=ember.float32)
    ember.save({"t": t, "e": ember.zeros(0)}, path, format="safetensors")
    out = ember.load(path, mmap=True)
    assert ember.equal(out["t"], t)
    out["t"].add_(1)                                # private mapping: the file is unchanged
    assert ember.equal(ember.load(path)["t"], t)


def test_save_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "model.ckpt"
    ember.save({"v": ember.ones(4)}, path, format="safetensors")
    before = path.read_bytes()
    calls = []

    def failing_write(f, arr):
        calls.append(arr.nbytes)
        if len(calls) == 2:
            raise OSError("disk full (simulated)")
        f.write(memoryview(np.ascontiguousarray(arr)).cast("B"))
    monkeypatch.setattr(_container, "_write_array", failing_write)
    with pytest.raises(OSError, match="simulated"):
        ember.save({"a": ember.zeros(1000), "b": ember.zeros(1000)}, path, format="safetensors")
    assert len(calls) == 2
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["model.ckpt"]          # no temp file left
    monkeypatch.undo()
    ember.save({"v": ember.zeros(2)}, path)                        # a new save replaces it
    assert ember.load(path)["v"].tolist() == [0.0, 0.0]
    assert sorted(os.listdir(tmp_path)) == ["model.ckpt"]


def test_zip_save_is_atomic(tmp_path, monkeypatch):
    from ember.serialization import _zipfile
    path = tmp_path / "model.pt"
    ember.save({"v": ember.ones(4)}, path)
    before = path.read_bytes()
    real = _zipfile.ZipWriter.write_record

    def failing(self, name, data, size=None):
        if name == "data/1":
            raise OSError("disk full (simulated)")
        return real(self, name, data, size)
    monkeypatch.setattr(_zipfile.ZipWriter, "write_record", failing)
    with pytest.raises(OSError, match="simulated"):
        ember.save({"a": ember.zeros(1000), "b": ember.zeros(1000)}, path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["model.pt"]


def test_save_through_symlink_writes_the_target(tmp_path, fmt):
    real = tmp_path / "real.ckpt"
    link = tmp_path / "link.ckpt"
    ember.save(1, real, format=fmt)
    link.symlink_to(real)
    ember.save(2, link, format=fmt)
    assert link.is_symlink() and ember.load(real) == 2


def test_save_and_load_through_pathlib(tmp_path, fmt):
    p = pathlib.Path(tmp_path) / "sub"
    p.mkdir()
    ember.save([1, 2], p / "x", format=fmt)
    assert ember.load(p / "x") == [1, 2]


DATA = pathlib.Path(__file__).parent / "data"


def test_checkpoints_saved_by_earlier_ember_still_load():
    # written by ember before PyTorch's zip format became the default (safetensors + JSON tree,
    # and the pickle flavour, protocol 4)
    out = ember.load(DATA / "tree.ckpt")
    assert out["epoch"] == 3 and list(out["model"]) == ["w", "b", "h"]
    assert out["model"]._metadata == {"": {"version": 1}}
    assert out["model"]["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert out["model"]["h"].dtype == ember.bfloat16 and out["model"]["h"].tolist() == [1.5, -2.0]
    assert out["tied"].data_ptr() == out["model"]["w"].data_ptr()
    pickled = ember.load(DATA / "pickle.ckpt")
    assert pickled["s"] == {1, 2} and pickled["c"] == collections.Counter("aab")
    assert type(pickled["p"]) is ember.nn.Parameter and pickled["p"].requires_grad
    assert pickled["dtype"] is ember.float16 and pickled["size"] == ember.Size([2])
    assert ember.load(DATA / "pickle.ckpt", mmap=True)["p"].tolist() == [1.0, 1.0]
