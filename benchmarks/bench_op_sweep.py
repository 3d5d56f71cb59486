"""A sweep of everyday ops outside the big kernels (random draws, GELU, scans, comparisons,
masks, flips, top-k, float math functions, rounding, fmod, max reductions, attention's
batched products, clamp, lerp/addcmul/addcdiv and the activations of nn.functional)
through the public API: ember against NumPy and PyTorch at 1 and 2
threads, interleaved, medians of rounds; ratios < 1 mean ember takes less time.  Not a
test:

    .venv/bin/python benchmarks/bench_op_sweep.py [--rounds 5] [--match log,atan2]
"""
import argparse
import statistics
import time

import numpy as np
import torch

import ember

RNG = np.random.default_rng(0)
X = RNG.standard_normal(1_000_000).astype(np.float32)
M = X.reshape(1000, 1000)
I64 = RNG.integers(0, 100, 1_000_000)
COL, ROW = np.arange(1000), np.arange(1000).reshape(1000, 1)
POS = np.abs(X) + np.float32(0.1)
Y = RNG.standard_normal(1_000_000).astype(np.float32)
BIAS_GRAD = RNG.standard_normal((700, 1974)).astype(np.float32)       # an LSTM decoder's
QK = RNG.standard_normal((64, 64, 32)).astype(np.float32)             # attention heads


def _cases():
    """name -> (ember/torch call given the library and its inputs, NumPy call or None)."""
    def gelu_fb(m, x):
        x = x.detach().requires_grad_()
        m.nn.functional.gelu(x).backward(m.ones_like(x))
    cases = {
        "randn 1M float32": (lambda m, d: m.randn(1_000_000),
                             lambda d: RNG.standard_normal(1_000_000, dtype=np.float32)),
        "rand 1M float32": (lambda m, d: m.rand(1_000_000),
                            lambda d: RNG.random(1_000_000, dtype=np.float32)),
        "randperm 100k": (lambda m, d: m.randperm(100_000), lambda d: RNG.permutation(100_000)),
        "randint 1M": (lambda m, d: m.randint(0, 100, (1_000_000,)),
                       lambda d: RNG.integers(0, 100, 1_000_000)),
        "gelu 1M": (lambda m, d: m.nn.functional.gelu(d["x"]), None),
        "gelu fwd+bwd 1M": (lambda m, d: gelu_fb(m, d["x"]), None),
        "cumsum [1000,1000] dim 1": (lambda m, d: m.cumsum(d["m"], 1),
                                     lambda d: np.cumsum(d["m"], 1)),
        "cumsum [1000,1000] dim 0": (lambda m, d: m.cumsum(d["m"], 0),
                                     lambda d: np.cumsum(d["m"], 0)),
        "int64 <= int64 1M": (lambda m, d: d["i"] <= d["i2"], lambda d: d["i"] <= d["i2"]),
        "int64 == 5, 1M": (lambda m, d: d["i"] == 5, lambda d: d["i"] == 5),
        "[1000] <= [1000,1] int64": (lambda m, d: d["col"] <= d["row"],
                                     lambda d: d["col"] <= d["row"]),
        "tril [1000,1000]": (lambda m, d: m.tril(d["m"]), lambda d: np.tril(d["m"])),
        "flip [1000,1000] dim 1": (lambda m, d: m.flip(d["m"], (1,)),
                                   lambda d: np.flip(d["m"], 1).copy()),
        "topk 10 of [1000,1000]": (lambda m, d: m.topk(d["m"], 10),
                                   lambda d: np.partition(d["m"], -10, 1)[:, -10:]),
    }
    unary = {"log": np.log, "log1p": np.log1p, "sin": np.sin, "tan": np.tan, "atan": np.arctan,
             "asin": None, "floor": np.floor, "round": np.round, "reciprocal": np.reciprocal}
    for name, np_fn in unary.items():
        arg = "u" if name == "asin" else "p"
        cases[f"{name} 1M float32"] = (
            lambda m, d, name=name, arg=arg: getattr(m, name)(d[arg]),
            None if np_fn is None else lambda d, f=np_fn: f(d["p"]))
    cases.update({
        "atan2 1M float32": (lambda m, d: m.atan2(d["x"], d["y"]),
                             lambda d: np.arctan2(d["x"], d["y"])),
        "fmod 1M float32": (lambda m, d: m.fmod(d["x"], d["p"]), lambda d: np.fmod(d["x"], d["p"])),
        "remainder 1M float32": (lambda m, d: m.remainder(d["x"], d["p"]),
                                 lambda d: np.remainder(d["x"], d["p"])),
        "amax [1000,1000] dim 1": (lambda m, d: m.amax(d["m"], 1), lambda d: d["m"].max(1)),
        "amax [1000,1000] dim 0": (lambda m, d: m.amax(d["m"], 0), lambda d: d["m"].max(0)),
        "sum [700,1974] dim 0": (lambda m, d: m.sum(d["g"], 0), lambda d: d["g"].sum(0)),
        "bmm [64,64,32]x[64,32,64]": (lambda m, d: m.bmm(d["q"], d["q"].transpose(1, 2)),
                                      lambda d: d["q"] @ d["q"].transpose(0, 2, 1)),
        "clamp(-0.5, 0.5) 1M": (lambda m, d: m.clamp(d["x"], -0.5, 0.5),
                                lambda d: np.clip(d["x"], -0.5, 0.5)),
        # an EMA update and an optimizer's moments: in place over 1M float32
        "lerp_ 1M (EMA)": (lambda m, d: d["e"].lerp_(d["x"], 0.001), None),
        "addcmul_ 1M": (lambda m, d: d["e"].addcmul_(d["x"], d["y"], value=1e-6), None),
        "addcdiv_ 1M": (lambda m, d: d["e"].addcdiv_(d["x"], d["p"], value=1e-6), None),
        "lerp 1M": (lambda m, d: m.lerp(d["x"], d["y"], 0.1), None),
        "addcmul 1M": (lambda m, d: m.addcmul(d["x"], d["y"], d["p"], value=0.1), None),
    })
    # the activations of nn.functional, forward and forward + backward
    activations = {"leaky_relu": {"negative_slope": 0.1}, "hardtanh": {}, "relu6": {},
                   "hardsigmoid": {}, "hardswish": {}, "silu": {}, "elu": {}, "selu": {},
                   "softplus": {}, "logsigmoid": {}, "mish": {}, "softshrink": {}}

    def forward_backward(m, x, name, kwargs):
        x = x.detach().requires_grad_()
        getattr(m.nn.functional, name)(x, **kwargs).backward(m.ones_like(x))
    for name, kwargs in activations.items():
        cases[f"{name} 1M"] = (
            lambda m, d, name=name, kw=kwargs: getattr(m.nn.functional, name)(d["x"], **kw),
            None)
        cases[f"{name} fwd+bwd 1M"] = (
            lambda m, d, name=name, kw=kwargs: forward_backward(m, d["x"], name, kw), None)
    return cases


