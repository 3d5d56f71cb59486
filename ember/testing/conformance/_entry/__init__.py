"""The ``pytest11`` entry point of ember's conformance suite (installed as the top-level
module ``_ember_conformance``, outside the ``ember`` package so that loading it imports
nothing of ember: every pytest run in an environment with ember installed loads it).

It only declares the suite's command-line options, so that
``pytest --pyargs ember.testing.conformance --ember-device=NAME`` parses: pytest reads
options before it collects the package (and its conftest).  The suite itself is the plugin
``ember.testing.conformance``, registered by the package's conftest or with ``-p``.
"""

__all__ = ["add_options", "pytest_addoption"]


def add_options(parser):
    """Declare the options once (both this entry point and ``-p ember.testing.conformance``
    call it, in either order)."""
    group = parser.getgroup("ember", "ember conformance suite (ember.testing.conformance)")
    if any("--ember-device" in opt.names() for opt in group.options):
        return
    group.addoption("--ember-device", metavar="NAME", default=None,
                    help="device the conformance suite checks (default: cpu), e.g. "
                         "cuda or cuda:1")
    group.addoption("--ember-report", metavar="FILE.json", default=None,
                    help="write the conformance coverage table and verdict as JSON")


def pytest_addoption(parser):
    add_options(parser)
