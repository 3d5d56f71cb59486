"""conv3d, conv_transpose1d/2d/3d and their layers (Conv3d, ConvTranspose1d/2d/3d with
output_size=), and the conv layers' padding modes, against PyTorch 2.13: forward and the
gradients of input, weight and bias over strides, paddings, dilations, groups and
output_padding, float32/float64, unbatched inputs, and errors (type and message)."""
import ember.nn as enn
import ember.nn.functional as EF
import pytest

import ember


def _tol(dtype):
    """Convolutions sum many products: looser than the elementwise default."""
    return 1e-4 if dtype == ember.float32 else 1e-10


CONV3D = [
    dict(),
    dict(stride=2, padding=1),
    dict(stride=(1, 2, 3), padding=(2, 0, 1), dilation=(2, 1, 1)),
    dict(padding="same", dilation=(1, 2, 1)),
    dict(padding="valid", groups=2),
    dict(stride=2, padding=2, dilation=2, groups=2),
]


@pytest.mark.parametrize("kw", CONV3D)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("bias", [True, False])
def test_conv3d(compare_functional, oracle, device, kw, dtype, bias):
    g = kw.get("groups", 1)
    compare_functional(oracle, device, "conv3d",
                       [(2, 4, 5, 6, 5), (6, 4 // g, 3, 2, 2), (6,) if bias else None], dtype,
                       tol=_tol(dtype), **kw)


def test_conv3d_unbatched_and_top_level(compare_functional, oracle, device):
    compare_functional(oracle, device, "conv3d", [(2, 4, 5, 3), (3, 2, 2, 3, 1), (3,)],
                       ember.float64, tol=_tol(ember.float64), padding=1)
    assert ember.conv3d is EF.conv3d


TRANSPOSED = [
    (1, dict()),
    (1, dict(stride=3, padding=2, output_padding=1, dilation=2)),
    (1, dict(stride=2, groups=2, output_padding=1)),
    (2, dict()),
    (2, dict(stride=2, padding=1, output_padding=1)),
    (2, dict(stride=(2, 3), padding=(0, 2), output_padding=(1, 2), dilation=(2, 1))),
    (2, dict(stride=1, padding=3, dilation=2, output_padding=1, groups=2)),
    (3, dict()),
    (3, dict(stride=(1, 2, 2), padding=(1, 0, 1), output_padding=(0, 1, 1), groups=2)),
    (3, dict(stride=2, dilation=(1, 2, 1), padding=1)),
]


@pytest.mark.parametrize("nd,kw", TRANSPOSED)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("bias", [True, False])
def test_conv_transpose(compare_functional, oracle, device, nd, kw, dtype, bias):
    g = kw.get("groups", 1)
    spatial, kernel = [4, 5, 3][:nd], [3, 2, 2][:nd]
    compare_functional(oracle, device, f"conv_transpose{nd}d",
                       [[2, 4] + spatial, [4, 6 // g] + kernel, (6,) if bias else None], dtype,
                       tol=_tol(dtype), **kw)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_transpose_unbatched(compare_functional, oracle, device, nd):
    compare_functional(oracle, device, f"conv_transpose{nd}d",
                       [[4] + [3, 4, 2][:nd], [4, 3] + [2] * nd, (3,)], ember.float64,
                       tol=_tol(ember.float64), stride=2, padding=1, output_padding=1)
    assert getattr(ember, f"conv_transpose{nd}d") is getattr(EF, f"conv_transpose{nd}d")


def _x(*shape):
    return ember.randn(*shape)


ERRORS = [
    ("conv_transpose2d", (_x(1, 4, 3, 3), _x(4, 2, 3, 3)), dict(output_padding=1)),
    ("conv_transpose1d", (_x(1, 4, 3), _x(4, 2, 3)), dict(output_padding=1)),
    ("conv_transpose3d", (_x(1, 4, 3, 3, 3), _x(4, 2, 3, 3, 3)),
     dict(output_padding=(1, 0, 0), stride=(1, 2, 2))),
    ("conv_transpose2d", (_x(1, 4, 3, 3), _x(3, 2, 3, 3)), {}),
    ("conv_transpose2d", (_x(1, 4, 3, 3), _x(4, 2, 3, 3)), dict(groups=3)),
    ("conv_transpose2d", (_x(1, 4, 3, 3), _x(4, 2, 3, 3)), dict(groups=0)),
    ("conv_transpose2d", (_x(4, 3), _x(4, 2, 3, 3)), {}),
    ("conv_transpose2d", (_x(1, 4, 1, 1), _x(4, 2, 1, 1)), dict(padding=1)),
    ("conv_transpose1d", (_x(1, 4, 1), _x(4, 2, 1)), dict(padding=1)),
    ("conv_transpose2d", (_x(1, 4, 3, 3), _x(4, 2, 3, 3)), dict(stride=0)),
    ("conv_transpose2d", (_x(1, 4, 3, 3), _x(4, 2, 3, 3)), dict(padding=-1)),
    ("conv_transpose2d", (_x(1, 4, 3, 3), _x(4, 2, 3, 3)), dict(output_padding=-1)),
    ("conv_transpose2d", (_x(1, 4, 3, 3), _x(4, 2, 3, 3)), dict(stride=(1, 1, 1))),
    ("conv_transpose2d", (_x(1, 4, 3, 3), _x(4, 2, 3, 3), _x(3)), {}),
    ("conv_transpose2d", (_x(1, 4, 3, 3), _x(4, 2, 3, 3)), dict(padding="same")),
    ("conv_transpose2d", (_x(1, 4, 3, 3), _x(4, 2, 3, 3).double()), {}),
    ("conv3d", (_x(1, 4, 3), _x(4, 2, 3, 3, 3)), {}),
    ("conv3d", (_x(1, 4, 3, 3, 3), _x(4, 2, 3, 3, 3)), {}),
    ("conv3d", (_x(1, 4, 3, 3, 3), _x(4, 4, 2, 2, 2)), dict(stride=(1, 1))),
    ("conv3d", (_x(1, 4, 3, 3, 3), _x(4, 4, 4, 2, 2)), {}),
    ("conv3d", (_x(1, 4, 3, 3, 3), _x(4, 4, 2, 2, 2)), dict(stride=2, padding="same")),
    ("conv3d", (_x(1, 4, 3, 3, 3), _x(4, 4, 2, 2, 2), _x(2)), {}),
    ("conv3d", (_x(1, 4, 3, 3, 3), _x(3, 2, 2, 2, 2)), dict(groups=2)),
]


@pytest.mark.parametrize("name,args,kw", ERRORS)
def test_errors_match_torch(oracle, same_functional_error, name, args, kw):
    same_functional_error(oracle, name, args, kw)


def _layers(oracle, name, *args, **kw):
    """The same layer in torch and ember, with torch's initial weights copied to ember."""
    import torch
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(*args, **kw).double()
    em = getattr(enn, name)(*args, **kw).double()
    em.load_state_dict({k: oracle.from_torch(v.detach()) for k, v in tm.state_dict().items()})
    return em, tm


def _run_layer(oracle, device, em, tm, shape, **call):
    import torch
    em.to(device)
    tx = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    ex = oracle.from_torch(tx.detach(), device).requires_grad_(True)
    t, e = tm(tx, **call), em(ex, **call)
    oracle.assert_matches(e.detach(), t.detach())
    g = torch.randn_like(t)
    t.backward(g)
    e.backward(oracle.from_torch(g, device))
    oracle.assert_matches(ex.grad, tx.grad)
    for (n, ep), (_, tp) in zip(em.named_parameters(), tm.named_parameters()):
        oracle.assert_matches(ep.grad, tp.grad)
    assert repr(em) == repr(tm)


@pytest.mark.parametrize("name,shape", [("Conv1d", (2, 4, 7)), ("Conv2d", (2, 4, 6, 5)),
                                        ("Conv3d", (2, 4, 5, 4, 6))])
@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv_padding_modes(oracle, device, name, shape, mode):
    em, tm = _layers(oracle, name, 4, 6, 3, stride=2, padding=2, groups=2, padding_mode=mode)
    _run_layer(oracle, device, em, tm, shape)
    em, tm = _layers(oracle, name, 4, 2, 2, padding="same", dilation=2, padding_mode=mode)
    _run_layer(oracle, device, em, tm, shape[1:])


def test_conv3d_module_shapes_and_init():
    m = enn.Conv3d(4, 6, (3, 2, 1), groups=2, bias=False)
    assert tuple(m.weight.shape) == (6, 2, 3, 2, 1) and m.bias is None
    assert m(_x(1, 4, 5, 5, 5)).shape == (1, 6, 3, 4, 5)


@pytest.mark.parametrize("name,shape,kw", [
    ("ConvTranspose1d", (2, 4, 5), dict(stride=2, output_padding=1)),
    ("ConvTranspose2d", (2, 4, 3, 4), dict(stride=(2, 3), padding=1, dilation=2, groups=2)),
    ("ConvTranspose2d", (4, 3, 4), dict(stride=2, bias=False)),
    ("ConvTranspose3d", (2, 4, 3, 2, 3), dict(stride=2, padding=(1, 0, 1),
                                              output_padding=(1, 0, 0))),
])
def test_conv_transpose_modules(oracle, device, name, shape, kw):
    em, tm = _layers(oracle, name, 4, 6, 3, **kw)
    assert tuple(em.weight.shape) == tuple(tm.weight.shape)
    _run_layer(oracle, device, em, tm, shape)


@pytest.mark.parametrize("shape,output_size", [((2, 3, 4, 4), (8, 8)),
                                               ((3, 4, 4), (7, 8)),
                                               ((2, 3, 4, 4), (2, 2, 8, 7)),
                                               ((3, 4, 4), [2, 7, 7])])
def test_conv_transpose_output_size(oracle, device, shape, output_size):
    em, tm = _layers(oracle, "ConvTranspose2d", 3, 2, 3, stride=2, padding=1)
    _run_layer(oracle, device, em, tm, shape, output_size=output_size)


@pytest.mark.parametrize("output_size", [(9, 9), (1, 2, 3), (5,)])
def test_conv_transpose_output_size_errors(oracle, output_size):
    import torch
    em, tm = _layers(oracle, "ConvTranspose2d", 2, 2, 3, stride=2)
    with pytest.raises(ValueError) as t_err:
        tm(torch.randn(1, 2, 3, 3, dtype=torch.float64), output_size=output_size)
    with pytest.raises(ValueError) as e_err:
        em(ember.randn(1, 2, 3, 3, dtype=ember.float64), output_size=output_size)
    assert str(e_err.value).replace("ember.", "torch.") == str(t_err.value)


@pytest.mark.parametrize("name,args,kw", [
    ("ConvTranspose2d", (2, 2, 3), dict(padding_mode="reflect")),
    ("ConvTranspose1d", (2, 3, 3), dict(groups=2)),
    ("Conv3d", (2, 3, 3), dict(groups=2)),
    ("Conv3d", (2, 2, 3), dict(padding_mode="mirror")),
])
def test_layer_constructor_errors(name, args, kw):
    import torch
    with pytest.raises(ValueError) as t_err:
        getattr(torch.nn, name)(*args, **kw)
    with pytest.raises(ValueError) as e_err:
        getattr(enn, name)(*args, **kw)
    # torch lists the valid padding modes from a set (an order that varies between runs)
    assert str(e_err.value).split("{")[0] == str(t_err.value).split("{")[0]


def test_conv_transpose_is_adjoint_of_conv(oracle, device):
    """<conv(x), y> == <x, conv_transpose(y)> for the same weight."""
    x = ember.randn(2, 3, 7, 6, dtype=ember.float64, device=device)
    w = ember.randn(4, 3, 3, 2, dtype=ember.float64, device=device)
    y = EF.conv2d(x, w, stride=2, padding=1, dilation=(1, 2))
    z = ember.randn(*y.shape, dtype=ember.float64, device=device)
    back = EF.conv_transpose2d(z, w, stride=2, padding=1, dilation=(1, 2), output_padding=(0, 1))
    assert back.shape == x.shape
    assert abs(float((y * z).sum()) - float((x * back).sum())) < 1e-9


def test_noncontiguous_input_and_double_backward(oracle, device):
    import torch
    import torch.nn.functional as F
    tx = torch.randn(2, 3, 4, 5, 3, dtype=torch.float64)
    tw = torch.randn(2, 3, 2, 2, 2, dtype=torch.float64)
    ex = oracle.from_torch(tx, device).transpose(2, 4)
    assert not ex.is_contiguous()
    ew = oracle.from_torch(tw, device)
    oracle.assert_matches(EF.conv3d(ex, ew, padding=1, stride=(2, 1, 1)),
                          F.conv3d(tx.transpose(2, 4), tw, padding=1, stride=(2, 1, 1)))
    # second order: d/dx of |d(sum y^2)/dw|, through the transposed convolution
    tx = torch.randn(2, 3, 4, 5, dtype=torch.float64, requires_grad=True)
    tw = torch.randn(3, 2, 2, 2, dtype=torch.float64, requires_grad=True)
    ex = oracle.from_torch(tx.detach(), device).requires_grad_(True)
    ew = oracle.from_torch(tw.detach(), device).requires_grad_(True)
    (tg,) = torch.autograd.grad((F.conv_transpose2d(tx, tw, stride=2) ** 2).sum(), tw,
                                create_graph=True)
    (eg,) = ember.autograd.grad((EF.conv_transpose2d(ex, ew, stride=2) ** 2).sum(), ew,
                                create_graph=True)
    oracle.assert_matches(eg.detach(), tg.detach())
    tg.abs().sum().backward()
    eg.abs().sum().backward()
    oracle.assert_matches(ex.grad, tx.grad)


EMPTY_OUTPUT = [  # (input, weight, padding, groups): an output dim of size 0
    ((2, 3, 1, 4), (3, 6, 4, 3), (2, 0), 1),
    ((2, 3, 5), (3, 4, 2), 3, 1),
    ((2, 4, 1, 4), (4, 3, 4, 3), (2, 1), 2),
    ((1, 4, 2, 2, 2), (4, 2, 3, 3, 3), (2, 1, 0), 2),
    ((1, 3, 2, 2, 2), (3, 2, 3, 3, 3), (2, 1, 0), 1),       # not oneDNN's: too small
    ((1, 3, 1, 4), (3, 6, 3, 3), (1, 0), 1),
]


def test_conv_transpose_empty_output(oracle):
    # PyTorch's oneDNN path (float32, batched, grouped or large) returns an empty tensor;
    # its other paths call the output too small
    import torch
    cases = [(dtype, *case) for dtype in ("float32", "float64") for case in EMPTY_OUTPUT]
    for dtype, xs, ws, padding, groups in cases:
        name = f"conv_transpose{len(ws) - 2}d"
        x = torch.randn(xs, dtype=getattr(torch, dtype), requires_grad=True)
        w = torch.randn(ws, dtype=getattr(torch, dtype))
        args = (None, 1, padding)
        try:
            want = getattr(torch.nn.functional, name)(x, w, *args, groups=groups)
        except RuntimeError as e:
            assert "Output size is too small" in str(e)
            with pytest.raises(RuntimeError, match="Output size is too small"):
                getattr(EF, name)(oracle.from_torch(x.detach()), oracle.from_torch(w), *args,
                                  groups=groups)
            continue
        xe = oracle.from_torch(x.detach()).requires_grad_()
        got = getattr(EF, name)(xe, oracle.from_torch(w), *args, groups=groups)
        oracle.assert_matches(got.detach(), want.detach())
        want.sum().backward()
        got.sum().backward()
        oracle.assert_matches(xe.grad, x.grad)
