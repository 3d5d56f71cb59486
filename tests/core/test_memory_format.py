"""Memory formats: the strides clone, contiguous, to and the *_like factories pick, against
PyTorch (values too, and gradients through clone)."""
import pickle

import numpy as np
import pytest
import torch

import ember

LAYOUTS = {
    "contiguous": lambda m: m.arange(24.).view(2, 3, 4),
    "transposed": lambda m: m.arange(6.).view(2, 3).t(),
    "sliced": lambda m: m.arange(24.).view(2, 3, 4)[:, ::2],
    "permuted": lambda m: m.arange(24.).view(2, 3, 4).permute(2, 0, 1),
    "permuted_sliced": lambda m: m.arange(48.).view(2, 3, 8).permute(2, 0, 1)[::2],
    "expanded": lambda m: m.arange(3.).view(3, 1).expand(3, 4),
    "size_one": lambda m: m.arange(6.).view(2, 1, 3).transpose(0, 2),
    "nchw": lambda m: m.arange(120.).view(2, 3, 4, 5),
    "nhwc": lambda m: m.arange(120.).view(2, 4, 5, 3).permute(0, 3, 1, 2),
    "ncdhw": lambda m: m.arange(48.).view(1, 2, 3, 4, 2),
    "empty": lambda m: m.zeros(0, 3).t(),
}


def _fmt(m, name):
    return None if name is None else getattr(m, name)


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("fmt", [None, "preserve_format", "contiguous_format", "channels_last",
                                 "channels_last_3d"])
def test_strides_match_torch(layout, fmt):
    e, t = LAYOUTS[layout](ember), LAYOUTS[layout](torch)
    rank = {"channels_last": 4, "channels_last_3d": 5}.get(fmt)
    if rank is not None and t.dim() != rank:
        with pytest.raises(RuntimeError, match=f"required rank {rank} tensor"):
            e.clone(memory_format=_fmt(ember, fmt))
        return
    kw_e = {} if fmt is None else {"memory_format": _fmt(ember, fmt)}
    kw_t = {} if fmt is None else {"memory_format": _fmt(torch, fmt)}
    for name in ("clone", "empty_like", "zeros_like", "ones_like", "rand_like"):
        if name == "clone":
            re_, rt = e.clone(**kw_e), t.clone(**kw_t)
        else:
            re_, rt = getattr(ember, name)(e, **kw_e), getattr(torch, name)(t, **kw_t)
        assert re_.stride() == rt.stride(), name
        if name in ("clone", "zeros_like", "ones_like"):
            assert re_.tolist() == rt.tolist()
    if fmt != "preserve_format":
        ce, ct = e.contiguous(**kw_e), t.contiguous(**kw_t)
        assert ce.tolist() == ct.tolist()
        if layout != "empty":           # ember copies an empty tensor to plain strides (kernels
            assert ce.stride() == ct.stride()     # check them); torch returns it as is
            assert (ce is e) == (ct is t)
        te, tt = e.to(ember.float64, **kw_e), t.to(torch.float64, **kw_t)
        if fmt is not None:
            assert te.stride() == tt.stride()
        assert te.tolist() == tt.tolist()
    for check in ("contiguous_format", "channels_last", "channels_last_3d"):
        assert e.is_contiguous(memory_format=_fmt(ember, check)) == \
            t.is_contiguous(memory_format=_fmt(torch, check)), check
    assert e.is_contiguous() == t.is_contiguous()


def test_empty_with_memory_format():
    for shape, fmt in (((2, 3, 4, 5), "channels_last"), ((2, 3, 4, 5, 6), "channels_last_3d"),
                       ((2, 3), "contiguous_format")):
        e = ember.empty(*shape, memory_format=getattr(ember, fmt))
        t = torch.empty(*shape, memory_format=getattr(torch, fmt))
        assert e.stride() == t.stride()
    with pytest.raises(RuntimeError, match="required rank 4"):
        ember.empty(2, 3, memory_format=ember.channels_last)


def test_clone_keeps_gradients_and_data():
    a = ember.tensor(np.arange(24.).reshape(2, 3, 4), requires_grad=True)
    b = (a * 2).permute(2, 0, 1).clone()
    assert b.stride() == (1, 12, 4)
    w = ember.tensor(np.arange(24.).reshape(4, 2, 3))
    (b * w).sum().backward()
    assert a.grad.tolist() == (2 * torch.arange(24.).view(4, 2, 3).permute(1, 2, 0)).tolist()


def test_constants():
    assert repr(ember.channels_last) == "ember.channels_last"
    assert isinstance(ember.preserve_format, ember.memory_format)
    assert pickle.loads(pickle.dumps(ember.channels_last)) is ember.channels_last
    with pytest.raises(TypeError, match="memory_format"):
        ember.ones(2).clone(memory_format="channels_last")
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
        ember.ones(2).is_contiguous(memory_format=ember.preserve_format)


def test_empty_tensors_are_contiguous_like_torch():
    assert ember.from_numpy(np.zeros((0, 3))).is_contiguous()
    assert ember.zeros(0, 3).t().is_contiguous() == torch.zeros(0, 3).t().is_contiguous()
