"""Training-step benchmarks, ember vs PyTorch in one run at 1 and 2 threads: an MLP
64-128-128-10 (batch 64, SGD with momentum), a CNN conv16-conv32-pool-fc (batch 64 of
1x28x28, Adam) and a tiny GPT (d=64, 2 layers, 4 heads, T=32, B=16, AdamW).  The same
model code runs on both libraries (``lib`` is ember or torch) from the same weights.
Goals: MLP <= 1.0x, CNN and GPT <= 1.25x PyTorch.  Not a test:
python benchmarks/bench_training.py
"""

import ember  # noqa: I001  (first: both libraries' OpenMP runtimes then wait alike, a short spin,
import numpy as np  # so neither one's idle spinning workers slow the other's rounds)
import torch
from bench_foundation import compare


def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 14 * 14, 10))


def gpt(lib, vocab=65, d=64, layers=2, heads=4, block=32):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (z.view(b, t, heads, d // heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(block, d)
            self.blocks = nn.Sequential(*[Block() for _ in range(layers)])
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(lib.arange(idx.shape[1], device=idx.device))
            return self.head(self.ln(self.blocks(x)))

    return GPT()


def pair(build, opt_e, opt_t):
    """The same model in both libraries (torch's initial weights copied into ember's)."""
    torch.manual_seed(0)
    mt, me = build(torch), build(ember)
    me.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                        mt.state_dict().items()})
    return (me, opt_e(me.parameters())), (mt, opt_t(mt.parameters()))


def step_fn(lib, model, opt, x, y, flat=False):
    F = lib.nn.functional

    def step():
        opt.zero_grad()
        out = model(x)
        if flat:
            out = out.view(-1, out.shape[-1])
        F.cross_entropy(out, y).backward()
        opt.step()
    return step


def cases():
    g = np.random.default_rng(0)
    table = []
    specs = [
        ("MLP step (SGD momentum)", 200, mlp,
         lambda lib: lambda p: lib.optim.SGD(p, lr=0.01, momentum=0.9),
         g.standard_normal((64, 64)), g.integers(0, 10, 64), False),
        ("CNN step (Adam)", 10, cnn, lambda lib: lambda p: lib.optim.Adam(p, lr=1e-3),
         g.standard_normal((64, 1, 28, 28)), g.integers(0, 10, 64), False),
        ("tiny GPT step (AdamW)", 20, gpt, lambda lib: lambda p: lib.optim.AdamW(p, lr=1e-3),
         g.integers(0, 65, (16, 32)), g.integers(0, 65, 16 * 32), True),
    ]
    for name, number, build, opt, x_n, y_n, flat in specs:
        (me, oe), (mt, ot) = pair(build, opt(ember), opt(torch))
        x_n = x_n.astype(np.float32) if x_n.dtype == np.float64 else x_n
        xe, ye = ember.tensor(x_n), ember.tensor(y_n)
        xt, yt = torch.tensor(x_n), torch.tensor(y_n)
        table.append((name, number, step_fn(ember, me, oe, xe, ye, flat), None,
                      step_fn(torch, mt, ot, xt, yt, flat)))
    return table


if __name__ == "__main__":
    print(f"ember {ember.__version__}, PyTorch {torch.__version__}: one training step "
          "(zero_grad, forward, cross_entropy, backward, optimizer step)")
    compare(cases())
