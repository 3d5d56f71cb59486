"""ember.utils: hooks, checkpoint, data, benchmark, tensorboard, dlpack (loaded on first
use)."""


def __getattr__(name):
    if name in ("checkpoint", "data", "hooks", "benchmark", "tensorboard", "dlpack"):
        import importlib
        return importlib.import_module(f"ember.utils.{name}")
    raise AttributeError(f"module 'ember.utils' has no attribute {name!r}")
