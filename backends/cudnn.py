"""``ember.backends.cudnn``: PyTorch's cuDNN flags (plain settings a CUDA plugin reads;
they import and can be set with no plugin installed)."""
import contextlib

__all__ = ["allow_tf32", "benchmark", "deterministic", "enabled", "flags", "is_available",
           "version"]

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    """Whether a CUDA plugin with cuDNN is loaded and sees a GPU."""
    from ember.backends._runtimes import runtime
    cuda = runtime("cuda")
    return bool(cuda.is_available() and getattr(cuda, "has_cudnn", lambda: False)())


def version():
    """cuDNN's version, or None when it is not available."""
    if not is_available():
        return None
    from ember.backends._runtimes import runtime
    return runtime("cuda").cudnn_version()


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True):
    """Set the flags for a region, restoring them on exit."""
    g = globals()
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    saved = {n: g[n] for n in names}
    g.update(enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
             deterministic=deterministic, allow_tf32=allow_tf32)
    try:
        yield
    finally:
        g.update(saved)
