"""ember-xpu: a stub backend for Intel GPUs (XPU)."""
__version__ = "0.1.0"
