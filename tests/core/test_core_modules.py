"""The core's op modules split from the Tensor module (setup.py's CORE_MODULES): every
function they define is reachable as ``ember.core._tensor.<name>``, where the rest of ember
looks ops up, and is the very same object."""
import importlib

import pytest
from ember.core import _tensor

OP_MODULES = ["_views", "_indexing", "_math", "_reduce", "_conv_pool", "_norm_loss", "_fused",
              "_joining", "_random"]


@pytest.mark.parametrize("name", OP_MODULES)
def test_op_module_functions_are_reexported(name):
    module = importlib.import_module(f"ember.core.{name}")
    defined = [k for k, v in vars(module).items()     # functions (classes: see below)
               if callable(v) and not isinstance(v, type)
               and getattr(v, "__module__", None) == module.__name__
               and not k.startswith(("_d_", "__pyx"))]  # derivative formulas, Cython's own
    assert defined, name
    missing = [k for k in defined if getattr(_tensor, k, None) is not getattr(module, k)]
    assert not missing, f"ember.core._tensor does not re-export {missing} from {name}"


def test_generator_is_reexported():
    from ember.core import _random

    assert _tensor.Generator is _random.Generator
