"""PyTorch's rule on captured tensors inside grad, vjp, jvp and what is built on them: the
transformed function may write in place only into tensors made while it runs (its inputs
count), never into one it captured from outside - the write is refused before it happens.
Each case runs under ember and under torch and must end the same way."""
import numpy as np
import pytest
import torch

import ember

_INPLACE = {
    "add_": lambda b, m: b.add_(1),
    "add_ of the input": lambda b, m: b.add_(m.ones(3)),
    "mul_": lambda b, m: b.mul_(2),
    "copy_": lambda b, m: b.copy_(m.ones(3)),
    "fill_": lambda b, m: b.fill_(3),
    "zero_": lambda b, m: b.zero_(),
    "clamp_": lambda b, m: b.clamp_(5, 6),
    "exp_": lambda b, m: b.exp_(),
    "uniform_": lambda b, m: b.uniform_(),
    "index_add_": lambda b, m: b.index_add_(0, m.tensor([0]), m.ones(1)),
    "setitem": lambda b, m: b.__setitem__(0, 9.0),
    "masked_fill_": lambda b, m: b.masked_fill_(m.tensor([True, False, True]), 7.0),
    "scatter_": lambda b, m: b.scatter_(0, m.tensor([1]), m.ones(1)),
    "index_put_": lambda b, m: b.index_put_((m.tensor([0]),), m.tensor([5.0])),
    "view then add_": lambda b, m: b[1:].add_(1),
    "detach then add_": lambda b, m: b.detach().add_(1),
    ".data add_": lambda b, m: b.data.add_(1),
    "unsqueeze_": lambda b, m: b.unsqueeze_(0),
    "detach_": lambda b, m: b.detach_(),
    "set_": lambda b, m: b.set_(m.zeros(2)),
    "resize_": lambda b, m: b.resize_(3),
}


def _transforms(m):
    f = m.func
    return {
        "grad": lambda fn, x: f.grad(lambda x: fn(x).sum())(x),
        "vjp": lambda fn, x: f.vjp(fn, x)[0],
        "jvp": lambda fn, x: f.jvp(fn, (x,), (m.ones(3),))[1],
        "jacrev": lambda fn, x: f.jacrev(fn)(x),
        "jacfwd": lambda fn, x: f.jacfwd(fn)(x),
        "vmap(grad)": lambda fn, x: f.vmap(f.grad(lambda x: fn(x).sum()))(x.expand(2, 3)),
        "grad(vmap)": lambda fn, x: f.grad(lambda x: f.vmap(fn)(x.expand(2, 3)).sum())(x),
    }


def _outcome(m, transform, write, target):
    """(raised?, the captured buffer afterwards, the result) of one case under module m."""
    buf = m.tensor([1.5, -2.0, 3.0])

    def fn(x):
        if target == "captured":
            write(buf, m)
        elif target == "made inside":
            write(m.tensor([1.5, -2.0, 3.0]) + 0 * x.detach(), m)
        return x * 2
    try:
        result = _transforms(m)[transform](fn, m.ones(3))
    except RuntimeError as e:
        assert "captured" in str(e), str(e)
        return True, buf.detach().numpy().copy(), None
    return False, buf.detach().numpy().copy(), result.detach().numpy()


@pytest.mark.parametrize("transform", list(_transforms(torch)))
@pytest.mark.parametrize("target", ["captured", "made inside"])
@pytest.mark.parametrize("name", ["add_", "copy_", "setitem", "view then add_"])
def test_writes_under_each_transform(transform, target, name):
    t = _outcome(torch, transform, _INPLACE[name], target)
    e = _outcome(ember, transform, _INPLACE[name], target)
    assert e[0] == t[0], (transform, target, name, e[0], t[0])
    np.testing.assert_array_equal(e[1], t[1])      # a refused write leaves the buffer as it was
    if not t[0]:
        np.testing.assert_allclose(e[2], t[2])


@pytest.mark.parametrize("name", [n for n in _INPLACE if n not in ("uniform_",)])
def test_every_inplace_form_on_a_captured_tensor(name):
    t = _outcome(torch, "grad", _INPLACE[name], "captured")
    e = _outcome(ember, "grad", _INPLACE[name], "captured")
    assert e[0] and t[0], name
    np.testing.assert_array_equal(e[1], t[1])


# out= writes: PyTorch's transforms check in-place schemas only, so an op may write its out=
# tensor even when the function captured it (the op's own operands are not written)
_OUT = {
    "mul(out=)": lambda b, m: m.mul(m.ones(3), 2, out=b),
    "exp(out=)": lambda b, m: m.exp(m.ones(3), out=b),
    "sum(out=)": lambda b, m: m.sum(m.ones(2, 3), 0, out=b),
    "matmul(out=)": lambda b, m: m.matmul(m.ones(3, 2), m.ones(2), out=b),
    "where(out=)": lambda b, m: m.where(m.ones(3) > 0, m.ones(3), m.zeros(3), out=b),
    "cat(out=)": lambda b, m: m.cat([m.ones(1), m.ones(2)], out=b),
    "gather(out=)": lambda b, m: m.gather(m.ones(3), 0, m.tensor([0, 1, 2]), out=b),
    "clamp(out=)": lambda b, m: m.clamp(m.ones(3), 0, 0.5, out=b),
    "lerp(out=)": lambda b, m: m.lerp(m.ones(3), m.zeros(3), 0.25, out=b),
    # ... but not an in-place write right after one
    "mul(out=) then add_": lambda b, m: (m.mul(m.ones(3), 2, out=b), b.add_(1)),
}


