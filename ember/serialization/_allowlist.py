"""Which globals a checkpoint may name: the weights_only allow-list and PyTorch's class paths.

A pickle refers to classes and functions by "module.name". With ``weights_only=True`` only the
names below are resolved -- PyTorch's default allow-list (tensor rebuild functions, storage
types, dtypes, Size, device, Parameter, OrderedDict, Counter, set, complex, bytearray,
``_codecs.encode``) under both their ``torch.*`` and ``ember.*`` names, a few more harmless
builtins, registered Tensor subclasses, and what the user adds with ``add_safe_globals`` --
and nothing from ``sys``/``os``/``posix``/``nt`` ever. With ``weights_only=False`` a
``torch.*`` path resolves to ember's object at the same path under ``ember``
(``torch.nn.modules.linear.Linear`` -> ``ember.nn.modules.linear.Linear``), so pickled
PyTorch modules load as ember modules.
"""
import _compat_pickle
import codecs
import collections
import importlib
import pickle

from ember.core import _dtype as _dtypes
from ember.core._device import device as _device
from ember.core._size import Size
from ember.core.tensor import Tensor
from ember.serialization import _rebuild
from ember.serialization._tensors import _TENSOR_TYPES, registered_class

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]

BLOCKED_MODULES = ("sys", "os", "posix", "nt")
UNSAFE_MESSAGE = (
    "Re-running `ember.load` with `weights_only=False` will likely succeed, but it can result "
    "in arbitrary code execution. Do it only if you got the file from a trusted source.")
_MODULE_RENAMES = {"torch.tensor": "torch._tensor"}     # PyTorch moved it; old pickles say so
# dtypes PyTorch has and ember may not: their names resolve to MissingDtype placeholders
_TORCH_ONLY_DTYPES = (
    "uint16", "uint32", "uint64", "complex32", "chalf", "float8_e4m3fn", "float8_e5m2",
    "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "bits8",
    "bits16", "bits1x8", "bits2x4", "bits4x2", "qint8", "quint8", "qint32", "quint4x2",
    "quint2x4", *(f"int{i}" for i in range(1, 8)), *(f"uint{i}" for i in range(1, 8)))
_QSCHEMES = ("per_tensor_affine", "per_tensor_symmetric", "per_channel_affine",
             "per_channel_symmetric", "per_channel_affine_float_qparams")
_LEGACY_TENSOR_TYPES = ("DoubleTensor", "FloatTensor", "HalfTensor", "BFloat16Tensor",
                        "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor",
                        "BoolTensor")

_user_globals = []          # what add_safe_globals was given, in order
_default = None             # "module.name" -> object, built on first use


class _Unsupported:
    """A PyTorch global ember has no counterpart for (a quantization scheme)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


def _name_of(obj):
    return f"{obj.__module__}.{obj.__qualname__}"


def default_globals():
    """The built-in allow-list: "module.name" -> object."""
    global _default
    if _default is None:
        import ember
        from ember.nn.parameter import Parameter
        table = {_name_of(obj): obj for obj in (
            collections.OrderedDict, collections.Counter, set, frozenset, complex, bytearray,
            slice, range, Size, _device, Tensor, Parameter)}
        # where these classes lived in earlier ember versions (their files still load)
        table.update({"ember.core._size.Size": Size, "ember.core._device.device": _device,
                      "ember.core.tensor.Tensor": Tensor})
        table.update({"_codecs.encode": codecs.encode, "ember.Tensor": Tensor,
                      "torch.Tensor": Tensor, "torch.Size": Size, "torch.device": _device,
                      "torch.nn.parameter.Parameter": Parameter})
        for name in _TORCH_ONLY_DTYPES:
            table[f"torch.{name}"] = _rebuild.dtype_named(name)
        for name, d in _dtypes._dtype_by_name.items():
            table[f"torch.{name}"] = d
            if getattr(_dtypes, name, None) is d:            # how ember's dtypes pickle
                table[f"ember.core._dtype.{name}"] = d
                table[f"ember.{name}"] = d          # ember.dtype's module, as torch.float32
        for storage in _rebuild._STORAGE_DTYPES:
            st = _rebuild.StorageType(storage)
            for module in ("torch", "torch.cuda", "torch.storage"):
                table[f"{module}.{storage}"] = st
        for name in _QSCHEMES:
            table[f"torch.{name}"] = _Unsupported(f"torch.{name}")
        for name in _LEGACY_TENSOR_TYPES:                   # where ember has them
            cls = getattr(ember, name, None)
            if cls is not None:
                table[f"torch.{name}"] = cls
        table.update(_rebuild.REBUILD_FUNCTIONS)
        _default = table
    return _default


def _entry(g, where):
    """(object, "module.name") of one add_safe_globals entry: an object or (object, name)."""
    if isinstance(g, tuple):
        if len(g) != 2:
            raise ValueError(f"{where}: expected tuple of length 2 (global, str of callable full "
                             f"path), but got tuple of length: {len(g)}")
        if type(g[1]) is not str:
            raise TypeError(f"{where}: expected second item in tuple to be str of callable full "
                            f"path, but got: {type(g[1])}")
        return g
    if not (hasattr(g, "__module__") and hasattr(g, "__qualname__")):
        raise TypeError(f"{where}: expected classes or functions (or (object, 'module.name') "
                        f"tuples), got {g!r}")
    return g, _name_of(g)


def add_safe_globals(safe_globals):
    """Marks the given globals as safe for ``weights_only`` load: functions in this list can be
    called during unpickling, classes instantiated and have their state set.

    Each item of ``safe_globals`` is a function/class or a tuple ``(function/class, string)``
    whose string is the full path the checkpoint names it by; otherwise
    ``{obj.__module__}.{obj.__qualname__}`` is used. A checkpoint written by PyTorch names
    ``torch.X`` where ember has ``ember.X``: either name matches."""
    if not isinstance(safe_globals, list):
        raise TypeError(f"add_safe_globals(): safe_globals must be a list, not "
                        f"{type(safe_globals).__name__}")
    for g in safe_globals:
        _entry(g, "add_safe_globals()")
    _user_globals.extend(safe_globals)


def get_safe_globals():
    """Returns the list of user-added globals that are safe for ``weights_only`` load."""
    return list(_user_globals)


def clear_safe_globals():
    """Clears the list of globals that are safe for ``weights_only`` load."""
    _user_globals.clear()


class safe_globals:
    """Context-manager that adds certain globals as safe for ``weights_only`` load (inside the
    ``with`` block only).

    Args:
        safe_globals: list of globals (as for ``add_safe_globals``)."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        self._saved = list(_user_globals)
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _user_globals[:] = self._saved
        return False


