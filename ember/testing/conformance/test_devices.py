"""Device indices: ops on an index > 0 where the device type has several, and an index
past device_count() refused."""
import pytest

from ember.testing.conformance import _cases_devices  # noqa: F401  (registers cases)
from ember.testing.conformance._case import params


@pytest.mark.parametrize("case,dtype,variant", params("devices"))
def test_devices(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)
