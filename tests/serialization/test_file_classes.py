"""torch.PyTorchFileReader/PyTorchFileWriter and the storage contexts: ember's against
PyTorch 2.13's, on archives written by each side."""
import io

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

_CLASSES = ["PyTorchFileReader", "PyTorchFileWriter", "SerializationStorageContext",
            "DeserializationStorageContext"]


@pytest.mark.parametrize("name", _CLASSES)
def test_every_public_method_of_torch_exists(name):
    want = {n for n in dir(getattr(torch, name)) if not n.startswith("_")}
    assert want <= set(dir(getattr(ember, name)))
    assert getattr(ember, name).__module__ == "ember"


def _write(lib, f, **kw):
    w = lib.PyTorchFileWriter(f, **kw)
    w.write_record("data.pkl", b"hello world", 5)
    w.write_record("notes", "text record", 11)
    s = lib.arange(6, dtype=lib.float32).untyped_storage()
    w.write_record("data/0", s, s.nbytes())
    assert w.serialization_id() == ""
    assert w.get_all_written_records() == {"data.pkl", "notes", "data/0"}
    w.write_end_of_file()
    return w


@pytest.mark.parametrize("writer,reader", [(ember, torch), (torch, ember), (ember, ember)])
@pytest.mark.parametrize("kw", [{}, {"compute_crc32": False, "storage_alignment": 128}])
def test_archives_written_by_one_side_read_by_the_other(writer, reader, kw):
    buf = io.BytesIO()
    w = _write(writer, buf, **kw)
    assert w.archive_name() == "archive"
    assert w.get_all_written_records() == {"data.pkl", "notes", "data/0", "version",
                                           "byteorder", ".data/serialization_id"}
    assert len(w.serialization_id()) == 40
    buf.seek(0)
    r = reader.PyTorchFileReader(buf)
    assert r.get_all_records() == ["data.pkl", "notes", "data/0", "version", "byteorder",
                                   ".data/serialization_id"]
    assert r.get_record("data.pkl") == b"hello"
    assert r.get_record("notes") == b"text record"
    assert r.get_record("version") == b"3\n"
    assert r.serialization_id() == w.serialization_id()
    assert r.has_record("notes") and not r.has_record("archive/notes")
    assert r.get_record_size("data/0") == 24
    align = kw.get("storage_alignment", 64)
    assert r.get_record_offset("data/0") % align == 0
    raw = buf.getvalue()
    off = r.get_record_offset("data/0")
    assert raw[off:off + 24] == np.arange(6, dtype=np.float32).tobytes()
    for name in r.get_all_records():
        h = r.get_record_header_offset(name)
        assert raw[h:h + 4] == b"PK\x03\x04"
        assert r.get_record_offset_no_read(h, name, r.get_record_size(name), align) == \
            r.get_record_offset(name)
    t = r.get_storage_from_record("data/0", 6, reader.float32)
    assert tuple(t.shape) == (0,) and t.untyped_storage().nbytes() == 24
    full = reader.tensor([], dtype=reader.float32).set_(t.untyped_storage())
    assert full.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_offsets_agree_with_torch_on_a_checkpoint(tmp_path):
    path = str(tmp_path / "ck.pt")
    torch.save({"w": torch.randn(3, 5), "b": torch.arange(7)}, path)
    er, tr = ember.PyTorchFileReader(path), torch._C.PyTorchFileReader(path)
    assert er.get_all_records() == tr.get_all_records()
    for name in tr.get_all_records():
        assert er.get_record(name) == tr.get_record(name)
        assert er.get_record_offset(name) == tr.get_record_offset(name)
        assert er.get_record_header_offset(name) == tr.get_record_header_offset(name)
    assert er.serialization_id() == tr.serialization_id()


def test_written_files_are_torch_checkpoints_records(tmp_path):
    path = str(tmp_path / "model.v1.pt")
    w = ember.PyTorchFileWriter(path)
    assert w.archive_name() == "model.v1"
    w.set_min_version(5)
    w.write_record_metadata("later", 8)         # data written afterwards, at its offset
    w.write_end_of_file()
    r = torch._C.PyTorchFileReader(path)
    assert r.get_record("version") == b"5\n"
    off = r.get_record_offset("later")
    with open(path, "r+b") as fh:
        fh.seek(off)
        fh.write(b"12345678")
    assert ember.PyTorchFileReader(path).get_record("later") == b"12345678"


@pytest.mark.parametrize("case", ["missing_record", "no_file", "not_zip", "wrong_size",
                                  "twice", "after_end", "end_twice", "bad_name"])
def test_errors_are_runtime_errors_as_torch(case, tmp_path):
    def run(lib):
        if case == "no_file":
            return lib.PyTorchFileReader(str(tmp_path / "nope.pt"))
        if case == "not_zip":
            p = tmp_path / "x.txt"
            p.write_bytes(b"plain text, not an archive")
            return lib.PyTorchFileReader(str(p))
        if case == "bad_name":
            return lib.PyTorchFileWriter(str(tmp_path) + "/")
        buf = io.BytesIO()
        w = _write(lib, buf) if case in ("after_end", "end_twice") else \
            lib.PyTorchFileWriter(buf)
        if case == "twice":
            w.write_record("a", b"1", 1)
            return w.write_record("a", b"2", 1)
        if case == "after_end":
            return w.write_record("late", b"1", 1)
        if case == "end_twice":
            return w.write_end_of_file()
        w.write_record("a", b"1234", 4)
        w.write_end_of_file()
        buf.seek(0)
        r = lib.PyTorchFileReader(buf)
        if case == "missing_record":
            return r.get_record("nope")
        return r.get_storage_from_record("a", 3, lib.float32)
    with pytest.raises(RuntimeError) as te:
        run(torch)
    with pytest.raises(RuntimeError) as ee:
        run(ember)
    if case in ("missing_record", "no_file", "wrong_size"):
        assert str(ee.value)[:25] == str(te.value)[:25]
    if case == "bad_name":
        assert "invalid file name" in str(ee.value) and "invalid file name" in str(te.value)


def test_deserialization_storage_context():
    for lib in (torch, ember):
        ctx = lib._C.DeserializationStorageContext() if lib is torch else \
            ember.DeserializationStorageContext()
        t = lib.arange(4.0)
        ctx.add_storage("a", t[1:])
        assert ctx.has_storage("a") and not ctx.has_storage("b")
        g = ctx.get_storage("a", lib.float32)
        assert tuple(g.shape) == (0,) and g.untyped_storage().nbytes() == 16
        assert g.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
        assert ctx.get_storage("a", lib.int32).dtype == lib.int32
        with pytest.raises(RuntimeError):
            ctx.add_storage("a", t)
        with pytest.raises(RuntimeError):
            ctx.get_storage("b", lib.float32)
        with pytest.raises(TypeError):
            ctx.add_storage("c", 3)


def test_serialization_storage_context_numbers_storages():
    ctx = ember.SerializationStorageContext()
    a, b = ember.arange(3.0), ember.ones(2)
    assert ctx.get_or_add_storage(a.untyped_storage()) == 0
    assert not ctx.has_storage(b.untyped_storage())
    assert ctx.get_or_add_storage(b.untyped_storage()) == 1
    assert ctx.get_or_add_storage(a[1:].untyped_storage()) == 0     # the same memory
    assert ctx.get_or_add_storage(a.storage()) == 0                 # typed or untyped
    assert ctx.has_storage(b.untyped_storage())
    with pytest.raises(TypeError):
        ctx.get_or_add_storage(a)
