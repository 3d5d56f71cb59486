"""Cases of device indices: ops, autograd and copies on a device index > 0 (where the
device type has several; skipped with the reason otherwise), copies between indices,
ops mixing indices refused, the runtime's current device, and an index past
``device_count()`` refused with a RuntimeError (never memory that aliases device 0)."""
import numpy as np
import pytest

import ember
from ember.testing.conformance._case import ANY, case
from ember.testing.conformance._data import check, seeded, to_device, values


def _runtime(device):
    return ember.get_device_module(ember.device(device).type)


def _other_index(device):
    """The highest index of the device type, or a skip when it has one device."""
    kind = ember.device(device).type
    n = _runtime(device).device_count()
    if n < 2:
        pytest.skip(f"device type '{kind}' has {n} device: no index > 0 to run on")
    return f"{kind}:{n - 1}", n - 1


def _on(t, index):
    assert t.device.index == index, f"result on {t.device}, expected index {index}"
    return t


@case("devices", "index", (ANY,), ("ops", "autograd", "copy", "mixed", "current"))
def _index(device, dtype, variant):
    dev, k = _other_index(device)
    rng = seeded("devices", variant)
    ha, hb = values(rng, (3, 4), "float32"), values(rng, (4, 5), "float32")
    a, b = to_device(ha, "float32", dev), to_device(hb, "float32", dev)
    if variant == "ops":                   # elementwise, reduction, matmul, index, random
        check(_on((a * 2 + 1).sum(0), k), (ha * 2 + 1).sum(0), "float32", dev)
        check(_on(a @ b, k), ha @ hb, "float32", dev)
        check(_on(a[:, ember.tensor([3, 0], device=dev)], k), ha[:, [3, 0]], "float32", dev)
        _on(ember.rand(5, device=dev), k)
    elif variant == "autograd":
        a.requires_grad_()
        (a @ b).tanh().sum().backward()
        check(_on(a.grad, k), (1 - np.tanh(ha @ hb) ** 2) @ hb.T, "float32", dev, (1e-4, 1e-4))
    elif variant == "copy":                # index k -> index 0 -> the host, and back
        zero = f"{ember.device(device).type}:0"
        check(_on(a.to(zero), 0), ha, "float32", zero)
        check(_on(a.to(zero).to(dev), k), ha, "float32", dev)
        check(_on(to_device(ha, "float32", zero).to(dev) + a, k), 2 * ha, "float32", dev)
    elif variant == "mixed":
        zero = to_device(ha, "float32", f"{ember.device(device).type}:0")
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            a + zero
    else:                                  # "type" without an index: the current device
        mod = _runtime(device)
        before = mod.current_device()
        mod.set_device(k)
        try:
            assert mod.current_device() == k
            _on(ember.zeros(2, device=ember.device(device).type), k)
        finally:
            mod.set_device(before)


@case("devices", "out_of_range", (ANY,), ("alloc",))
def _out_of_range(device, dtype, variant):
    kind = ember.device(device).type
    n = _runtime(device).device_count()
    with pytest.raises(RuntimeError):
        ember.zeros(2, device=f"{kind}:{n}").cpu()
    assert (ember.ones(2, device=device) + 1).tolist() == [2.0, 2.0]
