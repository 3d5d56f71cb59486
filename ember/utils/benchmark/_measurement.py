"""Measurement and TaskSpec: what a Timer returns, with PyTorch's statistics and repr."""
import math
import textwrap

__all__ = ["Measurement", "TaskSpec", "select_unit"]

_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def select_unit(t):
    """("ns" | "us" | "ms" | "s", its scale) for a time in seconds."""
    exp = math.floor(math.log10(t) // 3) if t > 0 else -3
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(exp, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def _quantile(sorted_values, q):
    """Linear interpolation between closest ranks (NumPy's / PyTorch's default)."""
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


class TaskSpec:
    """What was timed: the statement, its setup and the labels given to the Timer."""

    def __init__(self, stmt, setup, global_setup="", label=None, sub_label=None,
                 description=None, env=None, num_threads=1):
        self.stmt, self.setup, self.global_setup = stmt, setup, global_setup
        self.label, self.sub_label, self.description = label, sub_label, description
        self.env, self.num_threads = env, num_threads

    @property
    def title(self):
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return (f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n"
                f"{textwrap.indent(self.stmt, '  ')}")

    def setup_str(self):
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self):
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


class Measurement:
    """The times of ``number_per_run`` runs each (``raw_times``, seconds); ``times`` are
    per run, with their mean, median and interquartile range."""

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata
        st = sorted(self.times)
        self._sorted_times = tuple(st)
        self._median = _quantile(st, 0.5)
        self._mean = sum(st) / len(st)
        self._p25 = _quantile(st, 0.25)
        self._p75 = _quantile(st, 0.75)
        self._warnings = ()
        if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            self._add_warning("This suggests significant environmental influence.")
        elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
            self._add_warning("This could indicate system fluctuation.")

    def _add_warning(self, msg):
        rel_iqr = self.iqr / self.median * 100
        self._warnings += (f"  WARNING: Interquartile range is {rel_iqr:.1f}% of the median "
                           f"measurement.\n           {msg}",)

    def __getattr__(self, name):
        spec = self.__dict__.get("task_spec")
        if spec is not None and name in spec.__dict__:
            return spec.__dict__[name]          # stmt, label, num_threads, ...
        raise AttributeError(f"'Measurement' object has no attribute {name!r}")

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        return self._median

    @property
    def mean(self):
        return self._mean

    @property
    def iqr(self):
        return self._p75 - self._p25

    @property
    def has_warnings(self):
        return bool(self._warnings)

    @property
    def title(self):
        return self.task_spec.title

    @property
    def significant_figures(self):
        """A rough count of trustworthy digits, from the interquartile points' spread."""
        n = len(self._sorted_times)
        pts = self._sorted_times[n // 4:math.ceil(3 * n / 4)]
        m = sum(pts) / len(pts)
        std = math.sqrt(sum((p - m) ** 2 for p in pts) / len(pts))
        ci = max(1.645 * std / math.sqrt(len(pts)), 1e-9)
        return min(max(int(math.floor(math.log10(self._median / ci))), 1), 4)

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    def __repr__(self):
        skip = "MEASUREMENT_REPR_SKIP_LINE"
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        iqr_filter = "" if n >= 4 else skip
        many = n > 1
        threads = self.task_spec.num_threads
        text = (f"{object.__repr__(self)}\n{self.task_spec.summarize()}\n"
                f"  {'Median: ' if many else ''}{self._median / scale:.2f} {unit}\n"
                f"  {iqr_filter}IQR:    {self.iqr / scale:.2f} {unit} "
                f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})\n"
                f"  {n} measurement{'s' if many else ''}, {self.number_per_run} runs "
                f"{'per measurement,' if many else ','} {threads} "
                f"thread{'s' if threads > 1 else ''}\n" + "\n".join(self._warnings)).strip()
        return "\n".join(line for line in text.splitlines() if skip not in line)
