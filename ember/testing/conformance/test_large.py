"""Every kernel entry on tensors past the GIL-release and parallel cutoffs."""
import pytest

from ember.testing.conformance import _cases_large  # noqa: F401  (registers cases)
from ember.testing.conformance._case import params


@pytest.mark.parametrize("case,dtype,variant", params("large"))
def test_large(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)