def _inputs(lib):
    to = (lambda a: ember.tensor(a)) if lib is ember else (lambda a: torch.tensor(a))
    return {"x": to(X), "m": to(M), "i": to(I64), "i2": to(I64[::-1].copy()),
            "col": to(COL), "row": to(ROW), "p": to(POS), "y": to(Y), "u": to(np.tanh(X)),
            "g": to(BIAS_GRAD), "q": to(QK), "e": to(Y)}


def _time(fn, number):
    fn()
    t = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t) / number


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--match", default="", help="comma-separated substrings of op names")
    args = parser.parse_args()
    nd = {"x": X, "m": M, "i": I64, "i2": I64[::-1].copy(), "col": COL, "row": ROW, "p": POS,
          "y": Y, "u": np.tanh(X), "g": BIAS_GRAD, "q": QK, "e": Y.copy()}
    wanted = [w for w in args.match.split(",") if w]
    print(f"ember {ember.__version__}, NumPy {np.__version__}, PyTorch {torch.__version__}; "
          f"medians of {args.rounds} interleaved rounds")
    for threads in (1, 2):
        ember.set_num_threads(threads)
        torch.set_num_threads(threads)
        ed, td = _inputs(ember), _inputs(torch)
        print(f"\n{threads} thread(s)  {'op':28s} {'ember':>10s} {'numpy':>10s} {'torch':>10s}"
              f" {'e/np':>6s} {'e/torch':>8s}")
        for name, (call, np_call) in _cases().items():
            if wanted and not any(w in name for w in wanted):
                continue
            runs = {"e": [], "n": [], "t": []}
            for _ in range(args.rounds):
                runs["e"].append(_time(lambda: call(ember, ed), 5))
                runs["t"].append(_time(lambda: call(torch, td), 5))
                if np_call is not None:
                    runs["n"].append(_time(lambda: np_call(nd), 5))
            e, t = statistics.median(runs["e"]), statistics.median(runs["t"])
            n = statistics.median(runs["n"]) if runs["n"] else None
            ns = f"{n * 1e3:8.2f}ms" if n else f"{'-':>10s}"
            rn = f"{e / n:6.2f}" if n else f"{'-':>6s}"
            print(f"            {name:28s} {e * 1e3:8.2f}ms {ns} {t * 1e3:8.2f}ms {rn} "
                  f"{e / t:8.2f}")


if __name__ == "__main__":
    main()
