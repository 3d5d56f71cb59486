"""ember.core._dtype against PyTorch (the oracle) and NumPy."""
import copy
import pickle

import numpy as np
import pytest
from ember.core import _dtype

torch = pytest.importorskip("torch")

NAMES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
         "uint8", "bool"]
DTYPES = [getattr(_dtype, n) for n in NAMES]
TORCH = {getattr(_dtype, n): getattr(torch, n) for n in NAMES}
FROM_TORCH = {t: e for e, t in TORCH.items()}
ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
           "int": "int32", "short": "int16"}


def test_all_dtypes_and_names():
    assert _dtype.all_dtypes == tuple(DTYPES)
    assert len(set(map(id, DTYPES))) == 10
    for n in NAMES:
        assert _dtype._dtype_by_name[n] is getattr(_dtype, n)
    for alias, n in ALIASES.items():
        assert getattr(_dtype, alias) is getattr(_dtype, n)
        assert _dtype._dtype_by_name[alias] is getattr(_dtype, n)
    assert set(_dtype._dtype_by_name) == set(NAMES) | set(ALIASES) | {
        "complex64", "complex128", "cfloat", "cdouble", "uint16", "uint32", "uint64"}


@pytest.mark.parametrize("name", NAMES)
def test_properties_match_torch(name):
    d, t = getattr(_dtype, name), getattr(torch, name)
    assert isinstance(d, _dtype.dtype)
    assert d.name == name
    assert d.itemsize == t.itemsize
    assert d.is_floating_point == t.is_floating_point
    assert d.is_signed == t.is_signed
    assert d.is_complex is False and d.is_complex == t.is_complex
    assert repr(d) == str(d) == repr(t).replace("torch.", "ember.")
    assert d.category == (2 if t.is_floating_point else 0 if t is torch.bool else 1)
    if name == "bfloat16":
        assert d.np_dtype is None
    else:
        assert d.np_dtype == torch.empty(0, dtype=t).numpy().dtype
        assert isinstance(d.np_dtype, np.dtype)


def test_codes_are_pytorch_scalar_types():
    # abi.h's codes are c10::ScalarType's numbering
    expected = {"uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5,
                "float32": 6, "float64": 7, "bool": 11, "bfloat16": 15}
    for name, code in expected.items():
        assert getattr(_dtype, name).code == code
        assert _dtype._dtype_from_code(code) is getattr(_dtype, name)
    for code in [-1, 8, 12, 13, 14, 16, 1000]:
        assert _dtype._dtype_from_code(code) is None


def test_attributes_read_only_and_no_construction():
    with pytest.raises(AttributeError):
        _dtype.float32.itemsize = 8
    with pytest.raises(TypeError, match="cannot create 'ember.dtype' instances"):
        _dtype.dtype()


def test_singletons_pickle_copy_hash():
    for d in DTYPES:
        for proto in range(pickle.HIGHEST_PROTOCOL + 1):
            assert pickle.loads(pickle.dumps(d, protocol=proto)) is d
        assert copy.copy(d) is d
        assert copy.deepcopy(d) is d
        assert copy.deepcopy([d, {"k": d}])[1]["k"] is d
        assert hash(d) == hash(d)
    assert pickle.loads(pickle.dumps(_dtype.float)) is _dtype.float32
    assert len({d: 0 for d in DTYPES + [_dtype.float, _dtype.long]}) == 10
    assert _dtype.float32 == _dtype.float and _dtype.float32 != _dtype.float64
    assert _dtype.float32 != "float32" and _dtype.float32 != np.float32


def test_promote_types_exhaustive():
    for a in DTYPES:
        for b in DTYPES:
            expected = FROM_TORCH[torch.promote_types(TORCH[a], TORCH[b])]
            assert _dtype.promote_types(a, b) is expected, (a, b)
            assert _dtype.promote_types(type1=a, type2=b) is expected


def test_promote_types_key_cases():
    p = _dtype.promote_types
    assert p(_dtype.uint8, _dtype.int8) is _dtype.int16
    assert p(_dtype.float16, _dtype.bfloat16) is _dtype.float32
    assert p(_dtype.int64, _dtype.float16) is _dtype.float16
    assert p(_dtype.bool, _dtype.uint8) is _dtype.uint8


def test_promote_types_errors():
    with pytest.raises(TypeError, match=r"promote_types\(\): argument 'type2' \(position 2\) "
                                        r"must be ember.dtype, not int"):
        _dtype.promote_types(_dtype.float32, 3)
    with pytest.raises(TypeError, match="argument 'type1'.*not Float32DType"):
        _dtype.promote_types(np.dtype("float32"), _dtype.float32)
    with pytest.raises(TypeError, match="argument 'type1'.*not NoneType"):
        _dtype.promote_types(None, _dtype.float32)


# result_type's tiers: a wrapped Python scalar enters as int64 / the default dtype
# (float32) / bool; see c10's update_result_type_state.
SCALARS = [(2.5, _dtype.float32), (3, _dtype.int64), (True, _dtype.bool)]


@pytest.mark.parametrize("a", DTYPES, ids=NAMES)
def test_combine_categories_tensor_with_scalar(a):
    for value, wrapped in SCALARS:
        expected = FROM_TORCH[torch.result_type(torch.ones(2, dtype=TORCH[a]), value)]
        assert _dtype._combine_categories(a, wrapped) is expected, (a, value)


