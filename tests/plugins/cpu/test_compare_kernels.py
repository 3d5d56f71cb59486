"""ember-cpu's comparisons straight into bool rows in the operands' own type
(_compare_rows.h): every dtype, op and operand form (contiguous, a broadcast number, a
broadcast row or column, strided views on the general path) gives NumPy's answer, NaN
included (false but for !=)."""
import operator

import numpy as np
import pytest

import ember

OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
       ">": operator.gt, ">=": operator.ge}
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def _values(dtype, shape, seed):
    g = np.random.default_rng(seed)
    if dtype == "bool":
        return g.random(shape) < 0.5
    if dtype.startswith("float"):
        x = g.integers(-4, 5, shape).astype(dtype)        # ties are likely
        x[g.random(shape) < 0.1] = np.nan
        return x
    info = np.iinfo(dtype)
    return g.integers(max(info.min, -5), min(info.max, 5) + 1, shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(OPS))
def test_every_operand_form(dtype, op):
    a, b = _values(dtype, (33, 47), 0), _values(dtype, (33, 47), 1)
    forms = {"contiguous": (a, b), "number right": (a, b[:1, :1]), "number left": (a[:1, :1], b),
             "row": (a, b[:1]), "column": (a[:, :1], b),
             "strided": (a[:, 1::2], b[:, ::2][:, 1:]),
             "transposed": (a.T, b.T.copy())}
    for name, (x, y) in forms.items():
        got = OPS[op](ember.tensor(x), ember.tensor(y))
        assert got.dtype == ember.bool
        np.testing.assert_array_equal(got.numpy(), OPS[op](x, y), err_msg=name)


def test_a_python_number_and_an_empty_row():
    x = _values("int32", (1000,), 2)
    np.testing.assert_array_equal((ember.tensor(x) >= 2).numpy(), x >= 2)
    assert (ember.zeros(0, dtype=ember.int64) < 1).shape == (0,)
