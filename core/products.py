"""Products built on matmul: mm, bmm, mv, dot, vdot, inner, outer/ger, kron, tensordot,
einsum; the forms that add a scaled input (addmm, addmv, addbmm, baddbmm, addr); cross and
trace.  Composites of primitive ops, so every device has them."""
import math
import warnings

from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._errors import _tensor_arg
from ember.core._results import into_out
from ember.core._tensor import TensorBase
from ember.core.elementwise import _out
from ember.core.function import _recording, zero_derivative
from ember.core.shapes import stack

__all__ = ["addbmm", "addmm", "addmv", "addr", "baddbmm", "bmm", "cross", "dot", "einsum", "ger",
           "inner", "kron", "mm", "mv", "outer", "tensordot", "trace", "vdot"]


def _ndim(t, n, op, arg):
    if _tensor_arg(t, op, arg).dim() != n:
        raise RuntimeError(f"{arg} must be a {n}D tensor")


def _broadcast(a, b):
    """The broadcast of shapes a and b (right-aligned; RuntimeError if incompatible)."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and 1 not in (x, y):
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def _scaled_sum(op, input, product, beta, alpha, out):
    """beta * input + alpha * product, input broadcast to product's shape.  Beta 0 ignores
    input's values (NaN and inf included) yet keeps it in the graph with a zero gradient;
    an integral result truncates beta and alpha (PyTorch converts them to its dtype)."""
    _tensor_arg(input, op, "input")
    shape = product.shape
    # a bias row (a Linear's): broadcast without the general check (which compares every
    # pair of sizes: under symbolic shapes each comparison would add a guard)
    if not (input.dim() == 1 and len(shape) == 2 and input.shape[0] == shape[1]) and \
            _broadcast(input.shape, shape) != tuple(shape):
        raise RuntimeError(f"{op}: the shape of input {list(input.shape)} cannot be broadcast "
                           f"to the result shape {list(shape)}")
    dt = input.dtype if input.dtype == product.dtype else _T.result_type(input, product)
    if not (dt.is_floating_point or dt.is_complex):
        for name, v in (("beta", beta), ("alpha", alpha)):
            if op == "addr" and isinstance(v, float):       # addr refuses, the rest truncate
                raise RuntimeError(f"For integral input tensors, argument {name} must not be "
                                   "a floating point number.")
        beta, alpha = int(beta), int(alpha)
    r = product if alpha == 1 else product * alpha
    if beta != 0:
        addend = input if beta == 1 else input * beta
        if addend.dtype == r.dtype and _T._plain_operands(r, addend):
            r.add_(addend)          # r is this op's own buffer: no second one, one pass less
        else:
            r = r + addend
    elif _recording((input,)):
        r = r * zero_derivative(op, _T.ones_like, input)    # 1, exactly: -0.0 and NaN kept
    return r if out is None else _T._result_out(r, out, op)


@composite("addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat1 @ mat2)."""
    _ndim(mat1, 2, "addmm", "mat1")
    _ndim(mat2, 2, "addmm", "mat2")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    if mat1.dtype.itemsize == 2 and mat1.is_floating_point() and (beta != 0 or alpha != 1):
        # float16/bfloat16: accumulate and combine in float32, round once (as PyTorch's gemm)
        result = _scaled_sum("addmm", input.float(), _T.matmul(mat1.float(), mat2.float()),
                             beta, alpha, None).to(mat1.dtype)
        return result if out is None else _T._result_out(result, out, "addmm")
    return _scaled_sum("addmm", input, _T.matmul(mat1, mat2), beta, alpha, out)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat @ vec)."""
    _ndim(mat, 2, "addmv", "mat")
    _ndim(vec, 1, "addmv", "vec")
    if mat.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({mat.shape[0]}), mat ({mat.shape[0]}x"
                           f"{mat.shape[1]}), vec ({vec.shape[0]})")
    return _scaled_sum("addmv", input, _T.matmul(mat, vec), beta, alpha, out)


def _check_batches(op, batch1, batch2):
    _ndim(batch1, 3, op, "batch1")
    _ndim(batch2, 3, op, "batch2")
    if batch1.shape[0] != batch2.shape[0] or batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch1.shape[0]}, {batch1.shape[2]}] but got: "
                           f"[{batch2.shape[0]}, {batch2.shape[1]}].")


@composite("baddbmm")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (batch1 @ batch2), batch by batch."""
    _check_batches("baddbmm", batch1, batch2)
    return _scaled_sum("baddbmm", input, _T.matmul(batch1, batch2), beta, alpha, out)