@pytest.mark.parametrize("a", DTYPES, ids=NAMES)
def test_combine_categories_tensor_with_zero_dim_tensor(a):
    # result = combine(dim, combine(zero_dim, wrapped=undefined))
    for b in DTYPES:
        expected = FROM_TORCH[torch.result_type(torch.ones(2, dtype=TORCH[a]),
                                                torch.ones((), dtype=TORCH[b]))]
        zero = _dtype._combine_categories(b, None)
        assert zero is b
        assert _dtype._combine_categories(a, zero) is expected, (a, b)


def test_combine_categories_cases():
    c = _dtype._combine_categories
    assert c(_dtype.int32, _dtype.float32) is _dtype.float32    # int32 tensor + 2.5
    assert c(_dtype.int32, _dtype.float64) is _dtype.float64
    assert c(_dtype.uint8, _dtype.int64) is _dtype.uint8        # uint8 tensor + 300
    assert c(_dtype.bool, _dtype.int64) is _dtype.int64         # bool tensor + 1
    assert c(_dtype.bool, _dtype.bool) is _dtype.bool
    assert c(_dtype.float16, _dtype.float64) is _dtype.float16  # floats keep their type
    assert c(_dtype.bfloat16, _dtype.float16) is _dtype.bfloat16
    assert c(_dtype.int8, _dtype.bfloat16) is _dtype.bfloat16
    assert c(_dtype.uint8, _dtype.float16) is _dtype.float16
    # None is Undefined (no operand in that tier)
    assert c(None, None) is None
    assert c(None, _dtype.int8) is _dtype.int8
    assert c(_dtype.int8, None) is _dtype.int8
    assert c(_dtype.bool, None) is _dtype.bool
    assert c(_dtype.float16, None) is _dtype.float16


def test_as_dtype_conversions():
    a = _dtype.as_dtype
    for d in DTYPES:
        assert a(d) is d
        assert a(d.name) is d
        if d.np_dtype is not None:
            assert a(d.np_dtype) is d
            assert a(d.np_dtype.type) is d
    # Python's types, as torch's Tensor.to(float) etc.
    for py, name in [(float, "float64"), (int, "int64"), (bool, "bool")]:
        assert a(py) is getattr(_dtype, name)
        assert FROM_TORCH[torch.zeros(1).to(py).dtype] is getattr(_dtype, name)
    assert a(np.bool_) is _dtype.bool
    assert a(np.longlong) is _dtype.int64
    assert a(np.intc) is _dtype.int32
    assert a(np.dtype(">f4")) is _dtype.float32
    assert a(_dtype.float) is _dtype.float32


@pytest.mark.parametrize("obj, typename", [
    (None, "NoneType"), (3, "int"), (object(), "object"),
    ("float", "str 'float'"),          # aliases are ambiguous as strings (NumPy: float64)
    ("f4", "str 'f4'"),
    (np.complex256, "numpy.clongdouble"), (np.dtype("longdouble"), "numpy.longdouble"),
    (np.dtype("U3"), "numpy.str_"), (np.floating, "numpy.floating"),
])
def test_as_dtype_type_error(obj, typename):
    with pytest.raises(TypeError) as info:
        _dtype.as_dtype(obj, "zeros")
    assert str(info.value).startswith(
        f"zeros(): argument 'dtype' must be ember.dtype, not {typename}")
    with pytest.raises(TypeError, match="^argument 'out_dtype' must be ember.dtype"):
        _dtype.as_dtype(obj, arg="out_dtype")


def test_as_dtype_error_matches_torch_wording():
    with pytest.raises(TypeError) as theirs:
        torch.zeros(2, dtype=3)
    with pytest.raises(TypeError) as ours:
        _dtype.as_dtype(3, "zeros")
    assert str(ours.value) == str(theirs.value).replace("torch.", "ember.")


def test_dtype_from_numpy_round_trips():
    for d in DTYPES:
        if d.np_dtype is None:
            continue
        assert _dtype.dtype_from_numpy(d.np_dtype) is d
        assert _dtype.dtype_from_numpy(d.np_dtype.type) is d
        t = torch.from_numpy(np.zeros(2, dtype=d.np_dtype))
        assert FROM_TORCH[t.dtype] is d
    for np_type, name in [(np.longlong, "int64"), (np.intc, "int32"), (np.short, "int16"),
                          (np.byte, "int8"), (np.ubyte, "uint8"), (np.half, "float16"),
                          (np.single, "float32"), (np.double, "float64")]:
        assert _dtype.dtype_from_numpy(np.dtype(np_type)) is getattr(_dtype, name)


@pytest.mark.parametrize("np_dt", ["complex256", "U3", "O", "datetime64[s]", "longdouble"])
def test_dtype_from_numpy_error(np_dt):
    np_dt = np.dtype(np_dt)
    with pytest.raises(TypeError) as info:
        _dtype.dtype_from_numpy(np_dt)
    assert str(info.value) == (
        f"can't convert np.ndarray of type numpy.{np_dt.type.__name__}. The only supported "
        "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
        "int8, uint64, uint32, uint16, uint8, and bool.")


def test_dtype_from_numpy_error_prefix_matches_torch():
    with pytest.raises(TypeError) as theirs:
        torch.from_numpy(np.array(["a"]))
    with pytest.raises(TypeError) as ours:
        _dtype.dtype_from_numpy(np.array(["a"]).dtype)
    prefix = "can't convert np.ndarray of type numpy.str_. The only supported types are:"
    assert str(theirs.value).startswith(prefix) and str(ours.value).startswith(prefix)

