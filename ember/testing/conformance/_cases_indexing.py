"""Cases of indexing through the index entry: negative indices where PyTorch wraps them
(take, advanced indexing, index_put_), advanced indexing with tensors, lists and bool
masks (alone, broadcast together, next to slices, through strided views), setitem of a
number or of values, accumulating puts with duplicates, index_select and index_add_;
against NumPy's indexing, whose rules PyTorch's follow for these cases."""
import numpy as np

import ember
from ember.testing.conformance._case import case, key
from ember.testing.conformance._cases_elementwise import _fill_value
from ember.testing.conformance._data import (
    DTYPES,
    NUMERIC,
    check,
    np_dtype,
    seeded,
    to_device,
    values,
)

SHAPE = (4, 5)


def _operand(op, dtype, variant, device):
    """(x, host x, rng): x of SHAPE on the device (a transposed copy's .t() for
    "strided" variants: the same values through a non-contiguous view)."""
    rng = seeded("indexing", op, dtype, variant)
    hx = values(rng, SHAPE, dtype)
    if variant.startswith("strided"):
        return to_device(np.ascontiguousarray(hx.T), dtype, device).t(), hx, rng
    return to_device(hx, dtype, device), hx, rng


def _t(v, device, dtype="int64"):
    return to_device(np.asarray(v), dtype, device)


def _entry(op):
    return lambda dtype, variant: key("index", op, dtype)


# variant: index as (NumPy index, index builder on the device)
_I, _J = [-1, 0, 2], [1, -2, 3]
_MASK = np.array([[1, 0, 1, 1, 0], [0, 0, 0, 0, 0], [1, 1, 0, 0, 1], [0, 1, 0, 1, 0]], bool)
_ROWS = np.array([True, False, True, True])
GETITEM = {
    "tensor": (np.array(_I), lambda d: _t(_I, d)),
    "tensor_dim1": ((slice(None), np.array([-1, 3, -5])), lambda d: (slice(None),
                                                                     _t([-1, 3, -5], d))),
    "broadcast": ((np.array([[0], [-1]]), np.array(_J)), lambda d: (_t([[0], [-1]], d),
                                                                    _t(_J, d))),
    "list": (([0, 2], [-1, 1]), lambda d: ([0, 2], [-1, 1])),
    "list_rows": ([-1, 0, -1], lambda d: [-1, 0, -1]),
    "mask": (_MASK, lambda d: _t(_MASK, d, "bool")),
    "mask_rows": (_ROWS, lambda d: _t(_ROWS, d, "bool")),
    "mask_dim1": ((Ellipsis, _MASK[0]), lambda d: (Ellipsis, _t(_MASK[0], d, "bool"))),
    "with_slices": ((slice(1, None), np.array([-1, 0])), lambda d: (slice(1, None),
                                                                    _t([-1, 0], d))),
    "new_axis": ((None, np.array([0, -1])), lambda d: (None, _t([0, -1], d))),
    "strided": (np.array([-1, 1]), lambda d: _t([-1, 1], d)),
}


@case("indexing", "getitem", DTYPES, tuple(GETITEM), key=_entry("gather"))
def _getitem(device, dtype, variant):
    x, hx, _ = _operand("getitem", dtype, variant, device)
    hidx, idx = GETITEM[variant]
    check(x[idx(device)], hx[hidx], dtype, device, what=f"x[{variant} index]")


# variant: (GETITEM index it writes to, what it writes: a number or values of the shape)
SETITEM = {"tensor_number": ("tensor", "number"), "tensor_values": ("tensor", "values"),
           "dim1_values": ("tensor_dim1", "values"), "broadcast_row": ("tensor", "row"),
           "mask_number": ("mask", "number"), "mask_values": ("mask", "values"),
           "mask_rows_values": ("mask_rows", "values"), "list_number": ("list", "number"),
           "strided_number": ("strided", "number")}


