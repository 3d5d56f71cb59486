"""ember.func: PyTorch's composable function transforms (torch.func).

vmap maps a function over a batch dim (ember.func._vmap); grad, grad_and_value, vjp and
jacrev differentiate in reverse mode (ember.func._reverse), jvp, jacfwd, linearize and
hessian in forward mode (ember.func._forward); functional_call and stack_module_state make
modules functions of their state (ember.func._module).  They compose in any order:
vmap(grad(f)) gives per-sample gradients, jacfwd(jacrev(f)) Hessians."""
from ember.func._forward import hessian as hessian
from ember.func._forward import jacfwd as jacfwd
from ember.func._forward import jvp as jvp
from ember.func._forward import linearize as linearize
from ember.func._module import functional_call as functional_call
from ember.func._module import replace_all_batch_norm_modules_ as replace_all_batch_norm_modules_
from ember.func._module import stack_module_state as stack_module_state
from ember.func._reverse import grad as grad
from ember.func._reverse import grad_and_value as grad_and_value
from ember.func._reverse import jacrev as jacrev
from ember.func._reverse import vjp as vjp
from ember.func._vmap import vmap as vmap

__all__ = ["debug_unwrap", "functional_call", "functionalize", "grad", "grad_and_value",
           "hessian", "jacfwd", "jacrev", "jvp", "linearize", "replace_all_batch_norm_modules_",
           "stack_module_state", "vjp", "vmap"]


def debug_unwrap(tensor, *, recurse=True):
    """The tensor under vmap's wrapper (all levels with ``recurse``), for a debugger: using
    it inside the transformed function is undefined, as in PyTorch.  Other transforms do
    not wrap tensors in ember, and a plain tensor comes back as it is."""
    from ember.core._errors import _physical
    from ember.core._tensor import TensorBase
    return _physical(tensor, recurse) if isinstance(tensor, TensorBase) else tensor


def functionalize(func, *, remove="mutations"):
    """``func`` itself: ember runs mutations eagerly and every transform handles them, so
    there is nothing to remove (PyTorch's functionalize rewrites them for its tracers)."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument "
                           f"for remove={remove}.")
    import functools

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapped
