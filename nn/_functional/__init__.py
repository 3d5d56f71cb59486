"""Implementation modules of ``ember.nn.functional``, one per concern (norms, losses,
padding, attention, ...); ``nn/functional.py`` re-exports their public names."""
