"""Values a captured graph baked in must be guarded: a rebound global or closure variable,
a plain value read through a helper's parameter, a local alias, a call's result, a local
bound on two branches, a variable key or ``getattr``, a function's defaults, and the
autograd state (``.grad``, ``is_inference()``) of inputs."""
import ember.nn as nn
import pytest

import ember
from ember._dynamo.utils import counters

BACKENDS = ["eager", "aot_eager", "inductor"]


class _Obj:
    pass


CFG = {"s": 2.0}
OBJ = _Obj()
OBJ.s = 2.0
model = None
act = None


@pytest.fixture(autouse=True)
def _reset_globals():
    global model, act
    CFG["s"] = 2.0
    OBJ.s = 2.0
    yield
    model = act = None


def _twice(cf, *args):
    cf(*args)
    cf(*args)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rebinding_a_global_module_recompiles(backend, close):
    global model
    model = nn.Linear(2, 2)

    def f(x):
        return model(x)
    cf = ember.compile(f, backend=backend)
    x = ember.ones(1, 2)
    _twice(cf, x)
    model = nn.Linear(2, 2)
    close(cf(x), f(x))
    assert any("'model' is bound to a different object" in r for r in counters["recompiles"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_rebinding_a_global_function_recompiles(backend, close):
    global act
    act = ember.relu

    def f(x):
        return act(x)
    cf = ember.compile(f, backend=backend)
    x = ember.tensor([-1.0, 2.0])
    _twice(cf, x)
    act = ember.sigmoid
    close(cf(x), ember.sigmoid(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_rebinding_a_closure_variable_with_nonlocal_recompiles(backend, close):
    def make():
        fn = ember.relu
        m = nn.Linear(2, 2)

        def f(x):
            return fn(m(x))

        def swap():
            nonlocal fn, m
            fn, m = ember.sigmoid, nn.Linear(2, 2)
        return f, swap
    f, swap = make()
    cf = ember.compile(f, backend=backend)
    x = ember.ones(1, 2)
    _twice(cf, x)
    swap()
    close(cf(x), f(x))


def _helper(x, c):
    return x * c["s"]


def _helper_obj(x, o):
    return x * o.s


class _Holder:
    def __init__(self):
        self.cfg = {"s": 2.0}
        self.k = 2.0

    def apply(self, x):
        return x * self.cfg["s"] * self.k


HOLDER = _Holder()


def _alias(x):
    c = CFG
    return x * c["s"]


def _get_cfg():
    return CFG


def _call_result(x):
    c = _get_cfg()
    return x * c["s"]


def _bound_on_two_branches(x, flag=True):
    c = CFG if flag else HOLDER.cfg
    return x * c["s"]


def _bound_in_if_else(x, flag=True):
    if flag:
        c = CFG
    else:
        c = HOLDER.cfg
    return x * c["s"]


def _variable_key(x, key="s"):
    return x * CFG[key]


_CASES = {
    "a call's result": (_call_result, lambda: CFG.__setitem__("s", 5.0)),
    "a local bound on two branches": (_bound_on_two_branches,
                                      lambda: CFG.__setitem__("s", 5.0)),
    "a local bound in if/else": (_bound_in_if_else, lambda: CFG.__setitem__("s", 5.0)),
    "a variable key": (_variable_key, lambda: CFG.__setitem__("s", 5.0)),
    "helper(dict)": (lambda x: _helper(x, CFG), lambda: CFG.__setitem__("s", 5.0)),
    "helper(obj)": (lambda x: _helper_obj(x, OBJ), lambda: setattr(OBJ, "s", 5.0)),
    "lambda param": (lambda x: (lambda c: x * c["s"])(CFG), lambda: CFG.__setitem__("s", 5.0)),
    "local alias": (_alias, lambda: CFG.__setitem__("s", 5.0)),
    "getattr": (lambda x: x * getattr(OBJ, "s"), lambda: setattr(OBJ, "s", 5.0)),
    "getattr default": (lambda x: x * getattr(OBJ, "s", 1.0), lambda: setattr(OBJ, "s", 5.0)),
    "method of a global": (lambda x: HOLDER.apply(x), lambda: setattr(HOLDER, "k", 5.0)),
    "method reads a dict": (lambda x: HOLDER.apply(x),
                            lambda: HOLDER.cfg.__setitem__("s", 5.0)),
}


@pytest.mark.parametrize("case", list(_CASES))
@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_values_read_off_objects_not_rooted_at_a_global_are_guarded(case, backend, close):
    fn, change = _CASES[case]
    HOLDER.cfg["s"], HOLDER.k = 2.0, 2.0
    cf = ember.compile(fn, backend=backend)
    x = ember.ones(2)
    _twice(cf, x)
    change()
    close(cf(x), fn(x))
    assert counters["stats"]["recompiles"] == 1


def test_a_helper_called_with_two_objects_guards_both(close):
    a, b = _Obj(), _Obj()
    a.s, b.s = 1.0, 2.0

    def f(x):
        return _helper_obj(x, a) + _helper_obj(x, b)
    cf = ember.compile(f, backend="eager")
    x = ember.ones(2)
    _twice(cf, x)
    b.s = 10.0
    close(cf(x), f(x))


def test_an_object_inside_a_list_argument_is_guarded(close):
    o = _Obj()
    o.s = 2.0

    def f(x, lst):
        return x * lst[0].s
    cf = ember.compile(f, backend="eager")
    x = ember.tensor([-1.0, 2.0])
    _twice(cf, x, [o])
    o.s = 5.0
    close(cf(x, [o]), f(x, [o]))


def test_defaults_of_the_function_and_its_helpers_are_guarded(close):
    def g(x, s=2.0, *, k=1.0):
        return x * s * k

    def helper(x, s=2.0):
        return x * s

    def h(x):
        return helper(x)
    cg, ch = ember.compile(g, backend="eager"), ember.compile(h, backend="eager")
    x = ember.arange(3.0)
    _twice(cg, x)
    _twice(ch, x)
    g.__defaults__ = (10.0,)
    close(cg(x), g(x))
    g.__kwdefaults__["k"] = 3.0
    close(cg(x), g(x))
    helper.__defaults__ = (7.0,)
    close(ch(x), h(x))


def test_a_mutable_default_changed_in_place_is_guarded(close):
    def f(x, opts={"s": 2.0}):       # noqa: B006 (the point of the test)
        return x * opts["s"]
    cf = ember.compile(f, backend="eager")
    x = ember.ones(2)
    _twice(cf, x)
    f.__defaults__[0]["s"] = 4.0
    close(cf(x), f(x))


def test_a_list_global_changed_in_place_is_guarded(close):
    sizes = [1.0, 2.0]

    def f(x):
        return x * sum(sizes)
    cf = ember.compile(f, backend="eager")
    x = ember.ones(2)
    _twice(cf, x)
    sizes[0] = 5.0
    close(cf(x), f(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_none_of_an_input_is_guarded(backend, close):
    def total(ps):
        out = ember.zeros(())
        for p in ps:
            if p.grad is not None:
                out = out + p.grad.pow(2).sum()
        return out
    ct = ember.compile(total, backend=backend)
    a, b = ember.ones(2, requires_grad=True), ember.ones(3, requires_grad=True)
    _twice(ct, [a, b])
    (a.sum() * 2 + b.sum()).backward()
    close(ct([a, b]), total([a, b]))
    assert any("to be None" in r for r in counters["recompiles"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_is_inference_and_is_leaf_of_an_input_are_guarded(backend, close):
    def f(x):
        return x * 2 if x.is_inference() else x * 3
    cf = ember.compile(f, backend=backend)
    _twice(cf, ember.ones(2))
    with ember.inference_mode():
        b = ember.ones(2)
    close(cf(b), f(b))

    def g(x):
        return x * 2 if x.is_leaf else x * 3
    cg = ember.compile(g, backend=backend)
    a = ember.ones(2, requires_grad=True)
    _twice(cg, a)
    b = a * 1
    close(cg(b), g(b))
