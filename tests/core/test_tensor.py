"""Tensor metadata, views (compared with PyTorch's sizes/strides/offsets), storage
sharing, indexing, and interop (NumPy, DLPack, pickling, Python numbers, repr)."""
import copy
import operator
import pickle

import numpy as np
import pytest
import torch

import ember


def pair(shape=(2, 3, 4), device="cpu"):
    t = torch.arange(int(np.prod(shape)), dtype=torch.float32).reshape(shape)
    return ember.tensor(t.numpy(), device=device), t


def same_view(e, t, base):
    assert tuple(e.shape) == tuple(t.shape)
    assert e.stride() == t.stride()
    assert e.storage_offset() == t.storage_offset()
    assert e.is_contiguous() == t.is_contiguous()
    assert e.tolist() == t.tolist()
    if base is not None:
        assert e.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()


VIEWS = [
    ("view(4, 6)", "view(4, 6)"), ("view(-1)", "view(-1)"), ("view(2, -1, 2)", "view(2, -1, 2)"),
    ("reshape(6, 4)", "reshape(6, 4)"), ("permute(2, 0, 1)", "permute(2, 0, 1)"),
    ("permute((1, 0, 2))", "permute((1, 0, 2))"),
    ("transpose(0, 2)", "transpose(0, 2)"), ("mT", "mT"), ("T", "T"),
    ("movedim(0, -1)", "movedim(0, -1)"), ("movedim((0, 1), (2, 0))", "movedim((0, 1), (2, 0))"),
    ("unsqueeze(1)", "unsqueeze(1)"), ("unsqueeze(-1)", "unsqueeze(-1)"),
    ("unsqueeze(0).expand(5, 2, 3, 4)", "unsqueeze(0).expand(5, 2, 3, 4)"),
    ("unsqueeze(2).expand(-1, -1, 3, -1)", "unsqueeze(2).expand(-1, -1, 3, -1)"),
    ("unsqueeze(0).squeeze()", "unsqueeze(0).squeeze()"), ("unsqueeze(1).squeeze(1)", "unsqueeze(1).squeeze(1)"),
    ("squeeze(0)", "squeeze(0)"),
    ("flatten()", "flatten()"), ("flatten(1)", "flatten(1)"), ("unflatten(2, (2, 2))", "unflatten(2, (2, 2))"),
    ("narrow(1, 1, 2)", "narrow(1, 1, 2)"), ("narrow(2, -3, 2)", "narrow(2, -3, 2)"),
    ("select(1, -1)", "select(1, -1)"), ("diagonal()", "diagonal()"), ("diagonal(1, 1, 2)", "diagonal(1, 1, 2)"),
    ("diagonal(-1, 2, 0)", "diagonal(-1, 2, 0)"),
    ("as_strided((3, 3), (1, 2), 1)", "as_strided((3, 3), (1, 2), 1)"),
    ("transpose(1, 2).view(2, 12)", "transpose(1, 2).view(2, 12)"),
    ("transpose(0, 1)[1:].reshape(-1)", "transpose(0, 1)[1:].reshape(-1)"),
    ("t()" if False else "select(0, 0).t()", "select(0, 0).t()"),
]


@pytest.mark.parametrize("expr,texpr", VIEWS)
def test_views_match_torch(expr, texpr):
    e, t = pair()
    try:
        tv = eval("t." + texpr)
    except RuntimeError:
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            eval("e." + expr)
        return
    ev = eval("e." + expr)
    shares = tv.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
    same_view(ev, tv, e if shares else None)
    if shares:
        assert ev._base is e and ev._version == e._version


def test_split_chunk_unbind():
    e, t = pair((5, 4))
    for a, b in [(e.split(2), t.split(2)), (e.split([1, 4]), t.split([1, 4])),
                 (e.chunk(3, 1), t.chunk(3, 1)), (e.unbind(1), t.unbind(1)),
                 (ember.split(e, 3, dim=0), torch.split(t, 3, dim=0))]:
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same_view(x, y, e)
    with pytest.raises(RuntimeError, match="sum exactly"):
        e.split([1, 1])


@pytest.mark.parametrize("shape,chunks,dim", [((0, 3), 2, 0), ((3, 0), 3, 1), ((0,), 4, 0),
                                              ((5,), 3, 0), ((2, 7), 7, 1)])
