"""Where storages go: PyTorch's location tags, its package registry and ``map_location``.

A checkpoint tags each storage with the device it was saved from (``"cpu"``, ``"cuda:0"``).
Loading reads a storage on the CPU -- as a 1-D uint8 tensor of its bytes -- and hands it to
the restore function ``map_location`` asks for (a callable ``map_location`` gets it as an
UntypedStorage, as in PyTorch). The default one runs the
deserializers of ``register_package`` in priority order; ember registers the CPU, meta and
every device a plugin provides.
"""
import re

from ember.core import _dtype as _dtypes
from ember.core._device import device as _device
from ember.core._tensor import TensorBase, empty

_UINT8 = _dtypes.uint8

__all__ = ["default_restore_location", "location_tag", "register_package", "restore_function",
           "validate_cuda_device", "validate_hpu_device"]

_package_registry = []      # (priority, tagger, deserializer), sorted by priority


def register_package(priority, tagger, deserializer):
    """Registers callables for tagging and deserializing storage objects with an associated
    priority (a lower value is tried first). ``tagger(storage)`` returns the location string of
    a storage or None; ``deserializer(storage, location)`` returns the storage moved to
    ``location`` or None. They run in priority order until one returns something else than
    None."""
    if not isinstance(priority, int):
        raise TypeError(f"register_package(): priority must be an int, not "
                        f"{type(priority).__name__}")
    if not callable(tagger):
        raise TypeError(f"Expected tagger to be callable but got: {tagger}")
    if not callable(deserializer):
        raise TypeError(f"Expected deserializer to be callable but got: {deserializer}")
    _package_registry.append((priority, tagger, deserializer))
    _package_registry.sort(key=lambda entry: entry[0])


def _typename(obj):
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def location_tag(storage):
    """The location string a storage (a tensor) is saved under: ``"cpu"``, ``"cuda:0"``..."""
    for _, tagger, _ in _package_registry:
        location = tagger(storage)
        if location:
            return location
    raise RuntimeError(f"don't know how to determine data location of {_typename(storage)}")


def _is_storage(obj):
    from ember.core.storages import TypedStorage, UntypedStorage
    return isinstance(obj, (TypedStorage, UntypedStorage))


def _as_bytes(storage):
    """A storage's bytes as the 1-D uint8 tensor loading works with (a tensor as it is)."""
    if not _is_storage(storage):
        return storage
    untyped = storage.untyped()
    return empty(0, dtype=_UINT8, device=untyped.device).set_(untyped)


def default_restore_location(storage, location):
    """Restores ``storage`` using a deserializer function registered for ``location``, trying
    them in priority order until one returns something else than None; raises RuntimeError
    when none does."""
    if _is_storage(storage):        # what a map_location callable was given: hand one back
        return _as_bytes(default_restore_location(_as_bytes(storage), location)) \
            .untyped_storage()
    for _, _, fn in _package_registry:
        result = fn(storage, location)
        if result is not None:
            return result
    raise RuntimeError(f"don't know how to restore data location of {_typename(storage)} "
                       f"(tagged with {location})")


def _validate_device(location, backend_name):
    """The ember.device ``location`` names on ``backend_name``, after checking it exists."""
    import ember
    try:
        module = ember.get_device_module(backend_name)
    except (RuntimeError, AttributeError, KeyError):
        module = None
    if module is None:
        raise RuntimeError(f"The {backend_name.upper()} device module is not registered. If you "
                           f"are running on a CPU-only machine, please use ember.load with "
                           f"map_location=ember.device('cpu') to map your storages to the CPU.")
    dev = _device(location)
    if hasattr(module, "is_available") and not module.is_available():
        raise RuntimeError(f"Attempting to deserialize object on a {backend_name.upper()} device "
                           f"but ember.{backend_name}.is_available() is False. If you are "
                           f"running on a CPU-only machine, please use ember.load with "
                           f"map_location=ember.device('cpu') to map your storages to the CPU.")
    index = dev.index if dev.index is not None else 0
    if hasattr(module, "device_count") and index >= module.device_count():
        raise RuntimeError(f"Attempting to deserialize object on {backend_name.upper()} device "
                           f"{index} but ember.{backend_name}.device_count() is "
                           f"{module.device_count()}. Please use ember.load with map_location "
                           f"to map your storages to an existing device.")
    return dev