def _user_lookup(full_name):
    for g in reversed(_user_globals):
        obj, name = _entry(g, "safe globals")
        if name == full_name:
            return obj
    return None


def registered_lookup(full_name):
    """The registered Tensor subclass named ``full_name`` (its registered name or path)."""
    cls = registered_class(full_name)
    if cls is not None:
        return cls
    for name in list(_TENSOR_TYPES):        # a registered class by its real path
        cls = registered_class(name)
        if cls is not None and _name_of(cls) == full_name:
            return cls
    return None


def fix_name(module, name, proto=2):
    """(module, name) after Python 2's renames (``__builtin__.set``) and PyTorch's moves."""
    if proto < 3:
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
    return _MODULE_RENAMES.get(module, module), name


def ember_path(full_name):
    """The ember path of a ``torch.*`` path (``torch.nn.Linear`` -> ``ember.nn.Linear``)."""
    if full_name == "torch" or full_name.startswith("torch."):
        return "ember" + full_name[len("torch"):]
    return full_name


def weights_only_lookup(module, name):
    """The allow-listed object ``module.name`` names, or raise pickle.UnpicklingError."""
    full = f"{module}.{name}"
    if module.split(".")[0] in BLOCKED_MODULES:
        raise pickle.UnpicklingError(f"Trying to load unsupported GLOBAL {full} whose module "
                                     f"{module} is blocked.")
    translated = ember_path(full)
    for lookup in (_user_lookup, default_globals().get, registered_lookup):
        for key in (full, translated):
            obj = lookup(key)
            if obj is not None:
                return obj
    shown = full[len("builtins."):] if full.startswith("builtins.") else full
    raise pickle.UnpicklingError(
        f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
        f"`ember.serialization.add_safe_globals([{shown}])` or the "
        f"`ember.serialization.safe_globals([{shown}])` context manager to allowlist this "
        f"global if you trust this class/function.")


def allowed_objects():
    """Identities of every object weights_only may call, instantiate or build."""
    objs = list(default_globals().values())
    objs += [_entry(g, "safe globals")[0] for g in _user_globals]
    objs += [registered_class(n) for n in list(_TENSOR_TYPES)]
    return {id(o) for o in objs if o is not None}, objs


def is_allowed_name(full_name):
    """Whether ``weights_only`` resolves ``full_name`` (for get_unsafe_globals_in_checkpoint)."""
    module, _, name = full_name.rpartition(".")
    try:
        weights_only_lookup(module, name)
    except pickle.UnpicklingError:
        return False
    return True


def full_lookup(module, name):
    """For weights_only=False: the ember object a ``torch.*`` global maps to, or None for a
    path outside torch (the caller imports it as pickle does)."""
    full = f"{module}.{name}"
    obj = default_globals().get(full)
    if obj is not None or not (module == "torch" or module.startswith("torch.")):
        return obj
    target_module = ember_path(module)
    try:
        obj = importlib.import_module(target_module)
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise AttributeError(f"ember.load: the checkpoint needs {full}, and ember has no "
                             f"{target_module}.{name} ({e})") from None
    return obj


REFUSED = "Weights only load failed"


def weights_only_message(message, source):
    """PyTorch's explanation around a weights_only refusal."""
    head = f"{REFUSED}: {source} cannot be loaded with weights_only=True."
    if "was not an allowed global by default" in message:
        return (f"{head} This file can still be loaded, to do so you have two options, do those "
                f"steps only if you trust the source of the checkpoint.\n\t(1) {UNSAFE_MESSAGE}"
                f"\n\t(2) Alternatively, to load with `weights_only=True` please check the "
                f"recommended steps in the following error message.\n\tWeightsUnpickler "
                f"error: {message}")
    return f"{head} {UNSAFE_MESSAGE}\n\nWeightsUnpickler error: {message}"
