"""Guards and recompiles: what a captured graph assumed is checked before it is reused."""
import warnings

import ember.nn as nn
import pytest

import ember
import ember._dynamo as dynamo
from ember._dynamo.exc import FailOnRecompileLimitHit
from ember._dynamo.utils import counters

SCALE = 2.0


def _recompile_reasons():
    return list(counters["recompiles"])


def test_graph_reused_while_guards_hold(close):
    cf = ember.compile(lambda x: x.sin() * 2, backend="eager")
    for _ in range(3):
        x = ember.randn(4, 5)
        close(cf(x), x.sin() * 2)
    assert counters["stats"]["calls_captured"] == 1
    assert counters["guards"]["last"] > 0


@pytest.mark.parametrize("change, reason", [
    (lambda x: x.double(), "dtype mismatch"),
    (lambda x: x.t().contiguous().t(), "stride mismatch"),
    (lambda x: x.clone().requires_grad_(), "requires_grad mismatch"),
    (lambda x: ember.randn(3, 4)[:, :3], "stride mismatch"),
    (lambda x: ember.randn(3, 4), "size mismatch"),
    (lambda x: ember.randn(3), "size mismatch"),
    (lambda x: _inference_copy(x), "is_inference() mismatch"),
])
def test_recompile_on_tensor_properties(change, reason, close):
    """One C call checks an input's metadata (_meta_is); the reason still names the
    property that changed."""
    cf = ember.compile(lambda x: x.exp() + 1, backend="eager", dynamic=False)
    x = ember.randn(3, 3)
    cf(x)
    y = change(x)
    close(cf(y), y.exp() + 1)
    assert counters["stats"]["recompiles"] == 1
    assert any(reason in r for r in _recompile_reasons())


def test_recompile_on_non_tensor_arguments_grad_mode_and_autocast(close):
    cf = ember.compile(lambda x, n, flag: x * n if flag else x - n, backend="eager")
    x = ember.randn(3)
    close(cf(x, 2, True), x * 2)
    close(cf(x, 3, True), x * 3)
    close(cf(x, 3, False), x - 3)
    assert counters["stats"]["recompiles"] == 2
    w = ember.randn(3, requires_grad=True)
    g = ember.compile(lambda x: (x * w).sum(), backend="eager")
    g(x)
    with ember.no_grad():
        assert not g(x).requires_grad
    assert any("grad mode" in r for r in _recompile_reasons())


def test_module_attributes_and_training_flag_are_guarded(close):
    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.factor = 2.0

        def forward(self, x):
            y = self.lin(x) * self.factor
            return nn.functional.dropout(y, 0.5, self.training)
    m = Scaled().eval()
    cm = ember.compile(m, backend="eager")
    x = ember.randn(4, 3)
    close(cm(x), m(x))
    m.factor = 5.0
    close(cm(x), m(x))
    m.lin.weight = nn.Parameter(ember.randn(3, 3))     # a new parameter object
    close(cm(x), m(x))
    m.train()
    ember.manual_seed(1)
    a = cm(x)
    ember.manual_seed(1)
    close(a, m(x))
    assert counters["stats"]["recompiles"] == 3


def test_globals_and_closures_are_guarded(close):
    global SCALE

    def f(x):
        return x * SCALE
    cf = ember.compile(f, backend="eager")
    x = ember.randn(3)
    close(cf(x), x * 2)
    SCALE = 3.0
    try:
        close(cf(x), x * 3)
    finally:
        SCALE = 2.0
    offset = 1.0

    def g(x):
        return x + offset
    cg = ember.compile(g, backend="eager")
    close(cg(x), x + 1)
    offset = 4.0
    close(cg(x), x + 4)


