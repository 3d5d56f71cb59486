"""The implementations behind ember.nn.functional, one module per family (activation,
linear, dropout, sparse, conv, pooling, norms, losses, padding, attention);
nn/functional.py re-exports them under PyTorch's names."""