def validate_cuda_device(location):
    """The CUDA device index ``location`` names; raises RuntimeError when CUDA is unavailable
    or the index is out of range."""
    dev = _validate_device(location, "cuda")
    return dev.index if dev.index is not None else 0


def validate_hpu_device(location):
    """As ``validate_cuda_device``, for HPU devices."""
    dev = _validate_device(location, "hpu")
    return dev.index if dev.index is not None else 0


def _cpu_tag(obj):
    if obj.device.type == "cpu":
        return "cpu"


def _device_tag(obj):
    dev = obj.device
    return dev.type if dev.index is None else f"{dev.type}:{dev.index}"


def _cpu_deserialize(obj, location):
    if location == "cpu":
        return obj if obj.device.type == "cpu" else obj.cpu()


def _meta_deserialize(obj, location):
    if location == "meta":
        return empty(obj.shape, dtype=obj.dtype, device="meta")


def _device_deserialize(obj, location):
    backend = re.match(r"([a-zA-Z_][a-zA-Z0-9_]*)(:[0-9]+)?$", location)
    if backend is None:
        return None
    try:
        _device(location)
    except RuntimeError:                # not a device type ember knows
        return None
    dev = _validate_device(location, backend.group(1))
    return obj if obj.device == dev else obj.to(dev)


register_package(10, _cpu_tag, _cpu_deserialize)
register_package(22, _device_tag, _meta_deserialize)
register_package(23, _device_tag, _device_deserialize)


def is_meta_location(map_location):
    """Whether ``map_location`` sends everything to the meta device (no data need be read)."""
    if isinstance(map_location, str):
        return map_location == "meta"
    return isinstance(map_location, _device) and map_location.type == "meta"


def restore_function(map_location):
    """``restore(tensor, location)`` for ``ember.load``'s ``map_location``: None (where it was
    saved), a device or string (everything there), a dict remapping location tags, or a
    callable ``fn(storage, location)`` given the tensor's UntypedStorage and returning the
    restored storage or None (the default)."""
    if map_location is None:
        return default_restore_location
    if isinstance(map_location, dict):
        table = {str(k): str(v) for k, v in map_location.items()}
        return lambda storage, location: default_restore_location(
            storage, table.get(location, location))
    if isinstance(map_location, (str, bytes, _device)):
        target = map_location.decode() if isinstance(map_location, bytes) else str(map_location)
        return lambda storage, location: default_restore_location(storage, target)
    if callable(map_location):
        def restore(t, location):
            # as PyTorch, the callable gets an UntypedStorage (the same memory) and returns
            # one; the tensor read is rebuilt over it
            result = map_location(t.untyped_storage(), location)
            if result is None:
                return default_restore_location(t, location)
            if isinstance(result, TensorBase):          # ember's former contract
                return result
            if not _is_storage(result):
                raise TypeError(f"ember.load: map_location returned {type(result).__name__}, "
                                f"expected a storage or None")
            untyped = result.untyped()
            span = t.storage_offset() + 1 + sum((n - 1) * st for n, st in
                                                zip(t.shape, t.stride()))
            if t.numel() and untyped.nbytes() < span * t.element_size():
                raise TypeError(f"ember.load: map_location must return the storage it was "
                                f"given ({t.untyped_storage().nbytes()} bytes) moved or None, "
                                f"got {untyped.nbytes()} bytes")
            return empty(0, dtype=t.dtype, device=untyped.device).set_(
                untyped, t.storage_offset(), tuple(t.shape), t.stride())
        return restore
    raise TypeError(f"ember.load: map_location must be None, a string, an ember.device, a dict "
                    f"or a callable, not {type(map_location).__name__}")


def _get_restore_location(map_location):
    """PyTorch's private form of restore_function: ``restore(storage, location)`` on storages
    (a storage in, a storage out)."""
    restore = restore_function(map_location)

    def restore_storage(storage, location):
        if not _is_storage(storage):
            return restore(storage, location)
        return restore(_as_bytes(storage), location).untyped_storage()
    return restore_storage
