"""ember.utils.dlpack (torch.utils.dlpack): capsules out and back, objects with __dlpack__
(NumPy arrays, torch tensors) in, the memory shared, and the DLPack device codes."""
import numpy as np
import torch

import ember
import ember.utils.dlpack as dlpack


def test_module_is_reachable_as_torchs():
    assert ember.utils.dlpack is dlpack
    assert dlpack.__all__ == torch.utils.dlpack.__all__
    assert dlpack.to_dlpack is ember.to_dlpack and dlpack.from_dlpack is ember.from_dlpack


def test_capsule_round_trip_shares_memory():
    t = ember.tensor([1.0, 2.0, 3.0])
    back = dlpack.from_dlpack(dlpack.to_dlpack(t))
    assert back.tolist() == [1.0, 2.0, 3.0] and back.dtype == t.dtype
    back[0] = 7.0
    assert t[0].item() == 7.0


def test_from_objects_with_dlpack():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    e = dlpack.from_dlpack(a)
    assert e.dtype == ember.int32 and e.tolist() == a.tolist()
    assert dlpack.from_dlpack(torch.arange(4)).tolist() == [0, 1, 2, 3]
    assert torch.utils.dlpack.from_dlpack(dlpack.to_dlpack(ember.ones(2))).tolist() == [1, 1]


def test_device_types():
    assert {k: int(v) for k, v in dlpack.DLDeviceType.__members__.items()} == \
        {k: int(v) for k, v in torch.utils.dlpack.DLDeviceType.__members__.items()}
    assert dlpack.DLDeviceType(ember.ones(1).__dlpack_device__()[0]) is dlpack.DLDeviceType.kDLCPU
