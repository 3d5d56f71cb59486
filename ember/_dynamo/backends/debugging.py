"""Backends that generate no code: the captured graphs run as they are."""
from ember._dynamo.backends.registry import register_backend

__all__ = ["aot_eager", "eager"]


@register_backend(tags=("debug",))
def eager(gm, example_inputs):
    """Run the captured graph's generated Python (each node an ember op)."""
    return gm.forward


@register_backend(tags=("debug",))
def aot_eager(gm, example_inputs):
    """As ``eager``: ember always captures training as a forward and a backward graph
    (PyTorch's AOTAutograd), and this runs both as they are."""
    return gm.forward
