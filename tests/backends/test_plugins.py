"""The plugin system: autoload of the entry-point group ``ember.backends``, the opt-out,
load failures, registration checks, device runtime modules and first-use kernel loading.

Registrations are process-global, so every in-process test registers device types under
names of its own (``_unique()``).  Anything that could break ``import ember`` runs in a
subprocess with a temporary ``*.dist-info`` on its PYTHONPATH (PITFALLS: never install a
broken plugin into the venv).
"""
import ctypes
import importlib
import json
import os
import subprocess
import sys
import textwrap
import uuid

import pytest
from ember.backends import AUTOLOAD_ENV, GROUP, PluginLoadError
from ember.backends._discovery import entry_points
from ember.core import _device

import ember
from ember import backends

FIRST_DYNAMIC_BACKEND = 8        # core/_dispatch.pxd (a cdef enum, not visible from Python)
LAST_DYNAMIC_BACKEND = 31
STUBS = ("mps", "xpu")


# helpers --------------------------------------------------------------------------------

def _unique(prefix="fakedev"):
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def _env(**overrides):
    """os.environ without the autoload switch (the default: on), plus ``overrides``."""
    env = {k: v for k, v in os.environ.items() if k != AUTOLOAD_ENV}
    for k, v in overrides.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def _run(args, cwd, **env):
    """Run ``python args...`` in a fresh process outside the repository."""
    return subprocess.run([sys.executable, *args], cwd=cwd, env=_env(**env),
                          capture_output=True, text=True, timeout=300)


def _run_code(code, cwd, **env):
    return _run(["-c", textwrap.dedent(code)], cwd, **env)


def _installed_plugin_names():
    return sorted(ep.name for ep in entry_points(GROUP))


RUNTIME_SRC = '''\
"""A fake runtime module."""
def is_available():
    return True
def device_count():
    return 1
def current_device():
    return 0
def set_device(device):
    pass
{synchronize}
'''

PLUGIN_SRC = '''\
"""A fake ember backend plugin written by the tests."""
from ember.backends import DeviceSpec, hookimpl

DEVICES = {devices!r}
calls = []          # device types the kernel-table hook was asked for
TABLE = None        # what the kernel-table hook returns (set by the test)


@hookimpl
def ember_devices():
    return [DeviceSpec(t, "fake device") for t in DEVICES]


@hookimpl
def ember_device_module(device_type):
    if {with_runtime!r} and device_type in DEVICES:
        import {runtime}
        return {runtime}
    return None


@hookimpl
def ember_kernel_table(device_type):
    if device_type in DEVICES:
        calls.append(device_type)
        return TABLE
    return None
'''


