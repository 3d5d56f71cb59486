"""Word-level language model, as PyTorch's examples/word_language_model trains it: a 2-layer
LSTM (200 hidden, tied embedding/decoder weights, dropout 0.2), truncated BPTT of 35 over
batches of 20 streams, gradient clipping at 0.25, plain SGD written by hand with the LR
divided by 4 when validation loss stops improving; then evaluation and generation."""
import math

from corpus import words

BPTT, BATCH, HIDDEN, LAYERS, CLIP = 35, 20, 200, 2, 0.25


def batchify(torch, ids, bsz):
    n = ids.size(0) // bsz
    return ids[:n * bsz].view(bsz, -1).t().contiguous()


def get_batch(source, i):
    seq_len = min(BPTT, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


def model_class(torch):
    nn = torch.nn

    class RNNModel(nn.Module):
        def __init__(self, ntoken):
            super().__init__()
            self.drop = nn.Dropout(0.2)
            self.encoder = nn.Embedding(ntoken, HIDDEN)
            self.rnn = nn.LSTM(HIDDEN, HIDDEN, LAYERS, dropout=0.2)
            self.decoder = nn.Linear(HIDDEN, ntoken)
            self.decoder.weight = self.encoder.weight            # tied weights
            self.encoder.weight.data.uniform_(-0.1, 0.1)
            self.decoder.bias.data.zero_()

        def forward(self, inp, hidden):
            emb = self.drop(self.encoder(inp))
            output, hidden = self.rnn(emb, hidden)
            decoded = self.decoder(self.drop(output)).view(-1, self.decoder.out_features)
            return torch.nn.functional.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            w = next(self.parameters())
            return (w.new_zeros(LAYERS, bsz, HIDDEN), w.new_zeros(LAYERS, bsz, HIDDEN))

    return RNNModel


def repackage(h):
    return tuple(v.detach() for v in h)


def main(torch, phase, steps):
    torch.manual_seed(1111)
    with phase("data"):
        stream = words(40_000, 3000, seed=1)
        vocab = {w: i for i, w in enumerate(dict.fromkeys(stream))}
        ids = torch.tensor([vocab[w] for w in stream], dtype=torch.int64)
        cut = int(len(ids) * 0.9)
        train, val = batchify(torch, ids[:cut], BATCH), batchify(torch, ids[cut:], 10)
    model = model_class(torch)(len(vocab))
    criterion = torch.nn.NLLLoss()
    lr, best, loss = 20.0, None, None
    epoch_steps = steps // 2
    for epoch in range(2):
        model.train()
        hidden = model.init_hidden(BATCH)
        for step, i in enumerate(range(0, train.size(0) - 1, BPTT)):
            if step == epoch_steps:
                break
            with phase("data"):
                data, targets = get_batch(train, i)
            with phase("forward"):
                hidden = repackage(hidden)
                model.zero_grad()
                output, hidden = model(data, hidden)
                loss = criterion(output, targets)
            with phase("backward"):
                loss.backward()
            with phase("optimizer"):
                torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
                for p in model.parameters():
                    p.data.add_(p.grad, alpha=-lr)
        with phase("eval"):
            model.eval()
            total, hidden = 0.0, model.init_hidden(10)
            with torch.no_grad():
                for i in range(0, min(val.size(0) - 1, 10 * BPTT), BPTT):
                    data, targets = get_batch(val, i)
                    output, hidden = model(data, hidden)
                    total += len(data) * criterion(output, targets).item()
            val_loss = total / min(val.size(0) - 1, 10 * BPTT)
            if best is None or val_loss < best:
                best = val_loss
            else:
                lr /= 4.0
    with phase("generate"):
        model.eval()
        hidden = model.init_hidden(1)
        inp = torch.randint(len(vocab), (1, 1), dtype=torch.int64)
        with torch.no_grad():
            for _ in range(100):
                output, hidden = model(inp, hidden)
                weights = output.squeeze().div(1.0).exp()
                inp.fill_(torch.multinomial(weights, 1)[0])
    return math.exp(min(loss.item(), 20))
