"""Tensor.__repr__ formatted like PyTorch's (precision 4, sci mode when needed,
summarised past 1000 elements)."""
import math

_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80)}
_options = dict(_PROFILES["default"], sci_mode=None)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """How tensors print: ``precision`` digits, summarise past ``threshold`` elements
    showing ``edgeitems`` at each end, ``linewidth`` characters per line; ``profile`` is
    "default", "short" or "full"; ``sci_mode`` True/False forces (None: automatic)."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"Invalid profile {profile!r}: expected one of "
                             f"{sorted(_PROFILES)}")
        _options.update(_PROFILES[profile])
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            _options[name] = value
    _options["sci_mode"] = sci_mode


def get_printoptions():
    """The current print options, as a dict (what set_printoptions sets)."""
    return dict(_options)


class _Formatter:
    """Decides one width and notation for every element, as PyTorch's _Formatter does."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        finite = [v for v in values if math.isfinite(v)] if floating else values
        if not floating:
            self.width = max((len(str(v)) for v in values), default=1)
            return
        if not finite:
            self.width = 1          # PyTorch: the width comes from nonzero finite values
            return
        self.int_mode = all(v == math.floor(v) for v in finite)
        nonzero = [abs(v) for v in finite if v != 0]
        amax = max(nonzero, default=0.0)
        amin = min(nonzero, default=0.0)
        if _options["sci_mode"] is not None:
            self.sci_mode = _options["sci_mode"]
        elif amax and (amax / amin > 1000.0 or amax > 1e8 or
                       (not self.int_mode and amin < 1e-4)):
            self.sci_mode = True
        self.width = max((len(self.format(v)) for v in finite if v != 0), default=1)

    @staticmethod
    def _special(v):
        return "nan" if v != v else ("inf" if v > 0 else "-inf")

    def format(self, v):
        if not self.floating:
            s = str(v)
        elif not math.isfinite(v):
            s = self._special(v)
        elif self.sci_mode:
            s = f"{v:.{_options['precision']}e}"
        elif self.int_mode:
            s = f"{v:.0f}."
        else:
            s = f"{v:.{_options['precision']}f}"
        return s.rjust(getattr(self, "width", 0))


class _ComplexFormatter:
    """PyTorch's complex layout: real and imaginary parts each get their own _Formatter;
    an element prints as real, sign, imag, 'j' (`1.+2.j`, `3.-1.j`)."""

    def __init__(self, values):
        self.real = _Formatter([v.real for v in values], True)
        self.imag = _Formatter([v.imag for v in values], True)
        self.width = self.real.width + self.imag.width + 1

    def format(self, v):
        imag = (self.imag.format(v.imag) + "j").lstrip()
        sign = "" if imag[0] in "+-" else "+"
        return self.real.format(v.real) + sign + imag


def _summarise(arr, summarize):
    import numpy as np
    edge = _options["edgeitems"]
    if not summarize or arr.ndim == 0:
        return arr.reshape(-1)
    parts = []
    for sub in (arr[:edge], arr[-edge:]) if arr.shape[0] > 2 * edge else (arr,):
        for row in sub:
            parts.append(_summarise(row, True) if arr.ndim > 1 else np.asarray([row]))
    return np.concatenate(parts) if parts else arr.reshape(-1)


def _fmt(arr, fmt, indent, summarize):
    edge, width = _options["edgeitems"], _options["linewidth"]
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        items = [fmt.format(v) for v in arr.tolist()]
        if summarize and len(items) > 2 * edge:
            items = items[:edge] + [" ..."] + items[-edge:]
        per_line = max(1, (width - indent) // (fmt.width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = list(range(arr.shape[0]))
    if summarize and len(rows) > 2 * edge:
        rows = rows[:edge] + [None] + rows[-edge:]
    sep = "," + "\n" * (arr.ndim - 1) + " " * (indent + 1)
    body = [("..." if r is None else _fmt(arr[r], fmt, indent + 1, summarize)) for r in rows]
    return "[" + sep.join(body) + "]"


def tensor_repr(t):
    """PyTorch-style repr: tensor([...], dtype=..., device=...)."""
    from ember.core import _autograd, _state
    from ember.core import _tensor as _T
    b = _T._batch_level(t)
    if b is not None:         # a vmap wrapper shows its level and physical tensor
        inner = repr(b.value).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={b.level}, bdim=0, value=\n    {inner}\n)"
    dtype, device = t.dtype, t.device
    suffixes = []
    if device.type != "cpu":
        suffixes.append(f"device='{device}'")
    if t.is_meta:
        body = "..."
        suffixes.insert(0, f"size={tuple(t.shape)}")
    elif t.numel() == 0:
        body = "[]"
        if t.dim() != 1:
            suffixes.append(f"size={tuple(t.shape)}")
    else:
        arr = t.numpy(force=True)
        summarize = arr.size > _options["threshold"]
        values = _summarise(arr, summarize).tolist()
        fmt = _ComplexFormatter(values) if dtype.is_complex else \
            _Formatter(values, dtype.is_floating_point)
        body = _fmt(arr, fmt, len("tensor("), summarize)
    default = _state.get_default_dtype()
    if dtype.is_complex:        # the default complex dtype follows the default float one
        default = default.to_complex() if default.name in ("float32", "float64") else None
    default_float = dtype is default
    implicit = default_float or dtype.name in ("int64", "bool")
    if not implicit or (t.numel() == 0 and (dtype.is_complex or dtype.name != "float32"
                                            and not default_float)):
        suffixes.append(f"dtype={dtype}")
    # as PyTorch: a non-leaf shows where it came from, a leaf that records shows that it does
    tangent = _autograd._fw_tangent(t)
    if tangent is not None:
        suffixes.append(f"tangent={tangent!r}")
    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes("tensor(" + body, suffixes, len("tensor("))


def _add_suffixes(text, suffixes, indent):
    """PyTorch's layout of ', dtype=...' and the like: a suffix that would pass the line
    width starts a new line."""
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > _options["linewidth"]:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"
