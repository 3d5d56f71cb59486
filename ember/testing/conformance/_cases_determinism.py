"""Cases of deterministic mode (``ember.use_deterministic_algorithms(True)``) on the device.

``repeat`` cases: reductions, scans and the accumulating index ops (sums whose order a
parallel kernel could change) give the same bits run after run, and at one thread, on
tensors past the parallel cutoffs; the first result also matches NumPy.  An op the
device declares order-dependent (its ``ember_nondeterministic_kernels`` hook) is skipped
there: deterministic mode refuses it, which the ``declared`` cases check: for every op
the core asks about, a declared one raises RuntimeError naming the op and the device (a
UserWarning under ``warn_only=True``, then runs), an undeclared one runs and repeats its
bits."""
import contextlib
import warnings

import numpy as np
import pytest

import ember
from ember.testing.conformance._case import ANY, case, key
from ember.testing.conformance._data import (
    FLOATS,
    check,
    edtype,
    read,
    seeded,
    to_device,
    tolerance,
    values,
)

F = ember.nn.functional


@contextlib.contextmanager
def deterministic(warn_only=False):
    """Deterministic mode on inside the block; the previous mode back after it."""
    before = (ember.are_deterministic_algorithms_enabled(),
              ember.is_deterministic_algorithms_warn_only_enabled())
    ember.use_deterministic_algorithms(True, warn_only=warn_only)
    try:
        yield
    finally:
        ember.use_deterministic_algorithms(before[0], warn_only=before[1])


def declared(device):
    """The op names the device's plugin declares order-dependent."""
    return set(ember.backends.nondeterministic_kernels(ember.device(device).type))


@contextlib.contextmanager
def _threads(n):
    before = ember.get_num_threads()
    ember.set_num_threads(n)
    try:
        yield
    finally:
        ember.set_num_threads(before)


def _bits(result):
    return [read(t).tobytes() for t in (result if isinstance(result, tuple) else (result,))]


# --- repeat: the same bits every run -----------------------------------------------------
# Each builder(rng, dtype, device) -> (run() -> tensor or tuple, NumPy result of the first).
# Index accumulations put about 16 values on each target: collisions between threads, and
# half-precision sums (accumulated in the output dtype, as PyTorch's) still near NumPy's.
_BINS = 4099

def _leaf(h, dtype, device):
    return to_device(h, dtype, device).requires_grad_()


def _b_sum(rng, dtype, device):
    hx = values(rng, (257, 263), dtype)
    x = to_device(hx, dtype, device)
    return (lambda: (x.sum(), x.sum(0), x.mean(1))), \
        (hx.sum(), hx.sum(0), hx.mean(1))


def _b_cumsum(rng, dtype, device):
    hx = values(rng, (67591,), dtype, "unit")
    x = to_device(hx, dtype, device)
    return (lambda: ember.cumsum(x, 0)), np.cumsum(hx)


def _b_matmul(rng, dtype, device):
    ha, hb = values(rng, (33, 601), dtype, "unit"), values(rng, (601, 35), dtype, "unit")
    a, b = to_device(ha, dtype, device), to_device(hb, dtype, device)
    return (lambda: a @ b), ha @ hb


def _b_scatter_add(rng, dtype, device):
    hs, hi = values(rng, (67591,), dtype), rng.integers(0, _BINS, 67591)
    s, i = to_device(hs, dtype, device), to_device(hi, "int64", device)
    want = np.zeros(_BINS)
    np.add.at(want, hi, hs)
    return (lambda: ember.zeros(_BINS, dtype=edtype(dtype), device=device).scatter_add(
        0, i, s)), want


def _b_index_add(rng, dtype, device):
    hs, hi = values(rng, (4001, 17), dtype), rng.integers(0, 257, 4001)
    s, i = to_device(hs, dtype, device), to_device(hi, "int64", device)
    want = np.zeros((257, 17))
    np.add.at(want, hi, hs)
    return (lambda: ember.zeros(257, 17, dtype=edtype(dtype), device=device).index_add_(
        0, i, s)), want


def _b_index_put(rng, dtype, device):
    hv, hi = values(rng, (67591,), dtype), rng.integers(-_BINS, _BINS, 67591)
    v, i = to_device(hv, dtype, device), to_device(hi, "int64", device)
    want = np.zeros(_BINS)
    np.add.at(want, hi, hv)                     # negative indices count from the end
    return (lambda: ember.zeros(_BINS, dtype=edtype(dtype), device=device).index_put_(
        (i,), v, accumulate=True)), want


