"""Elementwise entries (unary, binary, where, copy, fill, ternary) and copies to and from the
host."""
import pytest

from ember.testing.conformance import _cases_elementwise  # noqa: F401  (registers cases)
from ember.testing.conformance._case import params


@pytest.mark.parametrize("case,dtype,variant", params("unary"))
def test_unary(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("binary"))
def test_binary(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("where", "fill", "copy"))
def test_where_fill_copy(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("ternary"))
def test_ternary(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("host"))
def test_host_copies(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)
