"""``ember.backends.cuda``: PyTorch's CUDA flags.  They import and can be set with no CUDA
plugin installed; a CUDA plugin reads them when it runs a matmul."""
from ember.core import switches

__all__ = ["is_built", "matmul"]


def is_built():
    """Whether a CUDA plugin is installed (PyTorch: whether it was built with CUDA)."""
    from ember.core._device import _backend_for_type
    b = _backend_for_type("cuda")
    return b is not None and b.plugin is not None


class cuBLASModule:
    """``ember.backends.cuda.matmul``: ``allow_tf32`` is float32 matmul precision seen as a
    flag (True: "high", False: "highest"), as in PyTorch; the reduced-precision reduction
    flags are plain settings a plugin reads."""
    _FLAGS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction",
              "allow_fp16_accumulation")

    def __init__(self):
        object.__setattr__(self, "_values", {"allow_fp16_reduced_precision_reduction": True,
                                             "allow_bf16_reduced_precision_reduction": True,
                                             "allow_fp16_accumulation": False})

    def __getattr__(self, name):
        if name == "allow_tf32":
            return switches.get_float32_matmul_precision() != "highest"
        if name in self._FLAGS:
            return self._values[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            switches.set_float32_matmul_precision("high" if value else "highest")
        elif name in self._FLAGS:
            self._values[name] = bool(value)
        else:
            raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()
