"""Cases of second-order gradients through the device, gradgradcheck-style: the gradients
of an op are taken with ``create_graph=True`` and differentiated again, with respect to the
op's inputs and to the incoming gradient.  The reference is NumPy: central differences, in
float64, of the NumPy formula of the op's first gradients (the ones the suite's first-order
cases check), so nothing but NumPy is trusted."""
import numpy as np

import ember
from ember.testing.conformance._case import case
from ember.testing.conformance._cases_convpool import np_conv_backward
from ember.testing.conformance._data import check, seeded, to_device, values

F = ember.nn.functional
EPS = 1e-5
_TOL = {"float32": (2e-3, 2e-3), "float64": (1e-6, 1e-6)}


def _np_softmax(x, dim):
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


def _g_softmax(x, g):
    s = _np_softmax(x, -1)
    return (s * (g - (g * s).sum(-1, keepdims=True)),)


def _g_log_softmax(x, g):
    return (g - _np_softmax(x, 0) * g.sum(0, keepdims=True),)


def _g_norm(x, w, g, axes):
    """Gradients (x, weight, bias) of a normalisation over `axes` with an affine weight
    along axis 1, broadcast to x (layer norm of 2-d x: axis 1; batch norm: axes 0, 2)."""
    mean, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    rstd = 1 / np.sqrt(var + EPS)
    xhat = (x - mean) * rstd
    h = g * w
    gx = rstd * (h - h.mean(axes, keepdims=True) - xhat * (h * xhat).mean(axes, keepdims=True))
    other = tuple(i for i in range(x.ndim) if i != 1)
    return gx, (g * xhat).sum(other), g.sum(other)


def _g_layer_norm(x, w, b, g):
    return _g_norm(x, w, g, (1,))


def _g_batch_norm(x, w, b, g):
    return _g_norm(x, w[None, :, None], g, (0, 2))


def _g_vector_norm(x, g):
    return (g * x / np.sqrt((x * x).sum()),)


def _g_matmul(a, b, g):
    return g @ b.T, a.T @ g


def _elementwise(m, a, b):
    """exp(ab) sin(a) + tanh(b) / (1 + a^2) in ember (m=ember) or NumPy (m=np)."""
    return m.exp(a * b) * m.sin(a) + m.tanh(b) / (1 + a * a)


def _g_elementwise(a, b, g):
    e = np.exp(a * b)
    ga = b * e * np.sin(a) + e * np.cos(a) - np.tanh(b) * 2 * a / (1 + a * a) ** 2
    gb = a * e * np.sin(a) + (1 - np.tanh(b) ** 2) / (1 + a * a)
    return g * ga, g * gb


def _g_conv(stride, padding, dilation):
    def grads(x, w, b, g):
        nd = x.ndim - 2
        return np_conv_backward(x, w, g, (stride,) * nd, (padding,) * nd, (dilation,) * nd, 1)
    return grads


_TARGET = np.array([0, 2, 1])


def _g_cross_entropy(x, g):
    return (g * (_np_softmax(x, -1) - np.eye(x.shape[1])[_TARGET]) / x.shape[0],)


# op: {variant: (input shapes, ember call, NumPy first gradients (inputs..., grad_out))}
GRADGRAD = {
    "softmax": {"softmax": ([(3, 4)], lambda x: F.softmax(x, -1), _g_softmax),
                "log_softmax": ([(3, 4)], lambda x: F.log_softmax(x, 0), _g_log_softmax)},
    "norm": {"layer_norm": ([(3, 4), (4,), (4,)],
                            lambda x, w, b: F.layer_norm(x, (4,), w, b, eps=EPS),
                            _g_layer_norm),
             "batch_norm": ([(4, 2, 3), (2,), (2,)],
                            lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True,
                                                         eps=EPS), _g_batch_norm),
             "vector_norm": ([(3, 4)], lambda x: ember.linalg.vector_norm(x),
                             _g_vector_norm)},
    "conv": {"conv1d": ([(2, 2, 7), (3, 2, 3), (3,)],
                        lambda x, w, b: F.conv1d(x, w, b, padding=1, dilation=2),
                        _g_conv(1, 1, 2)),
             "conv2d": ([(1, 2, 5, 4), (2, 2, 3, 3), (2,)],
                        lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
                        _g_conv(2, 1, 1))},
    "matmul": {"matmul": ([(3, 4), (4, 2)], lambda a, b: a @ b, _g_matmul)},
    "elementwise": {"elementwise": ([(3, 4), (3, 4)], lambda a, b: _elementwise(ember, a, b),
                                    _g_elementwise)},
    "nll": {"cross_entropy": ([(3, 4)], lambda x: F.cross_entropy(
        x, ember.tensor(_TARGET, device=x.device)), _g_cross_entropy)},
}


def _numeric_gradient(f, arrays, h=1e-5):
    """d f / d every element of every array (modified in place and restored), central."""
    out = []
    for z in arrays:
        gz = np.zeros_like(z)
        for i in np.ndindex(z.shape):
            keep = z[i]
            z[i] = keep + h
            up = f()
            z[i] = keep - h
            down = f()
            z[i] = keep
            gz[i] = (up - down) / (2 * h)
        out.append(gz)
    return out


def _gradgrad_case(op):
    def run(device, dtype, variant):
        shapes, fn, np_grads = GRADGRAD[op][variant]
        rng = seeded("gradgrad", op, dtype, variant)
        hosts = [values(rng, s, dtype, "unit") for s in shapes]
        xs = [to_device(h, dtype, device).requires_grad_() for h in hosts]
        y = fn(*xs)
        hg = values(rng, tuple(y.shape), dtype, "unit")
        g = to_device(hg, dtype, device).requires_grad_()
        first = ember.autograd.grad(y, xs, g, create_graph=True)
        hv = [values(rng, s, dtype, "unit") for s in shapes]       # a direction per grad
        s = sum((gi * to_device(v, dtype, device)).sum() for gi, v in zip(first, hv))
        second = ember.autograd.grad(s, xs + [g], allow_unused=True)
        arrays = [h.astype(np.float64) for h in hosts] + [hg.astype(np.float64)]
        want = _numeric_gradient(
            lambda: sum((gi * v).sum() for gi, v in zip(np_grads(*arrays), hv)), arrays)
        names = [f"input {i}" for i in range(len(xs))] + ["grad_output"]
        for got, w, name in zip(second, want, names):
            if got is None:                  # unused: the first gradients do not depend on it
                assert not np.abs(w).max() > 1e-6, f"{variant}: no second gradient for {name}"
                continue
            check(got, w, dtype, device, _TOL[dtype], f"{variant}: d(grads . v)/d {name}")
    return run


for _op, _variants in GRADGRAD.items():
    case("gradgrad", _op, ("float32", "float64"), tuple(_variants))(_gradgrad_case(_op))
