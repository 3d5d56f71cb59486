"""Counters and compile times of ``ember.compile`` (``torch._dynamo.utils``).

``counters`` is a dict of Counters a test or a user can read:

* ``counters["stats"]``: ``calls_captured`` (captures run), ``unique_graphs`` (graphs
  compiled), ``recompiles``, ``eager_calls`` (calls run eagerly after a break or past the
  recompile limit);
* ``counters["graph_break"]``: reason -> how many captures stopped for it;
* ``counters["recompiles"]``: reason -> how many recompiles it caused;
* ``counters["guards"]``: ``total`` guards built and ``last`` (guards of the last graph);
* ``counters["backend"]``: graphs handed to each backend.

``compile_times()`` gives the seconds each capture and backend compilation took.
"""
import collections
import time

__all__ = ["compile_times", "counters", "reset_counters"]

counters = collections.defaultdict(collections.Counter)
_times = collections.defaultdict(list)


def reset_counters():
    counters.clear()
    _times.clear()


def record_time(name, seconds):
    _times[name].append(seconds)


class timed:
    """``with timed("capture"):`` adds the block's wall time to compile_times()."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        record_time(self.name, self.seconds)
        return False


def compile_times(repr="str", aggregate=False):
    """Seconds spent per compile phase: a table (``repr="str"``) or a dict of lists
    (``repr="csv"`` gives (names, values) as PyTorch's)."""
    if repr == "str":
        rows = [f"{name:<24} {sum(v):.4f}s over {len(v)} call(s)" for name, v in _times.items()]
        return "ember.compile times:\n" + "\n".join(rows)
    names = list(_times)
    values = [sum(v) if aggregate else list(v) for v in _times.values()]
    return names, values
