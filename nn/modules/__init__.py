"""The layer classes of ember.nn (``torch.nn.modules``), one module per family."""
from ember.nn.modules import (
                              activation,
                              batchnorm,
                              container,
                              conv,
                              dropout,
                              flatten,
                              linear,
                              loss,
                              normalization,
                              pooling,
                              sparse,
)
from ember.nn.modules.activation import *  # noqa: F403
from ember.nn.modules.batchnorm import *  # noqa: F403
from ember.nn.modules.container import *  # noqa: F403
from ember.nn.modules.conv import *  # noqa: F403
from ember.nn.modules.dropout import *  # noqa: F403
from ember.nn.modules.flatten import *  # noqa: F403
from ember.nn.modules.linear import *  # noqa: F403
from ember.nn.modules.loss import *  # noqa: F403
from ember.nn.modules.module import Module as Module
from ember.nn.modules.normalization import *  # noqa: F403
from ember.nn.modules.pooling import *  # noqa: F403
from ember.nn.modules.sparse import *  # noqa: F403

# explicit, so `from ember.nn.modules import *` never exports submodules such as `utils`
# (which would shadow ember.nn.utils)
__all__ = ["Module"] + [name for family in (activation, batchnorm, container, conv, dropout,
                                            flatten, linear, loss, normalization, pooling,
                                            sparse) for name in family.__all__]
from ember.nn.modules import rnn  # noqa: E402
from ember.nn.modules.rnn import *  # noqa: E402, F403

__all__ += rnn.__all__

# distances
from ember.nn.modules import distance  # noqa: E402
from ember.nn.modules.distance import *  # noqa: E402, F403

__all__ += distance.__all__

from ember.nn.modules import attention, transformer  # noqa: E402
from ember.nn.modules.attention import *  # noqa: E402, F403
from ember.nn.modules.transformer import *  # noqa: E402, F403

__all__ += attention.__all__
__all__ += transformer.__all__
from ember.nn.modules import fold  # noqa: E402
from ember.nn.modules.fold import *  # noqa: E402,F403

__all__ += fold.__all__
from ember.nn.modules import upsampling  # noqa: E402
from ember.nn.modules.upsampling import *  # noqa: E402,F403

__all__ += upsampling.__all__
from ember.nn.modules import pixelshuffle  # noqa: E402
from ember.nn.modules.pixelshuffle import *  # noqa: E402,F403

__all__ += pixelshuffle.__all__
from ember.nn.modules import lazy  # noqa: E402
from ember.nn.modules.lazy import *  # noqa: E402, F403

__all__ += [name for name in lazy.__all__ if name != "LazyModuleMixin"]  # as torch.nn
from ember.nn.modules import instancenorm  # noqa: E402
from ember.nn.modules.instancenorm import *  # noqa: E402, F403

__all__ += instancenorm.__all__
from ember.nn.modules import padding  # noqa: E402
from ember.nn.modules.padding import *  # noqa: E402, F403

__all__ += padding.__all__
from ember.nn.modules import adaptive, channelshuffle, linear_cross_entropy_options  # noqa: E402
from ember.nn.modules.adaptive import *  # noqa: E402, F403
from ember.nn.modules.channelshuffle import *  # noqa: E402, F403
from ember.nn.modules.linear_cross_entropy_options import *  # noqa: E402, F403

__all__ += adaptive.__all__ + channelshuffle.__all__ + linear_cross_entropy_options.__all__
# a class re-exported at PyTorch's module path (lazy convs in conv, losses in loss) is listed
# by both files: once here
__all__ = list(dict.fromkeys(__all__))
