"""The determinism switch: its API, its effect on empty(), the plugin declarations that make
order-dependent ops raise or warn, and bitwise-equal reductions at any thread count."""
import types
import warnings

import numpy as np
import pytest
from ember.backends.hookspecs import hookimpl
from ember.core import determinism

import ember
from ember import backends


@pytest.fixture(autouse=True)
def switch_off_after():
    yield
    ember.use_deterministic_algorithms(False)


def test_api_reads_back():
    assert not ember.are_deterministic_algorithms_enabled()
    assert ember.get_deterministic_debug_mode() == 0
    ember.use_deterministic_algorithms(True)
    assert ember.are_deterministic_algorithms_enabled()
    assert not ember.is_deterministic_algorithms_warn_only_enabled()
    assert ember.get_deterministic_debug_mode() == 2
    ember.use_deterministic_algorithms(True, warn_only=True)
    assert ember.is_deterministic_algorithms_warn_only_enabled()
    assert ember.get_deterministic_debug_mode() == 1
    for mode, expect in (("default", 0), ("warn", 1), ("error", 2), (0, 0), (2, 2)):
        ember.set_deterministic_debug_mode(mode)
        assert ember.get_deterministic_debug_mode() == expect
        assert ember.are_deterministic_algorithms_enabled() == (expect != 0)


def test_api_errors_match_torch():
    import torch
    for bad in ("loud", 3):
        with pytest.raises(RuntimeError) as et:
            torch.set_deterministic_debug_mode(bad)
        with pytest.raises(RuntimeError) as ee:
            ember.set_deterministic_debug_mode(bad)
        assert str(ee.value) == str(et.value)
    with pytest.raises(TypeError):
        ember.use_deterministic_algorithms("yes")


def test_deprecated_alias_warns_and_forwards():
    with pytest.warns(FutureWarning, match="use_deterministic_algorithms"):
        ember.set_deterministic(True)
    assert ember.are_deterministic_algorithms_enabled()


@pytest.mark.parametrize("dtype, value", [(ember.float32, float("nan")),
                                          (ember.bfloat16, float("nan")),
                                          (ember.int32, 2**31 - 1), (ember.int64, 2**63 - 1),
                                          (ember.uint8, 255), (ember.bool, True)])
def test_empty_is_filled_like_torch(dtype, value):
    import torch
    torch.use_deterministic_algorithms(True)
    try:
        expect = torch.empty(3, dtype=getattr(torch, dtype.name)).tolist()
    finally:
        torch.use_deterministic_algorithms(False)
    ember.use_deterministic_algorithms(True)
    for t in (ember.empty(3, dtype=dtype), ember.empty_like(ember.zeros(3, dtype=dtype))):
        got = t.tolist()
        assert np.array_equal(np.array(got, dtype=float), np.array(expect, dtype=float),
                              equal_nan=True)
        assert np.array_equal(np.array(got, dtype=float), np.full(3, float(value)),
                              equal_nan=True)


@pytest.fixture
def cpu_declares_scatter_add():
    """A plugin module declaring two CPU kernels order-dependent (registered last, so its
    firstresult answer wins over ember-cpu's empty list)."""
    mod = types.ModuleType("declares_nondeterministic")

    @hookimpl
    def ember_nondeterministic_kernels(device_type):
        return ["scatter_add", "bincount"] if device_type == "cpu" else None
    mod.ember_nondeterministic_kernels = ember_nondeterministic_kernels
    pm = backends._manager()
    pm.register(mod)
    determinism._forget_declarations()
    yield
    pm.unregister(mod)
    determinism._forget_declarations()


def test_cpu_declares_every_kernel_deterministic():
    assert backends.nondeterministic_kernels("cpu") == []
    ember.use_deterministic_algorithms(True)
    x = ember.zeros(3).scatter_add(0, ember.tensor([0, 0, 2]), ember.ones(3))
    assert x.tolist() == [2.0, 0.0, 1.0]
    assert ember.bincount(ember.tensor([1, 1, 2])).tolist() == [0, 2, 1]


def test_declared_op_raises_names_op_and_device(cpu_declares_scatter_add):
    idx, src = ember.tensor([0, 0, 2]), ember.ones(3)
    ember.zeros(3).scatter_add(0, idx, src)          # switch off: runs
    ember.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError, match=r"scatter_add does not have a deterministic "
                                           r"implementation on device 'cpu'"):
        ember.zeros(3).scatter_add(0, idx, src)
    with pytest.raises(RuntimeError, match="bincount"):
        ember.bincount(ember.tensor([1, 2]))
    ember.zeros(3).scatter(0, idx, src)               # not declared: runs


def test_declared_op_warns_under_warn_only(cpu_declares_scatter_add):
    ember.use_deterministic_algorithms(True, warn_only=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = ember.zeros(3).scatter_add(0, ember.tensor([0, 0, 2]), ember.ones(3))
    assert x.tolist() == [2.0, 0.0, 1.0]
    assert any("scatter_add" in str(w.message) for w in caught)


@pytest.mark.parametrize("op", ["sum", "mean", "var", "cumsum"])
def test_reductions_bitwise_equal_at_1_and_2_threads(op):
    x = ember.randn(1 << 20, generator=ember.Generator().manual_seed(0))
    before = ember.get_num_threads()
    ember.use_deterministic_algorithms(True)
    try:
        results = []
        for n in (1, 2):
            ember.set_num_threads(n)
            r = getattr(x, op)(0) if op == "cumsum" else getattr(x, op)()
            results.append(r.numpy().tobytes())
    finally:
        ember.set_num_threads(before)
    assert results[0] == results[1]
