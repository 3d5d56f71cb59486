"""A character-level GPT trained on the short story in examples/data/hearth.txt, then asked
to continue a prompt.  Ordinary PyTorch code with ``import ember as torch``: Embedding,
LayerNorm, causal scaled_dot_product_attention, GELU MLPs, AdamW, gradient clipping.

python examples/char_gpt.py [--steps 600]"""
import argparse
import os
import time

import ember.nn as nn
import ember.nn.functional as F

import ember as torch


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout):
        super().__init__()
        self.n_heads, self.dropout = n_heads, dropout
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.n_heads, d // self.n_heads).transpose(1, 2)
                   for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           dropout_p=self.dropout if self.training else 0.0)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, d_model, n_heads, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads, dropout)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                 nn.Linear(4 * d_model, d_model), nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class CharGPT(nn.Module):
    def __init__(self, vocab_size, block_size, d_model=64, n_layers=2, n_heads=4, dropout=0.0):
        super().__init__()
        self.block_size = block_size
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(block_size, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_heads, dropout) for _ in range(n_layers))
        self.ln = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, idx, targets=None):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln(x))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))

    @torch.no_grad()
    def generate(self, idx, n_new, temperature=0.8, generator=None):
        for _ in range(n_new):
            logits, _ = self(idx[:, -self.block_size:])
            probs = F.softmax(logits[:, -1] / temperature, dim=-1)
            # sampled on the host, with the host generator: the same text on every device
            nxt = torch.multinomial(probs.cpu(), 1, generator=generator).to(idx.device)
            idx = torch.cat([idx, nxt], dim=1)
        return idx


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--block", type=int, default=32)
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    args = parser.parse_args()
    device = torch.device(args.device)

    with open(os.path.join(os.path.dirname(__file__), "data", "hearth.txt")) as f:
        text = f.read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long, device=device)
    print(f"{len(text)} characters, vocabulary of {len(chars)}")

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    model = CharGPT(len(chars), args.block).to(device)
    print(f"{sum(p.numel() for p in model.parameters())} parameters")
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    offsets = torch.arange(args.block, device=device)
    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        ix = torch.randint(len(data) - args.block - 1, (args.batch, 1), generator=g).to(device)
        x, y = data[ix + offsets], data[ix + offsets + 1]
        _, loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 100 == 0 or step == 1:
            print(f"step {step:4d}  loss {loss.item():.3f}  ({time.perf_counter() - start:.1f} s)")

    model.eval()
    prompt = "The fire "
    idx = torch.tensor([[stoi[c] for c in prompt]], device=device)
    out = model.generate(idx, 200, generator=g)[0].tolist()
    print("\n" + "".join(chars[i] for i in out))


if __name__ == "__main__":
    main()
