"""ember.linalg: vector norms so far; the LAPACK-backed ops arrive with the op catalogue."""
from ember.core.composites import vector_norm as vector_norm

__all__ = ["vector_norm"]
