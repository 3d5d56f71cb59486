"""Cases of matmul, random, adam and sgd, and of behaviours that are not one kernel entry:
writes through views and ``out=`` (inplace), gradients (autograd) and seeding (rng)."""
import numpy as np

import ember
from ember.testing.conformance._case import ANY, case
from ember.testing.conformance._data import (
    DTYPES,
    FLOATS,
    check,
    read,
    seeded,
    to_device,
    tolerance,
    values,
)

# --- matmul ------------------------------------------------------------------------------
# (a shape, b shape, a transposed in memory)
_MM = {"2d": ((3, 4), (4, 5), False), "batched": ((2, 3, 4), (2, 4, 5), False),
       "strided": ((3, 4), (4, 5), True), "broadcast": ((2, 3, 4), (4, 5), False),
       "empty": ((3, 0), (0, 5), False), "vector": ((4,), (4,), False)}


@case("matmul", "matmul", FLOATS, tuple(_MM))
def _matmul(device, dtype, variant):
    sa, sb, transposed = _MM[variant]
    rng = seeded("matmul", dtype, variant)
    ha, hb = values(rng, sa, dtype), values(rng, sb, dtype)
    a = to_device(np.ascontiguousarray(ha.T), dtype, device).t() if transposed else \
        to_device(ha, dtype, device)
    check(a @ to_device(hb, dtype, device), ha @ hb, dtype, device, tolerance(dtype, 8))


# --- random ------------------------------------------------------------------------------

def _fill_random(op, dtype, device, layout, seed):
    ember.manual_seed(seed)
    dt = getattr(ember, dtype)
    if layout == "contiguous":
        return (ember.rand if op == "uniform" else ember.randn)(64, 64, dtype=dt,
                                                                device=device)
    x = ember.zeros(130, 64, dtype=dt, device=device)
    v = x.t()[:, ::2] if layout == "strided" else x[:0]
    v.uniform_() if op == "uniform" else v.normal_()
    return v


def _random_case(op):
    def run(device, dtype, layout):
        a = _fill_random(op, dtype, device, layout, 1234)
        b = _fill_random(op, dtype, device, layout, 1234)
        assert a.dtype == getattr(ember, dtype) and a.device.type == ember.device(device).type
        ha, hb = read(a).astype(np.float64), read(b).astype(np.float64)
        np.testing.assert_array_equal(ha, hb, err_msg=f"{op}: the same seed gave other numbers")
        if not ha.size:
            return
        assert not np.array_equal(ha, read(_fill_random(op, dtype, device, layout, 99))), \
            f"{op}: another seed gave the same numbers"
        if op == "uniform":
            assert ha.min() >= 0 and ha.max() <= 1, f"uniform outside [0, 1): {ha.min()}"
            assert abs(ha.mean() - 0.5) < 0.03 and abs(ha.std() - 12 ** -0.5) < 0.03
        else:
            assert abs(ha.mean()) < 0.06 and abs(ha.std() - 1) < 0.06, (ha.mean(), ha.std())
    return run


case("random", "uniform", FLOATS, ("contiguous", "strided", "empty"))(_random_case("uniform"))
case("random", "normal", FLOATS, ("contiguous", "strided", "empty"))(_random_case("normal"))


# --- adam --------------------------------------------------------------------------------

def np_adam(p, grads, lr, b1, b2, eps, wd, decoupled, amsgrad):
    m, v, vmax = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for step, g in enumerate(grads, 1):
        if wd:
            if decoupled:
                p = p * (1 - lr * wd)
            else:
                g = g + wd * p
        m = m + (g - m) * (1 - b1)
        v = v * b2 + (1 - b2) * g * g
        if amsgrad:
            vmax = np.maximum(vmax, v)
        denom = np.sqrt(vmax if amsgrad else v) / np.sqrt(1 - b2 ** step) + eps
        p = p - lr / (1 - b1 ** step) * m / denom
    return p


_ADAM = {"adam": (0.0, False, False), "adamw": (0.1, True, False),
         "amsgrad": (0.01, False, True)}


