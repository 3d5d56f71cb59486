"""ember.func's transforms against torch.func: PyTorch's tutorials (per-sample gradients of
a small CNN, model ensembling, Jacobians and Hessians of an MLP, neural tangent kernels),
every composition order, argnums/has_aux/chunk_size, and the errors."""
import ember.nn as enn
import ember.nn.functional as F
import numpy as np
import pytest
import torch
import torch.nn as tnn

import ember
from ember import func as efunc

RNG = np.random.default_rng(11)


def _arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _close(e, t, rtol=1e-4, atol=1e-5):
    if isinstance(e, dict):
        assert set(e) == set(t)
        for k in e:
            _close(e[k], t[k], rtol, atol)
        return
    if isinstance(e, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _close(a, b, rtol, atol)
        return
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


def _copy_weights(src_torch, dst_ember):
    for (name, p) in src_torch.named_parameters():
        dict(dst_ember.named_parameters())[name].data.copy_(ember.tensor(p.detach().numpy()))


class _CNN:
    """The per-sample-gradients tutorial's network, smaller (12x12 inputs)."""

    @staticmethod
    def build(nn):
        class CNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(1, 4, 3, 1)
                self.conv2 = nn.Conv2d(4, 8, 3, 1)
                self.fc1 = nn.Linear(8 * 4 * 4, 16)
                self.fc2 = nn.Linear(16, 10)

            def forward(self, x):
                f = F if nn is enn else torch.nn.functional
                x = f.relu(self.conv1(x))
                x = f.relu(self.conv2(x))
                x = f.max_pool2d(x, 2)
                x = x.flatten(1)
                x = f.relu(self.fc1(x))
                return f.log_softmax(self.fc2(x), dim=1)
        return CNN()


def test_per_sample_gradients_of_a_cnn():
    tmodel, emodel = _CNN.build(tnn), _CNN.build(enn)
    _copy_weights(tmodel, emodel)
    data, targets = _arr(6, 1, 12, 12), RNG.integers(0, 10, 6)

    def make_loss(func_mod, fn, model):
        def loss(params, buffers, x, t):
            pred = func_mod.functional_call(model, (params, buffers), (x.unsqueeze(0),))
            return fn.nll_loss(pred, t.unsqueeze(0))
        return loss

    tloss = make_loss(torch.func, torch.nn.functional, tmodel)
    eloss = make_loss(efunc, F, emodel)
    tp = {k: v.detach() for k, v in tmodel.named_parameters()}
    ep = {k: v.detach() for k, v in emodel.named_parameters()}
    tg = torch.func.vmap(torch.func.grad(tloss), in_dims=(None, None, 0, 0))(
        tp, {}, torch.tensor(data), torch.tensor(targets))
    eg = efunc.vmap(efunc.grad(eloss), in_dims=(None, None, 0, 0))(
        ep, {}, ember.tensor(data), ember.tensor(targets))
    _close(eg, tg)
    # ... equal to one backward per sample
    for i in (0, 5):
        emodel.zero_grad()
        F.nll_loss(emodel(ember.tensor(data[i:i + 1])), ember.tensor(targets[i:i + 1])).backward()
        _close({k: eg[k][i] for k in eg},
               {k: p.grad for k, p in emodel.named_parameters()})


def test_per_sample_gradients_with_batch_norm_replaced():
    """The tutorial's batch-norm recipe: replace_all_batch_norm_modules_ drops the running
    statistics (in place), so vmap(grad) normalises each sample by its own statistics."""
    def build(nn):
        return nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(),
                             nn.Linear(3 * 6 * 6, 4))
    tmodel, emodel = build(tnn), build(enn)
    _copy_weights(tmodel, emodel)
    assert efunc.replace_all_batch_norm_modules_(emodel) is emodel
    torch.func.replace_all_batch_norm_modules_(tmodel)
    bn = emodel[1]
    assert bn.running_mean is None and bn.running_var is None and bn.num_batches_tracked is None
    assert bn.track_running_stats is False
    data, targets = _arr(5, 1, 8, 8), RNG.integers(0, 4, 5)

    def grads(func_mod, fn, model, tensor):
        def loss(params, x, t):
            out = func_mod.functional_call(model, params, (x.unsqueeze(0),))
            return fn.cross_entropy(out, t.unsqueeze(0))
        params = {k: v.detach() for k, v in model.named_parameters()}
        return func_mod.vmap(func_mod.grad(loss), in_dims=(None, 0, 0))(
            params, tensor(data), tensor(targets))
    _close(grads(efunc, F, emodel, ember.tensor), grads(torch.func, torch.nn.functional,
                                                        tmodel, torch.tensor))


