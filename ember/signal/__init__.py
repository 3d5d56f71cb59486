"""ember.signal (``torch.signal``): signal-processing helpers; ``windows`` holds the window
functions."""
from ember.signal import windows as windows

__all__ = ["windows"]
