"""randint / normal / bernoulli / randperm: reproducible from a seed, right shapes and
dtypes, and the right distributions (loose statistical checks on large samples)."""
import numpy as np
import pytest
import torch

import ember


def test_randint(device):
    ember.manual_seed(1)
    x = ember.randint(3, 9, (10000,), device=device)
    assert x.dtype == ember.int64 and x.shape == (10000,)
    v = x.numpy(force=True)
    assert v.min() == 3 and v.max() == 8 and abs(np.bincount(v)[3:].std() / 1666) < 0.1
    ember.manual_seed(1)
    assert ember.randint(3, 9, (10000,), device=device).tolist() == x.tolist()
    assert ember.randint(5, (2, 3), dtype=ember.int32, device=device).dtype == ember.int32
    assert ember.randint(low=2, high=4, size=(3,)).shape == (3,)
    assert ember.randint_like(ember.zeros(2, 2), 7).shape == (2, 2)
    with pytest.raises(RuntimeError, match="expects 'from' to be less than 'to'"):
        ember.randint(5, 5, (2,))


def test_normal_and_bernoulli(device):
    ember.manual_seed(2)
    z = ember.normal(3.0, 2.0, (100000,), device=device).numpy(force=True)
    assert abs(z.mean() - 3) < 0.03 and abs(z.std() - 2) < 0.03
    m = ember.tensor([0.0, 100.0], device=device)
    s = ember.normal(m, 0.001)
    assert s.shape == (2,) and abs(s[1].item() - 100) < 0.1
    b = ember.bernoulli(ember.full((100000,), 0.3, device=device)).numpy(force=True)
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.01
    assert ember.bernoulli(ember.zeros(5)).sum().item() == 0
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        ember.normal(0.0, -1.0, (2,))


@pytest.mark.parametrize("n", [0, 1, 2, 7, 1000])
def test_randperm_is_a_reproducible_permutation(device, n):
    ember.manual_seed(3)
    p = ember.randperm(n, device=device)
    assert p.dtype == ember.int64 and p.device.type == ember.device(device).type
    assert sorted(p.tolist()) == list(range(n))
    ember.manual_seed(3)
    assert ember.randperm(n, device=device).tolist() == p.tolist()
    assert ember.randperm(n, dtype=ember.float32, device=device).dtype == ember.float32


def test_randperm_is_uniform_over_positions():
    """Fisher-Yates: every value lands in every position equally often (a chi-square test
    over 6000 permutations of 5; a biased swap rule fails it by a wide margin)."""
    ember.manual_seed(0)
    counts = np.zeros((5, 5))
    for _ in range(6000):
        counts[np.arange(5), ember.randperm(5).numpy()] += 1
    chi2 = ((counts - 1200) ** 2 / 1200).sum()
    assert chi2 < 50, chi2            # 16 degrees of freedom: p < 1e-4 beyond 45


# --- normal with tensor mean/std: PyTorch's semantics ------------------------------------

def _normal_grads(lib, mean_shape, std_shape):
    m = lib.zeros(mean_shape, requires_grad=True)
    s = lib.ones(std_shape, requires_grad=True)
    r = lib.normal(m, s)
    r.sum().backward()
    return r.requires_grad, r.grad_fn is not None, tuple(r.shape), m.grad.tolist(), \
        s.grad.tolist()


@pytest.mark.parametrize("shapes", [((2,), (2,)), ((2, 1), (3,)), ((), (2, 2))])
def test_normal_tensor_args_record_a_zero_gradient(shapes):
    # torch.normal is not reparameterised: a graph node whose gradients are zero (code that
    # scores its samples with log_prob relies on no pathwise gradient)
    assert _normal_grads(ember, *shapes) == _normal_grads(torch, *shapes)


def test_normal_tensor_args_single_tensor_gradient_is_zero():
    for lib in (ember, torch):
        m = lib.tensor([0.0, 1.0], requires_grad=True)
        lib.normal(m, 1.0).sum().backward()
        s = lib.tensor([1.0, 2.0], requires_grad=True)
        lib.normal(0.0, s).sum().backward()
        assert m.grad.tolist() == [0.0, 0.0] and s.grad.tolist() == [0.0, 0.0]
    assert ember.normal(ember.zeros(2), ember.ones(2)).grad_fn is None


@pytest.mark.parametrize("mean,std", [("float32", "float64"), ("float64", "float32"),
                                      (None, "float64"), ("float64", None),
                                      ("float16", "float32")])
def test_normal_result_dtype_is_means(mean, std):
    def run(lib):
        m = 0.0 if mean is None else lib.zeros(3, dtype=getattr(lib, mean))
        s = 1.0 if std is None else lib.ones(3, dtype=getattr(lib, std))
        return str(lib.normal(m, s).dtype).split(".")[1]
    assert run(ember) == run(torch)


@pytest.mark.parametrize("std", [[1.0, -1.0], [1.0, float("nan")]])
def test_normal_rejects_negative_or_nan_std_tensor(std):
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
            lib.normal(lib.zeros(2), lib.tensor(std))
        with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
            lib.normal(0.0, lib.tensor(std))


def test_normal_errors_match_torch():
    for lib in (ember, torch):
        with pytest.raises(NotImplementedError):
            lib.normal(lib.zeros(3, dtype=lib.int64), lib.ones(3))
        with pytest.raises(TypeError):
            lib.normal(lib.zeros(2), lib.ones(2), size=(2,))
    assert ember.normal(0.0, 1.0, (2,), requires_grad=True).requires_grad


def test_normal_std_check_inside_vmap():
    f = ember.func.vmap(lambda s: ember.normal(ember.zeros(2), s), randomness="different")
    assert tuple(f(ember.ones(3, 2)).shape) == (3, 2)
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        f(ember.tensor([[1.0, 1.0], [1.0, -1.0]]))