@pytest.mark.parametrize("transform", ["grad", "jvp", "vmap(grad)"])
@pytest.mark.parametrize("name", list(_OUT))
def test_out_writes_into_a_captured_tensor(transform, name):
    t = _outcome(torch, transform, _OUT[name], "captured")
    e = _outcome(ember, transform, _OUT[name], "captured")
    assert e[0] == t[0], (transform, name, e[0], t[0])
    np.testing.assert_array_equal(e[1], t[1])


def test_random_fill_of_a_captured_tensor_is_refused():
    assert _outcome(ember, "grad", _INPLACE["uniform_"], "captured")[0]


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_inputs_and_what_is_made_inside_may_be_written(m):
    f = m.func

    def loss(x, y):
        y.add_(1)                        # a non-differentiated input
        z = x * 2
        z.mul_(3)                        # an intermediate
        w = m.zeros(3)
        w[0] = 1.0                       # a tensor made inside
        return (z * w).sum() + y.sum()
    y = m.zeros(3)
    g = f.grad(loss)(m.ones(3), y)
    np.testing.assert_allclose(g.numpy(), [6.0, 0.0, 0.0])
    np.testing.assert_allclose(y.numpy(), [1.0, 1.0, 1.0])   # the caller's tensor was written


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_batch_norm_updates_its_stats_but_not_through_a_captured_counter(m):
    x = m.arange(12.0).reshape(4, 3)
    rm, rv = m.zeros(3), m.ones(3)
    m.func.grad(lambda x: m.nn.functional.batch_norm(x, rm, rv, training=True).sum())(x)
    np.testing.assert_allclose(rm.numpy(), [0.45, 0.55, 0.65], rtol=1e-6)
    bn = m.nn.BatchNorm1d(3)
    params, buffers = dict(bn.named_parameters()), dict(bn.named_buffers())

    def passed(p, b, x):
        return m.func.functional_call(bn, (p, b), (x,)).sum()
    m.func.grad(passed)(params, buffers, x)       # the buffers are inputs: written
    assert int(buffers["num_batches_tracked"]) == 1

    def captured(p, x):
        return m.func.functional_call(bn, p, (x,)).sum()
    with pytest.raises(RuntimeError, match="captured"):
        m.func.grad(captured)(params, x)          # num_batches_tracked.add_(1)


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_nested_transforms_capture_relative_to_the_inner_one(m):
    f = m.func

    def outer(x):
        made_in_outer = x * 1

        def inner(y):
            made_in_outer.add_(1)
            return (y * 2).sum()
        return f.grad(inner)(x).sum()
    with pytest.raises(RuntimeError, match="captured"):
        f.grad(outer)(m.ones(3))

    def outer_ok(x):
        g = f.grad(lambda y: (y * y).sum())(x)
        g.add_(1)                       # the inner transform's result belongs to the outer
        return (g * x).sum()
    np.testing.assert_allclose(f.grad(outer_ok)(m.ones(3)).numpy(), [5.0, 5.0, 5.0])


def test_outside_transforms_nothing_changes():
    buf = ember.zeros(3)
    ember.func.grad(lambda x: (x * 2).sum())(ember.ones(3))
    buf.add_(1)                         # a transform that ended leaves no restriction
    with ember.inference_mode():
        t = ember.zeros(3)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        t.unsqueeze_(0)                 # metadata in-place ops refuse inference tensors too


_REQUIRES_GRAD_FORMS = {
    "requires_grad_() on a tensor made inside": lambda x, m: m.zeros(3).requires_grad_(),
    "requires_grad_(False)": lambda x, m: m.zeros(3).requires_grad_(False),
    "requires_grad_() on the input": lambda x, m: x.requires_grad_(),
    "factory requires_grad=True": lambda x, m: m.zeros(3, requires_grad=True),
    "the requires_grad attribute": lambda x, m: setattr(m.zeros(3), "requires_grad", True),
    "nn.Parameter and a Linear": lambda x, m: (m.nn.Parameter(m.ones(2)), m.nn.Linear(2, 2)),
}


@pytest.mark.parametrize("transform", ["grad", "vmap", "jvp"])
@pytest.mark.parametrize("form", list(_REQUIRES_GRAD_FORMS))
def test_requires_grad_inside_a_transform(transform, form):
    """Tensor.requires_grad_() is refused inside any transform (vmap too), as PyTorch
    refuses it; the attribute, factories and Parameters stay allowed."""
    def outcome(m):
        def fn(x):
            _REQUIRES_GRAD_FORMS[form](x, m)
            return (x * 2).sum() if transform == "grad" else x * 2
        f = m.func
        run = {"grad": lambda: f.grad(fn)(m.ones(3)),
               "vmap": lambda: f.vmap(fn)(m.ones(2, 3)),
               "jvp": lambda: f.jvp(fn, (m.ones(3),), (m.ones(3),))}[transform]
        try:
            run()
        except RuntimeError as e:       # (a Linear under vmap: its init draws at random)
            return "requires_grad_()" in str(e), "random operation" in str(e)
        return "ran"
    assert outcome(ember) == outcome(torch)


@pytest.mark.parametrize("m", [ember, torch])
def test_out_forms_under_forward_ad_raise_not_implemented_as_torch(m):
    buf = m.zeros(3)
    x = m.tensor([1.0, 2.0, 3.0])

    def f(v):
        m.sin(v, out=buf)
        return v.sum()
    with pytest.raises(NotImplementedError, match="sin_out that does not support it"):
        m.func.jvp(f, (x,), (m.ones(3),))
