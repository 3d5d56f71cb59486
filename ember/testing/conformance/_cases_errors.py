"""Cases of the error contract: a data error found by a kernel (an index out of range, a
bad probability) becomes PyTorch's exception with its message, never a crash; an
asynchronous device may report it at the next synchronising call (``.cpu()``,
``.item()``, its runtime's ``synchronize()``), still as that exception, and works
afterwards; an unknown op code is "not implemented"."""
import pytest

import ember
from ember.testing.conformance._case import ANY, case
from ember.testing.conformance._data import read


def _sync(t):
    """Reads a result, so an asynchronous device reports a data error here."""
    read(t)


def _still_works(device):
    assert (ember.ones(2, device=device) + 1).tolist() == [2.0, 2.0], \
        "the device does not work after an error"


ERRORS = {
    "gather_index": (IndexError, "index 5 is out of bounds for dimension 0 with size 3",
                     lambda d: ember.gather(ember.arange(3, device=d), 0,
                                            ember.tensor([0, 5], device=d))),
    # negative indices: gather and index_select do not wrap them (take and x[i] do)
    "gather_negative": (RuntimeError, "index -1 is out of bounds for dimension 0 with size 3",
                        lambda d: ember.gather(ember.arange(3, device=d), 0,
                                               ember.tensor([0, -1], device=d))),
    "index_select_negative": (IndexError, "index -1 is out of bounds for dimension 0",
                              lambda d: ember.index_select(ember.arange(3, device=d), 0,
                                                           ember.tensor([-1], device=d))),
    "scatter_index": (IndexError, "index -1 is out of bounds for dimension 0 with size 3",
                      lambda d: ember.zeros(3, device=d).scatter_add(
                          0, ember.tensor([-1], device=d), ember.ones(1, device=d))),
    "multinomial_negative": (RuntimeError, "probability tensor contains either `inf`, `nan` "
                             "or element < 0",
                             lambda d: ember.multinomial(ember.tensor([0.5, -1.0], device=d),
                                                         2, replacement=True)),
    "multinomial_zero": (RuntimeError, r"invalid multinomial distribution \(sum of "
                         r"probabilities <= 0\)",
                         lambda d: ember.multinomial(ember.zeros(3, device=d), 1)),
    "nll_target": (IndexError, "Target 7 is out of bounds",
                   lambda d: ember.nn.functional.nll_loss(ember.zeros(2, 3, device=d),
                                                          ember.tensor([0, 7], device=d))),
    "int_divide_by_zero": (RuntimeError, "ZeroDivisionError",
                           lambda d: ember.remainder(ember.tensor([3, 4], device=d),
                                                     ember.tensor([1, 0], device=d))),
}


@case("errors", "errors", (ANY,), tuple(ERRORS))
def _errors(device, dtype, variant):
    exc, msg, fn = ERRORS[variant]
    with pytest.raises(exc, match=msg):
        _sync(fn(device))
    _still_works(device)


# --- an index out of range, reported by the op or at a later synchronising call ----------
# op: (PyTorch's exception type, message, call on x = arange(4.) and a bad index [1, 6])

SYNC_OPS = {
    "gather": (RuntimeError, "index 6 is out of bounds for dimension 0 with size 4",
               lambda x, i: ember.gather(x, 0, i)),
    "index_select": (IndexError, "index 6 is out of bounds for dimension 0 with size 4",
                     lambda x, i: ember.index_select(x, 0, i)),
    "index_select_dim1": (RuntimeError, "index 6 is out of bounds for dimension 1 with size 4",
                          lambda x, i: ember.index_select(x.reshape(1, 4), 1, i)),
    "take": (IndexError, "index 6 is out of bounds", lambda x, i: ember.take(x, i)),
    "getitem": (IndexError, "index 6 is out of bounds for dimension 0 with size 4",
                lambda x, i: x[i]),
    "setitem": (IndexError, "index 6 is out of bounds for dimension 0 with size 4",
                lambda x, i: x.clone().index_put_((i,), ember.ones((), device=x.device))),
    "scatter": (RuntimeError, "index 6 is out of bounds for dimension 0 with size 4",
                lambda x, i: ember.zeros_like(x).scatter(0, i, x[:2])),
}
# how the result is read: the op's own result to the host, a reduction of it to a Python
# number, or the runtime's synchronize() after a further op
SYNCS = {
    "cpu": lambda y, mod: y.cpu(),
    "item": lambda y, mod: (y * 2).sum().item(),
    "synchronize": lambda y, mod: (y + 1, mod.synchronize()),
}


@case("errors", "sync", (ANY,), tuple(f"{op}-{s}" for op in SYNC_OPS for s in SYNCS))
def _sync_errors(device, dtype, variant):
    op, how = variant.rsplit("-", 1)
    exc, msg, fn = SYNC_OPS[op]
    mod = ember.get_device_module(ember.device(device).type)
    x = ember.arange(4.0, device=device)
    with pytest.raises(exc, match=msg):
        SYNCS[how](fn(x, ember.tensor([1, 6], device=device)), mod)
    mod.synchronize()                        # reported once: nothing left to raise
    _still_works(device)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0], f"{op}: the bad index wrote into its input"


@case("errors", "unknown_op", (ANY,), ("every_entry",))
def _unknown_op(device, dtype, variant):
    """An op code no ABI version defines is always "not implemented" (so the core falls
    back), never another error: called on each op-coded entry the device sets."""
    from ember.core import _device, _fallback
    answers = _fallback.unknown_op_answers(_device._backend_for_type(ember.device(device).type))
    wrong = {e: a for e, a in answers.items() if a[0] != 5}      # EMBER_ERR_NOT_IMPLEMENTED
    assert not wrong, f"entries answering an unknown op code with (code, message): {wrong}"
