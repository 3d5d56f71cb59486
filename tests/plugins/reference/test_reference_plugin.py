"""The reference device (plugins/reference): a plugin that ember's core knows nothing about,
whose memory the host cannot read directly.  Values are checked against NumPy through
``.tolist()``, which copies through the plugin's own ``to_host``, so only the tests marked
``needs_cpu`` need the CPU plugin."""
import ctypes
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from ember.backends import _abi
from ember.core import _device

import ember

pytest.importorskip("ember_reference", reason="ember-reference is not installed "
                    "(pip install --no-build-isolation -e plugins/reference)")

if _device._backend_for_type("reference") is None:       # EMBER_DEVICE_BACKEND_AUTOLOAD=0
    ember.backends.load("reference")

REF = ember.device("reference", 0)   # as PyTorch: a "reference" tensor is on the current device


def _cpu_available():
    try:
        return bool(ember.get_device_module("cpu").is_available())
    except Exception:
        return False


needs_cpu = pytest.mark.skipif(not _cpu_available(),
                               reason="the CPU plugin (ember-cpu) is not installed or not loaded")


def T(data, dtype=None):
    return ember.tensor(data, dtype=dtype, device="reference")


def check(t, expected, dtype=None, rtol=1e-6, atol=0.0):
    """t is on the reference device, has `dtype` (if given) and holds `expected`."""
    assert t.device == REF
    if dtype is not None:
        assert t.dtype == dtype
    expected = np.asarray(expected)
    assert tuple(t.shape) == expected.shape
    got = np.array(t.tolist(), dtype=expected.dtype if expected.size else None)
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


A = np.array([[1.5, -2.0, 3.0], [-4.0, 5.25, 0.5]])
B = np.array([2.0, -0.5, 4.0])


# --- registration ----------------------------------------------------------------------

def test_registered_through_the_entry_point():
    import ember_reference.runtime
    assert ember.get_device_module("reference") is ember.reference
    assert ember.reference is ember_reference.runtime
    assert ember.reference.is_available() and ember.reference.device_count() == 1
    assert ember.reference.current_device() == 0
    ember.reference.set_device(0)
    ember.reference.set_device("reference:0")
    ember.reference.synchronize()
    with pytest.raises(ValueError):
        ember.reference.set_device(1)
    rows = {r["name"]: r for r in ember.backends.plugins()}
    assert rows["reference"]["dist"] == "ember-reference" and rows["reference"]["error"] is None
    assert [d["type"] for d in rows["reference"]["devices"]] == ["reference"]
    assert rows["reference"]["devices"][0]["available"]


def test_dynamic_backend_key():
    key = _device._backend_for_type("reference").key
    assert key >= 8                             # a run-time key, not a built-in one
    x = ember.zeros(2, device="reference")
    assert x._keys >> key & 1
    assert x._keys & ~(-1 << 32) == 1 << key     # its only backend bit
    assert _device._backend_for_type("reference").loaded


def test_device_and_allocator():
    before = ember.reference.allocations()
    x = ember.zeros(2, 3, device="reference")
    assert ember.reference.allocations() > before      # ember allocated through this plugin
    assert x.device == ember.device("reference", 0) and str(x.device) == "reference:0"
    assert x.dtype == ember.float32 and x.is_cpu is False
    check(x, np.zeros((2, 3)))
    n = ember.reference.allocations()
    e = ember.empty(0, device="reference")             # alloc(0) must work too
    assert e.numel() == 0 and e.tolist() == [] and ember.reference.allocations() == n + 1
    with ember.device("reference"):
        assert ember.ones(2).device == REF
    # one device: index 1 is refused, it does not alias index 0's memory
    n = ember.reference.allocations()
    with pytest.raises(RuntimeError, match="invalid device index 1"):
        ember.zeros(2, device="reference:1")
    assert ember.reference.allocations() == n


# --- factories and copies --------------------------------------------------------------

