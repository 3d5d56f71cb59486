"""ember.backends.cuda / cudnn flags, ember.accelerator and ember.cuda without a GPU,
against PyTorch's CPU build."""
import platform

import pytest
import torch

import ember


def test_flag_defaults_match_torch():
    import ember.backends.cuda  # noqa: F401  (importable as a module too)
    be, bt = ember.backends, torch.backends
    assert be.cuda.matmul.allow_tf32 == bt.cuda.matmul.allow_tf32 is False
    assert (be.cuda.matmul.allow_fp16_reduced_precision_reduction
            == bt.cuda.matmul.allow_fp16_reduced_precision_reduction)
    assert be.cudnn.allow_tf32 == bt.cudnn.allow_tf32 is True
    assert be.cudnn.benchmark == bt.cudnn.benchmark is False
    assert be.cudnn.deterministic == bt.cudnn.deterministic is False
    assert be.cudnn.enabled == bt.cudnn.enabled is True
    assert be.cudnn.is_available() == bt.cudnn.is_available() is False
    assert be.cudnn.version() is None


def test_flags_are_settable():
    m = ember.backends.cuda.matmul
    try:
        m.allow_tf32 = True
        assert m.allow_tf32 and ember.get_float32_matmul_precision() == "high"
    finally:
        m.allow_tf32 = False
    assert ember.get_float32_matmul_precision() == "highest"
    m.allow_fp16_reduced_precision_reduction = False
    assert m.allow_fp16_reduced_precision_reduction is False
    m.allow_fp16_reduced_precision_reduction = True
    with pytest.raises(AttributeError, match="Unknown attribute"):
        m.allow_tf33 = True
    cudnn = ember.backends.cudnn
    cudnn.benchmark = True
    try:
        assert ember.backends.cudnn.benchmark
        with cudnn.flags(enabled=False, deterministic=True):
            assert not cudnn.enabled and cudnn.deterministic
        assert cudnn.enabled and not cudnn.deterministic and cudnn.benchmark
    finally:
        cudnn.benchmark = False


def test_accelerator():
    from ember.backends import is_accelerator
    from ember.core._device import _backends_snapshot
    usable = [t for t, b in _backends_snapshot().items()
              if t not in ("cpu", "meta") and b.plugin is not None and is_accelerator(t)
              and ember.get_device_module(t).is_available()]
    # the reference device stands in for one in tests: never offered as the accelerator
    assert not is_accelerator("reference")
    acc = ember.accelerator.current_accelerator()
    assert ember.accelerator.is_available() == bool(usable)
    if not usable:              # the CPU-only case, as torch's CPU build
        assert acc is None and acc == torch.accelerator.current_accelerator()
        assert ember.accelerator.device_count() == torch.accelerator.device_count() == 0
    else:
        assert acc.type in usable and ember.accelerator.device_count() >= 1


@pytest.mark.skipif(ember.cuda.is_available(), reason="a GPU is present")
def test_cuda_module_without_cuda_behaves_as_torch():
    import ember.cuda
    import ember.cuda.amp  # noqa: F401
    assert ember.cuda is ember.get_device_module("cuda")
    for name in ("manual_seed", "manual_seed_all"):
        assert getattr(ember.cuda, name)(0) is getattr(torch.cuda, name)(0) is None
    assert ember.cuda.seed() is torch.cuda.seed() is None
    assert ember.cuda.empty_cache() is torch.cuda.empty_cache() is None
    assert ember.cuda.memory_allocated() == torch.cuda.memory_allocated() == 0
    assert ember.cuda.is_bf16_supported() is torch.cuda.is_bf16_supported() is False
    assert ember.cuda.device_count() == 0 and ember.cuda.is_available() is False
    for name in ("initial_seed", "synchronize"):
        with pytest.raises(AssertionError):
            getattr(torch.cuda, name)()
        with pytest.raises(AssertionError, match="ember-cuda|pycuda"):   # what to install
            getattr(ember.cuda, name)()


def test_onnx_export_is_not_implemented():
    import ember.onnx
    assert ember.onnx.is_in_onnx_export() is False
    with pytest.raises(NotImplementedError, match="ONNX"):
        ember.onnx.export(ember.nn.Linear(2, 2), (ember.ones(1, 2),), "model.onnx")


@pytest.mark.parametrize("kernel", ["flash", "mem_efficient", "math", "cudnn"])
def test_sdp_toggles_as_torch(kernel):
    # the backend set of nn.attention.sdpa_kernel, which a block of it restores
    outs = []
    for lib in (torch, ember):
        c = lib.backends.cuda
        enable, enabled = getattr(c, f"enable_{kernel}_sdp"), getattr(c, f"{kernel}_sdp_enabled")
        seen = [enabled()]
        enable(False)
        seen.append(enabled())
        with lib.nn.attention.sdpa_kernel(lib.nn.attention.SDPBackend.MATH):
            seen.append(enabled())
            enable(True)
            seen.append(enabled())
        seen.append(enabled())
        enable(True)
        with pytest.warns(FutureWarning, match="sdp_kernel"):
            with c.sdp_kernel(**{f"enable_{kernel}": False}):
                seen.append((c.flash_sdp_enabled(), c.math_sdp_enabled(), enabled()))
        seen.append(enabled())
        outs.append(seen)
    assert outs[0] == outs[1]


def test_attention_backend_queries_as_torch():
    for lib in (torch, ember):
        c = lib.backends.cuda
        q = lib.ones(1, 1, 2, 4)
        params = c.SDPAParams(q, q, q, None, 0.0, False, False)
        assert not (c.is_flash_attention_available() or c.can_use_flash_attention(params)
                    or c.can_use_efficient_attention(params)
                    or c.can_use_cudnn_attention(params))
        assert c.fp16_bf16_reduction_math_sdp_allowed() is False
        assert str(c.preferred_linalg_library()) == "_LinalgBackend.Default"
        with pytest.raises(RuntimeError, match="Choose from: default, cusolver, magma"):
            c.preferred_linalg_library("nope")
        assert lib.backends.cpu.get_cpu_capability() in ("DEFAULT", "AVX2", "AVX512")
    if platform.machine() == "x86_64":       # (PyTorch's ARM builds also know SVE)
        assert ember.backends.cpu.get_cpu_capability() == \
            torch.backends.cpu.get_cpu_capability()


def test_mha_fastpath_flag():
    import ember.backends.mha as mha
    assert mha.get_fastpath_enabled() is torch.backends.mha.get_fastpath_enabled() is True
    mha.set_fastpath_enabled(False)
    try:
        assert ember.backends.mha.get_fastpath_enabled() is False
    finally:
        mha.set_fastpath_enabled(True)
