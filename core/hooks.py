"""RemovableHandle: what register_*_hook returns everywhere (autograd, nn)."""
__all__ = ["RemovableHandle"]


class RemovableHandle:
    """Removes its hook from a dict of hooks (``hooks_dict[id] = hook``) on remove()."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        import weakref
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_refs = tuple(weakref.ref(d) for d in (
            extra_dict if isinstance(extra_dict, list) else [extra_dict] if extra_dict else []))

    def remove(self):
        for ref in (self.hooks_dict_ref,) + self.extra_dict_refs:
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
