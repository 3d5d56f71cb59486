"""``ember.utils.benchmark.Timer``: PyTorch's statement timer (timeit with warm-up, thread
control, and block-size estimation so the timer's own overhead is negligible)."""
import timeit as _timeit

from ember.utils.benchmark._measurement import Measurement, TaskSpec

__all__ = ["Language", "Timer"]


class Language:
    PYTHON = 0
    CPP = 1


class _Threads:
    """Run with ``n`` intra-op threads, restoring the previous count after."""

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        import ember
        self.prev = ember.get_num_threads()
        if self.prev != self.n:
            ember.set_num_threads(self.n)

    def __exit__(self, *exc):
        import ember
        if self.prev != self.n:
            ember.set_num_threads(self.prev)


class Timer:
    """Time ``stmt`` after running ``setup`` once, in a namespace holding ``globals``,
    with ``num_threads`` threads.  ``label``/``sub_label``/``description`` name the
    measurement in its repr and in ``Compare``."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=None, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError("ember.utils.benchmark.Timer times Python statements only")
        import time
        self._globals = dict(globals or {})
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                   label=label, sub_label=sub_label, description=description,
                                   env=env, num_threads=num_threads)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer or time.perf_counter,
                                    globals=self._globals)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)     # a zero time would break ratios

    def timeit(self, number=1000000):
        """One measurement of ``number`` runs (after a warm-up of number // 100)."""
        with _Threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return Measurement(number, [self._timeit(number)], self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _estimate_block_size(self, min_run_time):
        with _Threads(self._task_spec.num_threads):
            overheads = sorted(self._timeit(0) for _ in range(5))
            overhead = overheads[2]
            number = 1
            while True:
                time_taken = self._timeit(number)
                if overhead / time_taken <= 1e-4 and time_taken >= min_run_time / 1000:
                    break
                if time_taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def _measurement_loop(self, number, stop_hook, min_run_time, max_run_time=None,
                          callback=None):
        total, times, can_stop = 0.0, [], False
        with _Threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback is not None:
                    callback(number, spent)
                can_stop = stop_hook(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs sized so the timer's overhead is negligible, repeated for at
        least ``min_run_time`` seconds."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda times: True, min_run_time,
                                       callback=callback)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """Blocks of runs until the IQR is below ``threshold`` of the median (and at least
        ``min_run_time``, at most ``max_run_time`` seconds have been spent)."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times):
            return len(times) > 3 and Measurement(number, times,
                                                  self._task_spec).meets_confidence(threshold)
        times = self._measurement_loop(number, stop_hook, min_run_time, max_run_time,
                                       callback=callback)
        return Measurement(number, times, self._task_spec)