def test_chunk_counts_match_torch_empty_dims_included(shape, chunks, dim):
    """An empty dim gives ``chunks`` empty pieces (q, k = x.chunk(2) on an empty batch)."""
    got = ember.zeros(shape).chunk(chunks, dim)
    want = torch.zeros(shape).chunk(chunks, dim)
    assert [tuple(p.shape) for p in got] == [tuple(p.shape) for p in want]


@pytest.mark.parametrize("index", [
    0, -1, (1, 2), (slice(None), 1), (Ellipsis, 1), (None, 0), (0, None, slice(1, 3)),
    (slice(1, None, 2),), (slice(None, None, 3), Ellipsis, slice(-2, None)),
    (Ellipsis, None), (slice(5, 10),), (1, Ellipsis, 2, None), (),
])
def test_basic_indexing(index):
    e, t = pair()
    same_view(e[index], t[index], e)


def test_indexing_errors_and_setitem():
    e, t = pair()
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 2"):
        e[5]
    with pytest.raises(IndexError, match="too many indices"):
        e[0, 0, 0, 0]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        e[::-1]
    v0 = e._version
    e[0, 1:] = 5.0
    t[0, 1:] = 5.0
    e[1, :, 0] = ember.tensor([1.0, 2.0, 3.0])
    t[1, :, 0] = torch.tensor([1.0, 2.0, 3.0])
    assert e.tolist() == t.tolist()
    assert e._version > v0


def test_view_writes_are_seen_by_base():
    e, _ = pair((3, 4))
    v = e.t()[1]
    v.fill_(-1.0)
    assert e[:, 1].tolist() == [-1.0, -1.0, -1.0]
    v.add_(1)
    assert e._version == v._version and e[:, 1].tolist() == [0.0, 0.0, 0.0]
    e.view(-1)[0] = 42.0
    assert e[0, 0].item() == 42.0


def test_view_errors():
    e, _ = pair()
    with pytest.raises(RuntimeError, match="invalid for input of size 24"):
        e.view(5, 5)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        e.view(-1, -1)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                         r"\[-3, 2\], but got 3\)"):
        e.transpose(0, 3)
    with pytest.raises(RuntimeError, match="expanded size"):
        e.expand(3, 3, 4)
    with pytest.raises(RuntimeError, match="duplicate dims"):
        e.permute(0, 0, 1)
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        e.as_strided((10, 10), (10, 1))
    with pytest.raises(TypeError):
        e.view(2.0, 12)


def test_metadata():
    e, t = pair()
    assert e.shape == t.shape and isinstance(e.shape, ember.Size)
    assert e.size() == (2, 3, 4) and e.size(-1) == 4 and e.dim() == e.ndim == 3
    assert e.numel() == e.nelement() == 24 and e.element_size() == 4
    assert e.stride() == (12, 4, 1) and e.stride(0) == 12
    assert e.is_contiguous() and not e.transpose(0, 1).is_contiguous()
    assert e.data_ptr() == e.untyped_storage().data_ptr()
    assert e[1].data_ptr() == e.data_ptr() + 12 * 4
    assert len(e) == 2 and [x.shape for x in e] == [(3, 4), (3, 4)]
    assert repr(ember.Size([2, 3])) == "ember.Size([2, 3])"
    assert ember.Size([2, 3]).numel() == 6 and isinstance(e.shape[1:], ember.Size)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(ember.tensor(1.0))


def test_python_numbers():
    x = ember.tensor([2.5])
    assert float(x) == 2.5 and int(x) == 2 and bool(x) and f"{ember.tensor(1.5):.2f}" == "1.50"
    assert ember.tensor(3).item() == 3 and isinstance(ember.tensor(3).item(), int)
    assert [10, 20, 30][ember.tensor(1)] == 20
    with pytest.raises(TypeError):
        [1][ember.tensor(0.0)]
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        bool(ember.ones(2))
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        ember.ones(2).item()


def test_numpy_zero_copy_and_from_numpy():
    e, _ = pair((3, 4))
    a = e.numpy()
    a[0, 0] = 99
    assert e[0, 0].item() == 99
    assert np.shares_memory(e.t().numpy(), a) and e.t().numpy().strides == a.T.strides
    n = np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::2]
    f = ember.from_numpy(n)
    assert f.dtype == ember.int16 and f.stride() == (4, 2) and f.tolist() == n.tolist()
    f.fill_(7)
    assert (n == 7).all()
    del n
    assert f.sum().item() == 42                      # the tensor keeps the array alive
    with pytest.raises(ValueError, match="negative"):
        ember.from_numpy(np.arange(3)[::-1])
    with pytest.raises(TypeError, match="expected np.ndarray"):
        ember.from_numpy([1, 2])
    with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.longdouble"):
        ember.from_numpy(np.zeros(2, dtype=np.longdouble))
    with pytest.raises(TypeError, match="BFloat16"):
        ember.ones(2, dtype=ember.bfloat16).numpy()
    assert np.asarray(e).dtype == np.float32
    assert np.array(ember.ones(2, dtype=ember.bfloat16), dtype=np.float32).tolist() == [1.0, 1.0]


