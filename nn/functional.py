"""ember.nn.functional: a thin re-export façade over the implementation modules in
nn/_functional/ (one block per concern)."""

# norms, losses, padding, attention
from ember.nn._functional.attention import (
    scaled_dot_product_attention as scaled_dot_product_attention,
)
from ember.nn._functional.loss import binary_cross_entropy as binary_cross_entropy
from ember.nn._functional.loss import (
    binary_cross_entropy_with_logits as binary_cross_entropy_with_logits,
)
from ember.nn._functional.loss import cross_entropy as cross_entropy
from ember.nn._functional.loss import kl_div as kl_div
from ember.nn._functional.loss import l1_loss as l1_loss
from ember.nn._functional.loss import mse_loss as mse_loss
from ember.nn._functional.loss import nll_loss as nll_loss
from ember.nn._functional.loss import smooth_l1_loss as smooth_l1_loss
from ember.nn._functional.norm import batch_norm as batch_norm
from ember.nn._functional.norm import group_norm as group_norm
from ember.nn._functional.norm import layer_norm as layer_norm
from ember.nn._functional.padding import one_hot as one_hot
from ember.nn._functional.padding import pad as pad
