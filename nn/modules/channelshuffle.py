"""ChannelShuffle (``torch.nn.modules.channelshuffle``)."""
from ember.nn._functional.pixel_shuffle import channel_shuffle

from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Interleave the channels of ``groups`` groups: [N, g * k, *] -> [N, k * g, *]."""

    __constants__ = ["groups"]

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
