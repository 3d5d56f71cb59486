"""Order statistics: sort, argsort, topk, kthvalue, median, mode, unique,
unique_consecutive, randperm.

They run on the host through NumPy (the op catalogue allows NumPy for sort/topk/unique)
and copy the result back to the tensor's device, so every device has them.  NumPy is
imported on first use: `import ember` stays free of it.  They are composite ops, so vmap
runs them sample by sample (it cannot hand the host one sample's memory)."""
import operator

from ember.core import _autograd as _ag
from ember.core import _tensor as _T
from ember.core._dispatch import composite
from ember.core._dtype import _dtype_by_name
from ember.core._errors import _tensor_arg
from ember.core._factories import factory_out, out_spec
from ember.core._results import values_indices, values_indices_out

__all__ = ["argsort", "kthvalue", "median", "mode", "msort", "randperm", "sort", "topk",
           "unique", "unique_consecutive"]

_INT64 = _dtype_by_name["int64"]


def _numpy():
    import numpy
    return numpy


def _axis(t, dim, op):
    dim = _int_dim(dim, op)
    n = max(t.dim(), 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _int_dim(dim, op):
    """``dim`` as an int (anything with __index__), else torch's TypeError."""
    try:
        return operator.index(dim)
    except TypeError:
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}") \
            from None


def _back(t, values, indices, name, axis=None, keepdim=True):
    """The (values, indices) tuple on t's device, from host arrays (see ``_chosen``)."""
    idx = _T._from_host(indices, _INT64, t.device)
    vals = None if axis is not None and _recording(t) else \
        _T._from_host(values, t.dtype, t.device)
    return _chosen(t, vals, idx, name, axis, keepdim)


def _chosen(t, vals, idx, name, axis=None, keepdim=True):
    """The (values, indices) named tuple of device tensors.  When t records gradients the
    values are gathered from t at the indices (``axis``; ``keepdim=False``: that dim was
    dropped), so the gradient reaches exactly the chosen elements, as torch routes it."""
    if axis is not None and _recording(t):
        if t.dim() == 0:
            vals = t.reshape(1).gather(0, idx.reshape(1)).reshape(())
        else:
            vals = t.gather(axis, idx if keepdim else idx.unsqueeze(axis))
            vals = vals if keepdim else vals.squeeze(axis)
    return values_indices(name, vals, idx)


def _recording(t):
    """The differentiable path (values gathered at the chosen indices): while autograd
    records or forward AD carries a tangent."""
    return _ag._tracked(t)


def _no_complex(t, message, error=RuntimeError):
    """PyTorch has no order on complex numbers (NumPy's lexicographic one is not its)."""
    if t.dtype.is_complex:
        raise error(message.replace("{dtype}", _T._st_name(t.dtype)))
    return t


def _order(arr, axis, descending):
    """Stable order, ascending with NaN last or descending with NaN first (as torch): equal
    elements keep their order in both directions."""
    np = _numpy()
    if not descending:
        return np.argsort(arr, axis=axis, kind="stable")
    # a stable ascending sort of the reversed row, read backwards: ties in row order
    idx = np.argsort(np.flip(arr, axis=axis), axis=axis, kind="stable")
    return arr.shape[axis] - 1 - np.flip(idx, axis=axis)


@composite("sort")
def sort(input, dim=-1, descending=False, stable=False, *, axis=None, out=None):
    """(values, indices) of ``input`` sorted along ``dim``; NaN sorts as the largest;
    ``out``: a (values, indices) pair to write them into."""
    if axis is not None:
        dim, _ = _T._numpy_names("sort", dim, False, axis, None, -1)
    np = _numpy()
    t = _no_complex(_tensor_arg(input, "sort"), " Sort does not support complex dtypes on CPU")
    axis = _axis(t, dim, "sort")
    on_device = _T._device_sort(t, axis, descending)       # the device's kernel (ABI 6.1)
    if on_device is not None:
        values, idx = on_device
        return values_indices_out("sort", t, _chosen(t, None if _recording(t) else values,
                                                     idx, "sort", axis), out)
    arr = np.atleast_1d(_T._to_host(t))
    idx = _order(arr, axis, descending)
    values = np.take_along_axis(arr, idx, axis)
    return values_indices_out("sort", t, _back(t, values.reshape(t.shape),
                                               idx.reshape(t.shape), "sort", axis), out)