@pytest.fixture
def make_plugin(tmp_path, monkeypatch):
    """make_plugin(devices, synchronize=True, with_runtime=True) -> an imported plugin
    module (and its runtime module ``<name>_rt``) written to a temp dir."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(devices, synchronize=True, with_runtime=True):
        name = _unique("fakeplugin")
        sync = "def synchronize(device=None):\n    pass\n" if synchronize else ""
        (tmp_path / f"{name}_rt.py").write_text(RUNTIME_SRC.format(synchronize=sync))
        (tmp_path / f"{name}.py").write_text(PLUGIN_SRC.format(
            devices=list(devices), runtime=f"{name}_rt", with_runtime=with_runtime))
        importlib.invalidate_caches()
        return importlib.import_module(name)

    return make


def _assert_not_registered(module, name):
    """register() left no trace of a rejected plugin."""
    pm = backends._manager()
    assert name not in backends._loaded
    assert pm.get_plugin(name) is None
    assert not pm.is_registered(module)


@pytest.fixture
def autoloaded():
    if not backends._autoload_enabled():
        pytest.skip(f"{AUTOLOAD_ENV}=0 in this environment: nothing was autoloaded")


# autoload: the installed stubs and the stand-ins ----------------------------------------

def test_autoload_registers_installed_plugins(autoloaded):
    for ep in entry_points(GROUP):
        assert ep.name in backends._loaded, (ep.name, sorted(backends._loaded))
        rec = backends._loaded[ep.name]
        assert rec["dist"] == ep.dist and rec["version"] == ep.version
    for t in STUBS:
        assert backends._loaded[t]["devices"] == [t]
        assert backends._loaded[t]["dist"] == f"ember-{t}"
        b = _device._backend_for_type(t)
        assert b.plugin == t and b.package == f"ember-{t}"
        assert b.key == int(getattr(ember.DispatchKey, t.upper()))   # built-in keys kept


def test_autoload_in_fresh_process(tmp_path):
    r = _run_code("""
        import ember, json
        from ember.backends import _loaded
        print(json.dumps({n: r["devices"] for n, r in _loaded.items()}))
    """, tmp_path)
    assert r.returncode == 0, r.stderr
    loaded = json.loads(r.stdout)
    assert sorted(loaded) == _installed_plugin_names()
    for t in STUBS:
        assert loaded[t] == [t]


@pytest.mark.parametrize("t", STUBS)
def test_stub_device_is_unavailable(autoloaded, t):
    mod = getattr(ember, t)
    assert mod is ember.get_device_module(t)
    assert not getattr(mod, "_is_standin", False)      # the plugin's module, not a stand-in
    assert mod.is_available() is False
    assert "stub" in mod.unavailable_reason()
    assert f"ember-{t}" in mod.unavailable_reason()
    assert mod.device_count() == 0
    with pytest.raises(RuntimeError, match="stub"):
        mod.synchronize()
    assert ember.device(f"{t}:0").type == t            # the device type exists
    with pytest.raises(RuntimeError, match="stub"):
        ember.empty(2, device=t)
    with pytest.raises(RuntimeError, match="stub"):
        ember.zeros(3, device=ember.device(t, 0))
    assert not _device._backend_for_type(t).loaded


def test_cuda_without_plugin_is_a_standin():
    if _device._backend_for_type("cuda").plugin is not None:
        pytest.skip("a cuda plugin is installed")
    assert ember.cuda.is_available() is False         # never raises, as torch.cuda
    assert ember.cuda.device_count() == 0
    assert ember.cuda is ember.get_device_module("cuda") is ember.get_device_module("cuda:1")
    assert "ember-cuda" in ember.cuda.unavailable_reason()
    with pytest.raises(RuntimeError, match="ember-cuda"):
        ember.cuda.synchronize()
    with pytest.raises(RuntimeError, match="ember-cuda"):
        ember.cuda.current_device()
    assert ember.device("cuda:1").index == 1
    for dev in ("cuda", "cuda:0", ember.device("cuda", 1), 0):
        with pytest.raises(RuntimeError) as info:
            ember.empty(2, device=dev)
        assert "ember-cuda" in str(info.value)
        assert "pip install ember-cuda" in str(info.value)
    with pytest.raises(RuntimeError, match="ember-cuda"):
        ember.ones(2, 3, device="cuda")


def test_unknown_device_type_is_rejected():
    with pytest.raises(RuntimeError, match="device string"):
        ember.device("nosuchdevice")
    with pytest.raises(AttributeError):
        getattr(ember, "nosuchdevice")


def test_cpu_plugin_state_is_consistent():
    cpu = ember.get_device_module("cpu")
    b = _device._backend_for_type("cpu")
    if "cpu" in {ep.name for ep in entry_points(GROUP)} and backends._autoload_enabled():
        assert b.plugin == "cpu" and "cpu" in backends._loaded
        assert not getattr(cpu, "_is_standin", False)
    if b.plugin is None:                      # no CPU plugin: the stand-in answers False
        assert cpu.is_available() is False
        with pytest.raises(RuntimeError, match="ember-cpu"):
            ember.empty(1)
        return
    if not cpu.is_available():
        pytest.skip("the CPU plugin reports itself unavailable")
    x = ember.empty(2, 3)
    assert x.device == ember.device("cpu")
    assert _device._backend_for_type("cpu").loaded


# python -m ember.backends ---------------------------------------------------------------

def test_cli_lists_plugins(tmp_path):
    r = _run(["-m", "ember.backends"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    eps = entry_points(GROUP)
    assert f"{len(eps)} backend plugin(s) in entry-point group '{GROUP}'" in out
    lines = out.splitlines()
    for ep in eps:
        assert f"{ep.name}  ({ep.dist} {ep.version})" in lines, out
    for t in STUBS:
        assert f"{t}  (ember-{t} 0.1.0)" in lines
        line = next(x for x in lines if x.strip().startswith(f"device '{t}'"))
        key = int(getattr(ember.DispatchKey, t.upper()))
        assert f"(dispatch key {key})" in line
        assert "unavailable" in line and "stub" in line, line
    # availability of every listed device agrees with its runtime module
    for ep in eps:
        spec_devices = backends._loaded.get(ep.name, {}).get("devices", [])
        for t in spec_devices:
            line = next(x for x in lines if x.strip().startswith(f"device '{t}'"))
            available = ember.get_device_module(t).is_available()
            assert line.endswith(": available") == available, line
            assert ("unavailable" in line) == (not available), line
    assert "threads:" in out


# the opt-out: EMBER_DEVICE_BACKEND_AUTOLOAD=0 -------------------------------------------

def test_autoload_opt_out(tmp_path):
    r = _run_code("""
        import json
        import ember
        from ember import backends
        out = {"loaded_at_import": sorted(backends._loaded)}
        out["mps_standin"] = bool(getattr(ember.mps, "_is_standin", False))
        out["mps_available"] = ember.mps.is_available()
        try:
            ember.empty(2, device="mps")
        except RuntimeError as e:
            out["mps_error"] = str(e)
        out["load"] = backends.load("mps")
        out["load_again"] = backends.load("mps")
        out["loaded_after"] = sorted(backends._loaded)
        out["mps_standin_after"] = bool(getattr(ember.mps, "_is_standin", False))
        out["mps_reason_after"] = ember.mps.unavailable_reason()
        try:
            ember.empty(2, device="mps")
        except RuntimeError as e:
            out["mps_error_after"] = str(e)
        try:
            backends.load("nope")
        except RuntimeError as e:
            out["nope_error"] = str(e)
        print(json.dumps(out))
    """, tmp_path, **{AUTOLOAD_ENV: "0"})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["loaded_at_import"] == []
    assert out["mps_standin"] is True and out["mps_available"] is False
    assert "ember.backends.load('mps')" in out["mps_error"]
    assert AUTOLOAD_ENV in out["mps_error"]
    assert out["load"] == ["mps"] and out["load_again"] == ["mps"]
    assert out["loaded_after"] == ["mps"]                  # only the one asked for
    assert out["mps_standin_after"] is False
    assert "stub" in out["mps_reason_after"]
    assert "stub" in out["mps_error_after"]
    msg = out["nope_error"]
    assert "'nope'" in msg
    for name in _installed_plugin_names():
        assert name in msg, msg


def test_load_unknown_plugin_in_process():
    with pytest.raises(RuntimeError) as info:
        backends.load("nope")
    assert "'nope'" in str(info.value)
    for name in _installed_plugin_names():
        assert name in str(info.value)


# a plugin that fails to load ------------------------------------------------------------

@pytest.fixture
def broken_path(tmp_path):
    site = tmp_path / "site"
    dist = site / "broken_plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[ember.backends]\nbroken = broken_mod\n")
    (site / "broken_mod.py").write_text(
        'raise ImportError("broken_mod cannot be imported (on purpose)")\n')
    old = os.environ.get("PYTHONPATH")
    return str(site) + (os.pathsep + old if old else "")


def test_broken_plugin_fails_import_with_a_clear_message(tmp_path, broken_path):
    r = _run_code("""
        import json
        try:
            import ember
        except BaseException as e:
            print(json.dumps({"mro": [c.__name__ for c in type(e).__mro__], "msg": str(e),
                              "cause": type(e.__cause__).__name__}))
        else:
            print(json.dumps(None))
    """, tmp_path, PYTHONPATH=broken_path)
    assert r.returncode == 0, r.stderr
    err = json.loads(r.stdout)
    assert err is not None, "import ember succeeded with a broken plugin installed"
    assert err["mro"][0] == PluginLoadError.__name__ and "RuntimeError" in err["mro"]
    assert issubclass(PluginLoadError, RuntimeError)
    msg = err["msg"]
    assert "'broken'" in msg
    assert "'broken-plugin'" in msg
    assert AUTOLOAD_ENV in msg and f"{AUTOLOAD_ENV}=0" in msg
    assert "on purpose" in msg                      # the underlying error is passed on
    assert err["cause"] == "ImportError"


def test_broken_plugin_opt_out_imports(tmp_path, broken_path):
    r = _run_code("""
        import json
        import ember
        from ember import backends
        out = {"loaded": sorted(backends._loaded)}
        try:
            backends.load("broken")
        except backends.PluginLoadError as e:
            out["broken"] = str(e)
        out["mps"] = backends.load("mps")
        print(json.dumps(out))
    """, tmp_path, PYTHONPATH=broken_path, **{AUTOLOAD_ENV: "0"})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["loaded"] == []
    assert "'broken'" in out["broken"] and "'broken-plugin'" in out["broken"]
    assert out["mps"] == ["mps"]                     # the others still load by hand


def test_cli_reports_broken_plugin_with_opt_out(tmp_path, broken_path):
    r = _run(["-m", "ember.backends"], tmp_path, PYTHONPATH=broken_path,
             **{AUTOLOAD_ENV: "0"})
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    i = lines.index("broken  (broken-plugin 0.1)")
    assert "failed to load" in lines[i + 1] and "on purpose" in lines[i + 1]
    assert "mps  (ember-mps 0.1.0)" in lines                 # the others are still listed


def test_cli_reports_broken_plugin_without_opt_out(tmp_path, broken_path):
    r = _run(["-m", "ember.backends"], tmp_path, PYTHONPATH=broken_path)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 1
    assert "broken  (broken-plugin 0.1)" in r.stdout.splitlines()


# registration checks --------------------------------------------------------------------

def test_register_rejects_runtime_without_synchronize(make_plugin):
    bad_type = _unique()
    bad = make_plugin([bad_type], synchronize=False)
    with pytest.raises(TypeError) as info:
        backends.register(bad)
    assert "synchronize" in str(info.value)
    assert bad_type in str(info.value)
    for ok_name in ("is_available", "device_count", "current_device", "set_device"):
        assert ok_name not in str(info.value)       # only the missing one is named
    # the registry is left clean
    _assert_not_registered(bad, bad.__name__)
    assert _device._backend_for_type(bad_type) is None
    assert getattr(ember.get_device_module(bad_type), "_is_standin", False)
    with pytest.raises(RuntimeError):
        ember.device(bad_type)
    assert bad.calls == []

    # a correct plugin under another device type registers fine
    good_type = _unique()
    good = make_plugin([good_type])
    assert backends.register(good, dist="fake-dist", version="9.9") == [good_type]
    rec = backends._loaded[good.__name__]
    assert rec["devices"] == [good_type]
    assert rec["dist"] == "fake-dist" and rec["version"] == "9.9"
    assert backends._manager().get_plugin(good.__name__) is good
    b = _device._backend_for_type(good_type)
    assert b.plugin == good.__name__ and b.package == "fake-dist"
    assert FIRST_DYNAMIC_BACKEND <= b.key <= LAST_DYNAMIC_BACKEND
    assert _device._backend_for_key(b.key) is b
    runtime = sys.modules[f"{good.__name__}_rt"]
    assert ember.get_device_module(good_type) is runtime
    assert getattr(ember, good_type) is runtime
    assert ember.device(f"{good_type}:0").type == good_type
    assert good.calls == []                            # kernels are not loaded at register
    # registering the same plugin again is a no-op
    assert backends.register(good) == [good_type]

    # the rejected plugin's name is free again: the fixed plugin can take it
    fixed_type = _unique()
    fixed = make_plugin([fixed_type])
    assert backends.register(fixed, name=bad.__name__) == [fixed_type]
    assert backends._loaded[bad.__name__]["devices"] == [fixed_type]
    assert _device._backend_for_type(fixed_type).key != b.key


def test_dynamic_keys_are_distinct(make_plugin):
    types = [_unique(), _unique()]
    p = make_plugin(types)
    assert backends.register(p) == types
    keys = [_device._backend_for_type(t).key for t in types]
    assert len(set(keys)) == 2
    builtin = {int(k) for k in (ember.DispatchKey.CPU, ember.DispatchKey.CUDA,
                                ember.DispatchKey.MPS, ember.DispatchKey.XPU,
                                ember.DispatchKey.Meta)}
    for k in keys:
        assert k >= FIRST_DYNAMIC_BACKEND and k not in builtin


@pytest.mark.parametrize("bad_type", ["FakeDev", "fake-dev", "meta"])
def test_register_rejects_bad_device_type_names(make_plugin, bad_type):
    p = make_plugin([bad_type], with_runtime=False)
    with pytest.raises(ValueError):
        backends.register(p)
    _assert_not_registered(p, p.__name__)
    if bad_type == "meta":
        assert _device._backend_for_type("meta").plugin == "ember"
    else:
        assert _device._backend_for_type(bad_type) is None


def test_register_rejects_non_devicespec(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    name = _unique("fakeplugin")
    (tmp_path / f"{name}.py").write_text(
        "from ember.backends import hookimpl\n\n\n"
        "@hookimpl\ndef ember_devices():\n    return ['notaspec']\n")
    importlib.invalidate_caches()
    mod = importlib.import_module(name)
    with pytest.raises(TypeError, match="DeviceSpec"):
        backends.register(mod)
    _assert_not_registered(mod, name)


def test_duplicate_device_type_is_rejected(make_plugin):
    t = _unique()
    first, second = make_plugin([t]), make_plugin([t])
    assert backends.register(first) == [t]
    with pytest.raises(RuntimeError) as info:
        backends.register(second)
    msg = str(info.value)
    assert f"'{t}'" in msg and first.__name__ in msg and second.__name__ in msg
    _assert_not_registered(second, second.__name__)
    b = _device._backend_for_type(t)
    assert b.plugin == first.__name__
    assert backends._loaded[first.__name__]["devices"] == [t]


def test_duplicate_device_type_keeps_first_runtime(make_plugin):
    t = _unique()
    first, second = make_plugin([t]), make_plugin([t])
    backends.register(first)
    first_runtime = ember.get_device_module(t)
    assert first_runtime is sys.modules[f"{first.__name__}_rt"]
    with pytest.raises(RuntimeError):
        backends.register(second)
    assert ember.get_device_module(t) is first_runtime


def test_duplicate_of_a_stub_device_in_subprocess(tmp_path):
    # a second plugin for 'mps' (provided by ember-mps): rejected, the stub stays in charge
    (tmp_path / "dup_mps.py").write_text(textwrap.dedent('''
        from ember.backends import DeviceSpec, hookimpl

        @hookimpl
        def ember_devices():
            return [DeviceSpec("mps", "a second mps")]
    '''))
    r = _run_code("""
        import sys, json
        sys.path.insert(0, ".")
        import ember, dup_mps
        from ember import backends
        from ember.core import _device
        try:
            backends.register(dup_mps)
        except RuntimeError as e:
            err = str(e)
        else:
            err = None
        print(json.dumps({"err": err, "plugin": _device._backend_for_type("mps").plugin,
                          "loaded": "dup_mps" in backends._loaded,
                          "reason": ember.mps.unavailable_reason()}))
    """, tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["err"] is not None and "'mps'" in out["err"] and "dup_mps" in out["err"]
    assert out["plugin"] == "mps" and out["loaded"] is False
    assert "stub" in out["reason"]


# runtime modules ------------------------------------------------------------------------

def test_register_device_module_round_trip():
    import types

    t = _unique("fakemod")
    mod = types.ModuleType(f"ember.{t}")
    ember._register_device_module(t, mod)
    assert ember.get_device_module(t) is mod
    assert ember.get_device_module(f"{t}:3") is mod
    other = types.ModuleType("other")
    with pytest.raises(RuntimeError, match="already registered"):
        ember._register_device_module(t, other)
    assert ember.get_device_module(t) is mod
    ember._register_device_module(t, other, _replace=True)
    assert ember.get_device_module(t) is other


def test_register_device_module_replaces_a_standin():
    import types

    t = _unique("fakemod")
    standin = ember.get_device_module(t)
    assert standin._is_standin and standin.is_available() is False
    mod = types.ModuleType(f"ember.{t}")
    ember._register_device_module(t, mod)                # a stand-in is no registration
    assert ember.get_device_module(t) is mod


def test_get_device_module_of_mps(autoloaded):
    assert ember.get_device_module("mps") is ember.mps
    assert ember.get_device_module(ember.device("mps")) is ember.mps
    assert ember.get_device_module("mps:0") is ember.mps
    assert ember.get_device_module("xpu") is ember.xpu is not ember.mps


def test_get_device_module_default_device():
    assert ember.get_device_module() is ember.get_device_module(ember.get_default_device())
    with ember.device("mps"):
        assert ember.get_device_module() is ember.mps


# kernels load on first use; a bad kernel table is reported --------------------------------

_NAME_KEEP = []           # capsule names and tables must outlive the capsules


def _capsule(name, abi_version=1, minor=0, size=0):
    buf = ctypes.create_string_buffer(512)            # zeroed: the header first, then NULLs
    ctypes.c_int32.from_buffer(buf).value = abi_version
    ctypes.c_int32.from_buffer(buf, 4).value = minor
    ctypes.c_int64.from_buffer(buf, 8).value = size
    cname = ctypes.create_string_buffer(name)
    _NAME_KEEP.extend([buf, cname])
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    return new(ctypes.addressof(buf), ctypes.addressof(cname), None)


@pytest.mark.parametrize("kind", ["object", "none", "string", "capsule-wrong-name",
                                  "capsule-wrong-abi", "capsule-newer-minor", "capsule-wrong-size",
                                  "capsule-unset-entries"])
def test_bad_kernel_table_is_reported_at_first_use(make_plugin, kind):
    t = _unique()
    p = make_plugin([t])
    p.TABLE = {"object": object(), "none": None, "string": "ember.kernel_table",
               "capsule-wrong-name": _capsule(b"not.a.kernel_table"),
               "capsule-wrong-abi": _capsule(b"ember.kernel_table", abi_version=999),
               "capsule-newer-minor": _capsule(b"ember.kernel_table", _device.ABI_VERSION,
                                              _device.ABI_MINOR + 1, _device.TABLE_SIZE + 8),
               "capsule-wrong-size": _capsule(b"ember.kernel_table", _device.ABI_VERSION,
                                             _device.ABI_MINOR, _device.TABLE_SIZE - 8),
               "capsule-unset-entries": _capsule(b"ember.kernel_table", _device.ABI_VERSION,
                                                 _device.ABI_MINOR, _device.TABLE_SIZE)}[kind]
    assert backends.register(p, dist="fake-dist") == [t]
    assert p.calls == []                              # nothing loaded at registration
    assert ember.device(t).type == t                  # nor to make a device object
    for _ in range(2):                                # not cached as loaded after a failure
        with pytest.raises(RuntimeError) as info:
            ember.empty(1, device=t)
        msg = str(info.value)
        assert p.__name__ in msg, msg
        if kind == "capsule-wrong-abi":
            assert "ABI 999" in msg and "fake-dist" in msg
        elif kind in ("capsule-newer-minor", "capsule-wrong-size"):
            # one line naming the plugin, its ABI version and the core's
            assert f"ABI {_device.ABI_VERSION}." in msg and "fake-dist" in msg, msg
            assert f"this ember has ABI {_device.ABI_VERSION}.{_device.ABI_MINOR}" in msg, msg
        elif kind == "capsule-unset-entries":
            # only the memory core is required: the rest may be NULL (the host fallback)
            assert "left kernel table entries unset" in msg and "alloc" in msg, msg
            assert "from_host" in msg and "where" not in msg, msg
        else:
            assert "ember.kernel_table" in msg and t in msg
        assert not _device._backend_for_type(t).loaded
    assert p.calls == [t, t]


def test_partial_registration_is_rolled_back(make_plugin):
    ok_type = _unique()
    p = make_plugin([ok_type, "NotLowercase"], with_runtime=False)
    with pytest.raises(ValueError):
        backends.register(p)
    _assert_not_registered(p, p.__name__)
    assert _device._backend_for_type(ok_type) is None
