"""RemovableHandle: what register_*_hook returns everywhere (autograd, nn)."""
__all__ = ["RemovableHandle"]


class RemovableHandle:
    """Removes its hook from a dict of hooks (``hooks_dict[id] = hook``) on remove()."""

    next_id = 0
    removed = 0         # hooks removed so far: with next_id, tells ember.compile's guards
                        # that some hook table changed

    def __init__(self, hooks_dict, *, extra_dict=None):
        import weakref
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_refs = tuple(weakref.ref(d) for d in (
            extra_dict if isinstance(extra_dict, list) else [extra_dict] if extra_dict else []))

    def remove(self):
        RemovableHandle.removed += 1
        for ref in (self.hooks_dict_ref,) + self.extra_dict_refs:
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __getstate__(self):
        # weak references do not pickle: the dicts travel instead (pickle keeps them shared
        # with the module that owns them, so remove() still works after loading)
        return (self.hooks_dict_ref(), self.id, tuple(r() for r in self.extra_dict_refs))

    def __setstate__(self, state):
        import weakref
        from collections import OrderedDict
        hooks, self.id, extras = state
        self.hooks_dict_ref = weakref.ref(OrderedDict() if hooks is None else hooks)
        self.extra_dict_refs = tuple(weakref.ref(d) for d in extras if d is not None)
        # ids loaded from a pickle must not be handed out again in this process
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