def test_factories():
    check(T([[1., 2.], [3., 4.]]), [[1., 2.], [3., 4.]], ember.float32)
    check(T([1, 2, 3]), np.array([1, 2, 3]), ember.int64)
    check(T(A, dtype=ember.float64), A, ember.float64)
    check(ember.ones(2, 2, dtype=ember.int32, device="reference"), np.ones((2, 2), int), ember.int32)
    check(ember.full((3,), 2.5, device="reference"), [2.5, 2.5, 2.5])
    check(ember.arange(5, device="reference"), np.arange(5))
    check(ember.zeros_like(T(A)), np.zeros_like(A))
    assert T(7.0).item() == 7.0 and T(3).item() == 3
    assert T([True, False]).tolist() == [True, False]


def test_zero_dim():
    z = ember.zeros((), device="reference")
    assert z.shape == () and z.tolist() == 0.0
    s = T([2.0, 3.0]).sum()
    assert s.dim() == 0 and s.item() == 5.0
    z.copy_(s)
    assert (z + 1).item() == 6.0 and z.exp().item() == pytest.approx(math.exp(5), rel=1e-6)
    z.fill_(-3)
    assert z.relu().item() == 0.0 and (-z).item() == 3.0
    check(s * T([1.0, 2.0]), [5.0, 10.0])
    check(T([1., 2.]) @ T([3., 4.]), 11.0)                    # 1-d @ 1-d is 0-d


def test_tensor_from_scalar_is_zero_dim():
    assert T(7.0).dim() == 0 and T(7.0).shape == ()


def test_dtype_casts():
    x = T([1.5, -2.5, 0.0, 3.0])
    check(x.to(ember.float64), [1.5, -2.5, 0.0, 3.0], ember.float64)
    check(x.to(ember.int32), np.array([1, -2, 0, 3]), ember.int32)
    check(x.to(ember.int64), np.array([1, -2, 0, 3]), ember.int64)
    check(x.to(ember.bool), np.array([True, True, False, True]), ember.bool)
    check(x.to(ember.uint8).to(ember.int64), np.array([1, 254, 0, 3]))
    check(x.half().float(), [1.5, -2.5, 0.0, 3.0])
    check(x.bfloat16().double(), [1.5, -2.5, 0.0, 3.0])
    check(T([1 / 3]).half().float(), [np.float16(1 / 3)])
    check(T([1 / 3]).bfloat16().float(), [0.333984375])
    check(T([True, False]).to(ember.float32), [1.0, 0.0])
    big = 2 ** 53 + 1                                  # int64 copies never go through double
    assert T([big]).clone().tolist() == [big]
    assert T([big]).to(ember.int32).to(ember.int64).tolist() == [np.int64(big).astype(np.int32)]


def test_clone_copy_fill():
    x = T(A)
    y = x.clone()
    y.fill_(7.0)
    check(x, A)
    check(y, np.full_like(A, 7.0))
    y.copy_(T(B, dtype=ember.float64))                   # broadcasts and casts
    check(y, np.broadcast_to(B, A.shape))
    y.copy_(x.t().t())
    check(y, A)
    z = ember.zeros(3, 2, dtype=ember.int64, device="reference")
    z.t().copy_(x)                                       # strided destination, float -> int
    check(z, A.T.astype(np.int64))
    z.zero_()
    check(z, np.zeros((3, 2), np.int64))
    z[1].fill_(5)
    check(z, [[0, 0], [5, 5], [0, 0]])


def test_strided_views():
    x = T(np.arange(24.).reshape(2, 3, 4))
    base = np.arange(24.).reshape(2, 3, 4)
    check(x.permute(2, 0, 1).contiguous(), base.transpose(2, 0, 1))
    check(x.narrow(2, 1, 2).clone(), base[:, :, 1:3])
    check(x.select(1, 2) * 1, base[:, 2, :])
    check(x.as_strided((3, 2), (1, 4), 1) + 0, np.lib.stride_tricks.as_strided(
        base.ravel()[1:], (3, 2), (8, 32)))
    check(T([1., 2., 3.]).expand(2, 3).clone(), [[1., 2., 3.], [1., 2., 3.]])


# --- elementwise -----------------------------------------------------------------------

