"""Profiler events, their per-name averages, and the table PyTorch's profiler prints."""
import itertools

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg"]


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_share(time_us, total_us):
    return "NaN" if total_us == 0 else f"{time_us * 100.0 / total_us:.2f}%"


class FunctionEvent:
    """One recorded call: name, start and end (µs since the profiler started), input
    shapes when ``record_shapes``, and its children (calls made inside it)."""

    def __init__(self, id, name, thread, start_us, input_shapes=None, parent=None,
                 is_user_annotation=False):
        self.id = id
        self.name = name
        self.key = name
        self.thread = thread
        self.time_range_start = start_us
        self.time_range_end = start_us
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.cpu_parent = parent
        self.cpu_children = []
        self.count = 1
        self.is_user_annotation = is_user_annotation

    @property
    def cpu_time_total(self):
        return self.time_range_end - self.time_range_start

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} "
                f"cpu_time={_format_time(self.cpu_time_total)} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one name (and input shapes, when grouped by them), summed."""

    def __init__(self, key, input_shapes=None):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    def add(self, ev):
        self.count += ev.count
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        if self.input_shapes is None:
            self.input_shapes = ev.input_shapes
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / max(self.count, 1)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time="
                f"{_format_time(self.self_cpu_time_total)} cpu_time="
                f"{_format_time(self.cpu_time)} input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of events with PyTorch's ``key_averages``, ``table`` and ``total_average``."""

    def __init__(self, *args, with_shapes=False, **kwargs):
        super().__init__(*args, **kwargs)
        self._with_shapes = with_shapes

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False):
        groups = {}
        for ev in self:
            key = (ev.key, str(ev.input_shapes)) if group_by_input_shape else ev.key
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(ev.key)
            avg.add(ev)
        return EventList(groups.values(), with_shapes=group_by_input_shape)

    def total_average(self):
        total = FunctionEventAvg("Total")
        for ev in self:
            total.add(ev)
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        """The events as PyTorch's profiler table; ``sort_by`` names an attribute
        ("cpu_time_total", "self_cpu_time_total", "count", ...), largest first."""
        events = list(self)
        if top_level_events_only:
            events = [e for e in events if getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            events.sort(key=lambda e: getattr(e, sort_by.replace("cuda", "cpu")), reverse=True)
        if row_limit is not None and row_limit > 0:
            shown = events[:row_limit]
        else:
            shown = events
        name_w = min(max((len(e.key) for e in self), default=4) + 4, max_name_column_width)
        heads = [("Name", name_w)] + [(h, 12) for h in (
            "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls")]
        if self._with_shapes:
            shapes_w = min(max((len(str(e.input_shapes)) for e in self), default=12) + 4,
                           max_shapes_column_width)
            heads.append(("Input Shapes", shapes_w))
        line = "".join("-" * w + "  " for _, w in heads)
        total = self.self_cpu_time_total
        rows = [line, "".join(h.rjust(w) + "  " for h, w in heads), line]
        for e in shown:
            name = e.key if len(e.key) <= name_w else e.key[:name_w - 3] + "..."
            cells = [name, _format_share(e.self_cpu_time_total, total),
                     _format_time(e.self_cpu_time_total),
                     _format_share(e.cpu_time_total, total), _format_time(e.cpu_time_total),
                     _format_time(e.cpu_time), str(e.count)]
            if self._with_shapes:
                cells.append(str(e.input_shapes)[:heads[-1][1]])
            rows.append("".join(c.rjust(w) + "  " for c, (_, w) in zip(cells, heads)))
        rows += [line, f"Self CPU time total: {_format_time(total)}"]
        out = "\n".join(rows) + "\n"
        return (header + "\n" + out) if header else out

    def __str__(self):
        return self.table()


_ids = itertools.count()
