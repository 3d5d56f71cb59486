"""ember-mps: a stub backend for Apple Metal (MPS)."""
__version__ = "0.1.0"