@pytest.mark.parametrize("dt,np_dt", [(ember.float32, np.float32), (ember.float64, np.float64)])
def test_binary_float(dt, np_dt):
    a, b = T(A, dtype=dt), T(B, dtype=dt)
    An, Bn = A.astype(np_dt), B.astype(np_dt)
    check(a + b, An + Bn, dt)
    check(a - b, An - Bn, dt)
    check(a * b, An * Bn, dt)
    check(a / b, An / Bn, dt)
    check(a + 2, An + 2, dt)
    check(3 - a, 3 - An, dt)
    check(a * 0.5, An * 0.5, dt)
    check(1 / a, 1 / An, dt)
    check(a.add(b, alpha=2), An + 2 * Bn, dt)
    check(a.sub(b, alpha=0.5), An - 0.5 * Bn, dt)
    check(a.t() * b.unsqueeze(1), An.T * Bn[:, None], dt)       # strided x broadcast
    check(a[0:1] + a.t()[:, 0:1], An[0:1] + An.T[:, 0:1], dt)


@pytest.mark.parametrize("dt,np_dt", [(ember.int64, np.int64), (ember.int32, np.int32)])
def test_binary_int(dt, np_dt):
    a = T([[1, -2, 3], [4, 5, -6]], dtype=dt)
    b = T([7, 0, -2], dtype=dt)
    An, Bn = np.array([[1, -2, 3], [4, 5, -6]], np_dt), np.array([7, 0, -2], np_dt)
    check(a + b, An + Bn, dt)
    check(a - b, An - Bn, dt)
    check(a * b, An * Bn, dt)
    check(a * 3, An * 3, dt)
    check(10 - a, 10 - An, dt)
    check(a / T([2, 4, 8], dtype=dt), An / np.array([2, 4, 8]), ember.float32)  # true division
    check(a + 0.5, An + 0.5, ember.float32)                     # promotion by a float scalar


def test_mixed_dtype_promotion():
    check(T([1, 2], dtype=ember.int32) + T([0.5, 0.25], dtype=ember.float64),
          [1.5, 2.25], ember.float64)
    check(T([True, False]) + T([1, 2]), np.array([2, 2]), ember.int64)


@pytest.mark.parametrize("dt,np_dt", [(ember.float32, np.float32), (ember.float64, np.float64)])
def test_unary_float(dt, np_dt):
    a, An = T(A, dtype=dt), A.astype(np_dt)
    check(-a, -An, dt)
    check(a.neg(), -An, dt)
    check(a.exp(), np.exp(An), dt)
    check(ember.exp(a.t()), np.exp(An.T), dt)
    check(a.relu(), np.maximum(An, 0), dt)
    check(ember.relu(a), np.maximum(An, 0), dt)


@pytest.mark.parametrize("dt,np_dt", [(ember.int64, np.int64), (ember.int32, np.int32)])
def test_unary_int(dt, np_dt):
    a = T([[3, -1], [0, -7]], dtype=dt)
    An = np.array([[3, -1], [0, -7]], np_dt)
    check(-a, -An, dt)
    check(a.relu(), np.maximum(An, 0), dt)
    check(a.exp(), np.exp(An), ember.float32)                   # integers exp to float


def test_inplace():
    x = T(A)
    x.add_(1)
    check(x, A + 1)
    x.mul_(T(B))
    check(x, (A + 1) * B)
    x.sub_(0.5).div_(2)
    check(x, ((A + 1) * B - 0.5) / 2)
    y = ember.zeros(3, 2, device="reference")
    y.t().add_(T(A))                                            # in place through a view
    check(y, A.T)
    i = T([1, 2, 3])
    i.add_(T([10, 20, 30])).mul_(2)
    check(i, np.array([22, 44, 66]))
    with pytest.raises(RuntimeError):
        i.add_(0.5)                                             # float can't go into int64


# --- reductions and matmul --------------------------------------------------------------