def test_recompile_limit_warns_once_then_runs_eagerly(close, monkeypatch):
    monkeypatch.setattr(dynamo.config, "recompile_limit", 3)
    cf = ember.compile(lambda x, k: x + k, backend="eager")
    x = ember.randn(2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for k in range(6):
            close(cf(x, k), x + k)
    msgs = [str(m.message) for m in w if "recompile_limit" in str(m.message)]
    assert len(msgs) == 1 and "hit config.recompile_limit (3)" in msgs[0]
    assert "argument 1: expected" in msgs[0]
    assert counters["stats"]["calls_captured"] == 3
    assert counters["stats"]["eager_calls"] == 3
    strict = ember.compile(lambda x, k: x + k, backend="eager", fullgraph=True)
    for k in range(3):
        strict(x, k)
    with pytest.raises(FailOnRecompileLimitHit):
        strict(x, 9)


def test_recompile_limit_per_compile_call(close):
    """compile(recompile_limit=n) bounds that call's graphs only (config's limit stays)."""
    x = ember.randn(2)
    one = ember.compile(lambda x, k: x * k, backend="eager", recompile_limit=1, name="one")
    other = ember.compile(lambda x, k: x * k, backend="eager")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for k in range(3):
            close(one(x, k), x * k)
            close(other(x, k), x * k)
    msgs = [str(m.message) for m in w if "recompile_limit" in str(m.message)]
    assert len(msgs) == 1 and "recompile_limit (1)" in msgs[0]
    with pytest.raises(ValueError, match="recompile_limit"):
        ember.compile(lambda x: x, recompile_limit=-1)
    with pytest.raises(NotImplementedError, match="shapes_spec"):
        ember.compile(lambda x: x, shapes_spec={"x": (2,)})


def test_automatic_dynamic_after_one_size_change(close):
    cf = ember.compile(lambda x: (x.sin() * x.shape[0]).sum(0), backend="eager")
    for n in (4, 6, 8, 10, 12):
        x = ember.randn(n, 3)
        close(cf(x), (x.sin() * n).sum(0))
    assert counters["stats"]["calls_captured"] == 2          # static, then symbolic
    assert "s0" in cf._ember_compiled.entries[0].graphs[0].code


def test_dynamic_true_and_false(close):
    dyn = ember.compile(lambda x: x.view(x.shape[0], -1).relu() + 1, backend="eager",
                        dynamic=True)
    static = ember.compile(lambda x: x.relu() + 1, backend="eager", dynamic=False)
    for n in (2, 3, 5):
        x = ember.randn(n, 2, 2)
        close(dyn(x), x.view(n, -1).relu() + 1)
        close(static(x), x.relu() + 1)
    assert len(dyn._ember_compiled.entries) == 1
    assert len(static._ember_compiled.entries) == 3
    code = dyn._ember_compiled.entries[0].graphs[0].code
    assert code.startswith("def forward(self, s0, s1, s2, x)")


def test_shape_guards_of_a_dynamic_graph(close):
    def f(x):
        if x.shape[0] > 4:                  # a guard on the symbolic size
            return x * 2
        return x * 3
    cf = ember.compile(f, backend="eager", dynamic=True)
    close(cf(ember.ones(6)), ember.ones(6) * 2)
    close(cf(ember.ones(8)), ember.ones(8) * 2)
    close(cf(ember.ones(3)), ember.ones(3) * 3)
    assert counters["stats"]["calls_captured"] == 2
    assert any("shape guard" in r for r in _recompile_reasons())


def test_mark_dynamic(close):
    cf = ember.compile(lambda x: x.cos().sum(-1), backend="eager")
    x = ember.randn(3, 5)
    dynamo.mark_dynamic(x, 0)
    cf(x)
    y = ember.randn(7, 5)
    close(cf(y), y.cos().sum(-1))
    assert counters["stats"]["calls_captured"] == 1


def test_dynamic_training_graph_serves_every_size(close):
    import copy
    m = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 3))
    ref = copy.deepcopy(m)
    cm = ember.compile(m, backend="aot_eager", dynamic=True)
    for n in (5, 7, 9):
        x = ember.randn(n, 4)
        cm(x).square().mean().backward()
        ref(x).square().mean().backward()
        for p, q in zip(m.parameters(), ref.parameters()):
            close(p.grad, q.grad)
    assert counters["stats"]["calls_captured"] == 1
    assert "s0" in cm._compiled.entries[0].graphs[1].code


def test_hooks_added_or_removed_after_compiling_recompile(close):
    m = nn.Linear(3, 3)
    cm = ember.compile(m, backend="eager")
    x = ember.randn(2, 3)
    close(cm(x), m(x))
    handle = m.register_forward_hook(lambda mod, args, out: out * 10)
    close(cm(x), m(x))
    handle.remove()
    close(cm(x), m(x))
    assert counters["stats"]["calls_captured"] == 2          # the first graph again


def test_an_argument_whose_rank_changes_after_a_size_change(close):
    """Automatic dynamic shapes remember the dims that changed; an argument that later has
    fewer dims made the recapture raise IndexError (a dim out of range) instead of running."""
    f = lambda a, b: a * b + 1            # noqa: E731
    cf = ember.compile(f)
    for a, b in ((ember.randn(4, 3), ember.randn(3)), (ember.randn(4, 3), ember.randn(4, 1)),
                 (ember.randn(5, 3), ember.randn(1, 3)), (ember.randn(2, 4, 3), ember.randn(3))):
        close(cf(a, b), f(a, b))


_SETTINGS = {"scale": 1.0}
_SIZES = [3.0]


class _Options:
    p = 0.5


