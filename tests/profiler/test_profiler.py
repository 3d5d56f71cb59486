"""ember.profiler: every op call is recorded through the Profiler dispatch key (primitives
and composites, nested), record_function labels, shapes, the table, chrome traces,
schedules, the autograd.profiler spelling, and nothing left registered afterwards."""
import json
import threading

from ember.core import _dispatch
from ember.core._dispatch import DispatchKey

import ember
from ember.profiler import ProfilerActivity, profile, record_function, schedule


def model_step():
    m = ember.nn.Linear(3, 4)
    x = ember.randn(2, 3)
    return m, x


def names(prof):
    return {e.key for e in prof.key_averages()}


def test_table_lists_the_ops_run_and_their_nesting():
    m, x = model_step()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("model_inference"):
            m(x).relu().sum()
    got = names(prof)
    for op in ("model_inference", "ember::linear", "ember::addmm", "ember::matmul",
               "ember::relu", "ember::sum", "ember::transpose"):
        assert op in got, (op, got)
    events = {e.name: e for e in prof.events()}
    assert events["ember::linear"].cpu_parent is events["model_inference"]
    assert events["ember::addmm"].cpu_parent is events["ember::linear"]
    assert events["ember::linear"].input_shapes == [[2, 3], [4, 3], [4]]
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["model_inference"].cpu_time_total >= avg["ember::linear"].cpu_time_total
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=4)
    lines = table.splitlines()
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%",
                                "CPU", "total", "CPU", "time", "avg", "#", "of", "Calls"]
    assert lines[3].split()[0] == "model_inference"       # largest total first
    assert len(lines) == 3 + 4 + 2 and lines[-1].startswith("Self CPU time total:")
    shaped = prof.key_averages(group_by_input_shape=True).table(row_limit=100)
    assert "Input Shapes" in shaped and "[[2, 3], [4, 3], [4]]" in shaped


def test_counts_and_self_time():
    a = ember.ones(4)
    with profile() as prof:
        for _ in range(3):
            a + a
        ember.exp(a)
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["ember::add"].count == 3 and avg["ember::exp"].count == 1
    for e in prof.events():
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total


def test_backward_ops_are_recorded():
    w = ember.ones(3, requires_grad=True)
    with profile() as prof:
        (w * 2).sum().backward()
    assert {"ember::mul", "ember::sum"} <= names(prof)
    assert avg_count(prof, "ember::mul") >= 2          # forward and its derivative


def avg_count(prof, key):
    return next(e.count for e in prof.key_averages() if e.key == key)


def test_no_kernel_stays_registered_and_inactive_threads_are_not_recorded():
    a = ember.ones(2)
    seen = []
    with profile() as prof:
        assert _dispatch.get_op("add").trace(1 << int(DispatchKey.Profiler))[0][0] == "Profiler"
        t = threading.Thread(target=lambda: seen.append((a * 3).tolist()))
        t.start()
        t.join()
    assert seen == [[3.0, 3.0]] and "ember::mul" not in names(prof)
    for op in _dispatch.all_ops().values():
        assert op.trace(1 << int(DispatchKey.Profiler))[0][1] == "fallthrough"
    assert _dispatch.mode_keys_active() is False


def test_chrome_trace(tmp_path):
    a = ember.ones(2)
    with profile(record_shapes=True) as prof:
        ember.exp(a)
    path = prof.export_chrome_trace(str(tmp_path / "trace.json"))
    trace = json.load(open(path))
    ev = [e for e in trace["traceEvents"] if e["name"] == "ember::exp"]
    assert ev and ev[0]["ph"] == "X" and ev[0]["dur"] >= 0
    assert ev[0]["args"]["Input Dims"][0] == [2]


def test_schedule_and_on_trace_ready():
    ready = []
    a = ember.ones(2)
    sched = schedule(wait=1, warmup=1, active=2, repeat=1)
    with profile(schedule=sched, on_trace_ready=lambda p: ready.append(
            sorted(e.count for e in p.key_averages() if e.key == "ember::add"))) as prof:
        for _ in range(6):
            a + a
            prof.step()
    assert ready == [[2]]          # only the two active steps, saved once


def test_autograd_profiler_and_record_function_decorator():
    @record_function("my_block")
    def block(a):
        return a * 2

    with ember.autograd.profiler.profile(record_shapes=True) as prof:
        block(ember.ones(3))
    keys = {e.key for e in prof.key_averages()}
    assert {"my_block", "ember::mul"} <= keys
    assert "my_block" in prof.table() and prof.self_cpu_time_total > 0
    assert any(e.name == "ember::mul" for e in prof.function_events)
    with ember.autograd.profiler.profile(enabled=False) as off:
        block(ember.ones(3))
    assert len(off.function_events) == 0
    with ember.autograd.profiler.record_function("outside"):     # no profiler: a no-op
        pass


def test_profiling_keeps_autocast_and_autograd_semantics():
    m, x = model_step()
    with profile() as prof, ember.autocast("cpu"):
        y = m(x)
        ln = ember.nn.functional.layer_norm(x.requires_grad_(), (3,))
    assert y.dtype == ember.bfloat16 and "ember::linear" in names(prof)
    y.float().sum().backward()
    ln.sum().backward()
    assert m.weight.grad.dtype == ember.float32 and x.grad is not None
    a = ember.arange(4)
    with profile():
        r = a.masked_fill(a > 1, 2.7)          # keeps the input's dtype under redispatch
        t = ember.zeros(3)
        try:
            t[ember.tensor([0])] = ember.ones(1, dtype=ember.float64)
            raised = False
        except RuntimeError:
            raised = True
    assert r.dtype == ember.int64 and r.tolist() == [0, 1, 2, 2] and raised
