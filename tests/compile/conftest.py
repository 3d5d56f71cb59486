"""ember.compile tests: one kernel cache folder for the session (so the disk cache is not
the user's, and kernels built by one test are reused by the next), counters reset per
test, and the ``check``/``close`` helpers comparing compiled results with eager ones."""
import os

import pytest

import ember
from ember._dynamo.pytree import tree_flatten


@pytest.fixture(scope="session", autouse=True)
def _kernel_cache(tmp_path_factory):
    prev = os.environ.get("EMBER_INDUCTOR_CACHE_DIR")
    path = str(tmp_path_factory.mktemp("inductor_cache"))
    os.environ["EMBER_INDUCTOR_CACHE_DIR"] = path
    yield path
    if prev is None:
        os.environ.pop("EMBER_INDUCTOR_CACHE_DIR", None)
    else:
        os.environ["EMBER_INDUCTOR_CACHE_DIR"] = prev


@pytest.fixture(autouse=True)
def _fresh_counters():
    import ember._dynamo
    ember._dynamo.utils.reset_counters()
    yield



def assert_close(a, b, tol=1e-5):
    la, _ = tree_flatten(a)
    lb, _ = tree_flatten(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        if isinstance(x, ember.Tensor):
            assert isinstance(y, ember.Tensor) and x.shape == y.shape and x.dtype == y.dtype
            if x.numel():
                d = (x.double() - y.double()).abs()
                scale = y.double().abs() + 1
                bad = (d > tol * scale) & ~(x.isnan() & y.isnan())
                assert not bad.any().item(), f"max difference {d.max().item()}"
        else:
            assert x == y


def clone_inputs(args):
    return [a.detach().clone().requires_grad_(a.requires_grad)
            if isinstance(a, ember.Tensor) else a for a in args]


def check_fn(fn, *args, backend="aot_eager", tol=1e-5, calls=2, **kw):
    """Compile ``fn``, run it ``calls`` times, compare outputs and input gradients with
    eager's."""
    cf = ember.compile(fn, backend=backend, **kw)
    for _ in range(calls):
        a1, a2 = clone_inputs(args), clone_inputs(args)
        out, ref = cf(*a1), fn(*a2)
        assert_close(out, ref, tol)
        leaves = [o for o in tree_flatten(out)[0] if isinstance(o, ember.Tensor)
                  and o.requires_grad]
        if leaves:
            refs = [o for o in tree_flatten(ref)[0] if isinstance(o, ember.Tensor)
                    and o.requires_grad]
            tangents = [ember.randn(o.shape, dtype=o.dtype) for o in leaves]
            ember.autograd.backward(leaves, tangents)
            ember.autograd.backward(refs, tangents)
            for x, y in zip(a1, a2):
                if isinstance(x, ember.Tensor) and x.requires_grad:
                    assert_close(x.grad, y.grad, tol)
    return cf


@pytest.fixture
def check():
    """``check(fn, *args, backend=..., tol=..., **compile_kwargs)``: compiled == eager,
    values and input gradients."""
    return check_fn


@pytest.fixture
def close():
    return assert_close
