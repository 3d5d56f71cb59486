"""Batching rule of matmul (mm, bmm, addmm, linear... are composites over it): 1-D
operands become matrices, batched operands get size-1 dims after their batch dim up to
the other's matrix-batch dims, one matmul runs, the added dims are squeezed away.  A
batch of rows against one matrix folds into a single product (one GEMM, as linear's);
per-sample outer products (a contraction of size 1) are broadcast products."""
from ember.core import _tensor as _T
from ember.func._batching import rule
from ember.func._batching._util import align, unwrap_shared, wrap

__all__ = []


@rule("matmul")
def _matmul(v, op, args, kwargs):
    (a, ab), (b, bb) = unwrap_shared(args[0], v.level), unwrap_shared(args[1], v.level)
    la, lb = a.dim() - ab, b.dim() - bb
    if not ab and not bb:                    # both expanded: one product, then expanded
        r = _T.matmul(a, b)
        return _out(wrap(r.unsqueeze(0).expand((v.size,) + tuple(r.shape)), v.level), kwargs)
    if la == 0 or lb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{la}D and {lb}D")
    if ab and not bb and lb == 2:
        # rows of every sample against one matrix: a single [rows, k] @ [k, n]
        r = _T.matmul(a.reshape(-1, a.shape[-1]), b).reshape(a.shape[:-1] + (b.shape[-1],))
        return _out(wrap(r, v.level), kwargs)
    squeeze = []
    if la == 1:                              # a row [1, k]
        a = a.unsqueeze(-2)
        la = 2
        squeeze.append(-2)
    if lb == 1:                              # a column [k, 1]
        b = b.unsqueeze(-1)
        lb = 2
        squeeze.append(-1)
    n = max(la, lb)
    a, b = align(a, ab, n), align(b, bb, n)
    if a.shape[-1] == 1 and ab and bb:
        # outer products per sample (per-sample weight gradients): a broadcast product is
        # exact (no sum) and streams memory instead of one tiny GEMM per sample; the longer
        # side runs along the inner (contiguous) dim, the result a transposed view then
        r = a * b if a.shape[-2] <= b.shape[-1] else (b.mT * a.mT).mT
    else:
        r = _T.matmul(a, b)
    if squeeze == [-2, -1]:                  # a dot product: [.., 1, 1]
        r = r.squeeze(-1).squeeze(-1)
    elif squeeze:
        r = r.squeeze(squeeze[0])
    return _out(wrap(r, v.level), kwargs)


def _out(r, kwargs):
    out = kwargs.get("out")
    if out is None:
        return r
    out.copy_(r)
    return out
