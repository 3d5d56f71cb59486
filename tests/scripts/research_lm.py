"""An ordinary PyTorch research script, run with `import ember as torch`."""
import math
import os
import sys
import tempfile

import ember.nn as nn
import ember.nn.functional as F

import ember as torch
from ember.utils.data import DataLoader, Dataset


class Tokens(Dataset):
    def __init__(self, n, T, vocab):
        g = torch.Generator().manual_seed(0)
        self.data = torch.randint(0, vocab, (n, T + 1), generator=g)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        row = self.data[i]
        return row[:-1], row[1:]


class TinyLM(nn.Module):
    def __init__(self, vocab=32, d=32, heads=4, T=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, T, d))
        layer = nn.TransformerEncoderLayer(d, heads, 64, dropout=0.1, batch_first=True,
                                           norm_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.rnn = nn.LSTM(d, d, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * d, vocab)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(T))

    def forward(self, x):
        h = self.emb(x) + self.pos[:, : x.size(1)]
        h = self.enc(h, mask=self.mask, is_causal=True)
        h, _ = self.rnn(h)
        return self.head(h)


def main():
    torch.manual_seed(0)
    loader = DataLoader(Tokens(64, 16, 32), batch_size=16, shuffle=True, num_workers=2,
                        persistent_workers=True)
    model = TinyLM()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=3 * len(loader))
    scaler = torch.amp.GradScaler("cpu")
    first = last = None
    for epoch in range(3):
        model.train()
        for x, y in loader:
            with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
                logits = model(x)
            loss = F.cross_entropy(logits.float().reshape(-1, 32), y.reshape(-1))
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
            sched.step()
            first = loss.item() if first is None else first
            last = loss.item()
    assert math.isfinite(last) and last < first, (first, last)
    model.eval()
    with torch.no_grad(), torch.profiler.profile() as prof:
        x, _ = next(iter(loader))
        out = model(x)
    assert "linear" in prof.key_averages().table(sort_by="cpu_time_total", row_limit=50)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "ckpt.pt")
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3}, path)
        ckpt = torch.load(path)
        clone = TinyLM()
        clone.load_state_dict(ckpt["model"])
        clone.eval()
        with torch.no_grad():
            torch.testing.assert_close(clone(x), out)
    print(f"ok: loss {first:.3f} -> {last:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