def msort(input, *, out=None):
    """``input`` sorted along dim 0."""
    t = _tensor_arg(input, "msort")
    r = t.gather(0, sort(t, 0).indices) if t.dim() else t.clone()
    return r if out is None else _T._result_out(r, out, "msort")


def argsort(input, dim=-1, descending=False, stable=False, *, axis=None):
    """The indices that sort ``input`` along ``dim``."""
    if axis is not None:
        dim, _ = _T._numpy_names("argsort", dim, False, axis, None, -1)
    return sort(input, dim, descending, stable).indices


@composite("topk")
def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None, axis=None):
    """(values, indices) of the ``k`` largest (or smallest) elements along ``dim`` (into the
    pair ``out`` if given)."""
    if axis is not None:                             # NumPy's name
        dim = _T._numpy_names("topk", dim, None, axis, None, -1)[0]
    np = _numpy()
    t = _no_complex(_tensor_arg(input, "topk"), " topk does not support complex dtypes on CPU")
    _T._refuse_limited("topk", t.dtype)
    axis = _axis(t, dim, "topk")
    size = t.shape[axis] if t.dim() else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    arr = np.atleast_1d(_T._to_host(t))
    idx = _top_indices(np, arr, k, axis, largest)
    values = np.take_along_axis(arr, idx, axis)
    shape = list(t.shape) or [1]
    shape[axis] = k
    if not t.dim():
        shape = []
    return values_indices_out("topk", t, _back(t, values.reshape(shape), idx.reshape(shape),
                                               "topk", axis), out)


def _top_indices(np, arr, k, axis, largest):
    """The first ``k`` positions of the stable order along ``axis`` (``_order``'s: NaN the
    largest, ties in row order).  For a small k, only the candidates are sorted: those at
    or beyond the k-th value (np.partition's, NaN last), gathered in row order; positions
    past a row's candidates hold smaller elements, which sort after them."""
    n = arr.shape[axis]
    if 0 < k <= 64 and arr.size and arr.dtype in (np.float32, np.float64, np.int64):
        rows = np.ascontiguousarray(np.moveaxis(arr, axis, -1))
        out = np.empty(rows.shape[:-1] + (k,), dtype=np.int64)
        _T._top_k_rows(rows.reshape(-1, n), k, largest, out.reshape(-1, k))
        return np.moveaxis(out, -1, axis)
    if k * 8 > n or n < 256 or arr.dtype.kind not in "fiu":
        return np.take(_order(arr, axis, largest), np.arange(k), axis=axis)
    a = np.moveaxis(arr, axis, -1)
    kth = np.take(np.partition(a, n - k if largest else k - 1, axis=-1),
                  [n - k if largest else k - 1], axis=-1)
    if a.dtype.kind == "f":
        nan, kth_nan = np.isnan(a), np.isnan(kth)
        keep = np.where(kth_nan, nan, (a >= kth) | nan) if largest else \
            np.where(kth_nan, True, a <= kth)
    else:
        keep = a >= kth if largest else a <= kth
    m = int(keep.sum(-1).max())
    cand = np.argsort(~keep, axis=-1, kind="stable")[..., :m]       # row order kept
    order = _order(np.take_along_axis(a, cand, -1), -1, largest)[..., :k]
    return np.moveaxis(np.take_along_axis(cand, order, -1), -1, axis)


@composite("kthvalue")
def kthvalue(input, k, dim=-1, keepdim=False, *, out=None, axis=None, keepdims=None):
    """(values, indices) of the ``k``-th smallest element (1-based) along ``dim`` (into the
    pair ``out`` if given)."""
    if axis is not None or keepdims is not None:     # NumPy's names
        dim, keepdim = _T._numpy_names("kthvalue", dim, keepdim, axis, keepdims, -1)
    np = _numpy()
    t = _tensor_arg(input, "kthvalue")
    axis = _axis(t, dim, "kthvalue")
    size = t.shape[axis] if t.dim() else 1
    if not 1 <= k <= size:
        raise IndexError(f"kthvalue(): selected number k out of range for dimension {dim}")
    arr = np.atleast_1d(_T._to_host(t))
    idx = np.take(np.argsort(arr, axis=axis, kind="stable"), [k - 1], axis=axis)
    return values_indices_out("kthvalue", t, _picked(t, arr, idx, axis, keepdim, "kthvalue"),
                              out)


