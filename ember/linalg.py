"""ember.linalg: PyTorch's torch.linalg (LAPACK through NumPy/SciPy on the host, loaded on
first use; results on the input's device)."""
from ember.core.linalg import *  # noqa: F403
from ember.core.linalg import __all__ as __all__
