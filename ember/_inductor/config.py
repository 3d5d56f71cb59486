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


def known_options():
    """The option names ``options={...}`` takes: ember's and PyTorch's knobs above
    (``triton.cudagraphs`` for the nested ones)."""
    names = [n for n, v in globals().items() if not n.startswith("_") and
             isinstance(v, (bool, int, str))]
    for group in (triton, trace):
        names += [f"{group.__name__}.{n}" for n, v in vars(group).items()
                  if not n.startswith("_")]
    return names
