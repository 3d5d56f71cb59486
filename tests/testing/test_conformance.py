"""The conformance suite (ember.testing.conformance) run as a vendor runs it, in a fresh
pytest process from outside the repository: against cpu it is conformant and writes its
report; a device returning wrong values, running ops through an undeclared host fallback,
or an abi.h with an op code the suite does not know make it fail; declared-unimplemented
cases are skipped; and pytest without the suite never imports ember."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from ember.testing.conformance import _abi
from ember.testing.conformance._case import CATALOGUE

SUITE = ["--pyargs", "ember.testing.conformance"]


def run_pytest(tmp_path, *args, plugin=None):
    """pytest in a subprocess from tmp_path; `plugin`: source of a module loaded with -p
    before collection (to break or instrument the device under test)."""
    env = dict(os.environ)
    extra = []
    if plugin is not None:
        (tmp_path / "conf_probe.py").write_text(textwrap.dedent(plugin))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path),
                                                          env.get("PYTHONPATH")]))
        extra = ["-p", "conf_probe"]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *extra,
                           *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def verdict(out):
    lines = [ln for ln in out.splitlines() if ln.startswith("verdict: ")]
    assert lines, out[-3000:]
    return lines[-1][len("verdict: "):]


def test_cpu_is_conformant_and_the_report_is_written(tmp_path):
    report = tmp_path / "report.json"
    rc, out = run_pytest(tmp_path, *SUITE, "--ember-device=cpu", "-q",
                         f"--ember-report={report}")
    assert rc == 0, out[-3000:]
    assert verdict(out) == "conformant"
    assert "ember conformance: device cpu" in out
    data = json.loads(report.read_text())
    assert data["device"] == "cpu" and data["verdict"] == "conformant"
    assert data["conformant"] is True and data["failures"] == []
    assert data["abi_version"] == _abi.abi_version()
    assert data["totals"]["passed"] > 3000 and data["totals"]["failed"] == 0
    # every ABI family and one-op entry has cells, over the ten dtypes where it takes them
    for family in _abi.FAMILIES + _abi.UNCODED:
        assert family in data["families"], family
    assert set(data["families"]["copy"]) == {"bool", "uint8", "int8", "int16", "int32",
                                             "int64", "float16", "bfloat16", "float32",
                                             "float64"}
    for row in ("host", "inplace", "autograd", "rng", "errors", "training", "large",
                "indexing", "gradgrad", "determinism", "devices"):
        assert row in data["families"], row
    # one device index on the CPU: the index > 0 cases skip, the rest of the row passes
    assert data["families"]["devices"]["-"] == {"passed": 1, "skipped": 5, "failed": 0}
    cell = data["families"]["binary"]["float16"]
    assert set(cell) == {"passed", "skipped", "failed"} and cell["passed"] > 0


def test_wrong_values_on_the_device_fail(tmp_path):
    # the "device" returns exp(x) + 1 on float32: every unary.exp[float32] case with
    # elements must fail (4 layouts; the zero-size one has no value to be wrong)
    plugin = """
        import ember
        _exp = ember.exp
        def exp(x, *args, **kwargs):
            y = _exp(x, *args, **kwargs)
            return y + 1 if x.dtype == ember.float32 else y
        ember.exp = exp
    """
    report = tmp_path / "r.json"
    rc, out = run_pytest(tmp_path, *SUITE, "--ember-device=cpu", "-q", "-k", "test_unary",
                         f"--ember-report={report}", plugin=plugin)
    assert rc == 1, out[-3000:]
    v = verdict(out)
    assert v.startswith("not conformant: 4 failed (unary: 4)"), v
    data = json.loads(report.read_text())
    assert not data["conformant"] and data["families"]["unary"]["float32"]["failed"] == 4
    assert {f["key"] for f in data["failures"]} == {"unary.exp[float32]"}
    assert all("exp(float32)" in f["reason"] for f in data["failures"])
    assert data["families"]["unary"]["float64"]["failed"] == 0


def nobinary(declared=()):
    """A -p plugin registering device "nobinary": the CPU plugin's kernels without the
    binary family, which therefore runs through the core's host fallback."""
    return f"""
    from ember.backends._abi import ENTRIES
    from ember.testing._devices import partial_device
    partial_device("nobinary", [e for e in ENTRIES if e != "binary"],
                   unimplemented={list(declared)!r})
    """


