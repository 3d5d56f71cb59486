"""Module full backward hooks (register_full_backward_hook / _pre_hook) and legacy ones
(register_backward_hook) against PyTorch: what the hooks see, when they run, what they may
return, and the errors and warnings around them."""
import warnings

import pytest
import torch

import ember


def fmt(value, lib):
    """A comparable summary of a hook argument (tensors as shape and values)."""
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [fmt(v, lib) for v in value]
    if isinstance(value, lib.Tensor):
        return "T", list(value.shape), value.detach().flatten().tolist()
    return value


def run_both(fn):
    """fn(lib) for ember and torch: (result or (exception type, first line), warning texts)."""
    out = []
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = fn(lib)
            except Exception as e:
                r = (type(e).__name__, str(e).split("\n")[0])
        out.append((r, [str(x.message).split(".")[0] for x in w]))
    return out


def assert_same(fn):
    got, want = run_both(fn)
    assert got == want


class Two:
    @staticmethod
    def make(lib, kind):
        class M(lib.nn.Module):
            def forward(self, a, *rest):
                if kind == "two":
                    return a * 2, rest[0] * 3
                if kind == "three":                 # (tensor, int, tensor without grad)
                    return a * 3 + rest[1]
                if kind == "unused":
                    return a * 2, a * 3
                if kind == "nograd_out":
                    return a * 2, lib.ones(1)
                if kind == "dict":
                    return {"a": a * 2}
                if kind == "list":
                    return [a * 2]
                if kind == "mixed":
                    return a * 2, 3
                if kind == "index":
                    return a[rest[0]]
        return M()


def hooked(lib, kind, inputs, use, hooks=None, pre_hooks=None):
    log = []
    m = Two.make(lib, kind)
    for h in hooks or [lambda mod, gi, go: log.append(("hook", fmt(gi, lib), fmt(go, lib)))]:
        m.register_full_backward_hook(h)
    for h in pre_hooks or [lambda mod, go: log.append(("pre", fmt(go, lib)))]:
        m.register_full_backward_pre_hook(h)
    args = inputs(lib)
    use(m(*args)).sum().backward()
    return log, [fmt(a.grad, lib) if isinstance(a, lib.Tensor) else None for a in args]


def ones(lib, requires_grad=True, shape=(1,)):
    return lib.ones(*shape, requires_grad=requires_grad)


@pytest.mark.parametrize("kind, inputs, use", [
    # an input whose gradient no output depends on gets zeros (and so a zero .grad)
    ("two", lambda L: (ones(L), ones(L)), lambda o: o[0]),
    # a tensor input that needs no gradient gets zeros in grad_input too; an int, None
    ("three", lambda L: (ones(L), 5, ones(L, False)), lambda o: o),
    # outputs that get no gradient are None in grad_output
    ("unused", lambda L: (ones(L),), lambda o: o[0]),
    ("nograd_out", lambda L: (ones(L),), lambda o: o[0]),
    ("mixed", lambda L: (ones(L),), lambda o: o[0]),
    # an integer input gets integer zeros
    ("index", lambda L: (ones(L, shape=(3,)), L.tensor([0, 2])), lambda o: o),
])
def test_hooks_see_what_torch_passes(kind, inputs, use):
    assert_same(lambda L: hooked(L, kind, inputs, use))


@pytest.mark.parametrize("kind", ["dict", "list"])
def test_outputs_neither_tensor_nor_tuple_warn_and_skip_the_hooks(kind):
    got, want = run_both(lambda L: hooked(L, kind, lambda L: (ones(L),),
                                          lambda o: o["a"] if kind == "dict" else o[0]))
    assert got == want
    assert got[0][0] == [] and got[1] == ["For backward hooks to be called, module output "
                                          "should be a Tensor or a tuple of Tensors but "
                                          "received <class '" + kind + "'>"]


def with_parameter(L, hook):
    log = []
    m = L.nn.Linear(1, 1)
    m.register_full_backward_hook(hook or (lambda mod, gi, go: log.append(fmt((gi, go), L))))
    m(ones(L, False)).sum().backward()
    return log


def test_no_input_requiring_grad_warns_and_runs_the_hooks_from_the_outputs():
    got, want = run_both(lambda L: with_parameter(L, None))
    assert got == want and got[0][0] and got[1][0].startswith("Full backward hook is firing")
    assert_same(lambda L: with_parameter(L, lambda m, gi, go: (L.ones(1),)))
    assert_same(lambda L: with_parameter(L, lambda m, gi, go: (None,)))