@case("adam", "adam", FLOATS, tuple(_ADAM))
def _adam(device, dtype, variant):
    wd, decoupled, amsgrad = _ADAM[variant]
    rng = seeded("adam", dtype, variant)
    hp = values(rng, (3, 4), dtype)
    grads = [values(rng, (3, 4), dtype) for _ in range(3)]
    p = ember.nn.Parameter(to_device(hp, dtype, device))
    cls = ember.optim.AdamW if decoupled else ember.optim.Adam
    opt = cls([p], lr=0.05, betas=(0.9, 0.99), eps=1e-3, weight_decay=wd, amsgrad=amsgrad)
    for g in grads:
        p.grad = to_device(g, dtype, device)
        opt.step()
    want = np_adam(hp, grads, 0.05, 0.9, 0.99, 1e-3, wd, decoupled, amsgrad)
    check(p.detach(), want, dtype, device, tolerance(dtype, 8), f"{variant} step")


# --- sgd ---------------------------------------------------------------------------------

def np_sgd(p, grads, lr, momentum, dampening, wd, nesterov):
    buf = None
    for g in grads:
        g = g + wd * p
        if momentum:
            buf = g if buf is None else buf * momentum + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


# (momentum, dampening, weight decay, nesterov)
_SGD = {"plain": (0.0, 0.0, 0.0, False), "momentum": (0.9, 0.1, 0.01, False),
        "nesterov": (0.8, 0.0, 0.05, True)}


@case("sgd", "sgd", FLOATS, tuple(_SGD) + ("add_alpha",))
def _sgd(device, dtype, variant):
    rng = seeded("sgd", dtype, variant)
    hp = values(rng, (3, 4), dtype)
    grads = [values(rng, (3, 4), dtype) for _ in range(3)]
    if variant == "add_alpha":              # the in-place add with alpha runs through sgd
        p = to_device(hp, dtype, device)
        p.add_(to_device(grads[0], dtype, device), alpha=-0.25)
        check(p, hp - 0.25 * grads[0], dtype, device, tolerance(dtype, 4), "add_ alpha")
        return
    momentum, dampening, wd, nesterov = _SGD[variant]
    p = ember.nn.Parameter(to_device(hp, dtype, device))
    opt = ember.optim.SGD([p], lr=0.05, momentum=momentum, dampening=dampening,
                          weight_decay=wd, nesterov=nesterov)
    for g in grads:
        p.grad = to_device(g, dtype, device)
        opt.step()
    want = np_sgd(hp, grads, 0.05, momentum, dampening, wd, nesterov)
    check(p.detach(), want, dtype, device, tolerance(dtype, 8), f"{variant} step")


# --- in-place writes, views and out= -----------------------------------------------------

@case("inplace", "inplace", DTYPES, ("add_", "copy_", "setitem", "out", "view"),
      skip=lambda dtype, variant: dtype == "bool" and variant == "add_")
def _inplace(device, dtype, variant):
    rng = seeded("inplace", dtype, variant)
    hx = values(rng, (4, 6), dtype)
    x = to_device(hx, dtype, device)
    want = hx.copy()
    if variant == "add_":                       # through a transposed, sliced view
        hy = values(rng, (3, 4), dtype)
        x.t()[::2].add_(to_device(hy, dtype, device))
        want.T[::2] = (want.T[::2].astype(np.float64) + hy).astype(want.dtype)
    elif variant == "copy_":                    # a strided destination, another dtype
        hy = values(rng, (2, 6), "int16" if dtype != "int16" else "int32")
        x[1::2].copy_(to_device(hy, "int16" if dtype != "int16" else "int32", device))
        want[1::2] = hy != 0 if dtype == "bool" else hy.astype(want.dtype)
    elif variant == "setitem":                  # a scalar and a tensor into slices
        v = True if dtype == "bool" else 3
        x[1:, ::2] = v
        want[1:, ::2] = v
        hy = values(rng, (6,), dtype)
        x[0] = to_device(hy, dtype, device)
        want[0] = hy
    elif variant == "out":
        out = ember.empty(4, 6, dtype=getattr(ember, dtype), device=device)
        r = ember.maximum(x, x.flip(0), out=out)
        assert r is out or r.data_ptr() == out.data_ptr()
        check(out, np.maximum(hx, hx[::-1]), dtype, device)
        return
    else:                                       # a view sees its base's writes
        v = x[1:3].t()
        x.fill_(True if dtype == "bool" else 5)
        assert v._version == x._version
        check(v, np.full((6, 2), True if dtype == "bool" else 5), dtype, device)
        return
    check(x, want, dtype, device)


# --- autograd ----------------------------------------------------------------------------

