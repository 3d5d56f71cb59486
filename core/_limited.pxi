# PyTorch's "barebones" unsigned dtypes (uint16, uint32, uint64) have few ops: creation,
# copies and casts, fills, mul, true division, ==/!=, bitwise and/or/xor, sums/products/
# cumulative sums (which widen to int64), floor/ceil/trunc and sorting.  The families below
# refuse the rest with PyTorch's NotImplementedError, on every device (a kernel could run
# them, but results would differ from PyTorch's refusal).

cdef frozenset _LIMITED_OK = frozenset({
    "mul", "div", "true_divide", "eq", "ne", "bitwise_and", "bitwise_or", "bitwise_xor",
    "sum", "prod", "cumsum", "cumprod", "floor", "ceil", "trunc", "any", "all"})


cdef inline bint is_limited(dtype dt) noexcept:
    return dt.code == EMBER_UINT16 or dt.code == EMBER_UINT32 or dt.code == EMBER_UINT64


cdef int refuse_limited(Op op, dtype dt) except -1:
    if is_limited(dt) and op.name not in _LIMITED_OK:
        raise NotImplementedError(f'"{op.name}_cpu" not implemented for '
                                  f"'{st_name(dt)}'")
    return 0
