"""ember-cuda's kernel modules without a GPU: every module renders, the disk cache is keyed
by what changes the binary, and, where nvcc is on the PATH, every module compiles."""
import os

import pytest

m = pytest.importorskip("ember_cuda._modules", reason="ember-cuda is not installed")


def test_every_module_renders_for_its_dtypes():
    names = m.all_modules()
    assert "ew.float32" in names and "copy.bfloat16" in names and "rows.float64" in names
    for name in names:
        family, dtype = name.split(".")
        if not os.path.exists(os.path.join(m.KERNELS, f"{family}.cu")):
            continue            # a family whose kernels are not written yet
        src = m.render(name)
        assert f"#define EC_DTYPE {m.DTYPES[dtype]}\n" in src
        assert 'extern "C" __global__' in src


def test_unknown_modules_are_refused():
    for bad in ("ew.complex64", "nope.float32", "softmax.int32", "ew"):
        with pytest.raises(ValueError, match="no kernel module"):
            m.render(bad)


def test_cache_key_depends_on_source_arch_and_compiler(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CUDA_CACHE", str(tmp_path))
    monkeypatch.setattr(m, "_nvcc_version", "nvcc 1.0")
    k = m.cache_key("src", "sm_90", "nvcc")
    assert k != m.cache_key("src2", "sm_90", "nvcc")
    assert k != m.cache_key("src", "sm_80", "nvcc")
    monkeypatch.setattr(m, "_nvcc_version", "nvcc 2.0")
    assert k != m.cache_key("src", "sm_90", "nvcc")


@pytest.mark.skipif(m.nvcc_path() is None, reason="nvcc is not on the PATH")
def test_every_module_compiles(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CUDA_CACHE", str(tmp_path))     # really compile
    names = [n for n in m.all_modules()
             if os.path.exists(os.path.join(m.KERNELS, n.split(".")[0] + ".cu"))]
    failed = m.compile_all("sm_90", names, jobs=os.cpu_count() or 2)
    assert not failed, "\n\n".join(f"{k}:\n{v[:3000]}" for k, v in failed.items())
    cubins = [f for f in os.listdir(tmp_path) if f.endswith(".cubin")]
    assert len(cubins) == len(names)
    # a second pass is served from the cache: nothing is compiled again
    monkeypatch.setattr(m, "nvcc_compile", lambda *a: pytest.fail("recompiled a cached module"))
    assert m.compile_module(names[0], "sm_90")


def test_scalar_ops_codes_are_the_op_tables():
    # scalar_ops.cuh spells abi.h's unary codes; its internal logical-not code follows them
    # (csrc/elementwise.c passes EMBER_UNARY_COUNT): a new op-table row must move it
    import re

    from ember.core import optable
    src = m.read("scalar_ops.cuh")
    codes = {name: int(v) for name, v in re.findall(r"#define U_(\w+) (\d+)", src)}
    for row in optable.UNARY.ops:
        assert codes[row.enum] == row.code, row.name
    assert codes["LOGICAL_NOT"] == len(optable.UNARY.ops)
