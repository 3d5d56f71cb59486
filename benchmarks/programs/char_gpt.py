"""minGPT-style character transformer: 4 layers, d=128, 4 heads, context 64, AdamW with
weight decay on the matrices only, batches from a DataLoader with a random sampler."""
import math

from corpus import text

D, LAYERS, HEADS, BLOCK, BATCH = 128, 4, 4, 64, 16


def model_class(torch):
    nn, F = torch.nn, torch.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(D, 3 * D)
            self.c_proj = nn.Linear(D, D)
            self.attn_drop, self.resid_drop = nn.Dropout(0.1), nn.Dropout(0.1)
            self.register_buffer("mask", torch.tril(torch.ones(BLOCK, BLOCK))
                                 .view(1, 1, BLOCK, BLOCK))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(D, dim=2)
            k = k.view(B, T, HEADS, C // HEADS).transpose(1, 2)
            q = q.view(B, T, HEADS, C // HEADS).transpose(1, 2)
            v = v.view(B, T, HEADS, C // HEADS).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
            att = self.attn_drop(F.softmax(att, dim=-1))
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_drop(self.c_proj(y))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.attn = CausalSelfAttention()
            self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(D, 4 * D), c_proj=nn.Linear(4 * D, D),
                                          act=nn.GELU(), dropout=nn.Dropout(0.1)))

        def forward(self, x):
            m = self.mlp
            x = x + self.attn(self.ln_1(x))
            return x + m.dropout(m.c_proj(m.act(m.c_fc(self.ln_2(x)))))

    class GPT(nn.Module):
        def __init__(self, vocab):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab, D), wpe=nn.Embedding(BLOCK, D), drop=nn.Dropout(0.1),
                h=nn.ModuleList([Block() for _ in range(LAYERS)]), ln_f=nn.LayerNorm(D)))
            self.lm_head = nn.Linear(D, vocab, bias=False)
            self.apply(self._init_weights)

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            t = idx.size(1)
            pos = torch.arange(0, t, dtype=torch.long, device=idx.device).unsqueeze(0)
            tr = self.transformer
            x = tr.drop(tr.wte(idx) + tr.wpe(pos))
            for block in tr.h:
                x = block(x)
            logits = self.lm_head(tr.ln_f(x))
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                       ignore_index=-1)
            return logits, loss

        def configure_optimizers(self):
            decay = [p for n, p in self.named_parameters() if p.dim() >= 2]
            no_decay = [p for n, p in self.named_parameters() if p.dim() < 2]
            return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                      {"params": no_decay, "weight_decay": 0.0}],
                                     lr=5e-4, betas=(0.9, 0.95))

    return GPT


def dataset_class(torch):
    class CharDataset(torch.utils.data.Dataset):
        def __init__(self, data):
            chars = sorted(set(data))
            self.stoi = {ch: i for i, ch in enumerate(chars)}
            self.vocab_size, self.data = len(chars), data

        def __len__(self):
            return len(self.data) - BLOCK

        def __getitem__(self, idx):
            dix = [self.stoi[s] for s in self.data[idx:idx + BLOCK + 1]]
            x = torch.tensor(dix[:-1], dtype=torch.long)
            y = torch.tensor(dix[1:], dtype=torch.long)
            return x, y

    return CharDataset


def main(torch, phase, steps):
    torch.manual_seed(3407)
    with phase("data"):
        ds = dataset_class(torch)(text(100_000, seed=2))
        sampler = torch.utils.data.RandomSampler(ds, replacement=True, num_samples=int(1e10))
        loader = iter(torch.utils.data.DataLoader(ds, sampler=sampler, batch_size=BATCH,
                                                  shuffle=False, pin_memory=False,
                                                  num_workers=0))
    model = model_class(torch)(ds.vocab_size)
    optimizer = model.configure_optimizers()
    model.train()
    for _ in range(steps):
        with phase("data"):
            x, y = next(loader)
        with phase("forward"):
            _, loss = model(x, y)
        with phase("backward"):
            model.zero_grad(set_to_none=True)
            loss.backward()
        with phase("optimizer"):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
    return loss.item()
