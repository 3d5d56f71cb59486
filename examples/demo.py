"""ember demo: train a small CNN on scikit-learn's bundled handwritten digits (offline) on the
CPU plugin, save a checkpoint, reload it and re-evaluate.  The training code is ordinary
PyTorch code with ``import ember as torch``.

Run with `make demo` (about ten seconds on 2 cores); `--device cuda` trains on a GPU."""
import argparse
import os
import sys
import tempfile
import time

import ember.nn as nn
import ember.nn.functional as F
import numpy as np
from sklearn.datasets import load_digits
from tqdm import tqdm

import ember as torch
from ember.utils.data import DataLoader, TensorDataset


class DigitsCNN(nn.Module):
    """conv16 - conv32 - maxpool - fc64 - fc10 over 1x8x8 images."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(32 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = self.pool(F.relu(self.conv2(x)))
        x = F.relu(self.fc1(x.flatten(1)))
        return self.fc2(x)


def load_data(generator):
    """The 1797 digits as (N, 1, 8, 8) float32 in [0, 1] with int64 labels; a fixed 80/20
    split."""
    digits = load_digits()
    x = torch.from_numpy((digits.images / 16.0).astype(np.float32)).unsqueeze(1)
    y = torch.from_numpy(digits.target.astype(np.int64))
    perm = torch.randperm(len(y), generator=generator)
    n_test = len(y) // 5
    test, train = perm[:n_test], perm[n_test:]
    return TensorDataset(x[train], y[train]), TensorDataset(x[test], y[test])


@torch.no_grad()
def evaluate(model, loader, device):
    """Accuracy in percent over a loader."""
    model.eval()
    correct = total = 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        correct += (model(x).argmax(dim=1) == y).sum().item()
        total += len(y)
    return 100.0 * correct / total


def train(model, loader, optimizer, scheduler, epochs, device):
    for epoch in range(1, epochs + 1):
        model.train()
        seen = correct = 0
        loss_sum = 0.0
        bar = tqdm(loader, desc=f"epoch {epoch:2d}/{epochs}", leave=False, file=sys.stdout)
        for x, y in bar:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum += loss.item() * len(y)
            correct += (logits.argmax(dim=1) == y).sum().item()
            seen += len(y)
            bar.set_postfix(loss=f"{loss.item():.3f}")
        scheduler.step()
        yield epoch, loss_sum / seen, 100.0 * correct / seen


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--epochs", type=int, default=20)
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    train_set, test_set = load_data(g)
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True, generator=g)
    test_loader = DataLoader(test_set, batch_size=256)
    print(f"digits: {len(train_set)} training and {len(test_set)} held-out images, "
          f"device {device}, {torch.get_num_threads()} threads")

    model = DigitsCNN().to(device)
    print(model)
    epochs = args.epochs
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)

    start = time.perf_counter()
    for epoch, loss, acc in train(model, train_loader, optimizer, scheduler, epochs, device):
        held_out = evaluate(model, test_loader, device)
        print(f"epoch {epoch:2d}: loss {loss:.4f}  train acc {acc:5.1f}%  "
              f"held-out acc {held_out:5.1f}%  ({time.perf_counter() - start:.1f} s)")
    accuracy = evaluate(model, test_loader, device)
    print(f"held-out accuracy {accuracy:.2f}% after {time.perf_counter() - start:.1f} s")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "digits_cnn.ckpt")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "epoch": epochs, "accuracy": accuracy}, path)
        print(f"saved checkpoint ({os.path.getsize(path) / 1024:.0f} KiB)")
        checkpoint = torch.load(path)
        restored = DigitsCNN().to(device)
        restored.load_state_dict(checkpoint["model"])
        reloaded = evaluate(restored, test_loader, device)
    print(f"reloaded model: held-out accuracy {reloaded:.2f}% (saved: "
          f"{checkpoint['accuracy']:.2f}%)")
    if reloaded != accuracy:
        sys.exit("the reloaded model does not reproduce the saved accuracy")
    if accuracy < 97.0:
        sys.exit(f"held-out accuracy {accuracy:.2f}% is below the 97% target")


if __name__ == "__main__":
    main()