@composite("addbmm")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * sum over b of batch1[b] @ batch2[b]: one matmul with the batch
    folded into the contracted dim."""
    _check_batches("addbmm", batch1, batch2)
    b, n, m = batch1.shape
    p = batch2.shape[2]
    left = batch1.permute(1, 0, 2).reshape(n, b * m)
    product = _T.matmul(left, batch2.reshape(b * m, p))
    return _scaled_sum("addbmm", input, product, beta, alpha, out)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2)."""
    _tensor_arg(vec1, "addr", "vec1")
    _tensor_arg(vec2, "addr", "vec2")
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D"
                           if vec1.dim() != 1 else
                           f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    return _scaled_sum("addr", input, outer(vec1, vec2), beta, alpha, out)


def cross(input, other, dim=None, *, out=None, axis=None):
    """The cross product of 3-vectors along ``dim`` (inputs broadcast); dim=None takes the
    first dim of size 3, with PyTorch's deprecation warning."""
    if axis is not None:                             # NumPy's name
        dim = _T._numpy_names("cross", dim, None, axis, None, None)[0]
    _tensor_arg(input, "cross", "input")
    _tensor_arg(other, "cross", "other")
    shape = _broadcast(input.shape, other.shape)
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated. Please "
                      "either pass the dim explicitly or simply use torch.linalg.cross.",
                      UserWarning, stacklevel=2)
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    d = _T._wrap_dim(dim, len(shape))
    a, b = input.expand(shape), other.expand(shape)
    if a.shape[d] != 3 or b.shape[d] != 3:
        sa = input.shape[d - len(shape) + input.dim()] if d >= len(shape) - input.dim() else 1
        sb = other.shape[d - len(shape) + other.dim()] if d >= len(shape) - other.dim() else 1
        raise RuntimeError(f"linalg.cross: inputs dimension {d} must have length 3. Got {sa} "
                           f"and {sb}")
    a0, a1, a2 = (a.select(d, i) for i in range(3))
    b0, b1, b2 = (b.select(d, i) for i in range(3))
    r = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)
    return r if out is None else _T._result_out(r, out, "cross")


# --- products of vectors and matrices ---------------------------------------------------

def outer(input, vec2, *, out=None):
    """The outer product of two 1-D tensors."""
    _tensor_arg(input, "outer")
    _tensor_arg(vec2, "outer", "vec2")
    if input.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"outer: expected 1D tensors, got {input.dim()}D and {vec2.dim()}D")
    return into_out("outer", input.unsqueeze(1) * vec2.unsqueeze(0), out, input, vec2)


ger = outer


def _dims(op, *pairs):
    for t, n, arg in pairs:
        _tensor_arg(t, op, arg)
        if t.dim() != n:
            raise RuntimeError(f"{arg} must be a {n}D tensor" if op != "dot" else
                               f"1D tensors expected, but got {t.dim()}D and {n}D tensors")


@composite("dot")
def dot(input, tensor, *, out=None):
    """The inner product of two 1-D tensors of the same size."""
    _dims("dot", (input, 1, "input"), (tensor, 1, "tensor"))
    return into_out("dot", _T.matmul(input, tensor), out, input, tensor)


@composite("vdot")
def vdot(input, other, *, out=None):
    """The dot product of two 1-D tensors, the first conjugated: sum(conj(input) * other)."""
    a, b = _tensor_arg(input, "vdot"), _tensor_arg(other, "vdot", "other")
    if a.dim() != 1 or b.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.dim()}D and {b.dim()}D tensors")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected both vectors to have same dtype, but found "
                           f"{_T._st_name(a.dtype)} and {_T._st_name(b.dtype)}")
    if a.shape != b.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
                           f"[{b.shape[0]}] to have the same number of elements, but got "
                           f"{a.shape[0]} and {b.shape[0]} elements respectively")
    return _out(_T.matmul(a.conj() if a.dtype.is_complex else a, b), out)


def inner(input, other, *, out=None):
    """Sum over the last dims of both (a product when either is 0-d)."""
    a, b = _tensor_arg(input, "inner"), _tensor_arg(other, "inner", "other")
    if a.dim() == 0 or b.dim() == 0:
        return _out(a * b, out)
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(a.shape)} and {list(b.shape)}")
    return _out(tensordot(a, b, ([a.dim() - 1], [b.dim() - 1])), out)


