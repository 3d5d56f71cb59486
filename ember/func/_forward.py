"""Forward-mode transforms: jvp, jacfwd, linearize, and hessian (jacfwd over jacrev).

jvp opens a forward AD level of its own (levels nest: jvp of jvp, jacfwd of jacfwd), makes
the primals dual with the tangents and reads the outputs' tangents; jacfwd is jvp vmapped
over the standard basis of the inputs."""
import functools

from ember.autograd.forward_ad import _make_dual, _unpack_dual
from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core._tensor import TensorBase
from ember.func._args import (
    check_aux,
    check_outputs,
    replace_args,
    slice_argnums,
    transform_level,
)
from ember.func._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["hessian", "jacfwd", "jvp", "linearize"]

_JVP = "jvp(f, primals, tangents)"


def _tensor_tuple(xs, name):
    if not isinstance(xs, tuple):
        raise RuntimeError(f"{_JVP}: Expected {name} to be a tuple. E.g. it should be valid "
                           f"to call f(*{name}).")
    flat, spec = tree_flatten(xs)
    if not flat:
        raise RuntimeError(f"{_JVP}: Expected {name} to contain at least one Tensor.")
    for x in flat:
        if not isinstance(x, TensorBase):
            raise RuntimeError(f"{_JVP}: Expected {name} to only contain Tensors, got "
                               f"{type(x)}")
    return flat, spec


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the Jacobian of func at primals applied to ``tangents``), by forward
    mode; primals and tangents are tuples of the same structure."""
    return _jvp(func, primals, tangents, has_aux, primals)


def _jvp(func, primals, tangents, has_aux, inputs):
    """jvp, where ``inputs`` are the tensors func may write in place (its arguments: the
    primals, and what a wrapping transform passes it by closure)."""
    flat_p, p_spec = _tensor_tuple(primals, "primals")
    if not isinstance(tangents, tuple):
        raise RuntimeError(f"{_JVP}: Expected tangents to be a tuple. E.g. it should be "
                           f"valid to call f(*tangents).")
    flat_t, t_spec = tree_flatten(tangents)
    if t_spec != p_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure {p_spec} and "
                           f"tangents with structure {t_spec}")
    for i, (p, t) in enumerate(zip(flat_p, flat_t)):
        if not isinstance(t, TensorBase):
            raise RuntimeError(f"{_JVP}: Expected tangents to only contain Tensors, got "
                               f"{type(t)}")
        if tuple(t.shape) != tuple(p.shape):
            raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same shape "
                               f"(tangent {i}: {list(t.shape)}, primal: {list(p.shape)})")
    level = _ag._new_level(True)
    try:
        with transform_level(inputs):
            duals = tree_unflatten([_make_dual(p, t, level) for p, t in zip(flat_p, flat_t)],
                                   p_spec)
            out = func(*duals)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(f"{_JVP}: output of function f should be a tuple: "
                                       f"(output, aux) if has_aux is True")
                out, aux = out
                check_aux(aux)
            flat_out, out_spec = tree_flatten(out)
            check_outputs(flat_out, _JVP)
            primals_out, tangents_out = [], []
            for o in flat_out:
                p, t = _unpack_dual(o, level)
                primals_out.append(p)
                tangents_out.append(_T.zeros_like(p) if t is None else t)
            if aux is not None:
                aux = tree_map(lambda x: _unpack_dual(x, level)[0]
                               if isinstance(x, TensorBase) else x, aux)
    finally:
        _ag._end_level(level)
    result = (tree_unflatten(primals_out, out_spec), tree_unflatten(tangents_out, out_spec))
    return result + (aux,) if has_aux else result


def _standard_basis(flat):
    """Per input [total, *shape]: the rows of the identity over every input's elements."""
    sizes = [t.numel() for t in flat]
    total = sum(sizes)
    eye = _T.zeros(total, total, dtype=flat[0].dtype, device=flat[0].device)
    eye.diagonal().fill_(1)
    out, start = [], 0
    for t, n in zip(flat, sizes):
        out.append(eye[:, start:start + n].reshape((total,) + tuple(t.shape)).to(t.dtype))
        start += n
    return out, sizes


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` with respect to its inputs ``argnums``, by forward mode: a
    jvp per input element, batched with vmap (``randomness`` as vmap's)."""
    from ember.func._vmap import vmap

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        diff, argnums_ = slice_argnums(args, argnums)
        single = isinstance(argnums_, int)
        primals = (diff,) if single else diff
        flat_p, p_spec = tree_flatten(primals)
        basis, sizes = _standard_basis(flat_p)

        def push(*flat_tangents):
            def f(*d):
                return func(*replace_args(args, d[0] if single else d, argnums_), **kwargs)
            r = _jvp(f, primals, tree_unflatten(list(flat_tangents), p_spec), has_aux,
                     (args, kwargs))
            return (r[1], r[0]) + ((r[2],) if has_aux else ())

        # the value (and aux) is the same for every tangent: unbatched, or (when it went
        # through a transform that batches shared inputs) the same in every row
        outs = vmap(push, randomness=randomness)(*basis)
        jvp_out = outs[0]
        flat_out, out_spec = tree_flatten(jvp_out)
        per_output = []
        for o in flat_out:              # o: [total, *out.shape] -> out.shape + input.shape
            pieces, start = [], 0
            for p, n in zip(flat_p, sizes):
                piece = o[start:start + n].movedim(0, -1)
                pieces.append(piece.reshape(tuple(o.shape[1:]) + tuple(p.shape)))
                start += n
            j = tree_unflatten(pieces, p_spec)
            per_output.append(j[0] if single else j)
        jacobian = tree_unflatten(per_output, out_spec)
        if has_aux:
            return jacobian, tree_map(lambda a: a[0] if isinstance(a, TensorBase) else a,
                                      outs[2])
        return jacobian
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of ``func`` (a scalar function) with respect to ``argnums``: jacfwd of
    jacrev (forward-over-reverse)."""
    from ember.func._reverse import jacrev
    return jacfwd(jacrev(func, argnums), argnums)


def linearize(func, *primals):
    """(func(*primals), jvp_fn): ``jvp_fn(*tangents)`` is the Jacobian of func at
    ``primals`` applied to ``tangents`` (each call runs the jvp at the saved primals)."""
    flat_p, p_spec = _tensor_tuple(primals, "primals")
    saved = tuple(p.detach() for p in flat_p)
    output = func(*primals)

    def jvp_fn(*tangents):
        flat_t, t_spec = tree_flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(f"Expected the tangents {t_spec} to have the same argspec as "
                               f"the primals {p_spec}")
        for i, (p, t) in enumerate(zip(saved, flat_t)):
            for what, a, b in (("shape", tuple(t.shape), tuple(p.shape)),
                               ("device", t.device, p.device), ("dtype", t.dtype, p.dtype)):
                if a != b:
                    raise RuntimeError(f"linearize: Expected tangent:{i} with {what} {a} in "
                                       f"flattened pytree doesn't match the {what} {b} of the "
                                       f"corresponding primal.")
        return jvp(func, tree_unflatten(list(saved), p_spec), tangents)[1]
    return output, jvp_fn