def _picked(t, arr, idx, axis, keepdim, op):
    """(values, indices) of ``t`` (on the host: ``arr``) at the indices ``idx`` picked along
    ``axis`` (kept as a dim of size 1)."""
    np = _numpy()
    values = np.take_along_axis(arr, idx, axis)
    if not keepdim:
        idx, values = np.squeeze(idx, axis), np.squeeze(values, axis)
    if not t.dim():
        idx, values = idx.reshape(()), values.reshape(())
    return _back(t, values, idx, op, axis, keepdim)


def _evenly_distributed(t, value):
    """``value``, an element of ``t`` chosen without autograd, as torch's median and
    nanmedian of all elements differentiate it: the gradient split evenly between the
    elements equal to it (the NaNs when it is NaN)."""
    if not _recording(t):
        return value
    flat, v = t.reshape(-1), value.item()
    # the mean of those elements (exact for NaN and -inf, which amax's rule below cannot
    # single out)
    if v != v:
        return flat.masked_select(flat != flat).mean()
    if v == float("-inf"):
        return flat.masked_select(flat == value).mean()
    # otherwise amax's rule, applied to those elements alone (a mean may round)
    return _T.where(t == value, t, float("-inf")).amax()


# the value torch's median of no elements holds: NaN, which an integer dtype receives as the
# x86 conversion of NaN leaves it (the 32- or 64-bit "indefinite integer", truncated)
_NAN_AS_INTEGER = {"int32": -2 ** 31, "int64": -2 ** 63, "uint64": 2 ** 63}


def _empty_median(t):
    nan = t.dtype.is_floating_point or t.dtype.is_complex or t.dtype.name == "bool"
    value = float("nan") if nan else _NAN_AS_INTEGER.get(t.dtype.name, 0)
    return _T.full((), value, dtype=t.dtype, device=t.device)


@composite("median")
def median(input, dim=None, keepdim=False, *, axis=None, keepdims=None, out=None):
    """The lower median: of all elements (dim=None), or (values, indices) along ``dim`` (into
    the pair ``out`` if given)."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _T._numpy_names("median", dim, keepdim, axis, keepdims)
    t = _tensor_arg(input, "median")
    if dim is None:
        if out is not None:                  # torch: out= belongs to the dim overload only
            raise TypeError('median() missing 1 required positional arguments: "dim"')
        flat = t.reshape(-1)
        k = (flat.numel() + 1) // 2
        nan = flat != flat
        if flat.numel() == 0:
            value = _empty_median(t)
        elif bool(nan.any()):                     # torch: any NaN makes the median NaN
            value = flat.detach().masked_select(nan)[0]
        else:
            value = kthvalue(flat.detach(), k).values
        return _evenly_distributed(t, value)
    np = _numpy()
    axis = _axis(t, dim, "median")
    size = t.shape[axis] if t.dim() else 1
    arr = np.atleast_1d(_T._to_host(t))
    if size == 0:
        raise IndexError(f"median(): Expected reduction dim {axis} to have non-zero size.")
    idx = np.take(np.argsort(arr, axis=axis, kind="stable"), [(size - 1) // 2], axis=axis)
    # torch: a row holding a NaN has the median NaN, at the row's first NaN
    nan = arr != arr
    first_nan = np.argmax(nan, axis=axis).reshape(idx.shape)
    idx = np.where(nan.any(axis=axis).reshape(idx.shape), first_nan, idx)
    return values_indices_out("median", t, _picked(t, arr, idx, axis, keepdim, "median"), out)


@composite("unique")
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values of ``input`` (sorted), or its distinct slices along ``dim``;
    optionally with the inverse mapping and the counts."""
    np = _numpy()
    t = _no_complex(_tensor_arg(input, "unique"), "\"unique\" not implemented for '{dtype}'",
                    NotImplementedError)
    arr = _T._to_host(t)
    if dim is None:
        # torch keeps every NaN apart (NaN != NaN); NumPy merges them unless told not to
        values, inverse, counts = np.unique(arr, return_inverse=True, return_counts=True,
                                            equal_nan=False)
        inverse = inverse.reshape(t.shape)
    else:
        axis = _axis(t, dim, "unique")
        values, inverse, counts = np.unique(np.atleast_1d(arr), return_inverse=True,
                                            return_counts=True, axis=axis)
        inverse = inverse.reshape(-1)
    return _unique_result(t, values, inverse, counts, return_inverse, return_counts)