def test_model_ensembling_with_stack_module_state():
    tmodels = [tnn.Sequential(tnn.Linear(5, 8), tnn.ReLU(), tnn.Linear(8, 3))
               for _ in range(4)]
    emodels = [enn.Sequential(enn.Linear(5, 8), enn.ReLU(), enn.Linear(8, 3))
               for _ in range(4)]
    for t, e in zip(tmodels, emodels):
        _copy_weights(t, e)
    x = _arr(2, 5)
    tparams, tbuffers = torch.func.stack_module_state(tmodels)
    eparams, ebuffers = efunc.stack_module_state(emodels)
    assert eparams["0.weight"].shape == (4, 8, 5) and eparams["0.weight"].requires_grad
    tout = torch.func.vmap(lambda p, b, x: torch.func.functional_call(tmodels[0], (p, b), (x,)),
                           in_dims=(0, 0, None))(tparams, tbuffers, torch.tensor(x))
    eout = efunc.vmap(lambda p, b, x: efunc.functional_call(emodels[0], (p, b), (x,)),
                      in_dims=(0, 0, None))(eparams, ebuffers, ember.tensor(x))
    _close(eout, tout)
    # the stacked leaves are optimisable: gradients flow back through vmap
    eout.sum().backward()
    assert eparams["2.bias"].grad.shape == (4, 3)
    _close(eparams["2.bias"].grad, torch.full((4, 3), 2.0))
    with pytest.raises(RuntimeError, match="at least one model"):
        efunc.stack_module_state([])
    with pytest.raises(RuntimeError, match="same class"):
        efunc.stack_module_state([emodels[0], enn.Linear(5, 8)])


def _mlp_fns():
    w1, b1, w2, b2 = _arr(6, 4), _arr(6), _arr(3, 6), _arr(3)

    def make(lib, fn):
        ws = [lib.tensor(a) for a in (w1, b1, w2, b2)]

        def predict(weight, bias, x):
            return fn.linear(fn.linear(x, weight, bias).tanh(), ws[2], ws[3])
        return predict, ws
    return make(torch, torch.nn.functional), make(ember, F)


def test_jacobians_and_hessians_of_an_mlp():
    (tpred, tw), (epred, ew) = _mlp_fns()
    x = _arr(4)
    tx, ex = torch.tensor(x), ember.tensor(x)
    for name in ("jacrev", "jacfwd"):
        tj = getattr(torch.func, name)(tpred, argnums=2)(tw[0], tw[1], tx)
        ej = getattr(efunc, name)(epred, argnums=2)(ew[0], ew[1], ex)
        _close(ej, tj)
        tj = getattr(torch.func, name)(tpred, argnums=(0, 1))(tw[0], tw[1], tx)
        ej = getattr(efunc, name)(epred, argnums=(0, 1))(ew[0], ew[1], ex)
        _close(ej, tj)
    # batch Jacobians: vmap over jacrev, and jacrev of the sum over the batch
    xs = _arr(5, 4)
    tj = torch.func.vmap(torch.func.jacrev(tpred, argnums=2), (None, None, 0))(
        tw[0], tw[1], torch.tensor(xs))
    ej = efunc.vmap(efunc.jacrev(epred, argnums=2), (None, None, 0))(
        ew[0], ew[1], ember.tensor(xs))
    _close(ej, tj)
    # Hessians: every composition gives torch's
    tf = lambda x: tpred(tw[0], tw[1], x).sin().sum()                      # noqa: E731
    ef = lambda x: epred(ew[0], ew[1], x).sin().sum()                      # noqa: E731
    th = torch.func.hessian(tf)(tx)
    for fn in (efunc.hessian(ef), efunc.jacfwd(efunc.jacrev(ef)),
               efunc.jacrev(efunc.jacrev(ef)), efunc.jacfwd(efunc.jacfwd(ef)),
               efunc.jacrev(efunc.jacfwd(ef))):
        _close(fn(ex), th, rtol=1e-3, atol=1e-4)


