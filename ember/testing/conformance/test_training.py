"""Training runs on the device against the same runs on the CPU, in float32 and under
autocast with a GradScaler."""
import pytest

from ember.testing.conformance import _cases_training  # noqa: F401  (registers cases)
from ember.testing.conformance._case import params


@pytest.mark.parametrize("case,dtype,variant", params("training"))
def test_training(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)
