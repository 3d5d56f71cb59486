"""Function-transform benchmark: per-sample gradients of a small CNN over a batch of 64,
PyTorch's tutorial recipe (vmap(grad(loss)) over functional_call), in ember with vmap,
in ember with a Python loop (one backward per sample), and in PyTorch with torch.func.vmap,
side by side at 1 and 2 threads.  Prints the times and the ratios ember-vmap / torch-vmap
(goal <= 1.2) and ember-loop / ember-vmap (goal >= 5).  Not a test:
python benchmarks/bench_func.py
"""
import ember.nn.functional as F
import numpy as np
import torch
from bench_foundation import fmt, per_call
from threadpoolctl import threadpool_limits

import ember

BATCH = 64


def make_cnn(nn):
    """conv 1->8, conv 8->16 (3x3), 2x2 max pool, linear 2304->32->10 over 28x28 images."""
    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 8, 3)
            self.conv2 = nn.Conv2d(8, 16, 3)
            self.fc1 = nn.Linear(16 * 12 * 12, 32)
            self.fc2 = nn.Linear(32, 10)

        def forward(self, x):
            f = F if nn is ember.nn else torch.nn.functional
            x = f.relu(self.conv1(x))
            x = f.max_pool2d(f.relu(self.conv2(x)), 2)
            x = f.relu(self.fc1(x.flatten(1)))
            return f.log_softmax(self.fc2(x), dim=1)
    return CNN()


def setup():
    g = np.random.default_rng(0)
    data = g.standard_normal((BATCH, 1, 28, 28)).astype(np.float32)
    targets = g.integers(0, 10, BATCH)
    tmodel, emodel = make_cnn(torch.nn), make_cnn(ember.nn)
    for (name, p), (_, q) in zip(tmodel.named_parameters(), emodel.named_parameters()):
        q.data.copy_(ember.tensor(p.detach().numpy()))

    def per_sample(lib, func, fn, model):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x, t):
            return fn.nll_loss(func.functional_call(model, p, (x.unsqueeze(0),)), t.unsqueeze(0))
        grads = func.vmap(func.grad(loss), in_dims=(None, 0, 0))
        x, t = lib.tensor(data), lib.tensor(targets)
        return lambda: grads(params, x, t)

    def loop(lib, fn, model):
        x, t = lib.tensor(data), lib.tensor(targets)

        def run():
            out = []
            for i in range(BATCH):
                model.zero_grad()
                fn.nll_loss(model(x[i:i + 1]), t[i:i + 1]).backward()
                out.append([p.grad.clone() for p in model.parameters()])
            return out
        return run

    e_vmap = per_sample(ember, ember.func, F, emodel)
    t_vmap = per_sample(torch, torch.func, torch.nn.functional, tmodel)
    e_loop = loop(ember, F, emodel)
    check(e_vmap(), t_vmap(), e_loop())
    return e_vmap, e_loop, t_vmap, loop(torch, torch.nn.functional, tmodel)


def check(e, t, loop):
    """The three agree (per-sample gradients of every parameter)."""
    for k, ge in e.items():
        np.testing.assert_allclose(ge.numpy(), t[k].numpy(), rtol=1e-3, atol=1e-5)
    names = list(e)
    for i in (0, BATCH - 1):
        for k, g in zip(names, loop[i]):
            np.testing.assert_allclose(e[k][i].numpy(), g.numpy(), rtol=1e-3, atol=1e-5)


def main():
    print(f"ember {ember.__version__}, PyTorch {torch.__version__}; per-sample gradients of a "
          f"small CNN (conv 1-8-16, fc 2304-32-10), batch {BATCH}, 28x28")
    e_vmap, e_loop, t_vmap, t_loop = setup()
    for threads in (1, 2):
        ember.set_num_threads(threads)
        torch.set_num_threads(threads)
        with threadpool_limits(threads):
            tv, tl, tt, ttl = per_call((e_vmap, e_loop, t_vmap, t_loop), 3, repeat=7)
            print(f"\n{threads} thread(s): ember vmap {fmt(tv)}   ember loop {fmt(tl)}   "
                  f"torch vmap {fmt(tt)}   torch loop {fmt(ttl)}")
            print(f"  ember vmap / torch vmap {tv / tt:6.2f}   (goal <= 1.2)")
            print(f"  ember loop / ember vmap {tl / tv:6.2f}   (goal >= 5; torch's loop / "
                  f"torch's vmap: {ttl / tt:.2f})")


if __name__ == "__main__":
    main()
