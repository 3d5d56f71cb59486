"""ember.Tensor is declared, not patched: its methods come from its class body and from
mixin bases declared beside their ops (core/tensor.py), never from attributes set on the
class after it is made."""
import re
from pathlib import Path

import numpy as np
from ember.core._tensor import TensorBase
from ember.core.storages import StorageMethods
from ember.core.tensor import ABOVE_CORE, CompositeMethods

import ember

ROOT = Path(__file__).resolve().parents[2]
PATCH = re.compile(r"setattr\(\s*(ember\.)?Tensor\b|^\s*(ember\.)?Tensor\.\w+(\s*,\s*[\w.]+)*\s*=",
                   re.M)


def test_no_source_sets_attributes_on_the_tensor_class():
    found = [f"{p.relative_to(ROOT)}:{text[:m.start()].count(chr(10)) + 1}"
             for folder in ("core", "ember", "nn", "optim", "distributed", "backends")
             for p in sorted((ROOT / folder).rglob("*.py")) if "build" not in p.parts
             for text in (p.read_text(),) for m in PATCH.finditer(text)]
    assert found == []


def test_the_scanner_sees_a_patch():
    assert PATCH.search("x = 1\nTensor.foo = bar\n")
    assert PATCH.search("    setattr(Tensor, name, fn)")
    assert not PATCH.search("y = Tensor.foo")


def test_the_mixins_add_no_instance_dict():
    for cls in ember.Tensor.__mro__:
        if cls not in (object, TensorBase):
            assert cls.__dict__.get("__slots__") == (), cls
    assert ember.Tensor.__basicsize__ == TensorBase.__basicsize__
    assert ember.Tensor.__dictoffset__ == TensorBase.__dictoffset__


def test_the_bases_order_the_methods_as_pytorch_spells_them():
    T = ember.Tensor
    assert issubclass(T, CompositeMethods)
    # an alias is its target; an alias's in-place form the target's
    assert T.arccos is T.acos and T.arccos_ is T.acos_
    assert T.divide is T.div and T.multiply_ is not None
    assert T.untyped_storage is StorageMethods.untyped_storage
    # TensorBase right after Tensor: Cython's type checks walk the MRO to it on every op
    assert T.__mro__[1] is TensorBase


def test_methods_above_the_core_reach_the_facade():
    assert set(ABOVE_CORE) == {"stft", "istft"}
    x = ember.from_numpy(np.sin(np.arange(64) / 3.0))
    spec = x.stft(16, window=ember.hann_window(16, dtype=ember.float64), return_complex=True)
    assert spec.shape == (9, 17)           # hop n_fft // 4, centred
    back = spec.istft(16, window=ember.hann_window(16, dtype=ember.float64), length=64)
    np.testing.assert_allclose(back.numpy(), x.numpy(), atol=1e-12)
    hist, edges = x.histogram(4)
    assert hist.sum().item() == 64 and edges.shape == (5,)
    assert ember.tensor([1.0, -0.2]).hardshrink(0.5).tolist() == [1.0, 0.0]
    assert x.hash_tensor().dtype == ember.uint64
