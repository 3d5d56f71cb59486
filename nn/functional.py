"""ember.nn.functional: PyTorch's torch.nn.functional names, re-exported from the
implementation modules in nn/_functional/ (one block per family)."""

# activations, linear, dropout, embedding
from ember.nn._functional.activation import celu as celu

# in-place activations, rrelu, gumbel_softmax, channel shuffles, sampling grids, the pooling
# variants, local response norm and the remaining losses
from ember.nn._functional.activation import celu_ as celu_  # noqa: E402
from ember.nn._functional.activation import elu as elu
from ember.nn._functional.activation import elu_ as elu_  # noqa: E402
from ember.nn._functional.activation import gelu as gelu
from ember.nn._functional.activation import glu as glu
from ember.nn._functional.activation import gumbel_softmax as gumbel_softmax  # noqa: E402
from ember.nn._functional.activation import hardshrink as hardshrink
from ember.nn._functional.activation import hardsigmoid as hardsigmoid
from ember.nn._functional.activation import hardswish as hardswish
from ember.nn._functional.activation import hardtanh as hardtanh
from ember.nn._functional.activation import hardtanh_ as hardtanh_  # noqa: E402
from ember.nn._functional.activation import leaky_relu as leaky_relu
from ember.nn._functional.activation import leaky_relu_ as leaky_relu_  # noqa: E402
from ember.nn._functional.activation import log_softmax as log_softmax
from ember.nn._functional.activation import logsigmoid as logsigmoid
from ember.nn._functional.activation import mish as mish
from ember.nn._functional.activation import normalize as normalize

# distances, the losses beyond _functional/loss.py, CTC, prelu and alpha dropout
from ember.nn._functional.activation import prelu as prelu
from ember.nn._functional.activation import relu as relu
from ember.nn._functional.activation import relu6 as relu6
from ember.nn._functional.activation import relu_ as relu_
from ember.nn._functional.activation import rrelu as rrelu  # noqa: E402
from ember.nn._functional.activation import rrelu_ as rrelu_  # noqa: E402
from ember.nn._functional.activation import selu as selu
from ember.nn._functional.activation import selu_ as selu_  # noqa: E402
from ember.nn._functional.activation import sigmoid as sigmoid
from ember.nn._functional.activation import silu as silu
from ember.nn._functional.activation import softmax as softmax
from ember.nn._functional.activation import softmin as softmin
from ember.nn._functional.activation import softplus as softplus
from ember.nn._functional.activation import softshrink as softshrink
from ember.nn._functional.activation import softsign as softsign
from ember.nn._functional.activation import tanh as tanh
from ember.nn._functional.activation import tanhshrink as tanhshrink
from ember.nn._functional.activation import threshold as threshold
from ember.nn._functional.activation import threshold_ as threshold_  # noqa: E402

# PyTorch's private attention helpers that copies of its Transformer layers import
from ember.nn._functional.attention import _canonical_mask as _canonical_mask
from ember.nn._functional.attention import _in_projection as _in_projection
from ember.nn._functional.attention import _in_projection_packed as _in_projection_packed
from ember.nn._functional.attention import _none_or_dtype as _none_or_dtype
from ember.nn._functional.attention import (
    multi_head_attention_forward as multi_head_attention_forward,
)

# norms, losses, padding, attention
from ember.nn._functional.attention import (
    scaled_dot_product_attention as scaled_dot_product_attention,
)

