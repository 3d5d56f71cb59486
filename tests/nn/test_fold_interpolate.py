"""unfold/fold, interpolate (and Upsample*), pixel_shuffle/unshuffle and their layers against
PyTorch 2.13: forward and input gradients over kernel, dilation, padding, stride, modes,
sizes, scale factors, align_corners and recompute_scale_factor, float32/float64, unbatched
inputs, and errors (type and message)."""
import ember.nn as enn
import ember.nn.functional as EF
import pytest

import ember

BLOCKS = [
    dict(kernel_size=2),
    dict(kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
    dict(kernel_size=3, stride=2, padding=(0, 2)),
    dict(kernel_size=(1, 2), dilation=2, stride=3),
]


@pytest.mark.parametrize("kw", BLOCKS)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("unbatched", [False, True])
def test_unfold_fold(compare_functional, oracle, device, kw, dtype, unbatched):
    import torch
    shape = (3, 7, 6) if unbatched else (2, 3, 7, 6)
    compare_functional(oracle, device, "unfold", [shape], dtype, **kw)
    cols = torch.nn.functional.unfold(torch.randn(*shape), **kw).shape
    compare_functional(oracle, device, "fold", [cols], dtype, (7, 6), **kw)


def test_fold_of_unfold_counts_overlaps(oracle, device):
    x = ember.ones(1, 1, 4, 5, device=device)
    r = EF.fold(EF.unfold(x, 3, padding=1), (4, 5), 3, padding=1)
    import torch
    t = torch.nn.functional.fold(torch.nn.functional.unfold(torch.ones(1, 1, 4, 5), 3,
                                                            padding=1), (4, 5), 3, padding=1)
    oracle.assert_matches(r, t)


def _x(*shape):
    return ember.randn(*shape)


ERRORS = [
    ("unfold", (_x(1, 2, 3, 3), 4), {}),
    ("unfold", (_x(1, 2, 3, 3), (2, 2, 2)), {}),
    ("unfold", (_x(1, 2, 3, 3), 2), dict(stride=0)),
    ("unfold", (_x(1, 2, 3, 3), 2), dict(padding=-1)),
    ("unfold", (_x(1, 2, 3, 3), 0), {}),
    ("unfold", (_x(1, 2, 3, 3), 2), dict(dilation=0)),
    ("fold", (_x(1, 7, 4), (3, 3), 2), {}),
    ("fold", (_x(1, 8, 5), (3, 3), 2), {}),
    ("fold", (_x(2, 1, 8, 4), (3, 3), 2), {}),
    ("fold", (_x(1, 8, 4), (3, 3, 3), 2), {}),
    ("fold", (_x(1, 8, 1), (1, 1), 2), {}),
    ("pixel_shuffle", (_x(2, 3), 2), {}),
    ("pixel_shuffle", (_x(1, 5, 2, 2), 2), {}),
    ("pixel_shuffle", (_x(1, 4, 2, 2), 0), {}),
    ("pixel_unshuffle", (_x(1, 1, 3, 2), 2), {}),
    ("pixel_unshuffle", (_x(1, 1, 2, 3), 2), {}),
    ("pixel_unshuffle", (_x(1, 1, 2, 2), 0), {}),
    ("interpolate", (_x(1, 1, 4),), dict(size=3, scale_factor=2.0)),
    ("interpolate", (_x(1, 1, 4),), {}),
    ("interpolate", (_x(1, 1, 4),), dict(scale_factor=2.0, align_corners=True)),
    ("interpolate", (_x(1, 1, 4, 4),), dict(scale_factor=2.0, mode="linear")),
    ("interpolate", (_x(1, 1, 4),), dict(scale_factor=2.0, mode="bilinear")),
    ("interpolate", (_x(1, 1, 4, 4),), dict(scale_factor=2.0, mode="trilinear")),
    ("interpolate", (_x(1, 1, 4),), dict(scale_factor=2.0, mode="foo")),
    ("interpolate", (_x(1, 1, 4),), dict(size=(2, 3))),
    ("interpolate", (_x(1, 1, 4),), dict(scale_factor=(2.0, 3.0))),
    ("interpolate", (_x(4),), dict(scale_factor=2.0)),
    ("interpolate", (_x(1, 1, 4),), dict(size=0)),
    ("interpolate", (_x(1, 1, 4, 4),), dict(size=(0, 3))),
    ("interpolate", (_x(1, 1, 4, 4, 4),), dict(size=(0, 3, 1))),
    ("interpolate", (_x(1, 1, 4),), dict(scale_factor=0.1)),
    ("interpolate", (_x(1, 1, 4),), dict(size=3, recompute_scale_factor=True)),
    ("interpolate", (_x(1, 1, 4, 4),), dict(size=(2.5, 2))),
    ("interpolate", (_x(1, 1, 4, 4),), dict(size=2, antialias=True)),
    ("interpolate", (_x(1, 1, 4),), dict(size=3, mode="area", align_corners=False)),
]


@pytest.mark.parametrize("name,args,kw", ERRORS)
def test_errors_match_torch(oracle, same_functional_error, name, args, kw):
    same_functional_error(oracle, name, args, kw)


INTERP = [
    ((2, 3, 5), dict(scale_factor=2)),
    ((2, 3, 5), dict(size=7)),
    ((2, 3, 7), dict(scale_factor=0.6)),
    ((2, 3, 7), dict(size=3, mode="nearest-exact")),
    ((2, 3, 7), dict(scale_factor=1.7, mode="nearest-exact")),
    ((2, 3, 7), dict(scale_factor=1.7, mode="nearest", recompute_scale_factor=True)),
    ((2, 3, 7), dict(scale_factor=1.7, mode="linear")),
    ((2, 3, 7), dict(scale_factor=1.7, mode="linear", recompute_scale_factor=True)),
    ((2, 3, 7), dict(size=4, mode="linear", align_corners=True)),
    ((2, 3, 7), dict(size=1, mode="linear", align_corners=True)),
    ((2, 3, 4, 5), dict(scale_factor=(2, 3))),
    ((2, 3, 4, 5), dict(size=(7, 3), mode="bilinear")),
    ((2, 3, 4, 5), dict(scale_factor=(1.5, 2.3), mode="bilinear", align_corners=True)),
    ((2, 3, 4, 5), dict(scale_factor=0.5, mode="bilinear")),
    ((2, 3, 4, 5), dict(size=(3, 8), mode="nearest-exact")),
    ((2, 3, 4, 5), dict(scale_factor=(1.5, 2.3), mode="bicubic")),
    ((2, 3, 4, 5), dict(size=(3, 8), mode="bicubic", align_corners=True)),
    ((2, 3, 4, 5), dict(size=(2, 3), mode="area")),
    ((2, 3, 4, 5), dict(size=(4, 5), mode="bilinear")),
    ((2, 3, 4, 5, 3), dict(size=(3, 8, 2), mode="trilinear")),
    ((2, 3, 4, 5, 3), dict(scale_factor=2, mode="trilinear", align_corners=True)),
    ((2, 3, 4, 5, 3), dict(scale_factor=1.5)),
    ((2, 3, 4, 5, 3), dict(size=(2, 3, 2), mode="area")),
    # a scale_factor that keeps a dim's size: the linear kernels copy that dim, the
    # bicubic ones still map with the scale
    ((1, 2, 7), dict(scale_factor=1.1, mode="linear")),
    ((1, 2, 7), dict(scale_factor=1.1, mode="nearest-exact")),
    ((1, 2, 7, 6), dict(scale_factor=(1.1, 2.1))),
    ((1, 2, 7, 6), dict(scale_factor=(1.1, 2.0), mode="bilinear")),
    ((1, 2, 6, 7), dict(scale_factor=(2.0, 1.1), mode="bilinear")),
    ((1, 2, 7, 6), dict(scale_factor=(1.1, 2.0), mode="bicubic")),
    ((1, 2, 7, 6), dict(scale_factor=1.1, mode="bicubic", align_corners=True)),
    ((1, 2, 7, 6), dict(scale_factor=1.1, mode="nearest-exact")),
    ((1, 2, 7, 3, 4), dict(scale_factor=(1.1, 2.0, 1.2), mode="trilinear")),
    ((1, 2, 7, 3, 4), dict(scale_factor=(1.1, 2.0, 1.2), mode="nearest-exact")),
]


@pytest.mark.parametrize("shape,kw", INTERP)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_interpolate(compare_functional, oracle, device, shape, kw, dtype):
    compare_functional(oracle, device, "interpolate", [shape], dtype, **kw)


@pytest.mark.parametrize("shape,kw", [((1, 2, 7), dict(scale_factor=1.1)),
                                      ((1, 2, 7), dict(scale_factor=2.1)),
                                      ((1, 2, 7, 3, 4), dict(scale_factor=(1.1, 2.1, 1.2)))])
def test_interpolate_nearest_1d_3d_use_the_scale(oracle, device, shape, kw):
    # PyTorch's 1-d and 3-d nearest kernels map a kept or doubled size with the given scale
    # (rows 0, 0, 1, ..., 5 of 7 for 1.1), its 2-d one copies / halves.  Values only: its
    # backward of these maps differently from its own forward
    import torch
    t = torch.arange(float(torch.Size(shape).numel())).reshape(shape)
    oracle.assert_matches(EF.interpolate(oracle.from_torch(t, device), **kw),
                          torch.nn.functional.interpolate(t, **kw))


def test_interpolate_same_size_is_a_copy():
    x = _x(1, 2, 3, 4)
    r = EF.interpolate(x, size=(3, 4), mode="bilinear")
    assert r is not x and ember.equal(r, x)


@pytest.mark.parametrize("factor,shape", [(2, (2, 8, 3, 4)), (3, (9, 2, 2)),
                                          (2, (2, 1, 4, 3, 5))])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_pixel_shuffle(compare_functional, oracle, device, factor, shape, dtype):
    compare_functional(oracle, device, "pixel_shuffle", [shape], dtype, factor)
    up = list(shape)
    up[-1] *= factor
    up[-2] *= factor
    compare_functional(oracle, device, "pixel_unshuffle", [up], dtype, factor)


def test_pixel_shuffle_top_level():
    assert ember.pixel_shuffle is EF.pixel_shuffle
    assert ember.pixel_unshuffle is EF.pixel_unshuffle


@pytest.mark.parametrize("name,args,kw,shape", [
    ("Unfold", ((2, 3),), dict(padding=1, stride=2), (2, 3, 5, 6)),
    ("Fold", ((5, 6), (2, 3)), dict(padding=1, stride=2), (2, 18, 9)),
    ("Upsample", (), dict(scale_factor=2), (2, 3, 4)),
    ("Upsample", (), dict(size=(5, 7), mode="bilinear"), (2, 3, 4, 3)),
    ("Upsample", (), dict(scale_factor=(1.5, 2.0), mode="bicubic", align_corners=True),
     (2, 3, 4, 3)),
    ("Upsample", (), dict(scale_factor=1.7, mode="linear", recompute_scale_factor=True),
     (2, 3, 4)),
    ("UpsamplingNearest2d", (), dict(scale_factor=3), (2, 3, 4, 3)),
    ("UpsamplingBilinear2d", (), dict(size=(6, 5)), (2, 3, 4, 3)),
    ("PixelShuffle", (2,), {}, (2, 8, 3, 2)),
    ("PixelUnshuffle", (2,), {}, (2, 2, 4, 6)),
])
def test_layers(oracle, device, name, args, kw, shape):
    import torch
    tm, em = getattr(torch.nn, name)(*args, **kw), getattr(enn, name)(*args, **kw)
    assert repr(em) == repr(tm)
    tx = torch.randn(*shape, dtype=torch.float64)
    ex = oracle.from_torch(tx, device).requires_grad_(True)
    tx.requires_grad_(True)
    t, e = tm(tx), em(ex)
    oracle.assert_matches(e.detach(), t.detach())
    g = torch.randn_like(t)
    t.backward(g)
    e.backward(oracle.from_torch(g, device))
    oracle.assert_matches(ex.grad, tx.grad)


UINT8_INTERP = [dict(size=(3, 6), mode="bilinear"), dict(size=(9, 11), mode="bilinear"),
                dict(size=(2, 3), mode="bilinear", align_corners=True),
                dict(scale_factor=(1.1, 0.6), mode="bilinear"),
                dict(size=(9, 11), mode="bicubic"), dict(size=(3, 4), mode="bicubic"),
                dict(size=(10, 14), mode="bicubic", align_corners=True),
                dict(scale_factor=1.7, mode="bicubic"), dict(size=(5, 7), mode="bicubic"),
                dict(size=(9, 11)), dict(scale_factor=1.7, mode="nearest-exact")]


@pytest.mark.parametrize("kw", UINT8_INTERP)
@pytest.mark.parametrize("channels", [1, 5])
def test_interpolate_uint8(oracle, device, kw, channels):
    # PyTorch's uint8 kernels: integer weights, a rounded and saturated pass per dim
    import torch
    torch.manual_seed(0)
    t = torch.randint(0, 256, (2, channels, 5, 7), dtype=torch.uint8)
    r = EF.interpolate(oracle.from_torch(t, device), **kw)
    assert r.dtype == ember.uint8
    oracle.assert_matches(r, torch.nn.functional.interpolate(t, **kw), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "bool", "uint8"])
