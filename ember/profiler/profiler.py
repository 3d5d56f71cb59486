"""``ember.profiler.profile``: per-op CPU timing through the dispatcher.

While a profile records, every operator (primitive or composite) holds a kernel at the
Profiler dispatch key, the outermost one, and this thread includes the key: each call is
timed as the user made it, with its input shapes when ``record_shapes``.  A primitive's
kernel redispatches with the key excluded (the kernel below would otherwise re-enter the
profiler); a composite's runs its Python body with the key live, so the ops it is made of
appear as its children, as ``aten::linear`` → ``aten::addmm`` do in PyTorch.  When no
profile records, nothing is registered at the key: the cost is nil."""
import enum
import json
import os
import threading
import time

from ember.core import _dispatch, _state
from ember.core._dispatch import DispatchKey
from ember.core._tensor import TensorBase
from ember.core.mode_keys import redispatch_below
from ember.profiler._events import EventList, FunctionEvent, _ids

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]

_BIT = 1 << int(DispatchKey.Profiler)


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities():
    """The activities this build can profile (the CPU; accelerator plugins add theirs)."""
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """PyTorch's profiling schedule: after ``skip_first`` steps, cycles of ``wait`` idle,
    ``warmup`` and ``active`` recording steps, ``repeat`` times (0: forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Invalid step {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod = step % num_steps
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An ``on_trace_ready`` callback writing each trace as a chrome-trace JSON file
    into ``dir_name``."""
    def handler_fn(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{os.uname().nodename}_{os.getpid()}"
        path = os.path.join(dir_name, f"{name}.{time.time_ns() // 1_000_000}.pt.trace.json")
        prof.export_chrome_trace(path + (".gz" if use_gzip else ""))
    return handler_fn


# --- the recorder and the dispatcher kernels ----------------------------------------------

class _Recorder:
    """Events of one recording on one thread, nested by a stack of open events."""

    def __init__(self, record_shapes):
        self.record_shapes = record_shapes
        self.events = []
        self.stack = []
        self.t0 = time.perf_counter_ns()
        self.thread = threading.get_ident()

    def open(self, name, args=(), kwargs=None, user=False):
        shapes = None
        if self.record_shapes:
            shapes = [list(a.shape) if isinstance(a, TensorBase) else [] for a in args]
            if kwargs:
                shapes += [list(v.shape) for v in kwargs.values() if isinstance(v, TensorBase)]
        parent = self.stack[-1] if self.stack else None
        ev = FunctionEvent(next(_ids), name, self.thread,
                           (time.perf_counter_ns() - self.t0) / 1000.0, shapes, parent, user)
        if parent is not None:
            parent.cpu_children.append(ev)
        self.events.append(ev)
        self.stack.append(ev)
        return ev

    def close(self, ev):
        ev.time_range_end = (time.perf_counter_ns() - self.t0) / 1000.0
        if self.stack and self.stack[-1] is ev:
            self.stack.pop()


_local = threading.local()      # .recorder: the recording of this thread, or None
_lock = threading.Lock()
_registered = 0                 # recordings under way in the process (kernels installed)


def _recorder():
    return getattr(_local, "recorder", None)


class _ProfileKernel:
    __slots__ = ("op", "name")

    def __init__(self, op):
        self.op = op
        self.name = "ember::" + op.name

    def __call__(self, *args, **kwargs):
        rec = _recorder()
        if rec is None:                      # another thread is profiling, not this one
            return self._below(args, kwargs)
        ev = rec.open(self.name, args, kwargs)
        try:
            return self._below(args, kwargs)
        finally:
            rec.close(ev)

    def _below(self, args, kwargs):
        return redispatch_below(self.op, DispatchKey.Profiler, args, kwargs,
                                composite_too=False)

    def __repr__(self):
        return f"<profiler kernel of {self.op.name}>"


def _install():
    global _registered
    with _lock:
        if _registered == 0:
            for op in _dispatch.all_ops().values():
                if op.entry is not None:
                    op.register(DispatchKey.Profiler, _ProfileKernel(op))
        _registered += 1


def _uninstall():
    global _registered
    with _lock:
        _registered -= 1
        if _registered == 0:
            for op in _dispatch.all_ops().values():
                op.unregister(DispatchKey.Profiler)


def _set_key(on):
    included, excluded = _state._get_tls_keys()
    _state._set_tls_keys(included | _BIT if on else included & ~_BIT, excluded)


# --- the public API -----------------------------------------------------------------------

class profile:
    """Record the ops this thread runs inside the region, with their CPU time.

    ``activities``: ProfilerActivity values (CPU is what ember records); ``record_shapes``:
    keep each call's input shapes; ``profile_memory``/``with_stack``/``with_flops``/
    ``with_modules``: accepted, not recorded; ``schedule``: a ``schedule(...)`` function
    driven by ``step()``; ``on_trace_ready``: called with the profiler after each
    RECORD_AND_SAVE step (or on exit without a schedule)."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None,
                 execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None):
        self.activities = set(activities) if activities else supported_activities()
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.step_num = 0
        self._rec = None
        self._finished = None        # the events of the last completed recording
        self._prev = None

    def _action(self):
        return ProfilerAction.RECORD if self.schedule is None else self.schedule(self.step_num)

    def _start_recording(self):
        if self._rec is None:
            self._rec = _Recorder(self.record_shapes)
            self._prev = _recorder()
            _local.recorder = self._rec
            _install()
            _set_key(True)

    def _stop_recording(self, keep):
        rec, self._rec = self._rec, None
        if rec is None:
            return
        _local.recorder = self._prev
        _set_key(self._prev is not None)
        _uninstall()
        if keep:
            self._finished = rec.events

    def start(self):
        if self._action() in (ProfilerAction.WARMUP, ProfilerAction.RECORD,
                              ProfilerAction.RECORD_AND_SAVE):
            self._start_recording()

    def stop(self):
        if self._rec is not None:
            self._stop_recording(keep=True)
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    def step(self):
        """Mark the end of a training step (drives ``schedule``)."""
        prev = self._action()
        self.step_num += 1
        cur = self._action()
        if prev is ProfilerAction.RECORD_AND_SAVE:
            self._stop_recording(keep=True)
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        elif prev is ProfilerAction.WARMUP and cur is ProfilerAction.NONE:
            self._stop_recording(keep=False)
        if prev is ProfilerAction.WARMUP and cur in (ProfilerAction.RECORD,
                                                     ProfilerAction.RECORD_AND_SAVE):
            self._rec.events.clear()         # warm-up calls are not kept
        if cur is not ProfilerAction.NONE:
            self._start_recording()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()
        return False

    def events(self):
        """The recorded events (an EventList)."""
        src = self._finished if self._finished is not None else (
            self._rec.events if self._rec is not None else [])
        return EventList(src)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """The events averaged per name (and input shapes when asked)."""
        return self.events().key_averages(group_by_input_shape)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (JSON; gzip when ``path`` ends in .gz)."""
        pid = os.getpid()
        trace = {"traceEvents": [
            {"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
             "name": e.name, "pid": pid, "tid": e.thread, "ts": e.time_range_start,
             "dur": e.cpu_time_total,
             "args": {"Input Dims": e.input_shapes} if e.input_shapes else {}}
            for e in self.events()], "displayTimeUnit": "ms"}
        data = json.dumps(trace)
        if path.endswith(".gz"):
            import gzip
            with gzip.open(path, "wt") as f:
                f.write(data)
        else:
            with open(path, "w") as f:
                f.write(data)
        return path


class record_function:
    """Label a region (context manager or decorator): it appears in the profiler's table
    as one event holding the ops run inside it.  Costs one attribute read when no profile
    records."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._ev = None

    def __enter__(self):
        rec = _recorder()
        if rec is not None:
            self._rec = rec
            self._ev = rec.open(self.name, user=True)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self._ev is not None:
            self._rec.close(self._ev)
            self._ev = None
        return False

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return func(*args, **kwargs)
        return wrapper
