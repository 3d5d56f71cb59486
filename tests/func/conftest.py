"""The autograd tests' fixtures (devices, the op catalogue) for the transform tests."""
import importlib.util
import pathlib

_path = pathlib.Path(__file__).parents[1] / "autograd" / "conftest.py"
_spec = importlib.util.spec_from_file_location("_autograd_conftest", _path)
_shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)

device = _shared.device
op_catalogue = _shared.op_catalogue
