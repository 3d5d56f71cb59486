"""``ember.profiler``: PyTorch's profiler API over ember's dispatcher (see profiler.py)."""
from ember.profiler._events import EventList, FunctionEvent, FunctionEventAvg
from ember.profiler.profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "ProfilerAction",
           "ProfilerActivity", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]
