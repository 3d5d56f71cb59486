"""ember-cpu's pluggy hooks, runtime module and import-time behaviour.

Each test runs in a fresh interpreter: what a module imports (and thread limits) must not
leak between tests.  When the core is not importable yet, the hook contract is loaded
from the repository's backends/hookspecs.py.
"""
import os
import subprocess
import sys
import textwrap

import ember_cpu

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

PRELUDE = f"""
import importlib.util, os, sys, types
os.environ["EMBER_DEVICE_BACKEND_AUTOLOAD"] = "0"
try:
    from ember.backends import hookspecs
except Exception:       # the core is not built: the contract alone, from the repository
    for name in ("ember", "ember.backends"):
        sys.modules[name] = types.ModuleType(name)
        sys.modules[name].__path__ = []
    spec = importlib.util.spec_from_file_location(
        "ember.backends.hookspecs", {os.path.join(REPO, "backends", "hookspecs.py")!r})
    hookspecs = importlib.util.module_from_spec(spec)
    sys.modules["ember.backends.hookspecs"] = hookspecs
    spec.loader.exec_module(hookspecs)
"""


def run_python(code):
    root = os.path.dirname(os.path.dirname(os.path.abspath(ember_cpu.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    source = PRELUDE + textwrap.dedent(code)
    r = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr


def test_importing_the_plugin_loads_no_kernels():
    run_python("""
        import ember_cpu.plugin
        heavy = [m for m in sys.modules if m.startswith(("ember_cpu._", "scipy", "threadpoolctl"))]
        assert not heavy, heavy
    """)


def test_thread_waits_are_short_unless_the_user_set_them():
    """Importing the plugin makes OpenMP threads spin 10k rounds (not libgomp's 300k)
    and OpenBLAS's workers 2^20 cycles (not 2^28) before sleeping, so they leave the cores
    to the next op's team and to other processes; a setting already in the environment
    wins."""
    env_keys = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OPENBLAS_THREAD_TIMEOUT")
    run_python(f"""
        for k in {env_keys!r}:
            os.environ.pop(k, None)
        import ember_cpu
        assert os.environ["GOMP_SPINCOUNT"] == "10000"
        assert "OMP_WAIT_POLICY" not in os.environ
        assert os.environ["OPENBLAS_THREAD_TIMEOUT"] == "20"
    """)
    run_python("""
        os.environ.pop("GOMP_SPINCOUNT", None)
        os.environ["OMP_WAIT_POLICY"] = "ACTIVE"
        import ember_cpu
        assert "GOMP_SPINCOUNT" not in os.environ
    """)
    run_python("""
        os.environ["OPENBLAS_THREAD_TIMEOUT"] = "28"
        import ember_cpu
        assert os.environ["OPENBLAS_THREAD_TIMEOUT"] == "28"
    """)


def test_parallel_cutoff_follows_the_cost_of_waking_the_team():
    """Kernels split among threads from parallel_cutoff() elements: 32768 at one thread,
    and at two the work whose saving pays for waking the team (measured: between 32768
    and 2M); EMBER_CPU_PARALLEL_CUTOFF sets it, and compiled kernels read the same value."""
    run_python("""
        os.environ.pop("EMBER_CPU_PARALLEL_CUTOFF", None)
        from ember_cpu import _strided, _threads
        _threads.set_num_threads(1)
        assert _strided._parallel_cutoff() == 32768
        _threads.set_num_threads(2)
        c = _strided._parallel_cutoff()
        assert 32768 <= c <= 1 << 21, c
        from ember_cpu import codegen
        codegen.sync_cutoff()
        assert codegen._CUTOFF.value == c
    """)
    run_python("""
        os.environ["EMBER_CPU_PARALLEL_CUTOFF"] = "100000"
        from ember_cpu import _strided, _threads
        _threads.set_num_threads(2)
        assert _strided._parallel_cutoff() == 100000
    """)


def test_hooks():
    run_python("""
        import ctypes
        import pluggy
        import ember_cpu.plugin as plugin
        import ember_cpu.runtime as runtime

        pm = pluggy.PluginManager("ember")
        pm.add_hookspecs(hookspecs)
        pm.register(plugin)
        assert pm.hook.ember_devices() == [[hookspecs.DeviceSpec(
            "cpu", "host CPU: OpenMP kernels, BLAS matmul")]]
        assert pm.hook.ember_device_module(device_type="cpu") is runtime
        assert pm.hook.ember_device_module(device_type="cuda") is None
        assert isinstance(runtime, hookspecs.DeviceModule)
        assert pm.hook.ember_kernel_table(device_type="mps") is None

        cap = pm.hook.ember_kernel_table(device_type="cpu")
        api = ctypes.pythonapi
        api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        assert api.PyCapsule_IsValid(cap, b"ember.kernel_table")
        table = api.PyCapsule_GetPointer(cap, b"ember.kernel_table")
        from ember.backends._abi import ENTRIES
        from ember.core import _device
        assert ctypes.c_int32.from_address(table).value == _device.ABI_VERSION
        assert ctypes.c_int32.from_address(table + 4).value == _device.ABI_MINOR
        size = ctypes.c_int64.from_address(table + 8).value           # sizeof the table
        # the header (version, minor, size), then a function pointer per entry: every one
        # filled (sort since its radix kernel, _sort.pyx)
        assert size == 16 + 8 * len(ENTRIES) == _device.TABLE_SIZE
        filled = [e for i, e in enumerate(ENTRIES)
                  if ctypes.c_void_p.from_address(table + 16 + 8 * i).value]
        assert filled == list(ENTRIES)
        assert pm.hook.ember_kernel_table(device_type="cpu") is cap    # one table
        assert not [m for m in sys.modules if m.startswith("scipy")]
    """)


def test_runtime_module():
    run_python("""
        from ember_cpu import runtime
        assert runtime.is_available() is True
        assert runtime.device_count() == 1 and runtime.current_device() == 0
        assert runtime.set_device(0) is None and runtime.synchronize() is None
        assert runtime.synchronize("cpu") is None
    """)


def test_set_num_threads_caps_openmp_and_both_blas_pools():
    run_python("""
        import numpy as np
        import pluggy
        from threadpoolctl import threadpool_info
        import ember_cpu.plugin as plugin
        from ember_cpu import _kernels as K

        pm = pluggy.PluginManager("ember")
        pm.add_hookspecs(hookspecs)
        pm.register(plugin)

        def blas_threads():
            return {i["filepath"]: i["num_threads"] for i in threadpool_info()
                    if i["user_api"] == "blas"}

        pm.hook.ember_set_num_threads(num_threads=1)
        assert pm.hook.ember_get_num_threads() == 1
        assert K._team_size() == (1, 1)
        assert blas_threads() and set(blas_threads().values()) == {1}, blas_threads()
        before = set(blas_threads())
        # the first floating matmul loads SciPy's own BLAS: the limit applies to it too
        x = np.ones((1, 4, 4), np.float32)
        K._test_matmul(np.empty_like(x), x, x)
        assert set(blas_threads()) - before, "SciPy's BLAS did not load"
        assert set(blas_threads().values()) == {1}, blas_threads()
        pm.hook.ember_set_num_threads(num_threads=2)
        assert pm.hook.ember_get_num_threads() == 2
        assert K._team_size() == (2, 2)
        assert set(blas_threads().values()) == {2}, blas_threads()
    """)