def test_an_undeclared_host_fallback_fails(tmp_path):
    rc, out = run_pytest(tmp_path, *SUITE, "--ember-device=nobinary", "-q", "-k", "pow-",
                         plugin=nobinary())
    assert rc == 1, out[-3000:]
    assert "does not implement binary.pow[float16]: it ran through the host fallback; " \
           "implement it or declare it in ember_unimplemented" in out
    v = verdict(out)
    assert v.startswith("not conformant: ") and v.endswith(" failed (binary: " + v.split()[2]
                                                           + ")"), v


def test_declared_unimplemented_cases_are_skipped(tmp_path):
    # the plugin declares through its ember_unimplemented hook what the core's fallback runs
    report = tmp_path / "r.json"
    rc, out = run_pytest(tmp_path, *SUITE, "--ember-device=nobinary", "-q", "-k",
                         "pow- or erf", "-rs", f"--ember-report={report}",
                         plugin=nobinary(["binary.pow[*]", "unary.erf*[bfloat16]"]))
    assert rc == 0, out[-3000:]
    assert "binary.pow[float16]: declared unimplemented by device 'nobinary'" in out
    data = json.loads(report.read_text())
    assert data["families"]["binary"]["float16"] == {"passed": 0, "skipped": 6, "failed": 0}
    # erf, erfc, erfinv at bfloat16, over their 5 layouts each
    assert data["families"]["unary"]["bfloat16"]["skipped"] == 15
    # pow over 9 numeric dtypes x 6 layouts
    assert verdict(out) == ("conformant except 69 cases declared unimplemented "
                            "(binary: 54, unary: 15)")


def test_an_abi_op_code_without_a_case_fails_the_self_check(tmp_path):
    include = tmp_path / "include" / "ember"
    include.mkdir(parents=True)
    with open(_abi.abi_path()) as f:
        text = f.read()
    text = text.replace("EMBER_SCAN_COUNT = 4", "EMBER_SCAN_LOGCUMSUMEXP = 4, "
                        "EMBER_SCAN_COUNT = 5")
    (include / "abi.h").write_text(text)
    assert _abi.parse(text)["scan"][-1] == "logcumsumexp"
    assert ("scan", "logcumsumexp") not in CATALOGUE
    plugin = f"""
        from ember.backends import _abi
        _abi.header_path = lambda: {str(tmp_path / "include" / "ember" / "abi.h")!r}
    """
    rc, out = run_pytest(tmp_path, *SUITE, "--ember-device=cpu", "-q", "-k", "selfcheck",
                         plugin=plugin)
    assert rc == 1, out[-3000:]
    assert "scan.logcumsumexp" in out and "does not test" in out


def test_abi_parser():
    codes = _abi.op_codes()
    assert codes["unary"][:3] == ["neg", "exp", "relu"] and "erfinv" in codes["unary"]
    assert codes["index"] == ["gather", "scatter", "scatter_add", "scatter_mul",
                              "scatter_amax", "scatter_amin"]      # INDEX_WRAP is a flag
    assert codes["softmax"][:2] == ["softmax", "log_softmax"]
    assert codes["norm"][4] == "batch_norm_backward"
    assert codes["conv"] == ["forward", "backward_input", "backward_weight"]
    assert codes["matmul"] == ["matmul"] and codes["copy"] == ["copy"]
    assert set(codes) == set(_abi.FAMILIES + _abi.UNCODED)


def test_inside_a_vendor_suite_with_p(tmp_path):
    (tmp_path / "test_vendor.py").write_text(textwrap.dedent("""
        import pytest
        import ember

        @pytest.mark.ember_conformance(family="vendor_fused_rope", dtype="float32")
        def test_rope(ember_device):
            assert (ember.ones(3, device=ember_device) * 2).sum().item() == 6.0

        @pytest.mark.ember_conformance(family="vendor_fused_rope", dtype="float16")
        def test_rope_half(ember_device):
            assert False, "wrong rope"
    """))
    rc, out = run_pytest(tmp_path, "-p", "ember.testing.conformance", "test_vendor.py",
                         "--ember-device=cpu", "-q")
    assert rc == 1, out[-3000:]
    assert "vendor_fused_rope" in out
    assert verdict(out) == "not conformant: 1 failed (vendor_fused_rope: 1)"


