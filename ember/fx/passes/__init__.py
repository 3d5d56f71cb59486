"""Graph passes: common subexpression elimination (``dialect.common.cse_pass``) and shape
propagation (``shape_prop``); dead code is ``Graph.eliminate_dead_code``."""
