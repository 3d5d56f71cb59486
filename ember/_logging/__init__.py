"""``torch._logging``: what ember.compile reports through Python's logging.

``set_logs(graph_breaks=True, recompiles=True, ...)`` turns on the messages ember has: a
graph break with its reason, a recompile with the guard that failed, and the guards of each
new graph (``guards``); they go to the ``ember._dynamo`` logger at INFO (set up with a
handler to stderr if it has none).  ``dynamo=logging.DEBUG`` (or ``all=``) turns on all of
them.  PyTorch's other artifact and level names are accepted: ember has nothing to log for
them.  The environment variable ``TORCH_LOGS`` is not read."""
import logging

__all__ = ["getArtifactLogger", "set_logs"]

ARTIFACTS = ("graph_breaks", "recompiles", "guards")
_enabled = set()
_logger = logging.getLogger("ember._dynamo")


def set_logs(*, all=None, dynamo=None, graph_breaks=False, recompiles=False,
             recompiles_verbose=False, guards=False, **others):
    """Turn ember.compile's messages on or off (every call replaces the previous
    settings, as PyTorch's)."""
    _enabled.clear()
    level = dynamo if dynamo is not None else all
    if level is not None and level <= logging.INFO:
        _enabled.update(ARTIFACTS)
    if graph_breaks:
        _enabled.add("graph_breaks")
    if recompiles or recompiles_verbose:
        _enabled.add("recompiles")
    if guards:
        _enabled.add("guards")
    if _enabled:
        if not _logger.handlers and not logging.getLogger().handlers:
            handler = logging.StreamHandler()
            handler.setFormatter(logging.Formatter("[ember._dynamo] %(message)s"))
            _logger.addHandler(handler)
        _logger.setLevel(logging.INFO)


def enabled(artifact):
    return artifact in _enabled


def log(artifact, message):
    """Emit ``message`` if ``artifact`` ("graph_breaks", "recompiles", "guards") is on."""
    if artifact in _enabled:
        _logger.info(message)


def getArtifactLogger(module_qname, artifact_name):
    """The logger artifact messages of ``module_qname`` go to (ember's one logger)."""
    return _logger
