"""ember.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp.

vjp, vhp and the reverse-mode Jacobian use autograd.grad; jvp runs forward-mode AD (a
forward AD level of its own), hvp forward-over-reverse (the tangent of a gradient);
``vectorize=True`` computes Jacobians with ember.func's vmap (jacrev, or jacfwd for
``strategy="forward-mode"``)."""
from ember.autograd import grad as _grad
from ember.autograd.grad_mode import enable_grad
from ember.core import _tensor as _T
from ember.core._tensor import TensorBase
from ember.core.shapes import stack

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _tup(x):
    return (x, False) if isinstance(x, tuple) else ((x,), True) if isinstance(x, TensorBase) \
        else (tuple(x), False)


def _inputs(x, api):
    """_tup of a function's ``inputs``: a tensor or a tuple of them (a list is refused with
    PyTorch's TypeError)."""
    if not isinstance(x, (tuple, TensorBase)):
        raise TypeError(f"The inputs given to {api} must be either a Tensor or a tuple of "
                        f"Tensors but the given inputs has type {type(x)}.")
    return _tup(x)


def _refuse_strict_vectorized(strict, vectorize):
    if strict and vectorize:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           "`vectorized=True` are not supported together. Please either set "
                           "`strict=False` or `vectorize=False`.")


def _prep(inputs, create_graph):
    return tuple(x if create_graph and x.requires_grad else x.detach().requires_grad_(True)
                 for x in inputs)


