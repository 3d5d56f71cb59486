"""Second-order gradients through the device."""
import pytest

from ember.testing.conformance import _cases_gradgrad  # noqa: F401  (registers cases)
from ember.testing.conformance._case import params


@pytest.mark.parametrize("case,dtype,variant", params("gradgrad"))
def test_gradgrad(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)