@pytest.mark.parametrize("mode,nd", [("nearest", 1), ("nearest", 2), ("nearest-exact", 3),
                                     ("linear", 1), ("bilinear", 2), ("bicubic", 2),
                                     ("trilinear", 3), ("area", 2), ("area", 3)])
def test_interpolate_integer_dtypes(oracle, same_functional_error, dtype, mode, nd):
    import torch
    t = torch.ones((2, 3) + (4,) * nd, dtype=getattr(torch, dtype))
    try:
        expected = torch.nn.functional.interpolate(t, scale_factor=2.0, mode=mode)
    except NotImplementedError:
        same_functional_error(oracle, "interpolate", [oracle.from_torch(t)],
                              dict(scale_factor=2.0, mode=mode))
        return
    oracle.assert_matches(EF.interpolate(oracle.from_torch(t), scale_factor=2.0, mode=mode),
                          expected)


ANTIALIAS = [
    ((1, 3, 16, 16), dict(size=(8, 8), mode="bilinear")),
    ((2, 2, 17, 23), dict(size=(5, 7), mode="bicubic")),
    ((1, 2, 9, 10), dict(size=(20, 3), mode="bilinear")),       # up in H, down in W
    ((1, 2, 9, 10), dict(size=(20, 13), mode="bicubic")),       # upscaling only
    ((1, 2, 30, 31), dict(scale_factor=(0.3, 0.45), mode="bicubic")),
    ((1, 2, 30, 31), dict(scale_factor=(0.3, 1.7), mode="bilinear", align_corners=True)),
    ((1, 2, 13, 11), dict(size=(4, 3), mode="bicubic", align_corners=True)),
    ((1, 1, 40, 6), dict(size=(1, 2), mode="bilinear")),
    ((1, 2, 7, 9), dict(size=(7, 4), mode="bilinear")),          # a kept dim is copied
    ((1, 2, 24, 19), dict(size=(8, 5), mode="lanczos")),
    ((1, 2, 6, 7), dict(size=(11, 12), mode="lanczos")),
]


