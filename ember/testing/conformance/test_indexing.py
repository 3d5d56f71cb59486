"""Negative and advanced indices: take, getitem/setitem with tensors, lists and masks,
accumulating puts, index_select and index_add_."""
import pytest

from ember.testing.conformance import _cases_indexing  # noqa: F401  (registers cases)
from ember.testing.conformance._case import params


@pytest.mark.parametrize("case,dtype,variant", params("indexing"))
def test_indexing(case, dtype, variant, ember_device):
    case.run(ember_device, dtype, variant)