def test_dlpack_roundtrip():
    e, _ = pair((2, 3))
    t = torch.from_dlpack(e)
    t[0, 0] = -5
    assert e[0, 0].item() == -5
    back = ember.from_dlpack(torch.arange(4.0))
    assert back.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert e.__dlpack_device__() == (1, 0)
    assert ember.from_dlpack(e.__dlpack__()).data_ptr() == e.data_ptr()


def test_pickle_and_deepcopy():
    for dt in [ember.float32, ember.bfloat16, ember.int64, ember.bool]:
        x = ember.arange(6).view(2, 3).to(dt)
        y = pickle.loads(pickle.dumps(x.t()))
        assert y.dtype == dt and y.tolist() == x.t().tolist() and y.shape == (3, 2)
    z = copy.deepcopy(x)
    assert z.tolist() == x.tolist() and z.data_ptr() != x.data_ptr()
    assert pickle.loads(pickle.dumps(ember.device("cuda:1"))) == ember.device("cuda", 1)


@pytest.mark.parametrize("make", [
    "tensor([1., 2., 3.])", "tensor([1, 2, 3])", "tensor([[1.5, 2.25], [3., 4.]])",
    "tensor([True, False])", "tensor(3.)", "tensor([1e-5, 1.])", "tensor([1e10, 1.])",
    "tensor([1., 2.], dtype=DT.float64)", "tensor([1, 2], dtype=DT.int32)",
    "zeros(0)", "zeros(2, 0)", "arange(2000.)", "tensor([float('nan'), float('inf'), 1.5])",
    "tensor([0.1234567, -12.5])", "arange(12.).reshape(3, 4) / 7", "tensor([], dtype=DT.int32)",
])
def test_repr_like_torch(make):
    e = eval(make.replace("DT.", "ember."), {"tensor": ember.tensor, "zeros": ember.zeros,
                                             "arange": ember.arange, "ember": ember})
    t = eval(make.replace("DT.", "torch."), {"tensor": torch.tensor, "zeros": torch.zeros,
                                             "arange": torch.arange, "torch": torch})
    assert repr(e) == repr(t).replace("torch.", "ember.")


@pytest.mark.parametrize("make", [
    "ones(2, requires_grad=True)", "ones(2, requires_grad=True) * 2",
    "(ones(2, requires_grad=True) * 2).detach()", "ones(2, dtype=DT.float64, requires_grad=True).sum()",
    "nn.Parameter(zeros(2))", "nn.Parameter(zeros(2), requires_grad=False)",
])
def test_repr_shows_autograd_state_like_torch(make):
    e = eval(make.replace("DT.", "ember."), {"ones": ember.ones, "zeros": ember.zeros,
                                             "nn": ember.nn, "ember": ember})
    t = eval(make.replace("DT.", "torch."), {"ones": torch.ones, "zeros": torch.zeros,
                                             "nn": torch.nn, "torch": torch})
    assert repr(e) == repr(t).replace("torch.", "ember.")


def test_device_objects():
    d = ember.device("cuda:1")
    assert d.type == "cuda" and d.index == 1 and str(d) == "cuda:1"
    assert repr(d) == "device(type='cuda', index=1)" and repr(ember.device("cpu")) == "device(type='cpu')"
    assert d == ember.device("cuda", 1) == ember.device(d) and d != ember.device("cuda")
    assert len({d, ember.device("cuda", 1), ember.device("cpu")}) == 2
    with pytest.raises(RuntimeError, match="Expected one of"):
        ember.device("gpu")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        ember.device("cuda:x")
    with ember.device("meta"):
        assert ember.zeros(2).device.type == "meta"
        assert ember.get_default_device() == ember.device("meta")
    assert ember.zeros(2).device.type == "cpu"
    ember.set_default_device("meta")
    try:
        assert ember.ones(1).is_meta
    finally:
        ember.set_default_device(None)


