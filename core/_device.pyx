"""ember.device and the backend registry.

A device type becomes usable when a plugin registers it (``register_backend``); its
kernels are loaded on first use (``Backend.kernels``).  Built-in types own fixed dispatch
keys; any other type a plugin brings receives a free key at run time.
"""
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport int64_t

from ember.core cimport _state
from ember.core._fallback cimport KernelTable
from ember_abi cimport EMBER_ABI_MINOR, EMBER_ABI_VERSION, ember_kernel_table
from ember.core import _state as _state_py
from ember.core._dispatch cimport DispatchKey, FIRST_DYNAMIC_BACKEND, LAST_DYNAMIC_BACKEND

ABI_VERSION = EMBER_ABI_VERSION        # the kernel ABI this build of ember speaks (abi.h)
ABI_MINOR = EMBER_ABI_MINOR
TABLE_SIZE = sizeof(ember_kernel_table)   # bytes of this ABI's kernel table
HOST_TYPE = "cpu"                     # the host's device type: the host fallback runs there
cdef dict _backends = {}              # type name -> Backend
cdef list _by_key = [None] * 64       # backend key -> Backend
cdef dict _device_cache = {}          # (type, index) -> device


cdef class Backend:
    """A device type as the core sees it: its key, and its plugin's kernel table."""

    def __init__(self, str type, int key, str package, bint is_meta=False):
        self.type = type
        self.key = key
        self.package = package
        self.is_meta = is_meta
        self.plugin = None
        self._loader = None
        self._capsule = None
        self._table = NULL
        self.current_index = None
        self.composites = None

    cdef ember_kernel_table* kernels(self) except NULL:
        if self._table is NULL:
            self._load()
        self._kt.activate()
        return self._table

    def _table_address(self):
        """The address of the kernel table the core calls (loading it on first use)."""
        return <size_t>self.kernels()

    def kernel_table(self):
        """The KernelTable the core calls for this device type (loaded on first use)."""
        self.kernels()
        return self._kt

    def _load(self):
        if self.is_meta:
            raise RuntimeError("meta tensors have no data: this op needs a real device")
        if self._loader is None:
            raise RuntimeError(missing_backend_message(self.type, self.package))
        capsule = self._loader()
        if capsule is None or not PyCapsule_IsValid(capsule, b"ember.kernel_table"):
            raise RuntimeError(
                f"plugin {self.plugin!r} returned no 'ember.kernel_table' capsule for "
                f"device type '{self.type}'")
        cdef ember_kernel_table* t = <ember_kernel_table*>PyCapsule_GetPointer(
            capsule, b"ember.kernel_table")
        # a table of another major version, a newer minor one, or a size that does not fit
        # the minor version it states is refused before any entry is read
        version = f"{t.abi_version}.{t.abi_minor}" if t.abi_version >= 6 else str(t.abi_version)
        if (t.abi_version != EMBER_ABI_VERSION or t.abi_minor > EMBER_ABI_MINOR
                or t.abi_minor < 0 or t.size != <int64_t>table_size_for_minor(t.abi_minor)):
            raise RuntimeError(
                f"plugin {self.plugin!r} was built against ember ABI {version} (kernel table "
                f"of {t.size if t.abi_version >= 6 else '?'} bytes), this ember has ABI "
                f"{EMBER_ABI_VERSION}.{EMBER_ABI_MINOR}: rebuild/reinstall {self.package}")
        missing = [name for name, ptr in (      # function pointers as integers: 0 = unset
            ("alloc", <size_t><void*>t.alloc), ("free", <size_t><void*>t.free),
            ("copy", <size_t><void*>t.copy), ("fill", <size_t><void*>t.fill),
            ("to_host", <size_t><void*>t.to_host), ("from_host", <size_t><void*>t.from_host))
            if ptr == 0]
        if missing:
            raise RuntimeError(f"plugin {self.plugin!r} left kernel table entries unset for "
                               f"device type '{self.type}': {', '.join(missing)} (the memory "
                               f"core every plugin implements)")
        self._capsule = capsule
        self._kt = KernelTable(self, <size_t>t, self.type == HOST_TYPE)
        self._table = &self._kt.table
        if self.type != HOST_TYPE:
            from ember.backends import unimplemented
            from ember.core.row_composites import composites_for
            self.composites = composites_for(self.type, unimplemented(self.type))

    @property
    def loaded(self):
        """Whether the kernel table has been loaded (first use happened)."""
        return self._table is not NULL

    def __repr__(self):
        return f"<Backend {self.type} key={self.key} plugin={self.plugin!r}>"


