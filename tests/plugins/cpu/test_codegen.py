"""ember-cpu's code generator for ember.compile (ember_cpu/codegen.py), on kernels written
directly in the IR: how the parallel test weighs an element's work, and the compiler flags
that let its math vectorise (tests/compile runs the generated kernels against eager)."""
import pytest

pytest.importorskip("ember_cpu")
from ember_cpu.codegen import CKernelCodegen, work_weight  # noqa: E402

from ember._inductor.ir import Arg, Kernel, Reduce, Store  # noqa: E402

N = 1 << 20


def _flat(value):
    args = [Arg(0, "float32"), Arg(1, "float32"), Arg(2, "float32", output=True)]
    return Kernel("k0", (), (N,), args, [], [Store(2, ("var", "j"), value, "inner")])


def _load(arg):
    return ("load", arg, ("var", "j"), "float32")


def _op(name, *xs):
    return ("op", name, "float32", *xs)


def test_an_element_of_costly_math_counts_for_several_adds():
    """The cutoff counts elements of an add; sin(x) + cos(x) * 2 is worth several, so 1M of
    them split among threads where 1M adds may not."""
    add = _flat(_op("add", _load(0), _load(1)))
    trig = _flat(_op("add", _op("sin", _load(0)),
                     _op("mul", _op("cos", _load(0)), ("const", 2.0, "float32"))))
    assert work_weight(add) == 1
    w = work_weight(trig)
    assert w >= 4
    gen = CKernelCodegen()
    assert f"if({N}LL >= cutoff)" in gen.source([add])
    assert f"if({N * w}LL >= cutoff)" in gen.source([trig])


def test_the_compiler_may_if_convert_the_math_functions():
    """-fno-trapping-math (as ember-cpu's own build): without it gcc kept the branches of
    _rowmath.h's erf and exp, and a fused GELU backward ran scalar."""
    command = CKernelCodegen().command()
    assert "-fno-trapping-math" in command and "-fno-math-errno" in command
    assert "-ffast-math" not in command


def _row_max(cols):
    """out[o] = max over a row of ``cols`` float32s."""
    args = [Arg(0, "float32"), Arg(1, "float32", output=True)]
    idx = ("add", ("var", "j"), ("mul", ("var", "o"), cols))
    load = ("load", 0, idx, "float32")
    return Kernel("k0", (256,), (cols,), args, [Reduce("max", "float32", load)],
                  [Store(1, ("var", "o"), ("reduced", 0, "float32"), "outer")])


@pytest.mark.parametrize("cols", [16, 32, 63, 64, 256])
def test_short_rows_ask_for_256_bit_vectors(cols):
    """Row kernels of fewer than 64 elements a row carry EMBER_SHORT_ROWS (gcc mixed 512-
    and 256-bit registers in their reductions: attention's softmax rows of 32 ran at 2.2x
    the time); flat kernels and longer rows keep the compiler's choice."""
    src = CKernelCodegen().source([_row_max(cols)])
    assert ("EMBER_SHORT_ROWS void k0" in src) == (cols < 64)
    assert "EMBER_SHORT_ROWS void" not in CKernelCodegen().source([_flat(_load(0))])