def test_default_dtype_and_helpers():
    assert ember.get_default_dtype() is ember.float32
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor([1.5]).dtype == ember.float64
        assert (ember.tensor([1, 2]) / 2).dtype == ember.float64
    finally:
        ember.set_default_dtype(ember.float32)
    with pytest.raises(TypeError, match="only floating-point"):
        ember.set_default_dtype(ember.int64)
    assert ember.is_tensor(ember.ones(1)) and not ember.is_tensor([1])
    assert ember.typename(ember.ones(1)) == "ember.FloatTensor"
    assert ember.typename(ember.ones(1, dtype=ember.int64)) == "ember.LongTensor"


def test_subclass_from_python():
    class MyTensor(ember.Tensor):
        pass

    x = ember.ones(2, 2)
    assert isinstance(x, ember.Tensor) and type(x) is ember.Tensor
    x.note = "attributes work"
    assert x.note == "attributes work"
    m = ember.Tensor._make_subclass(MyTensor, x)
    assert type(m) is MyTensor and m.data_ptr() == x.data_ptr() and m.shape == x.shape
    assert type(m + 1) is ember.Tensor and type(m.view(4)) is ember.Tensor
    m.fill_(3.0)
    assert x.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_view_as_dtype():
    e, t = pair((2, 4))
    for dt in ["int32", "int16", "float64", "uint8", "bfloat16", "int64"]:
        got, want = e.view(getattr(ember, dt)), t.view(getattr(torch, dt))
        assert got.shape == want.shape and got.stride() == want.stride()
        assert got.storage_offset() == want.storage_offset()
        assert got.data_ptr() == e.data_ptr() and got._base is e
        assert (got.float() if dt == "bfloat16" else got).tolist() == \
            (want.float() if dt == "bfloat16" else want).tolist()
    with pytest.raises(RuntimeError, match="stride\\(-1\\) must be 1"):
        e.t().view(ember.float64)
    with pytest.raises(RuntimeError, match="divisible by 2"):
        e[:, :3].view(ember.float64)


def test_sizes_that_overflow_raise():
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        ember.empty(1 << 62)
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        ember.empty(1 << 40, 1 << 40)
    with pytest.raises(RuntimeError, match="overflowed"):
        ember.ones(1).expand(1 << 40, 1 << 40) + 1
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        ember.ones(4).as_strided((2,), (1 << 62,))
    with pytest.raises(ember.OutOfMemoryError, match="not enough memory: you tried to allocate "
                       f"{4 << 45} bytes"):
        ember.empty(1 << 45)


def test_legacy_constructor():
    for args in [(), (2, 3), ([1, 2],), ([[1.5]],), (ember.Size([4]),)]:
        e, t = ember.Tensor(*args), torch.Tensor(*args)
        assert e.shape == t.shape and e.dtype == ember.float32
        if args and not isinstance(args[0], int) and not isinstance(args[0], tuple):
            assert e.tolist() == t.tolist()
    x = ember.ones(2)
    alias = ember.Tensor(x)
    assert alias.data_ptr() == x.data_ptr() and type(alias) is ember.Tensor
    assert ember.core._tensor.TensorBase().numpy().shape == (0,)


def test_numpy_of_a_tensor_that_requires_grad_is_refused_as_pytorch():
    import numpy as np
    x = ember.ones(3, requires_grad=True)
    for convert in (lambda: x.numpy(), lambda: np.asarray(x), lambda: (x * 2).numpy()):
        with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires "
                                               r"grad. Use tensor.detach\(\).numpy\(\) instead."):
            convert()
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
        x.__dlpack__()
    assert x.detach().numpy().tolist() == [1.0, 1.0, 1.0]
    assert x.numpy(force=True).tolist() == [1.0, 1.0, 1.0]
    with ember.no_grad():                                # the flag, not the mode, decides
        with pytest.raises(RuntimeError, match="requires grad"):
            x.numpy()