def test_neural_tangent_kernel():
    tnet = tnn.Sequential(tnn.Linear(3, 5), tnn.Tanh(), tnn.Linear(5, 2))
    enet = enn.Sequential(enn.Linear(3, 5), enn.Tanh(), enn.Linear(5, 2))
    _copy_weights(tnet, enet)
    x1, x2 = _arr(4, 3), _arr(3, 3)

    def ntk(lib, func, net, a, b):
        params = {k: v.detach() for k, v in net.named_parameters()}

        def single(p, x):
            return func.functional_call(net, p, (x.unsqueeze(0),)).squeeze(0)
        j1 = func.vmap(func.jacrev(single), (None, 0))(params, lib.tensor(a))
        j2 = func.vmap(func.jacrev(single), (None, 0))(params, lib.tensor(b))
        parts = [lib.einsum("Naf,Mbf->NMab", j1[k].flatten(2), j2[k].flatten(2)) for k in j1]
        return lib.stack(parts).sum(0)
    _close(ntk(ember, efunc, enet, x1, x2), ntk(torch, torch.func, tnet, x1, x2), rtol=1e-3)


def _f(x, y):
    return (x.sin() * y).sum()


def test_compositions_and_options():
    x, y = _arr(3), _arr(3)
    ex, ey, tx, ty = ember.tensor(x), ember.tensor(y), torch.tensor(x), torch.tensor(y)
    tf = lambda a, b: (a.sin() * b).sum()                                  # noqa: E731
    _close(efunc.grad(_f, argnums=(0, 1))(ex, ey), torch.func.grad(tf, argnums=(0, 1))(tx, ty))
    g, v = efunc.grad_and_value(_f)(ex, ey)
    _close(v, tf(tx, ty))
    _close(efunc.grad(efunc.grad(lambda a: _f(a, ey)))(ember.tensor(0.3)),
           torch.func.grad(torch.func.grad(lambda a: tf(a, ty)))(torch.tensor(0.3)))
    aux_g, aux = efunc.grad(lambda a: (_f(a, ey), a * 2), has_aux=True)(ex)
    _close(aux, tx * 2)
    # jvp, vjp, linearize
    out, t = efunc.jvp(lambda a: a.exp() * a, (ex,), (ey,))
    _close(t, torch.func.jvp(lambda a: a.exp() * a, (tx,), (ty,))[1])
    out, fn = efunc.vjp(lambda a: a.exp() * a, ex)
    _close(fn(ey)[0], torch.func.vjp(lambda a: a.exp() * a, tx)[1](ty)[0])
    out, lin = efunc.linearize(lambda a: a.exp() * a, ex)
    _close(lin(ey), t)
    # vmap of jvp, jvp of vmap, jvp of grad (forward-over-reverse)
    xs = _arr(4, 3)
    tj = torch.func.vmap(lambda a: torch.func.jvp(torch.sin, (a,), (a,))[1])(torch.tensor(xs))
    _close(efunc.vmap(lambda a: efunc.jvp(ember.sin, (a,), (a,))[1])(ember.tensor(xs)), tj)
    _close(efunc.jvp(efunc.vmap(ember.sin), (ember.tensor(xs),), (ember.tensor(xs),))[1], tj)
    hv = efunc.jvp(efunc.grad(lambda a: _f(a, ey)), (ex,), (ey,))[1]
    _close(hv, torch.func.jvp(torch.func.grad(lambda a: tf(a, ty)), (tx,), (ty,))[1])
    # grad of vmap: an outer eager backward through per-sample results
    w = ember.tensor(y, requires_grad=True)
    efunc.vmap(lambda a: (a * w).sin().sum())(ember.tensor(xs)).sum().backward()
    tw_ = torch.tensor(y, requires_grad=True)
    torch.func.vmap(lambda a: (a * tw_).sin().sum())(torch.tensor(xs)).sum().backward()
    _close(w.grad, tw_.grad)
    # a closure over a tensor that requires grad: the gradient stays differentiable
    gw = efunc.grad(lambda a: (a * w).sum() ** 2)(ex)
    gw.sum().backward()
    assert w.grad is not None
    # chunked jacrev
    j = efunc.jacrev(lambda a: a.sin() * a.sum(), chunk_size=2)(ex)
    _close(j, torch.func.jacrev(lambda a: a.sin() * a.sum())(tx))
    assert efunc.functionalize(_f)(ex, ey).item() == pytest.approx(_f(ex, ey).item())


