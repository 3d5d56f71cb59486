"""matmul, random and the fused Adam and SGD steps; writes through views; gradients; seeding; the
error contract (also at a later synchronising call)."""
import pytest

from ember.testing.conformance import _cases_errors, _cases_misc  # noqa: F401  (register cases)
from ember.testing.conformance._case import params


@pytest.mark.parametrize("case,dtype,variant", params("matmul", "random", "adam", "sgd"))
def test_matmul_random_adam_sgd(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("inplace"))
def test_inplace_and_views(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("autograd"))
def test_autograd(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("rng"))
def test_rng(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("errors"))
def test_errors(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)