@pytest.mark.parametrize("dt,np_dt", [(ember.float32, np.float32), (ember.float64, np.float64)])
def test_reductions(dt, np_dt):
    base = np.arange(24, dtype=np_dt).reshape(2, 3, 4) / 7
    x = T(base, dtype=dt)
    check(x.sum(), base.sum(), dt)
    check(x.mean(), base.mean(), dt)
    check(x.sum(0), base.sum(0), dt)
    check(x.sum(dim=1, keepdim=True), base.sum(1, keepdims=True), dt)
    check(x.sum((0, 2)), base.sum((0, 2)), dt)
    check(x.mean(-1), base.mean(-1), dt)
    check(x.mean(dim=(0, 1), keepdim=True), base.mean((0, 1), keepdims=True), dt)
    check(x.permute(2, 0, 1).sum(1), base.transpose(2, 0, 1).sum(1), dt)
    check(ember.sum(x, 2), base.sum(2), dt)
    assert math.isnan(ember.empty(0, 3, dtype=dt, device="reference").mean().item())
    check(ember.zeros(0, 3, dtype=dt, device="reference").sum(0), np.zeros(3), dt)


def test_integer_sum():
    x = T([[1, 2, 3], [4, 5, 6]], dtype=ember.int32)
    check(x.sum(), np.int64(21), ember.int64)
    check(x.sum(1), np.array([6, 15]), ember.int64)
    check(T([True, True, False]).sum(), np.int64(2), ember.int64)
    big = 2 ** 62
    assert T([big, big - 1, -big]).sum().item() == big - 1      # exact, not through double
    check(x.mean(dtype=ember.float64), 3.5, ember.float64)
    with pytest.raises(RuntimeError):
        x.mean()


def test_big_tensor_releases_the_gil():
    x = ember.ones(200, 300, device="reference")                       # past the core's GIL cutoff
    x.mul_(2)
    assert x.sum().item() == 120000.0
    assert x.mean(0).tolist() == [2.0] * 300


@pytest.mark.parametrize("dt,np_dt", [(ember.float32, np.float32), (ember.float64, np.float64)])
def test_matmul(dt, np_dt):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4)).astype(np_dt)
    b = rng.standard_normal((2, 4, 5)).astype(np_dt)
    m = rng.standard_normal((4, 3)).astype(np_dt)
    v = rng.standard_normal(4).astype(np_dt)
    ta, tb, tm, tv = T(a, dt), T(b, dt), T(m, dt), T(v, dt)
    tol = dict(rtol=1e-5, atol=1e-5)
    check(ta @ tb, a @ b, dt, **tol)
    check(ta.matmul(tb), a @ b, dt, **tol)
    check(ember.matmul(ta[0], tb[1]), a[0] @ b[1], dt, **tol)
    check(ta @ tm, a @ m, dt, **tol)                              # batch broadcast
    check(tm.t() @ tv, m.T @ v, dt, **tol)                       # transposed operand, 1-d
    check(tv @ tm, v @ m, dt, **tol)
    check(tv @ tv, v @ v, dt, **tol)
    check(T([[1., 2.], [3., 4.]], dt) @ T([[5., 6.], [7., 8.]], dt), [[19., 22.], [43., 50.]], dt)
    check(ember.zeros(2, 0, dtype=dt, device="reference") @ ember.zeros(0, 3, dtype=dt, device="reference"),
          np.zeros((2, 3)), dt)


# --- random ----------------------------------------------------------------------------

def test_random_reproducible():
    ember.manual_seed(1234)
    a = ember.rand(3, 4, device="reference")
    n = ember.randn(1000, dtype=ember.float64, device="reference")
    ember.manual_seed(1234)
    check(ember.rand(3, 4, device="reference"), a.tolist(), ember.float32, rtol=0)
    check(ember.randn(1000, dtype=ember.float64, device="reference"), n.tolist(), rtol=0)
    ember.manual_seed(4321)
    assert ember.rand(3, 4, device="reference").tolist() != a.tolist()


def test_random_counter_based():
    """Element i depends only on (seed, offset + i): two draws are one draw split."""
    g = ember.Generator("reference").manual_seed(7)
    whole = ember.rand(10, generator=g, device="reference").tolist()
    g.manual_seed(7)
    first = ember.rand(4, generator=g, device="reference").tolist()
    rest = ember.rand(6, generator=g, device="reference").tolist()
    assert first + rest == whole
    g.manual_seed(7)                                             # row-major order of the view
    y = ember.empty(5, 2, device="reference")
    y.t().uniform_(generator=g)
    assert y.t().contiguous().flatten().tolist() == whole


