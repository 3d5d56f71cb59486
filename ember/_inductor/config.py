"""Options of ember's "inductor" backend (``ember.compile(..., options={...})``, or set here
as ``ember._inductor.config.<name> = value``).

ember's names: ``fuse`` (False: run the captured ops one by one), ``debug`` (print each
wrapper and kernel source).  PyTorch's knobs that choose things ember's code generators do
not have (autotuning, CUDA graphs, Triton, tracing, its FX graph cache) are here with
PyTorch's defaults, accepted and ignored, so scripts that set them (``coordinate_descent_
tuning``, ``triton.unique_kernel_names``, ``fx_graph_cache``) run unchanged.
"""
fuse = True
debug = False

# PyTorch's knobs: accepted, ignored
max_autotune = False
max_autotune_pointwise = False
max_autotune_gemm = False
epilogue_fusion = True
coordinate_descent_tuning = False
shape_padding = True
freezing = False
cpp_wrapper = False
aggressive_fusion = False
benchmark_kernel = False
fx_graph_cache = True
force_disable_caches = False


class triton:
    """``config.triton.*``: Triton and CUDA-graph knobs (ember generates no Triton)."""

    cudagraphs = False
    cudagraph_trees = True
    unique_kernel_names = False
    descriptive_names = "original_aten"


class trace:
    """``config.trace.*``: PyTorch's debug trace folder (ember prints with ``debug``)."""

    enabled = False
    graph_diagram = False


_ACCEPTED = ("max_autotune", "max_autotune_pointwise", "max_autotune_gemm", "epilogue_fusion",
             "coordinate_descent_tuning", "shape_padding", "triton.cudagraphs",
             "triton.cudagraph_trees", "triton.unique_kernel_names", "trace.enabled",
             "trace.graph_diagram", "freezing", "cpp_wrapper", "aggressive_fusion",
             "benchmark_kernel", "fx_graph_cache", "force_disable_caches")


def known_options():
    return ["fuse", "debug", *_ACCEPTED]
