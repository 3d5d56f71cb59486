"""nn.Module, containers and Parameter against PyTorch: operators that renumber children,
submodule and parameter lookup, state_dict hooks, registration hooks, module attributes
PyTorch code reaches for, to()'s argument checks and the warnings PyTorch emits."""
import pickle
import warnings
from collections import OrderedDict

import pytest
import torch

import ember


def outcome(fn, lib):
    """fn(lib)'s result, or (exception type, first line of its message)."""
    try:
        return fn(lib)
    except Exception as e:
        return type(e).__name__, str(e).split("\n")[0].replace("torch.", "ember.")


def same(fn):
    assert outcome(fn, ember) == outcome(fn, torch)


def children(m):
    return [(k, type(v).__name__) for k, v in m._modules.items()]


def warned(fn, lib):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = outcome(fn, lib)
    return r, [(x.category.__name__, str(x.message)[:60]) for x in w]


# containers --------------------------------------------------------------------------------

@pytest.mark.parametrize("op", [
    lambda L, s: s + L.nn.Sequential(L.nn.ELU()),
    lambda L, s: s * 2,
    lambda L, s: 2 * s,
])
def test_sequential_operators_renumber_children(op):
    # names "2"/"y": keeping them would make the ELU replace the ReLU
    def run(L):
        s = L.nn.Sequential(OrderedDict([("2", L.nn.ReLU()), ("y", L.nn.Tanh())]))
        out = op(L, s)
        return type(out).__name__, children(out), list(out.state_dict())
    same(run)


def test_sequential_in_place_operators():
    def run(L):
        s = L.nn.Sequential(L.nn.ReLU(), L.nn.Tanh())
        s *= 2
        s += L.nn.Sequential(L.nn.ELU())
        named = L.nn.Sequential(OrderedDict([("x", L.nn.ReLU())]))
        return children(s), outcome(lambda _: named.__imul__(2), L), \
            outcome(lambda _: s.__iadd__([L.nn.ReLU()]), L)
    same(run)


def test_operators_on_subclasses_give_the_plain_container():
    def run(L):
        class MySeq(L.nn.Sequential):
            def __init__(self, n):
                super().__init__(*[L.nn.ReLU() for _ in range(n)])

        class MyList(L.nn.ModuleList):
            pass
        return [type(x).__name__ for x in (MySeq(2) + L.nn.Sequential(L.nn.Tanh()),
                                           MySeq(2) * 2, 2 * MySeq(1),
                                           MyList([L.nn.ReLU()]) + L.nn.ModuleList())]
    same(run)


def test_module_list_adds_any_iterable():
    def run(L):
        ml = L.nn.ModuleList([L.nn.ReLU()])
        both = ml + [L.nn.Tanh()] + (L.nn.ELU(),)
        ml += (L.nn.Sigmoid(),)
        return children(both), children(ml), ml.insert(0, L.nn.Tanh()), \
            outcome(lambda _: ml * 2, L)[0]
    same(run)


def test_dict_or_parameter_dict():
    def run(L):
        pd = L.nn.ParameterDict({"a": L.ones(1)})
        left, right = {"z": L.ones(1)} | pd, pd | {"z": L.ones(1)}
        return type(left).__name__, list(left), type(right).__name__, list(right)
    same(run)


def test_container_is_deprecated_but_works():
    def run(L):
        c = L.nn.Container(a=L.nn.ReLU())
        return repr(c), children(c)
    assert warned(run, ember) == warned(run, torch)
    assert warned(run, ember)[1][0][0] == "FutureWarning"


# lookup ------------------------------------------------------------------------------------

def test_set_submodule_replaces_only_submodules():
    def run(L):
        s = L.nn.Sequential(L.nn.Linear(1, 1))
        s.foo = 3
        return [outcome(lambda _: s.set_submodule(t, m), L) for t, m in
                (("foo", L.nn.Tanh()), ("0.weight", L.nn.Tanh()), ("0", 3), ("", L.nn.Tanh()),
                 ("1", L.nn.Tanh()))] + [children(s), type(s.foo).__name__]
    same(run)


def test_get_parameter_refuses_a_parameter_registered_as_none():
    def run(L):
        m = L.nn.Linear(1, 1)
        m.register_parameter("np", None)
        m.register_buffer("nb", None)
        return outcome(lambda _: m.get_parameter("np"), L), m.get_buffer("nb"), \
            outcome(lambda _: m.get_buffer("weight"), L)
    same(run)


