"""Deterministic mode: repeated runs give the same bits; declared order-dependent ops
raise or warn."""
import pytest

from ember.testing.conformance import _cases_determinism  # noqa: F401  (registers cases)
from ember.testing.conformance._case import params


@pytest.mark.parametrize("case,dtype,variant", params("determinism"))
def test_determinism(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)
