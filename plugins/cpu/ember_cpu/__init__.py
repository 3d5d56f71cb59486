"""ember-cpu: ember's CPU backend (OpenMP kernels, BLAS matmul)."""
import os as _os

__version__ = "0.1.0"

# OpenMP threads that wait by spinning starve whatever else wants the cores: OpenBLAS's
# workers, the next op's team, other processes.  Measured on a shared 2-core machine: a
# 64k-element add at 2 threads took 15.8 ms spinning (libgomp's default) and 37 us with
# passive waiting; the cost of passive waiting on an idle machine is one futex wake per
# parallel region (a few us, and regions only start above 32k elements).  libgomp reads
# this once, when the first OpenMP module loads: this package is imported when ember
# registers the plugin, before any kernel module.  A user's own setting wins.
if "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ:
    _os.environ["OMP_WAIT_POLICY"] = "PASSIVE"

# OpenBLAS's workers spin for 2^28 cycles (~0.1 s) after each threaded product before they
# sleep; on 2 cores that spin holds the core the next op's OpenMP team needs (a CNN's
# convolutions ran at one thread's speed after each threaded matmul).  2^20 cycles (~0.3
# ms) still covers back-to-back products: measured at 2 threads, the CNN program 3.15 ->
# 2.07 s, the GPT, LSTM and MLP programs unchanged (2^4 made the GPT program 28% slower).
# OpenBLAS reads it when it loads (ember's at the first matmul); a user's setting wins.
_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "20")
