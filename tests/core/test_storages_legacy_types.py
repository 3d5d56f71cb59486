"""Storages (UntypedStorage/TypedStorage and the legacy FloatStorage-style classes), the
legacy tensor types (FloatTensor, cuda.LongTensor, ``type()`` strings) and the tensor
storage methods (set_, resize_, share_memory_), against torch."""
import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import ember


def test_untyped_storage_shares_memory_and_reports_bytes():
    for mod in (torch, ember):
        x = mod.arange(6, dtype=mod.float32)
        s = x.untyped_storage()
        assert s.nbytes() == 24 and len(s) == 24 and s.element_size() == 1
        assert s.data_ptr() == x.data_ptr()
        assert x[2:].untyped_storage().data_ptr() == s.data_ptr()      # the whole buffer
        assert s.device.type == "cpu" and not s.is_cuda
        s[0] = 0                                     # writes through to the tensor
        assert x.untyped_storage().tolist()[:4] == [0, 0, 0, 0]


def test_untyped_storage_construction_and_copy():
    assert ember.UntypedStorage(5).nbytes() == torch.UntypedStorage(5).nbytes() == 5
    assert ember.UntypedStorage([1, 2, 255]).tolist() == torch.UntypedStorage([1, 2, 255]).tolist()
    a = ember.UntypedStorage(4).fill_(7)
    assert a.tolist() == [7, 7, 7, 7]
    b = a.clone()
    b[0] = 1
    assert a.tolist()[0] == 7 and b.tolist()[0] == 1
    assert isinstance(a, ember.StorageBase) and ember.is_storage(a)
    assert not ember.is_storage(ember.ones(1))


def test_typed_storage_views_the_tensor():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mod in (torch, ember):
            x = mod.tensor([1.0, 2.0, 3.0])
            s = x.storage()
            assert s.size() == len(s) == 3 and s.dtype == mod.float32
            assert s.nbytes() == 12 and s.element_size() == 4
            assert s.data_ptr() == x.data_ptr()
            assert s.tolist() == [1.0, 2.0, 3.0]
            s[1] = 5.0
            assert x.tolist() == [1.0, 5.0, 3.0]
            assert s.untyped().nbytes() == 12


def test_legacy_storage_classes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mod in (torch, ember):
            s = mod.FloatStorage(3)
            assert s.dtype == mod.float32 and s.size() == 3
            assert isinstance(s, mod.FloatStorage) and isinstance(s, mod.TypedStorage)
            assert mod.LongStorage([1, 2]).tolist() == [1, 2]
            assert mod.Storage is mod.FloatStorage
            assert isinstance(mod.ones(2).storage(), mod.FloatStorage)
            assert not isinstance(mod.ones(2, dtype=mod.int64).storage(), mod.FloatStorage)


@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "LongTensor", "IntTensor",
                                  "ByteTensor", "BoolTensor", "HalfTensor", "BFloat16Tensor"])
def test_legacy_tensor_types(name):
    T, E = getattr(torch, name), getattr(ember, name)
    t, e = T(2, 3), E(2, 3)
    assert tuple(e.shape) == tuple(t.shape) and e.dtype.name == str(t.dtype).split(".")[1]
    assert isinstance(e, E) and isinstance(e, ember.Tensor)
    assert e.type() == t.type().replace("torch", "ember")
    assert E([1, 0]).tolist() == T([1, 0]).tolist()
    assert E().shape == T().shape == (0,)
    assert tuple(E(ember.Size([2, 1])).shape) == (2, 1)
    other = ember.FloatTensor if name != "FloatTensor" else ember.DoubleTensor
    assert not isinstance(e, other)


def test_type_conversions_by_name():
    t, e = torch.ones(2), ember.ones(2)
    assert e.type() == "ember.FloatTensor" and t.type() == "torch.FloatTensor"
    assert e.type("ember.DoubleTensor").dtype == ember.float64
    assert e.type(ember.LongTensor).dtype == ember.int64
    assert e.type(ember.int32).dtype == ember.int32
    assert ember.typename(e) == "ember.FloatTensor"
    assert repr(ember.FloatTensor) == "<class 'ember.FloatTensor'>"
    assert ember.FloatTensor.__module__ == "ember" and ember.cuda.FloatTensor.__module__ == "ember.cuda"


