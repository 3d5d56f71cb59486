"""Foundation benchmarks: ember vs NumPy vs PyTorch, side by side in one run, at 1 and 2
threads.  Prints per-call times and the ratios ember/NumPy and ember/PyTorch (< 1 means
ember is faster).  Not a test: run `make bench` (or python benchmarks/bench_foundation.py).
"""
import os
import statistics
import subprocess
import sys
import timeit

import numpy as np
import torch
from threadpoolctl import threadpool_limits

import ember


def per_call(fns, number, repeat=9):
    """Median seconds per call of each of `fns`, timed in interleaved rounds (one run of
    `number` calls each per round) so that load changes on a shared machine hit all alike."""
    for fn in fns:
        fn()
    samples = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out in zip(fns, samples):
            out.append(timeit.timeit(fn, number=number) / number)
    return [statistics.median(s) for s in samples]


def import_time(stmt, runs=7):
    def wall(code):
        out = []
        for _ in range(runs):
            t = timeit.default_timer()
            subprocess.run([sys.executable, "-c", code], check=True)
            out.append(timeit.default_timer() - t)
        return statistics.median(out)
    return wall(stmt) - wall("pass")


def fmt(s):
    return f"{s * 1e6:10.2f} us" if s < 1e-3 else f"{s * 1e3:10.2f} ms"


def cases():
    small_e, small_n, small_t = ember.rand(10), np.random.rand(10).astype(np.float32), torch.rand(10)
    m4_e, m4_n, m4_t = ember.rand(4, 4), np.random.rand(4, 4).astype(np.float32), torch.rand(4, 4)
    big_n = np.random.rand(10_000_000).astype(np.float32)
    big_e, big_t = ember.tensor(big_n), torch.from_numpy(big_n.copy())
    big2_e, big2_n, big2_t = ember.tensor(big_n), big_n.copy(), torch.from_numpy(big_n.copy())
    out_e, out_n, out_t = ember.empty(10_000_000), np.empty_like(big_n), torch.empty(10_000_000)
    mm_e = ember.rand(1024, 1024)
    mm_n = np.random.rand(1024, 1024).astype(np.float32)
    mm_t = torch.rand(1024, 1024)
    return [
        ("a + b, 10 float32", 20000, lambda: small_e + small_e, lambda: small_n + small_n,
         lambda: small_t + small_t),
        ("relu, 10 float32", 20000, lambda: ember.relu(small_e), lambda: np.maximum(small_n, 0),
         lambda: torch.relu(small_t)),
        ("matmul 4x4 float32", 20000, lambda: m4_e @ m4_e, lambda: m4_n @ m4_n, lambda: m4_t @ m4_t),
        ("add 10M float32 (out=)", 10, lambda: ember.add(big_e, big2_e, out=out_e),
         lambda: np.add(big_n, big2_n, out=out_n), lambda: torch.add(big_t, big2_t, out=out_t)),
        *elementwise_cases("10M", big_e, big2_e, big_n, big2_n, big_t, big2_t),
        *elementwise_cases("[4096,1024]", *(x.reshape(4096, 1024) for x in (
            big_e[:4096 * 1024], big2_e[:4096 * 1024], big_n[:4096 * 1024],
            big2_n[:4096 * 1024], big_t[:4096 * 1024], big2_t[:4096 * 1024]))),
        ("matmul 1024^3 float32", 3, lambda: mm_e @ mm_e, lambda: mm_n @ mm_n,
         lambda: mm_t @ mm_t),
        *softmax_cases(),
        *index_cases(),
        sort_case(),
    ]


def elementwise_cases(label, a_e, b_e, a_n, b_n, a_t, b_t):
    """add, mul, exp, sum of float32 operands (goal: ember <= 1.1x torch)."""
    number = 10 if a_e.numel() > 5_000_000 else 20
    return [
        (f"add {label}", number, lambda: a_e + b_e, lambda: a_n + b_n, lambda: a_t + b_t),
        (f"mul {label}", number, lambda: a_e * b_e, lambda: a_n * b_n, lambda: a_t * b_t),
        (f"exp {label}", number, lambda: ember.exp(a_e), lambda: np.exp(a_n),
         lambda: torch.exp(a_t)),
        (f"sum {label}", number, lambda: a_e.sum(), lambda: a_n.sum(), lambda: a_t.sum()),
    ]


