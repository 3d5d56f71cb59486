"""A multilayer perceptron on scikit-learn's two-moons data: nn.Sequential, SGD with
momentum and a StepLR schedule, in ordinary PyTorch code with ``import ember as torch``.

python examples/mlp.py"""
import ember.nn as nn
from sklearn.datasets import make_moons

import ember as torch


def main():
    x_np, y_np = make_moons(n_samples=1000, noise=0.15, random_state=0)
    x = torch.tensor(x_np, dtype=torch.float32)
    y = torch.tensor(y_np, dtype=torch.long)
    x_train, y_train, x_test, y_test = x[:800], y[:800], x[800:], y[800:]

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                          nn.Linear(64, 2))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=100, gamma=0.5)
    for epoch in range(1, 301):
        loss = loss_fn(model(x_train), y_train)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        if epoch % 50 == 0:
            with torch.no_grad():
                acc = (model(x_test).argmax(1) == y_test).float().mean().item()
            print(f"epoch {epoch:3d}  loss {loss.item():.4f}  test accuracy {100 * acc:.1f}%")


if __name__ == "__main__":
    main()
