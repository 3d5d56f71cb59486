"""ShapeEnv: symbols and value ranges, guard recording (static conditions record none),
re-evaluation against new sizes, the _check family on SymBools, and PyTorch 2.13's
ShapeEnv as the reference for what guards and what is hashable."""
import math
import operator

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ember
from ember.fx.experimental.symbolic_shapes import Guard, ShapeEnv

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---- symbols -------------------------------------------------------------------------------
def test_sizes_specialise_zero_and_one():
    env = ShapeEnv()
    a, one, zero, b = (env.create_symint(h) for h in (5, 1, 0, 7))
    assert (one, zero) == (1, 0) and type(one) is int
    assert (repr(a), repr(b)) == ("s0", "s1")
    (sa, sb) = (a.node.expr, b.node.expr)
    assert env.var_to_range[sa] == (2, sympy.oo) and env.var_to_val[sb] == 7
    assert repr(env.var_to_range[sa]) == "VR[2, oo]"


def test_without_specialisation_sizes_start_at_zero():
    env = ShapeEnv(specialize_zero_one=False)
    one = env.create_symint(1)
    assert isinstance(one, ember.SymInt) and env.var_to_range[one.node.expr].lower == 0
    assert bool(one >= 0) and env.guard_count() == 0          # still static
    assert bool(one > 0) and env.guard_count() == 1


def test_explicit_ranges_and_non_sizes():
    env = ShapeEnv()
    x = env.create_symint(-4, is_size=False)
    assert env.var_to_range[x.node.expr] == (-sympy.oo, sympy.oo)
    y = env.create_symint(6, min=4, max=10)
    assert bool(y >= 4) and bool(y <= 10) and bool(y != 1) and env.guard_count() == 0
    assert bool(y > 5) and env.guard_count() == 1


@pytest.mark.parametrize("args,error", [((-1,), ValueError), ((3.0,), TypeError),
                                        ((True,), TypeError), ((12, None, 10), ValueError),
                                        ((3, 4), ValueError)])
def test_create_symbol_rejects_bad_hints(args, error):
    with pytest.raises(error, match="create_symbol"):
        ShapeEnv().create_symbol(*args)


def test_create_symfloat():
    env = ShapeEnv()
    f = env.create_symfloat(1.5)
    assert repr(f) == "f0" and isinstance(f * 2, ember.SymFloat) and (f * 2).node.hint == 3.0
    assert float(f) == 1.5 and env.guards == [Guard(sympy.Eq(f.node.expr, 1.5), True)]


# ---- guards --------------------------------------------------------------------------------
def test_branching_records_guards_with_the_hinted_result():
    env = ShapeEnv()
    a, b = env.create_symint(5), env.create_symint(3)
    taken = "big" if a > 4 else "small"
    assert taken == "big"
    assert not (a == b)
    assert int(a * b) == 15
    sa, sb = a.node.expr, b.node.expr
    assert env.guards == [Guard(sa > 4, True), Guard(sympy.Eq(sa, sb), False),
                          Guard(sympy.Eq(sa * sb, 15), True)]
    assert env.guard_count() == 3


def test_static_conditions_record_no_guard():
    env = ShapeEnv()
    a = env.create_symint(5)
    assert bool(a >= 0) and bool(a > 1) and bool(a != 1) and not bool(a < 2)
    assert bool(a + 1 > a) and bool(a * 2 >= a) and bool(a - a == 0)
    ember._check(a >= 2)
    assert env.guard_count() == 0


