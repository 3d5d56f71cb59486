"""Writes ``ember/__init__.pyi``, the type stub of the façade, so that IDEs and type checkers
see every public name of ``ember`` with its signature: the functions (Cython ones included,
which a checker cannot read otherwise) with PyTorch's argument names, typed ``Any``, and
``Tensor`` as the return of the tensor-valued ones; the classes from the modules that define
them; dtypes, memory formats and constants typed; the submodules; a module ``__getattr__``
for anything else.  Tensor's own stub is ``core/tensor.pyi`` (core/tensor_stub.py), whose
parameter rendering this reuses.

    python -m ember._facade_stub            # rewrite ember/__init__.pyi
    python -m ember._facade_stub --check    # exit 1 if it is stale

tests/test_facade_stub.py fails when the stub is stale."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STUB = os.path.join(HERE, "__init__.pyi")

# tensor-valued functions beyond the op table's and Tensor's tensor-valued methods: the
# factories, random sampling, joins and products
_TENSOR_VALUED = frozenset("""
    arange as_strided as_tensor asarray atleast_1d atleast_2d atleast_3d bernoulli
    block_diag broadcast_to cartesian_prod cat cdist column_stack combinations complex
    concat concatenate corrcoef cov cumulative_trapezoid diag_embed diagflat dstack einsum
    empty empty_like empty_strided eye from_dlpack from_numpy frombuffer full full_like
    hstack kron linspace logspace multinomial normal ones ones_like outer poisson polar rand
    rand_like randint randint_like randn randn_like randperm row_stack scalar_tensor stack
    tensor tensordot tril_indices triu_indices vander vstack zeros zeros_like""".split())
_RETURNS = {"is_tensor": "builtins.bool", "is_storage": "builtins.bool",
            "is_grad_enabled": "builtins.bool", "is_inference_mode_enabled": "builtins.bool",
            "equal": "builtins.bool", "allclose": "builtins.bool", "numel": "builtins.int",
            "get_num_threads": "builtins.int", "manual_seed": "Generator",
            "initial_seed": "builtins.int", "seed": "builtins.int", "typename": "builtins.str",
            "get_default_dtype": "dtype", "result_type": "dtype", "promote_types": "dtype",
            "get_default_device": "device"}
# how a value of these types is annotated (the stub's own names; ember.float is the dtype)
_VALUE_TYPES = {"dtype": "dtype", "memory_format": "memory_format", "layout": "layout",
                "Generator": "Generator", "float": "builtins.float", "bool": "builtins.bool",
                "NoneType": "None"}


def _returns(name, tensor_valued):
    if name in _RETURNS:
        return _RETURNS[name]
    if name in tensor_valued or (name.endswith("_") and not name.startswith("_")):
        return "Tensor"                  # an op, or a torch.name_ in-place form
    if name.startswith("is_"):
        return "builtins.bool"
    return "Any"


def _facade_imports():
    """{name: module} for the names ember/__init__.py imports from its own modules."""
    import ast
    with open(os.path.join(HERE, "__init__.py")) as f:
        tree = ast.parse(f.read())
    return {a.asname or a.name: n.module for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("ember.")
            for a in n.names}


def _home(obj, name, facade):
    """The module a class is imported from: the one the façade imports it from, else the
    defining one, else one that holds it under this name, a Python module (a checker reads
    it) before a compiled one, then the shortest path."""
    if name in facade and getattr(sys.modules.get(facade[name]), name, None) is obj:
        return facade[name]
    found = []
    for modname, mod in list(sys.modules.items()):
        if not modname.startswith("ember.") or getattr(mod, name, None) is not obj:
            continue
        source = (getattr(mod, "__file__", "") or "").endswith(".py")
        found.append((modname != obj.__module__, not source, len(modname), modname))
    return min(found)[3] if found else None


def render():
    """The stub's text, from the façade as it is now."""
    import ember
    from ember import _lazy
    from ember.core import _tensor as _T
    from ember.core import tensor_stub as _ts
    from ember.core._dispatch import all_ops
    # the op table's functions, the ops whose schema returns one tensor, the known others
    tensor_valued = set(_T.table_functions()) | _ts._TENSOR_VALUED | _TENSOR_VALUED | {
        name for name, op in all_ops().items()
        if (op.schema or "").rpartition("->")[2].strip() in ("Tensor", "Tensor(a)", "Tensor(a!)")}
    submodules = sorted(n for n in _lazy.SUBMODULES if not n.startswith("_"))
    facade, imports, body = _facade_imports(), {}, []
    for name in sorted(ember.__all__):
        value = getattr(ember, name)
        if isinstance(value, type):
            home = _home(value, name, facade)
            if home is None:
                body.append(f"{name}: Any")
            else:
                imports[name] = home
        elif callable(value) and type(value).__name__ not in _VALUE_TYPES:
            params = _ts._params(value, False)
            params = ["*args: Any", "**kwargs: Any"] if params is None else params
            body.append(f"def {name}({', '.join(params)}) -> "
                        f"{_returns(name, tensor_valued)}: ...")
        else:
            body.append(f"{name}: {_VALUE_TYPES.get(type(value).__name__, 'Any')}")
    lines = ["# Generated by `python -m ember._facade_stub` from the façade as it is at run",
             "# time; do not edit (tests/test_facade_stub.py checks it is current).",
             "import builtins",
             "from typing import Any", ""]
    for name, mod in sorted(imports.items(), key=lambda kv: (kv[1], kv[0])):
        line = f"from {mod} import {name} as {name}"
        lines.append(line if len(line) <= 100 else     # as ruff's isort wraps it
                     f"from {mod} import (\n    {name} as {name},\n)")
    lines += [""] + [f"from . import {m} as {m}" for m in submodules] + [""]
    lines += body
    lines += ["", "def __getattr__(name: builtins.str) -> Any: ..."]
    return "\n".join(lines) + "\n"


def main(argv):
    from ember.core.tensor_stub import write_or_check
    return write_or_check(STUB, render(), argv, "python -m ember._facade_stub")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
