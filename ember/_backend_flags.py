"""PyTorch's remaining ``torch.backends.*`` namespaces for libraries ember does not link:
``ember.backends.mps``, ``mkldnn``, ``mkl``, ``openmp`` and ``opt_einsum``.

They answer what a build without those libraries answers (nothing available, flags that can
be read, set and scoped) and import with no plugin installed, like ``ember.backends.cuda``
and ``cudnn``.  They are module objects built here and registered as submodules of
``ember.backends`` by ``install()`` when ``import ember`` runs, so that both
``ember.backends.mkldnn.enabled`` and ``import ember.backends.mps`` work.  (Their natural home
is beside backends/cudnn.py; they live in the façade while backends/ is being edited.)"""
import contextlib
import importlib.util
import sys
import types

__all__ = ["NAMESPACES", "install"]

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2


def _module(name, doc, cls=types.ModuleType, **functions):
    m = cls(f"ember.backends.{name}", doc)
    for fname, fn in functions.items():
        fn.__module__ = m.__name__
        fn.__qualname__ = fname
        setattr(m, fname, fn)
    return m


class _verbose:
    """On-demand verbose logging of a vendor library (oneDNN, oneMKL): ember links neither,
    so there is nothing to log; the context manager only records the level."""

    def __init__(self, level):
        self.level = level

    def __enter__(self):
        return None if self.level == VERBOSE_OFF else self

    def __exit__(self, *exc):
        return False


# -- mps ----------------------------------------------------------------------------------

def _mps_runtime_available():
    from ember.core._device import _backend_for_type
    if _backend_for_type("mps") is None:
        return False
    try:
        import ember
        return bool(ember.get_device_module("mps").is_available())
    except Exception:                       # noqa: BLE001  (no usable plugin: not available)
        return False


def _no_mps(what):
    raise RuntimeError(f"Cannot execute {what}() without MPS backend.")


def _mps():
    def is_built():
        """Whether an MPS plugin with kernels is loaded (ember-mps is a stub: False)."""
        return _mps_runtime_available()

    def is_available():
        """Whether MPS is available: an MPS plugin is loaded and sees a device."""
        return _mps_runtime_available()

    def is_macos_or_newer(major, minor):
        """Whether MPS runs on macOS ``major.minor`` or newer (needs MPS)."""
        if not is_available():
            _no_mps("isOnMacOSorNewer")
        return ember_mps().is_macos_or_newer(major, minor)

    def is_macos13_or_newer(minor=0):
        """Whether MPS runs on macOS 13.``minor`` or newer (needs MPS)."""
        return is_macos_or_newer(13, minor)

    def get_name():
        """The Metal device's name (needs MPS)."""
        if not is_available():
            _no_mps("getName")
        return ember_mps().get_device_name()

    def get_core_count():
        """The GPU's core count (needs MPS)."""
        if not is_available():
            _no_mps("getCoreCount")
        return ember_mps().get_core_count()

    def ember_mps():
        import ember
        return ember.get_device_module("mps")

    m = _module("mps", "``ember.backends.mps``: whether an MPS device is usable.",
                is_built=is_built, is_available=is_available,
                is_macos_or_newer=is_macos_or_newer, is_macos13_or_newer=is_macos13_or_newer,
                get_name=get_name, get_core_count=get_core_count)
    m.__all__ = ["get_core_count", "get_name", "is_available", "is_built",
                 "is_macos13_or_newer", "is_macos_or_newer"]
    return m


# -- mkldnn (oneDNN) ----------------------------------------------------------------------

def _mkldnn():
    m = None

    def is_available():
        """Whether ember is built with oneDNN (MKL-DNN): no, its CPU plugin has its own
        kernels."""
        return False

    def is_acl_available():
        """Whether ember is built with oneDNN + Arm Compute Library: no."""
        return False

    def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None,
                  _fp32_precision="none"):
        # allow_tf32 is accepted and ignored: PyTorch 2.13 reads it as None (fp32_precision
        # replaced it)
        orig = (m.enabled, m.deterministic, None, m.fp32_precision)
        for attr, value in (("enabled", _enabled), ("deterministic", _deterministic),
                            ("fp32_precision", _fp32_precision)):
            if value is not None:
                setattr(m, attr, value)
        return orig

    @contextlib.contextmanager
    def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
        """Set the flags for a region, restoring them on exit."""
        orig = set_flags(enabled, deterministic, allow_tf32, fp32_precision)
        try:
            yield
        finally:
            set_flags(*orig)

    m = _module("mkldnn", "``ember.backends.mkldnn``: PyTorch's oneDNN flags (plain settings; "
                "ember does not link oneDNN, so ``is_available()`` is False).",
                is_available=is_available, is_acl_available=is_acl_available,
                set_flags=set_flags, flags=flags)
    m.enabled, m.deterministic, m.allow_tf32, m.fp32_precision = True, False, None, "none"
    m.VERBOSE_OFF, m.VERBOSE_ON, m.VERBOSE_ON_CREATION = (VERBOSE_OFF, VERBOSE_ON,
                                                          VERBOSE_ON_CREATION)
    m.verbose = _verbose
    return m