@pytest.mark.parametrize("shape,kw", ANTIALIAS)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_interpolate_antialias(compare_functional, oracle, device, shape, kw, dtype):
    # the filter stretched by the downscale factor and normalised, width pass then height
    compare_functional(oracle, device, "interpolate", [shape], dtype, antialias=True, **kw)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
@pytest.mark.parametrize("size", [(3, 4), (11, 20), (2, 9)])
def test_interpolate_antialias_uint8(oracle, device, mode, size):
    # the integer weights of PyTorch's uint8 kernels, from the antialiasing filter
    import torch
    torch.manual_seed(0)
    t = torch.randint(0, 256, (2, 3, 9, 13), dtype=torch.uint8)
    kw = dict(size=size, mode=mode, antialias=True)
    oracle.assert_matches(EF.interpolate(oracle.from_torch(t, device), **kw),
                          torch.nn.functional.interpolate(t, **kw), rtol=0, atol=0)


@pytest.mark.parametrize("dtype,kw", [
    ("float16", dict(mode="bilinear", antialias=True)),
    ("bfloat16", dict(mode="bicubic", antialias=True)),
    ("int64", dict(mode="bilinear", antialias=True)),
    ("float32", dict(mode="lanczos")),
    ("float32", dict(mode="lanczos", antialias=True, align_corners=True)),
])
def test_interpolate_antialias_errors(oracle, same_functional_error, dtype, kw):
    import torch
    t = torch.ones(1, 2, 5, 5, dtype=getattr(torch, dtype))
    same_functional_error(oracle, "interpolate", [oracle.from_torch(t)], dict(size=(2, 3), **kw))
