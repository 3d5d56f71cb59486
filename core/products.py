"""Products built on matmul: addmm, addmv, addbmm, baddbmm, einsum; and cross and
diag_embed.  Composites of primitive ops, so every device has them."""
import warnings

from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._errors import _tensor_arg
from ember.core.composites import stack

__all__ = ["addbmm", "addmm", "addmv", "baddbmm", "cross", "diag_embed", "einsum"]


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
    """beta * input + alpha * product, input broadcast to product's shape (ignored, NaN
    included, when beta is 0, as PyTorch does)."""
    _tensor_arg(input, op, "input")
    if _broadcast(input.shape, product.shape) != tuple(product.shape):
        raise RuntimeError(f"{op}: the shape of input {list(input.shape)} cannot be broadcast "
                           f"to the result shape {list(product.shape)}")
    r = product if alpha == 1 else product * alpha
    if beta != 0:
        r = r + (input if beta == 1 else input * beta)
    return r if out is None else out.copy_(r)


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
        return result if out is None else out.copy_(result)
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


def cross(input, other, dim=None, *, out=None):
    """The cross product of 3-vectors along ``dim`` (inputs broadcast); dim=None takes the
    first dim of size 3, with PyTorch's deprecation warning."""
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
    return r if out is None else out.copy_(r)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose diagonals (``offset``) over dims ``dim1``, ``dim2`` hold the last dim
    of ``input``; zeros elsewhere."""
    _tensor_arg(input, "diag_embed", "input")
    nd = input.dim() + 1
    d1, d2 = (_T._wrap_dim(d, nd) for d in (dim1, dim2))
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = (input.shape[-1] if input.dim() else 1) + abs(offset)
    rest = iter(input.shape[:-1])
    shape = [n if i in (d1, d2) else next(rest) for i in range(nd)]
    out = input.new_zeros(shape)
    out.diagonal(offset, d1, d2).copy_(input)
    return out


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
    r = _T.matmul(left, right).reshape([sizes[x] for x in batch + ms + ns])
    return r, batch + ms + ns


def einsum(equation, *operands):
    """Einstein summation over ``operands`` (also given as one list): 'ij,jk->ik', implicit
    output (the labels seen once, sorted), '...' for broadcast dims, repeated labels for
    diagonals.  Operands are contracted left to right, each pair as one batched matmul."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
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
