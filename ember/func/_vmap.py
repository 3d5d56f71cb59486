"""vmap: map a function over a dim of its inputs, as torch.func.vmap does.

The batched inputs become wrappers of a new vmap level (ember.func._levels): tensors with
one sample's shape carrying the Batched dispatch key, whose kernels (the batching rules,
ember.func._batching) run each op once on the whole batch.  The function sees per-sample
shapes; its outputs are unwrapped with the batch dim at ``out_dims``."""
import functools
import itertools

from ember.core import _tensor as _T
from ember.core._tensor import TensorBase
from ember.func import _levels
from ember.func._batching import install
from ember.func._batching._util import unwrap, wrap
from ember.func._pytree import broadcast_prefix, tree_flatten, tree_unflatten

__all__ = ["vmap"]


def _name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def _check_out_dims(out_dims, func):
    leaves = [out_dims] if isinstance(out_dims, int) else tree_flatten(out_dims)[0]
    for x in leaves:
        if x is not None and not isinstance(x, int):
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must "
                             f"be an int, None or a python collection of ints representing "
                             f"where in the outputs the vmapped dimension should appear.")


def _batch_size(flat_in_dims, flat_args):
    sizes = [a.size(d) for d, a in zip(flat_in_dims, flat_args) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _process_inputs(in_dims, args, func):
    """(batch size, in_dim per flat input, flat inputs, their structure), with PyTorch's
    checks and messages."""
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` "
                         f"to be int or a (potentially nested) tuple matching the structure "
                         f"of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         f"inputs, or you are trying to vmap over a function with no inputs. "
                         f"The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_in_dims = broadcast_prefix(in_dims, spec)
    if flat_in_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                         f"compatible with the structure of `inputs`. in_dims has structure "
                         f"{tree_flatten(in_dims)[1]} but inputs has structure {spec}.")
    for i, (arg, d) in enumerate(zip(flat_args, flat_in_dims)):
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for an input but in_dim must be either an integer dimension or "
                             f"None.")
        if d is not None and not isinstance(arg, TensorBase):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for an input but the input is of type {type(arg)}. We cannot "
                             f"vmap over non-Tensor arguments, please use None as the "
                             f"respective in_dim")
        if d is not None and (d < -arg.dim() or d >= arg.dim()):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for some input, but that input is a Tensor of dimensionality "
                             f"{arg.dim()} so expected in_dim to satisfy -{arg.dim()} <= "
                             f"in_dim < {arg.dim()}.")
        if d is not None and d < 0:
            flat_in_dims[i] = d % arg.dim()
    return _batch_size(flat_in_dims, flat_args), flat_in_dims, flat_args, spec


def _unwrap_output(name, out, v, out_dim):
    if out_dim is None:
        if isinstance(out, TensorBase) and unwrap(out, v.level)[1]:
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                             f"when out_dim is None")
        return out
    if not isinstance(out, TensorBase):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                         f"{type(out)}. Did you mean to set out_dims= to None for output?")
    x, batched = unwrap(out, v.level)
    if not batched:                          # the same for every sample: broadcast
        x = x.unsqueeze(0).expand((v.size,) + tuple(x.shape))
    return x.movedim(0, out_dim) if out_dim != 0 else x


def _out_dims_for(out_dims, outputs, spec, func):
    if isinstance(outputs, TensorBase):
        if isinstance(out_dims, int) or out_dims is None:
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
    else:
        flat = broadcast_prefix(out_dims, spec)
        if flat is not None:
            return flat
    raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is "
                     f"not compatible with the structure of `outputs`. out_dims has structure "
                     f"{tree_flatten(out_dims)[1]} but outputs has structure {spec}.")


def _flat_vmap(func, size, flat_in_dims, flat_args, spec, out_dims, randomness, kwargs):
    v = _levels.enter(size, randomness)
    try:
        batched = [a if d is None else wrap(a.movedim(d, 0) if d else a, v.level)
                   for a, d in zip(flat_args, flat_in_dims)]
        outputs = func(*tree_unflatten(batched, spec), **kwargs)
        flat_out, out_spec = tree_flatten(outputs)
        dims = _out_dims_for(out_dims, outputs, out_spec, func)
        name = _name(func)
        flat = [_unwrap_output(name, o, v, d) for o, d in zip(flat_out, dims)]
    finally:
        _levels.exit(v)
    return tree_unflatten(flat, out_spec)


def _chunked_vmap(func, size, flat_in_dims, flat_args, spec, out_dims, randomness, chunk,
                  kwargs):
    """vmap over chunks of ``chunk`` samples (the last one smaller), outputs joined."""
    from ember import get_rng_state, set_rng_state
    sizes = [chunk] * (size // chunk) + ([size % chunk] if size % chunk else [])
    bounds = list(itertools.accumulate(sizes))
    pieces = [a.tensor_split(bounds[:-1], d) if d is not None else [a] * len(sizes)
              for a, d in zip(flat_args, flat_in_dims)]
    state = get_rng_state() if randomness == "same" else None
    results, out_spec = [], None
    for k, n in enumerate(sizes):
        if state is not None:
            set_rng_state(state)
        out = _flat_vmap(func, n, flat_in_dims, [p[k] for p in pieces], spec, out_dims,
                         randomness, kwargs)
        flat, out_spec = tree_flatten(out)
        results.append(flat)
    dims = broadcast_prefix(out_dims, out_spec) if not isinstance(out_dims, int) \
        else [out_dims] * out_spec.num_leaves
    joined = [_T._cat([r[i] for r in results], d) if d is not None else results[0][i]
              for i, d in enumerate(dims)]
    return tree_unflatten(joined, out_spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over dim ``in_dims`` of its inputs (a pytree prefix of them: an int
    for every tensor, None for inputs shared by every sample), its outputs stacked at
    ``out_dims``; ``randomness`` ('error', 'different' or 'same') says what random ops do;
    ``chunk_size`` runs that many samples at a time (None: all at once)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        install()
        _check_out_dims(out_dims, func)
        size, flat_in_dims, flat_args, spec = _process_inputs(in_dims, args, func)
        if chunk_size is not None and chunk_size < size:
            return _chunked_vmap(func, size, flat_in_dims, flat_args, spec, out_dims,
                                 randomness, chunk_size, kwargs)
        return _flat_vmap(func, size, flat_in_dims, flat_args, spec, out_dims, randomness,
                          kwargs)
    return wrapped
