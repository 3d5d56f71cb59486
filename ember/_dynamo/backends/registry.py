"""The backend registry (``torch._dynamo.backends.registry``).

A backend is a callable ``backend(gm, example_inputs) -> callable``: ``gm`` is an
``ember.fx.GraphModule`` whose ``forward`` takes the graph's inputs positionally and
returns a tuple of outputs.  For training, the forward and the backward graph of a call
each go through the backend.  Built-in names load on first use.
"""
import importlib

from ember._dynamo.exc import InvalidBackend

__all__ = ["list_backends", "lookup_backend", "register_backend"]

_BACKENDS = {}
_TAGS = {}
_LAZY = {"eager": ("ember._dynamo.backends.debugging", ("debug",)),
         "aot_eager": ("ember._dynamo.backends.debugging", ("debug",)),
         "inductor": ("ember._inductor.compile_fx", ())}


def register_backend(compiler_fn=None, name=None, tags=()):
    """Register ``compiler_fn`` under ``name`` (its ``__name__`` by default); usable as a
    decorator with or without arguments."""
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name=name, tags=tags)
    if not callable(compiler_fn):
        raise TypeError(f"register_backend(): the backend must be callable, got "
                        f"{type(compiler_fn).__name__}")
    name = name or compiler_fn.__name__
    if name in _BACKENDS and _BACKENDS[name] is not compiler_fn:
        raise AssertionError(f"duplicate name: {name}")
    _BACKENDS[name] = compiler_fn
    _TAGS[name] = tuple(tags)
    return compiler_fn


def _load(name):
    if name not in _BACKENDS and name in _LAZY:
        module, tags = _LAZY[name]
        mod = importlib.import_module(module)
        fn = getattr(mod, "compile_fx" if name == "inductor" else name)
        _BACKENDS.setdefault(name, fn)
        _TAGS.setdefault(name, tags)
    return _BACKENDS.get(name)


def lookup_backend(compiler_fn):
    """The backend callable for a name or a callable."""
    if isinstance(compiler_fn, str):
        fn = _load(compiler_fn)
        if fn is None:
            raise InvalidBackend(compiler_fn)
        return fn
    if not callable(compiler_fn):
        raise InvalidBackend(repr(compiler_fn))
    return compiler_fn


def list_backends(exclude_tags=("debug", "experimental")):
    """Names of the registered backends, without those tagged ``exclude_tags``."""
    exclude = set(exclude_tags or ())
    names = set(_BACKENDS) | set(_LAZY)
    return sorted(n for n in names
                  if not exclude & set(_TAGS.get(n, _LAZY.get(n, (None, ()))[1])))
