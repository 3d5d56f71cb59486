"""ember-cuda vs PyTorch on the same GPU, side by side in one run.  Not a test (CI has no
GPU): run on a GPU machine with a CUDA build of PyTorch,

    python benchmarks/bench_cuda.py [--quick] [--compile]

Prints, per case, ember's and PyTorch's figure and the ratio ember / PyTorch (time ratio:
< 1 means ember is faster).  Device timings are medians of CUDA-event-timed repetitions
after warm-up; host-bound cases (a + b on 10 elements, training steps) are wall time per
call with the stream synchronised at the end of each timed loop.  Goals (issue 13): a + b
<= 1.0x; add 10M (out=) and sum 10M >= 0.9x PyTorch's bandwidth (time <= 1.11x); softmax
(4096, 1024) <= 1.2x; matmul 4096^3 >= 0.95x; GPT step d=384 <= 1.3x, d=128 <= 1.0x;
cold start (first op in a fresh process, warm kernel cache) <= 1 s.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

import ember  # noqa: I001

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_training import gpt  # noqa: E402


def gpu_time(lib, fn, reps=50, warmup=5):
    """Median milliseconds of fn() on the GPU, each repetition between two events."""
    for _ in range(warmup):
        fn()
    lib.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = lib.cuda.Event(enable_timing=True), lib.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def wall_time(lib, fn, number, rounds=7):
    """Median milliseconds per call of fn(), `number` calls per round, synchronised."""
    for _ in range(3):
        fn()
    lib.cuda.synchronize()
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        lib.cuda.synchronize()
        out.append((time.perf_counter() - t) / number * 1e3)
    return statistics.median(out)


def both(make):
    """make(lib) -> (timer, fn) for each library, interleaved in one run."""
    results = []
    for lib in (ember, torch):
        timer, fn = make(lib)
        results.append(timer(lib, fn))
    return results


def elementwise_cases(quick):
    n = 10_000_000

    def tiny_add(lib):
        a = lib.rand(10, device="cuda")
        return (lambda L, f: wall_time(L, f, 2000)), lambda: a + a

    def add_out(lib):
        a, b, o = (lib.rand(n, device="cuda") for _ in range(3))
        return gpu_time, lambda: lib.add(a, b, out=o)

    def lerp_inplace(lib):                  # an optimizer's moving average: one pass
        a, b = (lib.rand(n, device="cuda") for _ in range(2))
        return gpu_time, lambda: a.lerp_(b, 0.1)

    def silu(lib):                          # one kernel (ABI 6.4's activation entry)
        a = lib.randn(16384, 1024, device="cuda")
        return gpu_time, lambda: lib.nn.functional.silu(a)

    def sum_big(lib):
        a = lib.rand(n, device="cuda")
        return gpu_time, lambda: a.sum()

    def softmax(lib):
        a = lib.randn(4096, 1024, device="cuda")
        return gpu_time, lambda: lib.softmax(a, -1)

    def layer_norm(lib):
        a = lib.randn(16384, 384, device="cuda")
        w, b = lib.ones(384, device="cuda"), lib.zeros(384, device="cuda")
        return gpu_time, lambda: lib.nn.functional.layer_norm(a, (384,), w, b)

    rows = [("a + b, 10 float32 (wall, us)", tiny_add, 1e3),
            ("add 10M float32, out= (us)", add_out, 1e3),
            ("lerp_ 10M float32, weight 0.1 (us)", lerp_inplace, 1e3),
            ("silu (16384, 1024) (us)", silu, 1e3),
            ("sum 10M float32 (us)", sum_big, 1e3),
            ("softmax (4096, 1024) (us)", softmax, 1e3),
            ("layer_norm (16384, 384) (us)", layer_norm, 1e3)]
    for name, make, scale in rows:
        e, t = both(make)
        yield name, e * scale, t * scale, e / t


def matmul_cases(quick):
    n = 2048 if quick else 4096
    for dt in ("float32", "bfloat16"):
        def make(lib, dt=dt):
            a = lib.randn(n, n, device="cuda").to(getattr(lib, dt))
            b = lib.randn(n, n, device="cuda").to(getattr(lib, dt))
            return (lambda L, f: gpu_time(L, f, reps=20)), lambda: a @ b
        e, t = both(make)
        flops = 2 * n ** 3
        yield (f"matmul {n}^3 {dt} (TFLOP/s)", flops / e / 1e9, flops / t / 1e9, t / e)


def gpt_cases(quick):
    configs = [("GPT step d=128 L=4 T=64 B=12 (ms)", dict(d=128, layers=4, heads=4, block=64),
                12),
               ("GPT step d=384 L=6 T=256 B=64 (ms)", dict(d=384, layers=6, heads=6, block=256),
                64)]
    for name, cfg, batch in configs[:1] if quick else configs:
        times = []
        for lib in (ember, torch):
            lib.manual_seed(0)
            model = gpt(lib, vocab=65, **cfg).to("cuda")
            opt = lib.optim.AdamW(model.parameters(), lr=3e-4)
            x = lib.randint(0, 65, (batch, cfg["block"]), device="cuda")
            y = lib.randint(0, 65, (batch, cfg["block"]), device="cuda")

            def step(lib=lib, model=model, opt=opt, x=x, y=y):
                opt.zero_grad()
                out = model(x)
                lib.nn.functional.cross_entropy(out.view(-1, out.shape[-1]), y.view(-1)).backward()
                opt.step()
            times.append(wall_time(lib, step, 5 if batch > 32 else 20, rounds=5))
        yield name, times[0], times[1], times[0] / times[1]


def profile_gpt():
    """Where one GPT step's time goes in ember: GPU time per kernel, and the Python-level
    functions that cost the most host time (cProfile)."""
    import cProfile
    import pstats
    for name, cfg, batch in [("d=384", dict(d=384, layers=6, heads=6, block=256), 64),
                             ("d=128", dict(d=128, layers=4, heads=4, block=64), 12)]:
        ember.manual_seed(0)
        model = gpt(ember, vocab=65, **cfg).to("cuda")
        opt = ember.optim.AdamW(model.parameters(), lr=3e-4)
        x = ember.randint(0, 65, (batch, cfg["block"]), device="cuda")

        def step():
            opt.zero_grad()
            out = model(x)
            ember.nn.functional.cross_entropy(out.view(-1, 65), x.view(-1)).backward()
            opt.step()
        for _ in range(3):
            step()
        with ember.cuda.profile_kernels() as prof:
            step()
        print(f"\n-- GPT {name}: GPU time per kernel, one step --\n{prof.table(25)}")
        ember.cuda.synchronize()
        t = time.perf_counter()
        step()
        host = time.perf_counter() - t
        ember.cuda.synchronize()
        print(f"host time of one step (no sync): {host * 1e3:.2f} ms")
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(5):
            step()
        ember.cuda.synchronize()
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(22)


def cold_start():
    code = ("import time; t = time.perf_counter(); import {lib}; "
            "x = {lib}.ones(10, device='cuda'); y = (x + 1).sum().item(); "
            "print(time.perf_counter() - t)")
    out = []
    for lib in ("ember", "torch"):
        runs = []
        for _ in range(3):
            # from a scratch folder: a repository's ember/ must not shadow the installed one
            r = subprocess.run([sys.executable, "-c", code.format(lib=lib)], capture_output=True,
                               text=True, check=True, cwd=tempfile.gettempdir())
            runs.append(float(r.stdout.strip().splitlines()[-1]))
        out.append(statistics.median(runs))
    return "cold start: import + first op (s)", out[0], out[1], out[0] / out[1]


# ---- ember.compile on the GPU ---------------------------------------------------------------

def compile_cases():
    """Fused CUDA kernels (ember.compile's default backend) against ember's eager kernels
    and PyTorch's eager ones: GPU time per call, medians."""
    n = 10_000_000
    cases = [
        ("sin(x) + cos(x) * 2, 10M float32", lambda L: (L.randn(n, device="cuda"),),
         lambda L, x: L.sin(x) + L.cos(x) * 2),
        ("softmax(x * 2, -1), (4096, 1024)", lambda L: (L.randn(4096, 1024, device="cuda"),),
         lambda L, x: L.softmax(x * 2, -1)),
        ("layer_norm(gelu(x)), (16384, 384)",
         lambda L: (L.randn(16384, 384, device="cuda"), L.ones(384, device="cuda"),
                    L.zeros(384, device="cuda")),
         lambda L, x, w, b: L.nn.functional.layer_norm(L.nn.functional.gelu(x), (384,), w, b)),
        ("(x * x).sum(), 10M float32", lambda L: (L.randn(n, device="cuda"),),
         lambda L, x: (x * x).sum()),
    ]
    for name, make, fn in cases:
        args = make(ember)
        eager = gpu_time(ember, lambda: fn(ember, *args))
        cf = ember.compile(lambda *a: fn(ember, *a))
        want = fn(ember, *args)
        got = cf(*args)
        assert (got - want).abs().max().item() <= 1e-3 * (want.abs().max().item() + 1), name
        compiled = gpu_time(ember, lambda: cf(*args))
        targs = make(torch)
        theirs = gpu_time(torch, lambda: fn(torch, *targs))
        yield name + " (us)", compiled * 1e3, eager * 1e3, theirs * 1e3
    # a training step of the small GPT, the model compiled (wall time per step)
    cfg, batch = dict(d=128, layers=4, heads=4, block=64), 12
    times = []
    for compiled in (False, True):
        ember.manual_seed(0)
        model = gpt(ember, vocab=65, **cfg).to("cuda")
        run = ember.compile(model) if compiled else model
        opt = ember.optim.AdamW(model.parameters(), lr=3e-4)
        x = ember.randint(0, 65, (batch, cfg["block"]), device="cuda")

        def step(run=run, opt=opt, x=x):
            opt.zero_grad()
            out = run(x)
            ember.nn.functional.cross_entropy(out.view(-1, 65), x.view(-1)).backward()
            opt.step()
        times.append(wall_time(ember, step, 20, rounds=5))
    yield "GPT step d=128 L=4 T=64 B=12 (ms)", times[1], times[0], float("nan")


FIRST_CALL = """
import time, ember
x = ember.randn(1_000_000, device="cuda")
ember.cuda.synchronize()
cf = ember.compile(lambda x: ember.sin(x) + ember.cos(x) * 2)
t = time.perf_counter()
y = cf(x)
ember.cuda.synchronize()
print(time.perf_counter() - t)
"""


def first_calls():
    """The first call of a compiled function in a fresh process: with an empty kernel cache
    (capture, code generation, nvcc) and with the cache filled."""
    out = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, EMBER_INDUCTOR_CACHE_DIR=cache)
        for _ in ("cold", "warm"):
            r = subprocess.run([sys.executable, "-c", FIRST_CALL], capture_output=True,
                               text=True, check=True, env=env, cwd=tempfile.gettempdir())
            out.append(float(r.stdout.strip().splitlines()[-1]))
    return out


