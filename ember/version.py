"""ember.version (``torch.version``): what this build is."""
from ember.torch_version import TorchVersion

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"]

__version__ = TorchVersion("0.1.0")
debug = False
cuda = None             # ember-cuda is a plugin: ember itself is built without a toolkit
git_version = "unknown"
hip = None
rocm = None
xpu = None
