"""ember.backends.c_codegen: the C expressions every C-like code generator shares, checked
on their own (tests/compile and tests/plugins/cuda check the generators that use them)."""
import pytest
from ember.backends import c_codegen as cg


class _Plain(cg.ExprRenderer):
    def math(self, name, dt, xs):
        if name in ("add", "mul", "sub"):
            return f"({xs[0]} {dict(add='+', mul='*', sub='-')[name]} {xs[1]})"
        if name == "exp":
            return f"exp({xs[0]})"
        return super().math(name, dt, xs)


def _load(j="j"):
    return ("load", 0, ("var", j), "float32")


def test_literals_indices_and_reduction_starts():
    assert cg.literal(1.5, "float32") == "((float)1.5)"
    assert cg.literal(float("nan"), "float64", nan="CUDART_NAN") == "((double)CUDART_NAN)"
    assert cg.literal(float("-inf"), "float32") == "(-(float)INFINITY)"
    assert cg.literal(True, "bool") == "1" and cg.literal(-3, "int16") == "((int16_t)-3LL)"
    assert cg.index(("add", ("mul", ("var", "o"), 4), ("div", ("var", "j"), 3))) == \
        "((o * 4LL) + (j / 3LL))"
    assert cg.reduction_init("sum", "int8") == "0"
    assert cg.reduction_init("max", "float32", inf="CUDART_INF") == "(-CUDART_INF)"
    # a narrow integer accumulator starts from its own limits (int64's wrap to 0 there)
    assert cg.reduction_init("max", "int32") == "INT32_MIN"
    assert cg.reduction_init("min", "uint8") == "UINT8_MAX"
    assert cg.decls("i", "j", (4, 5)) == ["const int64_t i0 = ((j / 5LL) % 4LL);",
                                          "const int64_t i1 = ((j / 1LL) % 5LL);"]


def test_row_invariant_values_go_to_the_row_and_each_value_is_named_once():
    r, row = _Plain(), cg.Scope()
    inner = cg.Scope(row, inner=True)
    scale = ("op", "exp", "float32", ("load", 1, ("var", "o"), "float32"))
    e = ("op", "mul", "float32", _load(), scale)
    name = r.expr(("op", "add", "float32", e, e), inner)
    assert row.lines == ["const float t2 = a1[o];", "const float t3 = exp(t2);"]
    assert inner.lines == ["const float t1 = a0[j];", "const float t4 = (t1 * t3);",
                           "const float t5 = (t4 + t4);"] and name == "t5"


@pytest.mark.parametrize("keep", [True, False])
def test_a_later_loop_reads_back_costly_values_and_recomputes_cheap_ones(keep):
    r, row = _Plain(), cg.Scope()
    loops = cg.PassScope(row, keep=keep)
    costly = ("op", "exp", "float32", _load())
    cheap = ("op", "mul", "float32", _load(), ("const", 2, "float32"))
    first = loops.begin()
    r.expr(("op", "add", "float32", costly, cheap), loops)
    second = loops.begin()
    r.expr(("op", "sub", "float32", costly, cheap), loops)
    assert cg.cost(costly) >= cg.KEEP_COST > cg.cost(cheap)
    later = loops.body(second)
    if keep:
        assert loops.arrays(16) == ["float keep_t2[16];"]
        assert "keep_t2[j] = t2;" in loops.body(first)
        assert later[0] == "const float t2 = keep_t2[j];"
        assert not any("exp(" in ln for ln in later)
    else:
        assert loops.arrays(16) == [] and any("exp(" in ln for ln in later)
    # the cheap value is computed again in the later loop either way
    assert any("* ((float)2.0)" in ln for ln in later)


def test_can_render_refuses_what_the_renderer_cannot_spell():
    from ember._inductor.ir import Arg, Kernel, Store
    store = Store(1, ("var", "j"), ("op", "tan", "float32", _load()), "inner")
    k = Kernel("k", (), (4,), [Arg(0, "float32"), Arg(1, "float32", True)], [], [store])
    assert not cg.can_render(_Plain(), k)
    ok = Store(1, ("var", "j"), ("op", "exp", "float32", _load()), "inner")
    assert cg.can_render(_Plain(), Kernel("k", (), (4,), k.args, [], [ok]))
    half = Kernel("k", (), (4,), [Arg(0, "float16"), Arg(1, "float16", True)], [], [])
    assert not cg.can_render(_Plain(), half)