def _grads(outputs, inputs, grad_outputs, create_graph, strict):
    # outputs that do not depend on anything differentiable contribute nothing (PyTorch's
    # functional API gives zeros for them, where autograd.grad would refuse them)
    outs = tuple(outputs) if isinstance(outputs, (tuple, list)) else (outputs,)
    vs = (tuple(grad_outputs) if isinstance(grad_outputs, (tuple, list)) else
          (grad_outputs,) * len(outs))
    live = [(o, v) for o, v in zip(outs, vs) if o.requires_grad]
    if strict and len(live) < len(outs):
        i = next(i for i, o in enumerate(outs) if not o.requires_grad)
        raise RuntimeError(f"Output {i} of the user-provided function does not require "
                           f"gradients. The outputs must be computed in a differentiable "
                           f"manner from the input when running in strict mode.")
    gs = _grad([o for o, _ in live], inputs, [v for _, v in live], retain_graph=True,
               create_graph=create_graph, allow_unused=True) if live else \
        (None,) * len(inputs)
    out = []
    for i, (x, g) in enumerate(zip(inputs, gs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode.")
            g = _T.zeros_like(x)
        out.append(g if create_graph else _detached(g))
    return tuple(out)


def _detached(g):
    """g without its history, with its tangents (an enclosing forward AD level's)."""
    from ember.core import _autograd as _ag
    d = g.detach()
    _ag._fw_copy_tangents(g, d)
    return d


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J)."""
    inputs, single = _inputs(inputs, "vjp")
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


def _tangents(v, inputs, name):
    if v is None:
        if any(x.numel() != 1 for x in inputs):
            raise RuntimeError("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single "
                               "element.")
        return tuple(_T.ones_like(x) for x in inputs)
    vs, _ = _tup(v)
    if len(vs) != len(inputs):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(inputs)} but got "
                           f"{len(vs)}." if len(inputs) > 1 else
                           "The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(vs, inputs)):
        if a.shape != b.shape:
            raise RuntimeError(f"{f'Entry {i} in ' if len(inputs) > 1 else ''}v has invalid "
                               f"size: should be {b.shape} but got {a.shape}.")
    return vs


def _dual_run(func, inputs, tangents, fn):
    """fn(level, duals) inside a forward AD level of its own."""
    from ember.autograd.forward_ad import _make_dual
    from ember.core import _autograd as _ag
    level = _ag._new_level(True)
    try:
        return fn(level, tuple(_make_dual(x, t, level) for x, t in zip(inputs, tangents)))
    finally:
        _ag._end_level(level)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), by forward-mode AD."""
    from ember.autograd.forward_ad import _unpack_dual
    inputs, single = _inputs(inputs, "jvp")
    vs = _tangents(v, inputs, "jvp")

    def run(level, duals):
        with enable_grad():
            ins = duals if create_graph else tuple(d.detach() for d in duals)
            if not create_graph:
                from ember.core import _autograd as _ag
                for d, x in zip(ins, duals):
                    _ag._fw_copy_tangents(x, d)
            outs, out_single = _tup(func(*ins))
            res, jv = [], []
            for i, o in enumerate(outs):
                p, t = _unpack_dual(o, level)
                if t is None:
                    if strict:
                        raise RuntimeError(f"The output of the user-provided function is "
                                           f"independent of input {i}. This is not allowed "
                                           f"in strict mode.")
                    t = _T.zeros_like(p)
                res.append(p if create_graph else p.detach())
                jv.append(t if create_graph else t.detach())
        return (res[0] if out_single else tuple(res)), (jv[0] if out_single else tuple(jv))
    return _dual_run(func, inputs, vs, run)


def _vectorized_jacobian(func, inputs, single, strategy, create_graph):
    """jacobian(vectorize=True): ember.func's jacrev (or jacfwd), one vmap over the basis."""
    from ember.func import jacfwd, jacrev
    argnums = 0 if single else tuple(range(len(inputs)))
    jac_fn = (jacfwd if strategy == "forward-mode" else jacrev)(func, argnums)
    xs = tuple(x if create_graph else x.detach() for x in inputs)
    with enable_grad():
        j = jac_fn(*xs)
    if create_graph:
        return j
    if isinstance(j, TensorBase):
        return j.detach()
    return tuple(x.detach() if isinstance(x, TensorBase)
                 else tuple(y.detach() for y in x) for x in j)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of func at inputs: out.shape + in.shape per (output, input) pair;
    ``vectorize`` batches the vjps (or, with ``strategy="forward-mode"``, the jvps) with
    vmap."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, '
                             '"forward-mode" tends to be more performant. Otherwise, prefer '
                             'to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` '
                                      'and `strategy="forward-mode"` are not supported '
                                      'together (yet). Please either set `create_graph=False` '
                                      'or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or "
                                      "forward-over-reverse Hessian isonly implemented for "
                                      "`vectorize=True`.")
    inputs, single = _inputs(inputs, "jacobian")
    _refuse_strict_vectorized(strict, vectorize)
    if vectorize:
        return _vectorized_jacobian(func, inputs, single, strategy, create_graph)
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
    inputs, single = _inputs(inputs, "hessian")
    _refuse_strict_vectorized(strict, vectorize)

    def gradient(*xs):
        out = func(*xs)
        if not isinstance(out, TensorBase) or out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor "
                               "with a single element")
        return _grads((out.reshape(()),), xs, None, True, strict)

    if vectorize:
        from ember.func import jacfwd, jacrev
        argnums = 0 if single else tuple(range(len(inputs)))
        inner = jacrev(lambda *xs: func(*xs).reshape(()), argnums)
        outer = jacfwd if outer_jacobian_strategy == "forward-mode" else jacrev
        with enable_grad():
            h = outer(inner, argnums)(*(x.detach() for x in inputs))
        return h
    if outer_jacobian_strategy == "forward-mode":
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    h = jacobian(gradient, inputs, create_graph=create_graph, strict=strict)
    return h[0][0] if single else h


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H)."""
    inputs, single = _inputs(inputs, "vhp")
    with enable_grad():
        xs = _prep(inputs, True)
        out = func(*xs)
        g = _grads((out,), xs, None, True, strict)
        vs, _ = _tup(v)
        r = _grads(g, xs, vs, create_graph, strict)
    out = out if create_graph else out.detach()
    return out, (r[0] if single else r)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) by forward-over-reverse: the tangent (along v) of the gradient."""
    from ember.autograd.forward_ad import _unpack_dual
    inputs, single = _inputs(inputs, "hvp")
    vs = _tangents(v, inputs, "hvp")

    def run(level, duals):
        with enable_grad():
            xs = tuple(d.requires_grad_(True) if not d.requires_grad else d for d in duals)
            out = func(*xs)
            if not isinstance(out, TensorBase) or out.numel() != 1:
                raise RuntimeError("The Tensor returned by the function given to hvp should "
                                   "contain a single element")
            g = _grads((out.reshape(()),), xs, None, create_graph, strict)
            hv = []
            for i, gi in enumerate(g):
                t = _unpack_dual(gi, level).tangent
                if t is None:
                    if strict:
                        raise RuntimeError(f"The hessian of the user-provided function is "
                                           f"independent of entry {i} in the grad_jacobian. "
                                           f"This is not allowed in strict mode.")
                    t = _T.zeros_like(gi)
                hv.append(t if create_graph else t.detach())
        value = _unpack_dual(out, level).primal
        return (value if create_graph else value.detach()), (hv[0] if single else tuple(hv))
    return _dual_run(func, tuple(x.detach() if not create_graph else x for x in inputs), vs,
                     run)
