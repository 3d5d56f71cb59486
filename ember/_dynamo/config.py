"""Settings of ``ember.compile``'s capture (``torch._dynamo.config``)."""

# how many graphs one compiled function keeps for different guards before it runs eagerly
# (with one warning saying why)
recompile_limit = 8
cache_size_limit = recompile_limit          # the older name of the same setting
# a size that changes once makes that dimension symbolic for the next capture
# (torch.compile(dynamic=None))
automatic_dynamic_shapes = True
# graph breaks and capture failures run the call eagerly; set True to see them raised
suppress_errors = True
# watch the traced Python for side effects the graph cannot replay (print, global writes,
# Python's random and time functions) and run such calls eagerly
detect_side_effects = True
verbose = False
