"""makemore's MLP character model (Bengio et al. 2003, as in "building makemore" part 3): a
10-d embedding of the previous three characters, a 200-unit tanh layer with batch norm,
hand-written SGD with a step decay, minibatches of 32 drawn by index; then sampling."""
from corpus import words

BLOCK, EMB, HIDDEN, BATCH = 3, 10, 200, 32


def dataset(torch, names, stoi):
    X, Y = [], []
    for w in names:
        context = [0] * BLOCK
        for ch in w + ".":
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    return torch.tensor(X), torch.tensor(Y)


def main(torch, phase, steps):
    nn, F = torch.nn, torch.nn.functional
    with phase("data"):
        names = [w.rstrip("0123456789") for w in words(20_000, 4000, seed=3)]
        chars = sorted(set("".join(names)))
        stoi = {s: i + 1 for i, s in enumerate(chars)}
        stoi["."] = 0
        itos = {i: s for s, i in stoi.items()}
        Xtr, Ytr = dataset(torch, names, stoi)
    g = torch.Generator().manual_seed(2147483647)
    vocab = len(stoi)
    model = nn.Sequential(nn.Embedding(vocab, EMB), nn.Flatten(),
                          nn.Linear(EMB * BLOCK, HIDDEN, bias=False), nn.BatchNorm1d(HIDDEN),
                          nn.Tanh(), nn.Linear(HIDDEN, vocab))
    with torch.no_grad():
        model[-1].weight *= 0.1
    parameters = list(model.parameters())
    for p in parameters:
        p.requires_grad = True
    for i in range(steps):
        with phase("data"):
            ix = torch.randint(0, Xtr.shape[0], (BATCH,), generator=g)
            Xb, Yb = Xtr[ix], Ytr[ix]
        with phase("forward"):
            loss = F.cross_entropy(model(Xb), Yb)
        with phase("backward"):
            for p in parameters:
                p.grad = None
            loss.backward()
        with phase("optimizer"):
            lr = 0.1 if i < steps * 3 // 4 else 0.01
            for p in parameters:
                p.data += -lr * p.grad
    with phase("generate"):
        model.eval()
        out = []
        for _ in range(20):
            context, word = [0] * BLOCK, []
            while len(word) < 20:
                probs = F.softmax(model(torch.tensor([context])), dim=1)
                ix = torch.multinomial(probs, num_samples=1, generator=g).item()
                context = context[1:] + [ix]
                if ix == 0:
                    break
                word.append(itos[ix])
            out.append("".join(word))
    return loss.item()
