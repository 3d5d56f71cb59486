"""The factories of core/factories.py (eye, linspace, logspace) against PyTorch."""
import pytest


@pytest.mark.parametrize("expr", [
    "F.eye(3)", "F.eye(2, 4)", "F.linspace(0, 1, 5)", "F.linspace(-3, 10, 7)",
    "F.linspace(2, 2, 1)", "F.logspace(0, 2, 3)", "F.linspace(0, 1, 4, dtype=F.float64)",
])
def test_factories_match_torch(expr, device, oracle):
    oracle.expr_matches(expr, device, rtol=1e-5, atol=1e-6)
