"""ember.functional (``torch.functional``): the module PyTorch keeps several tensor functions
in; each name here is the ``ember.<name>`` function."""
from ember import atleast_1d as atleast_1d
from ember import atleast_2d as atleast_2d
from ember import atleast_3d as atleast_3d
from ember import block_diag as block_diag
from ember import broadcast_shapes as broadcast_shapes
from ember import broadcast_tensors as broadcast_tensors
from ember import cartesian_prod as cartesian_prod
from ember import cdist as cdist
from ember import chain_matmul as chain_matmul
from ember import einsum as einsum
from ember import istft as istft
from ember import lu as lu
from ember import meshgrid as meshgrid
from ember import norm as norm
from ember import pca_lowrank as pca_lowrank
from ember import split as split
from ember import stft as stft
from ember import svd_lowrank as svd_lowrank
from ember import tensordot as tensordot
from ember import unique as unique
from ember import unique_consecutive as unique_consecutive
from ember import unravel_index as unravel_index

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
           "broadcast_tensors", "cartesian_prod", "cdist", "chain_matmul", "einsum", "istft", "lu",
           "meshgrid", "norm", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot",
           "unique", "unique_consecutive", "unravel_index"]
