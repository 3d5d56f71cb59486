"""``ember.testing``: assert_close and make_tensor, as in torch.testing."""
from ember.testing._comparison import assert_allclose as assert_allclose
from ember.testing._comparison import assert_close as assert_close
from ember.testing._creation import make_tensor as make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
