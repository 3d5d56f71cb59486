"""Registers the suite's plugin (the package module) when the package is collected with
``--pyargs ember.testing.conformance`` and was not loaded with ``-p``."""
import ember.testing.conformance as _plugin


def pytest_configure(config):
    if not config.pluginmanager.is_registered(_plugin):
        config.pluginmanager.register(_plugin, "ember.testing.conformance")
