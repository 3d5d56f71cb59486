"""ember's conformance suite: checks a device plugin against NumPy, as a pytest plugin.

Run it against a device::

    pytest --pyargs ember.testing.conformance --ember-device=mydev [--ember-report=r.json]

or load it inside a vendor's own suite with ``-p ember.testing.conformance``: that gives
the ``ember_device`` fixture, the ``ember_conformance(family, op, dtype, key)`` marker (a
tagged test enters the coverage table and follows the host-fallback rule) and the table.

Every case is one ABI op code (read from ``ember/abi.h``) or one behaviour (host copies,
in-place writes, autograd, RNG, errors, training) at one dtype and operand layout.  A case
whose key (``family.op[dtype]``) the device declares unimplemented is skipped; one that
passes but ran through the core's host fallback without being declared fails.  The run
ends with a families x dtypes table and a verdict.
"""
import pytest

from ember.testing.conformance import _fallback
from ember.testing.conformance._report import Tally

__all__ = ["pytest_addoption", "pytest_configure", "ember_device"]

_MARK = "ember_conformance"
_STATE = pytest.StashKey()
_ACTIVE = []          # states of the configs this plugin is configured in (innermost last)


class _State:
    def __init__(self, config):
        self.config = config
        self.device = config.getoption("ember_device", default=None) or "cpu"
        self.tally = Tally()
        self._patterns = None

    @property
    def device_type(self):
        import ember
        return ember.device(self.device).type

    @property
    def patterns(self):
        if self._patterns is None:
            self._patterns = _fallback.unimplemented(self.device_type)
        return self._patterns


def _state(config):
    return config.stash.get(_STATE, None)


def pytest_addoption(parser):
    from _ember_conformance import add_options  # installed with ember: its entry point
    add_options(parser)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", f"{_MARK}(family, op, dtype, key): a conformance case of the ABI family "
        "(or behaviour) at one dtype; `key` is its host-fallback key (family.op[dtype])")
    if _state(config) is None:
        config.stash[_STATE] = _State(config)
        _ACTIVE.append(config.stash[_STATE])


def pytest_unconfigure(config):
    state = _state(config)
    if state is not None and state in _ACTIVE:
        _ACTIVE.remove(state)


def _tag(item):
    m = item.get_closest_marker(_MARK)
    if m is None:
        return None
    kw = dict(m.kwargs)
    kw.setdefault("op", "")
    kw.setdefault("dtype", "-")
    kw.setdefault("key", f"{kw['family']}.{kw['op']}" if kw["op"] else kw["family"])
    return kw


def pytest_collection_modifyitems(config, items):
    for item in items:
        tag = _tag(item)
        if tag is not None:
            item.user_properties.append(("ember_conformance", tag))


def pytest_collection_finish(session):
    state = _state(session.config)
    if state is None or not any(_tag(i) for i in session.items):
        return
    import ember
    try:
        module = ember.get_device_module(state.device_type)
        ok = module.is_available()
    except Exception as e:        # no plugin for it, or a broken one
        pytest.exit(f"ember conformance: cannot use device '{state.device}': "
                    f"{type(e).__name__}: {e}", returncode=4)
    if not ok:
        why = getattr(module, "unavailable_reason", lambda: "is_available() is False")()
        pytest.exit(f"ember conformance: device '{state.device}' is not available: {why}",
                    returncode=4)


@pytest.fixture(scope="session")
def ember_device(pytestconfig):
    """The device under test (``--ember-device``, default cpu), as a string."""
    return _state(pytestconfig).device


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    tag, state = _tag(item), _state(item.config)
    if tag is not None and state is not None:
        pattern = _fallback.declared(tag["key"], state.patterns)
        if pattern is not None:
            item.user_properties.append(("ember_declared", pattern))
            pytest.skip(f"{tag['key']}: declared unimplemented by device "
                        f"'{state.device}' ({pattern!r})")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    tag, state = _tag(item), _state(item.config)
    if tag is None or state is None:
        return (yield)
    _fallback.reset_host_fallbacks()
    result = yield
    missing = _fallback.undeclared_fallbacks(state.device_type, state.patterns)
    if missing:
        pytest.fail(f"device {state.device_type} does not implement {', '.join(missing)}: "
                    f"it ran through the host fallback; implement it or declare it in "
                    f"ember_unimplemented", pytrace=False)
    return result


def pytest_runtest_logreport(report):
    props = dict(report.user_properties)
    tag = props.get("ember_conformance")
    if tag is None:
        return
    if not _ACTIVE:
        return
    state = _ACTIVE[-1]          # the report hook is not given its config
    if report.when == "call" or (report.when == "setup" and not report.passed) or \
            (report.when == "teardown" and report.failed):
        reason = ""
        if report.failed:
            crash = getattr(report.longrepr, "reprcrash", None)
            reason = crash.message if crash is not None else str(report.longrepr)[-500:]
        state.tally.add(tag["family"], tag["dtype"], report.outcome, report.nodeid,
                        tag["key"], reason, declared="ember_declared" in props)


def pytest_terminal_summary(terminalreporter, config):
    state = _state(config)
    if state is None or not state.tally:
        return
    from ember.testing.conformance._abi import abi_version
    tr = terminalreporter
    tr.write_sep("=", f"ember conformance: device {state.device}, ABI {abi_version()}")
    for line in state.tally.table():
        tr.write_line(line)
    tr.write_line("cells: passed [sN skipped] [FN failed]; '.': no case for that dtype")
    verdict = state.tally.verdict()
    tr.write_line(f"verdict: {verdict}", bold=True, green=not state.tally.failures,
                  red=bool(state.tally.failures))
    path = config.getoption("ember_report", default=None)
    if path:
        import ember
        state.tally.write_json(path, device=state.device, abi_version=abi_version(),
                               ember_version=ember.__version__)
        tr.write_line(f"conformance report written to {path}")
