"""The backend plugin contract: every hook a device plugin may implement.

A plugin is a module of ``@hookimpl`` functions (``ember.backends.hookimpl``), named by an
entry point in the group ``ember.backends``.  Hooks are grouped by lifecycle:

1. registration, at ``import ember`` (cheap: no device initialisation, no kernel import);
2. first use of a device type (kernels are loaded here);
3. runtime control (threads);
4. compilation (``ember.compile``'s code generator for the device).

A hook implementation may accept a subset of the arguments below.  Hooks marked
``firstresult`` stop at the first plugin returning something other than None.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Protocol, runtime_checkable

import pluggy

hookspec = pluggy.HookspecMarker("ember")
hookimpl = pluggy.HookimplMarker("ember")


@dataclass(frozen=True)
class DeviceSpec:
    """What a plugin says about one device type it provides."""

    type: str                 # device type name, as in ``ember.device("cpu")``
    description: str = ""     # one line for ``python -m ember.backends``
    # whether ember.accelerator may pick it: False for a device that only stands in for one
    # (a test device over host memory, as ember-reference is)
    accelerator: bool = True


@runtime_checkable
class DeviceModule(Protocol):
    """The runtime module of a device type: what ``ember.cuda``, ``ember.mps`` … are.

    Checked at registration; a module missing one of these is rejected with a message
    naming the plugin and the missing attribute.
    """

    def is_available(self) -> bool: ...
    def device_count(self) -> int: ...
    def current_device(self) -> int: ...
    def set_device(self, device) -> None: ...
    def synchronize(self, device=None) -> None: ...


# the functions a runtime module must define, read off the Protocol above
RUNTIME_API = tuple(n for n, v in vars(DeviceModule).items()
                    if callable(v) and not n.startswith("_"))


# 1. registration ------------------------------------------------------------------------

@hookspec
def ember_devices() -> list[DeviceSpec]:
    """Return the device types this plugin provides.  Called once, when the plugin loads;
    it must not initialise any device."""


@hookspec(firstresult=True)
def ember_device_module(device_type: str) -> ModuleType | None:
    """Return the runtime module for ``device_type`` (see ``DeviceModule``), or None if this
    plugin does not provide that type.  Importing it must be cheap."""


# 2. first use ---------------------------------------------------------------------------

@hookspec(firstresult=True)
def ember_kernel_table(device_type: str) -> object | None:
    """Return a PyCapsule named ``"ember.kernel_table"`` holding a pointer to an
    ``ember_kernel_table`` (``ember/abi.h`` under ``ember.get_include()``), or None if this
    plugin does not provide ``device_type``.  Called the first time a tensor is made on the
    device type, so this is where a plugin imports its compiled kernels.  The capsule (and
    the table it points to) must stay alive for the life of the process.

    A plugin whose device is unavailable (no driver, a stub) raises RuntimeError here with
    a message saying why; the core passes it on to the user."""


@hookspec(firstresult=True)
def ember_unimplemented(device_type: str) -> list[str] | None:
    """Return what ``device_type``'s kernels do not implement, as patterns (``*`` and ``?``
    wildcards, brackets literal) over the names kernel calls are counted under
    (``"binary.pow[float16]"``, ``"matmul[int64]"``, ``"*[float64]"``;
    ``ember.backends.abi_ops()`` lists the op names), or None if this
    plugin does not provide that type.  Those calls still run: a floating elementwise op
    the core's op table has a composite for (sigmoid, expm1, log1p, gelu, remainder, ...:
    ``OpDef.composite``) runs that composite on the device from its first call, anything
    else through the host fallback; the conformance suite skips them with the reason
    instead of failing."""


# 3. runtime control ---------------------------------------------------------------------

@hookspec
def ember_set_num_threads(num_threads: int) -> None:
    """Set the number of threads the plugin's kernels use (its OpenMP and BLAS pools)."""


@hookspec(firstresult=True)
def ember_get_num_threads() -> int | None:
    """Return the number of threads the plugin's kernels use."""


@hookspec
def ember_build_info() -> str | None:
    """One line on how the plugin was built and what it runs with (threads, libraries),
    for ``ember.__config__.show()``; None when there is nothing to say.  It may import the
    plugin's kernels: it runs only when asked."""


@hookspec(firstresult=True)
def ember_nondeterministic_kernels(device_type: str) -> list[str] | None:
    """Return the names of the ops whose kernels on ``device_type`` give results that depend
    on thread scheduling (e.g. a scatter-add with atomic float adds), or None if this plugin
    does not provide that type.  Every kernel not listed is declared deterministic.  With
    ``ember.use_deterministic_algorithms(True)`` the core raises (or warns) before running a
    listed one; the switch also reaches every kernel as ``ember_ctx.deterministic``."""


# 4. compilation ---------------------------------------------------------------------------

@runtime_checkable
class KernelCodegen(Protocol):
    """What ``ember_kernel_codegen`` returns: turns the fused kernels of ``ember.compile``'s
    "inductor" backend (``ember._inductor.ir.Kernel``: loop nests over rows, reductions
    and stores, with device-neutral expressions) into callables for one device type.

    ``compile(kernels, device)`` returns ``{kernel.name: launch}`` for the graph's device
    (an ``ember.device`` of this type); ``launch(pointers)`` runs the kernel on a tuple of
    device addresses (``Tensor.data_ptr()``), one per ``kernel.args`` entry, in stream order
    on a device that has streams.  ``supports(kernel)`` says whether it can compile a
    kernel at all (the backend runs the ops one by one otherwise).  Compile once per
    source: cache what was built on disk, so a second process compiles nothing
    (``ember.backends.kernel_cache`` does that for native libraries and cubins).
    """

    name: str

    def supports(self, kernel) -> bool: ...
    def compile(self, kernels: list, device=None) -> dict: ...


@hookspec(firstresult=True)
def ember_kernel_codegen(device_type: str) -> KernelCodegen | None:
    """Return the KernelCodegen for ``device_type`` (e.g. C with OpenMP for "cpu", CUDA C
    for "cuda"), or None if this plugin has none for it.  Called when ``ember.compile``'s
    default backend first compiles a graph for that device; it may import the plugin's
    compiler modules.  ``ember.backends.c_codegen`` renders the IR's expressions for
    C-like languages."""
