"""Options of ember's "inductor" backend (``ember.compile(..., options={...})``).

ember's names: ``fuse`` (False: run the captured ops one by one), ``debug`` (print each
wrapper and kernel source).  PyTorch's option names that choose things ember's CPU code
generator does not have (autotuning, CUDA graphs, tracing) are accepted and ignored, so
scripts written for PyTorch run unchanged.
"""
fuse = True
debug = False

_ACCEPTED = ("max_autotune", "max_autotune_pointwise", "max_autotune_gemm", "epilogue_fusion",
             "coordinate_descent_tuning", "shape_padding", "triton.cudagraphs",
             "triton.cudagraph_trees", "trace.enabled", "trace.graph_diagram",
             "freezing", "cpp_wrapper", "aggressive_fusion", "benchmark_kernel")


def known_options():
    return ["fuse", "debug", *_ACCEPTED]
