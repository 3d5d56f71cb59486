"""The functions of torch's top level that are not tensor ops: RNG state, the ABI include
folder, type names, the default device, device runtime modules, thread counts, and two
Tensor-method spellings (``is_distributed``, ``i0_``)."""
import os as _os

from ember.core import _dtype as _dtypes
from ember.core._device import device
from ember.core.tensor import Tensor

__all__ = ["get_default_device", "get_device_module", "get_include", "get_num_threads",
           "get_rng_state", "i0_", "is_distributed", "set_default_device", "set_num_threads",
           "set_rng_state", "typename"]


def _assert(condition, message):
    """``assert condition, message`` as a function (PyTorch's ``torch._assert``, which
    research code calls in forward passes): ember.fx records a call of it as a node
    instead of evaluating a traced condition."""
    assert condition, message


def _stft(*args):
    """Tensor.stft's body (ember._stft, imported at the first call: it needs nn)."""
    from ember._stft import stft
    return stft(*args)


def _istft(*args):
    """Tensor.istft's body (ember._stft, imported at the first call)."""
    from ember._stft import istft
    return istft(*args)


def is_distributed(input):
    """``input.is_distributed()``: False for every ember tensor."""
    return input.is_distributed()


def i0_(input):
    """In place: ``input`` = i0(``input``)."""
    return input.i0_()


def get_rng_state():
    """The default CPU generator's state, as a uint8 tensor."""
    from ember import random
    return random.get_rng_state()


def set_rng_state(new_state):
    """Restore the default CPU generator's state from ``get_rng_state()``'s tensor."""
    from ember import random
    random.set_rng_state(new_state)


def get_include():
    """The folder holding ``ember/abi.h``, the kernel ABI plugins compile against."""
    return _os.path.join(_os.path.dirname(_dtypes.__file__), "include")


def typename(obj):
    """A string naming the type of ``obj`` (tensors as PyTorch's legacy names)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


def set_default_device(device):
    """Make ``device`` the default for factory functions on this thread (None: cpu)."""
    from ember.core import _state
    from ember.core._device import device as _device_cls
    _state._set_default_device(None if device is None else _device_cls(device))


def get_default_device():
    """This thread's default device."""
    from ember.core import _state
    d = _state._get_default_device()
    return device("cpu") if d is None else d


def _register_device_module(device_type, module, _replace=False):
    """Make ``module`` the runtime module of ``device_type`` (``ember.<device_type>``)."""
    from ember.backends import _runtimes
    _runtimes.register(device_type, module, _replace)


# device types with a façade package of PyTorch's module-level functions (``ember.cuda``:
# seeding, memory queries, ``ember.cuda.amp``) that forwards everything else to the runtime
_DEVICE_FACADES = {"cuda": "ember.cuda"}


def get_device_module(device=None):
    """The runtime module of ``device`` (a device, a type name, or the default device):
    ``ember.<type>``'s package where there is one, else the plugin's runtime module."""
    if device is None:
        device = get_default_device()
    type_name = device.type if hasattr(device, "type") else str(device).partition(":")[0]
    if type_name in _DEVICE_FACADES:
        import importlib
        return importlib.import_module(_DEVICE_FACADES[type_name])
    from ember.backends import _runtimes
    return _runtimes.runtime(type_name)


def set_num_threads(num_threads):
    """Threads used by the CPU plugin's kernels (its OpenMP pool and the BLAS pools)."""
    from ember import backends
    backends.set_num_threads(num_threads)


def get_num_threads():
    from ember import backends
    return backends.get_num_threads()


# their public path is the top level (torch.typename, torch.get_default_device, ...)
for _name in __all__ + ["_register_device_module"]:
    globals()[_name].__module__ = "ember"
