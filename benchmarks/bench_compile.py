"""ember.compile vs eager, with PyTorch's torch.compile beside it (same machine, same run).

1. ``sin(x) + cos(x) * 2`` on 1M float32: the first call in a fresh process with an empty
   kernel cache (cold), the first call in a fresh process with the cache filled (warm),
   and the steady-state time per call against eager.
2. One training step of the examples' character GPT (forward, backward, AdamW): compiled
   against eager, per step.

Timings on a shared machine are noisy: each figure is a median, the GPT ratio the median of
compiled/eager ratios of neighbouring steps (alternating), so both see the same load.

python benchmarks/bench_compile.py [--steps 30] [--no-torch]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")

FIRST_CALL = r"""
import json, sys, time
t0 = time.perf_counter()
import {lib} as T
t1 = time.perf_counter()
def f(x):
    return T.sin(x) + T.cos(x) * 2
cf = T.compile(f)
x = T.randn(1_000_000)
t2 = time.perf_counter()
y = cf(x)
t3 = time.perf_counter()
assert float((y - f(x)).abs().max()) < 1e-5
print(json.dumps({{"import": t1 - t0, "first_call": t3 - t2}}))
"""


def _first_call(lib, cache):
    env = dict(os.environ)
    env["EMBER_INDUCTOR_CACHE_DIR"] = os.path.join(cache, "ember")
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache, "torch")
    out = subprocess.run([sys.executable, "-c", FIRST_CALL.format(lib=lib)], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median_time(fn, repeat, number):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t) / number)
    return statistics.median(times)


def bench_pointwise(lib, runs=3):
    """(cold first call, warm first call, steady compiled, steady eager) in seconds."""
    colds, warms = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as cache:
            colds.append(_first_call(lib, cache)["first_call"])
            warms.append(_first_call(lib, cache)["first_call"])
    T = __import__(lib)
    x = T.randn(1_000_000)

    def f(x):
        return T.sin(x) + T.cos(x) * 2
    cf = T.compile(f)
    cf(x)
    cf(x)
    compiled = _median_time(lambda: cf(x), 7, 10)
    eager = _median_time(lambda: f(x), 7, 10)
    return statistics.median(colds), statistics.median(warms), compiled, eager


def _gpt_module(lib):
    """The example's CharGPT, written against ``lib`` (its source imports ember as torch)."""
    src = open(os.path.join(EXAMPLES, "char_gpt.py")).read()
    if lib == "torch":
        src = src.replace("import ember.nn as nn", "import torch.nn as nn")
        src = src.replace("import ember.nn.functional as F", "import torch.nn.functional as F")
        src = src.replace("import ember as torch", "import torch")
    ns = {"__name__": f"char_gpt_{lib}"}
    exec(compile(src, f"char_gpt[{lib}]", "exec"), ns)
    return ns["CharGPT"]


def bench_gpt(lib, steps, vocab=65, block=32, batch=16):
    """(first compiled step, compiled step, eager step in seconds, median of the pairwise
    compiled/eager ratios)."""
    T = __import__(lib)
    CharGPT = _gpt_module(lib)
    T.manual_seed(0)
    models = [CharGPT(vocab, block, d_model=64, n_layers=2, n_heads=4, dropout=0.0)
              for _ in range(2)]
    models[1].load_state_dict(models[0].state_dict())
    opts = [T.optim.AdamW(m.parameters(), lr=3e-3) for m in models]
    compiled = T.compile(models[0])
    x = T.randint(0, vocab, (batch, block))
    y = T.randint(0, vocab, (batch, block))

    def step(model, opt):
        _, loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    t = time.perf_counter()
    step(compiled, opts[0])
    first = time.perf_counter() - t
    for _ in range(3):
        step(compiled, opts[0])
        step(models[1], opts[1])
    # alternate single steps: neighbours see the same load, so the median of the pairwise
    # ratios is steadier than a ratio of medians on a shared machine
    c, e = [], []
    for i in range(steps):
        pair = [(compiled, opts[0], c), (models[1], opts[1], e)]
        for model, opt, out in (pair if i % 2 == 0 else pair[::-1]):
            t = time.perf_counter()
            step(model, opt)
            out.append(time.perf_counter() - t)
    ratio = statistics.median(a / b for a, b in zip(c, e))
    return first, statistics.median(c), statistics.median(e), ratio


def _measure(lib, steps):
    """Every figure for ``lib``, measured in this process."""
    cold, warm, comp, eager = bench_pointwise(lib)
    return [cold, warm, comp, eager, *bench_gpt(lib, steps)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--lib", help=argparse.SUPPRESS)    # one library, in a child process
    args = parser.parse_args()
    if args.lib:
        print(json.dumps(_measure(args.lib, args.steps)))
        return
    import importlib.util
    libs = ["ember"]
    if not args.no_torch and importlib.util.find_spec("torch") is not None:
        libs.append("torch")
    rows = {}
    for lib in libs:        # each library in its own process: no thread pools shared
        out = subprocess.run([sys.executable, __file__, "--lib", lib, "--steps",
                              str(args.steps)], capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(out.stderr[-3000:])
        rows[lib] = json.loads(out.stdout.strip().splitlines()[-1])
    print("\nsin(x) + cos(x) * 2 on 1M float32; GPT: CharGPT(d_model=64, 2 layers), batch 16 x "
          "32 tokens (the example's sizes), AdamW")
    print(f"{'':34}" + "".join(f"{lib:>14}" for lib in libs))
    labels = ["cold first call (s)", "warm-cache first call (s)", "compiled call (ms)",
              "eager call (ms)", "speed-up over eager", "GPT first compiled step (s)",
              "GPT compiled step (ms)", "GPT eager step (ms)", "GPT compiled / eager (paired)"]
    for i, label in enumerate(labels):
        cells = []
        for lib in libs:
            cold, warm, comp, eager, first, sc, se, ratio = rows[lib]
            v = [cold, warm, comp * 1e3, eager * 1e3, eager / comp, first, sc * 1e3,
                 se * 1e3, ratio][i]
            cells.append(f"{v:14.2f}" if i not in (4, 8) else f"{v:13.2f}x")
        print(f"{label:34}" + "".join(cells))


if __name__ == "__main__":
    main()