def missing_backend_message(str type, str package):
    from os import environ
    msg = (f"device type '{type}' has no backend loaded: install the '{package}' package "
           f"(pip install {package})")
    if environ.get("EMBER_DEVICE_BACKEND_AUTOLOAD", "1") == "0":
        msg += (" or, since EMBER_DEVICE_BACKEND_AUTOLOAD=0, load it with "
                f"ember.backends.load('{type}')")
    return msg


def _builtin(str type, int key, str package, bint is_meta=False):
    b = Backend(type, key, package, is_meta)
    _backends[type] = b
    _by_key[key] = b

_builtin("cpu", DispatchKey.CPU, "ember-cpu")
_builtin("cuda", DispatchKey.CUDA, "ember-cuda")
_builtin("mps", DispatchKey.MPS, "ember-mps")
_builtin("xpu", DispatchKey.XPU, "ember-xpu")
_builtin("meta", DispatchKey.Meta, "ember", is_meta=True)
(<Backend>_backends["meta"]).plugin = "ember"


def register_backend(str type, loader, str plugin, str package=None, current_index=None):
    """Register device type ``type``, whose kernel table ``loader()`` returns on first use.
    ``current_index()``, when given, names the device that "type" without an index means
    when a tensor is made (the runtime's current device).

    Built-in types keep their key; a new type receives the next free dynamic backend key.
    Returns the Backend."""
    check_backend(type, plugin)
    cdef Backend b = _backends.get(type)
    cdef int key
    if b is None:
        for key in range(FIRST_DYNAMIC_BACKEND, LAST_DYNAMIC_BACKEND + 1):
            if _by_key[key] is None:
                break
        else:
            raise RuntimeError("no free backend dispatch key left for device type " + type)
        b = Backend(type, key, package or plugin)
        _backends[type] = b
        _by_key[key] = b
    b.plugin = plugin
    if package is not None:
        b.package = package
    b._loader = loader
    b.current_index = current_index
    return b


def check_backend(str type, str plugin):
    """Raise if ``plugin`` may not register device type ``type``; changes nothing."""
    if not type.isidentifier() or type != type.lower():
        raise ValueError(f"device type name must be a lowercase identifier, got {type!r}")
    cdef Backend b = _backends.get(type)
    if b is None:
        if all(x is not None for x in _by_key[FIRST_DYNAMIC_BACKEND:LAST_DYNAMIC_BACKEND + 1]):
            raise RuntimeError("no free backend dispatch key left for device type " + type)
    elif b.is_meta:
        raise ValueError("device type 'meta' belongs to the core")
    elif b.plugin is not None and b.plugin != plugin:
        raise RuntimeError(f"device type '{type}' is already provided by plugin {b.plugin!r}; "
                           f"plugin {plugin!r} cannot register it again")


def _backend_for_key(int key):
    return _by_key[key]


def _backend_for_type(str type):
    return _backends.get(type)


def _backends_snapshot():
    return dict(_backends)


cdef extern from *:
    """
    #include <stddef.h>
    /* where each minor version's table ended: entries are only ever appended */
    #define EMBER_TABLE_SIZE_6_0 offsetof(ember_kernel_table, sort)
    #define EMBER_TABLE_SIZE_6_1 offsetof(ember_kernel_table, rnn)
    #define EMBER_TABLE_SIZE_6_2 offsetof(ember_kernel_table, sgd)
    #define EMBER_TABLE_SIZE_6_3 offsetof(ember_kernel_table, activation)
    #define EMBER_TABLE_SIZE_6_4 offsetof(ember_kernel_table, ternary)
    """
    size_t EMBER_TABLE_SIZE_6_0
    size_t EMBER_TABLE_SIZE_6_1
    size_t EMBER_TABLE_SIZE_6_2
    size_t EMBER_TABLE_SIZE_6_3
    size_t EMBER_TABLE_SIZE_6_4