def test_pytest_without_the_suite_does_not_import_ember(tmp_path):
    (tmp_path / "test_plain.py").write_text(
        "import sys\n\ndef test_no_ember():\n    assert 'ember' not in sys.modules\n")
    rc, out = run_pytest(tmp_path, "test_plain.py", "-q")
    assert rc == 0, out[-3000:]
    assert "ember conformance" not in out
    rc, out = run_pytest(tmp_path, "--help")
    assert rc == 0 and "--ember-device=NAME" in out and "--ember-report=FILE.json" in out


def test_an_unknown_device_is_a_usage_error(tmp_path):
    rc, out = run_pytest(tmp_path, *SUITE, "--ember-device=nosuchdevice", "-q", "-k", "rng")
    assert rc == 4, out[-3000:]
    assert "cannot use device 'nosuchdevice'" in out


@pytest.mark.parametrize("key_args,expected", [
    (("binary", "pow", "float16"), "binary.pow[float16]"),
    (("matmul", "matmul", "float32"), "matmul[float32]"),
    (("copy", "", "float32->int64"), "copy[float32->int64]"),
    (("errors", "errors", "-"), "errors"),
])
def test_fallback_keys(key_args, expected):
    from ember.testing.conformance._case import key
    assert key(*key_args) == expected


def declaring(names, honoured=True):
    """A -p plugin making the CPU plugin declare `names` order-dependent (registered last,
    its firstresult answer wins); `honoured=False` also stops the core from acting on it."""
    return f"""
    import types
    from ember import backends
    from ember.backends.hookspecs import hookimpl
    from ember.core import determinism
    mod = types.ModuleType("declares")

    @hookimpl
    def ember_nondeterministic_kernels(device_type):
        return {list(names)!r} if device_type == "cpu" else None
    mod.ember_nondeterministic_kernels = ember_nondeterministic_kernels
    backends._manager().register(mod)
    determinism._forget_declarations()
    if not {honoured!r}:
        from ember.core import index_ops
        determinism.alert_nondeterministic = lambda op, device_type: None
        index_ops.alert_nondeterministic = determinism.alert_nondeterministic
    """


def test_declared_nondeterministic_kernels_raise_and_warn(tmp_path):
    # a declared op must raise in deterministic mode and warn under warn_only (checked by
    # the 'declared' cases); the 'repeat' cases of declared ops are skipped with the reason
    report = tmp_path / "r.json"
    rc, out = run_pytest(tmp_path, *SUITE, "--ember-device=cpu", "-q", "-rs", "-k",
                         "determinism", f"--ember-report={report}",
                         plugin=declaring(["scatter_add", "index_put_", "bincount", "index"]))
    assert rc == 0, out[-3000:]
    assert verdict(out) == "conformant"
    assert "device 'cpu' declares scatter_add order-dependent" in out
    cells = json.loads(report.read_text())["families"]["determinism"]
    assert cells["float32"] == {"passed": 7, "skipped": 2, "failed": 0}   # scatter_add, index_put
    assert cells["-"] == {"passed": 11, "skipped": 0, "failed": 0}


def test_a_declared_kernel_that_runs_anyway_fails(tmp_path):
    rc, out = run_pytest(tmp_path, *SUITE, "--ember-device=cpu", "-q", "-k",
                         "determinism and declared", plugin=declaring(["histc"], False))
    assert rc == 1, out[-3000:]
    assert verdict(out) == "not conformant: 1 failed (determinism: 1)"
    assert "test_determinism[declared---histc]" in out and "DID NOT RAISE" in out


def test_device_index_cases_on_a_device_with_two_indices(tmp_path):
    # the CPU's kernels under a device type whose runtime reports two indices: the index
    # cases run on "two:1"; its allocator accepts "two:2" as well, which the suite refuses
    plugin = """
        from ember.backends._abi import ENTRIES
        from ember.testing._devices import partial_device
        partial_device("two", ENTRIES, count=2)
    """
    report = tmp_path / "r.json"
    rc, out = run_pytest(tmp_path, *SUITE, "--ember-device=two", "-q", "-k", "devices",
                         f"--ember-report={report}", plugin=plugin)
    assert rc == 1, out[-3000:]
    data = json.loads(report.read_text())
    assert data["families"]["devices"]["-"] == {"passed": 5, "skipped": 0, "failed": 1}
    assert [f["key"] for f in data["failures"]] == ["devices.out_of_range"]
    rc, out = run_pytest(tmp_path, *SUITE, "--ember-device=cpu", "-q", "-rs", "-k", "devices")
    assert rc == 0 and "device type 'cpu' has 1 device: no index > 0 to run on" in out, out