@pytest.mark.parametrize("returned", [
    lambda L, g: g[0] * 2,                      # a bare tensor, not a tuple
    lambda L, g: (L.ones(2),),                  # another size
    lambda L, g: (L.ones(1, dtype=L.float64),),  # another dtype
    lambda L, g: (3,),                          # not a tensor
    lambda L, g: (g[0], g[0]),                  # too many
    lambda L, g: [g[0] * 5],                    # a list is fine
])
@pytest.mark.parametrize("pre", [False, True])
def test_hook_results_are_checked_as_torch(returned, pre):
    def run(L):
        m = L.nn.Identity()
        if pre:
            m.register_full_backward_pre_hook(lambda mod, go: returned(L, go))
        else:
            m.register_full_backward_hook(lambda mod, gi, go: returned(L, gi))
        x = ones(L)
        m(x).sum().backward()
        return fmt(x.grad, L)
    got, want = run_both(run)
    if isinstance(want[0], tuple) and want[0][0] == "RuntimeError":
        want = ((want[0][0], want[0][1].replace("torch.", "ember.")), want[1])
    assert got == want


def test_hooks_are_the_ones_registered_when_forward_ran():
    def run(L):
        log = []
        m = L.nn.Identity()
        h = m.register_full_backward_hook(lambda *a: log.append("early"))
        y = m(ones(L))
        h.remove()
        m.register_full_backward_hook(lambda *a: log.append("late"))
        y.sum().backward()
        return log
    assert_same(run)
    assert run(ember) == ["early"]


def test_forward_changing_an_input_in_place_raises():
    def run(L):
        m = L.nn.ReLU(inplace=True)
        m.register_full_backward_hook(lambda *a: None)
        x = L.tensor([1.0, -1.0], requires_grad=True)
        m(x * 1).sum().backward()
        return fmt(x.grad, L)
    got, want = run_both(run)
    assert got == want and got[0][1].startswith("Output 0 of BackwardHookFunction is a view")


def test_an_output_changed_in_place_raises_instead_of_skipping_the_hooks():
    # PyTorch raises at the in-place op, ember when the gradient reaches the inputs
    def run(L):
        m = L.nn.Identity()
        m.register_full_backward_hook(lambda *a: None)
        y = m(L.ones(2, requires_grad=True) * 1)
        y.add_(1)
        y.sum().backward()
    got, want = run_both(run)
    assert got == want and got[0][0] == "RuntimeError"


def test_a_buffer_argument_may_still_change_in_place():
    def run(L):
        class M(L.nn.Module):
            def forward(self, a, b):
                b.add_(1)
                return a * 2
        m = M()
        m.register_full_backward_hook(lambda *a: None)
        a, b = ones(L), L.zeros(1)
        m(a * 1, b).sum().backward()
        return fmt(a.grad, L), fmt(b, L)
    assert_same(run)


def test_backward_twice_and_no_grad_and_keyword_inputs():
    def run(L):
        log = []

        class K(L.nn.Module):
            def forward(self, a, *, b):
                return a * b
        m = K()
        m.register_full_backward_hook(lambda mod, gi, go: log.append(fmt(gi, L)))
        a, b = ones(L), ones(L)
        y = m(a, b=b)
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        with L.no_grad():
            z = m(a, b=b)
        return log, fmt(a.grad, L), fmt(b.grad, L), z.requires_grad
    assert_same(run)


def test_node_name():
    m = ember.nn.Identity()
    m.register_full_backward_hook(lambda *a: None)
    assert m(ones(ember)).grad_fn.name() == "BackwardHookFunctionBackward"


def test_global_backward_hooks_full_and_legacy_do_not_mix():
    mm = ember.nn.modules.module
    h = mm.register_module_full_backward_hook(lambda *a: None)
    try:
        assert mm._global_is_full_backward_hook is True
        with pytest.raises(RuntimeError, match="as a global Module hook"):
            mm.register_module_backward_hook(lambda *a: None)
    finally:
        h.remove()
        ember.nn.modules.module_hooks._global_is_full_backward_hook = None


def test_legacy_backward_hook_runs_on_the_last_node():
    # grad_input is the last autograd node's: for an elementwise module that is the input's
    def run(L):
        log = []
        m = L.nn.ReLU()
        m.register_backward_hook(lambda mod, gi, go: log.append((fmt(gi, L), fmt(go, L))))
        x = L.tensor([1.0, -2.0], requires_grad=True)
        (m(x) * 3).sum().backward()
        return log, fmt(x.grad, L)
    assert_same(run)

    def doubled(L):                                  # its return replaces grad_input
        m = L.nn.ReLU()
        m.register_backward_hook(lambda mod, gi, go: (gi[0] * 2,))
        x = L.tensor([1.0, -2.0], requires_grad=True)
        m(x).sum().backward()
        return fmt(x.grad, L)
    assert_same(doubled)


def test_legacy_backward_hook_warns_as_torch():
    def run(L):
        m = L.nn.Linear(2, 1)
        m.register_backward_hook(lambda *a: None)
        m(L.ones(3, 2, requires_grad=True)).sum().backward()

    def nested(L):
        class D(L.nn.Module):
            def forward(self, x):
                return {"a": x * 2}
        m = D()
        m.register_backward_hook(lambda *a: None)
        m(L.ones(1, requires_grad=True))["a"].sum().backward()
    for fn in (run, nested):
        got, want = run_both(fn)
        assert got == want and got[1]