@case("indexing", "setitem", DTYPES, tuple(SETITEM), key=_entry("scatter"))
def _setitem(device, dtype, variant):
    x, hx, rng = _operand("setitem", dtype, variant, device)
    where, what = SETITEM[variant]
    hidx, idx = GETITEM[where]
    want = hx.copy()
    target = want[hidx].shape
    if what == "number":
        v = hv = _fill_value(dtype)
    else:
        hv = values(rng, target if what == "values" else target[-1:], dtype)
        v = to_device(hv, dtype, device)
    x[idx(device)] = v
    want[hidx] = np.asarray(hv).astype(np_dtype(dtype)) if dtype != "bool" else hv
    check(x, want, dtype, device, what=f"x[{where} index] = {what}")


@case("indexing", "take", DTYPES, ("contiguous", "strided"), key=_entry("gather"))
def _take(device, dtype, variant):
    x, hx, _ = _operand("take", dtype, variant, device)
    hidx = np.array([[0, -1], [-20, 7], [19, -7]])       # negatives count from the end
    check(ember.take(x, _t(hidx, device)), hx.reshape(-1)[hidx], dtype, device)


def _np_accumulate(hx, hidx, hv, dtype):
    """x[idx] += v with duplicates adding up (bool: or), as index_put_(accumulate=True)."""
    want = hx.astype(np.float64 if dtype != "bool" else np.int64)
    np.add.at(want, hidx, hv)
    return want != 0 if dtype == "bool" else want


@case("indexing", "index_put", DTYPES, ("accumulate", "two_indices", "strided"),
      key=_entry("scatter_add"))
def _index_put(device, dtype, variant):
    x, hx, rng = _operand("index_put", dtype, variant, device)
    if variant == "two_indices":          # duplicated (row, col) pairs, negative columns
        hidx = (np.array([0, 3, 0, -1, 0]), np.array([-1, 2, 4, -3, -1]))
    else:
        hidx = (np.array([-1, 0, 3, 0, -4]),)
    hv = values(rng, (len(hidx[0]),) + SHAPE[len(hidx):], dtype)
    got = x.index_put_(tuple(_t(i, device) for i in hidx), to_device(hv, dtype, device),
                       accumulate=True)
    check(got, _np_accumulate(hx, hidx, hv, dtype), dtype, device)


@case("indexing", "index_select", DTYPES, ("dim0", "dim1", "strided"), key=_entry("gather"))
def _index_select(device, dtype, variant):
    x, hx, _ = _operand("index_select", dtype, variant, device)
    dim = 0 if variant == "dim0" else 1
    hidx = np.array([3, 0, 3, 1])                         # duplicates, out of order
    check(ember.index_select(x, dim, _t(hidx, device)), np.take(hx, hidx, axis=dim), dtype,
          device)


@case("indexing", "index_add", DTYPES, ("dim0", "dim1", "alpha"), key=_entry("scatter_add"),
      skip=lambda dtype, variant: variant == "alpha" and dtype not in NUMERIC)
def _index_add(device, dtype, variant):
    x, hx, rng = _operand("index_add", dtype, variant, device)
    dim = 1 if variant == "dim1" else 0
    hidx = np.array([2, 0, 2, 3, 2])                      # duplicates add up
    shape = list(SHAPE)
    shape[dim] = len(hidx)
    hs = values(rng, tuple(shape), dtype)
    alpha = 2 if variant == "alpha" else 1
    got = x.index_add_(dim, _t(hidx, device), to_device(hs, dtype, device), alpha=alpha)
    want = np.moveaxis(hx.astype(np.float64 if dtype != "bool" else np.int64), dim, 0)
    np.add.at(want, hidx, alpha * np.moveaxis(hs, dim, 0).astype(want.dtype))
    want = np.moveaxis(want, 0, dim)
    check(got, want != 0 if dtype == "bool" else want, dtype, device)
