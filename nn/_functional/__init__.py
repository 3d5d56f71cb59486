"""The implementations behind ember.nn.functional, one module per family (activation,
linear, dropout, sparse, ...); nn/functional.py re-exports them under PyTorch's names."""