def test_random_distributions():
    g = ember.Generator("reference").manual_seed(0)
    u = np.array(ember.rand(20000, generator=g, device="reference").tolist())
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    u = np.array(ember.empty(20000, dtype=ember.float64, device="reference")
                 .uniform_(-2, 3, generator=g).tolist())
    assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.05
    n = np.array(ember.randn(20000, dtype=ember.float64, generator=g, device="reference").tolist())
    assert abs(n.mean()) < 0.03 and abs(n.std() - 1) < 0.03
    n = np.array(ember.empty(20000, device="reference").normal_(5, 2, generator=g).tolist())
    assert abs(n.mean() - 5) < 0.06 and abs(n.std() - 2) < 0.06
    h = ember.rand(1000, dtype=ember.float16, generator=g, device="reference").float().tolist()
    assert 0 <= min(h) and max(h) < 1


def test_manual_seed_before_first_use():
    code = ("import json, ember\n"
            "from ember.core import _device\n"
            "if _device._backend_for_type('reference') is None: ember.backends.load('reference')\n"
            "ember.manual_seed(0); a = ember.rand(3, device='reference').tolist()\n"
            "ember.manual_seed(0); b = ember.rand(3, device='reference').tolist()\n"
            "print(json.dumps([a, b]))\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    a, b = json.loads(out.strip().splitlines()[-1])
    assert a == b


# --- errors ----------------------------------------------------------------------------

def test_errors_come_back_as_exceptions():
    with pytest.raises(RuntimeError):
        T([1., 2.]) + T([1., 2., 3.])
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        ember.gather(T([1., 2., 3.]), 0, T([0, 5]))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        T([4, 5]) % T([2, 0])


def test_integer_matmul():
    check(T([[1, 2]]) @ T([[3], [4]]), np.array([[11]]), ember.int64)
    check(T([[1, 2]], ember.int32) @ T([[3], [4]], ember.int32), np.array([[11]]), ember.int32)


# --- with the CPU plugin ---------------------------------------------------------------

@needs_cpu
def test_to_and_from_cpu():
    c = ember.tensor(A.tolist())
    x = c.to("reference")
    check(x, A)
    assert c.device == ember.device("cpu")
    back = (x * 2).cpu()
    assert back.device == ember.device("cpu")
    np.testing.assert_allclose(back.tolist(), A * 2, rtol=1e-6)
    check(c.to("reference", ember.float64), A, ember.float64)
    np.testing.assert_allclose(x.to("cpu", ember.float64).tolist(), A)
    y = ember.zeros(2, 3, device="reference")
    y.copy_(c)                                                   # cross-device copy_
    check(y, A)
    two = ember.tensor(2.0)                  # 0-d
    check(x + two, A + 2)                                        # 0-d CPU tensor: a scalar
    check(two * x, A * 2)
    with pytest.raises(RuntimeError, match="same device"):
        x + c


def test_comparisons_and_logical_ops():
    x = ember.tensor([[1.0, float("nan")], [3.0, -2.0]], device="reference")
    a = np.array([[1.0, np.nan], [3.0, -2.0]])
    for got, want in [(x == 1, a == 1), (x != x, a != a), (x < 2, a < 2), (x >= 3, a >= 3),
                      (ember.logical_and(x, x > 0), np.logical_and(a, a > 0)),
                      (ember.logical_xor(x > 0, x < 5), np.logical_xor(a > 0, a < 5))]:
        assert got.device == REF and got.dtype == ember.bool
        assert got.tolist() == want.tolist()
    i = ember.tensor([1, 5, 9], device="reference")
    assert (i > ember.tensor([0, 5, 10], device="reference")).tolist() == [True, False, False]
    assert ember.equal(i, i.clone()) and (i > 0).all().item()


def test_where_and_masked_fill():
    x = ember.tensor([[1.0, -2.0], [3.0, -4.0]], device="reference")
    assert ember.where(x > 0, x, 0.0).tolist() == [[1.0, 0.0], [3.0, 0.0]]
    assert ember.where(x > 0, 1, ember.zeros(2, device="reference")).tolist() == [[1.0, 0.0], [1.0, 0.0]]
    assert x.masked_fill(x < 0, 9.0).tolist() == [[1.0, 9.0], [3.0, 9.0]]


# --- the arena: device memory the host cannot read ------------------------------------

def test_device_addresses_lie_in_the_reserved_range():
    x = ember.arange(12, dtype=ember.float32, device="reference").view(3, 4)
    begin, end = ember.reference.address_range()
    assert begin < x.data_ptr() < end
    assert x[1:].data_ptr() == x.data_ptr() + 16            # an interior pointer: a view
    check(x[1:, 2:], np.arange(12.).reshape(3, 4)[1:, 2:])     # read through to_host only
    check(x.t()[1], [1., 5., 9.])


def test_memory_counters():
    before = ember.reference.memory_allocated()
    x = ember.empty(1000, dtype=ember.float64, device="reference")
    assert ember.reference.memory_allocated() == before + 8000
    assert ember.reference.max_memory_allocated() >= before + 8000
    del x
    assert ember.reference.memory_allocated() == before
    ember.reference.reset_peak_memory_stats()
    assert ember.reference.max_memory_allocated() == before
    assert ember.reference.memory_stats()["bad_frees"] == 0


def test_host_cannot_read_device_memory():
    """Dereferencing a device pointer outside the plugin faults: the core cannot read device
    memory behind the plugin's back without the test suite noticing."""
    code = ("import ctypes, ember\n"
            "from ember.core import _device\n"
            "if _device._backend_for_type('reference') is None: ember.backends.load('reference')\n"
            "x = ember.ones(4, device='reference')\n"
            "print('read', x.tolist(), flush=True)\n"
            "ctypes.string_at(x.data_ptr(), 4)\n"
            "print('unreachable', flush=True)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "read [1.0, 1.0, 1.0, 1.0]" in r.stdout
    assert "unreachable" not in r.stdout
    assert r.returncode < 0                               # killed by a signal (SIGSEGV)


class _Ctx(ctypes.Structure):
    _fields_ = [("deterministic", ctypes.c_int32), ("device", ctypes.c_int32),
                ("matmul_precision", ctypes.c_int32), ("reserved", ctypes.c_int32),
                ("error", ctypes.c_char * 256)]


class _Table(ctypes.Structure):
    """The kernel table's layout (abi.h): the header, then every entry (ember.backends._abi
    lists them in order) as a function pointer."""
    _fields_ = [("abi_version", ctypes.c_int32), ("abi_minor", ctypes.c_int32),
                ("size", ctypes.c_int64)] + [(e, ctypes.c_void_p) for e in _abi.ENTRIES]


def _table():
    from ember_reference import _kernels
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return _Table.from_address(get(_kernels.kernel_table(), b"ember.kernel_table"))


def test_every_entry_is_implemented():
    t = _table()
    assert (t.abi_version, t.abi_minor) == (_device.ABI_VERSION, _device.ABI_MINOR)
    assert t.size == ctypes.sizeof(_Table) == _device.TABLE_SIZE
    assert all(getattr(t, e) for e in _abi.ENTRIES)
    assert _device._backend_for_type("reference").kernel_table().entries() == list(_abi.ENTRIES)


def test_kernels_check_every_address():
    """A bad device address is an error code with a message, never a crash: a host pointer,
    a span past the end of an allocation, a freed allocation (addresses are never reused)."""
    t = _table()
    alloc = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(_Ctx), ctypes.c_int64)(t.alloc)
    free = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_void_p)(t.free)
    copy_fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_Ctx), ctypes.c_void_p,
                               ctypes.c_void_p, ctypes.c_int64)
    to_host, from_host = copy_fn(t.to_host), copy_fn(t.from_host)
    ctx = _Ctx()
    host = ctypes.create_string_buffer(64)
    dev = alloc(ctypes.byref(ctx), 16)
    assert dev and from_host(ctypes.byref(ctx), dev, b"0123456789abcdef", 16) == 0
    assert to_host(ctypes.byref(ctx), host, dev + 4, 8) == 0 and host.raw[:8] == b"456789ab"
    assert to_host(ctypes.byref(ctx), host, dev + 4, 16) == 1            # EMBER_ERR_RUNTIME
    assert b"not inside a live allocation" in ctx.error
    assert to_host(ctypes.byref(ctx), host, ctypes.addressof(host), 4) == 1
    assert b"host pointer" in ctx.error
    free(0, dev)
    assert to_host(ctypes.byref(ctx), host, dev, 4) == 1                 # use after free
    empty = alloc(ctypes.byref(ctx), 0)                                  # alloc(0) works
    assert empty and empty != dev and to_host(ctypes.byref(ctx), host, empty, 0) == 0
    free(0, empty)


