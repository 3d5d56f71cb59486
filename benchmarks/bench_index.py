"""Index benchmarks: gather and scatter_add on a (4096, 1024) float32 matrix, ember vs
NumPy (np.take_along_axis / np.add.at) vs PyTorch, at 1 and 2 threads, with the ratios
measured in the same run (the harness of bench_foundation).  Not a test:
python benchmarks/bench_index.py
"""
import numpy as np
import torch
from bench_foundation import compare

import ember

SHAPE = (4096, 1024)


def cases():
    g = np.random.default_rng(0)
    a_n = g.standard_normal(SHAPE).astype(np.float32)
    rows = g.integers(0, SHAPE[0], size=SHAPE)            # along dim 0: duplicates galore
    cols = g.integers(0, SHAPE[1], size=SHAPE)
    a_e, a_t = ember.tensor(a_n), torch.from_numpy(a_n)
    r_e, r_t = ember.tensor(rows), torch.from_numpy(rows)
    c_e, c_t = ember.tensor(cols), torch.from_numpy(cols)
    out_e, out_n, out_t = ember.zeros(SHAPE), np.zeros(SHAPE, np.float32), torch.zeros(SHAPE)
    col_ids = np.arange(SHAPE[1])[None, :]

    def np_scatter_add():
        out_n.fill(0)
        np.add.at(out_n, (rows, col_ids), a_n)

    return [
        ("gather dim=1", 10, lambda: a_e.gather(1, c_e),
         lambda: np.take_along_axis(a_n, cols, 1), lambda: a_t.gather(1, c_t)),
        ("gather dim=0", 10, lambda: a_e.gather(0, r_e),
         lambda: np.take_along_axis(a_n, rows, 0), lambda: a_t.gather(0, r_t)),
        ("scatter_add dim=0", 5, lambda: out_e.zero_().scatter_add_(0, r_e, a_e),
         np_scatter_add, lambda: out_t.zero_().scatter_add_(0, r_t, a_t)),
        ("scatter_add dim=1", 5, lambda: out_e.zero_().scatter_add_(1, c_e, a_e),
         lambda: (out_n.fill(0), np.add.at(out_n, (np.arange(SHAPE[0])[:, None], cols), a_n)),
         lambda: out_t.zero_().scatter_add_(1, c_t, a_t)),
    ]


if __name__ == "__main__":
    print(f"ember {ember.__version__}, NumPy {np.__version__}, PyTorch {torch.__version__}; "
          f"shape {SHAPE} float32, int64 indices")
    compare(cases())
