"""Walk PyTorch's public API and look each name up in ember.

``collect()`` returns one row per (module, name): whether ember has the name at the same
module path, whether a class reports PyTorch's ``__module__`` (with ``torch`` read as
``ember``), and whether a callable accepts PyTorch's keyword argument names.  The reviewed
omissions (``_omissions.py``) are applied here, so the table separates "left out on purpose"
from "not there yet".  Run ``python tests/api/_walk.py`` to print the table.
"""
import ast
import dataclasses
import importlib
import inspect
import pkgutil
import re
import sys
import types
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
import _omissions  # noqa: E402

MODULES = [
    "torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.nn.init",
    "torch.nn.utils", "torch.nn.utils.rnn", "torch.nn.utils.parametrizations",
    "torch.optim", "torch.optim.lr_scheduler", "torch.autograd", "torch.utils.data",
    "torch.linalg", "torch.fft", "torch.special", "torch.amp", "torch.testing",
    "torch.utils.checkpoint", "torch.cuda", "torch.distributions", "torch.serialization",
    "torch.futures",
]


def modules():
    """The walked module paths, every public ``torch.nn.modules.*`` submodule included."""
    subs = sorted(f"torch.nn.modules.{m.name}" for m in pkgutil.iter_modules(
        torch.nn.modules.__path__) if not m.name.startswith("_"))
    i = MODULES.index("torch.nn.utils")
    return MODULES[:i] + ["torch.nn.modules"] + subs + MODULES[i:]


