"""core/tensor.pyi, the type stub of ember.Tensor (core/tensor_stub.py): current, complete
and a valid stub."""
import ast
import inspect

from ember.core import tensor_stub

import ember


def test_stub_is_current():
    with open(tensor_stub.STUB) as f:
        assert f.read() == tensor_stub.render(), \
            "core/tensor.pyi is stale: run python -m ember.core.tensor_stub"


def test_stub_declares_every_public_method_with_its_arguments():
    tree = ast.parse(open(tensor_stub.STUB).read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    declared = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
    public = {n for n in dir(ember.Tensor) if not n.startswith("_")}
    assert public <= set(declared)
    # the arguments are PyTorch's names, as the method takes them
    for name in ("add", "sum", "clamp", "index_select", "masked_fill", "to", "view"):
        args = declared[name].args
        stub = [a.arg for a in args.args[1:] + args.kwonlyargs]
        sig = [p.name for p in list(inspect.signature(getattr(ember.Tensor, name))
                                    .parameters.values())[1:]
               if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        assert stub == sig, name
    # what they return, where known
    ret = {n: ast.unparse(f.returns) for n, f in declared.items()}
    assert ret["add"] == ret["exp"] == ret["add_"] == ret["__add__"] == "Tensor"
    assert ret["dim"] == "_int" and ret["is_contiguous"] == "_bool"     # builtins.int, .bool
    assert ret["shape"] == "Size"
