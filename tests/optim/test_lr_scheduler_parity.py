"""ember.optim.lr_scheduler details against torch: state_dict key sets, the get_lr warning
outside step, the resume KeyError message and the _LRScheduler alias."""
import warnings

import pytest
import torch

import ember


def _opt(lib):
    return lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=0.1, momentum=0.9)


_MAKERS = {
    "step": lambda lib, o: lib.optim.lr_scheduler.StepLR(o, 3),
    "cos": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingLR(o, 10),
    "cwr": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 5, 2),
    "cyclic": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, 4),
    "onecycle": lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=20),
    "lambda": lambda lib, o: lib.optim.lr_scheduler.LambdaLR(o, lambda e: 0.9 ** e),
    "seq": lambda lib, o: lib.optim.lr_scheduler.SequentialLR(
        o, [lib.optim.lr_scheduler.LinearLR(o), lib.optim.lr_scheduler.ExponentialLR(o, 0.9)],
        [3]),
    "swalr": lambda lib, o: lib.optim.swa_utils.SWALR(o, 0.05),
}


def _keys(state):
    keys = sorted(state)
    if "_schedulers" in state:
        keys.append([_keys(s) for s in state["_schedulers"]])
    return keys


@pytest.mark.parametrize("name", sorted(_MAKERS))
def test_state_dict_keys_match_torch(name):
    found = []
    for lib in (ember, torch):
        o = _opt(lib)
        s = _MAKERS[name](lib, o)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(4):
                o.step()
                s.step()
        found.append(_keys(s.state_dict()))
    assert found[0] == found[1]


@pytest.mark.parametrize("name", sorted(_MAKERS))
def test_get_lr_outside_step_warns_like_torch(name):
    caught = []
    for lib in (ember, torch):
        s = _MAKERS[name](lib, _opt(lib))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            if name != "seq":
                s.get_lr()
        caught.append([(x.category, str(x.message)) for x in w])
    assert caught[0] == caught[1]


def test_resume_without_initial_lr_message():
    msgs = []
    for lib in (ember, torch):
        with pytest.raises(KeyError) as info:
            lib.optim.lr_scheduler.StepLR(_opt(lib), 3, last_epoch=5)
        msgs.append(info.value.args[0])
    assert msgs[0] == msgs[1]


def test_deprecated_lrscheduler_is_a_subclass():
    for lib in (ember, torch):
        sched = lib.optim.lr_scheduler
        assert sched._LRScheduler is not sched.LRScheduler
        assert issubclass(sched._LRScheduler, sched.LRScheduler)
