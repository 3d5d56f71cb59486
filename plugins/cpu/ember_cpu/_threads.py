"""Thread control: the OpenMP team of the kernels and the BLAS pools of NumPy and SciPy.

NumPy and SciPy each bundle their own OpenBLAS with its own thread pool; both are capped
with threadpoolctl (imported on use).  SciPy's OpenBLAS loads only at the first matmul, so
a limit set earlier is applied again then (``blas_loaded``).
"""

import sys

_requested = None


def set_num_threads(num_threads: int) -> None:
    global _requested
    from ember_cpu import _kernels

    n = int(num_threads)
    _kernels._set_num_threads(n)
    _requested = n
    _limit_blas(n)
    codegen = sys.modules.get("ember_cpu.codegen")     # compiled kernels, if any were made
    if codegen is not None:
        codegen.sync_cutoff()


def get_num_threads() -> int:
    from ember_cpu import _kernels

    return _kernels._get_num_threads()


def blas_loaded() -> None:
    """Called by the kernels once SciPy's BLAS is loaded."""
    if _requested is not None:
        _limit_blas(_requested)


def _limit_blas(n: int) -> None:
    from threadpoolctl import threadpool_limits

    # called as a function, not a context manager: the limit stays
    threadpool_limits(limits=n, user_api="blas")


def openblas_thread_functions() -> list:
    """(set_num_threads, get_num_threads) C function addresses of every loaded OpenBLAS with
    its own (pthreads) pool, which the conv kernels hold to one thread inside their parallel
    regions; an OpenMP-threaded BLAS already runs serially there and is left out."""
    import ctypes

    from threadpoolctl import ThreadpoolController

    found = []
    for lib in ThreadpoolController().select(internal_api="openblas").lib_controllers:
        if getattr(lib, "threading_layer", "") == "openmp":
            continue
        setter = lib._get_symbol("openblas_set_num_threads")
        getter = lib._get_symbol("openblas_get_num_threads")
        if setter is not None and getter is not None:
            found.append((ctypes.cast(setter, ctypes.c_void_p).value,
                          ctypes.cast(getter, ctypes.c_void_p).value))
    return found