def test_H_and_mH_conjugate_like_adjoint(device, oracle):
    data = [[1 + 1j, 2], [3 - 2j, 4j]]
    e, t = ember.tensor(data, device=device), torch.tensor(data)
    oracle.assert_matches(e.H, t.H)
    oracle.assert_matches(e.mH, t.mH)
    oracle.assert_matches(e.expand(2, 2, 2).mH, t.expand(2, 2, 2).mH)
    oracle.assert_matches(e.adjoint(), t.adjoint())
    with pytest.raises(RuntimeError, match="Got 3-D tensor. For batches of matrices, consider "
                                           "using tensor.mH"):
        e.expand(2, 2, 2).H
    for name in ("H", "mH"):
        with pytest.warns(UserWarning, match=f"Tensor.{name} is deprecated on 0-D tensors"):
            oracle.assert_matches(getattr(e[0, 0], name), getattr(t[0, 0], name).resolve_conj())


@pytest.mark.parametrize("fn", [
    # NumPy scalars are the Python numbers of their kind
    lambda L: np.int64(2) * L.tensor([1, 2], dtype=L.int32),
    lambda L: L.tensor([1, 2], dtype=L.int32) * np.int64(2),
    lambda L: L.tensor([1., 2.], dtype=L.float16) * np.float32(2.5),
    lambda L: np.float32(2.5) - L.tensor([1., 2.], dtype=L.float16),
    lambda L: L.tensor([1, 2], dtype=L.int32) + np.float16(1.5),
    lambda L: L.add(L.tensor([1, 2], dtype=L.int32), np.int8(3)),
    lambda L: L.full((2,), np.int32(3)),
    lambda L: L.tensor([1., 5.]).clamp(np.float32(2), np.int64(3)),
    # bfloat16 meets complex as float32 does
    lambda L: L.tensor([1.], dtype=L.bfloat16) + 1j,
    lambda L: L.result_type(L.tensor([1.], dtype=L.bfloat16), 1j),
    # conversions to Python numbers
    lambda L: operator.index(L.tensor(True)), lambda L: operator.index(L.tensor(1.)),
    lambda L: operator.index(L.tensor([1, 2])),
    lambda L: int(L.tensor([1, 2])), lambda L: float(L.tensor([1., 2.])),
    lambda L: int(L.tensor([])), lambda L: complex(L.tensor([1., 2.])),
    lambda L: L.tensor([1, 2]).item(),
    lambda L: ~L.tensor([1.]), lambda L: ~L.tensor([1j]), lambda L: ~L.tensor([1, 2]),
    # a list holding sequences, slices, None or Ellipsis indexes as a tuple
    lambda L: L.arange(24.).reshape(2, 3, 4)[[[0, 1], [1, 0]]],
    lambda L: L.arange(24.).reshape(2, 3, 4)[[[0, 1], [1, 0], [2, 3]]],
    lambda L: L.arange(24.).reshape(2, 3, 4)[[0, slice(None)]],
    lambda L: L.arange(24.).reshape(2, 3, 4)[[0, 1]],
    lambda L: L.arange(24.).reshape(2, 3, 4)[[None, 1]],
    lambda L: (lambda x: (x.__setitem__([[0, 1], [1, 0]], 5.), x)[1])(L.zeros(2, 3)),
])
def test_scalars_conversions_and_indices_as_torch(fn, oracle):
    assert oracle.outcome(ember, fn) == oracle.outcome(torch, fn)


def test_list_of_sequences_index_warns_as_torch():
    with pytest.warns(UserWarning, match="non-tuple sequence for multidimensional indexing"):
        ember.zeros(2, 3)[[[0, 1], [1, 0]]]


def test_broadcast_to_takes_varargs_a_sequence_or_the_keyword():
    t = ember.ones(3)
    for shape in (t.broadcast_to(2, 3).shape, t.broadcast_to((2, 3)).shape,
                  t.broadcast_to(size=[2, 3]).shape, t.broadcast_to(ember.Size([2, 3])).shape):
        assert shape == (2, 3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'shape'"):
        t.broadcast_to(shape=(2, 3))


@pytest.mark.parametrize("entries", [[2.5], ["a"], [None], [1, 2.0], [np.float64(2.0)],
                                     ["tensor(3.)"]])
def test_size_rejects_non_integer_entries_with_type_error(entries):
    def make(lib):
        return [lib.tensor(3.0) if e == "tensor(3.)" else e for e in entries]
    with pytest.raises(TypeError) as t:
        torch.Size(make(torch))
    with pytest.raises(TypeError) as e:
        ember.Size(make(ember))
    assert str(e.value) == str(t.value).replace("torch.Size", "ember.Size")


def test_sample_shape_with_a_float_is_a_type_error():
    for lib in (ember, torch):
        with pytest.raises(TypeError):
            lib.distributions.Normal(0.0, 1.0).sample((2.5,))