def test_functional_call_options():
    lin = enn.Linear(2, 2)
    w = ember.ones(2, 2)
    out = efunc.functional_call(lin, {"weight": w}, ember.ones(1, 2))
    _close(out, torch.tensor(2.0 + lin.bias.detach().numpy()).reshape(1, 2))
    assert lin.weight is not w                           # restored afterwards
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'nope'"):
        efunc.functional_call(lin, {"nope": w}, ember.ones(1, 2), strict=True)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        efunc.functional_call(lin, ({"weight": w}, {"weight": w}), ember.ones(1, 2))
    tied = enn.Sequential(enn.Linear(2, 2), enn.Linear(2, 2))
    tied[1].weight = tied[0].weight
    r = efunc.functional_call(tied, {"0.weight": ember.zeros(2, 2)}, ember.ones(1, 2))
    _close(r, torch.tensor(tied[1].bias.detach().numpy()).reshape(1, 2))
    with pytest.raises(ValueError, match="which are tied"):
        efunc.functional_call(tied, {"0.weight": ember.zeros(2, 2),
                                     "1.weight": ember.ones(2, 2)}, ember.ones(1, 2))


def test_errors_match_pytorch():
    x = ember.ones(3)
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
        efunc.grad(lambda a: a * 2)(x)
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a Tensor"):
        efunc.grad(lambda a: 1.0)(x)
    with pytest.raises(RuntimeError, match="output of function f should be a tuple"):
        efunc.grad(lambda a: a.sum(), has_aux=True)(x)
    with pytest.raises(RuntimeError, match="Got argnum=2, but only 1 positional inputs"):
        efunc.grad(lambda a: a.sum(), argnums=2)(x)
    with pytest.raises(RuntimeError, match="argnums must be int or Tuple"):
        efunc.grad(lambda a: a.sum(), argnums=[0])(x)
    with pytest.raises(RuntimeError, match="argnums elements must be unique"):
        efunc.grad(lambda a: a.sum(), argnums=(0, 0))(x)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        efunc.jvp(ember.sin, x, (x,))
    with pytest.raises(RuntimeError, match="same python structure"):
        efunc.jvp(ember.sin, (x,), (x, x))
    with pytest.raises(ValueError, match="must be Tensor"):
        efunc.grad(lambda a: ember.ones(()))(1.0)
    with pytest.raises(ValueError, match="chunk_size` should be greater than 0"):
        efunc.jacrev(ember.sin, chunk_size=0)
    with pytest.raises(RuntimeError, match="invalid argument for remove"):
        efunc.functionalize(ember.sin, remove="views")
    assert ember.vmap is efunc.vmap


