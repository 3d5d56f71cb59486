"""binary_cross_entropy's gradients as PyTorch's: finite where the input is exactly 0 or 1
(a saturated sigmoid gave NaN), the target's gradient, double backward and forward AD."""
import numpy as np
import pytest
import torch

import ember


def _grads(m, x, t, w=None, reduction="mean"):
    x = m.tensor(x, dtype=m.float64, requires_grad=True)
    t = m.tensor(t, dtype=m.float64, requires_grad=True)
    w = None if w is None else m.tensor(w, dtype=m.float64)
    loss = m.nn.functional.binary_cross_entropy(x, t, weight=w, reduction=reduction)
    loss.sum().backward()
    return loss.detach().numpy(), x.grad.numpy(), t.grad.numpy()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_gradients_at_the_ends_and_inside(reduction):
    x, t = [0.0, 1.0, 0.5, 1.0, 0.0, 0.3], [1.0, 0.0, 1.0, 1.0, 0.0, 0.6]
    for w in (None, [1.0, 2.0, 0.5, 1.0, 3.0, 2.0]):
        for e, o in zip(_grads(ember, x, t, w, reduction), _grads(torch, x, t, w, reduction)):
            np.testing.assert_allclose(e, o, rtol=1e-8)    # torch: eps 1e-12 in float32


def test_a_saturated_sigmoid_has_a_finite_gradient():
    for m in (ember, torch):
        z = m.tensor([20.0, -20.0, 0.3], requires_grad=True)
        m.nn.BCELoss()(m.sigmoid(z), m.tensor([0.0, 1.0, 1.0])).backward()
        assert np.isfinite(z.grad.numpy()).all()
        np.testing.assert_allclose(z.grad.numpy(), [0.0, -1 / 3, -0.1418525], rtol=1e-5)


def test_double_backward_and_forward_ad():
    x0, t0 = np.array([0.2, 0.7]), np.array([0.3, 1.0])
    out = []
    for m in (ember, torch):
        x = m.tensor(x0, requires_grad=True)
        g, = m.autograd.grad(m.nn.functional.binary_cross_entropy(x, m.tensor(t0)), x,
                             create_graph=True)
        g.sum().backward()
        out.append((g.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-9)       # torch: eps in float32
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-9)
    def fn(x):
        return ember.nn.functional.binary_cross_entropy(x, ember.tensor(t0), reduction="sum")
    _, tangent = ember.func.jvp(fn, (ember.tensor(x0),), (ember.ones(2, dtype=ember.float64),))
    np.testing.assert_allclose(tangent.item(), sum((x0 - t0) / (x0 * (1 - x0))), rtol=1e-12)
