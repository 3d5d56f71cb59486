"""ember-cpu's kernels called directly (no dispatcher) against NumPy, at 1 and 2 threads:
what the plugin itself costs.  Not a test; numbers are noisy on shared machines, compare
the ratios of one run.

    .venv/bin/python benchmarks/bench_cpu_kernels.py
"""
import timeit

import numpy as np
from ember_cpu import _kernels as K

ADD, SUM = 0, 0


def best(fn, number=1, repeat=15):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main():
    rng = np.random.default_rng(0)
    n = 10_000_000
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    c = np.empty_like(a)
    s = np.empty((), np.float32)
    m = a.reshape(-1, 1000)
    cols = np.empty(1000, np.float32)
    rows = np.empty(m.shape[0], np.float32)
    t_np_add = best(lambda: np.add(a, b, out=c))
    t_np_sum = best(lambda: a.sum())
    t_np_sum0 = best(lambda: m.sum(0))
    t_np_sum1 = best(lambda: m.sum(1))
    print(f"numpy   add 10M f32 {t_np_add * 1e3:7.2f} ms   sum {t_np_sum * 1e3:6.2f} ms   "
          f"[10000,1000] sum(dim=0) {t_np_sum0 * 1e3:6.2f} ms   "
          f"sum(dim=1) {t_np_sum1 * 1e3:6.2f} ms")
    for threads in (1, 2):
        K._set_num_threads(threads)
        t_add = best(lambda: K._test_binary(ADD, c, a, b))
        t_sum = best(lambda: K._test_reduce(SUM, s, a, 1))
        t_sum0 = best(lambda: K._test_reduce(SUM, cols, m.T, 1))
        t_sum1 = best(lambda: K._test_reduce(SUM, rows, m, 1))
        print(f"ember {threads}T add 10M f32 {t_add * 1e3:7.2f} ms ({t_add / t_np_add:4.2f}x)  "
              f"sum {t_sum * 1e3:6.2f} ms ({t_sum / t_np_sum:4.2f}x)  "
              f"sum(dim=0) {t_sum0 * 1e3:6.2f} ms ({t_sum0 / t_np_sum0:4.2f}x)  "
              f"sum(dim=1) {t_sum1 * 1e3:6.2f} ms ({t_sum1 / t_np_sum1:4.2f}x)")
    a10, b10, c10 = a[:10].copy(), b[:10].copy(), c[:10].copy()
    t_raw = K._bench_binary(ADD, c10, a10, b10, 2_000_000)
    t_twin = best(lambda: K._test_binary(ADD, c10, a10, b10), number=200_000, repeat=5)
    t_np = best(lambda: np.add(a10, b10, out=c10), number=200_000, repeat=5)
    print(f"10-element add: table call {t_raw * 1e9:.0f} ns, test twin {t_twin * 1e9:.0f} ns, "
          f"numpy.add(out=) {t_np * 1e9:.0f} ns")


if __name__ == "__main__":
    main()
