"""Shape rules: plain Python over size tuples, one per op family.

The eager path computes shapes in C for speed; these rules are the reference the meta
device runs and that symbolic shapes (a later issue) will run with SymInts.  Tests check
that both agree.
"""


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (PyTorch's rules), RuntimeError if none."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, s in enumerate(shape):
            j = ndim - len(shape) + i
            if out[j] == 1:
                out[j] = s
            elif s != 1 and s != out[j]:
                raise RuntimeError(
                    f"The size of tensor a ({out[j]}) must match the size of tensor b ({s}) "
                    f"at non-singleton dimension {i}")
    return tuple(out)


def _wrap(dim, ndim, op):
    """``dim`` wrapped into [0, ndim) (IndexError outside [-ndim, ndim)): the dim check of the
    Python composites (shapes, statistics, index_ops)."""
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return dim % ndim


def elementwise(*shapes):
    return broadcast_shapes(*shapes)


def reduction(shape, dims, keepdim):
    """``dims`` already normalised (a tuple of non-negative ints; empty = all)."""
    dims = set(dims) if dims else set(range(len(shape)))
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def matmul(a, b):
    """torch.matmul's output shape for operand shapes ``a`` and ``b``."""
    if len(a) == 0 or len(b) == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{len(a)}D and {len(b)}D")
    a2 = (1,) + tuple(a) if len(a) == 1 else tuple(a)
    b2 = tuple(b) + (1,) if len(b) == 1 else tuple(b)
    if a2[-1] != b2[-2]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({'x'.join(map(str, a2[-2:]))} and {'x'.join(map(str, b2[-2:]))})")
    batch = broadcast_shapes(a2[:-2], b2[:-2])
    out = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def infer_view_shape(shape, numel):
    """Resolve one -1 in a requested view shape against ``numel``."""
    shape = list(shape)
    infer = [i for i, s in enumerate(shape) if s == -1]
    if len(infer) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if infer:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[infer[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)
