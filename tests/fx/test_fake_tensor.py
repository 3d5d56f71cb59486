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


# each case: (input shapes, function).  "n" and "m" are sizes: symbolic (one SymInt each,
# shared by every input) on fakes, random concrete values on eager CPU tensors.
CASES = {
    "add": ([("n", "m"), ("m",)], lambda a, b: a + b),
    "add_scalar_int": ([("n",)], lambda a: (a.long() + 2) * 3),
    "broadcast": ([("n", 1, "m"), (5, 1)], lambda a, b: ember.mul(a, b)),
    "compare": ([("n", "m")], lambda a: (a > 0).logical_and(a < 1)),
    "unary": ([("n", 3)], lambda a: ember.exp(a).neg().sigmoid()),
    "where": ([("n", "m"), ("m",)], lambda a, b: ember.where(a > 0, a, b)),
    "sum_dim": ([("n", 3, "m")], lambda a: a.sum((0, 2))),
    "sum_all": ([("n", 3)], lambda a: a.sum()),
    "mean_keepdim": ([("n", 3, "m")], lambda a: a.mean(1, keepdim=True)),
    "amax": ([("n", "m")], lambda a: ember.amax(a, -1)),
    "argmax": ([("n", "m")], lambda a: a.argmax(0, keepdim=True)),
    "max_dim": ([("n", "m")], lambda a: a.max(1)[0]),
    "cumsum": ([("n", "m")], lambda a: a.cumsum(1)),
    "matmul": ([(2, "n", 3), (3, "m")], lambda a, b: a @ b),
    "matmul_batch_bcast": ([("n", 1, 2, 3), ("m", 3, 4)], lambda a, b: ember.matmul(a, b)),
    "matmul_vec": ([("n", "m"), ("m",)], lambda a, b: a @ b),
    "bmm": ([(2, "n", "m"), (2, "m", 5)], lambda a, b: ember.bmm(a, b)),
    "mm": ([("n", "m"), ("m", 6)], lambda a, b: a.mm(b)),
    "view": ([("n", 3, "m")], lambda a: a.view(-1, a.shape[2])),
    "reshape": ([("n", 6)], lambda a: a.reshape(2, -1)),
    "reshape_fn": ([("n", "m", 2)], lambda a: ember.reshape(a, (-1, 2))),
    "permute": ([("n", 3, "m")], lambda a: a.permute(2, 0, 1)),
    "transpose": ([("n", "m")], lambda a: a.t().unsqueeze(1)),
    "squeeze": ([("n", 1, "m")], lambda a: a.squeeze(1).squeeze()),
    "flatten": ([("n", 3, "m")], lambda a: a.flatten(1)),
    "expand": ([("n", 1)], lambda a: a.expand(-1, 5)),
    "expand_as": ([("n", 1), ("n", "m")], lambda a, b: a.expand_as(b)),
    "narrow": ([("n", 3)], lambda a: a.narrow(0, 1, 1)),
    "select": ([("n", "m")], lambda a: a.select(1, -1)),
    "getitem": ([("n", 4, "m")], lambda a: a[1:, None, ::2, -1]),
    "getitem_neg": ([("n", "m")], lambda a: a[:-1, 1:]),
    "cat": ([("n", "m"), (2, "m")], lambda a, b: ember.cat([a, b], 0)),
    "stack": ([("n", "m"), ("n", "m")], lambda a, b: ember.stack([a, b], 1)),
    "softmax": ([("n", "m")], lambda a: ember.log_softmax(a.softmax(-1), 0)),
    "linear": ([("n", 3), ("m", 3), ("m",)], lambda x, w, b: F.linear(x, w, b)),
    "linear_3d": ([(2, "n", 3), ("m", 3)], lambda x, w: F.linear(x, w)),
    "conv1d": ([("n", 3, "m"), (4, 3, 2)], lambda x, w: F.conv1d(x, w, padding=1, stride=2)),
    "conv2d": ([(2, 3, "n", "m"), (4, 3, 2, 2)], lambda x, w: F.conv2d(x, w, dilation=2,
                                                                       padding=1)),
    "to_dtype": ([("n", "m")], lambda a: a.to(ember.float64) * 2),
}


def _concrete(shapes, n, m):
    return [tuple({"n": n, "m": m}.get(d, d) for d in shape) for shape in shapes]


def _trace(name, n, m):
    """The case's output on fakes with hints n, m: (output, ShapeEnv, symbols by letter)."""
    shapes, fn = CASES[name]
    env = ShapeEnv()
    syms = {"n": env.create_symint(n), "m": env.create_symint(m)}
    fakes = [ember.empty(*[syms.get(d, d) for d in shape], device="meta") for shape in shapes]
    return fn(*fakes), env, syms


def _eager(name, n, m):
    shapes, fn = CASES[name]
    return fn(*[ember.randn(*s) for s in _concrete(shapes, n, m)])


def _substitute(shape, syms, n, m):
    values = {syms[k].node.expr: v for k, v in (("n", n), ("m", m))}
    return tuple(int(s.node.expr.xreplace(values)) if isinstance(s, ember.SymInt) else s
                 for s in shape)


@pytest.mark.parametrize("name", sorted(CASES))
def test_symbolic_shape_matches_eager(name):
    r, env, syms = _trace(name, 4, 5)
    eager = _eager(name, 4, 5)
    assert isinstance(r, FakeTensor)
    assert _eval(r.shape) == tuple(eager.shape)
    assert r.dtype == eager.dtype
    assert r.stride() == tuple(r.stride(i) for i in range(r.dim()))
    assert _eval(r.stride()) == tuple(eager.stride())


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=8, deadline=None)
@given(n=st.integers(2, 7), m=st.integers(2, 7), n2=st.integers(2, 9), m2=st.integers(2, 9))
def test_property_symbolic_shape_generalises(name, n, m, n2, m2):
    """Traced at (n, m): the symbolic shape under the hints is the eager shape; under new
    sizes (n2, m2) for which the recorded guards hold it is the eager shape there too."""
    r, env, syms = _trace(name, n, m)
    assert _eval(r.shape) == tuple(_eager(name, n, m).shape)
    if env.evaluate_guards({"s0": n2, "s1": m2}):
        assert _substitute(r.shape, syms, n2, m2) == tuple(_eager(name, n2, m2).shape)


@pytest.mark.parametrize("name", sorted(n for n in CASES if not n.startswith("conv")))
def test_meta_concrete_sizes(name):
    shapes, fn = CASES[name]
    shapes = _concrete(shapes, 4, 5)
    r = fn(*[ember.empty(*s, device="meta") for s in shapes])
    eager = fn(*[ember.randn(*s) for s in shapes])
    assert r.is_meta and not isinstance(r, FakeTensor)
    assert tuple(r.shape) == tuple(eager.shape) and r.dtype == eager.dtype


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
