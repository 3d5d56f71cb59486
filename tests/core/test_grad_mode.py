"""Grad modes (core/grad_mode.py) as decorators the ways PyTorch takes them: bare, called,
and on generator functions (each step runs in the mode)."""
import pytest
import torch

import ember


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_decorators_bare_called_and_on_generators(lib):
    x = lib.ones(2, requires_grad=True)

    @lib.no_grad
    def bare():
        return (x * 2).requires_grad

    @lib.enable_grad
    def enabled():
        return (x * 2).requires_grad

    @lib.inference_mode
    def inference():
        return lib.is_inference_mode_enabled()

    @lib.inference_mode(False)
    def not_inference():
        return lib.is_inference_mode_enabled()

    @lib.no_grad()
    def steps():
        got = yield (x * 2).requires_grad
        yield got, (x * 3).requires_grad

    assert bare() is False and enabled() is True
    assert inference() is True and not_inference() is False
    with lib.no_grad():
        assert enabled() is True
    gen = steps()
    assert next(gen) is False
    assert (x * 2).requires_grad                    # outside the steps: recording again
    assert gen.send("sent") == ("sent", False)
    assert isinstance(lib.no_grad(), lib.no_grad)


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_a_view_made_under_no_grad_refuses_writes_with_grad_on(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 1
    with lib.no_grad():
        v, w = x[:2], y[:2]
        v.mul_(2)                                   # both inside: allowed, untracked
    for view in (v, w, w[:1]):                      # a view of such a view too
        with pytest.raises(RuntimeError, match="created in no_grad mode"):
            view.mul_(2)
    assert x.tolist() == [2., 2., 1.]
    z = lib.ones(3)                                 # no grad involved: writes are fine
    with lib.no_grad():
        u = z[:2]
    u.add_(1)
    assert z.tolist() == [2., 2., 1.]
