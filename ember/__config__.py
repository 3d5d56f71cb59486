"""``ember.__config__``: how this ember was built and what it runs on."""
import platform
import sys

__all__ = ["show", "parallel_info"]


def _plugins():
    from ember import backends
    return backends.plugins()


def parallel_info():
    """Threads and parallel back ends: the CPU plugin's OpenMP team and the BLAS pools."""
    from ember import get_num_threads
    lines = [f"ember.get_num_threads(): {get_num_threads()}"]
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "\n".join(lines + ["threadpoolctl not installed: thread pools not listed"])
    for pool in threadpool_info():
        lines.append(f"{pool.get('user_api')}: {pool.get('internal_api')} "
                     f"{pool.get('version') or ''} num_threads={pool.get('num_threads')} "
                     f"({pool.get('filepath')})")
    return "\n".join(lines)


def show():
    """A multi-line description of the build: versions, compiler flags of the core and of
    the CPU plugin, OpenMP, BLAS and the installed device plugins."""
    import ember
    from ember.core import _tensor
    lines = [f"ember {ember.__version__} (core {_tensor.__file__})",
             f"  Python {sys.version.split()[0]} on {platform.system()} {platform.machine()}",
             "  core: Cython extension modules, built without OpenMP (plugins own threads)",
             f"  kernel ABI include: {ember.get_include()}"]
    for p in _plugins():
        devices = ", ".join(d["type"] for d in p["devices"]) or "none"
        lines.append(f"  plugin {p['name']} ({p['dist']} {p['version']}): devices {devices}"
                     + (f" (error: {p['error']})" if p["error"] else ""))
    from ember import backends
    lines += [f"  {name}: {line}" for name, line in backends.build_info()]
    lines.append("  " + parallel_info().replace("\n", "\n  "))
    return "\n".join(lines)
