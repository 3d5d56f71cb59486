"""Symbolic ints, floats and bools (defined in core/_sym.py), under the façade's name."""
from ember.core._sym import *  # noqa: F403
from ember.core._sym import __all__  # noqa: F401
