"""``assert_close``: tensors, numbers and nested sequences/mappings of them compared within
dtype-dependent tolerances, with PyTorch's error messages."""
import collections.abc

__all__ = ["assert_allclose", "assert_close"]

# {dtype name: (rtol, atol)}: PyTorch's defaults; integer and bool dtypes compare exactly
_PRECISIONS = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
               "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
               "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


class _Mismatch(Exception):
    def __init__(self, kind, msg, path=()):
        super().__init__(msg)
        self.kind, self.msg, self.path = kind, msg, path


def _tolerances(dtypes, rtol, atol):
    if (rtol is None) != (atol is None):
        given, missing = ("rtol", "atol") if atol is None else ("atol", "rtol")
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but "
                         f"got no {missing}.")
    if rtol is not None or not dtypes:
        return rtol, atol
    pairs = [_PRECISIONS.get(d.name, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _fmt_index(flat, shape):
    import numpy as np
    return str(tuple(int(i) for i in np.unravel_index(flat, shape))) if shape else "()"


def _compare_values(actual, expected, rtol, atol, equal_nan, what, wide=True,
                    integral=False):
    """Raise _Mismatch when the values differ beyond atol + rtol * |expected|; differences
    are computed in float64 (``wide``) or float32, as PyTorch does for the dtype."""
    import numpy as np
    ct = np.float64 if wide else np.float32
    if np.iscomplexobj(actual) or np.iscomplexobj(expected):     # |a - e| is the modulus
        ct = np.complex128 if wide else np.complex64
    a, e = np.asarray(actual, dtype=ct), np.asarray(expected, dtype=ct)
    close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if close.all():
        return
    exact = rtol == 0 and atol == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        abs_diff = np.where(close, 0, np.abs(a - e))
        rel_diff = np.where(close, 0, np.abs(a - e) / np.abs(e))

    def num(x):
        return int(x) if integral and np.isfinite(x) else float(x)

    def allowed(tol):
        return "" if exact else f" (up to {tol} allowed)"
    if what == "Scalars":
        lines = [f"Expected {expected} but got {actual}.",
                 f"Absolute difference: {num(abs_diff)}{allowed(atol)}",
                 f"Relative difference: {float(rel_diff)}{allowed(rtol)}"]
    else:
        n, total = int((~close).sum()), close.size
        ia, ir = int(abs_diff.argmax()), int(rel_diff.argmax())   # argmax finds a NaN first
        lines = [f"Mismatched elements: {n} / {total} ({100 * n / total:.1f}%)",
                 f"Greatest absolute difference: {num(abs_diff.flat[ia])} at index "
                 f"{_fmt_index(ia, a.shape)}{allowed(atol)}",
                 f"Greatest relative difference: {float(rel_diff.flat[ir])} at index "
                 f"{_fmt_index(ir, a.shape)}{allowed(rtol)}"]
    verb = "equal" if exact else "close"
    raise _Mismatch(AssertionError, f"{what} are not {verb}!\n\n" + "\n".join(lines))


def _attribute(name, a, e):
    if a != e:
        raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: "
                                        f"{a} != {e}.")


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype,
                     check_stride):
    _attribute("shape", actual.shape, expected.shape)
    if check_device:
        _attribute("device", actual.device, expected.device)
    if check_dtype:
        _attribute("dtype", actual.dtype, expected.dtype)
    if check_stride:
        _attribute("stride()", actual.stride(), expected.stride())
    if actual.is_meta or expected.is_meta:
        return
    r, a = _tolerances((actual.dtype, expected.dtype), rtol, atol)
    host = [t.detach().float().numpy(force=True) if t.dtype.itemsize == 2 and
            t.dtype.is_floating_point else t.detach().numpy(force=True)
            for t in (actual, expected)]
    wide = bool({"float64", "complex128"} & {actual.dtype.name, expected.dtype.name})
    integral = not any(t.dtype.is_floating_point or t.dtype.is_complex
                       for t in (actual, expected))
    _compare_values(host[0], host[1], r, a, equal_nan, "Tensor-likes", wide, integral)


