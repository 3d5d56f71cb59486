"""ember.utils.benchmark: Timer's measurements and repr (PyTorch's layout), Compare."""
import re

import pytest

import ember
from ember.utils.benchmark import Compare, Measurement, Timer


def test_timeit_measurement_and_repr():
    x = ember.ones(4)
    t = Timer("x + x", setup="y = 1", globals={"x": x}, label="add", sub_label="4",
              description="small")
    m = t.timeit(50)
    assert isinstance(m, Measurement) and m.number_per_run == 50 and len(m.times) == 1
    assert m.mean == m.median == m.times[0] > 0
    lines = repr(m).splitlines()
    assert re.match(r"<ember\.utils\.benchmark\..*Measurement object at 0x", lines[0])
    assert lines[1:4] == ["add: 4", "small", "setup: y = 1"]
    assert re.fullmatch(r"  \d+\.\d\d (ns|us|ms|s)", lines[4])
    assert lines[5] == "  1 measurement, 50 runs , 1 thread"


def test_blocked_and_adaptive_autorange():
    t = Timer("sum(range(10))", num_threads=1)
    calls = []
    m = t.blocked_autorange(callback=lambda n, s: calls.append(n), min_run_time=0.02)
    assert len(m.times) == len(calls) >= 1 and sum(m.raw_times) >= 0.02
    assert m.times == [r / m.number_per_run for r in m.raw_times]
    text = repr(m)
    if len(m.times) >= 4:
        assert "Median: " in text and "IQR:    " in text
        assert f"{len(m.times)} measurements, {m.number_per_run} runs per measurement, " \
               f"1 thread" in text
    a = t.adaptive_autorange(min_run_time=0.01, max_run_time=0.2)
    assert len(a.times) >= 1 and a.median > 0 and a.title == "sum(range(10))"


def test_measurement_statistics():
    m = Measurement(1, [1.0, 2.0, 3.0, 4.0, 100.0], Timer("pass")._task_spec)
    assert m.median == 3.0 and m.mean == 22.0 and m.iqr == pytest.approx(2.0)
    assert m.has_warnings and "Interquartile range is 66.7%" in repr(m)
    assert not m.meets_confidence(0.1)


def test_compare_tables():
    ms = [Timer("x * 2", globals={"x": 3}, label="mul", sub_label=s,
                description=d).timeit(100) for s in ("a", "b") for d in ("int", "int2")]
    text = str(Compare(ms))
    assert "mul" in text and "int2" in text and "Times are in" in text
    assert len([ln for ln in text.splitlines() if ln.strip().startswith(("a |", "b |"))]) == 2


def test_timer_rejects_callables():
    with pytest.raises(ValueError):
        Timer(lambda: 0)
