"""Settings of ``ember.compile``'s capture (``torch._dynamo.config``)."""

# how many graphs one compiled function keeps for different guards before it runs eagerly
# (with one warning saying why)
recompile_limit = 8
cache_size_limit = recompile_limit          # the older name of the same setting
# a size that changes once makes that dimension symbolic for the next capture
# (torch.compile(dynamic=None))
automatic_dynamic_shapes = True
# a backend that fails to compile a graph raises BackendCompilerFailed; True: warn and run
# calls like that one eagerly (graph breaks run eagerly either way)
suppress_errors = False
# watch the traced Python for side effects the graph cannot replay (print, global writes,
# Python's random and time functions) and run such calls eagerly
detect_side_effects = True
verbose = False
# PyTorch's knobs for what ember's capture does not have (DDP graph splitting, Python
# scalars and data-dependent output shapes in graphs, the process-wide cache limit): accepted,
# ignored
optimize_ddp = True
accumulated_cache_size_limit = 256
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
inline_inbuilt_nn_modules = True
