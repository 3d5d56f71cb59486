"""ember.nn.parallel: DataParallel on the CPU runs the module; DistributedDataParallel
needs a process group (torch's ValueError without one).  DistributedDataParallel's training on
real MPI ranks is tested in tests/distributed/test_ddp.py."""
import pytest
import torch

import ember


def test_data_parallel_on_cpu_runs_the_module():
    lin = ember.nn.Linear(3, 2)
    x = ember.randn(4, 3)
    ref = lin(x)
    dp = ember.nn.parallel.DataParallel(lin)      # on a GPU machine: moved to cuda:0, as torch
    assert ember.allclose(dp(x).cpu(), ref, atol=1e-6)
    assert dp.device_ids == ([0] if ember.cuda.is_available() else [])
    assert list(dp.state_dict()) == list(torch.nn.DataParallel(torch.nn.Linear(3, 2)).state_dict())
    dp(x).sum().backward()
    assert lin.weight.grad is not None


def test_ddp_without_process_group_raises_torchs_error():
    with pytest.raises(ValueError) as te:
        torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError) as ee:
        ember.nn.parallel.DistributedDataParallel(ember.nn.Linear(2, 2))
    assert str(ee.value) == str(te.value)
