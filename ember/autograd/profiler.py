"""``ember.autograd.profiler``: PyTorch's older profiler API, over ``ember.profiler``."""
from ember.profiler.profiler import profile as _profile
from ember.profiler.profiler import record_function

__all__ = ["profile", "record_function"]


class profile(_profile):
    """``with profile(record_shapes=True) as prof: ...`` then ``prof.key_averages()``,
    ``prof.table()``, ``prof.function_events``; ``enabled=False`` records nothing."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack)
        self.enabled = enabled

    def __enter__(self):
        if self.enabled:
            self.start()
        return self

    @property
    def function_events(self):
        return self.events()

    @property
    def self_cpu_time_total(self):
        return self.events().self_cpu_time_total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        return self.events().table(sort_by, row_limit, max_src_column_width,
                                   max_name_column_width, max_shapes_column_width, header,
                                   top_level_events_only)

    def __str__(self):
        return self.table()
