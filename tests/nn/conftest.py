"""The nn tests use the core tests' fixtures (device, oracle): loaded from
tests/core/conftest.py so that there is one definition."""
import importlib.util
import pathlib

_path = pathlib.Path(__file__).resolve().parent.parent / "core" / "conftest.py"
_spec = importlib.util.spec_from_file_location("_ember_core_conftest", _path)
_core = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_core)

device = _core.device
oracle = _core.oracle
