"""``Compare``: measurements laid out as PyTorch's benchmark tables (one per label: a row
per sub_label/statement, a column per description, grouped by thread count)."""
from ember.utils.benchmark._measurement import select_unit

__all__ = ["Compare"]


class Compare:
    """Collect Measurements and ``print(compare)`` them as tables."""

    def __init__(self, results):
        self._results = list(results)
        self._trim = False

    def extend_results(self, results):
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim = True

    def colorize(self, rowwise=False):
        pass            # plain text only

    def highlight_warnings(self):
        pass

    def print(self):
        print(str(self))

    def _table(self, label, results):
        cols = list(dict.fromkeys(r.task_spec.description or "" for r in results))
        unit, scale = select_unit(min(r.median for r in results))
        cells = {}
        for r in results:
            row = r.task_spec.sub_label or r.task_spec.stmt
            v = r.median / scale
            if self._trim:
                v = float(f"{v:.{r.significant_figures}g}")
            cells[(r.task_spec.num_threads, row, r.task_spec.description or "")] = v
        rows = list(dict.fromkeys((k[0], k[1]) for k in cells))
        name_w = max(len(r) for _, r in rows) + 2
        col_w = [max(len(c), 8) + 2 for c in cols]
        header = " " * name_w + "|" + "|".join(c.center(w) for c, w in zip(cols, col_w))
        width = len(header)
        title = f" {label} " if label else ""
        lines = ["[" + title.center(width - 2, "-") + "]", header]
        threads = None
        for t, row in rows:
            if t != threads:
                threads = t
                lines.append(f"{t} threads: ".ljust(width, "-"))
            vals = [cells.get((t, row, c)) for c in cols]
            lines.append(row.rjust(name_w - 1) + " |" + "|".join(
                ("" if v is None else f"{v:.1f}").center(w) for v, w in zip(vals, col_w)))
        names = {"ns": "nanoseconds", "us": "microseconds", "ms": "milliseconds",
                 "s": "seconds"}
        lines += ["", f"Times are in {names[unit]} ({unit}).", ""]
        return "\n".join(lines)

    def __str__(self):
        by_label = {}
        for r in self._results:
            by_label.setdefault(r.task_spec.label, []).append(r)
        return "\n".join(self._table(label, rs) for label, rs in by_label.items())
