"""ember-cpu: ember's CPU backend (OpenMP kernels, BLAS matmul)."""

__version__ = "0.1.0"
