"""Python composites made operators (``@composite``): they run their body directly while no
mode key is live, a kernel at a mode key intercepts them, and they still behave as plain
functions (names, docs, signatures, methods, pickling)."""
import inspect
import pickle

import ember.nn.functional as F
import pytest
from ember.core import _dispatch, _state
from ember.core._dispatch import DispatchKey

import ember

K = DispatchKey


def test_composites_are_operators_with_their_body_as_entry():
    op = _dispatch.get_op("linear")
    assert op.entry is F.linear.__wrapped__ and op.family == -1
    assert F.linear.__name__ == "linear" and "weight" in F.linear.__doc__
    assert list(inspect.signature(F.linear).parameters) == ["input", "weight", "bias"]
    assert pickle.loads(pickle.dumps(ember.addmm)) is ember.addmm
    with pytest.raises(RuntimeError, match="already defined"):
        _dispatch.composite("linear")(lambda x: x)


def test_mode_key_kernel_intercepts_a_composite():
    op = _dispatch.get_op("mm")
    seen = []

    def kernel(*args, **kwargs):
        seen.append(len(args))
        return op.entry(*args, **kwargs)

    a = ember.ones(2, 2)
    op.register(K.PythonMode, kernel)
    included, excluded = _state._get_tls_keys()
    try:
        ember.mm(a, a)
        assert seen == []                          # key not live on this thread
        _state._set_tls_keys(included | (1 << int(K.PythonMode)), excluded)
        assert _dispatch.mode_keys_active()
        assert ember.mm(a, a).tolist() == [[2.0, 2.0], [2.0, 2.0]] and seen == [2]
        _state._set_tls_keys(included | (1 << int(K.PythonMode)),
                             excluded | (1 << int(K.PythonMode)))
        ember.mm(a, a)
        assert seen == [2]                         # excluded: the body runs directly
    finally:
        _state._set_tls_keys(included, excluded)
        op.unregister(K.PythonMode)


def test_composite_binds_as_a_method():
    class T:
        f = _dispatch.composite("_test_method_composite")(lambda self, x: (self, x))
    t = T()
    assert t.f(1) == (t, 1)


def test_profiler_key_is_outermost():
    assert int(K.Profiler) > int(K.PythonMode) > int(K.Autocast)
