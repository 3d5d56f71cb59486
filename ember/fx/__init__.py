"""ember.fx: graph capture tooling.  ``ember.fx.experimental`` holds symbolic shapes.

Loaded lazily through the façade (``ember.fx``); importing it does not import SymPy.
"""