def _b_embedding_backward(rng, dtype, device):
    hw, hi, hg = values(rng, (257, 16), dtype), rng.integers(0, 257, 4001), \
        values(rng, (4001, 16), dtype)
    i, g = to_device(hi, "int64", device), to_device(hg, dtype, device)
    want = np.zeros((257, 16))
    np.add.at(want, hi, hg)

    def run():
        w = _leaf(hw, dtype, device)
        F.embedding(i, w).backward(g)
        return w.grad
    return run, want


def _b_conv_weight(rng, dtype, device):
    from ember.testing.conformance._cases_convpool import np_conv_backward
    hx, hw = values(rng, (64, 3, 12, 12), dtype, "unit"), values(rng, (4, 3, 3, 3), dtype, "unit")
    hg = values(rng, (64, 4, 10, 10), dtype, "unit")
    g = to_device(hg, dtype, device)

    def run():
        w = _leaf(hw, dtype, device)
        F.conv2d(to_device(hx, dtype, device), w).backward(g)
        return w.grad
    return run, np_conv_backward(hx, hw, hg, (1, 1), (0, 0), (1, 1), 1)[1]


def _b_layer_norm_backward(rng, dtype, device):
    hx, hg = values(rng, (4001, 9), dtype), values(rng, (4001, 9), dtype)
    g = to_device(hg, dtype, device)
    mean, var = hx.mean(-1, keepdims=True), hx.var(-1, keepdims=True)
    xhat = (hx - mean) / np.sqrt(var + 1e-5)

    def run():
        w, b = _leaf(np.ones(9), dtype, device), _leaf(np.zeros(9), dtype, device)
        F.layer_norm(to_device(hx, dtype, device), (9,), w, b).backward(g)
        return w.grad, b.grad
    return run, ((hg * xhat).sum(0), hg.sum(0))


# op: (builder, ABI key of its kernel (family, op), name the core alerts with, tolerance)
REPEAT = {
    "sum": (_b_sum, ("reduce", "sum"), None, 4),
    "cumsum": (_b_cumsum, ("scan", "cumsum"), None, 16),
    "matmul": (_b_matmul, ("matmul", ""), None, 16),
    "scatter_add": (_b_scatter_add, ("index", "scatter_add"), "scatter_add", 16),
    "index_add": (_b_index_add, ("index", "scatter_add"), "index_add_", 16),
    "index_put": (_b_index_put, ("index", "scatter_add"), "index_put_", 16),
    "embedding_backward": (_b_embedding_backward, ("index", "scatter_add"), "index_add", 16),
    "conv_backward_weight": (_b_conv_weight, ("conv", "backward_weight"), None, 16),
    "layer_norm_backward": (_b_layer_norm_backward, ("norm", "layer_norm_backward"), None,
                            16),
}


def _repeat_case(op, build, alert, scale):
    def run(device, dtype, variant):
        if alert is not None and alert in declared(device):
            pytest.skip(f"device '{device}' declares {alert} order-dependent: deterministic "
                        f"mode refuses it (see the determinism 'declared' cases)")
        result, want = build(seeded("determinism", op, dtype), dtype, device)
        with deterministic():
            first = result()
            runs = [_bits(first), _bits(result()), _bits(result())]
            with _threads(1):
                runs.append(_bits(result()))
        for got, w in zip(first if isinstance(first, tuple) else (first,),
                          want if isinstance(want, tuple) else (want,)):
            check(got, w, dtype, device, tolerance(dtype, scale), op)
        for n, bits in enumerate(runs[1:], 1):
            assert bits == runs[0], (f"{op}({dtype}) in deterministic mode: run {n + 1}"
                                     f"{' (one thread)' if n == 3 else ''} gave other bits "
                                     f"than run 1")
    return run


for _op, (_build, (_fam, _kop), _alert, _scale) in REPEAT.items():
    case("determinism", _op, FLOATS, ("repeat",),
         key=lambda dtype, variant, f=_fam, o=_kop: key(f, o, dtype))(
        _repeat_case(_op, _build, _alert, _scale))


