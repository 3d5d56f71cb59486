"""Experimental fx pieces: symbolic scalars (``sym_node``) and shape environments
(``symbolic_shapes``).  Both import SymPy, so import them on first use."""
