"""ember.cuda on a machine without a usable GPU behaves as PyTorch's CPU-only build: queries
answer empty/False/0, calls that need a device raise, legacy cuda types refuse, and the
classes sit at torch.cuda's module paths."""
import pytest

import ember

pytestmark = pytest.mark.skipif(ember.cuda.is_available(), reason="a GPU is present")


def test_answers_without_a_device():
    c = ember.cuda
    assert c.device_count() == 0 and not c.is_available()
    assert c.get_arch_list() == [] and c.is_tf32_supported() is False
    assert c.memory_allocated() == 0 and c.memory_reserved() == 0
    assert c.memory_stats_as_nested_dict() == {} and dict(c.host_memory_stats()) == {}
    assert c.get_rng_state_all() == [] and tuple(c.default_generators) == ()
    assert c.has_half is True and c.has_magma is False
    c.manual_seed(1)
    c.manual_seed_all(1)           # ignored silently, as torch
    c.set_rng_state_all([])
    c.reset_accumulated_memory_stats()
    assert isinstance(c.list_gpu_processes(), str)
    with pytest.warns(FutureWarning):
        assert c.memory_cached() == 0


@pytest.mark.parametrize("call", [
    lambda c: c.synchronize(), lambda c: c.initial_seed(), lambda c: c.ipc_collect(),
    lambda c: c.get_sync_debug_mode(), lambda c: c.set_sync_debug_mode("warn"),
    lambda c: c.can_device_access_peer(0, 1), lambda c: c.get_per_process_memory_fraction(),
    lambda c: c.get_stream_from_external(0)])
def test_device_calls_raise(call):
    with pytest.raises((RuntimeError, AssertionError)):
        call(ember.cuda)


@pytest.mark.parametrize("name", ["clock_rate", "power_draw", "temperature", "utilization",
                                  "device_memory_used", "memory_usage"])
def test_nvml_readings_need_nvml(name):
    try:
        import pynvml  # noqa: F401
        pytest.skip("pynvml is installed")
    except ModuleNotFoundError:
        pass
    with pytest.raises(ModuleNotFoundError, match="nvidia-ml-py"):
        getattr(ember.cuda, name)()


def test_legacy_types_and_module_paths():
    with pytest.raises(TypeError, match="not available"):
        ember.cuda.FloatTensor(2)
    with pytest.raises(TypeError, match="not available"):
        ember.cuda.ByteStorage(2)
    assert ember.cuda.Stream.__module__ == ember.cuda.Event.__module__ == "ember.cuda.streams"
    assert ember.cuda.streams.Stream is ember.cuda.Stream
    assert ember.cuda.device.__module__ == "ember.cuda"
    assert issubclass(ember.cuda.DeferredCudaCallError, Exception)
    assert ember.cuda.memory.memory_snapshot() == []
    with ember.cuda.device_of(ember.ones(1)):       # a CPU tensor: no change of device
        pass
    with pytest.raises(RuntimeError):
        ember.cuda.Stream()
    import importlib
    for sub in ("memory", "random", "streams"):
        assert importlib.import_module(f"ember.cuda.{sub}") is getattr(ember.cuda, sub)
