"""ember/__init__.pyi, the type stub of the façade (ember/_facade_stub.py): current, complete
and a valid stub."""
import ast
import inspect
import subprocess
import sys

import ember
from ember import _facade_stub


def test_stub_is_current():
    # a fresh interpreter: the classes' homes depend only on what `import ember` loads
    r = subprocess.run([sys.executable, "-m", "ember._facade_stub", "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def _declared():
    tree = ast.parse(open(_facade_stub.STUB).read())
    names = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign):
            names[node.target.id] = node
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                names[a.asname or a.name] = node
    return names


def test_stub_declares_every_public_name_and_the_submodules():
    declared = _declared()
    assert set(ember.__all__) <= set(declared)
    for module in ("nn", "optim", "linalg", "fft", "distributed", "utils", "autograd"):
        assert isinstance(declared[module], ast.ImportFrom), module
    assert "__getattr__" in declared          # anything else: Any, not an error


def test_functions_take_pytorchs_arguments_and_say_what_they_return():
    declared = _declared()
    for name in ("add", "sum", "clamp", "zeros", "matmul", "where", "cat", "softmax"):
        node = declared[name]
        args = node.args
        stub = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        sig = [p.name for p in inspect.signature(getattr(ember, name)).parameters.values()
               if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        assert stub == sig, name
    ret = {n: ast.unparse(f.returns) for n, f in declared.items()
           if isinstance(f, ast.FunctionDef)}
    assert ret["add"] == ret["zeros"] == ret["cat"] == ret["abs_"] == "Tensor"
    assert ret["is_tensor"] == ret["allclose"] == "builtins.bool"
    assert ret["conv2d"] == ret["isclose"] == ret["view_as_real"] == "Tensor"
    assert ret["set_num_threads"] == ret["set_default_dtype"] == "None"
    assert ret["sort"] == ret["lstm"] == "Any"   # tuples: not claimed to be a Tensor
    # the dtypes shadow the builtins, so values are typed through builtins
    assert ast.unparse(declared["float32"].annotation) == "dtype"
    assert ast.unparse(declared["pi"].annotation) == "builtins.float"
    # the classes come from the modules the façade takes them from
    assert declared["Tensor"].module == "ember.core.tensor"