def _torch_made(obj):
    """Whether ``obj`` is PyTorch's own (not a re-exported stdlib/typing name)."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__.startswith("torch")
    if isinstance(obj, (bool, int, float, complex, str)) or obj is None:
        return True
    mod = getattr(obj, "__module__", None)
    if isinstance(obj, type) or callable(obj):
        return mod is None or mod.startswith("torch")
    return type(obj).__module__.startswith("torch")


def _resolve(path):
    if path == "torch.Tensor":
        return torch.Tensor
    return importlib.import_module(path)


# plumbing PyTorch's modules import for their own use (type hints, JIT and override hooks)
_PLUMBING = ("typing", "torch.overrides", "torch._jit_internal", "torch.types",
             "torch.utils._python_dispatch", "torch.utils._pytree", "torch._logging")


def _plumbing(name, obj, path):
    if name == "TYPE_CHECKING" or (name == "Tensor" and path != "torch"):
        return True
    mod = getattr(obj, "__module__", None) or ""
    return callable(obj) and mod.startswith(_PLUMBING)


def public_names(path):
    """A module's public names: its ``__all__`` plus the PyTorch-made names ``dir()`` shows
    that ``__all__`` leaves out (dtypes, layouts, memory formats, submodules, and the module's
    own classes and functions), less typing and dispatch plumbing."""
    obj = _resolve(path)
    names = {n for n in dir(obj) if not n.startswith("_")}
    if path == "torch.Tensor":
        return sorted(names)
    listed = set(getattr(obj, "__all__", ()))
    extra = set()
    for n in names - listed:
        o = getattr(obj, n, None)
        if not _torch_made(o) or _plumbing(n, o, path):
            continue
        if isinstance(o, types.ModuleType):
            if o.__name__ == f"{path}.{n}":             # its own submodules only
                extra.add(n)
        elif listed or path.startswith("torch.nn.modules."):
            # a module with __all__ (or a layer file): its own definitions and constants
            own = getattr(o, "__module__", None) in (path, None)
            if not callable(o) or own or (path == "torch" and (
                    getattr(o, "__module__", "") or "").startswith("torch._C")):
                extra.add(n)
        else:
            extra.add(n)
    return sorted(listed | extra)


def ember_path(torch_path):
    return "ember" + torch_path[len("torch"):]


def _ember_module(path):
    try:
        if path == "ember.Tensor":
            import ember
            return ember.Tensor
        return importlib.import_module(path)
    except Exception:
        return None


# -- keyword names --------------------------------------------------------------------------

_SIG_LINE = re.compile(r"^\s*(?:torch\.|Tensor\.)?([A-Za-z_][\w.]*)\((.*)\)\s*(?:->.*)?$")


def _doc_params(obj, name):
    """Keyword-capable parameter names from the docstring's ``name(...)`` lines (the union
    over overloads), or None when the docstring shows no signature."""
    doc = getattr(obj, "__doc__", None) or ""
    found = None
    for line in doc.splitlines()[:40]:
        m = _SIG_LINE.match(line)
        if not m or m.group(1).split(".")[-1] != name:
            continue
        args = re.sub(r"\[[^\]]*\]\s*(?=[,)=]|$)", "", m.group(2))   # drop "[ , dim]" optional marks
        try:
            fn = ast.parse(f"def f({args}): pass").body[0]
        except SyntaxError:
            continue
        a = fn.args
        kw = {p.arg for p in a.args + a.kwonlyargs}
        found = (found or set()) | kw
    return found


def _schema_params(name, method):
    """Argument names of the ATen operator ``name`` over its overloads, as Python's
    bindings spell them (``self`` is ``input`` for functions, out arguments are ``out``)."""
    try:
        schemas = torch._C._jit_get_schemas_for_operator(f"aten::{name}")
    except Exception:
        return set()
    out = set()
    for s in schemas:
        for a in s.arguments:
            if a.is_out:
                out.add("out")
            elif a.name == "self":
                if not method:
                    out.add("input")
            else:
                out.add(a.name)
    return out


class _Probe:
    """A value no argument parser accepts: its rejection names the argument it matched."""


def _binds(fn, name, key, method):
    """Whether PyTorch's builtin ``name`` takes ``key`` as a keyword: call it with a value of
    the wrong type and read which argument its parser complains about."""
    try:
        target = getattr(torch.ones(2, 2), name) if method else fn
        target(**{key: _Probe()})
    except TypeError as e:
        msg = str(e)
        if "expected one of:" in msg:
            listed = msg.split("expected one of:", 1)[1]
            return re.search(rf"\b{re.escape(key)}\b\s*(=|\)|,)", listed) is not None
        return f"'{key}'" in msg.splitlines()[0] and "unexpected keyword" not in msg
    except Exception:
        return True
    return True


def keyword_names(obj, name, method=False):
    """(PyTorch's keyword-capable parameter names, where they came from) or (None, reason).
    Python functions and classes answer through ``inspect.signature``; builtins through
    their docstrings' and ATen schemas' names, each confirmed by calling the builtin."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        sig = None
    if sig is not None:
        params = list(sig.parameters.values())
        if params and (isinstance(obj, type) or method) and params[0].kind in (
                inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            params = params[1:]             # self (a method's tensor, a class's instance)
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        names = {p.name for p in params if p.kind in kinds}
        # a bare (*args, **kwargs) forwarder says nothing about the names
        if names or not all(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
            return names, "signature"
    doc = _doc_params(obj, name) or set()
    if not isinstance(obj, (types.BuiltinFunctionType, types.MethodDescriptorType)):
        return (doc - {"self"}, "docstring") if doc else (None, "no signature")
    candidates = (doc | _schema_params(name, method)) - {"self"}
    names = {k for k in candidates if _binds(obj, name, k, method)}
    if not candidates:
        return None, "no signature"
    return names, "builtin"


def accepts(obj, names, method=False):
    """The names of ``names`` that ember's ``obj`` does not take as keywords."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if method and params and params[0].kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                 inspect.Parameter.POSITIONAL_OR_KEYWORD):
        params = params[1:]
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return set()
    have = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return set(names) - have


# -- the walk -------------------------------------------------------------------------------

@dataclasses.dataclass
class Row:
    module: str                 # PyTorch's module path ("torch.nn.functional")
    name: str
    status: str                 # "present", "omitted", "missing", "wrong-module"
    detail: str = ""            # the omission category, the module found, ...
    kw_missing: tuple = ()      # PyTorch keywords ember's callable does not take
    kw_checked: str = ""        # "signature", "docstring" or why it was skipped


def _qualified(module, name):
    return f"{module}.{name}"


def _pending(qual):
    owner = _omissions.pending(qual)
    return f"pending: {owner}" if owner else ""


def _check_row(module, name, tobj, emod):
    qual = _qualified(module, name)
    cat = _omissions.category(qual)
    if cat is not None:
        return Row(module, name, "omitted", cat)
    if emod is None:
        return Row(module, name, "missing", _pending(qual) or "module not importable")
    try:
        eobj = getattr(emod, name)
    except Exception:
        return Row(module, name, "missing", _pending(qual))
    if isinstance(tobj, type) and (tobj.__module__ or "").startswith("torch"):
        want = {ember_path(tobj.__module__)}
        # PyTorch's C++ bindings (ember has none) and torch.jit (omitted: torch.futures.Future
        # reports it): the public path stands in
        if tobj.__module__.startswith(("torch._C", "torch.jit")):
            want.add(ember_path(module))
        got = getattr(eobj, "__module__", None)
        if got not in want:
            return Row(module, name, "wrong-module", f"{got} (PyTorch: {tobj.__module__})")
    row = Row(module, name, "present")
    if callable(tobj) and not isinstance(tobj, types.ModuleType) and callable(eobj):
        method = module == "torch.Tensor"
        tnames, how = keyword_names(tobj, name, method)
        row.kw_checked = how
        if tnames is not None:
            miss = accepts(eobj, tnames, method and not isinstance(tobj, type))
            if miss is None:
                row.kw_checked = "ember has no signature"
            else:
                row.kw_missing = tuple(sorted(miss - _omissions.ignored_keywords(qual)))
    return row


def collect():
    rows = []
    for module in modules():
        tmod = _resolve(module)
        emod = _ember_module(ember_path(module))
        for name in public_names(module):
            try:
                tobj = getattr(tmod, name)
            except Exception:
                continue
            rows.append(_check_row(module, name, tobj, emod))
    return rows


def _missing(r):
    return r.status in ("missing", "wrong-module")


def table(rows):
    """Per module: (present, omitted, missing, of which pending elsewhere, percent present
    of the non-omitted names)."""
    out = {}
    for r in rows:
        p, o, m, q = out.get(r.module, (0, 0, 0, 0))
        out[r.module] = (p + (r.status == "present"), o + (r.status == "omitted"),
                         m + _missing(r), q + (_missing(r) and r.detail.startswith("pending")))
    return {k: (p, o, m, q, 100.0 * p / (p + m) if p + m else 100.0)
            for k, (p, o, m, q) in out.items()}


def overall(rows, exclude_pending=False):
    """(present, missing, percent) over every non-omitted name (or over those no other
    piece of work owns)."""
    keep = [r for r in rows if not (exclude_pending and r.detail.startswith("pending"))]
    p = sum(r.status == "present" for r in keep)
    m = sum(_missing(r) for r in keep)
    return p, m, 100.0 * p / (p + m)


def format_table(rows):
    t = table(rows)
    width = max(len(k) for k in t)
    kw = {}
    for r in rows:
        kw[r.module] = kw.get(r.module, 0) + bool(r.kw_missing)
    head = f"{'module':<{width}}  present  omitted  missing  pending      %  kw-gaps"
    lines = [head, "-" * len(head)]
    for k, (p, o, m, q, pct) in t.items():
        lines.append(f"{k:<{width}}  {p:7d}  {o:7d}  {m:7d}  {q:7d}  {pct:5.1f}  {kw[k]:7d}")
    p, m, pct = overall(rows)
    o = sum(r.status == "omitted" for r in rows)
    q = sum(_missing(r) and r.detail.startswith("pending") for r in rows)
    lines.append("-" * len(head))
    lines.append(f"{'overall':<{width}}  {p:7d}  {o:7d}  {m:7d}  {q:7d}  {pct:5.1f}  "
                 f"{sum(kw.values()):7d}")
    p, m, pct = overall(rows, exclude_pending=True)
    lines.append(f"{'overall, pending excluded':<{width}}  {p:7d}  {'':7s}  {m:7d}  {'':7s}  "
                 f"{pct:5.1f}")
    return "\n".join(lines)


if __name__ == "__main__":
    rows = collect()
    if "-v" in sys.argv:
        for r in rows:
            if _missing(r) and not r.detail.startswith("pending"):
                print(f"{r.status:12s} {r.module}.{r.name}  {r.detail}")
            elif r.kw_missing:
                print(f"{'keywords':12s} {r.module}.{r.name}  {', '.join(r.kw_missing)}")
    print(format_table(rows))
