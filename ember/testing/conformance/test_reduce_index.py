"""Reductions, scans, gather/scatter, search (binary search, multinomial) and sort."""
import pytest

from ember.testing.conformance import _cases_reduce_index  # noqa: F401  (registers cases)
from ember.testing.conformance._case import params


@pytest.mark.parametrize("case,dtype,variant", params("reduce"))
def test_reduce(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("scan"))
def test_scan(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("index"))
def test_index(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("search"))
def test_search(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)


@pytest.mark.parametrize("case,dtype,variant", params("sort"))
def test_sort(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)