@composite("mm")
def mm(input, mat2, *, out=None):
    """Matrix product of two 2-D tensors."""
    _dims("mm", (input, 2, "self"), (mat2, 2, "mat2"))
    return _T.matmul(input, mat2, out=out)


@composite("bmm")
def bmm(input, mat2, *, out=None):
    """Batched matrix product of two 3-D tensors with the same batch size."""
    _dims("bmm", (input, 3, "batch1"), (mat2, 3, "batch2"))
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: "
                           f"[{mat2.shape[0]}, {mat2.shape[1]}].")
    return _T.matmul(input, mat2, out=out)


@composite("mv")
def mv(input, vec, *, out=None):
    """Matrix-vector product."""
    _dims("mv", (input, 2, "self"), (vec, 1, "vec"))
    return into_out("mv", _T.matmul(input, vec), out, input, vec)


def kron(input, other, *, out=None):
    """The Kronecker product: every element of input times a block of other."""
    a, b = _tensor_arg(input, "kron"), _tensor_arg(other, "kron", "other")
    nd = max(a.dim(), b.dim())
    sa = (1,) * (nd - a.dim()) + tuple(a.shape)
    sb = (1,) * (nd - b.dim()) + tuple(b.shape)
    ia = sum(((s, 1) for s in sa), ())                 # a's dims interleaved with ones
    ib = sum(((1, s) for s in sb), ())
    r = a.reshape(ia) * b.reshape(ib)
    return _out(r.reshape(tuple(x * y for x, y in zip(sa, sb))), out)


def tensordot(a, b, dims=2, out=None):
    """Sum over the last ``dims`` dims of a and the first of b, or over the dim lists
    ``dims = (dims_a, dims_b)``."""
    _tensor_arg(a, "tensordot", "a")
    _tensor_arg(b, "tensordot", "b")
    if isinstance(dims, TensorBase):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got "
                               f"dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
    da = [d % max(a.dim(), 1) for d in da]
    db = [d % max(b.dim(), 1) for d in db]
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[x]} in dim {x} and second has size {b.shape[y]} in "
                               f"dim {y}")
    free_a = [d for d in range(a.dim()) if d not in da]
    free_b = [d for d in range(b.dim()) if d not in db]
    k = math.prod(a.shape[d] for d in da)
    left = a.permute(free_a + da).reshape(-1, k)
    right = b.permute(db + free_b).reshape(k, -1)
    shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    return _out(_T.matmul(left, right).reshape(shape), out)


@composite("trace")
def trace(input):
    """Sum of the main diagonal of a 2-D tensor."""
    if _tensor_arg(input, "trace").dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    return input.diagonal().sum()


# --- einsum ----------------------------------------------------------------------------

