"""ember.cuda's runtime on a GPU: devices, cross-device copies, streams and events, the
caching allocator and its statistics, the out-of-memory error, seeds."""
import os
import subprocess
import sys

import numpy as np
import pytest

import ember


def test_devices_and_properties():
    assert ember.cuda.is_available() and ember.cuda.device_count() >= 1
    assert ember.cuda.current_device() == 0
    props = ember.cuda.get_device_properties(0)
    assert props.total_memory > 1 << 30 and props.multi_processor_count > 0
    assert ember.cuda.get_device_name() == props.name
    assert ember.cuda.get_device_capability() == (props.major, props.minor)
    x = ember.zeros(2, device="cuda")
    assert x.device == ember.device("cuda", 0) and x.is_cuda and x.get_device() == 0
    assert ember.zeros(2, device="cuda:0").device == x.device
    with ember.cuda.device(0):
        assert ember.cuda.current_device() == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        ember.cuda.set_device(ember.cuda.device_count())


def test_copies_between_devices():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    c = ember.tensor(a)
    g = c.cuda()
    assert g.device.type == "cuda" and g.dtype == ember.float32
    np.testing.assert_array_equal(g.cpu().numpy(), a)
    np.testing.assert_array_equal(c.to("cuda").permute(2, 0, 1).cpu().numpy(),
                                  a.transpose(2, 0, 1))
    # casts on the way, non-contiguous sources, device-to-device copies
    np.testing.assert_array_equal(c.permute(2, 1, 0).to("cuda", ember.float64).cpu().numpy(),
                                  a.transpose(2, 1, 0).astype(np.float64))
    h = ember.empty(4, 3, 2, device="cuda")
    h.copy_(g.permute(2, 1, 0))
    np.testing.assert_array_equal(h.cpu().numpy(), a.transpose(2, 1, 0))
    h[1:3].copy_(c.permute(2, 1, 0)[1:3])                   # host -> a device view
    np.testing.assert_array_equal(h.cpu().numpy(), a.transpose(2, 1, 0))
    assert g.clone().data_ptr() != g.data_ptr()
    assert g.tolist() == a.tolist() and g[1, 2, 3].item() == 23.0
    with pytest.raises(TypeError, match="cuda"):
        g.numpy()
    np.testing.assert_array_equal(g.numpy(force=True), a)
    # a 0-d CPU tensor next to a GPU tensor acts as a scalar (PyTorch)
    np.testing.assert_array_equal((g + ember.tensor(2.0)).cpu().numpy(), a + 2)
    with pytest.raises(RuntimeError, match="same device"):
        g + ember.ones(2, 3, 4)


def test_every_dtype_round_trips():
    vals = [0, 1, 2, 5, 100]
    for dt in [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64,
               ember.float16, ember.bfloat16, ember.float32, ember.float64]:
        t = ember.tensor(vals, dtype=dt, device="cuda")
        assert t.dtype == dt and t.cpu().tolist() == ember.tensor(vals, dtype=dt).tolist()
        for dt2 in [ember.bool, ember.int32, ember.float16, ember.float64, ember.bfloat16]:
            assert t.to(dt2).cpu().tolist() == ember.tensor(vals, dtype=dt).to(dt2).tolist()


def test_streams_and_events():
    s = ember.cuda.Stream()
    assert ember.cuda.current_stream() == ember.cuda.default_stream()
    start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
    x = ember.randn(1024, 1024, device="cuda")
    with ember.cuda.stream(s):
        assert ember.cuda.current_stream() == s
        start.record()
        for _ in range(10):
            y = x @ x
        end.record()
    assert ember.cuda.current_stream() == ember.cuda.default_stream()
    end.synchronize()
    assert end.query() and s.query()
    assert end.elapsed_time(start) < 0 < start.elapsed_time(end)
    ember.cuda.current_stream().wait_stream(s)
    np.testing.assert_allclose(y.cpu().numpy(), (x.cpu() @ x.cpu()).numpy(), rtol=1e-3,
                               atol=1e-3)
    with pytest.raises(RuntimeError, match="enable_timing"):
        ember.cuda.Event().elapsed_time(end)
    ember.cuda.synchronize()


def test_caching_allocator_reuses_blocks():
    ember.cuda.synchronize()
    ember.cuda.empty_cache()
    base = ember.cuda.memory_allocated()
    stats0 = ember.cuda.memory_stats()
    x = ember.empty(1000, 1000, device="cuda")               # 4 MB
    assert ember.cuda.memory_allocated() - base >= 4_000_000
    assert ember.cuda.memory_reserved() >= ember.cuda.memory_allocated()
    ptr = x.data_ptr()
    del x
    assert ember.cuda.memory_allocated() == base
    y = ember.empty(1000, 1000, device="cuda")               # the same class: the same block
    assert y.data_ptr() == ptr
    stats1 = ember.cuda.memory_stats()
    assert stats1["num_device_alloc"] - stats0["num_device_alloc"] == 1
    assert ember.cuda.max_memory_allocated() >= ember.cuda.memory_allocated()
    ember.cuda.reset_peak_memory_stats()
    assert ember.cuda.max_memory_allocated() == ember.cuda.memory_allocated()
    del y
    reserved = ember.cuda.memory_reserved()
    ember.cuda.empty_cache()
    assert ember.cuda.memory_reserved() < reserved
    assert "Allocated memory" in ember.cuda.memory_summary()
    # many small tensors: no driver allocation per tensor once the cache is warm
    for _ in range(3):
        ts = [ember.ones(100, device="cuda") for _ in range(200)]
        del ts
    before = ember.cuda.memory_stats()["num_device_alloc"]
    ts = [ember.ones(100, device="cuda") for _ in range(200)]
    assert ember.cuda.memory_stats()["num_device_alloc"] == before
    del ts


def test_out_of_memory_raises_with_sizes():
    free, total = ember.cuda.mem_get_info()
    with pytest.raises(ember.cuda.OutOfMemoryError) as info:
        ember.empty(int(total * 2) // 4, device="cuda")
    msg = str(info.value)
    assert "CUDA out of memory. Tried to allocate" in msg and "GiB" in msg, msg
    assert isinstance(info.value, RuntimeError)
    assert ember.cuda.memory_stats()["num_ooms"] >= 1
    # the allocator still works afterwards
    assert ember.ones(10, device="cuda").sum().item() == 10


def test_data_errors_surface_at_the_next_synchronisation(tmp_path):
    # by default an index out of range does not stall the stream: it raises, with the op's
    # message, where the host next waits for the GPU (and the context stays usable)
    code = """if True:
        import ember, pytest
        x = ember.arange(5.0, device="cuda")
        y = x[ember.tensor([1, 7], device="cuda")] * 2     # no error here
        with pytest.raises(IndexError, match="index 7 is out of bounds.*asynchronously"):
            y.cpu()
        assert (x + 1).sum().item() == 15.0                # the slot was cleared
        t = ember.tensor([0, 9], device="cuda")
        loss = ember.nn.functional.cross_entropy(ember.zeros(2, 3, device="cuda"), t)
        with pytest.raises(IndexError, match="Target 9 is out of bounds"):
            ember.cuda.synchronize()
        print("ok")
    """
    env = dict(os.environ, EMBER_CUDA_SYNC_ERRORS="0")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_seeds_give_the_cpu_uniform_stream():
    ember.cuda.manual_seed(123)
    a = ember.rand(1000, device="cuda")
    ember.manual_seed(123)
    b = ember.rand(1000, device="cuda")
    np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy())
    assert ember.cuda.initial_seed() == 123
