"""ember.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp built on autograd.grad
(jvp/hvp by the double-vjp trick, as PyTorch's reverse-mode versions do)."""
from ember.autograd import grad as _grad
from ember.autograd.grad_mode import enable_grad
from ember.core import _tensor as _T
from ember.core._tensor import TensorBase
from ember.core.composites import stack

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _tup(x):
    return (x, False) if isinstance(x, tuple) else ((x,), True) if isinstance(x, TensorBase) \
        else (tuple(x), False)


def _prep(inputs, create_graph):
    return tuple(x if create_graph and x.requires_grad else x.detach().requires_grad_(True)
                 for x in inputs)


def _grads(outputs, inputs, grad_outputs, create_graph, strict):
    gs = _grad(outputs, inputs, grad_outputs, retain_graph=True, create_graph=create_graph,
               allow_unused=True)
    out = []
    for i, (x, g) in enumerate(zip(inputs, gs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode.")
            g = _T.zeros_like(x)
        out.append(g if create_graph else g.detach())
    return tuple(out)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J)."""
    inputs, single = _tup(inputs)
    with enable_grad():
        xs = _prep(inputs, create_graph)
        out = func(*xs)
        outs, out_single = _tup(out)
        if v is None:
            if any(o.numel() != 1 for o in outs):
                raise RuntimeError("The vector v can only be None if the user-provided "
                                   "function returns a single Tensor with a single element.")
            v = tuple(_T.ones_like(o) for o in outs)
        vs, _ = _tup(v)
        g = _grads(outs, xs, vs, create_graph, strict)
    res_out = tuple(o if create_graph else o.detach() for o in outs)
    return (res_out[0] if out_single else res_out), (g[0] if single else g)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), by differentiating a vjp with respect to its cotangent."""
    inputs, single = _tup(inputs)
    with enable_grad():
        xs = _prep(inputs, True)
        outs, out_single = _tup(func(*xs))
        us = tuple(_T.zeros_like(o).requires_grad_(True) for o in outs)
        g = _grad(outs, xs, us, create_graph=True, allow_unused=True)
        if v is None:
            if any(x.numel() != 1 for x in inputs):
                raise RuntimeError("The vector v can only be None if the input to the "
                                   "user-provided function is a single Tensor with a single "
                                   "element.")
            v = tuple(_T.ones_like(x) for x in inputs)
        vs, _ = _tup(v)
        pairs = [(gi, vi) for gi, vi in zip(g, vs) if gi is not None]
        jv = _grad(tuple(p[0] for p in pairs), us, tuple(p[1] for p in pairs),
                   create_graph=create_graph, allow_unused=True) if pairs else (None,) * len(us)
    jv = tuple(_T.zeros_like(o) if j is None else (j if create_graph else j.detach())
               for o, j in zip(outs, jv))
    res_out = tuple(o if create_graph else o.detach() for o in outs)
    return (res_out[0] if out_single else res_out), (jv[0] if out_single else jv)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of func at inputs: out.shape + in.shape per (output, input) pair."""
    inputs, single = _tup(inputs)
    with enable_grad():
        xs = _prep(inputs, create_graph)
        outs, out_single = _tup(func(*xs))
        result = []
        for o in outs:
            flat = o.reshape(-1)
            rows = [[] for _ in xs]
            for i in range(flat.numel()):
                g = _grads((flat[i],), xs, None, create_graph, strict)
                for k, gk in enumerate(g):
                    rows[k].append(gk)
            per_in = tuple(
                (stack(r, 0) if r else _T.zeros(0, *x.shape, dtype=x.dtype))
                .reshape(tuple(o.shape) + tuple(x.shape)) for r, x in zip(rows, xs))
            result.append(per_in[0] if single else per_in)
    return result[0] if out_single else tuple(result)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function of inputs."""
    inputs, single = _tup(inputs)

    def gradient(*xs):
        out = func(*xs)
        if not isinstance(out, TensorBase) or out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor "
                               "with a single element")
        return _grads((out.reshape(()),), xs, None, True, strict)

    h = jacobian(gradient, inputs, create_graph=create_graph, strict=strict)
    return h[0][0] if single else h


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H)."""
    inputs, single = _tup(inputs)
    with enable_grad():
        xs = _prep(inputs, True)
        out = func(*xs)
        g = _grads((out,), xs, None, True, strict)
        vs, _ = _tup(v)
        r = _grads(g, xs, vs, create_graph, strict)
    out = out if create_graph else out.detach()
    return out, (r[0] if single else r)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v): equal to vhp for the symmetric Hessian of a scalar function."""
    return vhp(func, inputs, v, create_graph, strict)
