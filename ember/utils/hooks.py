"""ember.utils.hooks: RemovableHandle, what every register_*_hook returns."""
from ember.core.hooks import RemovableHandle as RemovableHandle

__all__ = ["RemovableHandle"]
