"""ember-cuda where it cannot run (CI, machines without PyCUDA or a GPU): the device type is
registered, ``is_available()`` answers False and says why, and using the device raises a
RuntimeError naming the reason and the fix.  (tests/cuda holds the GPU suite.)"""
import os
import subprocess
import sys

import pytest

import ember

pytest.importorskip("ember_cuda", reason="ember-cuda is not installed")

unavailable = pytest.mark.skipif(ember.cuda.is_available(),
                                 reason="a GPU is available: tests/cuda covers this machine")


def run(code, **env):
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, **env))
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_registration_is_cheap():
    # registering the plugin loads neither PyCUDA, nor the driver, nor the extension: only
    # the hooks and the (pure Python) runtime module
    out = run("import sys, ember; "
              "print(sorted(m for m in sys.modules if m.startswith(('pycuda', 'ember_cuda'))))")
    assert out.strip() == "['ember_cuda', 'ember_cuda.plugin', 'ember_cuda.runtime']", out


@unavailable
def test_unavailable_device_says_why():
    assert ember.cuda.is_available() is False
    assert ember.cuda.device_count() == 0
    why = ember.cuda.unavailable_reason()
    assert why and ("PyCUDA" in why or "driver" in why or "GPU" in why), why
    assert ember.device("cuda:0").type == "cuda"          # the type exists
    for make in (lambda: ember.zeros(2, device="cuda"), lambda: ember.ones(3).cuda(),
                 lambda: ember.ones(3).to("cuda:0")):
        with pytest.raises(RuntimeError) as info:
            make()
        assert "cuda" in str(info.value) and why in str(info.value)


@unavailable
def test_unavailable_runtime_answers_like_pytorch():
    assert ember.cuda.memory_allocated() == 0 and ember.cuda.max_memory_allocated() == 0
    assert ember.cuda.memory_reserved() == 0
    ember.cuda.manual_seed(0)                              # ignored, as PyTorch
    ember.cuda.empty_cache()
    assert ember.cuda.is_bf16_supported() is False
    with pytest.raises(RuntimeError, match="CUDA is not available|ember.cuda.synchronize"):
        ember.cuda.synchronize()
    assert ember.cuda.OutOfMemoryError is ember.OutOfMemoryError
    assert issubclass(ember.OutOfMemoryError, RuntimeError)


@unavailable
def test_backends_listing_names_the_reason():
    out = run("import runpy; runpy.run_module('ember.backends', run_name='__main__')")
    line = next(ln for ln in out.splitlines() if "device 'cuda'" in ln)
    assert "unavailable" in line and ember.cuda.unavailable_reason() in line, line