@composite("unique_consecutive")
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``input`` with each run of equal consecutive values (slices along ``dim``) kept once;
    optionally with the inverse mapping and the run lengths."""
    np = _numpy()
    t = _tensor_arg(input, "unique_consecutive")
    arr = np.atleast_1d(_T._to_host(t))
    axis = 0 if dim is None else _axis(t, dim, "unique_consecutive")
    rows = arr.reshape(-1, 1) if dim is None else np.moveaxis(arr, axis, 0).reshape(
        arr.shape[axis], -1)
    new = np.ones(rows.shape[0], bool)
    new[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    starts = np.flatnonzero(new)
    values = (arr.reshape(-1) if dim is None else arr).take(starts, axis=axis)
    inverse = np.cumsum(new) - 1
    counts = np.diff(np.append(starts, rows.shape[0]))
    if dim is None:
        inverse = inverse.reshape(t.shape)
    return _unique_result(t, values, inverse, counts, return_inverse, return_counts)


def _unique_result(t, values, inverse, counts, return_inverse, return_counts):
    out = [_T._from_host(values, t.dtype, t.device)]
    if return_inverse:
        out.append(_T._from_host(inverse, _INT64, t.device))
    if return_counts:
        out.append(_T._from_host(counts, _INT64, t.device))
    return out[0] if len(out) == 1 else tuple(out)


@composite("mode")
def mode(input, dim=-1, keepdim=False, *, out=None, axis=None, keepdims=None):
    """(values, indices): the most frequent value along ``dim`` (the smallest of equally
    frequent ones) and the position of its last occurrence (into the pair ``out`` if
    given)."""
    if axis is not None or keepdims is not None:     # NumPy's names
        dim, keepdim = _T._numpy_names("mode", dim, keepdim, axis, keepdims, -1)
    np = _numpy()
    t = _tensor_arg(input, "mode")
    axis = _axis(t, dim, "mode")
    arr = np.atleast_1d(_T._to_host(t))
    if arr.shape[axis] == 0:
        raise IndexError(f"mode(): Expected reduction dim {axis} to have non-zero size.")
    rows = np.moveaxis(arr, axis, -1)
    lead, n = rows.shape[:-1], rows.shape[-1]
    rows = rows.reshape(-1, n)
    s = np.sort(rows, axis=1)
    pos = np.arange(n)
    new = np.ones(s.shape, bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    start = np.maximum.accumulate(np.where(new, pos, 0), axis=1)
    last = np.ones(s.shape, bool)
    last[:, :-1] = new[:, 1:]
    run = np.where(last, pos - start + 1, 0)           # run lengths, at each run's end
    values = s[np.arange(len(s)), run.argmax(axis=1)]
    hits = rows == values[:, None]
    indices = n - 1 - hits[:, ::-1].argmax(axis=1)
    if s.dtype.kind == "f":
        for r in np.flatnonzero(np.isnan(s[:, -1])):       # rows holding a NaN
            values[r], indices[r] = _mode_of_row(rows[r].tolist())
    shape = list(lead)
    if keepdim and t.dim():
        shape.insert(axis, 1)
    return values_indices_out("mode", t, _back(t, values.reshape(shape),
                                               indices.reshape(shape), "mode", axis, keepdim),
                              out)


# -- mode of a row holding NaN ---------------------------------------------------------------
# torch's CPU mode sorts (value, position) pairs with C++'s std::sort and `<`, then takes the
# first longest run of `!=`-equal neighbours.  `<` is no order once NaN takes part: where NaN
# lands, and so which runs form, is whatever GCC's introsort does, so it is replayed here.

def _mode_of_row(row):
    """(value, position) of torch's mode of ``row`` (a list of floats)."""
    pairs = [(x, i) for i, x in enumerate(row)]
    _introsort(pairs, 0, len(pairs), 2 * (len(pairs).bit_length() - 1))
    _insertion_sort(pairs, 0, len(pairs))
    best, length = pairs[0], 0
    run = 0
    for i, (x, _) in enumerate(pairs):
        run += 1
        if i + 1 == len(pairs) or x != pairs[i + 1][0]:
            if run > length:
                best, length = pairs[i], run
            run = 0
    return best


