"""The host-fallback contract as the conformance suite reads it.

A device may leave any kernel entry but memory and copies NULL, or return
not-implemented: the core then runs the op on the host through the CPU plugin (a "host
fallback") and counts it.  The core's API (``ember.backends``):

* ``host_fallbacks(device_type) -> dict[str, int]``: keys ``"family.op[dtype]"``
  (``"binary.pow[float16]"``, ``"copy[float32->int64]"``, ``"matmul[float32]"``), values
  the call counts since the last reset;
* ``reset_host_fallbacks()``;
* ``unimplemented(device_type) -> list[str]``: fnmatch patterns the device's plugin
  declares through its ``ember_unimplemented`` hook.

SHIM(host-fallback): until the core has these functions this module stands in for them
(no fallback is ever counted; the declarations are read from the ``ember_unimplemented``
hook directly).  Remove the ``_shim_*`` functions when the core's API lands.
"""
import fnmatch

import ember

__all__ = ["host_fallbacks", "reset_host_fallbacks", "unimplemented", "declared",
           "undeclared_fallbacks"]


def _core(name):
    return getattr(ember.backends, name, None)


# SHIM(host-fallback) begin: remove at merge ------------------------------------------
def _shim_host_fallbacks(device_type):
    return {}


def _shim_reset_host_fallbacks():
    pass


def _shim_unimplemented(device_type):
    hook = getattr(ember.backends._manager().hook, "ember_unimplemented", None)
    if hook is None:
        return []
    patterns = []
    for impl in hook.get_hookimpls():
        args = {"device_type": device_type}
        got = impl.function(*[args[a] for a in impl.argnames])
        patterns.extend(got or ())
    return patterns
# SHIM(host-fallback) end ---------------------------------------------------------------


def host_fallbacks(device_type):
    f = _core("host_fallbacks") or _shim_host_fallbacks
    return dict(f(device_type))


def reset_host_fallbacks():
    (_core("reset_host_fallbacks") or _shim_reset_host_fallbacks)()


def unimplemented(device_type):
    return list((_core("unimplemented") or _shim_unimplemented)(device_type))


def declared(key, patterns):
    """The first pattern declaring `key` unimplemented, or None.  ``*`` and ``?`` are the
    wildcards; brackets are literal, since they delimit the dtype in every key
    (``binary.pow[float16]`` means that key, not fnmatch's character class)."""
    for p in patterns:
        if fnmatch.fnmatchcase(key, p.replace("[", "[[]")):
            return p
    return None


def undeclared_fallbacks(device_type, patterns):
    """Keys that ran through the host fallback on `device_type` without being declared."""
    return sorted(k for k, n in host_fallbacks(device_type).items()
                  if n and declared(k, patterns) is None)