# --- the fused kernels against the CPU plugin --------------------------------------------

@needs_cpu
def test_fused_kernels_match_the_cpu():
    import ember.nn.functional as F
    g = np.random.default_rng(0)
    x = g.standard_normal((2, 3, 6, 5))
    w = g.standard_normal((4, 3, 3, 2))
    b = g.standard_normal(4)
    tgt = np.array([1, 0, 3, 2, 1, 0])
    pairs = {}
    for dev in ("cpu", "reference"):
        xt, wt, bt = (ember.tensor(v, device=dev, requires_grad=True) for v in (x, w, b))
        rows = xt.reshape(6, -1)[:, :4]
        outs = [F.conv2d(xt, wt, bt, stride=(2, 1), padding=1, dilation=(1, 2)),
                F.max_pool2d(xt, 2, stride=1, padding=1), F.avg_pool2d(xt, 3, padding=1),
                F.adaptive_avg_pool2d(xt, (4, 3)), F.softmax(xt, -1), F.log_softmax(xt, 1),
                F.layer_norm(xt, (5,)), F.batch_norm(xt, None, None, training=True),
                F.cross_entropy(rows, ember.tensor(tgt, device=dev))]
        loss = sum((o * o).sum() for o in outs)
        loss.backward()
        pairs[dev] = [o.tolist() for o in outs] + [t.grad.tolist() for t in (xt, wt, bt)]
    for got, want in zip(pairs["reference"], pairs["cpu"]):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