def _grad_cases(x, y, hx, hy):
    """(ember loss, NumPy d loss/dx, NumPy d loss/dy)."""
    return {
        "elementwise": (((x * y).exp() + (x - y).sin() * 2).sum(),
                        np.exp(hx * hy) * hy + 2 * np.cos(hx - hy),
                        np.exp(hx * hy) * hx - 2 * np.cos(hx - hy)),
        "matmul": ((x @ y.t()).tanh().sum(),
                   (1 - np.tanh(hx @ hy.T) ** 2) @ hy,
                   ((1 - np.tanh(hx @ hy.T) ** 2).T @ hx)),
        "reduce": ((x * y).mean(0).relu().sum() + x.amax(1).sum(),
                   (hy * ((hx * hy).mean(0) > 0)) / 3 +
                   (hx == hx.max(1, keepdims=True)),
                   (hx * ((hx * hy).mean(0) > 0)) / 3),
    }


@case("autograd", "autograd", ("float32", "float64"), ("elementwise", "matmul", "reduce",
                                                      "mlp"))
def _autograd(device, dtype, variant):
    rng = seeded("autograd", dtype, variant)
    if variant == "mlp":
        _mlp_grads(device, dtype, rng)
        return
    hx, hy = values(rng, (3, 4), dtype, "unit"), values(rng, (3, 4), dtype, "unit")
    x = to_device(hx, dtype, device).requires_grad_()
    y = to_device(hy, dtype, device).requires_grad_()
    loss, gx, gy = _grad_cases(x, y, hx, hy)[variant]
    loss.backward()
    check(x.grad, gx, dtype, device, tolerance(dtype, 8), f"{variant}: grad x")
    check(y.grad, gy, dtype, device, tolerance(dtype, 8), f"{variant}: grad y")


def _mlp_grads(device, dtype, rng):
    """Linear-ReLU-Linear with a cross-entropy loss: gradients against NumPy backprop."""
    hx, t = values(rng, (5, 4), dtype), rng.integers(0, 3, 5)
    w1, b1 = values(rng, (8, 4), dtype, "unit"), values(rng, (8,), dtype, "unit")
    w2, b2 = values(rng, (3, 8), dtype, "unit"), values(rng, (3,), dtype, "unit")
    params = [to_device(p, dtype, device).requires_grad_() for p in (w1, b1, w2, b2)]
    F = ember.nn.functional
    h = F.relu(F.linear(to_device(hx, dtype, device), params[0], params[1]))
    F.cross_entropy(F.linear(h, params[2], params[3]), to_device(t, "int64", device)).backward()
    hh = np.maximum(hx @ w1.T + b1, 0)
    z = hh @ w2.T + b2
    s = np.exp(z - z.max(1, keepdims=True))
    s /= s.sum(1, keepdims=True)
    gz = (s - np.eye(3)[t]) / 5
    gh = (gz @ w2) * (hh > 0)
    for p, want, name in zip(params, (gh.T @ hx, gh.sum(0), gz.T @ hh, gz.sum(0)),
                             ("w1", "b1", "w2", "b2")):
        check(p.grad, want, dtype, device, tolerance(dtype, 8), f"mlp grad {name}")


# --- rng ---------------------------------------------------------------------------------

@case("rng", "rng", (ANY,), ("manual_seed", "generator", "split"))
def _rng(device, dtype, variant):
    if variant == "manual_seed":
        ember.manual_seed(7)
        a, n = ember.rand(100, device=device), ember.randn(100, device=device)
        ember.manual_seed(7)
        np.testing.assert_array_equal(read(ember.rand(100, device=device)), read(a))
        np.testing.assert_array_equal(read(ember.randn(100, device=device)), read(n))
    elif variant == "generator":               # a device generator, independent of the global
        g = ember.Generator(ember.device(device).type).manual_seed(3)
        a = read(ember.rand(50, generator=g, device=device))
        ember.manual_seed(0)
        g.manual_seed(3)
        np.testing.assert_array_equal(read(ember.rand(50, generator=g, device=device)), a)
    else:                                      # counter-based: two draws are one split
        g = ember.Generator(ember.device(device).type).manual_seed(11)
        whole = read(ember.rand(10, generator=g, device=device))
        g.manual_seed(11)
        parts = [read(ember.rand(n, generator=g, device=device)) for n in (4, 6)]
        np.testing.assert_array_equal(np.concatenate(parts), whole)
