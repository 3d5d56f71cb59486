"""Native kernel libraries built from generated source, cached on disk by source hash: the
part of the plugin contract a code generator (``ember_kernel_codegen``) builds with.

``build(source, command)`` compiles ``source`` with ``command`` (a list holding ``{src}`` and
``{out}``) unless a library for the same source, command and machine is already in the
cache folder, so a second process compiles nothing.  A build writes to a temporary file and
renames it into place: processes building the same library at once do not see half-written
files.  ``load(path)`` opens a library once per process.

The cache folder is ``$EMBER_INDUCTOR_CACHE_DIR``, else ``$XDG_CACHE_HOME/ember/inductor``
(``~/.cache/ember/inductor``).
"""
import ctypes
import hashlib
import os
import shutil
import subprocess
import threading

__all__ = ["CompileError", "build", "cache_dir", "load", "stats"]

stats = {"built": 0, "cached": 0}      # libraries compiled / found on disk, this process
_lock = threading.Lock()
_libs = {}
_machine = None


class CompileError(RuntimeError):
    """The system compiler rejected generated source (a bug in a code generator)."""


def cache_dir():
    d = os.environ.get("EMBER_INDUCTOR_CACHE_DIR")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                  ".cache")
        d = os.path.join(base, "ember", "inductor")
    return d


def _machine_key():
    """What makes a library built here unusable elsewhere: the CPU's features."""
    global _machine
    if _machine is None:
        flags = ""
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith(("flags", "Features", "model name")):
                        flags += line
                    if line.strip() == "":
                        break
        except OSError:
            pass
        import platform
        _machine = hashlib.sha256((platform.machine() + flags).encode()).hexdigest()[:16]
    return _machine


def _compiler_key(command):
    exe = shutil.which(command[0]) or command[0]
    try:
        return f"{exe}:{os.stat(exe).st_mtime_ns}"
    except OSError:
        return exe


def build(source, command, suffix=".c", output=".so"):
    """The path of the library compiled from ``source`` (building it if not cached);
    ``suffix``/``output``: the source's and the built file's extensions (".cu", ".cubin"
    for a GPU's code)."""
    key = hashlib.sha256("\0".join([source, " ".join(command), _machine_key(),
                                    _compiler_key(command)]).encode()).hexdigest()[:40]
    folder = os.path.join(cache_dir(), key[:2])
    path = os.path.join(folder, f"{key}{output}")
    if os.path.exists(path):
        stats["cached"] += 1
        return path
    stats["built"] += 1
    os.makedirs(folder, exist_ok=True)
    tag = f"{os.getpid()}.{threading.get_ident()}"
    src = os.path.join(folder, f"{key}.{tag}{suffix}")
    tmp = os.path.join(folder, f"{key}.{tag}{output}")
    with open(src, "w") as f:
        f.write(source)
    cmd = [c.format(src=src, out=tmp) for c in command]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise CompileError(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")
        os.replace(tmp, path)
        os.replace(src, os.path.join(folder, f"{key}{suffix}"))   # kept for reading
    finally:
        for leftover in (src, tmp):
            if os.path.exists(leftover):
                os.unlink(leftover)
    return path


def load(path):
    """The library at ``path`` (opened once per process)."""
    with _lock:
        lib = _libs.get(path)
        if lib is None:
            lib = _libs[path] = ctypes.CDLL(path)
        return lib
