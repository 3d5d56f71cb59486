"""core/_errors.py: the validation vocabulary.  An argument that must be a Tensor gets
PyTorch's TypeError from one helper, ``_tensor_arg`` (its text from ``_arg_type_message``),
and no module of ember writes that message by hand."""
import re
from pathlib import Path

import ember.nn.functional as EF
import pytest
import torch
import torch.nn.functional as F
from ember.core._errors import _arg_type_message, _tensor_arg

import ember

ROOT = Path(__file__).resolve().parents[2]


def test_tensor_arg_returns_a_tensor_unchanged():
    t = ember.ones(2)
    assert _tensor_arg(t, "op") is t


@pytest.mark.parametrize("args,msg", [
    (("op",), "op(): argument 'input' must be Tensor, not int"),
    (("op", "other"), "op(): argument 'other' must be Tensor, not int"),
    (("op", "other", 2), "op(): argument 'other' (position 2) must be Tensor, not int"),
])
def test_tensor_arg_message(args, msg):
    with pytest.raises(TypeError) as e:
        _tensor_arg(3, *args)
    assert str(e.value) == msg


def test_arg_type_message_names_what_was_expected():
    assert _arg_type_message(None, "where", "other", expected="Tensor or Number") == \
        "where(): argument 'other' must be Tensor or Number, not NoneType"


def message(fn):
    with pytest.raises(TypeError) as e:
        fn()
    return str(e.value)


# (ember call, torch call): a bad argument gives the same TypeError text in both
SAME_AS_TORCH = {
    "real": (lambda: ember.real(1.0), lambda: torch.real(1.0)),
    "angle": (lambda: ember.angle(1), lambda: torch.angle(1)),
    "complex": (lambda: ember.complex(1, 2), lambda: torch.complex(1, 2)),
    "logit": (lambda: ember.logit(1), lambda: torch.logit(1)),
    "nansum": (lambda: ember.nansum([1.0]), lambda: torch.nansum([1.0])),
    "dropout": (lambda: EF.dropout(1), lambda: F.dropout(1)),
    "hardtanh": (lambda: EF.hardtanh(1), lambda: F.hardtanh(1)),
    "max_pool2d": (lambda: EF.max_pool2d(1, 2), lambda: F.max_pool2d(1, 2)),
    "pixel_shuffle": (lambda: EF.pixel_shuffle(1, 2), lambda: F.pixel_shuffle(1, 2)),
    "pdist": (lambda: EF.pdist("x"), lambda: F.pdist("x")),
    "cosine_similarity": (lambda: EF.cosine_similarity(ember.ones(2), 1),
                          lambda: F.cosine_similarity(torch.ones(2), 1)),
    "linear": (lambda: EF.linear(ember.ones(2), None), lambda: F.linear(torch.ones(2), None)),
    "bilinear": (lambda: EF.bilinear(1, 2, 3), lambda: F.bilinear(1, 2, 3)),
    "embedding weight": (lambda: EF.embedding(ember.ones(2).long(), 1),
                         lambda: F.embedding(torch.ones(2).long(), 1)),
    "embedding indices": (lambda: EF.embedding(1, ember.ones(2, 2)),
                          lambda: F.embedding(1, torch.ones(2, 2))),
}


@pytest.mark.parametrize("name", sorted(SAME_AS_TORCH))
def test_message_matches_torch(name):
    ours, theirs = SAME_AS_TORCH[name]
    assert message(ours) == message(theirs)


def test_the_cython_checks_use_the_helper():
    """as_tensor_arg (core/_views.pxi), result_type and where keep their own isinstance tests
    but not their own text."""
    assert message(lambda: ember.where(1, ember.ones(1), 0)) == \
        _arg_type_message(1, "where", "condition")
    assert message(lambda: ember.where(ember.ones(1).bool(), "a", 0)) == \
        _arg_type_message("a", "where", "input", expected="Tensor or Number")
    assert message(lambda: ember.result_type(ember.ones(1), "a")) == \
        _arg_type_message("a", "result_type", "tensor2", expected="Tensor or Number")


def sources():
    for folder in ("core", "nn", "optim", "ember", "backends"):
        for p in sorted((ROOT / folder).rglob("*")):
            if p.suffix in (".py", ".pyx", ".pxi", ".pxd") and "build" not in p.parts:
                yield p


def test_no_hand_written_must_be_tensor_message():
    helper = ROOT / "core" / "_errors.py"
    pattern = re.compile(r"must be Tensor")
    found = [f"{p.relative_to(ROOT)}:{i}" for p in sources() if p != helper
             for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
             if pattern.search(line)]
    assert len(list(sources())) > 100          # the scan sees the source tree
    assert not found, "write the message with core._errors._tensor_arg: " + ", ".join(found)


def test_wrong_type_names_the_type_as_pytorch_does():
    """CPython's tp_name: a C type with its module (numpy.ndarray), builtins bare."""
    import numpy as np
    import torch
    for value in (np.zeros(2), np.float32(1), [1], None):
        with pytest.raises(TypeError) as got:
            ember.exp(value)
        with pytest.raises(TypeError) as want:
            torch.exp(value)
        assert str(got.value).split(", not ")[1] == str(want.value).split(", not ")[1]


@pytest.mark.parametrize("fn", ["_is_all_true", "_is_any_true"])
@pytest.mark.parametrize("values", [[True, True], [True, False], [False, False], []])
def test_is_all_any_true(fn, values):
    e = getattr(ember, fn)(ember.tensor(values, dtype=ember.bool))
    t = getattr(torch, fn)(torch.tensor(values, dtype=torch.bool))
    assert e.dtype == ember.bool and e.dim() == 0 and e.item() == t.item()
    with pytest.raises(RuntimeError):
        getattr(ember, fn)(ember.tensor([1, 0]))


@pytest.mark.parametrize("rows", [[[1.0, 2.0], [1.0, 2.0]], [[1.0, 2.0], [1.0, -2.0]]])
def test_is_all_true_answers_for_the_whole_vmap_batch(rows):
    # unbatched, so validation code can branch on it inside vmap (as torch's rule does)
    seen = []

    def f(lib):
        def check(x):
            ok = lib._is_all_true(x > 0)
            seen.append(bool(ok))
            return x * ok
        return check
    ember.func.vmap(f(ember))(ember.tensor(rows))
    torch.func.vmap(f(torch))(torch.tensor(rows))
    assert seen[0] == seen[1]
