"""Meta-tensor shape propagation: FakeTensors with SymInt sizes through the op families,
checked against eager CPU results at the hint sizes."""
import ember.nn.functional as F
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from ember.fx.experimental.symbolic_shapes import ShapeEnv


@pytest.fixture(autouse=True)
def _fake_kernels():
    """Other tests register and drop their own Python-key kernels: put ours back."""
    from ember._subclasses import _fake_impls
    _fake_impls.install()


def _eval(shape):
    return tuple(s.node.hint if isinstance(s, ember.SymInt) else s for s in shape)


# each case: (input shapes, function) — run on fakes and on CPU tensors of the hint sizes
CASES = {
    "add": ([(4, 3), (3,)], lambda a, b: a + b),
    "broadcast": ([(4, 1, 3), (5, 1)], lambda a, b: ember.mul(a, b)),
    "unary": ([(4, 3)], lambda a: ember.exp(a).neg()),
    "where": ([(4, 3), (3,)], lambda a, b: ember.where(a > 0, a, b)),
    "sum_dim": ([(4, 3, 5)], lambda a: a.sum((0, 2))),
    "mean_keepdim": ([(4, 3, 5)], lambda a: a.mean(1, keepdim=True)),
    "amax": ([(4, 3)], lambda a: ember.amax(a, -1)),
    "matmul": ([(2, 4, 3), (3, 5)], lambda a, b: a @ b),
    "bmm": ([(2, 4, 3), (2, 3, 5)], lambda a, b: ember.bmm(a, b)),
    "mm": ([(4, 3), (3, 6)], lambda a, b: a.mm(b)),
    "view": ([(4, 3, 2)], lambda a: a.view(-1, 2)),
    "reshape": ([(4, 6)], lambda a: a.reshape(2, -1)),
    "permute": ([(4, 3, 2)], lambda a: a.permute(2, 0, 1)),
    "transpose": ([(4, 3)], lambda a: a.t().unsqueeze(1)),
    "squeeze": ([(4, 1, 3)], lambda a: a.squeeze(1)),
    "flatten": ([(4, 3, 2)], lambda a: a.flatten(1)),
    "expand": ([(4, 1)], lambda a: a.expand(4, 5)),
    "narrow": ([(6, 3)], lambda a: a.narrow(0, 1, 2)),
    "select": ([(4, 3)], lambda a: a.select(1, 0)),
    "getitem": ([(5, 4, 3)], lambda a: a[1:, None, ::2, -1]),
    "cat": ([(4, 3), (2, 3)], lambda a, b: ember.cat([a, b], 0)),
    "stack": ([(4, 3), (4, 3)], lambda a, b: ember.stack([a, b], 1)),
    "softmax": ([(4, 3)], lambda a: ember.log_softmax(a.softmax(-1), 0)),
    "linear": ([(4, 3), (5, 3), (5,)], lambda x, w, b: F.linear(x, w, b)),
    "conv1d": ([(2, 3, 9), (4, 3, 3)], lambda x, w: F.conv1d(x, w, padding=1, stride=2)),
    "conv2d": ([(2, 3, 8, 7), (4, 3, 3, 3)], lambda x, w: F.conv2d(x, w, dilation=2)),
}


def _fakes(shapes, dims, env):
    """Fakes of ``shapes``: dim i of input k is symbolic when (k, i) is in ``dims``."""
    mode = FakeTensorMode(shape_env=env)
    out = []
    for k, shape in enumerate(shapes):
        dyn = [i for i in range(len(shape)) if (k, i) in dims]
        out.append(mode.from_tensor(ember.empty(*shape), dynamic_dims=dyn))
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_symbolic_shape_matches_eager(name):
    shapes, fn = CASES[name]
    env = ShapeEnv()
    # the first dim of every input symbolic (equal hints -> a guard relates them)
    fakes = _fakes(shapes, {(k, 0) for k in range(len(shapes))}, env)
    r = fn(*fakes)
    eager = fn(*[ember.randn(*s) for s in shapes])
    assert isinstance(r, FakeTensor)
    assert _eval(r.shape) == tuple(eager.shape)
    assert r.dtype == eager.dtype