def softmax_cases():
    """softmax along the last dim (goal: ember <= 1.2x torch): [4096,1024] rows sit in L1,
    [10,1M] rows (10M elements) do not; fwd+bwd is softmax's backward through autograd."""
    g = np.random.default_rng(0)
    sm_n = g.standard_normal((4096, 1024)).astype(np.float32)
    long_n = g.standard_normal((10, 1_000_000)).astype(np.float32)
    grad_n = g.standard_normal((4096, 1024)).astype(np.float32)
    sm_e, sm_t = ember.tensor(sm_n), torch.from_numpy(sm_n.copy())
    long_e, long_t = ember.tensor(long_n), torch.from_numpy(long_n.copy())
    x_e, x_t = ember.tensor(sm_n).requires_grad_(), torch.from_numpy(sm_n.copy()).requires_grad_()
    grad_e, grad_t = ember.tensor(grad_n), torch.from_numpy(grad_n)

    def fwd_bwd(lib, x, grad):
        def step():
            lib.softmax(x, -1).backward(grad)
            x.grad = None
        return step

    return [
        ("softmax [4096,1024] dim -1", 5, lambda: ember.softmax(sm_e, -1),
         lambda: _np_softmax(sm_n), lambda: torch.softmax(sm_t, -1)),
        ("log_softmax [4096,1024]", 5, lambda: ember.log_softmax(sm_e, -1),
         lambda: _np_log_softmax(sm_n), lambda: torch.log_softmax(sm_t, -1)),
        ("softmax [10,1M] dim -1", 5, lambda: ember.softmax(long_e, -1),
         lambda: _np_softmax(long_n), lambda: torch.softmax(long_t, -1)),
        ("softmax fwd+bwd [4096,1024]", 5, fwd_bwd(ember, x_e, grad_e), None,
         fwd_bwd(torch, x_t, grad_t)),
    ]


def index_cases():
    """gather / scatter_add on [4096,1024] (bench_index.py's table)."""
    from bench_index import cases  # it imports compare from here: import on use

    return cases()


def sort_case():
    """sort of 1M float32 (values and indices; NumPy's np.sort gives values only)."""
    s_n = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)
    s_e, s_t = ember.tensor(s_n), torch.from_numpy(s_n.copy())
    return ("sort 1M float32", 3, lambda: ember.sort(s_e), lambda: np.sort(s_n),
            lambda: torch.sort(s_t))


def _np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    e /= e.sum(-1, keepdims=True)
    return e


def _np_log_softmax(x):
    s = x - x.max(-1, keepdims=True)
    return s - np.log(np.exp(s).sum(-1, keepdims=True))


def main():
    print(f"ember {ember.__version__}, NumPy {np.__version__}, PyTorch {torch.__version__}; "
          f"{os.cpu_count()} cores; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}")
    e_imp = import_time("import ember")
    n_imp = import_time("import numpy")
    t_imp = import_time("import torch")
    print("\nimport (median wall time of fresh processes minus `python -c pass`):")
    print(f"  ember {e_imp * 1e3:.0f} ms   numpy {n_imp * 1e3:.0f} ms   torch {t_imp * 1e3:.0f} ms"
          f"   ember/torch {e_imp / t_imp:.2f}   (goal: ember <= 150 ms)")
    compare(cases())


def compare(table, thread_counts=(1, 2)):
    """Time each (name, number, ember_fn, numpy_fn, torch_fn) of `table` at each thread
    count and print the times and the ratios ember/NumPy and ember/PyTorch."""
    for threads in thread_counts:
        ember.set_num_threads(threads)
        torch.set_num_threads(threads)
        with threadpool_limits(threads):
            print(f"\n{threads} thread(s)  {'op':28s}{'ember':>13s}{'numpy':>13s}{'torch':>13s}"
                  f"{'e/np':>8s}{'e/torch':>9s}")
            for name, number, fe, fn, ft in table:
                if fn is None:          # no NumPy counterpart (a training step)
                    te, tt = per_call((fe, ft), number)
                    print(f"{'':12s}{name:28s}{fmt(te)}{'-':>13s}{fmt(tt)}{'-':>8s}"
                          f"{te / tt:9.2f}")
                    continue
                te, tn, tt = per_call((fe, fn, ft), number)
                print(f"{'':12s}{name:28s}{fmt(te)}{fmt(tn)}{fmt(tt)}{te / tn:8.2f}{te / tt:9.2f}")

if __name__ == "__main__":
    main()
