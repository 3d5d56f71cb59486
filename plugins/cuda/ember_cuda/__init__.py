"""ember-cuda: ember's NVIDIA GPU backend on PyCUDA and the CUDA driver.

Importing it (ember does, to register the "cuda" device type) loads neither PyCUDA nor the
driver: ``ember.cuda.is_available()`` does, the first time it is asked."""

__version__ = "0.1.0"