# -- mkl, openmp ----------------------------------------------------------------------------

def _mkl():
    def is_available():
        """Whether ember is built with MKL: no (BLAS comes through SciPy)."""
        return False

    m = _module("mkl", "``ember.backends.mkl``: whether MKL is linked (no).",
                is_available=is_available)
    m.VERBOSE_OFF, m.VERBOSE_ON, m.verbose = VERBOSE_OFF, VERBOSE_ON, _verbose
    return m


def _openmp():
    def is_available():
        """Whether ember is built with OpenMP (``ember.has_openmp``: the CPU plugin's
        kernels)."""
        import ember
        return bool(ember.has_openmp)

    return _module("openmp", "``ember.backends.openmp``: whether OpenMP is used.",
                   is_available=is_available)


# -- opt_einsum -----------------------------------------------------------------------------

def _opt_einsum_installed():
    return importlib.util.find_spec("opt_einsum") is not None


class _OptEinsumModule(types.ModuleType):
    """``enabled`` and ``strategy`` validate what is set, as PyTorch's do."""

    _enabled = None
    _strategy = None

    def __dir__(self):
        return sorted(set(super().__dir__()) | {"enabled", "strategy"})

    @property
    def enabled(self):
        if self._enabled is None:
            self._enabled = self.is_available()
        return self._enabled

    @enabled.setter
    def enabled(self, value):
        if value and not self.is_available():
            raise ValueError(
                f"opt_einsum is not available, so setting `enabled` to {value} will not reap "
                "the benefits of calculating an optimal path for einsum. ember.einsum will "
                "fall back to contracting from left to right. To enable this optimal path "
                "calculation, please install opt-einsum.")
        self._enabled = bool(value)

    @property
    def strategy(self):
        if self._strategy is None and self.is_available():
            self._strategy = "auto"
        return self._strategy

    @strategy.setter
    def strategy(self, value):
        if not self.is_available():
            raise ValueError(
                f"opt_einsum is not available, so setting `strategy` to {value} will not be "
                "meaningful. Please install opt_einsum or unset `strategy`.")
        if not self.enabled:
            raise ValueError(
                f"opt_einsum is not enabled, so setting a `strategy` to {value} will not be "
                "meaningful. Please set `enabled` to `True` as well or unset `strategy`.")
        if value not in ("auto", "greedy", "optimal"):
            raise ValueError("`strategy` must be one of the following: [auto, greedy, "
                             f"optimal] but is {value}")
        self._strategy = value


def _opt_einsum():
    m = None

    def is_available():
        """Whether the opt_einsum package is installed.  (ember.einsum contracts left to
        right either way; the flags are kept for code that reads or sets them.)"""
        return _opt_einsum_installed()

    def get_opt_einsum():
        """The opt_einsum package if it is installed, else None."""
        return importlib.import_module("opt_einsum") if is_available() else None

    def set_flags(_enabled=None, _strategy=None):
        orig = (m.enabled, m.strategy if is_available() else None)
        if _enabled is not None:
            m.enabled = _enabled
        if _strategy is not None:
            m.strategy = _strategy
        return orig

    @contextlib.contextmanager
    def flags(enabled=None, strategy=None):
        """Set the flags for a region, restoring them on exit."""
        orig = set_flags(enabled, strategy)
        try:
            yield
        finally:
            set_flags(*orig)

    m = _module("opt_einsum", "``ember.backends.opt_einsum``: PyTorch's einsum path flags.",
                cls=_OptEinsumModule, is_available=is_available,
                get_opt_einsum=get_opt_einsum, set_flags=set_flags, flags=flags)
    return m


NAMESPACES = {"mps": _mps, "mkldnn": _mkldnn, "mkl": _mkl, "openmp": _openmp,
              "opt_einsum": _opt_einsum}


def install():
    """Register the namespaces as submodules of ``ember.backends`` (once)."""
    from ember import backends
    for name, build in NAMESPACES.items():
        full = f"ember.backends.{name}"
        if full not in sys.modules:
            sys.modules[full] = build()
        setattr(backends, name, sys.modules[full])
