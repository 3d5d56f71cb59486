"""Four small, complete research programs written as plain PyTorch code: each module's
``main(torch, phase, steps)`` takes the library as ``torch`` (ember or PyTorch), times its
phases with ``phase(name)`` context managers, and returns its final training loss.
``bench_programs.py`` runs them side by side."""
