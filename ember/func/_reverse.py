"""Reverse-mode transforms: grad, grad_and_value, vjp, jacrev.

They run on ember's autograd engine: the differentiated inputs become aliases that
require grad (ember.func._args.diff_alias), the function runs with grad mode on, and
``autograd.grad`` takes the gradients.  Nesting works as functorch's levels do: an inner
transform's inputs alias the outer ones' (so its gradients are recorded whenever the graph
reaches a tensor that an enclosing differentiation tracks), inside vmap the graph is
recorded on the wrappers with per-sample shapes (the Batched key sits below Autograd), and
tangents of an enclosing jvp flow through the backward formulas."""
import functools

from ember.core import _tensor as _T
from ember.core._tensor import TensorBase
from ember.core.grad_mode import enable_grad
from ember.core.gradients import grad as _autograd_grad
from ember.func._args import (
    check_aux,
    check_outputs,
    diff_alias,
    keep,
    outer_tracked,
    replace_args,
    slice_argnums,
    transform_level,
)
from ember.func._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["grad", "grad_and_value", "jacrev", "vjp"]


def _gradients(outputs, inputs, cotangents, create_graph):
    """autograd.grad with zeros for inputs the outputs do not depend on (outputs that do
    not require grad at all - a constant, a detached or integer result - contribute
    nothing, as in torch.func)."""
    live = [i for i, o in enumerate(outputs) if o.requires_grad]
    gs = [None] * len(inputs)
    if live:
        cts = None if cotangents is None else tuple(cotangents[i] for i in live)
        gs = _autograd_grad(tuple(outputs[i] for i in live), inputs, cts, retain_graph=True,
                            create_graph=create_graph, allow_unused=True)
    return [_T.zeros_like(x) if g is None else g for x, g in zip(inputs, gs)]


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (gradient of ``func``'s scalar output with respect to the
    inputs ``argnums`` (int or tuple; pytrees of tensors), that output) - with ``has_aux``,
    ((gradient, (output, aux)))."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with enable_grad(), transform_level(args, kwargs):
            diff, argnums_ = slice_argnums(args, argnums)
            diff = tree_map(diff_alias, diff)
            output = func(*replace_args(args, diff, argnums_), **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should "
                                       "be a tuple: (output, aux) if has_aux is True")
                output, aux = output
                check_aux(aux)
            if not isinstance(output, TensorBase):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {output.dim()} dims. Maybe "
                                   f"you wanted to use the vjp or jacrev APIs instead?")
            flat, spec = tree_flatten(diff)
            tracked = outer_tracked((output,), tuple(flat))
            grads = _gradients((output,), tuple(flat), None, tracked)
        grads = tree_unflatten([keep(g, tracked) for g in grads], spec)
        value = keep(output, tracked)
        if has_aux:
            return grads, (value, tree_map(lambda x: keep(x, tracked), aux))
        return grads, value
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of ``func`` (which returns a scalar tensor) with respect to its inputs
    ``argnums``; with ``has_aux``, (gradient, aux)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): ``vjp_fn(cotangents)`` gives the vector-Jacobian
    products with respect to every primal (a tuple, the primals' structure)."""
    return _vjp(func, primals, has_aux, primals)


def _vjp(func, primals, has_aux, inputs):
    """vjp, where ``inputs`` are the tensors func may write in place (its arguments: the
    primals, and what a wrapping transform passes it by closure)."""
    with enable_grad(), transform_level(inputs):
        diff = tree_map(diff_alias, primals)
        output = func(*diff)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            output, aux = output
            check_aux(aux)
        flat_out, out_spec = tree_flatten(output)
        check_outputs(flat_out, "vjp(f, *primals)")
        for o in flat_out:
            if not (o.dtype.is_floating_point or o.dtype.is_complex):
                raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or "
                                   f"complex Tensors, got Tensor with dtype {o.dtype}")
        flat_in, in_spec = tree_flatten(diff)
        tracked = outer_tracked(tuple(flat_out), tuple(flat_in))

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{ct_spec}, primal output: {out_spec}")
        with enable_grad():
            gs = _gradients(tuple(flat_out), tuple(flat_in), tuple(flat_ct),
                            tracked if create_graph is None else create_graph)
        return tree_unflatten([keep(g, tracked or bool(create_graph)) for g in gs], in_spec)

    value = tree_unflatten([keep(o, tracked) for o in flat_out], out_spec)
    if has_aux:
        return value, vjp_fn, tree_map(lambda x: keep(x, tracked), aux)
    return value, vjp_fn


def _basis(flat, dtype_of):
    """Rows of the identity over all of ``flat``'s elements, cut per tensor: the i-th piece
    is [total, *flat[i].shape]."""
    sizes = [t.numel() for t in flat]
    total = sum(sizes)
    ref = dtype_of
    eye = _T.zeros(total, total, dtype=ref.dtype, device=ref.device)
    eye.diagonal().fill_(1)
    pieces, start = [], 0
    for t, n in zip(flat, sizes):
        pieces.append(eye[:, start:start + n].reshape((total,) + tuple(t.shape)))
        start += n
    return pieces, sizes


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` with respect to its inputs ``argnums``, by reverse mode: one
    vjp per output element, batched with vmap (``chunk_size`` at a time)."""
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    from ember.func._vmap import vmap

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        diff, argnums_ = slice_argnums(args, argnums)
        single_arg = isinstance(argnums_, int)

        def f(*d):
            return func(*replace_args(args, d[0] if single_arg else d, argnums_), **kwargs)

        res = _vjp(f, (diff,) if single_arg else diff, has_aux, (args, kwargs))
        output, vjp_fn = res[0], res[1]
        flat_out, out_spec = tree_flatten(output)
        check_outputs(flat_out, "jacrev(f, ...)(*args)")
        basis, sizes = _basis(flat_out, flat_out[0])
        rows = vmap(vjp_fn, chunk_size=chunk_size)(tree_unflatten(basis, out_spec))
        # rows: the primals' structure, each [total outputs, *primal.shape]
        flat_rows, in_spec = tree_flatten(rows)
        per_output = []
        for o, n, start in zip(flat_out, sizes, _starts(sizes)):
            jac = [r[start:start + n].reshape(tuple(o.shape) + tuple(r.shape[1:]))
                   for r in flat_rows]
            j = tree_unflatten(jac, in_spec)
            per_output.append(j[0] if single_arg else j)
        jacobian = tree_unflatten(per_output, out_spec)
        if has_aux:
            return jacobian, res[2]
        return jacobian
    return wrapper


def _starts(sizes):
    out, s = [], 0
    for n in sizes:
        out.append(s)
        s += n
    return out
