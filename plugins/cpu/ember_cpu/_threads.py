"""Thread control: the OpenMP team of the kernels and the BLAS pools of NumPy and SciPy.

NumPy and SciPy each bundle their own OpenBLAS with its own thread pool; both are capped
with threadpoolctl (imported on use).  SciPy's OpenBLAS loads only at the first matmul, so
a limit set earlier is applied again then (``blas_loaded``).
"""

_requested = None


def set_num_threads(num_threads: int) -> None:
    global _requested
    from ember_cpu import _kernels

    n = int(num_threads)
    _kernels._set_num_threads(n)
    _requested = n
    _limit_blas(n)


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