# hooks -------------------------------------------------------------------------------------

def test_state_dict_post_hook_must_return_none():
    def run(L):
        m = L.nn.Linear(1, 1)

        def replace(mod, sd, prefix, meta):
            return {"x": 1}
        m.register_state_dict_post_hook(replace)
        public = outcome(lambda _: m.state_dict(), L)
        other = L.nn.Linear(1, 1)
        other._register_state_dict_hook(lambda mod, sd, prefix, meta: {"x": 1})
        return public, other.state_dict(), outcome(lambda _: other._register_state_dict_hook(
            replace), L)
    same(run)


def test_load_state_dict_post_hook_returning_a_value_is_an_assertion_error():
    def run(L):
        m = L.nn.Linear(1, 1)
        m.register_load_state_dict_post_hook(lambda mod, keys: 1)
        return outcome(lambda _: m.load_state_dict(m.state_dict()), L)[0]
    same(run)


def test_positional_state_dict_and_meta_load_warn():
    def positional(L):
        m = L.nn.Linear(1, 1)
        return list(m.state_dict(OrderedDict(), "p."))

    def meta(L):
        m = L.nn.Linear(1, 1, device="meta")
        m.load_state_dict(L.nn.Linear(1, 1).state_dict())
        return m.weight.device.type
    for fn in (positional, meta):
        assert warned(fn, ember) == warned(fn, torch) and warned(fn, ember)[1]


def test_registration_hooks_skip_parameters_registered_as_none():
    def run(L):
        seen = []
        h = L.nn.modules.module.register_module_parameter_registration_hook(
            lambda m, n, p: seen.append(n))
        try:
            m = L.nn.Module()
            m.register_parameter("a", None)
            m.register_parameter("b", L.nn.Parameter(L.ones(1)))
        finally:
            h.remove()
        return seen
    same(run)


def test_removing_a_hook_forgets_its_side_tables():
    def run(L):
        m = L.nn.Identity()
        handles = [m.register_forward_pre_hook(lambda *a: None, with_kwargs=True),
                   m.register_forward_hook(lambda *a: None, with_kwargs=True,
                                           always_call=True)]
        for h in handles:
            h.remove()
        return [dict(getattr(m, t)) for t in ("_forward_pre_hooks_with_kwargs",
                                              "_forward_hooks_with_kwargs",
                                              "_forward_hooks_always_called")]
    same(run)


def test_always_call_hook_failure_warning_text():
    def run(L):
        m = L.nn.Linear(1, 1)
        m.register_forward_hook(lambda *a: 1 / 0, always_call=True)
        return outcome(lambda _: m("not a tensor"), L)[0]
    got, want = warned(run, ember), warned(run, torch)
    assert got[1][-1] == want[1][-1] and got[1][-1][1].startswith("module forward hook")


# module attributes -------------------------------------------------------------------------

def test_module_level_names_of_torch_nn_modules_module():
    mm = ember.nn.modules.module
    for name in ("_global_forward_hooks", "_global_forward_pre_hooks",
                 "_global_backward_hooks", "_global_backward_pre_hooks",
                 "_global_forward_hooks_always_called", "_global_forward_hooks_with_kwargs",
                 "_global_buffer_registration_hooks", "_global_module_registration_hooks",
                 "_global_parameter_registration_hooks"):
        assert getattr(mm, name) == {}, name
    h = mm.register_module_forward_hook(lambda *a: None)
    assert list(mm._global_forward_hooks) == [h.id]
    h.remove()
    assert mm._global_is_full_backward_hook is None
    assert mm._EXTRA_STATE_KEY_SUFFIX == "_extra_state"
    keys = ember.nn.Linear(1, 1).load_state_dict(ember.nn.Linear(1, 1).state_dict())
    assert isinstance(keys, mm._IncompatibleKeys) and repr(pickle.loads(pickle.dumps(keys))) \
        == "<All keys matched successfully>"
    wrapped = mm._WrappedHook(lambda mod, x: (type(mod).__name__, x), ember.nn.ReLU())
    with pytest.raises(RuntimeError, match="dead Module"):
        wrapped(1)
    assert mm._WrappedHook(lambda x: x)(2) == 2


