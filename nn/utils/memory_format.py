"""Weight memory formats of convolution layers (``torch.nn.utils.memory_format``)."""
__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, classes):
    if isinstance(module, classes):
        weight = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = weight
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Give the weight of every Conv2d/ConvTranspose2d in ``module`` (recursively) the
    ``memory_format`` (e.g. ``channels_last``); returns ``module``."""
    from ember.nn.modules.conv import Conv2d, ConvTranspose2d
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Give the weight of every Conv3d/ConvTranspose3d in ``module`` (recursively) the
    ``memory_format`` (e.g. ``channels_last_3d``); returns ``module``."""
    from ember.nn.modules.conv import Conv3d, ConvTranspose3d
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
