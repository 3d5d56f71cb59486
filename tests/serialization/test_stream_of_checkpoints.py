"""Several checkpoints written one after another into one stream load back one after
another, in order (ember had returned the last archive's object for every load: the zip
reader finds a central directory from the end of the file)."""
import io

import numpy as np
import pytest
import torch

import ember


def _stream(tmp_path=None):
    buf = io.BytesIO()
    ember.save({"a": ember.arange(3)}, buf)
    ember.save([ember.ones(2)], buf)
    torch.save(torch.arange(4.0), buf)              # PyTorch's records: sizes after the data
    ember.save(ember.zeros(1), buf, _use_new_zipfile_serialization=False)
    ember.save("last", buf)
    return buf


def _check(objs):
    assert objs[0]["a"].tolist() == [0, 1, 2]
    assert objs[1][0].tolist() == [1.0, 1.0]
    assert objs[2].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert objs[3].tolist() == [0.0]
    assert objs[4] == "last"


def test_a_stream_of_checkpoints_loads_in_order():
    buf = _stream()
    end = buf.tell()
    buf.seek(0)
    _check([ember.load(buf) for _ in range(5)])
    assert buf.tell() == end


def test_a_file_of_checkpoints_loads_in_order(tmp_path):
    path = tmp_path / "many.pt"
    path.write_bytes(_stream().getvalue())
    with open(path, "rb") as f:
        _check([ember.load(f) for _ in range(5)])
    assert ember.load(path)["a"].tolist() == [0, 1, 2]           # a path: the first one
    assert ember.load(path, mmap=True)["a"].tolist() == [0, 1, 2]


def test_a_large_first_archive_is_bounded_past_chance_signatures():
    # tensor bytes that hold the end record's signature do not end the archive early
    data = np.frombuffer(b"PK\x05\x06" * 300_000, dtype=np.uint8).copy()
    buf = io.BytesIO()
    ember.save(ember.from_numpy(data), buf)
    ember.save(ember.arange(2), buf)
    buf.seek(0)
    assert np.array_equal(ember.load(buf).numpy(), data)
    assert ember.load(buf).tolist() == [0, 1]


def test_a_damaged_first_archive_is_an_error_not_the_next_object():
    buf = io.BytesIO()
    ember.save(ember.arange(3), buf)
    first = bytearray(buf.getvalue())
    first[-22:-18] = b"XXXX"                         # its end record is gone
    stream = io.BytesIO(bytes(first))
    stream.seek(0, io.SEEK_END)
    ember.save(ember.ones(2), stream)
    stream.seek(0)
    with pytest.raises(RuntimeError, match="not a valid checkpoint"):
        ember.load(stream)