def test_cuda_legacy_types_without_a_gpu():
    if ember.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(TypeError, match="not available"):
        ember.cuda.FloatTensor(2)
    with pytest.raises(TypeError, match="not available"):
        ember.cuda.LongStorage(2)
    assert not isinstance(ember.ones(1), ember.cuda.FloatTensor)
    assert ember.cuda.FloatTensor.is_cuda and not ember.FloatTensor.is_cuda


def test_set_and_resize():
    for mod in (torch, ember):
        a = mod.arange(6.0)
        b = mod.empty(0)
        b.set_(a.untyped_storage(), 1, (2, 2), (2, 1))
        assert b.tolist() == [[1.0, 2.0], [3.0, 4.0]]
        b[0, 0] = 9.0
        assert a[1].item() == 9.0
        c = mod.empty(0).set_(a)
        assert c.data_ptr() == a.data_ptr() and tuple(c.shape) == (6,)
        r = mod.tensor([1.0, 2.0, 3.0])
        r.resize_(2, 2)
        assert tuple(r.shape) == (2, 2) and r.flatten()[:3].tolist() == [1.0, 2.0, 3.0]
        r.resize_(1)
        assert r.tolist() == [1.0]
        q = mod.zeros(3)
        q.resize_as_(mod.ones(2, 2))
        assert tuple(q.shape) == (2, 2)


def test_share_memory_and_pickle_of_storages():
    x = ember.arange(4.0)
    assert x.share_memory_() is x and x.is_shared()
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]
    s = ember.UntypedStorage([1, 2, 3])
    assert pickle.loads(pickle.dumps(s)).tolist() == [1, 2, 3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = pickle.loads(pickle.dumps(ember.FloatStorage([1.5, 2.5])))
    assert isinstance(f, ember.FloatStorage) and f.tolist() == [1.5, 2.5]


def test_storage_from_buffer():
    data = np.arange(4, dtype=np.float32).tobytes()
    e = ember.UntypedStorage.from_buffer(data, dtype=ember.float32)
    t = torch.UntypedStorage.from_buffer(data, "native", dtype=torch.float32)
    assert e.nbytes() == t.nbytes() == 16
    assert e.tolist() == t.tolist()
    big = np.arange(3, dtype=">i4").tobytes()
    e = ember.UntypedStorage.from_buffer(big, "big", count=2, offset=4, dtype=ember.int32)
    t = torch.UntypedStorage.from_buffer(big, "big", count=2, offset=4, dtype=torch.int32)
    assert e.tolist() == t.tolist()


def test_inference_and_version_queries():
    with ember.inference_mode():
        x = ember.ones(2)
    assert x.is_inference() and not ember.ones(2).is_inference()
    y = ember.ones(2)
    v = y._version
    y.add_(1)
    assert y._version == v + 1
    ember.autograd.graph.increment_version(y)
    assert y._version == v + 2


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_deepcopy_copy_and_pickle_as_torch(lib):
    x = lib.ones(3, requires_grad=True)
    x.grad = lib.full((3,), 5.)
    y = copy.deepcopy(x)
    (y * 2).sum().backward()
    assert y.is_leaf and y.grad.tolist() == [7., 7., 7.] and x.grad.tolist() == [5., 5., 5.]
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(x * 1)
    z = lib.arange(4.)
    a, b = copy.deepcopy([z, z[1:]])               # views copied together keep sharing
    b[0] = 9
    assert a.tolist() == [0., 9., 2., 3.] and z.tolist() == [0., 1., 2., 3.]
    c = copy.copy(x)
    assert c.requires_grad and c.is_leaf and c.data_ptr() == x.data_ptr()
    p = pickle.loads(pickle.dumps(lib.arange(6.).reshape(2, 3).t().requires_grad_()))
    assert p.requires_grad and p.is_leaf and p.stride() == (1, 3)
    assert p.tolist() == [[0., 3.], [1., 4.], [2., 5.]]


def test_a_storage_freed_by_the_cycle_collector_returns_its_memory():
    # The cyclic GC's clear used to empty the storage's backend before its __dealloc__
    # ran, so a block reachable only from a reference cycle was never freed.
    import gc

    class Holder:
        pass

    gc.collect()
    base = ember.cpu.memory_allocated()
    for _ in range(3):
        t = ember.ones(1 << 18)        # made first: the collector visits its storage first
        h = Holder()
        h.me, h.t = h, t
        del h, t
        gc.collect()
    assert ember.cpu.memory_allocated() == base