def compile_main():
    print(f"{ember.cuda.get_device_name()}: ember.compile's CUDA kernels\n")
    cold, warm = first_calls()
    print(f"first call, sin(x) + cos(x) * 2 on 1M: cold cache {cold:.2f} s, "
          f"warm cache {warm:.2f} s\n")
    print(f"{'case':<44}{'compiled':>10}{'eager':>10}{'torch':>10}{'c/eager':>9}"
          f"{'c/torch':>9}")
    for name, c, e, t in compile_cases():
        print(f"{name:<44}{c:10.2f}{e:10.2f}{t:10.2f}{c / e:9.2f}{c / t:9.2f}", flush=True)
    print("\n(time per call: compiled = ember.compile, eager = ember op by op, torch = "
          "PyTorch eager; < 1 is faster)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller matmul, small GPT only")
    parser.add_argument("--profile", action="store_true",
                        help="only profile a GPT step (kernels and host time)")
    parser.add_argument("--compile", action="store_true",
                        help="only ember.compile's fused kernels against eager")
    args = parser.parse_args()
    if not (ember.cuda.is_available() and torch.cuda.is_available()):
        sys.exit(f"needs a GPU for both: ember ({ember.cuda.unavailable_reason() or 'ok'}), "
                 f"torch ({'ok' if torch.cuda.is_available() else 'no CUDA'})")
    torch.backends.cuda.matmul.allow_tf32 = False
    if args.profile:
        return profile_gpt()
    if args.compile:
        return compile_main()
    print(f"{ember.cuda.get_device_name()}, torch {torch.__version__}\n")
    print(f"{'case':<40}{'ember':>12}{'torch':>12}{'ember/torch':>14}")
    rows = [cold_start()]
    for group in (elementwise_cases, matmul_cases, gpt_cases):
        for row in group(args.quick):
            rows.append(row)
            name, e, t, r = row
            print(f"{name:<40}{e:12.2f}{t:12.2f}{r:14.2f}", flush=True)
    name, e, t, r = rows[0]
    print(f"{name:<40}{e:12.2f}{t:12.2f}{r:14.2f}")
    print("\n(matmul rows: TFLOP/s and the speed ratio ember/torch, > 1 is faster; "
          "other rows: time, < 1 is faster)")


if __name__ == "__main__":
    np.random.seed(0)
    main()
