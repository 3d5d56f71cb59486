"""``ember.backends.cpu`` (``torch.backends.cpu``): the CPU's vector capability, as PyTorch
names it."""
import platform

__all__ = ["get_cpu_capability"]


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def get_cpu_capability():
    """The vector instruction set PyTorch would dispatch its CPU kernels to on this machine:
    "AVX512" or "AVX2" (x86-64, each with FMA), else "DEFAULT"."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return "DEFAULT"
    flags = _cpu_flags()
    if {"avx512vl", "avx512bw", "avx512dq", "fma"} <= flags:
        return "AVX512"
    if {"avx2", "fma"} <= flags:
        return "AVX2"
    return "DEFAULT"