def test_evaluate_guards_against_new_sizes():
    env = ShapeEnv()
    a, b = env.create_symint(6), env.create_symint(4)
    assert bool(a % b == 2) and bool(a // 2 > b - 2)
    assert env.evaluate_guards([6, 4]) and env.evaluate_guards_for_args((6, 4))
    assert env.evaluate_guards([14, 4]) is True                  # 14 % 4 == 2, 7 > 2
    assert env.evaluate_guards([10, 8]) is False                 # 10 % 8 == 2, 5 > 6 fails
    assert env.evaluate_guards([7, 4]) is False
    # keyed by name or by symbol
    assert env.evaluate_guards({"s0": 14, "s1": 4})
    assert not env.evaluate_guards({a.node.expr: 7, b.node.expr: 4})
    # sizes outside the symbols' ranges (1 was specialised away) need recompilation too
    assert env.evaluate_guards([6, 1]) is False


def test_evaluate_guards_errors():
    env = ShapeEnv()
    a, _ = env.create_symint(6), env.create_symint(4)
    with pytest.raises(ValueError, match="expected 2 values"):
        env.evaluate_guards([6])
    with pytest.raises(ValueError, match="no value for s1"):
        env.evaluate_guards({"s0": 6})
    with pytest.raises(KeyError, match="s7"):
        env.evaluate_guards({"s7": 6})
    with pytest.raises(KeyError):
        env.evaluate_guards({a.node.expr + 1: 6, "s1": 4})


def test_a_guard_undefined_at_new_values_fails():
    env = ShapeEnv()
    a, b = env.create_symint(7, is_size=False), env.create_symint(2, is_size=False)
    assert bool(a // b == 3)
    assert env.evaluate_guards([7, 2]) and not env.evaluate_guards([7, 0])


COMPARE = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]
sizes = st.lists(st.integers(2, 30), min_size=2, max_size=2)


@settings(FAST, max_examples=100)     # each static check asks SymPy's assumptions (~10 ms)
@given(sizes, sizes, st.sampled_from(COMPARE), st.integers(-3, 3), st.integers(1, 3))
def test_guards_are_sound(hints, new, cmp, c, k):
    # branch on cmp(k*a + c, a // 2 + b); the recorded guards must decide the same branch
    # for any sizes that pass them, and no guard means the branch holds for every size
    env = ShapeEnv()
    a, b = (env.create_symint(h) for h in hints)

    def branch(x, y):
        return bool(cmp(k * x + c, x // 2 + y))

    assert branch(a, b) == branch(*hints)
    assert env.evaluate_guards(hints)
    if env.guard_count() == 0 or env.evaluate_guards(new):
        assert branch(*new) == branch(*hints)


# ---- the _check family ---------------------------------------------------------------------
CHECKS = [(ember._check, RuntimeError), (ember._check_index, IndexError),
          (ember._check_value, ValueError), (ember._check_type, TypeError),
          (ember._check_not_implemented, NotImplementedError)]


@pytest.mark.parametrize("check,error", CHECKS)
def test_check_family_with_symbools(check, error):
    env = ShapeEnv()
    a = env.create_symint(5)
    check(a > 3, lambda: "unused")
    assert env.guards == [Guard(a.node.expr > 3, True)]
    with pytest.raises(error, match="need a > 10"):
        check(a > 10, lambda: "need a > 10")
    assert env.guards[-1] == Guard(a.node.expr > 10, False) and env.guard_count() == 2
    check(True)
    with pytest.raises(error, match="Expected cond to be True"):
        check(False)


def test_check_with_symbool_and_plain_bool():
    env = ShapeEnv()
    a = env.create_symint(4)
    ember._check_with(ValueError, a == 4, lambda: "x")
    with pytest.raises(ValueError, match="s0 is 4"):
        ember._check_with(ValueError, a != 4, lambda: f"{a} is 4")
    assert env.guard_count() == 2
    with pytest.raises(TypeError, match="error_type"):
        ember._check_with(int, False, "m")


# ---- PyTorch 2.13 as the reference ---------------------------------------------------------
@pytest.fixture
def torch_env():
    torch = pytest.importorskip("torch")
    symbolic_shapes = pytest.importorskip("torch.fx.experimental.symbolic_shapes")
    source = pytest.importorskip("torch._dynamo.source")

    def make(*hints):
        env = symbolic_shapes.ShapeEnv()
        syms = [env.create_symintnode(env.create_symbol(h, source.ConstantSource(f"x{i}")),
                                      hint=h) for i, h in enumerate(hints)]
        return env, syms
    return torch, make


@pytest.fixture
def both(torch_env):
    """(torch ShapeEnv, its s0=5, s1=3) and (ember ShapeEnv, its s0=5, s1=3)."""
    env = ShapeEnv()
    return torch_env[1](5, 3), (env, [env.create_symint(5), env.create_symint(3)])


OPS = {
    "add": lambda a, b: a + b, "radd": lambda a, b: 3 + a, "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b, "truediv": lambda a, b: a / b, "floordiv": lambda a, b: a // b,
    "mod": lambda a, b: a % b, "rfloordiv": lambda a, b: -17 // a, "rmod": lambda a, b: -17 % b,
    "pow": lambda a, b: a ** b, "negpow": lambda a, b: a ** -2, "rpow": lambda a, b: 2 ** b,
    "neg": lambda a, b: -a, "abs": lambda a, b: abs(a), "float_add": lambda a, b: a + 0.25,
    "bool_add": lambda a, b: a + True, "lt": lambda a, b: a < b, "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != 5, "floor": lambda a, b: math.floor(a / b),
    "ceil": lambda a, b: math.ceil(a / b), "trunc": lambda a, b: math.trunc(-a / b),
    "round": lambda a, b: round(a / 2), "round2": lambda a, b: round(a / b, 2),
    "and": lambda a, b: (a > 3) & (b > 3), "or": lambda a, b: (a > 3) | (b > 3),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_types_and_hints_match_torch(both, name):
    (tenv, (ta, tb)), (env, (ea, eb)) = both
    t, e = OPS[name](ta, tb), OPS[name](ea, eb)
    assert type(t).__name__ == type(e).__name__
    t_hint = t.node.hint if hasattr(t, "node") else t
    e_hint = e.node.hint if hasattr(e, "node") else e
    assert e_hint == t_hint and type(e_hint) is type(t_hint)
    assert env.guard_count() == len(tenv.guards)


GUARDED = {
    "bool_gt": lambda a, b: bool(a > 3), "bool_static": lambda a, b: bool(a > 0),
    "int": lambda a, b: int(a), "bool_eq": lambda a, b: bool(a == b),
    "if": lambda a, b: 1 if a * b > 20 else 0, "hash_bool": lambda a, b: hash(a > b),
    "hash_float": lambda a, b: hash(a / b), "bool_int": lambda a, b: bool(a),
}


@pytest.mark.parametrize("name", sorted(GUARDED))
def test_guard_counts_and_values_match_torch(both, name):
    (tenv, (ta, tb)), (env, (ea, eb)) = both
    assert GUARDED[name](ea, eb) == GUARDED[name](ta, tb)
    assert env.guard_count() == len(tenv.guards)


def test_hashability_matches_torch(both):
    (_, (ta, tb)), (_, (ea, eb)) = both
    for fn in (lambda a, b: a, lambda a, b: a - a):
        with pytest.raises(TypeError) as t_err:
            hash(fn(ta, tb))
        with pytest.raises(TypeError) as e_err:
            hash(fn(ea, eb))
        assert str(e_err.value) == str(t_err.value)
    assert hash(ea > 0) == hash(ta > 0)
    with pytest.raises(TypeError) as t_err:
        ta + "a"
    with pytest.raises(TypeError) as e_err:
        ea + "a"
    assert str(e_err.value) == str(t_err.value)


def test_size_ranges_match_torch(torch_env):
    torch, make = torch_env
    tenv, (ta,) = make(5)
    env = ShapeEnv()
    ea = env.create_symint(5)
    assert int(tenv.var_to_range[ta.node.expr].lower) == env.var_to_range[ea.node.expr].lower
    assert make(1)[1] == [1] and env.create_symint(1) == 1
