"""ember.return_types (``torch.return_types``): the named-tuple types ops return (max,
sort, linalg_svd, ...), looked up by name in the registries the ops fill."""
__all__ = []


def __getattr__(name):
    from ember.core._results import _result_types
    found = _result_types.get(name)
    if found is None:
        raise AttributeError(f"module 'ember.return_types' has no attribute '{name}' (no op "
                             f"has returned it yet)")
    return found
