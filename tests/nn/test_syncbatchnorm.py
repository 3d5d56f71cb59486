"""nn.SyncBatchNorm in one process (no process group: PyTorch's fallback to BatchNorm) and
convert_sync_batchnorm, against PyTorch; the synchronised statistics on 2 MPI ranks are
tested in tests/distributed/test_syncbn.py."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _pair(shape, dtype=np.float32, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype) * 2 + 1
    return (ember.tensor(x).requires_grad_(), torch.tensor(x).requires_grad_())


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 4), (2, 3, 2, 3, 2)])
@pytest.mark.parametrize("kwargs", [{}, {"momentum": None}, {"affine": False},
                                    {"track_running_stats": False}, {"bias": False}])
def test_without_a_process_group_it_is_batchnorm(shape, kwargs):
    e, t = ember.nn.SyncBatchNorm(3, **kwargs), torch.nn.SyncBatchNorm(3, **kwargs)
    if e.weight is not None:
        w = np.linspace(0.5, 1.5, 3)
        with ember.no_grad():
            e.weight.copy_(ember.tensor(w))
        with torch.no_grad():
            t.weight.copy_(torch.tensor(w))
    for step in range(2):
        (ex, tx), g = _pair(shape, seed=step), np.random.default_rng(9).standard_normal(shape)
        ey, ty = e(ex), t(tx)
        (ey * ember.tensor(g, dtype=ember.float32)).sum().backward()
        (ty * torch.tensor(g, dtype=torch.float32)).sum().backward()
        np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-5,
                                   atol=1e-5)
        np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
        for a, b in zip(e.state_dict().values(), t.state_dict().values()):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    e.eval()
    t.eval()
    ex, tx = _pair(shape, seed=5)
    np.testing.assert_allclose(e(ex).detach().numpy(), t(tx).detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    assert list(e.state_dict()) == list(t.state_dict())


def test_errors_match_pytorch():
    e, t = ember.nn.SyncBatchNorm(3), torch.nn.SyncBatchNorm(3)
    for shape in [(3,), (4, 0)]:
        with pytest.raises(ValueError) as te:
            t(torch.zeros(shape))
        with pytest.raises(ValueError) as ee:
            e(ember.zeros(shape))
        assert str(ee.value) == str(te.value)


def _net(nn):
    return nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3),
                         nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4, affine=False)),
                         nn.ReLU())


def test_convert_sync_batchnorm():
    e, t = _net(ember.nn), _net(torch.nn)
    e[2][1].eval()
    e[1].qconfig = "q"
    originals = (e[1].weight, e[1].running_mean, e[2][1].running_var)
    ec = ember.nn.SyncBatchNorm.convert_sync_batchnorm(e, process_group="pg")
    tc = torch.nn.SyncBatchNorm.convert_sync_batchnorm(t)
    assert ec is e
    assert [type(m).__name__ for m in ec.modules()] == [type(m).__name__ for m in tc.modules()]
    assert list(ec.state_dict()) == list(tc.state_dict())
    bn, inner = ec[1], ec[2][1]
    assert (bn.weight, bn.running_mean, inner.running_var) == originals     # shared
    assert bn.process_group == "pg" and bn.qconfig == "q"
    assert bn.training and not inner.training and not inner.affine
    # a BatchNorm itself comes back as a new module
    root = ember.nn.BatchNorm1d(5, eps=1e-3, momentum=0.3)
    new = ember.nn.SyncBatchNorm.convert_sync_batchnorm(root)
    assert isinstance(new, ember.nn.SyncBatchNorm) and new is not root
    assert (new.eps, new.momentum, new.num_features) == (1e-3, 0.3, 5)
    assert new.weight is root.weight and new.num_batches_tracked is root.num_batches_tracked


def test_module_paths():
    from ember.nn.modules import batchnorm
    assert ember.nn.SyncBatchNorm is batchnorm.SyncBatchNorm is ember.nn.modules.SyncBatchNorm
    assert ember.nn.SyncBatchNorm.__module__ == "ember.nn.modules.batchnorm"
    assert "SyncBatchNorm" in batchnorm.__all__