def _parse(equation, operands):
    """(input label lists, output label list); '...' becomes the labels (".", k), k counted
    from the right so that ellipsis dims broadcast right-aligned."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError(f"einsum(): {'more' if len(operands) > len(terms) else 'fewer'} "
                           f"operands were provided than specified in the equation")
    inputs, n_ell = [], 0
    for i, (term, t) in enumerate(zip(terms, operands)):
        head, ell, tail = term.partition("...")
        for c in head + tail:
            if not c.isalpha():
                raise RuntimeError(f"einsum(): invalid subscript given at index "
                                   f"{lhs.find(c)} in the equation string, subscripts must "
                                   f"be in [a-zA-Z]")
        k = t.dim() - len(head) - len(tail)
        if (k != 0 and not ell) or k < 0:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(head) + len(tail)}) does not match the number of "
                               f"dimensions ({t.dim()}) for operand {i}"
                               f"{'' if ell else ' and no ellipsis was given'}")
        n_ell = max(n_ell, k)
        inputs.append(list(head) + [(".", j) for j in range(k - 1, -1, -1)] + list(tail))
    ellipsis = [(".", j) for j in range(n_ell - 1, -1, -1)]
    if arrow:
        head, ell, tail = rhs.partition("...")
        out = list(head) + (ellipsis if ell else []) + list(tail)
        seen = {x for labels in inputs for x in labels}
        for c in head + tail:
            if c not in seen:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   f"equation for any input operand")
            if (head + tail).count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once "
                                   f"in the output")
    else:
        counts = {}
        for labels in inputs:
            for x in labels:
                if isinstance(x, str):
                    counts[x] = counts.get(x, 0) + 1
        out = ellipsis + sorted(c for c, n in counts.items() if n == 1)
    return inputs, out


def _take_diagonals(t, labels):
    """Repeated labels within one operand (``ii``): their diagonal, once."""
    labels, i = list(labels), 0
    while i < len(labels):
        if labels[i] in labels[i + 1:]:
            j = labels.index(labels[i], i + 1)
            t = t.diagonal(0, i, j).movedim(-1, i)
            del labels[j]
        else:
            i += 1
    return t, labels


def _sum_out(t, labels, keep):
    dims = [i for i, x in enumerate(labels) if x not in keep]
    if dims:
        t = t.sum(dims)
        labels = [x for x in labels if x in keep]
    return t, labels


def _contract(a, la, b, lb, keep, sizes):
    """The pair (a, b) as one batched matmul: batch = labels in both and kept, k = labels
    in both and summed, m/n = labels of a/b alone."""
    batch = [x for x in la if x in lb and x in keep]
    ks = [x for x in la if x in lb and x not in keep]
    ms = [x for x in la if x not in lb]
    ns = [x for x in lb if x not in la]

    def arrange(t, labels, order):
        t = t.permute([labels.index(x) for x in order])
        return t.expand([sizes[x] for x in order])

    def prod(xs):
        n = 1
        for x in xs:
            n *= sizes[x]
        return n

    bsz, m, k, n = prod(batch), prod(ms), prod(ks), prod(ns)
    left = arrange(a, la, batch + ms + ks).reshape(bsz, m, k)
    right = arrange(b, lb, batch + ks + ns).reshape(bsz, k, n)
    # nothing summed: an outer product, which (unlike matmul) every dtype has, bool too
    r = left * right if not ks else _T.matmul(left, right)
    r = r.reshape([sizes[x] for x in batch + ms + ns])
    return r, batch + ms + ns


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist_equation(args):
    """(equation, operands) of einsum's sublist form ``einsum(op1, sub1, op2, sub2, ...,
    [sub_out])``: subscripts are ints in [0, 52) (letters) or Ellipsis ('...')."""
    def labels(sub):
        out = []
        for x in sub:
            if x is Ellipsis:
                out.append("...")
            elif isinstance(x, int) and 0 <= x < len(_LETTERS):
                out.append(_LETTERS[x])
            else:
                raise ValueError(f"einsum(): expected subscript to be within the range "
                                 f"[0, 52), but got {x}")
        return "".join(out)
    operands, subs = args[0::2], args[1::2]
    output = None
    if len(args) % 2:                           # a trailing output sublist
        operands, output = args[0:-1:2], args[-1]
    equation = ",".join(labels(s) for s in subs)
    return (equation if output is None else f"{equation}->{labels(output)}"), operands


def einsum(equation, *operands):
    """Einstein summation over ``operands`` (also given as one list): 'ij,jk->ik', implicit
    output (the labels seen once, sorted), '...' for broadcast dims, repeated labels for
    diagonals; or the sublist form ``einsum(op1, [0, 1], op2, [1, 2], [0, 2])``.  Operands
    are contracted left to right, each pair as one batched matmul."""
    if isinstance(equation, TensorBase):      # the sublist form: op, [0, 1], op, [1, 2], ...
        equation, operands = _sublist_equation((equation,) + operands)
    elif len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' must be str, not "
                        f"{type(equation).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    for i, t in enumerate(operands):
        _tensor_arg(t, "einsum", f"operands[{i}]")
    inputs, out = _parse(equation, operands)
    sizes = {}
    for i, (t, labels) in enumerate(zip(operands, inputs)):
        for x, s in zip(labels, t.shape):
            prev = sizes.get(x, s)
            if s != 1 and prev != 1 and s != prev:
                name = x if isinstance(x, str) else "..."
                raise RuntimeError(f"einsum(): subscript {name} has size {s} for operand {i} "
                                   f"which does not broadcast with previously seen size "
                                   f"{prev}")
            sizes[x] = prev if s == 1 else s
    terms = [_take_diagonals(t, labels) for t, labels in zip(operands, inputs)]
    later = [set() for _ in terms]
    for i in range(len(terms) - 2, -1, -1):
        later[i] = later[i + 1] | set(terms[i + 1][1])
    r, lr = terms[0]
    r, lr = _sum_out(r, lr, set(out) | later[0])
    for i in range(1, len(terms)):
        b, lb = terms[i]
        keep = set(out) | later[i]
        b, lb = _sum_out(b, lb, keep | set(lr))
        r, lr = _contract(r, lr, b, lb, keep, sizes)
    r = r.permute([lr.index(x) for x in out]) if lr else r
    return r.expand([sizes[x] for x in out]).contiguous() if out else r.reshape(())