_OPTIONS = _Options()


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_values_read_through_items_and_attributes_are_guarded(backend):
    """A number read as cfg["scale"], sizes[0] or opts.p off a global or closure variable is
    guarded by value: a change recompiles (the old graph had kept the old value)."""
    local = {"shift": 1.0}

    def f(x):
        return x * _SETTINGS["scale"] + _OPTIONS.p * _SIZES[0] + local["shift"]
    cf = ember.compile(f, backend=backend)
    x = ember.ones(2)
    for change in (lambda: None, lambda: _SETTINGS.update(scale=5.0),
                   lambda: setattr(_OPTIONS, "p", 2.0), lambda: _SIZES.__setitem__(0, 1.0),
                   lambda: local.update(shift=-3.0)):
        change()
        assert cf(x).tolist() == f(x).tolist()
    _SETTINGS["scale"], _OPTIONS.p, _SIZES[0] = 1.0, 0.5, 3.0


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_values_read_through_get_and_len_are_guarded(backend):
    """cfg.get("scale", 1.0) and len(sizes) off a global or closure variable are guarded
    by value too (a change had kept the old value in the graph)."""
    cfg, sizes, nested = {"scale": 2.0}, [1, 2, 3], {"inner": {"p": 3}}

    def f(x):
        return x * cfg.get("scale", 1.0) + len(sizes) + nested["inner"].get("p")
    cf = ember.compile(f, backend=backend)
    x = ember.ones(2)
    for change in (lambda: None, lambda: cfg.update(scale=5.0), lambda: sizes.append(4),
                   lambda: nested["inner"].update(p=10), lambda: cfg.pop("scale")):
        change()
        assert cf(x).tolist() == f(x).tolist()


def test_get_and_len_are_read_only_off_builtin_containers():
    """A guard never calls a user-defined get or __len__ (it could run anything): such
    reads are not guarded by value."""
    from ember._dynamo.monitor import walk
    calls = []

    class Cfg:
        def get(self, key, default=None):
            calls.append(key)
            return 2.0

        def __len__(self):
            calls.append("len")
            return 3
    missing = object()
    assert walk(Cfg(), (("get", ("scale",)),), missing) is missing
    assert walk(Cfg(), (("len", None),), missing) is missing
    assert calls == []
    assert walk({"a": [1, 2]}, (("get", ("a",)), ("len", None)), missing) == 2
    assert walk({"a": 1}, (("get", ("b", 7)),), missing) == 7


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_a_layout_branch_after_a_size_change(backend):
    """After a size change the recapture is symbolic, on (contiguous) fake tensors: a
    non-contiguous argument is captured for real instead, and the symbolic graph guards
    contiguity, so an is_contiguous() branch follows each call's layout."""
    def f(x):
        return x + 100 if x.is_contiguous() else x - 100
    cf = ember.compile(f, backend=backend)
    for x in (ember.arange(6.).reshape(2, 3), ember.arange(6.).reshape(2, 3).t(),
              ember.arange(12.).reshape(3, 4), ember.arange(12.).reshape(3, 4).t(),
              ember.arange(20.).reshape(4, 5)):
        assert cf(x).tolist() == f(x).tolist()


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_values_read_through_arguments_and_module_containers_are_guarded(backend):
    """c.scale off an argument object (pinned by identity, so its attribute can change) and
    self.cfg["s"] / self.lst[0] / self.ns.s inside a Module (its guard sees assignments to
    its own attributes only): a change recompiles (the graph had kept the old value)."""
    import types

    class Cfg:
        scale = 2.0

    cfg = Cfg()
    cf = ember.compile(lambda x, c: x * c.scale, backend=backend)
    x = ember.ones(2)
    assert cf(x, cfg).tolist() == [2.0, 2.0]
    cfg.scale = 5.0
    assert cf(x, cfg).tolist() == [5.0, 5.0]

    class M(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.cfg, self.lst = {"s": 2.0}, [3.0]
            self.ns = types.SimpleNamespace(s=4.0)

        def forward(self, x):
            return x * self.cfg["s"] + self.lst[0] + self.ns.s
    m = M()
    cm = ember.compile(m, backend=backend)
    for change in (lambda: None, lambda: m.cfg.update(s=10.0),
                   lambda: m.lst.__setitem__(0, 0.0), lambda: setattr(m.ns, "s", 1.0)):
        change()
        assert cm(x).tolist() == m(x).tolist()

    class K(ember.nn.Module):
        scale = 2.0                     # a class attribute: not in the instance's dict

        def forward(self, x):
            return x * self.scale
    k = K()
    ck = ember.compile(k, backend=backend)
    for change in (lambda: None, lambda: setattr(K, "scale", 4.0),
                   lambda: setattr(k, "scale", 7.0)):
        change()
        assert ck(x).tolist() == k(x).tolist()


_ITEMS = [1.0, 2.0]
_TABLE = {"a": 1.0, "b": 2.0}


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_values_read_by_iterating_a_global_container_are_guarded(backend):
    """for v in a global list, and a global dict's values(): the items are guarded (a
    changed or appended item had kept the old sum in the graph)."""
    def f(x):
        for v in _ITEMS:
            x = x + v
        return x + sum(_TABLE.values())
    cf = ember.compile(f, backend=backend)
    x = ember.zeros(1)
    try:
        for change in (lambda: None, lambda: _ITEMS.__setitem__(1, 10.0),
                       lambda: _ITEMS.append(5.0), lambda: _TABLE.update(a=100.0)):
            change()
            assert cf(x).tolist() == f(x).tolist()
    finally:
        _ITEMS[:] = [1.0, 2.0]
        _TABLE.update(a=1.0)


def _inference_copy(x):
    with ember.inference_mode():
        return x.clone()
