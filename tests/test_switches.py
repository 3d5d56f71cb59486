"""The façade's small global switches, each read back; ember.random and __config__."""
import pytest

import ember


def test_float32_matmul_precision():
    assert ember.get_float32_matmul_precision() == "highest"
    try:
        for p in ("high", "medium", "highest"):
            ember.set_float32_matmul_precision(p)
            assert ember.get_float32_matmul_precision() == p
        with pytest.raises(ValueError, match="'highest', 'high', 'medium'"):
            ember.set_float32_matmul_precision("fast")
    finally:
        ember.set_float32_matmul_precision("highest")


def test_warn_always():
    assert not ember.is_warn_always_enabled()
    ember.set_warn_always(True)
    assert ember.is_warn_always_enabled()
    ember.set_warn_always(False)
    assert not ember.is_warn_always_enabled()


def test_printoptions_match_torch():
    import torch
    from ember.core._formatting import get_printoptions
    values = [[1.23456789, 2.5, -3.0], [1e-3, 7.0, 8.25]]
    cases = [dict(precision=2), dict(sci_mode=True), dict(profile="short"),
             dict(threshold=5, edgeitems=1), dict(linewidth=20)]
    try:
        for kw in cases:
            torch.set_printoptions(**kw)
            ember.set_printoptions(**kw)
            assert repr(ember.tensor(values)) == repr(torch.tensor(values)), kw
            torch.set_printoptions(profile="default")
            ember.set_printoptions(profile="default")
        assert get_printoptions()["precision"] == 4
        with pytest.raises(ValueError):
            ember.set_printoptions(profile="loud")
    finally:
        torch.set_printoptions(profile="default")
        ember.set_printoptions(profile="default")


def test_rng_state_round_trip_and_fork_rng():
    ember.manual_seed(5)
    assert ember.initial_seed() == 5
    state = ember.get_rng_state()
    a = ember.rand(4)
    ember.set_rng_state(state)
    assert ember.equal(a, ember.rand(4))
    state = ember.random.get_rng_state()
    with ember.random.fork_rng():
        ember.manual_seed(123)
        ember.rand(10)
    assert ember.equal(ember.random.get_rng_state(), state)
    with ember.random.fork_rng(enabled=False):
        ember.rand(1)
    assert not ember.equal(ember.random.get_rng_state(), state)


def test_config_show_lists_build_and_plugins():
    text = ember.__config__.show()
    assert "ember " + ember.__version__ in text
    assert "plugin cpu" in text and "OpenMP" in text
    assert "ember.get_num_threads()" in ember.__config__.parallel_info()
