"""``ember.utils.benchmark``: Timer, Measurement and Compare (PyTorch's benchmark utils)."""
from ember.utils.benchmark._measurement import Measurement, TaskSpec, select_unit
from ember.utils.benchmark.compare import Compare
from ember.utils.benchmark.timer import Language, Timer

__all__ = ["Compare", "Language", "Measurement", "TaskSpec", "Timer", "select_unit"]