def test_has_aux_and_argnums_everywhere():
    x, y = ember.tensor(_arr(3)).double(), ember.tensor(_arr(3)).double()
    tx, ty = torch.tensor(x.numpy()), torch.tensor(y.numpy())

    def fe(a, b):
        return (a.sin() * b).sum() * a, {"aux": a.cos()}

    def ft(a, b):
        return (a.sin() * b).sum() * a, {"aux": a.cos()}
    for name in ("jacrev", "jacfwd"):
        je, ae = getattr(efunc, name)(fe, argnums=(0, 1), has_aux=True)(x, y)
        jt, at = getattr(torch.func, name)(ft, argnums=(0, 1), has_aux=True)(tx, ty)
        _close(je, jt)
        _close(ae["aux"], at["aux"])
    out, fn, aux = efunc.vjp(fe, x, y, has_aux=True)
    _close(fn(ember.ones(3, dtype=ember.float64)),
           torch.func.vjp(ft, tx, ty, has_aux=True)[1](torch.ones(3, dtype=torch.float64)))
    _close(efunc.jvp(fe, (x, y), (y, x), has_aux=True)[1],
           torch.func.jvp(ft, (tx, ty), (ty, tx), has_aux=True)[1])
    h = efunc.hessian(lambda a, b: (a.sin() * b).sum() ** 2, argnums=(0, 1))(x, y)
    _close(h, torch.func.hessian(lambda a, b: (a.sin() * b).sum() ** 2, argnums=(0, 1))(tx, ty),
           rtol=1e-9, atol=1e-10)


_OUTER = {      # transforms inside vmap whose inputs require grad outside it (MAML-style)
    "grad_w": lambda fn, w, x: fn.vmap(fn.grad(_sq_sin), in_dims=(None, 0))(w, x),
    "grad_x": lambda fn, w, x: fn.vmap(fn.grad(_sq_sin, argnums=1), in_dims=(None, 0))(w, x),
    "grad_both": lambda fn, w, x: fn.vmap(fn.grad(_sq_sin, argnums=(0, 1)),
                                          in_dims=(None, 0))(w, x)[1],
    "jacrev_x": lambda fn, w, x: fn.vmap(fn.jacrev(_sin_mul, argnums=1), in_dims=(None, 0))(w, x),
    "jacfwd_x": lambda fn, w, x: fn.vmap(fn.jacfwd(_sin_mul, argnums=1), in_dims=(None, 0))(w, x),
    "hessian": lambda fn, w, x: fn.vmap(fn.hessian(_sq_sin), in_dims=(None, 0))(w, x),
    "vjp": lambda fn, w, x: fn.vmap(lambda w, x: fn.vjp(lambda x: _sin_mul(w, x), x)[1](
        x.new_ones(3))[0], in_dims=(None, 0))(w, x),
    "nested": lambda fn, w, x: fn.vmap(fn.vmap(fn.grad(_sq_sin), in_dims=(None, 0)),
                                       in_dims=(None, 0))(w, x.reshape(2, 2, 3)),
    "in_dims_1": lambda fn, w, x: fn.vmap(fn.grad(_sq_sin, argnums=1),
                                          in_dims=(None, 1))(w, x.t()),
}


def _sin_mul(w, x):
    return (x * w).sin()


def _sq_sin(w, x):
    return _sin_mul(w, x).pow(2).sum()


