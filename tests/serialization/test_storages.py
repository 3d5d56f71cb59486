"""Storages in checkpoints against PyTorch: a storage saved as an object of its own (in
either direction), what a ``map_location`` callable is given, and the private helpers of
torch.serialization that third-party code calls."""
import io
import warnings

import pytest
import torch

import ember


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():          # TypedStorage is deprecated in both libraries
        warnings.simplefilter("ignore")
        yield


def saved(lib, obj):
    buf = io.BytesIO()
    lib.save(obj, buf)
    return buf.getvalue()


def describe(st):
    return type(st).__name__, str(st.dtype)[6:], st.size(), st.tolist()


def storages(lib):
    t = lib.arange(3.0)
    return {"untyped": lambda: lib.arange(2.0).untyped_storage(), "typed": lambda: t.storage(),
            "with tensor": lambda: [t, t.storage()],
            "bytes and tensor": lambda: [lib.arange(4, dtype=lib.uint8),
                                         lib.arange(4, dtype=lib.uint8).untyped_storage()]}


@pytest.mark.parametrize("case", list(storages(torch)))
@pytest.mark.parametrize("writer, reader", [(ember, ember), (ember, torch), (torch, ember)])
def test_saved_storages_load_as_typed_storages(case, writer, reader):
    def load(w, r):
        out = r.load(io.BytesIO(saved(w, storages(w)[case]())))
        if isinstance(out, list):
            tensor, st = out
            return describe(st), tensor.tolist(), st.data_ptr() == tensor.data_ptr()
        return describe(out)
    assert load(writer, reader) == load(torch, torch)


def test_a_tensor_and_the_bytes_of_its_storage_are_refused_as_torch_does():
    for lib in (ember, torch):
        t = lib.arange(3.0)
        with pytest.raises(RuntimeError, match="view the same data as different types"):
            lib.save([t, t.untyped_storage()], io.BytesIO())


def test_loaded_storages_are_usable():
    st = ember.load(io.BytesIO(saved(torch, torch.arange(3.0).storage())))
    assert ember.empty(0).set_(st).tolist() == [0.0, 1.0, 2.0]
    assert repr(st).endswith("[ember.storage.TypedStorage(dtype=ember.float32, device=cpu) "
                             "of size 3]")
    meta = ember.load(io.BytesIO(saved(torch, torch.arange(3.0).storage())),
                      map_location="meta")
    assert meta.device.type == "meta" and meta.size() == 3


def test_weights_only_loads_storages():
    data = saved(ember, {"s": ember.arange(2.0).untyped_storage()})
    assert type(ember.load(io.BytesIO(data), weights_only=True)["s"]).__name__ == \
        type(torch.load(io.BytesIO(data), weights_only=True)["s"]).__name__ == "TypedStorage"


def test_map_location_callable_gets_an_untyped_storage():
    def run(lib):
        seen = []

        def fn(storage, location):
            seen.append((type(storage).__name__, storage.size(), storage.nbytes(), location))
            return storage
        t = lib.arange(4.0)
        out = lib.load(io.BytesIO(saved(lib, [t, t[1:], lib.ones(2)])), map_location=fn)
        return sorted(seen), [x.tolist() for x in out], \
            out[1].data_ptr() - out[0].data_ptr()
    assert run(ember) == run(torch)


@pytest.mark.parametrize("fn", [
    lambda lib: lambda s, loc: None,
    lambda lib: lambda s, loc: s.cpu(),
    lambda lib: lambda s, loc: s.to(device="cpu"),
    lambda lib: lambda s, loc: lib.serialization.default_restore_location(s, "cpu"),
])
def test_map_location_callables_that_move_or_defer(fn):
    def run(lib):
        return lib.load(io.BytesIO(saved(lib, {"a": lib.arange(3.0)})),
                        map_location=fn(lib))["a"].tolist()
    assert run(ember) == run(torch)


def test_map_location_callable_returning_a_wrong_storage():
    data = saved(ember, {"a": ember.arange(3.0)})
    with pytest.raises(TypeError, match="map_location must return the storage"):
        ember.load(io.BytesIO(data), map_location=lambda s, loc: ember.UntypedStorage(2))
    with pytest.raises(TypeError, match="map_location returned int"):
        ember.load(io.BytesIO(data), map_location=lambda s, loc: 3)


def test_private_serialization_helpers():
    ser = ember.serialization
    assert ser._default_to_weights_only(None) is torch.serialization._default_to_weights_only(
        None) is True
    assert ser._default_to_weights_only(object()) is False
    buf = io.BytesIO()
    with ser._open_file_like(buf, "wb") as f:
        ember.save(ember.ones(2), f)
    with ser._open_file_like(io.BytesIO(buf.getvalue()), "rb") as f:
        assert ember.load(f).tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="Expected 'r' or 'w'"):
        ser._open_file_like(buf, "x")
    restore = ser._get_restore_location("cpu")
    moved = restore(ember.arange(2.0).untyped_storage(), "cpu")
    assert type(moved).__name__ == "UntypedStorage" and moved.nbytes() == 8
