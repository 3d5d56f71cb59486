"""vmap over the whole op catalogue (tests/core/test_gradcheck_sweep.py's ~130 ops): every
op batched equals the loop over the samples, and so do per-sample gradients (vmap of grad)
through every backward formula."""
import warnings

import numpy as np

import ember
from ember.func import grad, vmap

B = 2


def _batch(builders):
    return [ember.tensor(np.stack([make() for _ in range(B)]), dtype=ember.float64)
            for make in builders]


def _close(a, b):
    if isinstance(a, (tuple, list)):
        return all(_close(x, y) for x, y in zip(a, b))
    return tuple(a.shape) == tuple(b.shape) and np.allclose(a.numpy(), b.numpy(), rtol=1e-8,
                                                            atol=1e-10, equal_nan=True)


def _sweep(ops, make_fn):
    failed = []
    for name in sorted(ops):
        fn, builders = ops[name]
        f = make_fn(fn, len(builders))
        xs = _batch(builders)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # a fallback is allowed: it is exact
            try:
                got = vmap(f)(*xs)
            except Exception as e:                   # noqa: BLE001  (reported below)
                failed.append(f"{name}: {type(e).__name__}: {e}"[:200])
                continue
        loop = [f(*(x[i] for x in xs)) for i in range(B)]
        want = ember.stack(loop) if not isinstance(loop[0], tuple) else tuple(
            ember.stack([r[k] for r in loop]) for k in range(len(loop[0])))
        if not _close(got, want):
            failed.append(f"{name}: values differ")
    return failed


def test_vmap_of_every_catalogued_op_equals_the_loop(op_catalogue):
    ops, _ = op_catalogue
    assert _sweep(ops, lambda fn, n: fn) == []


def test_per_sample_gradients_of_every_catalogued_op(op_catalogue):
    ops, _ = op_catalogue

    def per_sample(fn, n):
        return grad(lambda *xs: fn(*xs).sin().sum(), argnums=tuple(range(n)))
    assert _sweep(ops, per_sample) == []


def test_vmap_with_shared_operands_that_require_grad(op_catalogue):
    """The first operand batched, the others shared and requiring grad outside vmap (a
    model's weights): the Autograd kernel then runs before the batching rule, and its
    entry must route again to reach the rule (layer norm's read one sample's view of the
    batch).  Values and the shared operands' gradients equal the loop's."""
    ops, _ = op_catalogue
    failed = []
    for name in sorted(ops):
        fn, builders = ops[name]
        if len(builders) < 2:
            continue
        x = _batch(builders[:1])[0]
        shared = [ember.tensor(make(), dtype=ember.float64).requires_grad_()
                  for make in builders[1:]]
        f = lambda a: fn(a, *shared)          # noqa: E731
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                got = vmap(f)(x)
            except Exception as e:            # noqa: BLE001  (reported below)
                failed.append(f"{name}: {type(e).__name__}: {e}"[:200])
                continue
        loop = [f(x[i]) for i in range(B)]
        outs = got if isinstance(got, tuple) else (got,)
        wants = tuple(ember.stack([r[k] if isinstance(r, tuple) else r for r in loop])
                      for k in range(len(outs)))
        if not _close(tuple(o.detach() for o in outs), tuple(w.detach() for w in wants)):
            failed.append(f"{name}: values differ")
            continue
        diff = [o for o in outs if o.requires_grad]
        if diff:
            g = ember.autograd.grad(sum(o.sin().sum() for o in diff), shared,
                                    allow_unused=True)
            want_loss = sum(w.sin().sum() for w, o in zip(wants, outs) if o.requires_grad)
            gl = ember.autograd.grad(want_loss, shared, allow_unused=True)
            for a, b in zip(g, gl):
                if (a is None) != (b is None) or a is not None and not _close(a, b):
                    failed.append(f"{name}: gradients differ")
                    break
    assert failed == []
