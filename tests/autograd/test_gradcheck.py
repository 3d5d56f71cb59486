"""gradcheck over complex inputs and outputs: checked as the real map of their (real,
imag) pairs, so a gradient that misses PyTorch's conjugation is caught."""
import pytest

import ember
from ember.autograd import Function, gradcheck, gradgradcheck


class _SquareWithoutConj(Function):
    """z^2 whose backward forgets the conjugate: g 2z instead of g conj(2z)."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, g):
        z, = ctx.saved_tensors
        return g * 2 * z


def _z(n=5, seed=0):
    g = ember.Generator().manual_seed(seed)
    return ember.randn(n, dtype=ember.complex128, generator=g).requires_grad_()


@pytest.mark.parametrize("fn", [
    lambda z: z.exp() * z.tanh() / (z + 3),
    lambda z: z.sigmoid() * z.sqrt() + z.log1p(),
    lambda z: z.abs() + z.angle(),                      # complex in, real out
    lambda z: z.sgn(),
    lambda z: ember.fft.fft(z),
    lambda z: ember.fft.irfft(z),
    lambda z: (z.reshape(1, 5) @ z.reshape(5, 1).conj()).sum(),
])
def test_complex_functions_pass(fn):
    assert gradcheck(fn, (_z(),))


def test_real_inputs_of_complex_outputs_are_checked_with_forward_mode():
    x = ember.randn(6, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda x: ember.fft.rfft(x), (x,), check_forward_ad=True)
    assert gradgradcheck(lambda z: (z * z).exp(), (_z(),))


def test_a_missing_conjugation_is_caught():
    assert not gradcheck(_SquareWithoutConj.apply, (_z(),), raise_exception=False)
    assert gradcheck(_SquareWithoutConj.apply, (_z().real.detach().requires_grad_(),))
