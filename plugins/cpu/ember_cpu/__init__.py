"""ember-cpu: ember's CPU backend (OpenMP kernels, BLAS matmul)."""
import os as _os

__version__ = "0.1.0"

# OpenMP threads that wait by spinning starve whatever else wants the cores: OpenBLAS's
# workers, the next op's team, other processes.  Measured on a shared 2-core machine: a
# 64k-element add at 2 threads took 15.8 ms with libgomp's default spin (300k rounds) and
# 37 us with passive waiting.  But a passive team sleeps between every two regions, and on
# some virtual machines each wake-up costs 40-80 us: back-to-back kernels (a training
# step's products and the ops around them) paid it every time.  So the team spins a short
# while (10k rounds, 0.2-0.4 ms on that VM) and then sleeps: measured at 2 threads on a
# 2-core VM, the LSTM language model 3.65 -> 3.31 s and the GPT program 5.2 -> 4.2 s;
# with another process holding one core, no slower than passive.  Kernels still split
# only above the work that pays for waking a team that slept (_strided.parallel_cutoff),
# so small ops stay serial as before (with the cutoff a spinning team measures, 32k
# elements, the MLP program was 10% slower).  libgomp reads this once, when the first
# OpenMP module loads: this package is imported when ember registers the plugin, before
# any kernel module.  A user's own setting (OMP_WAIT_POLICY or GOMP_SPINCOUNT) wins.
if "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ:
    _os.environ["GOMP_SPINCOUNT"] = "10000"

# OpenBLAS's workers spin for 2^28 cycles (~0.1 s) after each threaded product before they
# sleep; on 2 cores that spin holds the core the next op's OpenMP team needs (a CNN's
# convolutions ran at one thread's speed after each threaded matmul).  2^20 cycles (~0.3
# ms) still covers back-to-back products: measured at 2 threads, the CNN program 3.15 ->
# 2.07 s, the GPT, LSTM and MLP programs unchanged (2^4 made the GPT program 28% slower).
# OpenBLAS reads it when it loads (ember's at the first matmul); a user's setting wins.
_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "20")
