"""The fused entries behind nn.functional (softmax, activations, norms, nll, conv and
pooling) and nn.LSTM (rnn)."""
import pytest

from ember.testing.conformance import (  # noqa: F401  (register cases)
    _cases_convpool,
    _cases_nn,
    _cases_rnn,
)
from ember.testing.conformance._case import params


@pytest.mark.parametrize("case,dtype,variant", params("softmax"))
def test_softmax(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("activation"))
def test_activation(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("norm"))
def test_norm(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("nll"))
def test_nll(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("conv"))
def test_conv(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("pool"))
def test_pool(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("rnn"))
def test_rnn(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)
