"""``ember.amp``: automatic mixed precision (autocast regions and gradient scaling)."""
from ember.amp.autocast_mode import autocast, is_autocast_available
from ember.amp.custom_functions import custom_bwd, custom_fwd
from ember.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
