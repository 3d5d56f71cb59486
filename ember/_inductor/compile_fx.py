"""The "inductor" backend."""

__all__ = ["InductorBackend", "compile_fx"]


def compile_fx(gm, example_inputs, config_patches=None):
    return gm.forward


class InductorBackend:
    __name__ = "inductor"

    def __init__(self, mode=None, options=None, dynamic=None):
        self.mode, self.options, self.dynamic = mode, dict(options or {}), dynamic

    def __call__(self, gm, example_inputs):
        return compile_fx(gm, example_inputs, self.options)
