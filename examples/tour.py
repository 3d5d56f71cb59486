"""ember demo: tensors on the CPU plugin, ops, a view sharing storage, and the plugins.

Run with `make demo`."""
import subprocess
import sys

import ember as torch  # ember runs PyTorch-style code

print("== tensors")
x = torch.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
print("x =", x)
print("x.shape =", x.shape, " dtype =", x.dtype, " device =", x.device)
w = torch.randn(3, 4, generator=torch.Generator().manual_seed(0))
print("w = randn(3, 4) =", w)

print("\n== ops (broadcasting, scalars on both sides, promotion)")
y = (x * 2 + 1) / 3 - torch.tensor([1.0, 0.0, -1.0])
print("(x * 2 + 1) / 3 - [1, 0, -1] =", y)
print("relu(x - 2) =", torch.relu(x - 2))
print("exp(x).sum(dim=1) =", x.exp().sum(dim=1))
print("x.mean(dim=0, keepdim=True) =", x.mean(dim=0, keepdim=True))
print("x @ w =", x @ w)
print("int tensor / 2 =", torch.tensor([1, 2, 3]) / 2, "(int / int -> default float)")
print("int tensor + 2.5 =", torch.tensor([1, 2, 3]) + 2.5)

print("\n== a view shares storage")
v = x.t()                       # metadata only: no copy
print("v = x.t() =", v)
print("v shares x's storage:", v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(),
      " v.is_contiguous() =", v.is_contiguous(), " v._base is x:", v._base is x)
v[0, 1] = 100.0                 # write through the view ...
print("after v[0, 1] = 100:  x =", x)   # ... and the base sees it
a = x.numpy()                   # zero-copy on the CPU
a[0, 0] = -7.0
print("after x.numpy()[0, 0] = -7:  x[0, 0] =", x[0, 0].item())

print("\n== python -m ember.backends")
sys.stdout.flush()
subprocess.run([sys.executable, "-m", "ember.backends"], check=True)
