"""The dispatcher: key order, key sets, fallthrough, kernels registered at functionality
keys, thread-local exclusion, backend overrides, and dispatch_trace."""
import sys
import threading

import pytest
from ember.core import _dispatch, _state, dispatch_trace
from ember.core._dispatch import DispatchKey

import ember

K = DispatchKey


def bit(k):
    return 1 << int(k)


def test_key_order_is_priority():
    order = [K.PythonMode, K.Autocast, K.Autograd, K.ADInplaceOrView, K.Python,
             K.BackendSelect, K.PrivateUse1, K.Meta, K.XPU, K.MPS, K.CUDA, K.CPU]
    assert [int(k) for k in order] == sorted((int(k) for k in order), reverse=True)
    assert all(int(k) < 32 for k in (K.CPU, K.CUDA, K.MPS, K.XPU, K.Meta))


def test_tensor_keyset():
    x = ember.ones(2)
    names = _dispatch.keyset_names(x._keys)
    assert names == ["ADInplaceOrView", "CPU"]       # Autograd only while requiring grad
    assert _dispatch.keyset_names(x.requires_grad_()._keys) == ["Autograd", "ADInplaceOrView",
                                                                "CPU"]
    assert _dispatch.keyset_names(ember.empty(1, device="meta")._keys)[-1] == "Meta"


def test_trace_reaches_cpu_backend():
    x = ember.ones(2)
    steps = dispatch_trace("add", x, x)
    assert [s[0] for s in steps] == ["ADInplaceOrView", "CPU"]
    assert steps[0][1] == "fallthrough"
    assert "backend 'cpu'" in steps[-1][1] and "'cpu'" in steps[-1][1]
    steps = dispatch_trace("add", x.requires_grad_(), x)
    assert steps[0][0] == "Autograd" and "AutogradKernel" in steps[0][1]
    assert dispatch_trace("matmul", ember.empty(2, device="meta"))[-1][0] == "Meta"


def test_kernel_at_functionality_key_intercepts_and_redispatches():
    op = _dispatch.get_op("mul")
    seen = []

    def autocast_mul(a, b, alpha=1, out=None):
        seen.append((a.shape, b))
        included, excluded = _state._get_tls_keys()
        _state._set_tls_keys(included, excluded | bit(K.Autocast))   # redispatch below us
        try:
            return ember.mul(a.double(), b)
        finally:
            _state._set_tls_keys(included, excluded)

    x = ember.ones(3)
    included, excluded = _state._get_tls_keys()
    _state._set_tls_keys(included | bit(K.Autocast), excluded)
    op.register(K.Autocast, autocast_mul)
    try:
        y = x * 2
        assert y.dtype == ember.float64 and y.tolist() == [2.0, 2.0, 2.0]
        assert seen == [((3,), 2)]
        assert dispatch_trace("mul", x)[0][0] == "Autocast"
        assert "autocast_mul" in dispatch_trace("mul", x)[0][1]
        assert (x + 2).dtype == ember.float32            # other ops fall through Autocast
    finally:
        op.unregister(K.Autocast)
        _state._set_tls_keys(included, excluded)
    assert (x * 2).dtype == ember.float32


def test_thread_local_keys_do_not_leak():
    included, excluded = _state._get_tls_keys()
    _state._set_tls_keys(included | bit(K.Python), excluded)
    seen = {}
    try:
        t = threading.Thread(target=lambda: seen.setdefault("keys", _state._get_tls_keys()))
        t.start()
        t.join()
    finally:
        _state._set_tls_keys(included, excluded)
    assert seen["keys"] == (0, 0)


def _reinstall_fake_kernels():
    """Put back the fake tensors' Python-key kernels a test replaced, if they were loaded
    (later tests export and compile with fake tensors)."""
    if "ember._subclasses._fake_impls" in sys.modules:
        sys.modules["ember._subclasses._fake_impls"].install()


