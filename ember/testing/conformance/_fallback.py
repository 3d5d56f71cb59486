"""The host-fallback contract as the conformance suite reads it (``ember.backends``).

A device may leave any kernel entry but the memory core NULL, or answer not-implemented:
the core then runs the op on the host through the CPU plugin (a "host fallback") and
counts it under a key such as ``"binary.pow[float16]"``, ``"copy[float32->int64]"`` or
``"matmul[float32]"``.  A plugin declares what it leaves out through its
``ember_unimplemented`` hook (patterns: ``*`` and ``?`` wildcards, brackets literal).
"""
from ember.backends import host_fallbacks, reset_host_fallbacks, unimplemented
from ember.backends._abi import matches

__all__ = ["host_fallbacks", "reset_host_fallbacks", "unimplemented", "declared",
           "undeclared_fallbacks"]


def declared(key, patterns):
    """The first pattern declaring ``key`` unimplemented, or None."""
    return next((p for p in patterns if matches(key, p)), None)


def undeclared_fallbacks(device_type, patterns):
    """Keys that ran through the host fallback on ``device_type`` without being declared."""
    return sorted(k for k, n in host_fallbacks(device_type).items()
                  if n and declared(k, patterns) is None)
