"""Kernel modules: CUDA C rendered per family and dtype, compiled once, cached on disk.

A module is named ``"<family>.<dtype>"`` (``"ew.float32"``, ``"copy.int64"``): the
family's template (``kernels/<family>.cu``) after ``kernels/common.cuh``, the shared
headers it needs (``HEADERS``) and a line that fixes the dtype.  nvcc compiles it to a cubin
for the device's architecture (no GPU is needed for that: ``python -m ember_cuda._modules
--arch sm_90`` fills a cache anywhere); the cubin is kept under ``cache_dir()`` keyed by the
source, the architecture, the compiler options and nvcc's version, so a warm start compiles
nothing.  The C layer asks for functions through ``function()`` (set as its loader by
``_cuda``), the first time each call site runs on a device.
"""
import hashlib
import os
import shutil
import subprocess
import threading

_HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(_HERE, "kernels")

DTYPES = {"uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5,
          "float32": 6, "float64": 7, "bool": 11, "bfloat16": 15}
FLOATING = ("float16", "bfloat16", "float32", "float64")
# the dtypes each family is rendered for (the host side never asks for others)
FAMILIES = {
    "ew": tuple(DTYPES),
    "copy": tuple(DTYPES),
    "reduce": tuple(DTYPES),
    "scan": tuple(DTYPES),
    "index": tuple(DTYPES),
    "search": tuple(d for d in DTYPES if d != "bool"),
    "random": FLOATING,
    "softmax": FLOATING,
    "rows": ("float32", "float64"),
    "conv": ("float32", "float64"),
    "pool": ("float32", "float64"),
    "imatmul": ("uint8", "int8", "int16", "int32", "int64"),
    "optim": ("float32", "float64"),
    "ternary": FLOATING,
    "activation": ("float32", "float64"),
}
# shared headers a family's template needs, rendered between common.cuh and it
HEADERS = {"ew": ("vec.cuh", "scalar_ops.cuh"), "reduce": ("accum.cuh",),
           "scan": ("accum.cuh",), "softmax": ("rowtile.cuh",), "rows": ("rowtile.cuh",),
           "ternary": ("vec.cuh",), "activation": ("vec.cuh",)}
OPTIONS = ["-std=c++17"]

_lock = threading.RLock()
_modules = {}          # (device, name) -> CUmodule handle (int)
_functions = {}        # (device, name, function) -> CUfunction handle (int)
_nvcc_version = None


def cache_dir():
    """Where compiled modules live: $EMBER_CUDA_CACHE, else ~/.cache/ember/cuda."""
    env = os.environ.get("EMBER_CUDA_CACHE")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ember", "cuda")


def read(name):
    """The text of kernel file ``name`` (a template or header of ``kernels/``)."""
    with open(os.path.join(KERNELS, name)) as f:
        return f.read()


def render(name):
    """The CUDA C source of module ``name`` ("family.dtype")."""
    family, _, dtype = name.partition(".")
    if family not in FAMILIES or dtype not in FAMILIES[family]:
        raise ValueError(f"ember-cuda has no kernel module {name!r}")
    headers = ("common.cuh",) + HEADERS.get(family, ())
    return (f"// ember-cuda module {name}\n#define EC_DTYPE {DTYPES[dtype]}\n"
            + "".join(read(h) + "\n" for h in headers) + read(f"{family}.cu"))


def all_modules():
    """Every module name the plugin may ask for."""
    return [f"{f}.{d}" for f, dts in FAMILIES.items() for d in dts]


