"""grouped_mm: one matrix product per group (a mixture-of-experts layer's experts), the
groups of a 2-d operand delimited by ``offs``; composed of slices and matmuls, so it is
differentiable on every device."""
from ember.core import _tensor as _T
from ember.core._errors import _tensor_arg

__all__ = ["grouped_mm"]


def _bounds(offs):
    ends = [int(v) for v in offs.tolist()]
    return list(zip([0] + ends[:-1], ends))


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """Grouped GEMM.  ``mat_a`` (M, K) with ``mat_b`` (G, K, N): rows offs[i-1]:offs[i] of
    mat_a times mat_b[i], (M, N) (rows past offs[-1] are zeros).  (G, M, K) with (G, K, N):
    a batched matmul.  (M, K) with (K, N): the K columns/rows of each group, (G, M, N).
    (G, M, K) with (K, N): the N columns of each group, (M, N).  ``offs`` is int32 and
    given exactly when an operand is 2-d; ``bias`` is added to each group's result."""
    _tensor_arg(mat_a, "grouped_mm", "mat_a", position=1)
    _tensor_arg(mat_b, "grouped_mm", "mat_b", position=2)
    for name, m in (("mat_a", mat_a), ("mat_b", mat_b)):
        if m.dim() not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    both_3d = mat_a.dim() == 3 and mat_b.dim() == 3
    if (offs is None) != both_3d:
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None and offs.dtype.name != "int32":
        raise RuntimeError("Offsets have to be int32")
    if both_3d and mat_a.shape[0] != mat_b.shape[0]:
        raise RuntimeError("batched dimension has to match")
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    if both_3d:
        out = mat_a.matmul(mat_b)
    elif mat_a.dim() == 2 and mat_b.dim() == 3:
        parts = [mat_a[lo:hi].matmul(mat_b[g]) for g, (lo, hi) in enumerate(_bounds(offs))]
        tail = mat_a.shape[0] - (int(offs[-1]) if offs.numel() else 0)
        if tail:
            parts.append(_T.zeros((tail, mat_b.shape[-1]), dtype=mat_a.dtype,
                                  device=mat_a.device))
        out = _T._cat(parts, 0)
    elif mat_a.dim() == 2:
        out = _T._cat([mat_a[:, lo:hi].matmul(mat_b[lo:hi]).unsqueeze(0)
                       for lo, hi in _bounds(offs)], 0)
    else:
        out = _T._cat([mat_a[g].matmul(mat_b[:, lo:hi])
                       for g, (lo, hi) in enumerate(_bounds(offs))], 1)
    if bias is not None:
        out = out + bias
    return out if out_dtype is None else out.to(out_dtype)