@needs_cpu
def test_fused_adam_matches_the_cpu():
    results = {}
    for dev in ("cpu", "reference"):
        p = ember.tensor([[1.0, -2.0], [0.5, 3.0]], device=dev, requires_grad=True)
        opt = ember.optim.Adam([p], lr=0.1, weight_decay=0.01, amsgrad=True)
        for _ in range(3):
            opt.zero_grad()
            ((p * p).sum() + p.sum()).backward()
            opt.step()
        results[dev] = p.tolist()
    assert results["reference"] == results["cpu"]


@needs_cpu
@pytest.mark.parametrize("dtype", [ember.bool, ember.uint8, ember.int32, ember.int64,
                                   ember.float16, ember.bfloat16, ember.float32, ember.float64])
def test_sort_kernel_matches_the_cpu(dtype):
    """The ABI 6.1 `sort` entry: stable both ways, NaN above every number, any dim."""
    g = np.random.default_rng(3)
    a = g.integers(0, 4, (4, 9)).astype(np.float64)
    if dtype.is_floating_point:
        a[g.random(a.shape) < 0.2] = np.nan
    c = ember.tensor(a).to(dtype)
    x = c.to("reference")
    for dim in (0, 1, -1):
        for descending in (False, True):
            got, want = x.sort(dim, descending), c.sort(dim, descending)
            assert got.values.device == REF
            np.testing.assert_array_equal(got.indices.cpu().numpy(), want.indices.numpy())
            np.testing.assert_array_equal(got.values.cpu().float().numpy(),
                                          want.values.float().numpy())
    t = x.t()                                               # strided rows
    np.testing.assert_array_equal(t.sort(descending=True).indices.cpu().numpy(),
                                  c.t().sort(descending=True).indices.numpy())
    assert x[:, :0].sort().values.shape == (4, 0)
    assert x[0, 0].sort().indices.item() == 0                        # 0-d