def _insertion_sort(v, lo, hi):
    """GCC's final pass: a guarded insertion sort of the first 16, unguarded after them."""
    for i in range(lo + 1, hi):
        x = v[i]
        if i < lo + 16 and x[0] < v[lo][0]:
            v[lo + 1:i + 1] = v[lo:i]
            v[lo] = x
            continue
        j = i - 1
        while j >= lo and x[0] < v[j][0]:
            v[j + 1] = v[j]
            j -= 1
        v[j + 1] = x


def _introsort(v, lo, hi, depth):
    """GCC's introsort loop: median-of-three quicksort down to runs of 16, heapsort past
    the depth limit."""
    while hi - lo > 16:
        if depth == 0:
            _heapsort(v, lo, hi)
            return
        depth -= 1
        a, b, c = v[lo + 1][0], v[lo + (hi - lo) // 2][0], v[hi - 1][0]
        if a < b:
            m = lo + (hi - lo) // 2 if b < c else hi - 1 if a < c else lo + 1
        else:
            m = lo + 1 if a < c else hi - 1 if b < c else lo + (hi - lo) // 2
        v[lo], v[m] = v[m], v[lo]
        pivot, f, last = v[lo][0], lo + 1, hi
        while True:
            while v[f][0] < pivot:
                f += 1
            last -= 1
            while pivot < v[last][0]:
                last -= 1
            if f >= last:
                break
            v[f], v[last] = v[last], v[f]
            f += 1
        _introsort(v, f, hi, depth)
        hi = f


def _sift(v, lo, hole, n, x):
    """GCC's __adjust_heap: sink the hole to a leaf along larger children, then push x up."""
    top, child = hole, hole
    while child < (n - 1) // 2:
        child = 2 * child + 2
        if v[lo + child][0] < v[lo + child - 1][0]:
            child -= 1
        v[lo + hole], hole = v[lo + child], child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * child + 2
        v[lo + hole], hole = v[lo + child - 1], child - 1
    parent = (hole - 1) // 2
    while hole > top and v[lo + parent][0] < x[0]:
        v[lo + hole], hole = v[lo + parent], parent
        parent = (hole - 1) // 2
    v[lo + hole] = x


def _heapsort(v, lo, hi):
    n = hi - lo
    for p in range((n - 2) // 2, -1, -1):
        _sift(v, lo, p, n, v[lo + p])
    while n > 1:
        n -= 1
        x, v[lo + n] = v[lo + n], v[lo]
        _sift(v, lo, 0, n, x)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             pin_memory=False, requires_grad=False):
    """A random permutation of 0 .. n-1, from the (seeded) ember generator."""
    if out is not None:
        dtype, device = out_spec(out, dtype, device, "randperm")
        return factory_out(randperm(n, generator=generator, dtype=dtype, device=device), out,
                           requires_grad)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    keys = _T.rand(n, generator=generator, dtype=_dtype_by_name["float64"], device=device)
    if _T._batch_level(keys) is not None:
        # vmap's randomness="different": keys per sample, and their order (a batched
        # argsort) a uniform permutation per sample
        perm = keys.argsort()
        return perm if dtype is None else perm.to(dtype)
    perm = _T._shuffled_range(keys.cpu())
    if keys.device.type != "cpu":
        perm = perm.to(keys.device)
    return perm if dtype is None else perm.to(dtype)
