"""ember.storage (``torch.storage``): UntypedStorage and TypedStorage (implemented in
core/storages.py)."""
from ember.core.storages import TypedStorage as TypedStorage
from ember.core.storages import UntypedStorage as UntypedStorage

__all__ = ["TypedStorage", "UntypedStorage"]