@pytest.mark.parametrize("name", sorted(n for n in CASES if not n.startswith("conv")))
def test_meta_concrete_sizes(name):
    shapes, fn = CASES[name]
    r = fn(*[ember.empty(*s, device="meta") for s in shapes])
    eager = fn(*[ember.randn(*s) for s in shapes])
    assert r.is_meta and tuple(r.shape) == tuple(eager.shape) and r.dtype == eager.dtype


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 6), m=st.integers(2, 6), k=st.integers(2, 6))
def test_property_hints_equal_eager(n, m, k):
    env = ShapeEnv()
    s0, s1, s2 = (env.create_symint(v) for v in (n, m, k))
    a = ember.empty(s0, s1, device="meta")
    b = ember.empty(s1, s2, device="meta")
    out = ((a @ b).sum(-1, keepdim=True) * a[:, :1]).reshape(-1).unsqueeze(0)
    x, y = ember.randn(n, m), ember.randn(m, k)
    ref = ((x @ y).sum(-1, keepdim=True) * x[:, :1]).reshape(-1).unsqueeze(0)
    assert _eval(out.shape) == tuple(ref.shape)
    assert str(out.shape[1]) == "s0"


def test_empty_with_symint_and_metadata():
    env = ShapeEnv()
    s0 = env.create_symint(4)
    t = ember.empty(s0, 3, device="meta")
    assert isinstance(t, FakeTensor) and str(t.shape) == "ember.Size([s0, 3])"
    assert str(t.numel()) == "3*s0" and t.dim() == 2 and t.stride() == (3, 1)
    assert t.size(0) is t.shape[0] and t.device == ember.device("meta")
    assert ember.zeros(s0, dtype=ember.int64, device="meta").dtype == ember.int64
    assert str(ember.ones((2, s0), device="meta").t().stride()) == "(1, s0)"
    with pytest.raises(RuntimeError):
        t.item()


def test_dtype_promotion_as_eager():
    env = ShapeEnv()
    s0 = env.create_symint(3)
    i = ember.empty(s0, dtype=ember.int32, device="meta")
    d = ember.empty(s0, dtype=ember.float64, device="meta")
    assert (i + 1).dtype == ember.int32
    assert (i + 1.5).dtype == ember.get_default_dtype()
    assert (i * d).dtype == ember.float64
    assert (i / 2).dtype == ember.float32
    assert (i > 0).dtype == ember.bool


def test_broadcast_guard_recorded_and_reevaluated():
    env = ShapeEnv()
    s0, s1 = env.create_symint(4), env.create_symint(4)
    a = ember.empty(s0, 3, device="meta")
    b = ember.empty(s1, 3, device="meta")
    assert str((a + b).shape[0]) == "s0"
    assert len(env.guards) == 1
    assert env.evaluate_guards({"s0": 7, "s1": 7})
    assert not env.evaluate_guards({"s0": 7, "s1": 5})


def test_matmul_inner_dim_guard():
    env = ShapeEnv()
    s0, s1, s2 = (env.create_symint(v) for v in (2, 5, 5))
    r = ember.empty(s0, s1, device="meta") @ ember.empty(s2, 3, device="meta")
    assert str(r.shape) == "ember.Size([s0, 3])"
    assert env.evaluate_guards([2, 6, 6]) and not env.evaluate_guards([2, 6, 7])


def test_reshape_symbolic_infer():
    env = ShapeEnv()
    s0, s1 = env.create_symint(4), env.create_symint(6)
    t = ember.empty(s0, s1, 3, device="meta")
    assert str(t.reshape(-1, 3).shape[0]) == "s0*s1"
    assert str(t.view(s0, -1).shape[1]) == "3*s1"
    assert env.guards == []


def test_errors_as_eager():
    env = ShapeEnv()
    s0, s1 = env.create_symint(4), env.create_symint(5)
    a, b = ember.empty(s0, 3, device="meta"), ember.empty(s1, 3, device="meta")
    with pytest.raises(RuntimeError, match="must match the size"):
        a + b
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        a @ b
    with pytest.raises(RuntimeError, match="must match the size"):
        ember.empty(4, 3) + ember.empty(5, 3)


def test_unsupported_op_names_itself():
    env = ShapeEnv()
    t = ember.empty(env.create_symint(4), 3, device="meta")
    with pytest.raises(NotImplementedError, match="gather"):
        ember.gather(t, 1, ember.zeros(4, 1, dtype=ember.int64, device="meta"))
    with pytest.raises(NotImplementedError, match="diagonal"):
        t.diagonal()


def test_from_tensor_dynamic_dims():
    mode = FakeTensorMode()
    f = mode.from_tensor(ember.randn(4, 1, 5, dtype=ember.float64), dynamic_dims=[0, 1])
    assert str(f.shape) == "ember.Size([s0, 1, 5])"          # size 1 stays a constant
    assert f.dtype == ember.float64 and f.device == ember.device("cpu")
    g = mode.from_tensor(ember.randn(2, 3))
    assert str(g.shape) == "ember.Size([s1, s2])"