# --- declared: what deterministic mode does with each op the core asks about --------------
# name the core alerts with: run(device) -> (result, NumPy result)

def _acc(out_len, idx, src):
    want = np.zeros(out_len)
    np.add.at(want, idx, src)
    return want


_I, _S = [0, 0, 2, -1], [1.0, 2.0, 4.0, 8.0]


def _dev(device, v, dtype="float32"):
    return to_device(np.array(v), dtype, device)


def _index_backward(device):
    x = _dev(device, [1.0, 1.0, 1.0]).requires_grad_()
    x[_dev(device, [0, 0, 2], "int64")].backward(_dev(device, _S[:3]))
    return x.grad, _acc(3, [0, 0, 2], _S[:3])


ALERTING = {
    "scatter_add": lambda d: (ember.scatter_add(ember.zeros(3, device=d), 0,
                                                _dev(d, _I[:3], "int64"), _dev(d, _S[:3])),
                              _acc(3, _I[:3], _S[:3])),
    "scatter_add_": lambda d: (ember.zeros(3, device=d).scatter_add_(
        0, _dev(d, _I[:3], "int64"), _dev(d, _S[:3])), _acc(3, _I[:3], _S[:3])),
    "scatter_": lambda d: (ember.zeros(3, device=d).scatter_(
        0, _dev(d, _I[:3], "int64"), _dev(d, _S[:3]), reduce="add"), _acc(3, _I[:3], _S[:3])),
    "scatter_reduce": lambda d: (ember.zeros(3, device=d).scatter_reduce(
        0, _dev(d, _I[:3], "int64"), _dev(d, _S[:3]), "sum"), _acc(3, _I[:3], _S[:3])),
    "index_add_": lambda d: (ember.zeros(3, device=d).index_add_(
        0, _dev(d, _I[:3], "int64"), _dev(d, _S[:3])), _acc(3, _I[:3], _S[:3])),
    "index_add": lambda d: (ember.index_add(ember.zeros(3, device=d), 0,
                                            _dev(d, _I[:3], "int64"), _dev(d, _S[:3])),
                            _acc(3, _I[:3], _S[:3])),
    "index_put_": lambda d: (ember.zeros(3, device=d).index_put_(
        (_dev(d, _I, "int64"),), _dev(d, _S), accumulate=True), _acc(3, _I, _S)),
    "put_": lambda d: (ember.zeros(3, device=d).put_(_dev(d, _I, "int64"), _dev(d, _S),
                                                      accumulate=True), _acc(3, _I, _S)),
    "index": _index_backward,
    "bincount": lambda d: (ember.bincount(_dev(d, [1, 1, 3], "int64")), np.array([0, 2, 0, 1])),
    "histc": lambda d: (ember.histc(_dev(d, _S), bins=4, min=0, max=8),
                        np.histogram(_S, bins=4, range=(0, 8))[0]),
}


_REFUSED = "does not have a deterministic implementation on device"


@case("determinism", "declared", (ANY,), tuple(ALERTING))
def _declared(device, dtype, op):
    fn, kind = ALERTING[op], ember.device(device).type
    got, want = fn(device)                       # the mode off: runs
    out = "int64" if op == "bincount" else "float32"
    check(got, want, out, device, what=f"{op}, deterministic mode off")
    names = declared(device)
    if op not in names:
        try:
            with deterministic():
                a, b = fn(device)[0], fn(device)[0]
        except RuntimeError as e:          # built on a declared op (histc on scatter_add)
            if not any(str(e).startswith(f"{n} {_REFUSED}") for n in names):
                raise
            return
        check(a, want, out, device, what=f"{op}, deterministic mode on")
        assert _bits(a) == _bits(b), f"{op}: two runs in deterministic mode differ"
        return
    msg = f"{op} {_REFUSED} '{kind}', but you set 'ember.use_deterministic_algorithms(True)'"
    with deterministic(), pytest.raises(RuntimeError) as err:
        fn(device)
    assert str(err.value).startswith(msg), f"{op} declared order-dependent: {err.value}"
    with deterministic(warn_only=True), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = fn(device)[0]
    assert any(issubclass(w.category, UserWarning) and str(w.message).startswith(msg)
               for w in caught), f"{op}: warn_only=True did not warn: {caught}"
    check(got, want, out, device, what=f"{op} under warn_only=True")