@pytest.mark.parametrize("w_requires_grad", [False, True])
@pytest.mark.parametrize("case", sorted(_OUTER))
def test_transforms_inside_vmap_stay_on_the_outer_graph(case, w_requires_grad):
    # the per-sample results are differentiated again outside the vmap, with respect to the
    # batched input and a shared one: second-order gradients, as torch.func gives them
    # (ember's had cut the graph when the batched input required grad: x.grad was missing)
    xs, ws = _arr(4, 3).astype(np.float64), _arr(3).astype(np.float64)
    results = []
    for lib, fn in ((ember, efunc), (torch, torch.func)):
        x = lib.tensor(xs, requires_grad=True)
        w = lib.tensor(ws, requires_grad=w_requires_grad)
        out = _OUTER[case](fn, w, x)
        out.pow(2).sum().backward()
        results.append((out, x.grad, w.grad))
    (eo, ex, ew), (to, tx, tw) = results
    _close(eo, to, 1e-9, 1e-9)
    _close(ex, tx, 1e-9, 1e-9)
    if w_requires_grad:
        _close(ew, tw, 1e-9, 1e-9)
    else:
        assert ew is None and tw is None


_NORMS = {
    "norm": lambda lib, a: a.norm(),
    "norm_dim": lambda lib, a: a.reshape(2, 3).norm(dim=1).sum(),
    "vector_norm_3": lambda lib, a: lib.linalg.vector_norm(a, 3),
    "linalg_norm": lambda lib, a: lib.linalg.norm(a),
    "gelu": lambda lib, a: lib.nn.functional.gelu(a).sum(),
}


@pytest.mark.parametrize("name", sorted(_NORMS))
def test_forward_over_reverse_through_saved_intermediates(name):
    # the norm's backward read the norm it saved in forward, which carries no tangent:
    # hessian (jacfwd of jacrev) lost the -x (x.t) / |x|^3 term
    xs = np.array([0.3, -1.2, 0.8, 0.5, -0.1, 2.0])
    got = efunc.hessian(lambda a: _NORMS[name](ember, a))(ember.tensor(xs))
    want = torch.func.hessian(lambda a: _NORMS[name](torch, a))(torch.tensor(xs))
    _close(got, want, 1e-9, 1e-12)
    got = efunc.jvp(efunc.grad(lambda a: _NORMS[name](ember, a)), (ember.tensor(xs),),
                    (ember.ones(6, dtype=ember.float64),))[1]
    want = torch.func.jvp(torch.func.grad(lambda a: _NORMS[name](torch, a)),
                          (torch.tensor(xs),), (torch.ones(6, dtype=torch.float64),))[1]
    _close(got, want, 1e-9, 1e-12)


_VIEWS = {      # backward formulas that write a region of zeros (views, indexing, scatter)
    "index": lambda lib, v: v[0] ** 2 * v[1],
    "slice": lambda lib, v: (v[1:3] ** 3).sum(),
    "fancy": lambda lib, v: (v[lib.tensor([0, 2, 2])] ** 3).sum(),
    "expand": lambda lib, v: (v.expand(2, 4) ** 3).sum(),
    "roll": lambda lib, v: (lib.roll(v, 1) * v).sum(),
    "diagonal": lambda lib, v: (v.reshape(2, 2).diagonal() ** 3).sum(),
    "trace": lambda lib, v: lib.trace(v.reshape(2, 2)) ** 2,
    "reflect_pad": lambda lib, v: (lib.nn.functional.pad(v[None, None], (1, 1),
                                                         mode="reflect") ** 3).sum(),
    "index_put": lambda lib, v: (v.index_put((lib.tensor([1]),), v[0:1] ** 2) ** 2).sum(),
    "select_scatter": lambda lib, v: (lib.select_scatter(v, v[0] ** 2, 0, 1) ** 2).sum(),
    "narrow_cat": lambda lib, v: (lib.cat([v.narrow(0, 1, 2), v[:2]]) ** 3).sum(),
}


