"""ember.cuda.streams (``torch.cuda.streams``): Stream, ExternalStream and Event.  They are
the CUDA plugin's classes (which report this module, as PyTorch's); with no plugin
installed they are placeholders whose construction raises, as in PyTorch's CPU-only
build."""
__all__ = ["Event", "ExternalStream", "Stream"]  # noqa: F822 (module __getattr__)

_placeholders = {}


def _placeholder(name):
    cls = _placeholders.get(name)
    if cls is None:
        def __new__(cls, *args, **kwargs):
            raise RuntimeError(f"ember.cuda.{name} requires CUDA support (no CUDA plugin is "
                               f"installed: pip install ember-cuda)")
        bases = (_placeholder("Stream"),) if name == "ExternalStream" else ()
        cls = _placeholders[name] = type(name, bases, {
            "__new__": __new__, "__module__": __name__,
            "__doc__": f"Placeholder for ember.cuda.{name}: no CUDA plugin is installed."})
    return cls


def __getattr__(name):
    if name in __all__:
        from ember import cuda
        cls = getattr(cuda._runtime(), name, None)
        return cls if cls is not None else _placeholder(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
