"""Settings for the whole suite.

ember-cpu splits a kernel among threads from ``parallel_cutoff()`` elements, which it
raises on machines where waking the team is slow (see plugins/cpu/ember_cpu/_strided.pyx);
the suite pins it to the least value, so that its sizes just above 32768 elements run the
parallel code paths on every machine.  (tests/plugins/cpu/test_plugin.py tests the
measured value in a fresh interpreter.)"""
import os

os.environ.setdefault("EMBER_CPU_PARALLEL_CUTOFF", "32768")
