"""``ember.hash_tensor``: an xor of every element's 64-bit pattern (PyTorch's mode 0).

Elements are widened to float64 (floating dtypes) or int64 (integer and bool dtypes), their
bits read as uint64 and reduced with xor; the result is uint64."""
from ember.core._dtype import _dtype_by_name
from ember.core.shapes import cat

__all__ = ["hash_tensor"]

_FLOAT64, _INT64, _UINT64 = (_dtype_by_name[n] for n in ("float64", "int64", "uint64"))


def _xor_last(bits):
    """xor-reduce the last dim of an int64 tensor by folding halves (0 is the identity)."""
    while bits.shape[-1] > 1:
        n = bits.shape[-1]
        if n % 2:
            bits = cat([bits, bits.new_zeros(*bits.shape[:-1], 1)], -1)
        half = bits.shape[-1] // 2
        bits = bits[..., :half] ^ bits[..., half:]
    return bits[..., 0] if bits.shape[-1] == 1 else bits.new_zeros(bits.shape[:-1])


def hash_tensor(input, dim=None, *, keepdim=False, mode=0):
    """The xor hash of ``input`` over ``dim`` (all dims when None), as uint64."""
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if input.is_complex():
        raise RuntimeError(f'"xor_sum" not implemented for {input.dtype}')
    if dim is None and input.numel() == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' "
                           "argument.")
    x = input.detach()
    wide = _FLOAT64 if x.is_floating_point() else _INT64
    bits = x.to(wide).contiguous().view(_INT64)
    nd = bits.dim()
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        dims = list(range(nd))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = sorted({d % max(nd, 1) for d in dims})
    kept = [d for d in range(nd) if d not in dims]
    moved = bits.permute(*kept, *dims) if nd else bits
    flat = moved.reshape(*[bits.shape[d] for d in kept], -1)
    out = _xor_last(flat)
    if keepdim:
        for d in dims:
            out = out.unsqueeze(d)
    return out.view(_UINT64)
