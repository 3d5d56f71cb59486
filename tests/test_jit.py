"""ember.jit (ember/jit.py): torch.jit's names without TorchScript.  script/trace return their
argument (documented: PyTorch returns a ScriptModule/ScriptFunction), the decorators return
the function, the eager answers (is_scripting, annotate, isinstance, fork/wait) match
PyTorch's, and save/load say that they need TorchScript."""
import typing
from typing import Dict, List, Optional, Tuple, Union

import pytest
import torch

import ember


def test_torch_jit_names_are_there():
    missing = [n for n in torch.jit.__all__ if n != "CompilationUnit"
               and not hasattr(ember.jit, n)]
    assert missing == []
    assert ember.jit.Final is torch.jit.Final is typing.Final


def test_script_and_trace_return_their_argument_and_it_runs():
    model = ember.nn.Linear(3, 2)
    x = ember.randn(4, 3)
    assert ember.jit.script(model) is model
    assert ember.jit.trace(model, (x,)) is model
    assert ember.jit.trace_module(model, {"forward": (x,)}) is model
    assert ember.jit.freeze(model) is model
    assert ember.jit.optimize_for_inference(model) is model

    def f(a, b):
        return a * 2 + b if a.sum() > 0 else a - b     # data-dependent: runs as Python

    g = ember.jit.script(f)
    assert g is f and ember.jit.trace(f, (x, x)) is f
    ember.testing.assert_close(g(ember.ones(2), ember.ones(2)), ember.full((2,), 3.0))
    ember.testing.assert_close(g(-ember.ones(2), ember.ones(2)), ember.full((2,), -2.0))
    assert not isinstance(model, ember.jit.ScriptModule)
    assert not isinstance(f, ember.jit.ScriptFunction)


def test_decorators_return_the_function():
    def f(x):
        return x + 1

    for lib in (torch.jit, ember.jit):
        assert lib.unused(f)(1) == 2
        assert lib.export(f)(1) == 2
        assert lib.ignore(f)(1) == 2
    assert ember.jit.ignore(f) is f and ember.jit.unused(f) is f and ember.jit.export(f) is f
    assert ember.jit.ignore()(f) is f
    assert ember.jit.script_if_tracing(f) is f
    assert ember.jit.interface(f) is f
    with pytest.raises(RuntimeError, match="must be a bool or a function"):
        ember.jit.ignore("yes")


def test_is_scripting_tracing_annotate():
    assert ember.jit.is_scripting() is torch.jit.is_scripting() is False
    assert ember.jit.is_tracing() is torch.jit.is_tracing() is False
    v = [1, 2]
    assert ember.jit.annotate(List[int], v) is v
    assert torch.jit.annotate(List[int], v) is v
    assert tuple(ember.jit.Attribute(1, int)) == tuple(torch.jit.Attribute(1, int))


@pytest.mark.parametrize("obj,target", [
    ([1, 2], List[int]), ([1, "a"], List[int]), ([], List[str]), ((1, 2), List[int]),
    ({"a": 1}, Dict[str, int]), ({"a": "b"}, Dict[str, int]), ((1, "a"), Tuple[int, str]),
    ((1, 2, 3), Tuple[int, str]), (None, Optional[int]), (3, Optional[int]),
    ("x", Union[int, str]), (1.5, Union[int, str]), (3, int), ("3", int), (3, (str, int)),
    ([[1], [2]], List[List[int]]), ({"a": [1.0]}, Dict[str, List[float]]),
])
def test_isinstance_matches_torch(obj, target):
    assert ember.jit.isinstance(obj, target) == torch.jit.isinstance(obj, target)


def test_isinstance_of_tensors():
    assert ember.jit.isinstance([ember.ones(1)], List[ember.Tensor])
    assert not ember.jit.isinstance([1], List[ember.Tensor])
    with pytest.raises(RuntimeError, match="must be a type"):
        ember.jit.isinstance(1, "int")


def test_fork_and_wait():
    fut = ember.jit.fork(lambda a, b: a + b, 1, b=2)
    assert ember.jit.wait(fut) == torch.jit.wait(torch.jit.fork(lambda a, b: a + b, 1, b=2)) == 3
    assert isinstance(fut, ember.jit.Future)
    bad = ember.jit.fork(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        ember.jit.wait(bad)


def test_fusion_settings():
    assert ember.jit.onednn_fusion_enabled() is torch.jit.onednn_fusion_enabled() is False
    ember.jit.enable_onednn_fusion(True)
    try:
        assert ember.jit.onednn_fusion_enabled() is True
    finally:
        ember.jit.enable_onednn_fusion(False)
    previous = ember.jit.set_fusion_strategy([("DYNAMIC", 3)])
    assert ember.jit.set_fusion_strategy(previous) == [("DYNAMIC", 3)]
    with ember.jit.strict_fusion():
        pass


@pytest.mark.parametrize("call", [lambda: ember.jit.save(ember.nn.Linear(1, 1), "m.pt"),
                                  lambda: ember.jit.load("m.pt"),
                                  lambda: ember.jit.export_opnames(ember.nn.Linear(1, 1))])
def test_archives_need_torchscript(call):
    with pytest.raises(NotImplementedError, match="TorchScript"):
        call()
