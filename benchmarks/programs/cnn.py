"""PyTorch's examples/mnist network with batch norm: two 3x3 convolutions (32, 64 channels)
each followed by BatchNorm2d, max pooling, dropout 0.25/0.5, two linear layers,
log_softmax + nll_loss; Adadelta (lr 1.0) with StepLR (gamma 0.7) over 28x28 inputs
served by a shuffling DataLoader, then a test pass."""
import numpy as np

BATCH = 64


def model_class(torch):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(1, 32, 3, 1), nn.BatchNorm2d(32)
            self.conv2, self.bn2 = nn.Conv2d(32, 64, 3, 1), nn.BatchNorm2d(64)
            self.dropout1, self.dropout2 = nn.Dropout(0.25), nn.Dropout(0.5)
            self.fc1, self.fc2 = nn.Linear(9216, 128), nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.bn1(self.conv1(x)))
            x = F.relu(self.bn2(self.conv2(x)))
            x = self.dropout1(F.max_pool2d(x, 2))
            x = self.dropout2(F.relu(self.fc1(torch.flatten(x, 1))))
            return F.log_softmax(self.fc2(x), dim=1)

    return Net


def images(n, seed):
    """``n`` 28x28 images of ten blurred stroke patterns with noise, and their labels."""
    g = np.random.default_rng(seed)
    protos = g.standard_normal((10, 28, 28)).cumsum(1).cumsum(2)
    protos = (protos - protos.mean()) / protos.std()
    labels = g.integers(0, 10, n)
    x = protos[labels] + 0.5 * g.standard_normal((n, 28, 28))
    return x[:, None].astype(np.float32), labels


def main(torch, phase, steps):
    torch.manual_seed(1)
    with phase("data"):
        xs, ys = images(steps * BATCH, 0)
        train = torch.utils.data.TensorDataset(torch.from_numpy(xs), torch.from_numpy(ys))
        xt, yt = images(512, 1)
        test = torch.utils.data.TensorDataset(torch.from_numpy(xt), torch.from_numpy(yt))
        train_loader = torch.utils.data.DataLoader(train, batch_size=BATCH, shuffle=True)
        test_loader = torch.utils.data.DataLoader(test, batch_size=256)
    model = model_class(torch)()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    F = torch.nn.functional
    for epoch in range(2):
        model.train()
        batches = iter(train_loader)
        for _ in range(steps // 2):
            with phase("data"):
                data, target = next(batches)
            with phase("forward"):
                optimizer.zero_grad()
                loss = F.nll_loss(model(data), target)
            with phase("backward"):
                loss.backward()
            with phase("optimizer"):
                optimizer.step()
        scheduler.step()
        with phase("eval"):
            model.eval()
            correct = 0
            with torch.no_grad():
                for data, target in test_loader:
                    correct += model(data).argmax(dim=1, keepdim=True).eq(
                        target.view(-1, 1)).sum().item()
    return loss.item()