# conv and pooling
from ember.nn._functional.conv import conv1d as conv1d
from ember.nn._functional.conv import conv2d as conv2d
from ember.nn._functional.conv import conv3d as conv3d
from ember.nn._functional.conv import conv_transpose1d as conv_transpose1d
from ember.nn._functional.conv import conv_transpose2d as conv_transpose2d
from ember.nn._functional.conv import conv_transpose3d as conv_transpose3d
from ember.nn._functional.ctc import ctc_loss as ctc_loss
from ember.nn._functional.distance import cosine_similarity as cosine_similarity
from ember.nn._functional.distance import pairwise_distance as pairwise_distance
from ember.nn._functional.distance import pdist as pdist
from ember.nn._functional.dropout import alpha_dropout as alpha_dropout
from ember.nn._functional.dropout import dropout as dropout
from ember.nn._functional.dropout import dropout1d as dropout1d
from ember.nn._functional.dropout import dropout2d as dropout2d
from ember.nn._functional.dropout import dropout3d as dropout3d
from ember.nn._functional.dropout import (
    feature_alpha_dropout as feature_alpha_dropout,
)
from ember.nn._functional.fold import fold as fold
from ember.nn._functional.fold import unfold as unfold
from ember.nn._functional.grouped_mm import grouped_mm as grouped_mm  # noqa: E402
from ember.nn._functional.interpolate import interpolate as interpolate
from ember.nn._functional.interpolate import upsample as upsample
from ember.nn._functional.interpolate import upsample_bilinear as upsample_bilinear
from ember.nn._functional.interpolate import upsample_nearest as upsample_nearest
from ember.nn._functional.linear import bilinear as bilinear
from ember.nn._functional.linear import linear as linear
from ember.nn._functional.linear_cross_entropy import (  # noqa: E402
    linear_cross_entropy as linear_cross_entropy,
)
from ember.nn._functional.loss import binary_cross_entropy as binary_cross_entropy
from ember.nn._functional.loss import (
    binary_cross_entropy_with_logits as binary_cross_entropy_with_logits,
)
from ember.nn._functional.loss import (
    cosine_embedding_loss as cosine_embedding_loss,
)
from ember.nn._functional.loss import cross_entropy as cross_entropy
from ember.nn._functional.loss import gaussian_nll_loss as gaussian_nll_loss
from ember.nn._functional.loss import (
    hinge_embedding_loss as hinge_embedding_loss,
)
from ember.nn._functional.loss import huber_loss as huber_loss
from ember.nn._functional.loss import kl_div as kl_div
from ember.nn._functional.loss import l1_loss as l1_loss
from ember.nn._functional.loss import (
    margin_ranking_loss as margin_ranking_loss,
)
from ember.nn._functional.loss import mse_loss as mse_loss
from ember.nn._functional.loss import multi_margin_loss as multi_margin_loss
from ember.nn._functional.loss import (  # noqa: E402
    multilabel_margin_loss as multilabel_margin_loss,
)
from ember.nn._functional.loss import (
    multilabel_soft_margin_loss as multilabel_soft_margin_loss,
)
from ember.nn._functional.loss import nll_loss as nll_loss
from ember.nn._functional.loss import poisson_nll_loss as poisson_nll_loss
from ember.nn._functional.loss import smooth_l1_loss as smooth_l1_loss
from ember.nn._functional.loss import soft_margin_loss as soft_margin_loss
from ember.nn._functional.loss import (
    triplet_margin_loss as triplet_margin_loss,
)
from ember.nn._functional.loss import (
    triplet_margin_with_distance_loss as triplet_margin_with_distance_loss,
)
from ember.nn._functional.norm import batch_norm as batch_norm
from ember.nn._functional.norm import group_norm as group_norm
from ember.nn._functional.norm import instance_norm as instance_norm
from ember.nn._functional.norm import layer_norm as layer_norm
from ember.nn._functional.norm import local_response_norm as local_response_norm  # noqa: E402
from ember.nn._functional.norm import rms_norm as rms_norm
from ember.nn._functional.padding import one_hot as one_hot
from ember.nn._functional.padding import pad as pad
from ember.nn._functional.pixel_shuffle import channel_shuffle as channel_shuffle  # noqa: E402
from ember.nn._functional.pixel_shuffle import (  # noqa: E402
    native_channel_shuffle as native_channel_shuffle,
)
from ember.nn._functional.pixel_shuffle import pixel_shuffle as pixel_shuffle
from ember.nn._functional.pixel_shuffle import pixel_unshuffle as pixel_unshuffle
from ember.nn._functional.pooling import adaptive_avg_pool1d as adaptive_avg_pool1d
from ember.nn._functional.pooling import adaptive_avg_pool2d as adaptive_avg_pool2d
from ember.nn._functional.pooling import adaptive_avg_pool3d as adaptive_avg_pool3d
from ember.nn._functional.pooling import adaptive_max_pool1d as adaptive_max_pool1d
from ember.nn._functional.pooling import (
    adaptive_max_pool1d_with_indices as adaptive_max_pool1d_with_indices,
)
from ember.nn._functional.pooling import adaptive_max_pool2d as adaptive_max_pool2d
from ember.nn._functional.pooling import (
    adaptive_max_pool2d_with_indices as adaptive_max_pool2d_with_indices,
)
from ember.nn._functional.pooling import adaptive_max_pool3d as adaptive_max_pool3d
from ember.nn._functional.pooling import (
    adaptive_max_pool3d_with_indices as adaptive_max_pool3d_with_indices,
)
from ember.nn._functional.pooling import avg_pool1d as avg_pool1d
from ember.nn._functional.pooling import avg_pool2d as avg_pool2d
from ember.nn._functional.pooling import avg_pool3d as avg_pool3d
from ember.nn._functional.pooling import fractional_max_pool2d as fractional_max_pool2d  # noqa: E402
from ember.nn._functional.pooling import (
    fractional_max_pool2d_with_indices as fractional_max_pool2d_with_indices,  # noqa: E402
)
from ember.nn._functional.pooling import fractional_max_pool3d as fractional_max_pool3d  # noqa: E402
from ember.nn._functional.pooling import (
    fractional_max_pool3d_with_indices as fractional_max_pool3d_with_indices,  # noqa: E402
)
from ember.nn._functional.pooling import lp_pool1d as lp_pool1d  # noqa: E402
from ember.nn._functional.pooling import lp_pool2d as lp_pool2d  # noqa: E402
from ember.nn._functional.pooling import lp_pool3d as lp_pool3d  # noqa: E402
from ember.nn._functional.pooling import max_pool1d as max_pool1d
from ember.nn._functional.pooling import max_pool1d_with_indices as max_pool1d_with_indices
from ember.nn._functional.pooling import max_pool2d as max_pool2d
from ember.nn._functional.pooling import max_pool2d_with_indices as max_pool2d_with_indices
from ember.nn._functional.pooling import max_pool3d as max_pool3d
from ember.nn._functional.pooling import (
    max_pool3d_with_indices as max_pool3d_with_indices,
)
from ember.nn._functional.pooling import max_unpool1d as max_unpool1d  # noqa: E402
from ember.nn._functional.pooling import max_unpool2d as max_unpool2d  # noqa: E402
from ember.nn._functional.pooling import max_unpool3d as max_unpool3d  # noqa: E402
from ember.nn._functional.sampling import affine_grid as affine_grid  # noqa: E402
from ember.nn._functional.sampling import grid_sample as grid_sample  # noqa: E402
from ember.nn._functional.sparse import embedding as embedding
from ember.nn._functional.sparse import embedding_bag as embedding_bag
