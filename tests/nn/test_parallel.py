"""ember.nn.parallel: DataParallel on the CPU runs the module; DistributedDataParallel
needs a process group (torch's ValueError without one) and averages gradients."""
import ember.distributed
import numpy as np
import pytest
import torch

import ember


def test_data_parallel_on_cpu_runs_the_module():
    lin = ember.nn.Linear(3, 2)
    dp = ember.nn.parallel.DataParallel(lin)
    x = ember.randn(4, 3)
    assert ember.equal(dp(x), lin(x)) and dp.device_ids == []
    assert list(dp.state_dict()) == list(torch.nn.DataParallel(torch.nn.Linear(3, 2)).state_dict())
    dp(x).sum().backward()
    assert lin.weight.grad is not None


def test_ddp_without_process_group_raises_torchs_error():
    with pytest.raises(ValueError) as te:
        torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError) as ee:
        ember.nn.parallel.DistributedDataParallel(ember.nn.Linear(2, 2))
    assert str(ee.value) == str(te.value)


class FakeGroup:
    """Two ranks whose other rank always holds `other` times this rank's values."""

    def __init__(self, other):
        self.other, self.calls = other, []

    def is_initialized(self):
        return True

    def _get_default_group(self):
        return "world"

    def get_world_size(self, group=None):
        return 2

    def broadcast(self, t, src=0, group=None):
        self.calls.append(("broadcast", tuple(t.shape)))

    def all_reduce(self, t, group=None):
        self.calls.append(("all_reduce", tuple(t.shape)))
        t.mul_(1 + self.other)


def test_ddp_averages_gradients_over_the_group(monkeypatch):
    fake = FakeGroup(other=3.0)
    for name in ("is_initialized", "_get_default_group", "get_world_size", "broadcast",
                 "all_reduce"):
        monkeypatch.setattr(ember.distributed, name, getattr(fake, name), raising=False)
    lin = ember.nn.Linear(3, 2)
    ddp = ember.nn.parallel.DistributedDataParallel(lin)
    assert ("broadcast", (2, 3)) in fake.calls and ddp.module is lin
    x = ember.tensor(np.ones((1, 3), dtype="float32"))
    ddp(x).sum().backward()
    # local grad g; the other rank's is 3g: the average is 2g
    np.testing.assert_allclose(lin.weight.grad.numpy(), 2 * np.ones((2, 3)))
    lin.weight.grad = None
    with ddp.no_sync():
        ddp(x).sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.ones((2, 3)))
    with pytest.raises(RuntimeError, match="doesn't have any parameter"):
        ember.nn.parallel.DistributedDataParallel(ember.nn.ReLU())
