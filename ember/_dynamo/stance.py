"""``torch.compiler.set_stance``: how every compiled function treats its next calls,
process-wide.

* ``"default"``: capture and compile as usual (``force_backend``: compile new graphs with
  that backend instead of each function's own);
* ``"force_eager"``: run every compiled function eagerly;
* ``"eager_on_recompile"``: a call no graph fits runs eagerly instead of recompiling
  (graphs already made are still used);
* ``"fail_on_recompile"``: such a call raises a RuntimeError naming the guard that failed;
* ``"eager_then_compile"``: a function's first call runs eagerly, later ones compile.

``skip_guard_eval_unsafe`` is accepted and ignored (ember checks every guard)."""
import functools

__all__ = ["STANCES", "Stance", "current", "set_stance"]

STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile",
           "eager_then_compile")


class Stance:
    __slots__ = ("stance", "force_backend")

    def __init__(self, stance="default", force_backend=None):
        self.stance, self.force_backend = stance, force_backend


_current = Stance()


def current():
    return _current


def _set(s):
    global _current
    _current = s


class set_stance:
    """Set the compiler's stance (see the module docstring): as a function (from now on),
    a context manager (inside the ``with``) or a decorator (while the function runs)."""

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        from ember._dynamo.capture import current_recorder
        if current_recorder() is not None:
            raise RuntimeError("Attempt to call set_stance inside a compiled region: call "
                               "ember.compiler.set_stance outside of ember.compile")
        if stance not in STANCES:
            raise RuntimeError(f"invalid torch.compile stance '{stance}': expected one of "
                               f"{', '.join(STANCES)}")
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        if isinstance(force_backend, str):
            from ember._dynamo.backends.registry import lookup_backend
            force_backend = lookup_backend(force_backend)
        self.prev = _current
        self.new = Stance(stance, force_backend)
        _set(self.new)

    def __call__(self, fn):
        _set(self.prev)             # as a decorator, the stance holds only inside fn

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = _current
            _set(self.new)
            try:
                return fn(*args, **kwargs)
            finally:
                _set(prev)
        return wrapper

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(self.prev)
        return False
