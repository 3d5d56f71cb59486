"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (thread-local; each
a context manager and a decorator)."""
import functools
import inspect

from ember.core import _autograd as _ag

__all__ = ["enable_grad", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled",
           "no_grad", "set_grad_enabled"]

is_grad_enabled = _ag.is_grad_enabled
is_inference_mode_enabled = _ag.is_inference_mode_enabled


class _Mode:
    """Base of the grad-mode context managers; as a decorator, each call runs in the mode (a
    generator function: each of its steps, as PyTorch's)."""

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            return self._wrap_generator(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def _wrap_generator(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as e:
                        with self.clone():
                            response = gen.throw(e)
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value
        return wrapper

    def clone(self):
        return type(self)()


class _NoArgMode(_Mode):
    """A mode that also decorates bare: ``@no_grad`` as ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoArgMode):
    """Disable gradient recording in this thread (ops record no graph)."""

    def __enter__(self):
        self._prev = _ag._set_grad_enabled(False)

    def __exit__(self, *exc):
        _ag._set_grad_enabled(self._prev)


class enable_grad(_NoArgMode):
    """Enable gradient recording in this thread (inside no_grad, for instance)."""

    def __enter__(self):
        self._prev = _ag._set_grad_enabled(True)

    def __exit__(self, *exc):
        _ag._set_grad_enabled(self._prev)


class set_grad_enabled(_Mode):
    """Set recording on or off: a function call, a context manager, or a decorator."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            kind = type(mode)
            name = kind.__name__ if kind.__module__ == "builtins" else \
                f"{kind.__module__.split('.')[0]}.{kind.__name__}"
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be "
                            f"bool, not {name}")
        self.mode = mode
        self._prev = _ag._set_grad_enabled(self.mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _ag._set_grad_enabled(self._prev)

    def __call__(self, fn):
        # as a decorator it sets the mode for each call only, not from here on (PyTorch)
        _ag._set_grad_enabled(self._prev)
        return super().__call__(fn)

    def clone(self):
        return set_grad_enabled(self.mode)


class inference_mode(_Mode):
    """no_grad, and is_inference_mode_enabled() answers True (``mode=False``: no change)."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)                        # bare @inference_mode

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __enter__(self):
        self._prev = _ag._set_inference_mode(self.mode)
        self._prev_grad = _ag._set_grad_enabled(False) if self.mode else None

    def __exit__(self, *exc):
        _ag._set_inference_mode(self._prev)
        if self._prev_grad is not None:
            _ag._set_grad_enabled(self._prev_grad)

    def clone(self):
        return inference_mode(self.mode)

    def __call__(self, fn):
        if isinstance(fn, bool):                  # @inference_mode(False) style
            return inference_mode(fn)
        return super().__call__(fn)


# public at the module path PyTorch (and pickles, reprs) know it by
for _name in __all__:
    if hasattr(globals()[_name], "__module__"):
        globals()[_name].__module__ = "ember.autograd.grad_mode"
