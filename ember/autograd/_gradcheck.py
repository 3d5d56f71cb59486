"""gradcheck / gradgradcheck: analytical gradients against central finite differences."""
import itertools

from ember.core import _tensor as _T
from ember.core._dtype import _dtype_by_name
from ember.core._tensor import TensorBase
from ember.core.elementwise import allclose
from ember.core.shapes import stack

_F64 = _dtype_by_name["float64"]

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """A Jacobian computed by autograd differs from the numerical one."""


def _as_tuple(x):
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def _diff_outputs(func, inputs):
    """func's floating-point tensor outputs (the ones gradcheck differentiates)."""
    return tuple(o for o in _as_tuple(func(*inputs))
                 if isinstance(o, TensorBase) and o.dtype.is_floating_point)


def _realified(func, inputs):
    """(func, inputs) as a map between real tensors: a complex input becomes a float
    (..., 2) leaf that the function sees through view_as_complex, a complex output is seen
    through view_as_real.  The real Jacobian of that map is what PyTorch's conjugate
    convention's gradients must reproduce, so checking it checks complex gradients in
    full (real and imaginary parts of inputs and outputs)."""
    is_complex = [isinstance(x, TensorBase) and x.dtype.is_complex for x in inputs]
    if not any(is_complex) and not any(isinstance(o, TensorBase) and o.dtype.is_complex
                                       for o in _as_tuple(func(*inputs))):
        return func, inputs
    real_inputs = tuple(_T.view_as_real(x.detach()).clone().requires_grad_(x.requires_grad)
                        if c else x for x, c in zip(inputs, is_complex))

    def real_func(*args):
        out = func(*(_T.view_as_complex(a) if c else a for a, c in zip(args, is_complex)))
        real = tuple(_T.view_as_real(o) if isinstance(o, TensorBase) and o.dtype.is_complex
                     else o for o in _as_tuple(out))
        return real if isinstance(out, (tuple, list)) else real[0]
    return real_func, real_inputs


def _numerical(func, inputs, wrt, out_index, eps):
    """Columns d out[out_index] / d inputs[wrt][j] by central differences (float64)."""
    from ember.autograd.grad_mode import no_grad
    x = inputs[wrt]
    data = x.detach()
    cols = []
    with no_grad():
        for idx in itertools.product(*[range(s) for s in x.shape]):
            elem = data[idx] if idx else data
            orig = elem.item()
            elem.fill_(orig + eps)
            plus = _diff_outputs(func, inputs)[out_index].detach().double().reshape(-1).clone()
            elem.fill_(orig - eps)
            minus = _diff_outputs(func, inputs)[out_index].detach().double().reshape(-1).clone()
            elem.fill_(orig)
            cols.append((plus - minus) / (2 * eps))
    n = _diff_outputs(func, inputs)[out_index].numel()
    return stack(cols, 1) if cols else _T.zeros(n, 0, dtype=_F64)


def _analytical(func, inputs, wrt_list, out_index):
    """Rows d out[out_index][i] / d inputs by one backward per output element."""
    from ember.autograd import grad
    out = _diff_outputs(func, inputs)[out_index]
    rows = {w: [] for w in wrt_list}
    if not out.requires_grad:
        return {w: _T.zeros(out.numel(), inputs[w].numel(), dtype=_F64) for w in wrt_list}
    flat = out.reshape(-1)
    for i in range(flat.numel()):
        onehot = _T.zeros_like(out).reshape(-1)
        onehot[i] = 1
        gs = grad(out, [inputs[w] for w in wrt_list], onehot.reshape(out.shape),
                  retain_graph=True, allow_unused=True)
        for w, g in zip(wrt_list, gs):
            rows[w].append(_T.zeros(inputs[w].numel(), dtype=_F64, device=inputs[w].device)
                           if g is None else g.detach().double().reshape(-1))
    return {w: (stack(r, 0) if r else _T.zeros(0, inputs[w].numel(),
                                                   dtype=_F64))
            for w, r in rows.items()}


def _forward(func, inputs, wrt, out_index):
    """Columns d out[out_index] / d inputs[wrt][j] by forward AD: one jvp per element."""
    from ember.autograd import forward_ad as fwAD
    x = inputs[wrt]
    cols = []
    with fwAD.dual_level():
        for j in range(x.numel()):
            basis = _T.zeros(x.numel(), dtype=x.dtype, device=x.device)
            basis[j] = 1
            args = list(inputs)
            args[wrt] = fwAD.make_dual(x.detach(), basis.reshape(x.shape))
            out = _diff_outputs(func, tuple(args))[out_index]
            t = fwAD.unpack_dual(out).tangent
            cols.append(_T.zeros(out.numel(), dtype=_F64, device=out.device) if t is None
                        else t.detach().double().reshape(-1))
    n = _diff_outputs(func, inputs)[out_index].numel()
    return stack(cols, 1) if cols else _T.zeros(n, 0, dtype=_F64)


def _mismatch(kind, o, w, numerical, analytical, raise_exception):
    msg = (f"{kind}Jacobian mismatch for output {o} with respect to input {w},\n"
           f"numerical:{numerical}\nanalytical:{analytical}\n")
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """True if autograd's gradients of ``func`` at ``inputs`` match finite differences
    (use float64 inputs that require grad); otherwise raises GradcheckError (or returns
    False with ``raise_exception=False``).  ``check_forward_ad`` also checks forward-mode
    AD's Jacobian (one jvp per input element); ``check_backward_ad=False`` skips the
    reverse-mode one."""
    inputs = _as_tuple(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, TensorBase) and x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    func, inputs = _realified(func, inputs)
    for i in wrt:
        if inputs[i].dtype.name not in ("float64",):
            import warnings
            warnings.warn(f"Input #{i} requires gradient and is not a double precision "
                          "floating point. This check will likely fail if all the inputs "
                          "are not of double precision floating point.", UserWarning)
    n_out = len(_diff_outputs(func, inputs))
    for o in range(n_out):
        analytical = _analytical(func, inputs, wrt, o) if check_backward_ad else {}
        for w in wrt:
            numerical = _numerical(func, inputs, w, o, eps).cpu()    # Jacobians on the host
            checks = [("", analytical[w])] if check_backward_ad else []
            if check_forward_ad:
                checks.append(("While considering the forward AD: ",
                               _forward(func, inputs, w, o)))
            for kind, a in checks:
                a = a.cpu()
                if a.shape != numerical.shape or not allclose(a, numerical, rtol, atol):
                    return _mismatch(kind, o, w, numerical, a, raise_exception)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the first derivative: second-order gradients against finite
    differences of first-order ones (random ``grad_outputs`` unless given)."""
    from ember.autograd import grad
    from ember.autograd.grad_mode import enable_grad
    inputs = _as_tuple(inputs)
    outputs = _diff_outputs(func, inputs)
    if grad_outputs is None:
        gen = _T.Generator().manual_seed(0)
        grad_outputs = tuple(_T.randn(*o.shape, generator=gen, dtype=o.dtype).to(o.device)
                             .requires_grad_() for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, TensorBase) and x.requires_grad]

    def first_order(*args):
        ins, gos = args[:n_in], args[n_in:]
        with enable_grad():
            outs = _diff_outputs(func, ins)
            gs = grad(outs, [ins[i] for i in wrt], gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
