"""Fixtures for the autograd tests: the devices under test (EMBER_TEST_DEVICES, as the
core tests), the catalogue of differentiable ops of tests/core/test_gradcheck_sweep.py."""
import importlib.util
import os
import pathlib

import pytest

import ember

DEVICES = os.environ.get("EMBER_TEST_DEVICES", "cpu").split(",")
if "memcore" in DEVICES:
    from ember.testing._devices import MEMORY_CORE, partial_device
    partial_device("memcore", MEMORY_CORE)


@pytest.fixture(params=DEVICES)
def device(request):
    if not ember.get_device_module(request.param).is_available():
        pytest.skip(f"device '{request.param}' is not available")
    return request.param


@pytest.fixture(scope="session")
def op_catalogue():
    """The sweep's {name: (function, input builders)} and its float64 leaf maker."""
    path = pathlib.Path(__file__).parents[1] / "core" / "test_gradcheck_sweep.py"
    spec = importlib.util.spec_from_file_location("_gradcheck_sweep", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.OPS, module._leaves