def test_non_fallthrough_key_without_kernel_raises():
    x = ember.ones(2)
    included, excluded = _state._get_tls_keys()
    _state._set_tls_keys(included | (1 << int(K.Python)), excluded)
    _dispatch.set_fallthrough(int(K.Python), False)
    try:
        with pytest.raises(NotImplementedError, match="no kernel registered for dispatch key "
                                                      "Python"):
            x + x
        op = _dispatch.get_op("add")
        previous = op.trace(1 << int(K.Python))[0][1]          # fake tensors' kernel, if any
        op.register(K.Python, _dispatch.FALLTHROUGH)        # per-op fallthrough
        try:
            assert (x + x).tolist() == [2.0, 2.0]
        finally:
            op.unregister(K.Python)
            _reinstall_fake_kernels()
    finally:
        _dispatch.set_fallthrough(int(K.Python), previous.startswith("kernel") is False)
        _state._set_tls_keys(included, excluded)
    assert (x + x).tolist() == [2.0, 2.0]


def test_backend_override_for_one_op():
    op = _dispatch.get_op("exp")
    calls = []

    def fused_exp(a, out=None):
        calls.append(a)
        return ember.full(a.shape, 7.0)

    op.register(K.CPU, fused_exp)
    try:
        assert ember.exp(ember.zeros(2)).tolist() == [7.0, 7.0] and len(calls) == 1
        assert "fused_exp" in dispatch_trace("exp", ember.zeros(1))[-1][1]
    finally:
        op.unregister(K.CPU)
    assert ember.exp(ember.zeros(2)).tolist() == [1.0, 1.0]


def test_ops_have_schema_and_shape_rule():
    add = _dispatch.get_op("add")
    assert add.schema.startswith("add(Tensor self, Tensor other")
    assert add.shape_rule((2, 1), (3,)) == (2, 3)
    assert _dispatch.get_op("matmul").shape_rule((5, 2, 3), (3, 4)) == (5, 2, 4)
    assert _dispatch.get_op("sum").shape_rule((2, 3, 4), (1,), True) == (2, 1, 4)
    with pytest.raises(RuntimeError, match="already defined"):
        _dispatch.Op("add", "", 0, 0)


def test_shape_rules_agree_with_eager():
    from ember.core import shape_rules
    for sa, sb in [((3, 1), (4,)), ((2, 1, 5), (3, 1)), ((), (2,)), ((0,), (1,))]:
        assert (ember.ones(*sa) + ember.ones(*sb)).shape == shape_rules.broadcast_shapes(sa, sb)
    for sa, sb in [((3,), (3, 2)), ((4, 1, 2, 3), (5, 3, 1)), ((2, 3), (3,))]:
        assert (ember.ones(*sa) @ ember.ones(*sb)).shape == shape_rules.matmul(sa, sb)


def test_view_ops_go_through_the_dispatcher():
    calls = []

    def traced(name):
        def kernel(t, *args):
            calls.append(name)
            included, excluded = _state._get_tls_keys()
            _state._set_tls_keys(included, excluded | bit(K.Python))   # run the core's view
            try:
                return getattr(t, name)(*args)
            finally:
                _state._set_tls_keys(included, excluded)
        return kernel

    names = ["view", "transpose", "unsqueeze", "narrow", "select", "expand"]
    x = ember.ones(2, 3)
    included, excluded = _state._get_tls_keys()
    for n in names:
        _dispatch.get_op(n).register(K.Python, traced(n))
    _state._set_tls_keys(included | bit(K.Python), excluded)
    try:
        y = x.view(3, 2).transpose(0, 1).unsqueeze(0).narrow(2, 0, 1).select(0, 0).expand(2, 4)
        assert y.shape == (2, 4) and calls == names
    finally:
        _state._set_tls_keys(included, excluded)
        for n in names:
            _dispatch.get_op(n).unregister(K.Python)
        _reinstall_fake_kernels()


def test_dispatch_key_set():
    ks = _dispatch.DispatchKeySet(ember.ones(1, requires_grad=True)._keys)
    assert list(ks) == [K.Autograd, K.ADInplaceOrView, K.CPU] and len(ks) == 3
    assert ks.has(K.CPU) and not ks.has(K.CUDA) and ks.highest_priority_key() == K.Autograd
    assert repr(ks) == "DispatchKeySet(Autograd, ADInplaceOrView, CPU)"
    cpu_only = ks - _dispatch.DispatchKeySet([K.Autograd, K.ADInplaceOrView])
    assert cpu_only == _dispatch.DispatchKeySet([K.CPU])
    assert (cpu_only | _dispatch.DispatchKeySet([K.Meta])).has(K.Meta)
    assert _dispatch.DispatchKeySet().highest_priority_key() == K.Undefined
