"""Window functions (``torch.signal.windows``), SciPy's definitions: ``sym=True`` gives the
symmetric window (filter design), ``sym=False`` the periodic one (spectral analysis)."""
from ember.signal.windows.windows import *  # noqa: F403
from ember.signal.windows.windows import __all__ as __all__