def test_call_path_attributes():
    m = ember.nn.Linear(1, 1)
    assert ember.nn.Module._compiled_call_impl is None and m._compiled_call_impl is None
    assert ember.nn.Module.__call__ is ember.nn.Module._wrapped_call_impl
    assert m._slow_forward(ember.ones(1)).shape == (1,)
    assert ember.nn.Module.forward.__name__ == torch.nn.Module.forward.__name__
    full, legacy = m._get_backward_hooks()
    assert full == legacy == [] and m._get_backward_pre_hooks() == []
    m.compile()
    assert m._compiled_call_impl is not None
    assert "_compiled_call_impl" not in pickle.loads(pickle.dumps(m)).__dict__


def test_ipu_and_mtia_raise_like_a_build_without_them():
    def run(L):
        return [outcome(lambda _: getattr(L.nn.Linear(1, 1), f)(), L)[0] for f in
                ("ipu", "mtia")] + [type(L.nn.ReLU().ipu()).__name__]
    same(run)


def test_replicate_for_data_parallel():
    m = ember.nn.BatchNorm1d(2)
    r = m._replicate_for_data_parallel()
    assert r._parameters == {} and r._is_replica and r.running_mean is m.running_mean
    assert type(r) is ember.nn.BatchNorm1d and m._parameters


@pytest.mark.parametrize("args, kwargs", [
    ((), {"foo": 1}), (("cpu", "abc"), {}), (("cpu",), {"copy": False}),
    (("cpu", ember.float32, False, False), {}), ((None,), {}), (("cpu", None, True), {}),
])
def test_to_checks_its_arguments(args, kwargs):
    def run(L):
        conv = {ember.float32: L.float32}
        a = tuple(conv.get(x, x) for x in args)
        m = L.nn.Linear(1, 1)
        return str(m.to(*a, **kwargs).weight.dtype)[6:]
    same(run)


def test_to_complex_warns():
    def run(L):
        return str(L.nn.Linear(1, 1).to(L.complex64).weight.dtype)[6:]
    assert warned(run, ember) == warned(run, torch) and warned(run, ember)[1]


def test_to_from_meta_points_to_to_empty():
    def run(L):
        return outcome(lambda _: L.nn.Linear(1, 1, device="meta").to("cpu"), L)
    same(run)


# parameters and layers -------------------------------------------------------------------

def test_parameter_of_a_tensor_subclass_keeps_the_subclass():
    def run(L):
        class MyT(L.Tensor):
            pass
        p = L.nn.Parameter(L.ones(2).as_subclass(MyT))
        m = L.nn.Module()
        m.w = p
        t = L.ones(1)
        t._is_param = True
        return type(p).__name__, isinstance(p, MyT), isinstance(p, L.nn.Parameter), \
            p.requires_grad, list(m._parameters), isinstance(t, L.nn.Parameter), \
            isinstance(L.ones(1), L.nn.Parameter)
    same(run)


def test_parameter_and_buffer_argument_errors():
    def run(L):
        return [outcome(f, L) for f in (
            lambda L: L.nn.Buffer(3), lambda L: L.nn.Parameter([1.0, 2.0]),
            lambda L: L.nn.Parameter(L.ones(2, dtype=L.int64)),
            lambda L: str(L.nn.Parameter(L.ones(2, dtype=L.int64), requires_grad=False).dtype)[6:])]
    same(run)


def test_layers_whose_repr_or_children_differed():
    def run(L):
        loss = L.nn.TripletMarginWithDistanceLoss()
        return repr(loss), [n for n, _ in loss.named_children()], \
            repr(L.nn.Hardswish(True)), repr(L.nn.Hardsigmoid(True)), repr(L.nn.ReLU(True))
    same(run)
    a = ember.arange(12.0).reshape(3, 4)
    t = torch.arange(12.0).reshape(3, 4)
    loss = ember.nn.TripletMarginWithDistanceLoss()(a, a + 1, a.flip(0))
    assert loss.item() == pytest.approx(
        torch.nn.TripletMarginWithDistanceLoss()(t, t + 1, t.flip(0)).item(), rel=1e-6)


def test_utils_hooks_helpers():
    from ember.utils import hooks
    assert hooks.BackwardHook is ember.nn.modules._backward_hook.BackwardHook

    @hooks.unserializable_hook
    def f(grad):
        return grad
    assert f.__torch_unserializable__ is True
    hooks.warn_if_has_hooks(ember.ones(1))