def nvcc_path():
    """nvcc: $EMBER_NVCC, the PATH, then $CUDA_HOME/bin and /usr/local/cuda/bin."""
    for cand in (os.environ.get("EMBER_NVCC"), shutil.which("nvcc"),
                 os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc"),
                 "/usr/local/cuda/bin/nvcc"):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def nvcc_version(nvcc):
    """nvcc's version line, remembered on disk per binary (running nvcc costs ~50 ms)."""
    global _nvcc_version
    if _nvcc_version is not None:
        return _nvcc_version
    st = os.stat(nvcc)
    tag = hashlib.sha256(f"{os.path.realpath(nvcc)}:{st.st_size}:{st.st_mtime_ns}"
                         .encode()).hexdigest()[:16]
    path = os.path.join(cache_dir(), f"nvcc-{tag}.txt")
    try:
        with open(path) as f:
            _nvcc_version = f.read().strip()
            return _nvcc_version
    except OSError:
        pass
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    lines = [ln for ln in out.splitlines() if "release" in ln]
    _nvcc_version = lines[-1].strip() if lines else out.strip()
    _write_atomic(path, _nvcc_version.encode())
    return _nvcc_version


def _write_atomic(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def cache_key(source, arch, nvcc):
    h = hashlib.sha256()
    for part in (source, arch, " ".join(OPTIONS), nvcc_version(nvcc)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def compile_module(name, arch):
    """The cubin of module ``name`` for ``arch`` ("sm_90"), from the cache or nvcc."""
    nvcc = nvcc_path()
    if nvcc is None:
        raise RuntimeError("ember-cuda compiles its kernels with nvcc, which was not found: "
                           "put the CUDA toolkit's bin folder on PATH or set EMBER_NVCC")
    source = render(name)
    path = os.path.join(cache_dir(), f"{name}-{arch}-{cache_key(source, arch, nvcc)[:32]}.cubin")
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        pass
    cubin = nvcc_compile(source, arch, nvcc)
    _write_atomic(path, cubin)
    return cubin


class CompileError(RuntimeError):
    """nvcc refused a module; the message holds its output."""


def nvcc_compile(source, arch, nvcc):
    """nvcc --cubin of one source (no GPU needed: the cache can be filled anywhere)."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="ember-cuda-") as tmp:
        src, out = os.path.join(tmp, "kernel.cu"), os.path.join(tmp, "kernel.cubin")
        with open(src, "w") as f:
            f.write(source)
        r = subprocess.run([nvcc, "--cubin", *OPTIONS, "-arch", arch, "-o", out, src],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise CompileError(f"nvcc failed on a kernel module:\n{r.stdout}{r.stderr}")
        with open(out, "rb") as f:
            return f.read()


def function(device, module, name):
    """The CUfunction ``name`` of ``module`` on ``device`` (an int): the C layer's loader."""
    key = (device, module, name)
    f = _functions.get(key)
    if f is not None:
        return f
    from ember_cuda import _cuda
    with _lock:
        handle = _modules.get((device, module))
        if handle is None:
            arch = "sm_%d%d" % _cuda.capability(device)
            handle = _cuda.load_module(device, compile_module(module, arch))
            _modules[(device, module)] = handle
        f = _cuda.get_function(device, handle, name)
        _functions[key] = f
        return f


def compile_all(arch, names=None, jobs=2):
    """Compile every module (or ``names``) for ``arch`` into the cache; returns
    {name: error message} for the ones nvcc refused."""
    from concurrent.futures import ThreadPoolExecutor

    def one(name):
        try:
            compile_module(name, arch)
            return name, None
        except Exception as e:        # nvcc's message, for the report
            return name, f"{type(e).__name__}: {getattr(e, 'stderr', None) or e}"

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return {n: err for n, err in pool.map(one, names or all_modules()) if err}


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(
        description="Compile ember-cuda's kernel modules into the disk cache "
                    "(e.g. before shipping a cache to a GPU machine).")
    parser.add_argument("--arch", default="sm_90", help="GPU architecture, e.g. sm_90")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("names", nargs="*", help="modules (default: all)")
    args = parser.parse_args()
    failed = compile_all(args.arch, args.names or None, args.jobs)
    for name, err in failed.items():
        print(f"{name}: {err}")
    print(f"{len(args.names or all_modules()) - len(failed)} compiled into {cache_dir()}, "
          f"{len(failed)} failed")
    raise SystemExit(1 if failed else 0)