cdef size_t table_size_for_minor(int minor) noexcept:
    """The size of a kernel table of ABI minor version `minor` (entries are appended)."""
    if minor == 0:
        return EMBER_TABLE_SIZE_6_0
    if minor == 1:
        return EMBER_TABLE_SIZE_6_1
    if minor == 2:
        return EMBER_TABLE_SIZE_6_2
    if minor == 3:
        return EMBER_TABLE_SIZE_6_3
    if minor == 4:
        return EMBER_TABLE_SIZE_6_4
    return sizeof(ember_kernel_table)


TABLE_SIZES = {m: table_size_for_minor(m) for m in range(EMBER_ABI_MINOR + 1)}   # minor -> bytes


cdef device resolve_index(Backend b, device d):
    """The device a new storage lives on: a device type whose runtime has a current device
    (a GPU) resolves "cuda" to "cuda:<current>", as PyTorch's tensors always carry an index."""
    if d.index is not None or b.current_index is None:
        return d
    cdef object idx = b.current_index()
    key = (d.type, idx)
    cached = _device_cache.get(key)
    if cached is None:
        cached = device(d.type, idx)
        _device_cache[key] = cached
    return <device>cached


cdef Backend backend_for(device d):
    if d._backend is not None:        # a type's Backend object never changes once made
        return <Backend>d._backend
    cdef Backend b = _backends.get(d.type)
    if b is None:   # cannot happen for a constructed device, kept as a guard
        raise RuntimeError(missing_backend_message(d.type, "ember-" + d.type))
    d._backend = b
    return b


cdef class device:
    """ember.device(type, index=None): where a tensor's data lives.

    Accepts "cpu", "cuda", "cuda:1", ("cuda", 1), another device, or an int (an index
    on the default accelerator, as PyTorch).  Usable as a context manager that sets
    this thread's default device."""

    def __init__(self, type, index=None):
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): an index cannot be given with a device object")
            self.type = (<device>type).type
            self.index = (<device>type).index
        elif isinstance(type, int) and not isinstance(type, bool):
            if type < 0:
                raise RuntimeError(f"Device index must not be negative, got {type}")
            self.type, self.index = "cuda", type
        elif isinstance(type, str):
            self.type, self.index = _parse(type, index)
        else:
            raise TypeError(f"device(): argument 'type' must be str, not {_typename(type)}")
        self._prev = None
        self._hash = hash((self.type, self.index))

    def __eq__(self, other):
        if not isinstance(other, device):
            return NotImplemented
        return self.type == (<device>other).type and self.index == (<device>other).index

    def __hash__(self):
        return self._hash

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        self._prev = _state.default_device()
        _state_py._set_default_device(self)
        return self

    def __exit__(self, *exc):
        _state_py._set_default_device(self._prev)
        self._prev = None
        return False


cdef str _typename(object o):
    return type(o).__name__


cdef tuple _parse(str s, index):
    cdef str type = s
    cdef object idx = None
    if ":" in s:
        type, _, rest = s.partition(":")
        if not rest.isdigit():
            raise RuntimeError(f"Invalid device string: '{s}'")
        idx = int(rest)
        if index is not None:
            raise RuntimeError(f"device(): type (string) must not include an index because "
                               f"index was passed explicitly: {s}")
    if type not in _backends:
        known = ", ".join(sorted(_backends))
        raise RuntimeError(f"Expected one of {known} device type at start of device string: {s}")
    if index is not None:
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"device(): argument 'index' must be int, not {_typename(index)}")
        if index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        idx = index
    if type == "cpu" and idx not in (None, 0):
        raise RuntimeError(f"CPU device index must be -1 or zero, got {idx}")
    return type, idx


cdef device _cpu = device("cpu")


cdef device cpu_device():
    return _cpu


cdef device as_device(object obj):
    if obj is None:
        d = _state.default_device()
        return _cpu if d is None else <device>d
    if isinstance(obj, device):
        return <device>obj
    if isinstance(obj, str):
        cached = _device_cache.get(obj)
        if cached is None:
            cached = device(obj)
            _device_cache[obj] = cached
        return <device>cached
    return device(obj)


cdef extern from "Python.h":
    ctypedef struct PyTypeObject:
        const char* tp_name
    void PyType_Modified(PyTypeObject*)

# the class reports PyTorch's public path (torch.device), for pickles and reprs
(<PyTypeObject*>device).tp_name = b"ember.device"
PyType_Modified(<PyTypeObject*>device)