@pytest.mark.parametrize("name", sorted(_VIEWS))
def test_hessians_through_views_and_indexing(name):
    # forward-over-reverse: a view's backward writes g into a region of zeros, and jacfwd's
    # tangents are batched while those zeros are not (ember raised UnbatchedSelfWrite)
    xs = np.array([0.3, -1.2, 0.8, 0.5])
    got = efunc.hessian(lambda v: _VIEWS[name](ember, v))(ember.tensor(xs))
    want = torch.func.hessian(lambda v: _VIEWS[name](torch, v))(torch.tensor(xs))
    _close(got, want, 1e-9, 1e-12)


def test_layer_norm_hessian_with_an_input_dependent_weight_matches_finite_differences():
    # torch.func disagrees with finite differences of its own gradient here (its answer is
    # not even symmetric); ember's hessian and jacrev(jacrev) match them
    xs = np.array([0.3, -1.2, 0.8, 0.5])

    def f(lib, v):
        return lib.nn.functional.layer_norm(v[None], (4,), v.abs() + 1).sum() ** 2

    def grad_at(x):
        return efunc.grad(lambda v: f(ember, v))(ember.tensor(x)).numpy()
    fd = np.stack([(grad_at(xs + 1e-6 * e) - grad_at(xs - 1e-6 * e)) / 2e-6
                   for e in np.eye(4)])
    for h in (efunc.hessian(lambda v: f(ember, v)),
              efunc.jacrev(efunc.jacrev(lambda v: f(ember, v)))):
        np.testing.assert_allclose(h(ember.tensor(xs)).numpy(), fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["constant", "detached", "argmax", "partly", "linear_twice"])
def test_outputs_that_do_not_depend_on_the_input_give_zeros(name):
    cases = {
        "constant": lambda fn, lib, x: fn.jacrev(lambda a: lib.ones(2, dtype=a.dtype))(x),
        "detached": lambda fn, lib, x: fn.grad(lambda a: a.detach().sum())(x),
        "argmax": lambda fn, lib, x: fn.grad(lambda a: a.argmax())(x),
        "partly": lambda fn, lib, x: fn.jacrev(lambda a: (a.sin(), lib.ones(2,
                                                                      dtype=a.dtype)))(x),
        "linear_twice": lambda fn, lib, x: fn.jacrev(fn.jacrev(lambda a: a @ lib.ones(
            3, 2, dtype=a.dtype)))(x),
    }
    xs = np.array([0.3, -1.2, 0.8])
    got = cases[name](efunc, ember, ember.tensor(xs))
    want = cases[name](torch.func, torch, torch.tensor(xs))
    _close(got, want, 1e-12, 1e-12)


@pytest.mark.parametrize("api", ["grad", "vjp", "jacrev", "jacfwd", "jvp"])
@pytest.mark.parametrize("aux", [3, [1.0], None])
def test_non_tensor_aux_raises_as_torch_func(api, aux):
    """has_aux's auxiliary output must be tensors (in any containers), as torch.func's."""
    def run(lib):
        x, f = lib.randn(3), (lambda v: ((v * 2).sum(), aux))
        fn = lib.func
        return {"grad": lambda: fn.grad(f, has_aux=True)(x),
                "vjp": lambda: fn.vjp(f, x, has_aux=True),
                "jacrev": lambda: fn.jacrev(f, has_aux=True)(x),
                "jacfwd": lambda: fn.jacfwd(f, has_aux=True)(x),
                "jvp": lambda: fn.jvp(f, (x,), (x,), has_aux=True)}[api]()
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="Expected tensors, got unsupported type"):
            run(lib)
    g, aux_out = ember.func.grad(lambda v: ((v * 2).sum(), {"a": [v]}), has_aux=True)(
        ember.ones(2))
    assert ember.equal(aux_out["a"][0], ember.ones(2))


def test_debug_unwrap():
    x = ember.randn(4, 3)
    assert ember.func.debug_unwrap(x) is x
    shapes = ember.vmap(lambda v: ember.tensor(ember.func.debug_unwrap(v).shape))(x)
    assert shapes.tolist() == [[4, 3]] * 4