def _is_number(x):
    return isinstance(x, (int, float, bool)) and not hasattr(x, "shape")


def _compare(actual, expected, path, kw):
    from ember.core.tensor import Tensor
    if isinstance(actual, Tensor) or isinstance(expected, Tensor):
        if not (isinstance(actual, Tensor) and isinstance(expected, Tensor)):
            raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of "
                                       f"type {type(actual)} and {type(expected)}.", path)
        if not kw["allow_subclasses"] and type(actual) is not type(expected):
            raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of "
                                       f"type {type(actual)} and {type(expected)}.", path)
        try:
            _compare_tensors(actual, expected, kw["rtol"], kw["atol"], kw["equal_nan"],
                             kw["check_device"], kw["check_dtype"], kw["check_stride"])
        except _Mismatch as m:
            m.path = path
            raise
        return
    if _is_number(actual) and _is_number(expected):
        if kw["check_dtype"] and type(actual) is not type(expected):
            raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != "
                                            f"{type(expected)}.", path)
        if isinstance(actual, float) or isinstance(expected, float):
            rtol, atol = (1e-7, 1e-7) if kw["rtol"] is None else (kw["rtol"], kw["atol"])
        else:
            rtol, atol = (0.0, 0.0) if kw["rtol"] is None else (kw["rtol"], kw["atol"])
        try:
            _compare_values(actual, expected, rtol, atol, kw["equal_nan"], "Scalars",
                            integral=isinstance(actual, int) and isinstance(expected, int))
        except _Mismatch as m:
            m.path = path
            raise
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected,
                                                                  collections.abc.Mapping):
        if set(actual) != set(expected):
            raise _Mismatch(AssertionError, f"The keys of the mappings do not match:\n"
                                            f"Missing keys in the actual mapping: "
                                            f"{sorted(set(expected) - set(actual), key=str)}\n"
                                            f"Additional keys in the actual mapping: "
                                            f"{sorted(set(actual) - set(expected), key=str)}",
                            path)
        for k in expected:
            _compare(actual[k], expected[k], path + (k,), kw)
        return
    seq = collections.abc.Sequence
    if isinstance(actual, seq) and isinstance(expected, seq) and \
            not isinstance(actual, str) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: "
                                            f"{len(actual)} != {len(expected)}", path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + (i,), kw)
        return
    if actual is None and expected is None:
        return
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type "
                               f"{type(actual)} and {type(expected)}.", path)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Assert that ``actual`` and ``expected`` are close: tensors of the same shape (and
    device, dtype, stride when checked) whose values satisfy
    ``|actual - expected| <= atol + rtol * |expected|`` (defaults by dtype; exact for
    integers), numbers, or sequences/mappings of them with the same structure.  ``msg``
    replaces the message (a callable gets the generated one)."""
    _tolerances((), rtol, atol)         # both or neither, checked before anything else
    kw = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
              check_device=check_device, check_dtype=check_dtype, check_stride=check_stride)
    try:
        _compare(actual, expected, (), kw)
    except _Mismatch as m:
        text = m.msg
        if m.path:
            text += "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in m.path)
        if msg is not None:
            text = msg(text) if callable(msg) else msg
        raise m.kind(text) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """The deprecated form of assert_close: non-tensors are made tensors (``expected`` of
    ``actual``'s dtype), dtypes need not match, and the tolerances default per dtype
    (float16: 1e-3/1e-3, float32: 1e-4/1e-5, float64: 1e-5/1e-8)."""
    import ember
    if not isinstance(actual, ember.Tensor):
        actual = ember.tensor(actual)
    if not isinstance(expected, ember.Tensor):
        expected = ember.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        table = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}
        pairs = [table.get(t.dtype.name, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
