# PyTorch's "barebones" unsigned dtypes (uint16, uint32, uint64) have few ops: creation,
# copies and casts, fills, mul, true division, ==/!=, bitwise and/or/xor, sums/products/
# cumulative sums (which widen to int64), floor/ceil/trunc and sorting.  The families below
# refuse the rest with PyTorch's NotImplementedError, on every device (a kernel could run
# them, but results would differ from PyTorch's refusal).

cdef frozenset _LIMITED_OK = frozenset({
    "mul", "div", "true_divide", "eq", "ne", "bitwise_and", "bitwise_or", "bitwise_xor",
    "sum", "prod", "cumsum", "cumprod", "floor", "ceil", "trunc", "round", "any", "all"})


cdef inline bint is_limited(dtype dt) noexcept:
    return dt.code == EMBER_UINT16 or dt.code == EMBER_UINT32 or dt.code == EMBER_UINT64


cdef int refuse_limited(Op op, dtype dt) except -1:
    if is_limited(dt) and op.name not in _LIMITED_OK:
        raise NotImplementedError(f'"{op.name}_cpu" not implemented for '
                                  f"'{st_name(dt)}'")
    return 0


cdef int refuse_limited_named(str name, dtype dt) except -1:
    """The refusal for the non-family ops PyTorch gives no kernel for these dtypes (gather,
    scatter, index_select, take, nonzero, arange, index_put, ...)."""
    if is_limited(dt):
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{st_name(dt)}\'')
    return 0


def _refuse_limited(str name, dtype dt):
    """refuse_limited_named for the core's Python composites (flip, topk, tril, eye, ...)."""
    refuse_limited_named(name, dt)
